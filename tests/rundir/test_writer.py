"""`run` and `grade --run-dir` write run directories through the one writer
(rundir/writer.py): the same files, run.json with the same keys in the same
order, records and results of the same shape, and `report`, `compare` and
`export` read both. The writer exists only under the directory's lock."""

from __future__ import annotations

import orjson
import pytest

from tests.run.conftest import read_jsonl
from trunchbull.common.diagnostics import UsageError
from trunchbull.rundir.layout import FILES, JUDGMENTS
from trunchbull.rundir.run_json import KEYS
from trunchbull.rundir.schema import FIELDS
from trunchbull.rundir.writer import open_run_dir


def test_run_and_grade_run_dir_write_alike(built, cli, tmp_path):
    release = built("mixed")  # built-in kinds and a custom evaluator
    run = cli("run", release, "--model", "echo", "-o", tmp_path / "run", "--json")
    assert run.code == 0, run.stderr
    graded = cli("grade", release, tmp_path / "run" / "responses.jsonl", "--run-dir", tmp_path / "graded", "--json")
    assert graded.code == 0, graded.stderr
    run_dir, graded_dir = tmp_path / "run", tmp_path / "graded"

    assert sorted(p.name for p in run_dir.iterdir()) == sorted(p.name for p in graded_dir.iterdir()) == sorted(FILES)
    metas = [orjson.loads((d / "run.json").read_bytes()) for d in (run_dir, graded_dir)]
    assert [tuple(meta) for meta in metas] == [KEYS, KEYS]
    assert metas[0]["model"] == "echo" and metas[0]["responses"] is None and metas[0]["settings"]
    assert metas[1]["model"] == "recorded:responses.jsonl" and metas[1]["settings"] is None
    assert metas[1]["responses"] == str(run_dir / "responses.jsonl")
    assert all(meta["finishedAt"] and meta["warnings"] == [] and meta["resumes"] == 0 for meta in metas)
    assert metas[0]["release"] == metas[1]["release"]

    records = [read_jsonl(d / "responses.jsonl") for d in (run_dir, graded_dir)]
    assert len(records[0]) == len(records[1]) == 160
    assert {tuple(r) for r in records[0] + records[1]} == {FIELDS}
    assert {(r["caseId"], r["repeat"], r["output"]) for r in records[0]} == {
        (r["caseId"], r["repeat"], r["output"]) for r in records[1]
    }

    results = [read_jsonl(d / "results.jsonl") for d in (run_dir, graded_dir)]
    assert {tuple(r) for r in results[0] + results[1]} == {tuple(results[0][0])}
    graded_alike = ("caseId", "repeat", "outcome", "score", "message", "details", "evaluator")
    assert [[r[k] for k in graded_alike] for r in results[0]] == [[r[k] for k in graded_alike] for r in results[1]]

    summaries = [orjson.loads((d / "summary.json").read_bytes()) for d in (run_dir, graded_dir)]
    assert list(summaries[0]) == list(summaries[1])
    for key in ("samples", "passed", "failed", "errors"):
        assert summaries[0]["overall"][key] == summaries[1]["overall"][key]

    for directory in (run_dir, graded_dir):
        assert cli("report", directory, "-o", tmp_path / f"{directory.name}.html").code == 0
        for format in ("csv", "junit"):
            exported = cli("export", directory, "--format", format)
            assert exported.code == 0 and exported.stdout, exported.stderr
    compared = cli("compare", run_dir, graded_dir, "--json")
    assert compared.code == 0, compared.stderr


def test_the_writer_holds_the_lock_and_the_judgment_log_appends(tmp_path):
    run_dir = tmp_path / "run"
    with open_run_dir(run_dir) as writer:
        with pytest.raises(UsageError, match="is in use"):
            with open_run_dir(run_dir):
                pass
        log = writer.judgment_log()
        log.append_record({"caseId": "a", "repeat": 0, "reply": "yes"})
        log.append_record({"caseId": "b", "repeat": 0, "reply": "no"})
        log.close()
    assert read_jsonl(run_dir / JUDGMENTS) == [
        {"caseId": "a", "repeat": 0, "reply": "yes"},
        {"caseId": "b", "repeat": 0, "reply": "no"},
    ]
    assert sorted(p.name for p in run_dir.iterdir()) == [JUDGMENTS]  # the lock went with the writer
