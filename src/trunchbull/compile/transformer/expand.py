"""Transformer-backed cases: `cases: { transformer, sources }` (SPEC §3.7).

The transformer module is bundled with esbuild (local imports inlined) and
run twice, concurrently, each time in a fresh sandboxed Node process whose
environment differs on purpose (runs.py). The two canonical outputs must be
byte-identical (comparison.py); the returned cases are validated exactly like
inline cases, run 1's while it still streams them."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import Diagnostic
from trunchbull.common.ids import authoring_id_problem, json_type
from trunchbull.common.paths import rel_posix
from trunchbull.common.userfiles import FileProblem
from trunchbull.compile.cases.context import EvalContext
from trunchbull.compile.cases.fields import CaseDraft, Where, check_case
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.modules import BUNDLE_DEADLINE_S, bundle_timeout_diagnostic
from trunchbull.compile.transformer.comparison import canonical, report_nondeterministic
from trunchbull.compile.transformer.failures import reported_failure, run_failure
from trunchbull.compile.transformer.output import OutputReader, RunOutput
from trunchbull.compile.transformer.runs import Limits, SourceFile, run_both, run_one
from trunchbull.compile.transformer.sources import read_sources
from trunchbull.compile.transformer.spec import check_spec, limits, transformer_module
from trunchbull.node.bounded_output import CappedOutput
from trunchbull.node.sandbox import HelperTimeout, NodeHelper, SandboxResult
from trunchbull.node.toolchain import toolchain

Finish = Callable[[CaseDraft], None]  # compiles a checked case into the eval


def prepare_transformer(compiler: EvalContext, spec: dict, where: Where) -> "TransformerRun | None":
    """Check a `cases: { transformer, sources }` spec; the run, when valid."""
    keys_ok, usable = check_spec(compiler, spec, where)
    if not usable:
        return None
    module = transformer_module(compiler, spec["transformer"], where.at("transformer"))
    sources = read_sources(compiler, spec["sources"], where.at("sources"))
    if module is None or sources is None or not keys_ok:
        return None
    return TransformerRun(compiler, module, sources, where)


def expand_transformer(compiler: EvalContext, spec: dict, where: Where, result: CompiledEval, finish: Finish) -> bool:
    """Hand the transformer's cases to `finish`; False when it failed (see EvalCompiler._cases)."""
    run = prepare_transformer(compiler, spec, where)
    if run is None:
        return False
    sources = run.sources
    result.transformer_sources.update((s.rel, {"bytes": s.size, "sha256": s.sha256}) for s in sources)
    ok = run.execute(finish)
    if ok:
        result.data_files.extend([*run.module_inputs, *(s.rel for s in sources)])
    return ok


