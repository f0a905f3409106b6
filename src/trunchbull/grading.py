"""`trunchbull grade` (SPEC §4, §6): grade recorded model responses against a
release, write one result per case, and summarize per eval and overall.

Exit codes: 0 every case was graded (and `--fail-under` is met), 1
`--fail-under` is not met (or cases ended in `error`, so the rate cannot be
trusted), 2 unusable input (a release that does not verify, a responses file
with bad JSON, unknown or duplicate case IDs, wrong field types, or cases
without a response).
"""

from __future__ import annotations

import gc
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import orjson

from trunchbull.diagnostics import Diagnostic, UsageError, render_text
from trunchbull.evaluators.builtin import prepare
from trunchbull.evaluators.toolcalls import ToolSchemas, normalize_tool_calls
from trunchbull.files import write_all
from trunchbull.ids import json_type

EXIT_OK, EXIT_FAIL_UNDER, EXIT_UNUSABLE = 0, 1, 2
MAX_REPORTED = 50  # diagnostics printed per run; the rest are counted
RESPONSE_KEYS = ("caseId", "output", "toolCalls", "finishReason", "usage")


class GradeInputError(Exception):
    """The release or the responses file cannot be graded (exit 2)."""

    def __init__(self, diagnostics: list[Diagnostic]):
        super().__init__(f"{len(diagnostics)} problem(s)")
        self.diagnostics = diagnostics


# --------------------------------------------------------------------------- release


@dataclass
class LoadedRelease:
    path: Path
    manifest: dict
    cases: list[dict]
    files: dict[str, bytes]

    @property
    def digest(self) -> str:
        return self.manifest["digest"]


def load_release(path: Path) -> LoadedRelease:
    from trunchbull.release import ReleaseError, load_cases, read_release, verify

    if not path.exists():
        raise UsageError(f"{path}: no such release directory or .tar")
    try:
        release = read_release(path)
    except (ReleaseError, OSError) as err:
        raise UsageError(str(err)) from None
    problems = verify(release)
    if problems:
        shown = "\n  ".join(problems[:10])
        raise UsageError(f"{path} does not verify, so it cannot be graded against:\n  {shown}")
    manifest = release.manifest
    if manifest.get("protocolVersion") != 1:
        raise UsageError(f"{path}: release protocolVersion {manifest.get('protocolVersion')!r} is not supported (expected 1)")
    data = release.files.get("cases.jsonl", b"")
    try:  # one parse of the whole file is much faster than one per line
        cases = orjson.loads(b"[" + b",".join([line for line in data.split(b"\n") if line and not line.isspace()]) + b"]")
    except orjson.JSONDecodeError:
        cases = load_cases(release)
    return LoadedRelease(path, manifest, cases, release.files)


# --------------------------------------------------------------------------- responses


class Response(NamedTuple):
    line: int
    output: str
    tool_calls: list
    finish_reason: Any
    usage: Any


def parse_responses(data: bytes, display: str, case_ids) -> tuple[dict[str, Response], list[Diagnostic]]:
    """Responses by case ID and the problems found (all of them, one pass).
    `case_ids` is any container of the release's case IDs (a set or a dict)."""
    problems: list[Diagnostic] = []
    responses: dict[str, Response] = {}
    suggested = [0]
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    loads = orjson.loads
    new = tuple.__new__
    for number, raw in enumerate(data.split(b"\n"), 1):
        try:
            obj = loads(raw)
        except orjson.JSONDecodeError as err:
            if not raw or raw.isspace():
                continue
            problems.append(Diagnostic("response-json", f"invalid JSON: {err.msg}", display, number, err.colno,
                                       "each line must be one complete JSON object"))
            continue
        # the common case, checked in one go; anything else is diagnosed below
        if type(obj) is dict:
            get = obj.get
            case_id = get("caseId")
            output = get("output")
            tool_calls = get("toolCalls")
            finish = get("finishReason")
            usage = get("usage")
            if (type(case_id) is str and type(output) is str
                    and (tool_calls is None or type(tool_calls) is list)
                    and (finish is None or type(finish) is str)
                    and (usage is None or type(usage) is dict)
                    and case_id in case_ids and case_id not in responses):
                responses[case_id] = new(Response, (number, output, tool_calls or [], finish, usage))
                continue
        _diagnose(obj, number, display, case_ids, responses, problems, suggested)
    return responses, problems


