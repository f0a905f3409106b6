"""One set of numbers: a run's cost, tokens and pass rate are the same in
summary.json, `report` (its terminal summary and the HTML report's data),
`compare --json`, `leaderboard --json` and the CSV and Parquet exports.

Real runs, made by the real CLI with a price against the local model server
(tests/support/chat_server.py) through the real AI SDK provider, of cases
that end in every kind of error: a provider error (HTTP 400, no step billed),
a timeout after a billed tool step (an error that cost something), a tool
that loops forever (tool-timeout: the watchdog replaces the worker), a tool
that ends its process (worker-crash, twice). Run `priced` knows every
sample's cost; run `unknown` replays one case from the response cache of a
run without a price, so that sample's record has `cost: null` and its eval's
and the overall cost are unknown. The same with 2 repeats. The expected
figures are recomputed here from the exported per-sample rows."""

from __future__ import annotations

import csv
import io
import math
import threading
from pathlib import Path

import orjson
import polars as pl
import pytest

from tests.report.conftest import read_jsonl, trunchbull
from tests.support.chat_server import ChatServer, Reply

MODEL = "openai-compatible:test-model"
CASES = ["plain.one", "plain.two", "plain.three", "plain.four", "orders.a1", "orders.b2", "faults.stall", "faults.quit"]
ERRORS = {
    "plain.two": "provider",
    "orders.b2": "timeout",
    "faults.stall": "tool-timeout",
    "faults.quit": "worker-crash",
}


def script(server: ChatServer, late: threading.Event) -> None:
    server.script("[plain-one]", [Reply(content="echo one", usage=(1000, 250))])
    server.script("[plain-two]", [Reply(status=400, error_body={"error": {"message": "bad request"}})])
    server.script("[plain-three]", [Reply(content="echo three", usage=(300, 30))])
    server.script("[plain-four]", [Reply(content="nothing to see", usage=(40, 4))])
    server.script("[order-a1]", [Reply(content="A1 has shipped", usage=(600, 60))])
    # a billed tool step, then a reply later than the sample's timeout
    server.script(
        "[order-b2]",
        [Reply(tool_calls=[("lookup_order", {"orderId": "B2"})], usage=(500, 50)), Reply(content="late", hold=late)],
    )
    server.script("[fault-stall]", [Reply(tool_calls=[("stall", {})], usage=(70, 7)), Reply(content="never")])
    server.script("[fault-quit]", [Reply(tool_calls=[("quit", {})], usage=(80, 8)), Reply(content="never")])


@pytest.fixture(scope="module")
def runs(release_of, tmp_path_factory):
    """{(kind, repeats): run directory} for kind priced / unknown and 1 or 2 repeats."""
    base = tmp_path_factory.mktemp("numbers")
    release = release_of("agent")
    prices = base / "prices.toml"
    prices.write_text(f'["{MODEL}"]\ninput = 2.0\noutput = 8.0\n')
    out = {}
    late = threading.Event()  # the reply that comes after the timeout: held until the runs are made
    with ChatServer() as server:
        script(server, late)

        def run(name: str, repeats: int, *extra) -> Path:
            cases = [arg for case in CASES for arg in ("--case", case)]
            args = ["run", release, "--model", MODEL, "--base-url", server.url, "-o", base / name, *cases]
            # one sample at a time: a tool that ends its process takes no other sample with it
            args += ["--repeat", str(repeats), "-j", "1", "--timeout", "2", "--tool-timeout", "1", *extra]
            result = trunchbull(*args, cache=base / "cache")
            assert result.code == 1, result.stderr  # samples ended in error
            return base / name

        # plain.three, without a price, into the response cache: its record's cost is null
        seeded = trunchbull(
            *("run", release, "--model", MODEL, "--base-url", server.url, "-o", base / "seed"),
            *("--case", "plain.three", "--repeat", "2"),
            cache=base / "cache",
        )
        assert seeded.code == 0, seeded.stderr
        for repeats in (1, 2):
            out[("priced", repeats)] = run(f"priced{repeats}", repeats, "--prices", prices, "--no-cache")
            out[("unknown", repeats)] = run(f"unknown{repeats}", repeats, "--prices", prices)
        late.set()
    return out


def expected(rows: list[dict]) -> dict:
    """Cost, tokens and pass rate from per-sample rows (outcome, evalId, caseId,
    totalTokens, inputTokens, outputTokens, costUsd: None when unknown), per eval and overall."""

    def figures(part: list[dict]) -> dict:
        cases: dict[str, list[bool]] = {}
        for row in part:
            if row["outcome"] != "error":
                cases.setdefault(row["caseId"], []).append(row["outcome"] == "pass")
        costs = [row["costUsd"] for row in part]
        return {
            "passRate": round(sum(sum(c) / len(c) for c in cases.values()) / len(cases), 6) if cases else None,
            "tokens": {k: sum(row[f"{k}Tokens"] or 0 for row in part) for k in ("input", "output", "total")},
            "cost": None if None in costs else round(math.fsum(costs), 6),
        }

    out = {"overall": figures(rows)}
    for eval_id in dict.fromkeys(row["evalId"] for row in rows):
        out[eval_id] = figures([row for row in rows if row["evalId"] == eval_id])
    return out


