"""Transformer-backed cases: `cases: { transformer, sources }` (SPEC §3.7).

The transformer module is bundled with esbuild (local imports inlined) and
run twice, concurrently, each time in a fresh sandboxed Node process whose
environment differs on purpose (transformer_runs.py). The two canonical
outputs must be byte-identical; the returned cases are validated exactly like
inline cases, run 1's while it still streams them."""

from __future__ import annotations

import codecs
import hashlib
import os
import queue
import re
import threading
from pathlib import Path
from typing import Callable

import orjson

from trunchbull.common import lifetime
from trunchbull.common.diagnostics import Diagnostic, UsageError
from trunchbull.common.ids import authoring_id_problem, json_type, source_name_problem
from trunchbull.common.paths import MODULE_SUFFIXES, rel_posix, resolve_inside
from trunchbull.common.userfiles import FileProblem, display, open_file, os_problem, probe
from trunchbull.compile.cases.context import EvalContext
from trunchbull.compile.cases.fields import CaseDraft, Where, check_case
from trunchbull.compile.compiled_eval import CompiledEval
from trunchbull.compile.modules import BUNDLE_DEADLINE_S, bundle_timeout_diagnostic
from trunchbull.compile.transformer.runs import (
    MAX_CASES,
    Limits,
    OutputReader,
    RunOutput,
    SourceFile,
    run_both,
    run_one,
)
from trunchbull.node.sandbox import HelperTimeout, NodeHelper, SandboxResult
from trunchbull.node.toolchain import toolchain

Finish = Callable[[CaseDraft], None]  # compiles a checked case into the eval

TRANSFORMER_KEYS = ("transformer", "sources")
MIB = 1024 * 1024
MAX_SOURCES = 16
MAX_SOURCE_BYTES = 50 * MIB
MAX_TOTAL_SOURCE_BYTES = 200 * MIB
DEFAULT_DEADLINE_S = 120.0
DEFAULT_MEMORY_MB = 4096
DEADLINE_ENV = "TRUNCHBULL_TRANSFORM_DEADLINE"  # seconds per run
MEMORY_ENV = "TRUNCHBULL_TRANSFORM_MEMORY_MB"  # V8 heap cap per run
SHORT = 80


def _env_number(name: str, default: float, kind: type) -> float:
    text = os.environ.get(name)
    if not text:
        return default
    try:
        value = kind(text)
    except ValueError:
        raise UsageError(f"{name}={text!r} is not a number") from None
    if value <= 0:
        raise UsageError(f"{name} must be positive")
    return value


def limits() -> Limits:
    """Per-run limits, from the environment or the defaults."""
    return Limits(
        float(_env_number(DEADLINE_ENV, DEFAULT_DEADLINE_S, float)),
        int(_env_number(MEMORY_ENV, DEFAULT_MEMORY_MB, int)),
    )


def prepare_transformer(compiler: EvalContext, spec: dict, where: Where) -> "TransformerRun | None":
    """Check a `cases: { transformer, sources }` spec; the run, when valid."""
    ok = True
    for key in spec:
        if key not in TRANSFORMER_KEYS:
            compiler.problem(
                where.at(key),
                "transformer-unknown-key",
                f"unknown key {key!r}",
                "a transformer case source has exactly transformer and sources",
            )
            ok = False
    if not isinstance(spec.get("transformer"), str) or not isinstance(spec.get("sources"), dict):
        compiler.problem(
            where,
            "transformer-shape",
            "cases must be { transformer: \"./t.ts\", sources: { name: \"./file\" } }",
            "transformer is a module path and sources an object of named file paths",
        )
        return None
    module = _transformer_module(compiler, spec["transformer"], where.at("transformer"))
    sources = _sources(compiler, spec["sources"], where.at("sources"))
    if module is None or sources is None or not ok:
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


def check_total_sources(evals: list[CompiledEval], diags) -> None:
    """The repository-wide budget: all transformer sources of the release,
    each file counted once, at most 200 MiB. Reported at the eval whose
    source crosses the limit."""
    counted: dict[str, int] = {}
    for ev in evals:
        for rel, source in ev.transformer_sources.items():
            if rel in counted:
                continue
            counted[rel] = source["bytes"]
            total = sum(counted.values())
            if total > MAX_TOTAL_SOURCE_BYTES:
                where = ev.where or Where(ev.module)
                diags.error(
                    "transformer-sources-total",
                    f"with {rel}, transformer sources total {total:,} bytes; the repository-wide limit is 200 MiB "
                    f"({MAX_TOTAL_SOURCE_BYTES:,} bytes, each file counted once)",
                    file=ev.module,
                    line=where.line,
                    col=where.col,
                    hint="split the benchmark, or share source files between transformers",
                )
                return