def _diagnose(obj: Any, number: int, display: str, case_ids, responses: dict[str, Response],
              problems: list[Diagnostic], suggested: list[int]) -> None:
    """The problems of one parsed line that is not a plain valid response
    (a response with bad field types is still recorded, so that a later
    duplicate of it is reported too)."""
    if type(obj) is not dict:
        problems.append(Diagnostic("response-invalid", f"a response must be a JSON object, found {json_type(obj)}",
                                   display, number))
        return
    case_id = obj.get("caseId")
    if type(case_id) is not str:
        problems.append(Diagnostic("response-invalid",
                                   "a response needs a string caseId" + ("" if "caseId" not in obj else f", found {json_type(case_id)}"),
                                   display, number))
        return
    bad = False
    output = obj.get("output")
    if type(output) is not str:
        problems.append(Diagnostic("response-invalid",
                                   f"response for {case_id!r}: output must be a string, "
                                   + ("but it is missing" if "output" not in obj else f"found {json_type(output)}"),
                                   display, number, hint="a response with only tool calls has output \"\""))
        bad = True
    tool_calls = obj.get("toolCalls")
    if tool_calls is None:
        tool_calls = []
    elif type(tool_calls) is not list:
        problems.append(Diagnostic("response-invalid", f"response for {case_id!r}: toolCalls must be an array, found {json_type(tool_calls)}",
                                   display, number))
        bad = True
    finish = obj.get("finishReason")
    if finish is not None and type(finish) is not str:
        problems.append(Diagnostic("response-invalid", f"response for {case_id!r}: finishReason must be a string, found {json_type(finish)}",
                                   display, number))
        bad = True
    usage = obj.get("usage")
    if usage is not None and type(usage) is not dict:
        problems.append(Diagnostic("response-invalid", f"response for {case_id!r}: usage must be an object, found {json_type(usage)}",
                                   display, number))
        bad = True
    if case_id not in case_ids:
        hint = None
        if suggested[0] < 5:
            from trunchbull.ids import suggest

            suggested[0] += 1
            near = suggest(case_id, list(case_ids))
            hint = f"did you mean {near!r}?" if near else None
        problems.append(Diagnostic("response-unknown-case", f"unknown caseId {case_id!r}: the release has no such case",
                                   display, number, hint=hint or "check that the responses belong to this release"))
        return
    previous = responses.get(case_id)
    if previous is not None:
        problems.append(Diagnostic("response-duplicate",
                                   f"duplicate response for case {case_id!r} (first at line {previous.line})",
                                   display, number, hint="each case needs exactly one response"))
        return
    responses[case_id] = Response(number, output if not bad else "", tool_calls if not bad else [], finish, usage)


# --------------------------------------------------------------------------- grading


@dataclass
class Graded:
    release: LoadedRelease
    results: list[dict]
    missing: list[str] = field(default_factory=list)
    seconds: float = 0.0


def _custom_modules_dir(release: LoadedRelease, workdir: Path) -> tuple[Path, list[Path]]:
    """Where the bundles are on disk for Node, and what the workers may read.
    With runtime dependencies, the bundles are placed beside an installed
    node_modules (from the release's package.json and lockfile)."""
    deps = release.manifest.get("dependencies")
    if release.path.is_dir() and not deps:
        modules = (release.path / "modules").resolve()
        return modules, [modules]
    target = workdir / "modules"
    target.mkdir(parents=True)
    for name, data in release.files.items():
        if name.startswith("modules/"):
            (workdir / name).write_bytes(data)
    read = [workdir.resolve()]
    if deps:
        from trunchbull.deps import Dependencies, install
        from trunchbull.toolchain import toolchain

        pkg_dir = workdir / "package"
        pkg_dir.mkdir()
        package_json = deps.get("packageJson") or "package.json"
        lockfile = deps.get("lockfile")
        for name in (package_json, lockfile):
            if name:
                (pkg_dir / Path(name).name).write_bytes(release.files[name])
        installed = install(Dependencies(pkg_dir / Path(package_json).name,
                                         pkg_dir / Path(lockfile).name if lockfile else None), toolchain())
        os.symlink(installed / "node_modules", workdir / "node_modules")
        read.append(installed.resolve())
    return target.resolve(), read