class TransformerRun:
    def __init__(self, compiler: EvalContext, module: str, sources: list[SourceFile], where: Where):
        self.compiler = compiler
        self.module = module
        self.sources = sources
        self.where = where
        self.module_inputs: list[str] = [module]
        # Run 1's streamed cases are checked and finished as they arrive;
        # their problems are held back until the two runs are known to agree.
        self._finish: Finish | None = None
        self._held: list[tuple] = []
        self._eval_module = compiler.report.path
        self._report = compiler.problem

    def error(self, code: str, message: str, hint: str | None = None, path: str = "") -> None:
        self.compiler.problem(Where(self.module, path=path), code, message, hint)

    def _finish_case(self, draft) -> None:
        assert self._finish is not None, "cases are finished only while execute() runs"
        self._finish(draft)

    def execute(self, finish: Finish) -> bool:
        """Both runs, concurrently, then the comparison and validation; or, when
        the two runs were made by separate processes (steps transform-run), only
        the comparison and validation of their records."""
        self._finish = finish
        run_limits = limits()
        if self.compiler.transform_runs is not None:
            outputs = self._streaming(
                lambda: [self._from_record(record, i) for i, record in enumerate(self.compiler.transform_runs)]
            )
            return None not in outputs and self._analyze(outputs, run_limits)
        with self._workspace() as tmp:
            bundle = self._bundle(tmp / "bundle")
            if bundle is None:
                return False
            try:
                outputs = self._streaming(
                    lambda: run_both(
                        tmp, bundle, self.sources, self.compiler.install_dir, run_limits, self._check_streamed
                    )
                )
            except FileProblem as problem:
                self._source_changed(problem)
                return False
        return self._analyze(outputs, run_limits)

    def _source_changed(self, problem: FileProblem) -> None:
        self.compiler.problem(
            self.where.at("sources"),
            "transformer-source-path",
            f"source {problem}",
            "do not change the sources while the benchmark builds",
        )

    def _streaming(self, read):
        """`read()` with the problems of the streamed cases held back."""
        self.compiler.hold_problems()
        try:
            return read()
        finally:
            self._held = self.compiler.take_held()

    def record_one(self, index: int) -> tuple[dict, bytes]:
        """Run variant `index` alone: a record for a later expand, and the run's stdout."""
        with self._workspace() as tmp:
            bundle = self._bundle(tmp / "bundle")
            if bundle is None:
                return {
                    "variant": index,
                    "bundled": False,
                    "moduleInputs": self.module_inputs,
                    "diagnostics": [d.to_json() for d in self.compiler.diags.items],
                }, b""
            try:
                run = run_one(index, tmp, bundle, self.sources, self.compiler.install_dir, limits())
            except FileProblem as problem:
                self._source_changed(problem)
                return {
                    "variant": index,
                    "bundled": False,
                    "moduleInputs": self.module_inputs,
                    "diagnostics": [d.to_json() for d in self.compiler.diags.items],
                }, b""
        return {
            "variant": index,
            "bundled": True,
            "moduleInputs": self.module_inputs,
            "returncode": run.returncode,
            "timedOut": run.timed_out,
            "complete": run.complete,
            "stderr": run.stderr.to_json(),
        }, run.stdout

    def _from_record(self, record: dict, index: int) -> RunOutput | None:
        self.module_inputs = record["moduleInputs"]
        if not record["bundled"]:
            self.compiler.diags.extend(Diagnostic.from_json(d) for d in record["diagnostics"])
            return None
        stderr = CappedOutput.from_json(record["stderr"])
        sandbox = SandboxResult(record["returncode"], b"", stderr, record["timedOut"], record["complete"])
        reader = OutputReader(self._check_streamed if index == 0 else None, keep_lines=True)
        return reader.read_all(record["stdout"], sandbox)

    def _check_streamed(self, index: int, value: object) -> None:
        source = {"module": self._eval_module, "transformer": self.module, "index": index}
        draft = check_case(value, Where(self.module, None, None, f"result[{index}]"), source, self._report)
        if draft:
            self._finish_case(draft)

    def _workspace(self):
        parent = self.compiler.install_dir / "transform-runs" if self.compiler.install_dir else None
        if parent:
            parent.mkdir(parents=True, exist_ok=True)
        return lifetime.scratch_dir("trunchbull-transform-", parent)

    def _bundle(self, out_dir: Path) -> Path | None:
        request = {
            "op": "bundle",
            "entries": [self.module],
            "absWorkingDir": str(self.compiler.root),
            "outDir": str(out_dir),
        }
        try:
            if self.compiler.helper is not None:
                response = self.compiler.helper.request(request, timeout=BUNDLE_DEADLINE_S)
            else:
                with NodeHelper(toolchain()) as helper:
                    response = helper.request(request, timeout=BUNDLE_DEADLINE_S)
        except HelperTimeout:
            self.compiler.diags.items.append(bundle_timeout_diagnostic(self.module))
            return None
        result = response["results"][0]
        if not result["ok"]:
            for err in result["errors"]:
                self.compiler.diags.error(
                    "bundle",
                    err["message"],
                    file=err.get("file") or self.module,
                    line=err.get("line"),
                    col=err.get("col"),
                    hint=err.get("hint") or "fix the transformer module so esbuild can bundle it",
                )
            return None
        self.module_inputs = [rel_posix(self.compiler.root / p, self.compiler.root) for p in result["inputs"]]
        return Path(result["bundleFile"])

    def _analyze(self, outputs: list[RunOutput], limits: Limits) -> bool:
        """Whether the runs agree and produced cases (the finished cases stand)."""
        responses = [o.response for o in outputs]
        name = next((r.get("name") for r in responses if r and isinstance(r.get("name"), str)), None)
        who = f"transformer {name!r} ({self.module})" if name else f"transformer {self.module}"
        failures = []
        for i, (output, response) in enumerate(zip(outputs, responses)):
            if response is None:
                failures.append((i, run_failure(output.sandbox, limits)))
            elif not response["ok"]:
                failures.append((i, reported_failure(response)))
        if failures:
            i, (code, message, hint) = failures[0]
            if len(failures) == 1:
                message += (
                    f" (in run {i + 1} only: the other run succeeded, so the transformer is also not deterministic)"
                )
            self.error(code, f"{who}: {message}", hint)
            return False
        if name is None or authoring_id_problem(name):
            self.error(
                "transformer-name",
                f"{who}: the transformer name {authoring_id_problem(name)}",
                "name is an authoring ID, e.g. name: \"trivia\"",
            )
            return False
        first, second = outputs
        assert first.response is not None and second.response is not None  # no failures
        # Equal hashes of the streamed case lines (the usual case) need no
        # second parse and no canonical comparison.
        if not (first.streamed and second.streamed and first.digest == second.digest):
            a, b = self._result(first), self._result(second)
            if canonical(a) != canonical(b):
                report_nondeterministic(self.error, who, a, b)
                return False
        if not first.streamed:
            # (A run 1 that streamed some cases before it found one not plain
            # JSON data always fails here: the eval, with the cases finished
            # from that stream, is dropped.)
            drafts = self._validate(who, first.response["result"])
            for draft in drafts or ():
                self._finish_case(draft)
            return drafts is not None
        if not first.response["count"]:
            self.error("cases-empty", f"{who}: transform returned no cases", "return at least one case", path="result")
            return False
        for problem in self._held:
            self.compiler.problem(*problem)
        return True

    @staticmethod
    def _result(output: RunOutput) -> dict:
        """A run's result as the walk reports it: { value, functions, errors }."""
        if output.streamed:
            return {"value": output.cases(), "functions": [], "errors": []}
        assert output.response is not None  # a run without a response failed before any comparison
        return output.response["result"]

    def _validate(self, who: str, result: dict) -> list[CaseDraft] | None:
        value = result["value"]
        bad_cases: set[int] = set()

        def case_index(path: str) -> int | None:
            match = re.match(r"\[(\d+)\]", path)
            return int(match.group(1)) if match else None

        def at(path: str) -> str:
            return "result" if path == "(root)" else f"result{path}"

        for err in result["errors"]:
            self.error(
                "json-incompatible",
                err["problem"],
                "transform must return plain JSON-compatible case objects",
                path=at(err["path"]),
            )
            idx = case_index(err["path"])
            if idx is not None:
                bad_cases.add(idx)
        for fn in result["functions"]:
            idx = case_index(fn)
            if idx is not None and fn == f"[{idx}].evaluate":
                self.error(
                    "case-evaluate-function",
                    "per-case evaluator functions are not supported",
                    "use a declarative evaluate spec on the case, or one module-level evaluate on the eval",
                    path=at(fn),
                )
            else:
                self.error(
                    "json-incompatible",
                    "a function is not JSON data",
                    "transform must return plain JSON-compatible case objects",
                    path=at(fn),
                )
            if idx is not None:
                bad_cases.add(idx)
        if result["errors"] and any(e["path"] == "(root)" for e in result["errors"]) or "(root)" in result["functions"]:
            return None
        if not isinstance(value, list):
            self.error(
                "transformer-result",
                f"{who}: transform must return an array of case objects, found {json_type(value)}",
                "return (or resolve to) an array such as [{ id, prompt, evaluate }]",
                path="result",
            )
            return None
        if not value:
            self.error("cases-empty", f"{who}: transform returned no cases", "return at least one case", path="result")
            return None
        drafts = []
        for i, obj in enumerate(value):
            if i in bad_cases:
                continue
            source = {"module": self.compiler.report.path, "transformer": self.module, "index": i}
            draft = check_case(obj, Where(self.module, path=f"result[{i}]"), source, self.compiler.problem)
            if draft:
                drafts.append(draft)
        return drafts if not bad_cases else None