def same(found: dict, wanted: dict) -> None:
    rate = wanted["passRate"]
    assert found["passRate"] == (None if rate is None else pytest.approx(rate, abs=1e-6))
    assert found["tokens"] == wanted["tokens"]
    assert found["cost"] == (None if wanted["cost"] is None else pytest.approx(wanted["cost"], abs=1e-9))


def csv_rows(run: Path, tmp: Path) -> list[dict]:
    result = trunchbull("export", run, "--format", "csv", cache=tmp)
    assert result.code == 0, result.stderr
    rows = list(csv.DictReader(io.StringIO(result.stdout, newline="")))
    for row in rows:
        for key in ("inputTokens", "outputTokens", "totalTokens"):
            row[key] = int(row[key]) if row[key] else None
        row["costUsd"] = float(row["costUsd"]) if row["costUsd"] else None
    return rows


def parquet_rows(run: Path, tmp: Path) -> list[dict]:
    path = tmp / f"{run.name}.parquet"
    result = trunchbull("export", run, "--format", "parquet", "-o", path, cache=tmp)
    assert result.code == 0, result.stderr
    return pl.read_parquet(path).to_dicts()


@pytest.mark.parametrize("repeats", [1, 2])
def test_every_command_gives_the_same_cost_tokens_and_pass_rate(runs, repeats, tmp_path):
    priced, unknown = runs[("priced", repeats)], runs[("unknown", repeats)]
    for run in (priced, unknown):
        records = read_jsonl(run / "responses.jsonl")
        kinds = sorted((r["caseId"], r["repeat"], (r["error"] or {}).get("kind")) for r in records)
        wanted = sorted((case, repeat, ERRORS.get(case)) for case in CASES for repeat in range(repeats))
        assert kinds == wanted
    # what the records say: an error costs what its billed steps cost (the timeout's tool step), else 0
    cost_of = {r["caseId"]: r["cost"] for r in read_jsonl(priced / "responses.jsonl")}
    assert cost_of["orders.b2"] == pytest.approx(500 * 2e-6 + 50 * 8e-6) and cost_of["plain.one"] == pytest.approx(
        0.004
    )
    assert cost_of["faults.stall"] == pytest.approx(70 * 2e-6 + 7 * 8e-6)
    assert cost_of["plain.two"] == cost_of["faults.quit"] == 0  # nothing billed; at a known price, 0
    unknown_records = read_jsonl(unknown / "responses.jsonl")
    assert [r["cost"] for r in unknown_records if r["caseId"] == "plain.three"] == [None] * repeats

    figures = {}
    for run in (priced, unknown):
        rows = csv_rows(run, tmp_path)
        want = figures[run] = expected(rows)
        # the Parquet export's rows say the same
        assert expected(parquet_rows(run, tmp_path)) == want
        summary = orjson.loads((run / "summary.json").read_bytes())
        same(summary["overall"], want["overall"])
        for eval_id in ("plain", "orders", "faults"):
            same(summary["evals"][eval_id], want[eval_id])
        # report: the terminal summary's overall row and the HTML report's data
        report = trunchbull("report", run, "-o", tmp_path / f"{run.name}.html", cache=tmp_path)
        assert report.code == 0, report.stderr
        (overall_row,) = [line for line in report.stdout.splitlines() if line.startswith("overall ")]
        cost = want["overall"]["cost"]
        assert f"{want['overall']['passRate'] * 100:.1f}%" in overall_row
        assert f"{want['overall']['tokens']['total']:,}" in overall_row
        assert ("unknown" if cost is None else f"${cost:.4f}") in overall_row and "$0.0000" not in overall_row
        page = (tmp_path / f"{run.name}.html").read_bytes()
        start = page.index(b'id="trunchbull-data">') + len(b'id="trunchbull-data">')
        payload = orjson.loads(page[start : page.index(b"</script>", start)])
        (data,) = payload["runs"]
        same(data["summary"]["overall"], want["overall"])
        assert sum(v for v in data["samples"]["tokTotal"] if v is not None) == want["overall"]["tokens"]["total"]
    assert figures[priced]["overall"]["cost"] > 0 and figures[unknown]["overall"]["cost"] is None
    assert figures[unknown]["plain"]["cost"] is None and figures[unknown]["orders"]["cost"] == pytest.approx(
        figures[priced]["orders"]["cost"]
    )

    compared = trunchbull("compare", priced, unknown, "--json", cache=tmp_path)
    assert compared.code == 0, compared.stderr
    same(compared.json["a"]["overall"], figures[priced]["overall"])
    same(compared.json["b"]["overall"], figures[unknown]["overall"])
    board = trunchbull("leaderboard", priced, unknown, "--json", cache=tmp_path)
    assert board.code == 0, board.stderr
    models = {m["runDir"]: m for m in board.json["models"]}
    for run in (priced, unknown):
        model = models[str(run)]
        assert model["leftOut"] == 0  # the same cases: the shared ones are all of them
        same({**model["overall"], "tokens": model["tokens"], "cost": model["cost"]}, figures[run]["overall"])
        for eval_id in ("plain", "orders", "faults"):
            rate = figures[run][eval_id]["passRate"]
            assert model["evals"][eval_id]["passRate"] == (None if rate is None else pytest.approx(rate, abs=1e-6))