def grade(release: LoadedRelease, responses: dict[str, Response], responses_display: str) -> Graded:
    started = time.perf_counter()
    digest = release.digest
    schemas = ToolSchemas(release.manifest.get("tools") or [])
    results: list[dict] = []
    append = results.append
    custom: list[tuple[int, str, dict]] = []  # (result index, module name, input)
    missing: list[str] = []
    # graders are prepared once per distinct spec and shared (an eval-level spec
    # is inherited by all its cases): keyed by the spec's JSON (and the case's
    # tools for tool_call_syntax), as str: holding orjson's own output buffers
    # as keys costs microseconds each when every case has its own spec
    graders: dict[Any, Any] = {}
    dumps = orjson.dumps
    clock = time.perf_counter_ns
    get_response = responses.get
    tool_cases = 0
    for case in release.cases:
        case_id = case["id"]
        spec = case["evaluate"]
        kind = spec.get("kind")
        response = get_response(case_id)
        if response is None:
            missing.append(case_id)
            append({"caseId": case_id, "evalId": case["evalId"], "outcome": "error", "score": None,
                    "message": f"no response for this case in {responses_display}", "details": None,
                    "evaluator": kind, "durationMs": 0.0, "releaseDigest": digest})
            continue
        if kind == "custom":
            custom.append((len(results), spec["module"], {
                "output": response.output, "caseData": case.get("data"), "toolCalls": response.tool_calls,
                "normalizedToolCalls": normalize_tool_calls(response.tool_calls),
                "finishReason": response.finish_reason, "usage": response.usage}))
            append({"caseId": case_id, "evalId": case["evalId"], "outcome": "error", "score": None, "message": None,
                    "details": None, "evaluator": kind, "durationMs": 0.0, "releaseDigest": digest})
            continue
        t0 = clock()
        if kind == "tool_call_syntax":
            key = (dumps(spec).decode(), tuple(case.get("tools") or ()))
            calls = normalize_tool_calls(response.tool_calls)
            tool_cases += 1
            if not tool_cases % 1000 and not gc.isenabled():
                # jsonschema's validation errors form reference cycles (~40
                # objects per failing call); run_grade_command pauses the
                # cyclic collector, so collect the young ones here
                gc.collect(0)
        else:
            key = dumps(spec).decode()
            calls = ()
        grader = graders.get(key)
        if grader is None:
            try:
                grader = prepare(spec, case.get("tools") or [], schemas)
            except ValueError as err:
                append({"caseId": case_id, "evalId": case["evalId"], "outcome": "error", "score": None,
                        "message": f"the release's evaluator spec cannot be graded: {err}", "details": None,
                        "evaluator": kind, "durationMs": 0.0, "releaseDigest": digest})
                continue
            graders[key] = grader
        try:
            outcome, score, message, details = grader(response.output, calls)
        except Exception as err:  # noqa: BLE001 - an evaluator bug must not stop the other cases
            outcome, score, message, details = "error", None, f"the {kind} evaluator failed: {type(err).__name__}: {err}", None
        append({"caseId": case_id, "evalId": case["evalId"], "outcome": outcome, "score": score, "message": message,
                "details": details, "evaluator": kind,
                "durationMs": (clock() - t0 + 50) // 100 / 10_000,  # ms, rounded to 0.1 µs (round() is slow)
                "releaseDigest": digest})
    if custom:
        _grade_custom(release, custom, results)
    return Graded(release, results, missing, time.perf_counter() - started)


def _grade_custom(release: LoadedRelease, custom: list[tuple[int, str, dict]], results: list[dict]) -> None:
    from trunchbull.evaluators.pool import Call, EvaluatorPool

    with tempfile.TemporaryDirectory(prefix="trunchbull-grade-") as tmp:
        modules_dir, read_paths = _custom_modules_dir(release, Path(tmp))
        calls = []
        paths: dict[str, str | None] = {}  # module → the bundle's path on disk (None: not in the release)
        for index, module, payload in custom:
            if module not in paths:
                name = module.split("/", 1)[1] if module.startswith("modules/") else module
                paths[module] = None if module not in release.files or "/" in name else str(modules_dir / name)
            bundle = paths[module]
            if bundle is None:
                row = results[index]
                row["message"] = f"the release has no evaluator module {module!r}"
                calls.append(None)
                continue
            calls.append(Call(bundle, payload))
        runnable = [c for c in calls if c is not None]
        with EvaluatorPool(read_paths) as pool:
            answers = iter(pool.run(runnable))
        for (index, _module, _payload), call in zip(custom, calls):
            if call is None:
                continue
            answer = next(answers)
            row = results[index]
            row["outcome"] = answer.outcome
            row["score"] = None if answer.outcome == "error" or answer.score is None else float(answer.score)
            row["message"] = answer.message
            row["details"] = answer.details
            row["durationMs"] = answer.duration_ms