def _transformer_module(compiler: EvalContext, text: str, where: Where) -> str | None:
    path, problem = resolve_inside(compiler.module_file.parent, text, compiler.root)
    if problem:
        compiler.problem(
            where,
            "transformer-path",
            f"transformer {problem}",
            "the transformer path is relative to the eval module and must stay inside the benchmark root",
        )
        return None
    assert path is not None
    if not path.name.endswith(MODULE_SUFFIXES):
        compiler.problem(
            where, "transformer-path", f"transformer {display(text)} is not a .ts, .mts, .js or .mjs module", None
        )
        return None
    _, unusable = probe(path)
    if unusable:
        compiler.file_problem(
            where,
            unusable,
            f"transformer module {display(text)} ",
            "transformer-missing",
            "transformer-path",
            "the transformer path is relative to the eval module",
        )
        return None
    return rel_posix(path, compiler.root)


def _sources(compiler: EvalContext, spec: dict, where: Where) -> list[SourceFile] | None:
    if not 1 <= len(spec) <= MAX_SOURCES:
        compiler.problem(
            where,
            "transformer-sources",
            f"a transformer takes 1-{MAX_SOURCES} named sources, found {len(spec)}",
            "name each input file: sources: { questions: \"./questions.txt\" }",
        )
        return None

    def unreadable_source(here: Where, text: str, problem: FileProblem) -> None:
        compiler.file_problem(
            here,
            problem,
            f"source file {display(text)} ",
            "transformer-source-missing",
            "transformer-source-path",
            "source paths are relative to the eval module",
        )

    sources: list[SourceFile] = []
    ok = True
    for name, text in spec.items():
        here = where.at(name)
        problem = source_name_problem(name)
        if problem:
            compiler.problem(here, "transformer-source-name", problem, None)
            ok = False
            continue
        if not isinstance(text, str):
            compiler.problem(
                here, "transformer-source-path", f"a source must be a file path, found {json_type(text)}", None
            )
            ok = False
            continue
        path, problem = resolve_inside(compiler.module_file.parent, text, compiler.root)
        if problem:
            compiler.problem(
                here,
                "transformer-source-path",
                f"source {problem}",
                "source paths are relative to the eval module and must stay inside the benchmark root",
            )
            ok = False
            continue
        assert path is not None
        info, unusable = probe(path)
        if unusable:
            unreadable_source(here, text, unusable)
            ok = False
            continue
        assert info is not None  # probe gives the stat result when it finds no problem
        rel = rel_posix(path, compiler.root)
        size = info.st_size
        if size > MAX_SOURCE_BYTES:
            compiler.problem(
                here,
                "transformer-source-size",
                f"source {rel} is {size:,} bytes; the limit per source is 50 MiB ({MAX_SOURCE_BYTES:,} bytes)",
                "split the data, or pre-process it into a smaller file",
            )
            ok = False
            continue
        try:
            digest, bad_byte, identity = _hash_and_check_utf8(path)
        except FileProblem as unreadable:
            unreadable_source(here, text, unreadable)
            ok = False
            continue
        if bad_byte is not None:
            with open_file(path) as f:
                line = f.read(bad_byte).count(b"\n") + 1
            compiler.diags.error(
                "transformer-source-encoding",
                f"source {rel} is not valid UTF-8 (byte {bad_byte} on line {line}; it is named {name!r} by "
                f"{compiler.report.path})",
                file=rel,
                line=line,
                hint="save the file as UTF-8",
            )
            ok = False
            continue
        sources.append(SourceFile(name, path, rel, digest, size, identity))
    return sources if ok else None


