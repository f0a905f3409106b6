"""Runs of benchmarks/mmlu over two questions of each of its 57 subjects
(114 cases, `--case 'mmlu.*.0' --case 'mmlu.*.1'`), made by the real CLI:
the echo model, and the replay model answering from files written here from
the release's own cases (the right letter, or a wrong one on chosen cases).
Shared by the breakdown, Markdown and leaderboard tests."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import orjson

from tests.conftest import REPO, run_cli
from tests.report.conftest import read_jsonl, trunchbull, write_jsonl
from tests.run.conftest import cli_env

CASES = ("--case", "mmlu.*.0", "--case", "mmlu.*.1")
WRONG = {"A": "B", "B": "C", "C": "D", "D": "A"}


@dataclass
class MmluRuns:
    release: Path
    cases: dict[str, dict]  # case ID → the release's case (the 114 run)
    runs: dict[str, Path]  # name → run directory
    wrong: dict[str, list[str]]  # name → the cases its answers get wrong (replay runs)

    def subject(self, case_id: str) -> str:
        return self.cases[case_id]["data"]["subject"]


def make_mmlu_runs(base: Path, cache: Path) -> MmluRuns:
    def tb(*args):
        return trunchbull(*args, cache=cache, timeout=600)

    release = base / "mmlu-release"
    built = tb("build", REPO / "benchmarks" / "mmlu", "-o", release)
    assert built.code == 0, built.stderr
    every = read_jsonl(release / "cases.jsonl")
    chosen = {c["id"]: c for c in every if c["id"].rsplit(".", 1)[1] in ("0", "1")}
    assert len(chosen) == 114 and len({c["data"]["subject"] for c in chosen.values()}) == 57
    ids = list(chosen)
    # best: every answer right; close: 6 wrong, closer: 7 wrong (each significantly worse than best
    # alone, at 95%, but not once the two comparisons are corrected); every other one wrong in "half"
    wrong = {"best": [], "close": ids[0:12:2], "closer": ids[1:15:2], "half": ids[::2]}
    runs = {}
    for name, mistakes in wrong.items():
        answers = [
            {"caseId": i, "output": f"ANSWER: {WRONG[c['data']['answer']] if i in mistakes else c['data']['answer']}"}
            for i, c in chosen.items()
        ]
        write_jsonl(base / f"{name}.jsonl", answers)
        out = base / name
        # from the runs' directory, so that the model is named replay:NAME.jsonl
        result = run_cli(
            "run", release, "--model", f"replay:{name}.jsonl", *CASES, "-o", out, "--no-cache", cwd=base,
            env=cli_env(cache), timeout=600,
        )  # fmt: skip
        assert result.code == 0, result.stderr
        runs[name] = out
    echo = tb("run", release, "--model", "echo", *CASES, "-o", base / "echo", "--no-cache")
    assert echo.code == 0, echo.stderr
    runs["echo"] = base / "echo"
    return MmluRuns(release, chosen, runs, wrong)


def outcomes(run: Path) -> dict[str, str]:
    return {r["caseId"]: r["outcome"] for r in read_jsonl(run / "results.jsonl")}


def summary(run: Path) -> dict:
    return orjson.loads((run / "summary.json").read_bytes())