# --------------------------------------------------------------------------- results and summary


def write_results(path: Path, results: list[dict]) -> None:
    """One JSON line per case, in release order; written to a temporary file and
    renamed into place."""
    path = path.absolute()
    path.parent.mkdir(parents=True, exist_ok=True)
    # appended row by row: each orjson output is freed right away (holding
    # 25,000 of them for one join is several times slower)
    data = bytearray()
    dumps, newline = orjson.dumps, orjson.OPT_APPEND_NEWLINE
    for row in results:
        data += dumps(row, option=newline)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            write_all(handle, data)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def summarize(graded: Graded) -> dict:
    """Per eval (release order) and overall: cases, passed, failed, errors,
    passRate = passed / (passed + failed), meanScore over graded cases. Cases in
    `error` are infrastructure failures: counted, never folded into the rates."""
    import polars as pl

    results = graded.results
    frame = pl.DataFrame(
        {"evalId": [r["evalId"] for r in results], "outcome": [r["outcome"] for r in results],
         "score": [r["score"] for r in results]},
        schema={"evalId": pl.String, "outcome": pl.String, "score": pl.Float64},
    )
    aggregations = [
        pl.len().alias("cases"),
        (pl.col("outcome") == "pass").sum().alias("passed"),
        (pl.col("outcome") == "fail").sum().alias("failed"),
        (pl.col("outcome") == "error").sum().alias("errors"),
        pl.col("score").mean().alias("meanScore"),
    ]
    rate = pl.when(pl.col("passed") + pl.col("failed") > 0).then(
        pl.col("passed") / (pl.col("passed") + pl.col("failed"))).otherwise(None).alias("passRate")
    order = {e["id"]: i for i, e in enumerate(graded.release.manifest.get("evals") or [])}
    per_eval = frame.group_by("evalId", maintain_order=True).agg(aggregations).with_columns(rate)
    overall = frame.select(aggregations).with_columns(rate)
    evals = sorted(per_eval.to_dicts(), key=lambda row: order.get(row["evalId"], len(order)))
    manifest = graded.release.manifest
    return {
        "release": {"title": manifest.get("title"), "version": manifest.get("version"), "digest": graded.release.digest},
        "evals": [_clean(row) for row in evals],
        "overall": _clean(overall.to_dicts()[0]),
        "missing": len(graded.missing),
    }


def _clean(row: dict) -> dict:
    out = {key: row[key] for key in ("evalId", "cases", "passed", "failed", "errors", "passRate", "meanScore") if key in row}
    for key in ("passRate", "meanScore"):
        if out.get(key) is not None:
            out[key] = round(out[key], 6)
    return out


def _pct(value: float | None) -> str:
    return "-" if value is None else f"{value * 100:.1f}%"


