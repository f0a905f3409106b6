"""Run directories that cannot be reported are usage errors (exit 2) that
name the file, the line and the rule, and say what to do; never a traceback."""

from __future__ import annotations

import shutil

import orjson
import pytest

from tests.report.conftest import graded_run

ANSWERS = {
    "alpha.1": "yes",
    "alpha.2": "no",
    "alpha.3": "yes",
    "alpha.4": "yes",
    "beta.1": "yes",
    "beta.2": "no",
    "beta.3": "yes",
}
COMMANDS = [
    ("report", "{run}", "-o", "{tmp}/r.html"),
    ("export", "{run}", "--format", "csv"),
    ("compare", "{good}", "{run}"),
]


@pytest.fixture
def good(release_of, tb, tmp_path):
    return graded_run(tb, release_of("pairs"), ANSWERS, tmp_path / "good" / "run")


def _broken(good, tmp_path, name):
    run = tmp_path / name
    shutil.copytree(good, run)
    return run


def _check(tb, run, good, tmp_path, code: str, *fragments: str):
    for command in COMMANDS:
        args = [a.format(run=run, good=good, tmp=tmp_path) for a in command]
        result = tb(*args)
        assert result.code == 2, (args, result.stdout, result.stderr)
        assert f"error[{code}]" in result.stderr and "hint:" in result.stderr, result.stderr
        assert "Traceback" not in result.stderr
        for fragment in fragments:
            assert fragment in result.stderr


def test_missing_files(good, tb, tmp_path):
    run = _broken(good, tmp_path, "no-results")
    (run / "results.jsonl").unlink()
    _check(tb, run, good, tmp_path, "run-missing-file", "results.jsonl")
    run = _broken(good, tmp_path, "no-summary")
    (run / "summary.json").unlink()
    _check(tb, run, good, tmp_path, "run-missing-file", "summary.json")
    missing = tb("report", tmp_path / "nowhere")
    assert missing.code == 2 and "no such run directory" in missing.stderr
    not_a_run = tmp_path / "empty"
    not_a_run.mkdir()
    result = tb("export", not_a_run, "--format", "junit")
    assert result.code == 2 and "not a run directory" in result.stderr


def test_torn_lines(good, tb, tmp_path):
    run = _broken(good, tmp_path, "torn-results")
    data = (run / "results.jsonl").read_bytes()
    (run / "results.jsonl").write_bytes(data[:-40])
    _check(tb, run, good, tmp_path, "run-torn", "results.jsonl:7")
    run = _broken(good, tmp_path, "torn-log")
    with (run / "responses.jsonl").open("ab") as log:
        log.write(b'{"caseId": "alpha.1", "rep')
    _check(tb, run, good, tmp_path, "run-torn", "responses.jsonl", "--resume")


def test_invalid_result_line(good, tb, tmp_path):
    run = _broken(good, tmp_path, "bad-line")
    lines = (run / "results.jsonl").read_bytes().splitlines(keepends=True)
    lines[2] = b'{"caseId": "alpha.3", "outcome": "maybe"}\n'
    (run / "results.jsonl").write_bytes(b"".join(lines))
    _check(tb, run, good, tmp_path, "run-invalid", "results.jsonl:3")


def test_results_of_another_release(good, tb, tmp_path):
    run = _broken(good, tmp_path, "other-release")
    rows = [orjson.loads(line) for line in (run / "results.jsonl").read_bytes().splitlines()]
    rows[4]["releaseDigest"] = "sha256:" + "0" * 64
    (run / "results.jsonl").write_bytes(b"".join(orjson.dumps(r) + b"\n" for r in rows))
    _check(tb, run, good, tmp_path, "run-other-release", "results.jsonl:5")
    run = _broken(good, tmp_path, "other-summary")
    summary = orjson.loads((run / "summary.json").read_bytes())
    summary["release"]["digest"] = "sha256:" + "1" * 64
    (run / "summary.json").write_bytes(orjson.dumps(summary))
    _check(tb, run, good, tmp_path, "run-other-release", "summary.json")


