"""How samples are spread over the run's workers (run/workers.py): at most
`-j` model calls at once across the pool, samples waiting in a worker beyond
its slots, and waiting samples given back to a worker that has gone idle."""

from __future__ import annotations

import collections
import threading

import orjson
import pytest

from tests.run.conftest import read_jsonl, start_cli, wait_for_records, wait_until
from tests.support.chat_server import Reply
from trunchbull.node.worker_pool import pool_size
from trunchbull.run.scheduling import PREFETCH, shares, worker_count


def write_benchmark(root, prompts: list[str]) -> None:
    (root / "evals").mkdir(parents=True)
    lines = [
        orjson.dumps({"id": f"c{i:02d}", "prompt": prompt, "evaluate": {"kind": "non_empty"}}).decode()
        for i, prompt in enumerate(prompts)
    ]
    (root / "evals" / "cases.jsonl").write_text("\n".join(lines) + "\n")
    (root / "evals" / "sched.ts").write_text('export default { id: "sched", cases: "./cases.jsonl" }\n')


def test_shares_split_the_concurrency_exactly():
    assert shares(32, 2, None) == [16, 16]
    assert shares(5, 2, None) == [3, 2]
    assert shares(7, 3, None) == [3, 2, 2]
    assert shares(4, 2, 1) == [1, 1]  # a local model: one sample at a time per worker
    for concurrency in range(1, 40):
        size = worker_count(concurrency)
        assert sum(shares(concurrency, size, None)) == concurrency


@pytest.mark.skipif(pool_size() < 2, reason="one core: the run has one worker, so nothing is ever given back")
def test_concurrency_is_a_bound_and_an_idle_worker_is_given_the_waiting_samples(cli, cache_dir, server, tmp_path):
    # -j 8: two workers of 4 slots. The samples are sent in case order, each to
    # the worker with the most free slots (the first on a tie), so the first
    # worker gets the even cases and the second the odd ones. The even ones are
    # held by the server: once the second worker has run its fast ones, it is
    # idle while the first still holds slow samples waiting for a slot, and it
    # is given them. Without the give-back, no more than the first worker's 4
    # slots would hold slow samples; with it, 8 are held at once.
    count = 24
    assert count <= 2 * (4 + PREFETCH)  # every sample is sent before any finishes
    prompts = [f"[slow] case {i}" if i % 2 == 0 else f"[fast] case {i}" for i in range(count)]
    gate = threading.Event()
    server.script("[slow]", [Reply(content="slow answer", hold=gate)])
    server.script("[fast]", [Reply(content="fast answer")])
    write_benchmark(tmp_path / "bench", prompts)
    build = cli("build", tmp_path / "bench", "-o", tmp_path / "rel")
    assert build.code == 0, build.stderr
    out = tmp_path / "run"
    proc = start_cli(
        "run", tmp_path / "rel", "--model", "openai-compatible:m", "--base-url", server.url, "-j", "8", "-o", out,
        cache=cache_dir,
    )  # fmt: skip
    try:
        wait_for_records(out / "responses.jsonl", count // 2, proc=proc)  # the fast ones, all recorded
        wait_until(lambda: len(server.received("[slow]")) >= 8, "8 slow samples held at once")
        assert len(server.received("[slow]")) == 8  # the give-back filled the idle worker's 4 slots, no more
    finally:
        gate.set()
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 0, stderr

    records = read_jsonl(out / "responses.jsonl")
    assert sorted(r["caseId"] for r in records) == [f"c{i:02d}" for i in range(count)]  # each once
    assert len(server.received()) == count  # nothing given back was also run where it waited
    assert server.peak_in_flight() <= 8
    assert server.peak_in_flight("[slow]") == 8
    outputs = collections.Counter(r["output"] for r in records)
    assert outputs == {"slow answer": count // 2, "fast answer": count // 2}


def test_a_sample_waiting_in_a_worker_is_timed_from_when_it_starts(cli, server, tmp_path):
    # -j 1: one slot, and every sample sent to the worker at once (PREFETCH), the first one slow
    # and the others quick. Timed from when it was sent, each later sample would take longer than
    # the first (it was sent with it and recorded after it); timed from when it starts, each takes
    # its own request's time, shorter than the first's. The oracle is the order of the records'
    # latencies and the server's record of when each request was served, not a margin on the clock.
    count = 8
    assert count <= 1 + PREFETCH
    prompts = ["[slow] case 0", *(f"[steady] case {i}" for i in range(1, count))]
    server.script("[slow]", [Reply(content="slow answer", delay=2)])
    server.script("[steady]", [Reply(content="steady answer")])
    write_benchmark(tmp_path / "bench", prompts)
    assert cli("build", tmp_path / "bench", "-o", tmp_path / "rel").code == 0
    out = tmp_path / "run"
    run = cli(
        "run", tmp_path / "rel", "--model", "openai-compatible:m", "--base-url", server.url,
        "-j", "1", "-o", out,
    )  # fmt: skip
    assert run.code == 0, run.stderr
    records = {r["caseId"]: r for r in read_jsonl(out / "responses.jsonl")}
    assert [r["error"] for r in records.values()] == [None] * count
    requests = server.received()
    assert len(requests) == count and server.peak_in_flight() == 1
    assert all(a.ended <= b.started for a, b in zip(requests, requests[1:]))  # one after another
    assert "[slow]" in requests[0].body["messages"][-1]["content"]  # the slow one first, the others behind it
    for request in requests:
        record = records["c%02d" % int(request.body["messages"][-1]["content"].split()[-1])]
        assert record["latencyMs"] >= (request.ended - request.started) * 1000  # its request's time included
    first = records["c00"]["latencyMs"]
    assert all(records[f"c{i:02d}"]["latencyMs"] < first for i in range(1, count))  # not the time spent waiting