def _hash_and_check_utf8(path: Path) -> tuple[str, int | None, tuple[int, int]]:
    """The file's sha256, the offset of its first byte that is not valid
    UTF-8 (None: all valid), and the (device, inode) that was read. Read
    once, in 1 MiB chunks (sources reach 50 MiB), which another thread hashes
    while this one checks the encoding (hashlib releases the GIL). Raises
    FileProblem."""
    digest = hashlib.sha256()
    chunks: queue.Queue = queue.Queue(maxsize=4)  # bounded: at most a few MiB in flight

    def hash_chunks() -> None:
        while (chunk := chunks.get()) is not None:
            digest.update(chunk)

    hashing = threading.Thread(target=hash_chunks, daemon=True)
    hashing.start()
    decoder = codecs.getincrementaldecoder("utf-8")()
    offset = 0  # of the next chunk
    bad = None
    identity = (0, 0)
    try:
        with open_file(path) as f:
            info = os.fstat(f.fileno())
            identity = (info.st_dev, info.st_ino)
            while chunk := f.read(1 << 20):
                chunks.put(chunk)
                pending = decoder.getstate()[0]  # an unfinished sequence from the last chunk
                if bad is None and (pending or not chunk.isascii()):  # ASCII is UTF-8: no decoding needed
                    try:
                        decoder.decode(chunk)
                    except UnicodeDecodeError as err:
                        bad = offset - len(pending) + err.start
                offset += len(chunk)
    except OSError as err:
        raise os_problem(err) from None
    finally:
        chunks.put(None)
        hashing.join()
    if bad is None:
        pending = decoder.getstate()[0]
        try:
            decoder.decode(b"", final=True)
        except UnicodeDecodeError as err:
            bad = offset - len(pending) + err.start
    return digest.hexdigest(), bad, identity


def _short(value: object) -> str:
    if value is _ABSENT:
        return "(absent)"
    text = orjson.dumps(value).decode()
    return text if len(text) <= SHORT else text[: SHORT - 1] + "…"


_ABSENT = object()


def first_difference(a: object, b: object, path: str = "") -> tuple[str, object, object] | None:
    """The first path (sorted keys, array order) where two JSON values differ."""
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            sub = f"{path}.{key}" if path else key
            if key not in a or key not in b:
                return sub, a.get(key, _ABSENT), b.get(key, _ABSENT)
            found = first_difference(a[key], b[key], sub)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        for i in range(max(len(a), len(b))):
            sub = f"{path}[{i}]"
            if i >= len(a) or i >= len(b):
                return sub, a[i] if i < len(a) else _ABSENT, b[i] if i < len(b) else _ABSENT
            found = first_difference(a[i], b[i], sub)
            if found:
                return found
        return None
    if type(a) is not type(b) or a != b:
        return path or "(whole value)", a, b
    return None


