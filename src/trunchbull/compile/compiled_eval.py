"""A compiled eval: its cases as cases.jsonl lines, and the facts the
release-wide checks need. Made by evals.EvalCompiler (and by the case
readers it calls), read by the compiler's release assembly."""

from __future__ import annotations

import io
from dataclasses import dataclass, field

import orjson

from trunchbull.compile.cases.fields import Where
from trunchbull.evaluators.registry import kinds
from trunchbull.release.canonical import canonical_line


@dataclass
class CompiledEval:
    """An eval's compiled cases, kept as their cases.jsonl lines plus the few
    facts the release-wide checks need. The case objects themselves are
    dropped as soon as their line is made: holding 25,000 of them (a
    transformer's 50 MiB of prompts) would only cost memory and time."""

    id: str
    module: str
    title: str | None
    description: str | None
    custom: bool  # evaluate is a module-level function
    where: Where | None = None
    tools: list[str] | None = None
    data_files: list[str] = field(default_factory=list)  # root-relative files read
    transformer_sources: dict[str, dict] = field(default_factory=dict)  # root-relative path → {bytes, sha256}
    case_ids: list[str] = field(default_factory=list)
    case_tools: list[list] = field(default_factory=list)  # the tools each case may call (names or {tool, as})
    case_wheres: list[Where] = field(default_factory=list)  # where each case was authored
    # Every tool name the eval and its cases request, each where its literal
    # stands (e.g. cases[3].tools[0]), whether or not the case compiled: an
    # unknown tool is reported even when the case has other problems.
    # (name, where, the requesting case's id; None for the eval's own list)
    tool_requests: list[tuple[str, Where, str | None]] = field(default_factory=list)
    evaluator_kinds: set[str] = field(default_factory=set)
    # The release files the cases' specs name (a model-graded kind's frozen default template: a
    # kind's `release_files`), written into the release with the cases.
    release_files: dict[str, bytes] = field(default_factory=dict)
    # Every tool input an evaluator spec names (a kind's `tool_inputs`: tool_call_syntax's plan
    # steps), once: (offered name, release tool, input, where the input is written), checked
    # against the tool's schema once the tools are known.
    plan_inputs: list[tuple[str, str, dict, Where]] = field(default_factory=list)
    _plan_keys: set[tuple] = field(default_factory=set, repr=False, compare=False)
    # The lines, written as each case is compiled (a transformer's while its
    # runs still stream): one growing buffer, not 25,000 separate lines to join.
    _jsonl: io.BytesIO = field(default_factory=io.BytesIO, repr=False, compare=False)

    def add_case(self, case: dict, where: Where) -> None:
        """A compiled case (inheritance applied) and where it was authored."""
        self.case_ids.append(case["id"])
        self.case_tools.append(case["tools"])
        self.case_wheres.append(where)
        spec = case["evaluate"]
        self.evaluator_kinds.add(spec["kind"])
        kind = kinds().get(spec["kind"])
        if kind is not None and kind.release_files is not None:
            self.release_files.update(kind.release_files(spec))
        self._jsonl.write(canonical_line(case))

    def add_plan_input(self, offered: str, tool: str, plan_input: dict, where: Where) -> None:
        key = (offered, tool, orjson.dumps(plan_input, option=orjson.OPT_SORT_KEYS), where.file, where.line, where.path)
        if key not in self._plan_keys:
            self._plan_keys.add(key)
            self.plan_inputs.append((offered, tool, plan_input, where))

    def cases_jsonl(self) -> bytes:
        """The cases' lines of cases.jsonl."""
        return self._jsonl.getvalue()  # the buffer itself, not a copy

    def cases(self) -> list[dict]:
        """The compiled cases, read back from their lines."""
        return [orjson.loads(line) for line in self.cases_jsonl().split(b"\n")[:-1]]

    def drop_cases(self) -> None:
        """Forget the cases (and the tools they request; the eval's own stay)."""
        self.case_ids, self.case_tools, self.case_wheres, self.evaluator_kinds = [], [], [], set()
        self.release_files = {}
        self._jsonl = io.BytesIO()
        self.tool_requests = [request for request in self.tool_requests if request[2] is None]

    def to_json(self) -> dict:
        return {
            "id": self.id,
            "module": self.module,
            "title": self.title,
            "description": self.description,
            "custom": self.custom,
            "tools": self.tools,
            "dataFiles": self.data_files,
            "transformerSources": self.transformer_sources,
            "where": self.where.to_json() if self.where else None,
            "cases": self.cases(),
            "caseWheres": [w.to_json() for w in self.case_wheres],
            "toolRequests": [[name, where.to_json(), case_id] for name, where, case_id in self.tool_requests],
            "planInputs": [[offered, tool, value, where.to_json()] for offered, tool, value, where in self.plan_inputs],
        }

    @classmethod
    def from_json(cls, data: dict) -> "CompiledEval":
        compiled = cls(
            id=data["id"],
            module=data["module"],
            title=data["title"],
            description=data["description"],
            custom=data["custom"],
            tools=data["tools"],
            data_files=data["dataFiles"],
            transformer_sources=data["transformerSources"],
            where=Where.from_json(data["where"]) if data["where"] else None,
        )
        for case, where in zip(data["cases"], data["caseWheres"]):
            compiled.add_case(case, Where.from_json(where))
        compiled.tool_requests = [
            (name, Where.from_json(where), case_id) for name, where, case_id in data.get("toolRequests", [])
        ]
        for offered, tool, value, where in data.get("planInputs", []):
            compiled.add_plan_input(offered, tool, value, Where.from_json(where))
        return compiled