def _score(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def render_summary(summary: dict) -> str:
    release = summary["release"]
    title = release["title"] + (f" {release['version']}" if release.get("version") else "")
    rows = [*summary["evals"], {**summary["overall"], "evalId": "overall"}]
    width = max(len("eval"), *(len(r["evalId"]) for r in rows))
    header = f"{'eval':<{width}}  {'cases':>6}  {'pass':>6}  {'fail':>6}  {'error':>6}  {'pass rate':>9}  {'mean score':>10}"
    lines = [f"release {title} ({release['digest']})", header, "-" * len(header)]
    for i, r in enumerate(rows):
        if i == len(rows) - 1:
            lines.append("-" * len(header))
        lines.append(f"{r['evalId']:<{width}}  {r['cases']:>6}  {r['passed']:>6}  {r['failed']:>6}  {r['errors']:>6}  "
                     f"{_pct(r['passRate']):>9}  {_score(r['meanScore']):>10}")
    return "\n".join(lines)


# --------------------------------------------------------------------------- command


def _fail_under_verdict(summary: dict, rate: float) -> tuple[bool, str]:
    overall = summary["overall"]
    if overall["errors"]:
        return False, (f"--fail-under {rate:g}: {overall['errors']} case(s) ended in error (infrastructure failures), "
                       "so the pass rate cannot be trusted")
    if overall["passRate"] is None:
        return False, f"--fail-under {rate:g}: no case was graded"
    if overall["passRate"] < rate:
        return False, f"--fail-under {rate:g}: the overall pass rate {overall['passRate']:.4g} is below {rate:g}"
    return True, f"--fail-under {rate:g}: met (pass rate {overall['passRate']:.4g})"


def _print_diagnostics(diagnostics: list[Diagnostic]) -> None:
    shown = diagnostics[:MAX_REPORTED]
    text = render_text(shown)
    if len(diagnostics) > len(shown):
        text += f"\n… and {len(diagnostics) - len(shown)} more problem(s)"
    print(text, file=sys.stderr)


def run_grade_command(release: Path, responses: Path, output: Path | None, *, json_summary: bool,
                      fail_under: float | None) -> int:
    """Prints the summary to stdout and diagnostics to stderr; returns the exit
    code (0 graded, 1 --fail-under not met, 2 unusable input)."""
    # Grading allocates a few hundred thousand long-lived containers (parsed
    # cases, responses, result rows) and no reference cycles, so the cyclic
    # garbage collector only rescans them over and over (about 40% of the time
    # of a 25,000-case run); it is paused for the command and restored after.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _run_grade_command(release, responses, output, json_summary=json_summary, fail_under=fail_under)
    finally:
        if enabled:
            gc.enable()


def _run_grade_command(release: Path, responses: Path, output: Path | None, *, json_summary: bool,
                       fail_under: float | None) -> int:
    display = str(responses)
    if fail_under is not None and not (0.0 <= fail_under <= 1.0):
        print(f"trunchbull: error: --fail-under takes a pass rate between 0 and 1, got {fail_under:g}", file=sys.stderr)
        return EXIT_UNUSABLE
    try:
        loaded = load_release(Path(release))
        try:
            data = Path(responses).read_bytes()
        except OSError as err:
            raise UsageError(f"cannot read the responses file {display}: {err.strerror or err}") from None
        case_ids = {case["id"] for case in loaded.cases}
        parsed, problems = parse_responses(data, display, case_ids)
        if problems:
            _print_diagnostics(problems)
            print(f"trunchbull: error: {display} cannot be graded: {len(problems)} problem(s); nothing was written", file=sys.stderr)
            return EXIT_UNUSABLE
        graded = grade(loaded, parsed, display)
    except UsageError as err:
        print(f"trunchbull: error: {err}", file=sys.stderr)
        return EXIT_UNUSABLE
    if output is not None:
        write_results(Path(output), graded.results)
    summary = summarize(graded)
    code = EXIT_OK
    met = None
    if graded.missing:
        shown = ", ".join(repr(c) for c in graded.missing[:10]) + (" …" if len(graded.missing) > 10 else "")
        print(render_text([Diagnostic("response-missing",
                                      f"no response for {len(graded.missing)} of {len(graded.results)} case(s): {shown}",
                                      display, hint="they are recorded as outcome \"error\"; every case needs a response")]),
              file=sys.stderr)
        code = EXIT_UNUSABLE
    if fail_under is not None:
        met, verdict = _fail_under_verdict(summary, fail_under)
        if not met and code == EXIT_OK:
            code = EXIT_FAIL_UNDER
        print(verdict, file=sys.stderr)
    overall = summary["overall"]
    if overall["errors"] and not graded.missing:
        print(f"warning: {overall['errors']} case(s) ended in error (infrastructure failures, see their messages)",
              file=sys.stderr)
    if json_summary:
        summary_out = {**summary, "results": str(output) if output is not None else None,
                       "failUnder": None if fail_under is None else {"rate": fail_under, "met": met},
                       "exitCode": code}
        sys.stdout.write(orjson.dumps(summary_out, option=orjson.OPT_INDENT_2).decode() + "\n")
    else:
        print(render_summary(summary))
        if output is not None:
            print(f"results: {output}")
    return code


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m trunchbull.grading")
    parser.add_argument("release", type=Path)
    parser.add_argument("responses", type=Path)
    parser.add_argument("-o", "--out", type=Path)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--fail-under", type=float)
    args = parser.parse_args(argv)
    return run_grade_command(args.release, args.responses, args.out, json_summary=args.json, fail_under=args.fail_under)


if __name__ == "__main__":
    raise SystemExit(main())