def _canonical(value: object) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


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
                self.compiler.problem(
                    self.where.at("sources"),
                    "transformer-source-path",
                    f"source {problem}",
                    "do not change the sources while the benchmark builds",
                )
                return False
        return self._analyze(outputs, run_limits)

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
                self.compiler.problem(
                    self.where.at("sources"),
                    "transformer-source-path",
                    f"source {problem}",
                    "do not change the sources while the benchmark builds",
                )
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
            "stderr": run.stderr[-20_000:],
        }, run.stdout

    def _from_record(self, record: dict, index: int) -> RunOutput | None:
        self.module_inputs = record["moduleInputs"]
        if not record["bundled"]:
            self.compiler.diags.extend(Diagnostic.from_json(d) for d in record["diagnostics"])
            return None
        sandbox = SandboxResult(record["returncode"], b"", record["stderr"], record["timedOut"], record["complete"])
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

    def _failure(self, run: SandboxResult, limits: Limits) -> tuple[str, str, str | None]:
        """(code, message, hint) for a run that produced no response."""
        if run.timed_out:
            return (
                "transformer-deadline",
                f"stopped at the deadline: the run did not finish within {limits.deadline_s:g} s "
                f"(limit: deadline, {DEADLINE_ENV})",
                f"transform must finish; raise the deadline with {DEADLINE_ENV}=SECONDS if it is just slow",
            )
        err = run.stderr
        if "heap out of memory" in err or "Reached heap limit" in err or "Allocation failed" in err:
            return (
                "transformer-memory",
                f"stopped at the memory cap: the run exceeded {limits.memory_mb} MB of heap "
                f"(limit: memory, {MEMORY_ENV})",
                f"reduce memory use, or raise the cap with {MEMORY_ENV}=MB",
            )
        if "ERR_ACCESS_DENIED" in err:
            return (
                "transformer-sandbox",
                f"stopped by the sandbox: {_last_error_line(err)}",
                "transformers may not write files, start processes or workers, or read outside their sources",
            )
        if run.returncode == 0:
            return (
                "transformer-crash",
                "the run ended without a result (did the transformer call process.exit?)",
                "transform must return its cases, not exit the process",
            )
        return ("transformer-crash", f"the run crashed Node (exit {run.returncode}): {_last_error_line(err)}", None)

    def _describe(self, response: dict) -> tuple[str, str, str | None]:
        stage = response.get("stage")
        if stage == "export":
            return (
                "transformer-export",
                "; ".join(response.get("problems") or ["invalid default export"]),
                "a transformer module must `export default { name, transform }`",
            )
        if stage == "sandbox":
            return (
                "transformer-sandbox",
                f"stopped by the sandbox: it attempted {response.get('error')}, which is forbidden",
                "transformers may not write files, start processes or workers, or read outside their sources",
            )
        if stage == "result":
            return (
                "too-many-cases",
                f"transform returned {response.get('count') or 0:,} cases; the release limit is {MAX_CASES:,} "
                "(limit: case count)",
                "split the data across several releases",
            )
        return (
            "transformer-error",
            f"transform threw {response.get('error')}",
            "transform must return an array of cases",
        )

    def _analyze(self, outputs: list[RunOutput], limits: Limits) -> bool:
        """Whether the runs agree and produced cases (the finished cases stand)."""
        responses = [o.response for o in outputs]
        name = next((r.get("name") for r in responses if r and isinstance(r.get("name"), str)), None)
        who = f"transformer {name!r} ({self.module})" if name else f"transformer {self.module}"
        failures = []
        for i, (output, response) in enumerate(zip(outputs, responses)):
            if response is None:
                failures.append((i, self._failure(output.sandbox, limits)))
            elif not response["ok"]:
                failures.append((i, self._describe(response)))
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
            if _canonical(a) != _canonical(b):
                self._nondeterministic(who, a, b)
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

    def _nondeterministic(self, who: str, first: dict, second: dict) -> None:
        hint = (
            "transform must depend only on its sources: the two runs differ in working directory, TZ, LANG/LC_ALL, "
            "HOME, USER, environment order, umask and clock, and Math.random() differs anyway"
        )
        a, b = first["value"], second["value"]
        if isinstance(a, list) and isinstance(b, list):
            for i in range(max(len(a), len(b))):
                if i >= len(a) or i >= len(b):
                    longer = a if i < len(a) else b
                    case_id = longer[i].get("id") if isinstance(longer[i], dict) else None
                    self.error(
                        "transformer-nondeterministic",
                        f"{who} is not deterministic: run 1 returned {len(a)} cases, run 2 returned {len(b)}; "
                        f"first differing case: index {i} (id {case_id!r}, present in run {1 if i < len(a) else 2} only)",
                        hint,
                        path=f"result[{i}]",
                    )
                    return
                found = first_difference(a[i], b[i])
                if found:
                    field_path, va, vb = found
                    ids = [c.get("id") if isinstance(c, dict) else None for c in (a[i], b[i])]
                    case_id = repr(ids[0]) if ids[0] == ids[1] else f"{ids[0]!r} in run 1, {ids[1]!r} in run 2"
                    self.error(
                        "transformer-nondeterministic",
                        f"{who} is not deterministic: case {i} (id {case_id}) differs in field {field_path}: "
                        f"run 1 gave {_short(va)}, run 2 gave {_short(vb)}",
                        hint,
                        path=f"result[{i}]",
                    )
                    return
        found = first_difference(first, second)
        field_path, va, vb = found or ("(output)", None, None)
        self.error(
            "transformer-nondeterministic",
            f"{who} is not deterministic: the output differs at {field_path}: run 1 gave {_short(va)}, "
            f"run 2 gave {_short(vb)}",
            hint,
        )

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


def _last_error_line(stderr: str) -> str:
    lines = [line.strip() for line in stderr.splitlines() if line.strip() and not line.startswith("Node.js v")]
    errors = [line for line in lines if "Error" in line]
    return (errors or lines or ["no output"])[-1][:500]
