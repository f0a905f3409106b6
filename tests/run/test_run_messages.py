"""Usage messages name values as the command line and the files write them,
never as Python prints them (`None`, `('math',)`, `True`)."""

from __future__ import annotations

import orjson

from tests.run.test_run_records import MODEL, args_for


def test_a_resume_that_differs_names_each_value_plainly(built, server, cli, tmp_path):
    release = built("agent")
    out = tmp_path / "run"
    assert cli(*args_for(release, server, out, "--eval", "plain", "--timeout", "60")).code == 0
    differs = cli(
        *args_for(release, server, out, "--resume", "--temperature", "0.7", "--eval", "plain", "--eval", "orders"),
        "--limit",
        "2",
        "--timeout",
        "90",
    )
    assert differs.code == 2, differs.stderr
    for fragment in (
        "--temperature 0.7 (the run was made without --temperature)",
        "--eval plain, orders (the run has plain)",
        "--limit 2 (the run was made without --limit)",
        "--timeout 90 (the run has 60)",
    ):
        assert fragment in differs.stderr, differs.stderr
    assert "None" not in differs.stderr and "('" not in differs.stderr and "90.0" not in differs.stderr


def test_a_price_that_is_not_a_number_is_shown_as_json(built, server, cli, tmp_path):
    prices = tmp_path / "prices.json"
    prices.write_bytes(orjson.dumps({MODEL: {"input": True, "output": None}}))
    run = cli(*args_for(built("agent"), server, tmp_path / "run", "--prices", prices))
    assert run.code == 2 and "(got true)" in run.stderr, run.stderr
    assert "True" not in run.stderr