def test_unfinished_and_stale_runs(good, tb, tmp_path):
    run = _broken(good, tmp_path, "unfinished")
    meta = orjson.loads((run / "run.json").read_bytes())
    meta["finishedAt"] = None
    (run / "run.json").write_bytes(orjson.dumps(meta))
    _check(tb, run, good, tmp_path, "run-unfinished", "--resume")
    run = _broken(good, tmp_path, "stale")
    first = orjson.loads((run / "responses.jsonl").read_bytes().splitlines()[0])
    with (run / "responses.jsonl").open("ab") as log:  # a whole record, of a sample never graded
        log.write(orjson.dumps({**first, "caseId": "alpha.1", "repeat": 1, "output": "late"}) + b"\n")
    _check(tb, run, good, tmp_path, "run-stale-results", "alpha.1")


def test_grade_run_dir_is_never_overwritten(release_of, tb, tmp_path, good):
    answers = tmp_path / "answers.jsonl"
    answers.write_bytes(b'{"caseId": "alpha.1", "output": "yes"}\n')
    before = (good / "results.jsonl").read_bytes()
    result = tb("grade", release_of("pairs"), answers, "--run-dir", good)
    assert result.code == 2 and "not empty" in result.stderr
    assert (good / "results.jsonl").read_bytes() == before


def test_grade_run_dir_is_a_run_directory(good, release_of):
    meta = orjson.loads((good / "run.json").read_bytes())
    assert meta["format"] == "trunchbull.run" and meta["model"] == "recorded:answers.jsonl"
    assert meta["release"]["path"] == str(release_of("pairs")) and meta["repeat"] == 1 and meta["samples"] == 7
    records = [orjson.loads(line) for line in (good / "responses.jsonl").read_bytes().splitlines()]
    assert [r["caseId"] for r in records] == list(ANSWERS) and {r["repeat"] for r in records} == {0}
    summary = orjson.loads((good / "summary.json").read_bytes())
    assert summary["model"] == "recorded:answers.jsonl" and summary["overall"]["passed"] == 5
    results = [orjson.loads(line) for line in (good / "results.jsonl").read_bytes().splitlines()]
    assert {r["repeat"] for r in results} == {0}


def test_a_log_that_records_a_sample_twice_is_refused_with_its_line_numbers(good, tb, tmp_path):
    run = _broken(good, tmp_path, "duplicates")
    lines = (run / "responses.jsonl").read_bytes().splitlines(keepends=True)
    assert len(lines) == 7
    (run / "responses.jsonl").write_bytes(b"".join([*lines, lines[1], lines[4]]))  # lines 8 and 9 repeat 2 and 5
    second, fifth = (orjson.loads(lines[i])["caseId"] for i in (1, 4))
    _check(
        tb,
        run,
        good,
        tmp_path,
        "run-duplicate-records",
        "responses.jsonl:8",
        "2 record(s)",
        f"case {second} repeat 0 on lines 2 and 8",
        f"case {fifth} repeat 0 on lines 5 and 9",
    )
    board = tb("leaderboard", good, run)
    assert board.code == 2 and "error[run-duplicate-records]" in board.stderr, board.stderr


def test_a_resume_warns_of_a_log_that_records_a_sample_twice(release_of, tb, tmp_path):
    release, run = release_of("agent"), tmp_path / "run"
    assert tb("run", release, "--model", "echo", "-o", run, "--eval", "plain").code in (0, 1)
    lines = (run / "responses.jsonl").read_bytes().splitlines(keepends=True)
    (run / "responses.jsonl").write_bytes(b"".join([*lines, lines[0]]))
    resumed = tb("run", release, "-o", run, "--resume")
    assert resumed.code in (0, 1), resumed.stderr
    assert "records 1 sample(s) more than once" in resumed.stderr
    assert "error[run-duplicate-records]" in tb("export", run, "--format", "csv").stderr  # refused until it goes
