"""Eval modules (SPEC §3.4-3.6): shapes, case expansion, inheritance, titles."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from trunchbull.common.diagnostics import Diagnostics
from trunchbull.common.ids import authoring_id_problem, json_type, suggest
from trunchbull.common.paths import rel_posix, resolve_inside
from trunchbull.common.userfiles import MISSING, UNREADABLE, UNREADABLE_CODE, FileProblem, display, read_file
from trunchbull.compile.case_evaluators import case_evaluator
from trunchbull.compile.cases.fields import CaseDraft, Where, check_case, check_optional_text, check_tool_list
from trunchbull.compile.cases.inline import read_inline
from trunchbull.compile.cases.sources import DataFileSource, case_object_formats, source_for, suffixes
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.locate import find_default_export, find_literal, refine
from trunchbull.compile.modules import ModuleReport
from trunchbull.compile.transformer.expand import expand_transformer
from trunchbull.evaluators.registry import kinds, row_kinds
from trunchbull.evaluators.specs import validate_spec
from trunchbull.node.sandbox import NodeHelper
from trunchbull.release.manifest import bundle_name
from trunchbull.release.tool_offers import release_name

EVAL_KEYS = ("id", "title", "description", "systemPrompt", "tools", "evaluate", "prompt", "cases")
TITLE_MAX = 120
_CASE_EVALUATE_FN = re.compile(r"cases\[\d+\]\.evaluate")


def _tool_request(entry: str | dict, owner: Where, i: int, case_id: str | None) -> tuple[str, Where, str | None]:
    """The release tool a `tools` entry requests, where its literal stands, and who asks."""
    where = owner.at(f"tools[{i}]") if isinstance(entry, str) else owner.at(f"tools[{i}].tool")
    return release_name(entry), where, case_id


class EvalCompiler:
    """Turns one inspected eval module into compiled cases, reporting problems."""

    def __init__(
        self,
        report: ModuleReport,
        root: Path,
        diags: Diagnostics,
        install_dir: Path | None = None,
        *,
        transform_runs: list[dict] | None = None,
        helper: NodeHelper | None = None,
    ):
        self.report = report
        self.install_dir = install_dir  # installed dependencies, for transformers' package imports
        self.transform_runs = transform_runs  # the two runs' records, when made by separate processes
        self.helper = helper  # a running esbuild helper to bundle transformers with, if any
        self.root = root
        self.diags = diags
        self.module_file = root / report.path
        self.custom = False
        self._held: list[tuple] | None = None  # problems held back while holding

    def hold_problems(self) -> None:
        """Hold back problems reported from now on (a transformer's cases are
        checked while it still runs, but only count once its runs agree)."""
        self._held = []

    def take_held(self) -> list[tuple]:
        """Stop holding; the held problems, to report with self.problem(*p) or drop."""
        held, self._held = self._held or [], None
        return held

    def problem(self, where: Where, code: str, message: str, hint: str | None = None) -> None:
        if self._held is not None:
            self._held.append((where, code, message, hint))
            return
        line, col = where.line, where.col
        if where.file == self.report.path:
            line, col = refine(self.module_file, line, col, where.path)
        self.diags.error(code, f"{where.label()}{message}", file=where.file, line=line, col=col, hint=hint)

    def file_problem(
        self, where: Where, problem: FileProblem, what: str, missing_code: str, code: str, hint: str | None
    ) -> None:
        """A file named by the module that cannot be read: `missing_code` when
        it is not there, `code` when it is no regular file or no valid name,
        path-unreadable (exit 2) when the environment keeps it from being read."""
        if problem.kind == UNREADABLE:
            code, hint = UNREADABLE_CODE, "check the file's permissions (and the number of open files allowed)"
        elif problem.kind == MISSING:
            code = missing_code
        self.problem(where, code, f"{what}{problem}", hint)

    def _anchor(self, value: object, top: Where, path: str) -> Where:
        """Where a path of the export starts: its case's id literal, else the default export."""
        match = re.match(r"cases\[(\d+)\]", path)
        if match and isinstance(value, dict) and isinstance(value.get("cases"), list):
            cases = value["cases"]
            index = int(match.group(1))
            case = cases[index] if index < len(cases) else None
            if isinstance(case, dict) and isinstance(case.get("id"), str):
                line, col = find_literal(self.module_file, case["id"])
                if line:
                    return Where(top.file, line, col, path)
        return top.at(path)

    def compile(self) -> CompiledEval | None:
        assert self.report.inspection is not None  # only an inspected module is compiled
        inspected = self.report.inspection["default"]
        line, col = find_default_export(self.module_file)
        top = Where(self.report.path, line, col)
        value = inspected["value"]
        for err in inspected["errors"]:
            self.problem(
                self._anchor(value, top, err["path"]),
                "json-incompatible",
                err["problem"],
                "eval exports must be plain JSON-compatible data (only the eval's evaluate may be a function)",
            )
        custom = self.custom = "evaluate" in inspected["functions"]
        for path in inspected["functions"]:
            if path == "evaluate":
                continue
            if _CASE_EVALUATE_FN.fullmatch(path):
                self.problem(
                    self._anchor(value, top, path),
                    "case-evaluate-function",
                    "per-case evaluator functions are not supported",
                    "use a declarative evaluate spec on the case, or one module-level evaluate function on the eval",
                )
                index = int(path[6 : path.index("]")])
                value["cases"][index].pop("evaluate", None)
            else:
                self.problem(
                    self._anchor(value, top, path),
                    "function-not-allowed",
                    "a function is not JSON-compatible data",
                    "the only function an eval may export is its module-level evaluate",
                )
        if not isinstance(value, dict):
            self.problem(
                top,
                "eval-type",
                f"the default export must be an eval object, found {json_type(value)}",
                'export default { id: "my-eval", prompt: "…", evaluate: { kind: "non_empty" } }',
            )
            return None
        return self._compile_object(value, custom, top)

    def _compile_object(self, value: dict, custom: bool, top: Where) -> CompiledEval | None:
        for key in value:
            if key not in EVAL_KEYS:
                near = suggest(key, list(EVAL_KEYS))
                self.problem(
                    top.at(key),
                    "eval-unknown-key",
                    f"unknown eval key {key!r}",
                    (f"did you mean {near!r}? " if near else "") + "eval keys: " + ", ".join(EVAL_KEYS),
                )
        eval_id = value.get("id")
        if "id" not in value:
            self.problem(top, "eval-id", "an eval requires id", "add id: \"my-eval\" to the default export")
            return None
        problem = authoring_id_problem(eval_id)
        if problem:
            line, col = find_literal(self.module_file, eval_id) if isinstance(eval_id, str) else (None, None)
            self.problem(
                Where(top.file, line, col) if line else top.at("id"),
                "eval-id",
                f"eval id {problem}",
                "for example refunds or support.refunds-v2",
            )
            return None
        assert isinstance(eval_id, str)  # an authoring ID
        line, col = find_literal(self.module_file, eval_id)
        here = Where(self.report.path, line or top.line, col or top.col)
        result = CompiledEval(
            id=eval_id,
            module=self.report.path,
            custom=custom,
            where=here,
            title=check_optional_text(value, "title", here, self._report),
            description=check_optional_text(value, "description", here, self._report),
        )
        system_prompt = check_optional_text(value, "systemPrompt", here, self._report)
        eval_tools = check_tool_list(value["tools"], here.at("tools"), self._report) if "tools" in value else None
        if eval_tools is not None:
            result.tools = eval_tools[0]
            result.tool_requests.extend(_tool_request(entry, here, i, None) for entry, i in zip(*eval_tools))
        cases = value.get("cases")
        source = source_for(cases) if isinstance(cases, str) else None
        eval_spec = self._eval_spec(value, here, source if source is not None and source.expected_from_rows else None)
        single = "prompt" in value

        def finish(draft: CaseDraft) -> None:  # called as each case is checked, so lines are made while Node streams
            if draft.tools and draft.tool_indices:
                where = draft.where
                result.tool_requests.extend(
                    _tool_request(entry, where, i, draft.id) for entry, i in zip(draft.tools, draft.tool_indices)
                )
            case = self._inherit(draft, value, result, system_prompt, eval_spec, single)
            if case:
                result.add_case(case, draft.where)

        if not self._cases(value, here, result, finish):
            result.drop_cases()
        return result

    def _report(self, where: Where, code: str, message: str, hint: str | None) -> None:
        self.problem(where, code, message, hint)

    def _eval_spec(self, value: dict, here: Where, rows: DataFileSource | None) -> dict | None:
        """The eval-level spec, checked; `rows`: the data file format whose rows give `expected`, if any."""
        if "evaluate" not in value:
            return None
        if value["evaluate"] is None:
            if not self.custom:  # null in the value stands for a function only when one was found
                self.problem(
                    here.at("evaluate"),
                    "evaluator-invalid",
                    "evaluate must be a declarative spec object or a function, found null",
                )
            return None
        spec = value["evaluate"]
        normalized, problems = validate_spec(spec, expected_from_rows=rows is not None)
        for p in problems:
            self.problem(here.at("evaluate").at(p.path), p.code, p.message, p.hint)
        # a kind that is no kind at all has its one error (evaluator-kind, with the nearest kind)
        kind = spec.get("kind") if isinstance(spec, dict) else None
        if rows is not None and kind in kinds() and kind not in row_kinds():
            allowed = row_kinds()
            self.problem(
                here.at("evaluate"),
                "csv-evaluator",
                f"a {rows.name} eval's evaluator must be {', '.join(allowed[:-1])} or {allowed[-1]}, found {kind!r}",
                f"use {case_object_formats()} for case-specific or other evaluator kinds",
            )
        return normalized if not problems else None

    def _cases(self, value: dict, here: Where, result: CompiledEval, finish: Callable[[CaseDraft], None]) -> bool:
        """Hand every checked case to `finish`; False when the eval has no cases
        at all (a problem was reported), and those finished are to be dropped."""
        cases = value.get("cases")
        if isinstance(cases, dict) and "prompt" not in value:  # a transformer finishes cases as they stream in
            return self._transformer(cases, here.at("cases"), result, finish)
        drafts = self._drafts(value, here, result)
        for draft in drafts or ():
            finish(draft)
        return drafts is not None

    def _drafts(self, value: dict, here: Where, result: CompiledEval) -> list[CaseDraft] | None:
        has_prompt, has_cases = "prompt" in value, "cases" in value
        if has_prompt and has_cases:
            self.problem(
                here,
                "eval-shape",
                "an eval has either prompt (one case) or cases, not both",
                "remove prompt and add the case to cases, or remove cases",
            )
            return None
        if not has_prompt and not has_cases:
            self.problem(
                here,
                "eval-shape",
                "an eval needs prompt plus evaluate (one case) or cases",
                "add cases: [ … ], a data file path, or prompt and evaluate",
            )
            return None
        if has_prompt:
            if "evaluate" not in value:
                self.problem(
                    here,
                    "eval-shape",
                    "a one-case eval (prompt) requires evaluate",
                    "add evaluate: { kind: … } or a module-level evaluate function",
                )
                return None
            draft = check_case(
                {"id": value["id"], "prompt": value["prompt"]}, here, {"module": self.report.path}, self._report
            )
            return [draft] if draft else None
        cases = value["cases"]
        if isinstance(cases, list):
            return read_inline(cases, self.module_file, self.report.path, self._report)
        if isinstance(cases, str):
            return self._data_file(cases, value, here.at("cases"), result)
        self.problem(
            here.at("cases"),
            "eval-cases",
            f"cases must be an array, a {suffixes('/')} path or {{ transformer, sources }}, found {json_type(cases)}",
            'for example cases: [{ id: "…", prompt: "…" }] or cases: "./cases.jsonl"',
        )
        return None

    def _data_file(self, text: str, value: dict, where: Where, result: CompiledEval) -> list[CaseDraft] | None:
        path, problem = resolve_inside(self.module_file.parent, text, self.root)
        if problem:
            self.problem(
                where, "data-file-path", f"data file {problem}", "data-file paths are relative to the eval module"
            )
            return None
        assert path is not None
        rel = rel_posix(path, self.root)
        source = source_for(rel)
        if source is None:
            self.problem(
                where,
                "data-file-type",
                f"{display(text)} is not a {suffixes('or')} file",
                f"cases may name a sibling {suffixes('or')} file",
            )
            return None
        try:
            data = read_file(path)
        except FileProblem as problem:
            self.file_problem(
                where,
                problem,
                f"data file {display(text)} ",
                "data-file-missing",
                "data-file-path",
                "data-file paths are relative to the eval module, not the config",
            )
            return None
        result.data_files.append(rel)
        if source.expected_from_rows and not self._row_evaluator_ok(value, where, source.name):
            return None
        return source.read(data, rel, self.report.path, self._report)

    def _row_evaluator_ok(self, value: dict, where: Where, source: str) -> bool:
        """A data file whose rows give `expected` needs an eval-level declarative evaluator."""
        allowed = row_kinds()
        kinds_text = f"{', '.join(allowed[:-1])} or {allowed[-1]}"
        if "evaluate" not in value:
            self.problem(
                where,
                "csv-evaluator",
                f"a {source} eval needs an eval-level evaluate of kind {kinds_text}",
                "add evaluate: { kind: \"contains\" } and an expected column",
            )
            return False
        if value["evaluate"] is None:
            self.problem(
                Where(where.file, where.line, where.col, "evaluate"),
                "csv-evaluator",
                f"a {source} eval cannot use a custom evaluate function",
                f"use {kinds_text}, or switch to {case_object_formats()}",
            )
            return False
        return True

    def _transformer(self, spec: dict, where: Where, result: CompiledEval, finish: Callable[[CaseDraft], None]) -> bool:
        return expand_transformer(self, spec, where, result, finish)

    def _inherit(
        self,
        draft: CaseDraft,
        value: dict,
        result: CompiledEval,
        system_prompt: str | None,
        eval_spec: dict | None,
        single: bool,
    ) -> dict | None:
        tools = draft.tools if draft.tools is not None else (result.tools or [])
        custom_module = bundle_name(self.report.bundle_sha) if result.custom and self.report.bundle_sha else None
        evaluate = case_evaluator(draft, value, result, eval_spec, tools, self.problem, custom_module)
        if evaluate is None:
            return None
        name = result.title or result.id
        title = name if single else f"{name} — {draft.id}"[:TITLE_MAX]
        return {
            "id": draft.id,
            "evalId": result.id,
            "title": title,
            "prompt": draft.prompt,
            "description": draft.description if draft.description is not None else result.description,
            "systemPrompt": draft.systemPrompt if draft.systemPrompt is not None else system_prompt,
            "tools": tools,
            "evaluate": evaluate,
            "data": draft.data,
            "source": draft.source,
        }
