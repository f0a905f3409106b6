"""What `run --dry-run` says of the judge (SPEC §4.1, §8.7): the judge
requests a run would make, how many the run directory recorded (on
--resume) and the response cache holds, and their estimated input tokens
and cost, with no call made and nothing written.

A request is made exactly as grading makes it: the grader prepares each
judged sample's evaluator and renders its prompt, with the output the run
directory recorded, or, for a sample not run yet, an empty output (its
request's key, and so whether it is cached, cannot be known before the
model answers; its tokens are then a lower bound). Tokens are estimated as
a sample's are (dry_run.py): characters / 4, rounded up."""

from __future__ import annotations

from math import ceil
from typing import Callable, Sequence

from trunchbull.evaluators.inputs import MODEL
from trunchbull.evaluators.judging import JudgeAsk, JudgeReply
from trunchbull.evaluators.registry import evaluators
from trunchbull.grading.grader import Grader, ToGrade
from trunchbull.grading.responses import Response
from trunchbull.release.loaded import LoadedRelease
from trunchbull.run.judge_calls import judge_key
from trunchbull.run.judge_options import JudgeSetup
from trunchbull.run.samples import Sample
from trunchbull.rundir.judgments import JudgmentKey
from trunchbull.stats.run_stats import rounded

CHARS_PER_TOKEN = 4


class _Planner:
    """A judge that answers nothing: it keeps what it was asked."""

    def __init__(self, setup: JudgeSetup):
        self.setup = setup
        self.asks: list[JudgeAsk] = []

    @property
    def model(self) -> str:
        return next(iter(self.setup.judges))

    def answer(self, asks: Sequence[JudgeAsk]) -> list[JudgeReply]:
        self.asks = list(asks)
        return [JudgeReply(None, "a dry run asks no judge") for _ in asks]


def judge_plan(
    release: LoadedRelease,
    samples: list[Sample],
    setup: JudgeSetup,
    done: dict,
    recorded: dict[JudgmentKey, dict],
    lookup: Callable[[list[str]], set[str]] | None,
    rerun_errors: bool = False,
) -> dict:
    """`done`: the records of the samples recorded already; `recorded`: the
    verdicts the run directory holds (replayed, but for those in error with
    `rerun_errors`); `lookup(keys)`: those of `keys` the response cache holds
    (None: --no-cache)."""
    known = evaluators()
    judged = [s for s in samples if MODEL in getattr(known.get(s.case["evaluate"].get("kind")), "reads", ())]
    planner = _Planner(setup)
    grader = Grader(release, "", planner)
    outputs: list[str | None] = []
    for sample in judged:
        row = done.get((sample.case_id, sample.repeat))
        outputs.append(row.get("output") if row is not None and not row.get("error") else None)
    grader.add(
        (index, ToGrade(sample.case, Response(0, output or "", [], None, None), sample.repeat))
        for index, (sample, output) in enumerate(zip(judged, outputs))
    )
    grader.finish()
    identities = {text: judge.spec.identity() for text, judge in setup.judges.items()}
    by_judge: dict[str, dict] = {}
    keys: list[tuple[str, str, int]] = []  # (judge, key, tokens) of the requests the cache may hold
    for index, ask, judge in ((i, a, j) for i, a in enumerate(planner.asks) for j in setup.panel_for(a.request.judge)):
        entry = by_judge.setdefault(judge.text, {"requests": 0, "recorded": 0, "cached": 0, "tokens": 0})
        entry["requests"] += 1
        key = judge_key(judge, identities[judge.text], ask.request)
        line = recorded.get((ask.case_id, ask.repeat, key))
        if line is not None and not (rerun_errors and line["outcome"] == "error"):
            entry["recorded"] += 1
            continue
        tokens = ceil(sum(len(str(message.get("content"))) for message in ask.request.messages) / CHARS_PER_TOKEN)
        entry["tokens"] += tokens
        if outputs[index] is not None:
            keys.append((judge.text, key, tokens))
    hits = lookup([key for _text, key, _tokens in keys]) if lookup is not None and keys else set()
    for text, key, tokens in keys:
        if key in hits:
            by_judge[text]["cached"] += 1
            by_judge[text]["tokens"] -= tokens
    out = {}
    for text, entry in by_judge.items():
        price = setup.judges[text].price
        cost = None if price is None else entry["tokens"] * price.per_token()["input"]
        entry["toAsk"] = entry["requests"] - entry["recorded"] - entry["cached"]
        entry["estimatedInputCost"] = rounded(cost)
        out[text] = entry
    return out


def judge_plan_lines(plan: dict) -> list[str]:
    lines = []
    for text, entry in plan.items():
        cost = entry["estimatedInputCost"]
        lines.append(
            f"  judge {text}: {entry['requests']:,} request(s) planned: {entry['recorded']:,} recorded already, "
            f"{entry['cached']:,} in the response cache, {entry['toAsk']:,} to ask; estimated input tokens "
            f"{entry['tokens']:,} (outputs not yet recorded count as empty), cost of input "
            + ("unknown (no price for this judge)" if cost is None else f"${cost:.4f}")
        )
    return lines
