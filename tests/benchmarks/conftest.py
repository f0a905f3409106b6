"""The three standard benchmarks (benchmarks/gsm8k, mmlu, bfcl), each built once per session
with the real CLI, and a grader of hand-written responses through `trunchbull grade`."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from tests.conftest import REPO, run_cli

BENCHMARKS = REPO / "benchmarks"
NAMES = ("gsm8k", "mmlu", "bfcl")


@pytest.fixture(scope="session")
def release(tmp_path_factory):
    """release(name) → the release directory of benchmarks/<name>, built once per session."""
    built: dict[str, Path] = {}

    def get(name: str) -> Path:
        if name not in built:
            out = tmp_path_factory.mktemp("benchmark-releases") / name
            result = run_cli("build", BENCHMARKS / name, "-o", out, timeout=600)
            assert result.code == 0, result.stderr
            built[name] = out
        return built[name]

    return get


@pytest.fixture
def grade(release, tmp_path):
    """grade(name, {caseId: response}) → {caseId: result} for the responses given, through
    `trunchbull grade RELEASE responses.jsonl -o results.jsonl` (cases without a response are
    left out of the returned results)."""

    def run(name: str, responses: dict[str, dict]) -> dict[str, dict]:
        path = tmp_path / f"{name}-responses.jsonl"
        path.write_bytes(b"".join(orjson.dumps({"caseId": k, **v}) + b"\n" for k, v in responses.items()))
        out = tmp_path / f"{name}-results.jsonl"
        result = run_cli("grade", release(name), path, "-o", out, timeout=300)
        assert result.code in (0, 2), result.stderr  # 2: the cases without a response
        rows = [orjson.loads(line) for line in out.read_bytes().splitlines()]
        return {r["caseId"]: r for r in rows if r["caseId"] in responses}

    return run


@pytest.fixture
def grade_all(grade):
    """grade_all(name, [(caseId, response), …]) → [result, …] in the same order, in as few
    `trunchbull grade` runs as the repeated case IDs allow (a responses file holds a case once)."""

    def run(name: str, entries: list[tuple[str, dict]]) -> list[dict]:
        rounds: list[dict[str, tuple[int, dict]]] = []
        for n, (case, response) in enumerate(entries):
            free = next((r for r in rounds if case not in r), None)
            if free is None:
                rounds.append(free := {})
            free[case] = (n, response)
        out: list[dict] = [{}] * len(entries)
        for batch in rounds:
            results = grade(name, {case: response for case, (_, response) in batch.items()})
            for case, (n, _) in batch.items():
                out[n] = results[case]
        return out

    return run
