"""Validation of one authored case object (SPEC §3.5), wherever it came from."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from trunchbull.common.ids import authoring_id_problem, json_type, suggest, tool_name_problem
from trunchbull.release.tool_offers import OFFER_KEYS, offered_name

CASE_KEYS = ("id", "prompt", "description", "systemPrompt", "tools", "data", "evaluate")
_CASE_KEY_SET = frozenset(CASE_KEYS)


@dataclass(slots=True)
class Where:
    """Where a value was authored, for diagnostics."""

    file: str
    line: int | None = None
    col: int | None = None
    path: str = ""  # JSON path inside the authored value, e.g. "cases[3]"

    def at(self, sub: str) -> "Where":
        if not sub:
            return self
        joined = f"{self.path}{sub}" if sub.startswith("[") else (f"{self.path}.{sub}" if self.path else sub)
        return Where(self.file, self.line, self.col, joined)

    def label(self) -> str:
        return f"{self.path}: " if self.path else ""

    def to_json(self) -> dict:
        return {"file": self.file, "line": self.line, "col": self.col, "path": self.path}

    @classmethod
    def from_json(cls, data: dict) -> "Where":
        return cls(data["file"], data.get("line"), data.get("col"), data.get("path", ""))


Report = Callable[[Where, str, str, "str | None"], None]


@dataclass(slots=True)
class CaseDraft:
    id: str
    prompt: str
    where: Where
    source: dict
    description: str | None = None
    systemPrompt: str | None = None
    tools: list | None = None  # tool names or {tool, as} entries
    data: object = None
    evaluate: dict | None = None
    tool_indices: list[int] | None = None  # where each of `tools` stands in the authored list
    extra: dict = field(default_factory=dict)  # e.g. CSV expected


def check_optional_text(obj: dict, key: str, where: Where, report: Report) -> str | None:
    if key not in obj:
        return None
    value = obj[key]
    if isinstance(value, str) and value and not value.isspace():
        return value
    report(
        where.at(key),
        "field-type",
        f"must be a non-empty string, found {json_type(value)}" if not isinstance(value, str) else "must not be empty",
        f"set {key} to a non-empty string, or leave it out",
    )
    return None


def check_tool_list(value: object, where: Where, report: Report) -> tuple[list, list[int]] | None:
    """The valid entries of an authored `tools` list (tool names, or `{tool, as}` objects for a
    tool offered under another name; tool_offers.py), each offered name once, and the index of
    each in the authored list (for locating it later)."""
    if not isinstance(value, list):
        report(
            where,
            "tools-list",
            f"tools must be an array of tool names, found {json_type(value)}",
            'for example tools: ["lookup_policy"]',
        )
        return None
    seen: list = []
    offered: set[str] = set()
    indices: list[int] = []
    for i, item in enumerate(value):
        entry = _tool_entry(item, where.at(f"[{i}]"), report)
        if entry is None:
            continue
        name = offered_name(entry)
        if name in offered:
            report(where.at(f"[{i}]"), "tools-duplicate", f"tool {name!r} is listed twice", "list each tool once")
        else:
            offered.add(name)
            seen.append(entry)
            indices.append(i)
    return seen, indices


def _tool_entry(item: object, where: Where, report: Report) -> str | dict | None:
    """A tool name, or a checked `{tool, as}` (a plain name when both are the same)."""
    if not isinstance(item, dict):
        problem = tool_name_problem(item)
        if problem:
            report(where, "tool-name", problem, "rename the tool in its tool module and here")
            return None
        return item  # type: ignore[return-value]  # a valid tool name is a string
    ok = True
    for key in item:
        if key not in OFFER_KEYS:
            report(
                where.at(key),
                "tools-entry",
                f"unknown key {key!r} in a tools entry",
                'an entry is a tool name or { tool: "<release tool>", as: "<name offered to the model>" }',
            )
            ok = False
    for key in OFFER_KEYS:
        if key not in item:
            report(
                where,
                "tools-entry",
                f"a tools entry object needs {key!r}",
                'write { tool: "<release tool>", as: "<name offered to the model>" }',
            )
            ok = False
        elif problem := tool_name_problem(item[key]):
            report(where.at(key), "tool-name", problem, "tool names and offered names follow the same rule")
            ok = False
    if not ok:
        return None
    return item["tool"] if item["tool"] == item["as"] else {"tool": item["tool"], "as": item["as"]}


def check_case(obj: object, where: Where, source: dict, report: Report) -> CaseDraft | None:
    """Validate an authored case object; None when it cannot become a case."""
    if not isinstance(obj, dict):
        report(
            where,
            "case-type",
            f"a case must be an object, found {json_type(obj)}",
            'write each case as { id: "…", prompt: "…" }',
        )
        return None
    # Fast paths (a release may hold 25,000 cases): one set test for the keys.
    for key in () if _CASE_KEY_SET.issuperset(obj) else obj:
        if key not in _CASE_KEY_SET:
            near = suggest(key, list(CASE_KEYS))
            hint = (f"did you mean {near!r}? " if near else "") + "case keys: " + ", ".join(CASE_KEYS)
            if key == "expected":
                hint = "put expected inside the case's evaluate spec, e.g. evaluate: { kind: \"exact\", expected: … }"
            report(where.at(key), "case-unknown-key", f"unknown case key {key!r}", hint)
    ok = True
    case_id = obj.get("id")
    if "id" not in obj:
        report(where, "case-id", "a case requires id", "give every case a release-global id")
        ok = False
    else:
        problem = authoring_id_problem(case_id)
        if problem:
            report(where.at("id"), "case-id", f"case id {problem}", "for example refunds.standard or q-001")
            ok = False
    prompt = obj.get("prompt")
    if not isinstance(prompt, str) or not prompt or prompt.isspace():
        message = (
            "a case requires a non-empty prompt"
            if "prompt" not in obj or isinstance(prompt, str)
            else f"prompt must be a non-empty string, found {json_type(prompt)}"
        )
        report(
            where.at("prompt") if "prompt" in obj else where,
            "case-prompt",
            message,
            "the prompt is the user message sent to the model",
        )
        ok = False
    checked_tools = check_tool_list(obj["tools"], where.at("tools"), report) if "tools" in obj else None
    evaluate = obj.get("evaluate")
    if "evaluate" in obj and not isinstance(evaluate, dict):
        report(
            where.at("evaluate"),
            "evaluator-invalid",
            f"a case's evaluate must be a declarative spec object, found {json_type(evaluate)}",
            'for example evaluate: { kind: "exact", expected: "42" }',
        )
        ok = False
    description = check_optional_text(obj, "description", where, report) if "description" in obj else None
    system_prompt = check_optional_text(obj, "systemPrompt", where, report) if "systemPrompt" in obj else None
    if not ok:
        return None
    assert isinstance(case_id, str) and isinstance(prompt, str)  # both checked above
    # Positional: measurably cheaper than keywords at 25,000 cases (same field order as the class).
    draft_tools, tool_indices = checked_tools or (None, None)
    return CaseDraft(
        case_id,
        prompt,
        where,
        source,
        description,
        system_prompt,
        draft_tools,
        obj.get("data"),
        evaluate if isinstance(evaluate, dict) else None,
        tool_indices,
    )
