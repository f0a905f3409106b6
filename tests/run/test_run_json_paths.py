"""run.json records where the release is as an absolute path, so that a
report made from another directory finds the release (for the prompts)."""

from __future__ import annotations

import shutil

import orjson

from tests.conftest import run_cli
from tests.run.conftest import cli_env


def test_a_release_given_relatively_is_recorded_absolutely(built, cache_dir, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    shutil.copytree(built("agent"), work / "release")
    env = cli_env(cache_dir)
    run = run_cli("run", "release", "--model", "echo", "-o", "runs/a", "--eval", "plain", cwd=work, env=env)
    assert run.code == 0, run.stderr
    meta = orjson.loads((work / "runs" / "a" / "run.json").read_bytes())
    assert meta["release"]["path"] == str(work / "release")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    report = run_cli("report", work / "runs" / "a", "-o", "r.html", cwd=elsewhere, env=env)
    assert report.code == 0, report.stderr
    assert "prompts" not in report.stderr  # no "prompts are not shown" note: the release was found
    page = (elsewhere / "r.html").read_text()
    assert "[plain-three] please echo three" in page and "Be terse." in page  # a prompt and a system prompt

    # a run recorded with a relative path (before it was made absolute) gets the absolute one on resume
    meta.update(release={**meta["release"], "path": "release"}, finishedAt=None)
    (work / "runs" / "a" / "run.json").write_bytes(orjson.dumps(meta))
    resumed = run_cli("run", "release", "-o", "runs/a", "--resume", cwd=work, env=env)
    assert resumed.code == 0, resumed.stderr
    assert orjson.loads((work / "runs" / "a" / "run.json").read_bytes())["release"]["path"] == str(work / "release")
