"""Reading a finished run directory (SPEC §8.3) for reports, comparisons and
exports: run.json, summary.json, results.jsonl and responses.jsonl, checked
against each other. Anything that makes the directory unusable — a missing
file, a torn or invalid line, results of another release, results that do not
match the log — is a UsageError (exit 2) naming the file, the line, the rule
and what to do. A damaged line of the log is not: it is left out, with a
warning on stderr naming its line (rundir/log.py), and the rest is read.
Nothing here renders anything."""

from __future__ import annotations

import sys
from dataclasses import dataclass
from pathlib import Path

import orjson

from trunchbull.common.diagnostics import Diagnostic, UsageError
from trunchbull.rundir.duplicates import describe_duplicates, find_duplicates
from trunchbull.rundir.layout import RESPONSES, RESULTS, RUN_JSON, SUMMARY
from trunchbull.rundir.log import read_records
from trunchbull.rundir.results import is_result
from trunchbull.rundir.run_json import is_run, read_run_json
from trunchbull.rundir.schema import record_problem


@dataclass
class RunDirectory:
    path: Path
    meta: dict  # run.json
    summary: dict  # summary.json
    results: list[dict]  # results.jsonl, in its (release) order
    records: dict[tuple[str, int], dict]  # responses.jsonl by (case ID, repeat)

    @property
    def digest(self) -> str:
        return self.meta["release"]["digest"]

    @property
    def model(self) -> str:
        return str(self.meta.get("model") or "")

    def record_of(self, result: dict) -> dict | None:
        """The response record a result was graded from (None for a sample
        that has none: graded `error`)."""
        return self.records.get((result["caseId"], result.get("repeat", 0)))


def _problem(path: Path, code: str, message: str, hint: str, line: int | None = None) -> UsageError:
    return UsageError(Diagnostic(code, message, str(path), line, hint=hint).render())


def read_run_dir(path: Path) -> RunDirectory:
    if not path.exists():
        raise UsageError(f"{path}: no such run directory")
    if not path.is_dir():
        raise UsageError(
            f"{path} is not a run directory (a directory written by `trunchbull run` or "
            "`trunchbull grade --run-dir`)"
        )
    meta = read_run_json(path)
    release = meta.get("release")
    if not is_run(meta) or type(release) is not dict or type(release.get("digest")) is not str:
        raise _problem(
            path / RUN_JSON,
            "run-format",
            f"not a trunchbull run (format {orjson.dumps(meta.get('format')).decode()}, or no release digest)",
            "give the directory a run wrote (`trunchbull run … -o DIR`)",
        )
    if meta.get("finishedAt") is None:
        raise _problem(
            path / RUN_JSON,
            "run-unfinished",
            "the run has not finished: its samples are not all " "recorded and graded (finishedAt is null)",
            f"finish it with `trunchbull run {release.get('path') or 'RELEASE'} -o {path} --resume`",
        )
    summary = _read_summary(path / SUMMARY, release["digest"])
    results = _read_results(path / RESULTS, release["digest"])
    log = path / RESPONSES
    if not log.is_file():
        raise _problem(
            log,
            "run-missing-file",
            "the run's record log is missing",
            "a run directory holds run.json, responses.jsonl, results.jsonl and summary.json",
        )
    records, damaged = _read_log(log, path)
    _check_results_match_records(path, results, records, damaged)
    return RunDirectory(path, meta, summary, results, records)


def _read_log(log: Path, run_dir: Path) -> tuple[dict[tuple[str, int], dict], list[tuple[str, int] | None]]:
    """The records by (case ID, repeat), and the samples of damaged lines
    (None for one that names none): one parse of the whole file; the run's
    own reader (log.py) when that fails, to leave out what is damaged."""
    try:
        data = log.read_bytes()
    except OSError as err:
        raise UsageError(f"cannot read {log}: {err.strerror or err}") from None
    if data and not data.endswith(b"\n"):
        raise _problem(
            log,
            "run-torn",
            "the last record is torn (the run was stopped while writing it)",
            f"resume the run (`trunchbull run … -o {run_dir} --resume`): it cuts the torn line and re-grades",
            data.count(b"\n") + 1,
        )
    try:
        rows = orjson.loads(b"[" + b",".join(line for line in data.split(b"\n") if line.strip()) + b"]")
    except orjson.JSONDecodeError:
        rows = None
    records: dict[tuple[str, int], dict] = {}
    if rows is not None:
        for row in rows:
            if record_problem(row) is not None:
                rows = None
                break
            records.setdefault((row["caseId"], row["repeat"]), row)
    if rows is None:
        recorded = read_records(log)
        for damage in recorded.damaged:
            print(f"trunchbull: warning: {damage.describe(log)}", file=sys.stderr)
        if recorded.duplicates:
            _refuse_duplicates(log, data)
        return recorded.records, [damage.key for damage in recorded.damaged]
    if len(rows) != len(records):
        _refuse_duplicates(log, data)
    return records, []


