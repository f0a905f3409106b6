"""Recorded verdicts are replayed (SPEC §4.1): after a judged run, `run
--resume`, `grade --run-dir`, `report`, `compare` and `export` make no judge
request (the scripted judge's own count); an identical run is served from
the response cache; `--rerun-errors` asks again for the verdicts in error
only, keeping the old ones; a run killed while judging is resumed asking only
what it had not recorded."""

from __future__ import annotations

import threading

from tests.run.conftest import kill_group, read_jsonl, start_cli, wait_until
from tests.run.test_run_judges import JUDGE, REPLIES, judge_requests, judge_rule, judged_run
from tests.support.chat_server import Reply

CLEAN = ["--eval", "verdicts", "--case", "verdicts.pass", "--case", "verdicts.fail", "--case", "verdicts.partial"]
CLEAN += ["--case", "verdicts.fact", "--case", "verdicts.injected"]


def grades(run_dir) -> dict:
    return {(r["caseId"], r["repeat"]): (r["outcome"], r["score"]) for r in read_jsonl(run_dir / "results.jsonl")}


def test_grade_report_compare_export_and_resume_replay_verdicts(built, cli, server, tmp_path):
    release = built("rubrics")
    run_dir = tmp_path / "run"
    first = judged_run(cli, server, release, run_dir, *CLEAN)
    assert first.code == 0, first.stderr
    asked = len(judge_requests(server))
    assert asked == 5
    before = grades(run_dir)

    resumed = cli("run", release, "-o", run_dir, "--resume", "--json")
    assert resumed.code == 0, resumed.stderr
    assert len(judge_requests(server)) == asked and grades(run_dir) == before
    assert resumed.json["evals"]["verdicts"]["judge"]["requests"] == 5
    assert {r["details"]["judges"][0]["replayed"] for r in read_jsonl(run_dir / "results.jsonl") if r["details"]} == {
        True
    }
    assert len(read_jsonl(run_dir / "judgments.jsonl")) == 5  # nothing appended

    graded = tmp_path / "graded"
    judge = ["--judge", JUDGE, "--judge-base-url", server.url]
    by_grade = cli("grade", release, run_dir / "responses.jsonl", *judge, "--run-dir", graded, "--json")
    assert by_grade.code == 2 and "no response for 6 of 11" in by_grade.stderr  # the cases the run left out
    assert len(judge_requests(server)) == asked  # the response cache answers: the same judge, prompts, settings
    assert by_grade.json["overall"]["judge"]["cached"] == 5
    # the same grade again, with an empty response cache: the directory's recorded verdicts are replayed
    again = cli(
        "grade",
        release,
        run_dir / "responses.jsonl",
        *judge,
        "--run-dir",
        graded,
        "--json",
        env={"TRUNCHBULL_RESPONSE_CACHE": str(tmp_path / "empty.sqlite3")},
    )
    assert again.code == 2, again.stderr
    assert len(judge_requests(server)) == asked
    assert {k: v for k, v in grades(graded).items() if v[0] != "error"} == grades(run_dir)

    assert cli("report", run_dir, "-o", tmp_path / "r.html").code == 0
    assert cli("compare", run_dir, graded, "--json").code == 0
    assert cli("export", run_dir, "--format", "csv", "-o", tmp_path / "r.csv").code == 0
    assert len(judge_requests(server)) == asked

    second = judged_run(cli, server, release, tmp_path / "second", *CLEAN)
    assert second.code == 0, second.stderr
    assert len(judge_requests(server)) == asked  # an identical run: every verdict from the cache
    assert grades(tmp_path / "second") == grades(run_dir)
    assert second.json["overall"]["judge"]["cached"] == 5


def test_rerun_errors_asks_again_for_the_verdicts_in_error_only(built, cli, server, tmp_path):
    release = built("rubrics")
    run_dir = tmp_path / "run"
    cases = ["--eval", "verdicts", "--case", "verdicts.pass", "--case", "verdicts.garbled"]
    first = judged_run(cli, server, release, run_dir, *cases)
    assert first.code == 1 and grades(run_dir)[("verdicts.garbled", 0)] == ("error", None)
    REPLIES_NOW = {**REPLIES, "judge:garbled": Reply(content="On reflection.\nGRADE: C")}

    def rule(text):
        if "[BEGIN DATA]" not in text:
            return None
        return next((reply for marker, reply in REPLIES_NOW.items() if marker in text), None)

    server.judge(rule)
    replayed = cli("run", release, "-o", run_dir, "--resume")
    assert replayed.code == 1 and len(judge_requests(server)) == 2  # the error is replayed, not asked again
    rerun = cli("run", release, "-o", run_dir, "--resume", "--rerun-errors")
    assert rerun.code == 0, rerun.stderr
    requests = judge_requests(server)
    assert len(requests) == 3 and "judge:garbled" in requests[-1].body["messages"][0]["content"]
    assert grades(run_dir)[("verdicts.garbled", 0)] == ("pass", 1.0)
    lines = [j for j in read_jsonl(run_dir / "judgments.jsonl") if j["caseId"] == "verdicts.garbled"]
    assert [j["outcome"] for j in lines] == ["error", "pass"]  # the old verdict is kept


def test_a_run_killed_while_judging_is_resumed_asking_only_what_was_not_recorded(
    built, cli, cache_dir, server, tmp_path
):
    release = built("rubrics")
    run_dir = tmp_path / "run"
    gate = threading.Event()
    held = {**REPLIES, "judge:partial": Reply(content="GRADE: P", hold=gate)}

    def rule(text):
        if "[BEGIN DATA]" not in text:
            return None
        return next((reply for marker, reply in held.items() if marker in text), None)

    server.judge(rule)
    args = ["run", release, "--model", "echo", "--judge", JUDGE, "--judge-base-url", server.url, "-o", run_dir]
    proc = start_cli(*args, *CLEAN, cache=cache_dir)
    try:
        judgments = run_dir / "judgments.jsonl"
        wait_until(lambda: judgments.exists() and judgments.read_bytes().count(b"\n") == 4, "4 verdicts recorded")
        kill_group(proc)
    finally:
        gate.set()
    assert not (run_dir / "results.jsonl").exists()
    asked = len(judge_requests(server))
    server.judge(judge_rule)
    resumed = cli("run", release, "-o", run_dir, "--resume", "--json")
    assert resumed.code == 0, resumed.stderr
    requests = judge_requests(server)[asked:]
    assert len(requests) == 1 and "judge:partial" in requests[0].body["messages"][0]["content"]
    assert grades(run_dir)[("verdicts.partial", 0)] == ("fail", 0.5)
    assert len(read_jsonl(run_dir / "judgments.jsonl")) == 5
