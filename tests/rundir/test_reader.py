"""The one reader of a finished run directory (rundir/reader.py), in-process
on directories the real writer made (`grade --run-dir`): what it returns,
and each way a directory is refused (a UsageError naming the file, the line
and the rule) or read around (a damaged log line, left out with a warning)."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import run_cli
from tests.run.conftest import cli_env
from trunchbull.common.diagnostics import UsageError
from trunchbull.grading.command import run_grade_command
from trunchbull.rundir.reader import read_run_dir

EVAL = """export default {
  id: "answers",
  evaluate: { kind: "contains", expected: "yes" },
  cases: [
    { id: "a.1", prompt: "One?" },
    { id: "a.2", prompt: "Two?" },
    { id: "a.3", prompt: "Three?" },
    { id: "a.4", prompt: "Four?" },
  ],
}
"""
ANSWERS = {"a.1": "yes", "a.2": "no", "a.3": "yes indeed"}  # a.4 has none: graded `error`


@pytest.fixture(scope="module")
def release(tmp_path_factory) -> Path:
    tmp = tmp_path_factory.mktemp("reader")
    (tmp / "bench" / "evals").mkdir(parents=True)
    (tmp / "bench" / "evals" / "answers.ts").write_text(EVAL)
    built = run_cli("build", tmp / "bench", "-o", tmp / "release", env=cli_env(tmp))
    assert built.code == 0, built.stdout + built.stderr
    return tmp / "release"


@pytest.fixture
def run_dir(release, tmp_path, capsys) -> Path:
    responses = tmp_path / "answers.jsonl"
    responses.write_bytes(b"".join(orjson.dumps({"caseId": k, "output": v}) + b"\n" for k, v in ANSWERS.items()))
    code = run_grade_command(release, responses, None, json_summary=True, fail_under=None, run_dir=tmp_path / "run")
    assert code == 2  # a.4 has no response
    capsys.readouterr()
    return tmp_path / "run"


def lines(path: Path) -> list[bytes]:
    return path.read_bytes().splitlines(keepends=True)


def refused(run_dir: Path, code: str) -> str:
    with pytest.raises(UsageError) as caught:
        read_run_dir(run_dir)
    assert f"error[{code}]" in str(caught.value) and "hint:" in str(caught.value), caught.value
    return str(caught.value)


def test_a_finished_directory_is_read_whole(run_dir, release):
    run = read_run_dir(run_dir)
    digest = orjson.loads((release / "release.json").read_bytes())["digest"]
    assert run.digest == digest and run.model == "recorded:answers.jsonl"
    assert run.meta == orjson.loads((run_dir / "run.json").read_bytes())
    assert [(r["caseId"], r["outcome"]) for r in run.results] == [
        ("a.1", "pass"),
        ("a.2", "fail"),
        ("a.3", "pass"),
        ("a.4", "error"),
    ]
    assert sorted(run.records) == [("a.1", 0), ("a.2", 0), ("a.3", 0)]
    assert run.record_of(run.results[2])["output"] == "yes indeed"
    assert run.record_of(run.results[3]) is None
    assert run.summary["overall"]["passed"] == 2


def test_an_unfinished_run_is_refused(run_dir):
    meta = orjson.loads((run_dir / "run.json").read_bytes())
    (run_dir / "run.json").write_bytes(orjson.dumps({**meta, "finishedAt": None}))
    assert "--resume" in refused(run_dir, "run-unfinished")


def test_a_damaged_log_line_is_left_out_and_its_result_kept(run_dir, capsys):
    log = run_dir / "responses.jsonl"
    kept = lines(log)
    damaged = orjson.dumps({"caseId": "a.2", "repeat": 0, "output": 7}) + b"\n"  # not a record: output a number
    log.write_bytes(kept[0] + damaged + kept[2])
    run = read_run_dir(run_dir)
    assert sorted(run.records) == [("a.1", 0), ("a.3", 0)]
    assert [r["caseId"] for r in run.results] == ["a.1", "a.2", "a.3", "a.4"]
    assert "responses.jsonl:2: a damaged record (case 'a.2' repeat 0) was left out" in capsys.readouterr().err


def test_a_sample_recorded_twice_is_refused(run_dir):
    log = run_dir / "responses.jsonl"
    log.write_bytes(log.read_bytes() + lines(log)[1])
    assert "responses.jsonl:4" in refused(run_dir, "run-duplicate-records")


def test_results_that_do_not_match_the_log_are_refused(run_dir):
    log = run_dir / "responses.jsonl"
    original = log.read_bytes()
    log.write_bytes(b"".join(lines(log)[1:]))  # a.1 is graded `pass` but has no record
    assert "case 'a.1' repeat 0 is graded 'pass' but has no record" in refused(run_dir, "run-stale-results")
    extra = orjson.loads(lines(log)[0])
    log.write_bytes(original + orjson.dumps({**extra, "repeat": 1}) + b"\n")  # recorded, not graded
    assert "1 recorded sample(s) are not graded" in refused(run_dir, "run-stale-results")


def test_files_of_another_release_or_torn_are_refused(run_dir):
    results = run_dir / "results.jsonl"
    original = results.read_bytes()
    row = orjson.loads(lines(results)[0])
    results.write_bytes(orjson.dumps({**row, "releaseDigest": "sha256:other"}) + b"\n" + b"".join(lines(results)[1:]))
    assert "results.jsonl:1" in refused(run_dir, "run-other-release")
    results.write_bytes(original[:-5])
    assert "results.jsonl:4" in refused(run_dir, "run-torn")
    results.write_bytes(original)
    summary = run_dir / "summary.json"
    summary.write_bytes(orjson.dumps({"overall": {}, "evals": {}, "release": {"digest": "sha256:other"}}))
    refused(run_dir, "run-other-release")
    summary.unlink()
    assert "summary.json" in refused(run_dir, "run-missing-file")