def _refuse_duplicates(log: Path, data: bytes) -> None:
    found = find_duplicates(data)
    if not found:
        return
    raise _problem(
        log,
        "run-duplicate-records",
        f"{len(found)} record(s) repeat a sample recorded on an earlier line, so the run cannot be "
        f"counted: {describe_duplicates(found)}",
        "two processes wrote to this run directory at once, or the log was edited; keep one line per "
        "sample and re-grade with `trunchbull run … --resume`, or run again into a new directory",
        found[0].line,
    )


def _read_summary(path: Path, digest: str) -> dict:
    try:
        summary = orjson.loads(path.read_bytes())
    except FileNotFoundError:
        raise _problem(
            path,
            "run-missing-file",
            "the run's summary is missing",
            "re-grade the run: `trunchbull run … -o DIR --resume` writes results.jsonl and summary.json "
            "from the log",
        ) from None
    except (OSError, orjson.JSONDecodeError) as err:
        raise _problem(path, "run-invalid", f"cannot be read: {err}", "re-grade the run with `--resume`") from None
    if type(summary) is not dict or type(summary.get("overall")) is not dict or type(summary.get("evals")) is not dict:
        raise _problem(
            path, "run-invalid", "not a run summary (needs `overall` and `evals`)", "re-grade the run with `--resume`"
        )
    found = (summary.get("release") or {}).get("digest")
    if found != digest:
        raise _problem(
            path,
            "run-other-release",
            f"the summary is of release {found}, the run of {digest}",
            "the directory mixes files of two runs; re-grade it with `--resume`",
        )
    return summary


def _read_results(path: Path, digest: str) -> list[dict]:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise _problem(
            path,
            "run-missing-file",
            "the run's graded results are missing",
            "re-grade the run: `trunchbull run … -o DIR --resume`",
        ) from None
    except OSError as err:
        raise UsageError(f"cannot read {path}: {err.strerror or err}") from None
    if data and not data.endswith(b"\n"):
        raise _problem(
            path,
            "run-torn",
            "the last line is incomplete (the file was cut while being written)",
            "re-grade the run with `--resume`",
            data.count(b"\n") + 1,
        )
    lines = data.split(b"\n")[:-1] if data else []
    try:  # one parse of the whole file; line by line only to say where it fails
        rows = orjson.loads(b"[" + b",".join(line for line in lines if line.strip()) + b"]")
    except orjson.JSONDecodeError:
        rows = None
    if rows is None or not all(is_result(row) for row in rows):
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = orjson.loads(line)
            except orjson.JSONDecodeError as err:
                raise _problem(
                    path,
                    "run-invalid",
                    f"not a result (invalid JSON: {err.msg})",
                    "results.jsonl is written by trunchbull; re-grade the run with `--resume`",
                    number,
                ) from None
            if not is_result(row):
                raise _problem(
                    path,
                    "run-invalid",
                    "not a graded result (needs caseId, evalId, outcome "
                    "pass/fail/error, a numeric or null score, releaseDigest)",
                    "re-grade the run with `--resume`",
                    number,
                )
    for number, row in enumerate(rows, 1):
        if row["releaseDigest"] != digest:
            raise _problem(
                path,
                "run-other-release",
                f"result {row['caseId']!r} was graded against release "
                f"{row['releaseDigest']}, the run is of {digest}",
                "the directory mixes files of two runs; re-grade it with `--resume`",
                number,
            )
    return rows


def _check_results_match_records(
    path: Path, results: list[dict], records: dict[tuple[str, int], dict], damaged: list
) -> None:
    """`damaged`: the samples of the log's damaged lines (None: a line that
    names none), whose results are kept without their records."""
    graded = set()
    unnamed = damaged.count(None)
    for row in results:
        key = (row["caseId"], row.get("repeat", 0))
        if key in graded:
            raise _problem(
                path / RESULTS,
                "run-invalid",
                f"two results for case {key[0]!r} repeat {key[1]}",
                "re-grade the run with `--resume`",
            )
        graded.add(key)
        if key not in records and row["outcome"] != "error" and key not in damaged:
            if unnamed:  # perhaps the sample of a damaged line that no longer says whose it is
                unnamed -= 1
                continue
            raise _problem(
                path / RESULTS,
                "run-stale-results",
                f"case {key[0]!r} repeat {key[1]} is graded " f"{row['outcome']!r} but has no record in {RESPONSES}",
                "results.jsonl does not belong to this log; re-grade the run with `--resume`",
            )
    extra = [key for key in records if key not in graded]
    if extra:
        case_id, repeat = extra[0]
        raise _problem(
            path / RESPONSES,
            "run-stale-results",
            f"{len(extra)} recorded sample(s) are not graded " f"(first: case {case_id!r} repeat {repeat})",
            "the log grew after grading; re-grade the run with `--resume`",
        )
