"""summary.json (SPEC §8.5): a run's figures per eval and overall, in
release order, as stats/run_stats.py computes them from the graded rows and
their records (counts, the pass rate and the mean score over cases with
their 95% intervals, tokens, cost, latency percentiles, pass@k and pass^K
with repeats), with the release it ran and the method behind the intervals.
"""

from __future__ import annotations

from typing import Sequence

from trunchbull.release.manifest import Manifest
from trunchbull.stats.quantiles import CONFIDENCE, Z95
from trunchbull.stats.judge_stats import judge_tallies
from trunchbull.stats.run_stats import DIGITS, grouped, tally_cases

METHOD = {
    "unit": "case (a case's mean over its graded repeats is one observation)",
    "interval": "continuity-corrected Wilson score interval on the clustered effective sample size "
    "(Korn-Graubard df adjustment)",
    "confidence": CONFIDENCE,
    "z": round(Z95, DIGITS),
}


def summarize(
    manifest: Manifest,
    results: Sequence[dict],
    records: Sequence[dict | None] | None = None,
    repeats: int = 1,
    judgments: Sequence[dict] = (),
) -> dict:
    """`results`: graded rows (caseId, evalId, outcome, score); `records`:
    per row, the record it was graded from (its usage, latencyMs and cost
    are read), None where there is none; `judgments`: the judge answers the
    rows of model-graded kinds were graded from (their figures are each
    group's `judge`, apart from the model's; none: no `judge` key)."""
    groups, everything = grouped(tally_cases(results, records), manifest.eval_ids)
    evals = {eval_id: group.statistics(repeats) for eval_id, group in groups.items()}
    # one eval: the same samples, the same cases
    overall = next(iter(evals.values())) if len(evals) == 1 else everything.statistics(repeats)
    if judgments:
        judged, all_judged = judge_tallies(judgments)
        for eval_id, tally in judged.items():
            if eval_id in evals:
                evals[eval_id]["judge"] = tally.statistics()
        overall["judge"] = all_judged.statistics()
    return {
        "release": {
            "title": manifest.title,
            "version": manifest.version,
            "digest": manifest.digest,
        },
        "overall": overall,
        "evals": evals,
        "method": METHOD,
    }
