"""Paired comparison of two runs (SPEC §9), from their graded results.

Cases are paired by ID. Per run, a case's score is the mean of its non-error
samples' scores (over its repeats) and its pass rate the share of those
samples that pass. A case enters the comparison only when both runs have a
non-error sample of it; the others are counted (`excluded`), and with a
release change the cases of only one run are listed (`added`, `removed`).

Per eval and overall (every shared case one observation): the difference of
mean scores B − A, which is the mean of the per-case differences d, with its
95% interval by Newcombe's square-and-add over each run's clustered Wilson
interval (stats/paired.py: it stays inside [−1, 1]), the paired standard
error, and the minimum difference detectable at 80% power with that
standard error (`mdd80`).

A case *regressed* when its pass rate is lower in B than in A, *fixed* when it
is higher, *unchanged* when equal: with one sample per case, exactly pass→fail,
fail→pass and the rest. Regressions are listed largest drop first.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from trunchbull.stats.intervals import Moments
from trunchbull.stats.paired import paired_difference as paired_statistics
from trunchbull.stats.quantiles import CONFIDENCE, POWER

DIGITS = 6


class CaseMean(NamedTuple):
    eval_id: str
    graded: int  # non-error samples
    samples: int
    pass_rate: float | None
    score: float | None  # mean of the non-null scores of the graded samples
    scored: int  # graded samples with a score
    score_sum: float
    score_squares: float


def case_means(results: list[dict]) -> dict[str, CaseMean]:
    """Per case ID, in first-seen (release) order."""
    acc: dict[str, list] = {}
    get = acc.get
    for row in results:
        case_id = row["caseId"]
        entry = get(case_id)
        if entry is None:
            entry = acc[case_id] = [row["evalId"], 0, 0, 0, 0.0, 0, 0.0]
        entry[2] += 1
        outcome = row["outcome"]
        if outcome == "error":
            continue
        entry[1] += 1
        if outcome == "pass":
            entry[3] += 1
        score = row.get("score")
        if score is not None:
            entry[4] += score
            entry[5] += 1
            entry[6] += score * score
    new = tuple.__new__
    return {
        case_id: new(
            CaseMean,
            (
                eval_id,
                graded,
                samples,
                passed / graded if graded else None,
                total / scored if scored else None,
                scored,
                total,
                squares,
            ),
        )
        for case_id, (eval_id, graded, samples, passed, total, scored, squares) in acc.items()
    }


def _rounded(value: float | None) -> float | None:
    return None if value is None else round(value, DIGITS)


def paired_difference(a: list[CaseMean], b: list[CaseMean]) -> dict:
    """B − A over paired cases (the same case at the same position): the
    means, the difference with its interval, standard error and mdd80."""
    n = len(a)
    if n == 0:
        return {
            "n": 0,
            "meanA": None,
            "meanB": None,
            "difference": None,
            "standardError": None,
            "ci": None,
            "mdd80": None,
            "pValue": None,
        }
    moments_a, moments_b = Moments(), Moments()
    for case_a, case_b in zip(a, b):
        moments_a.add_case(case_a.scored, case_a.score_sum, case_a.score_squares)
        moments_b.add_case(case_b.scored, case_b.score_sum, case_b.score_squares)
    result = paired_statistics([c.score for c in a], [c.score for c in b], moments_a, moments_b)  # type: ignore[misc]
    assert result is not None
    return {
        "n": n,
        "meanA": _rounded(result.mean_a),
        "meanB": _rounded(result.mean_b),
        "difference": _rounded(result.difference),
        "standardError": _rounded(result.standard_error),
        "ci": [_rounded(result.low), _rounded(result.high)],
        "mdd80": _rounded(result.mdd80),
        "pValue": _rounded(result.p_value),
    }


@dataclass
class _Group:
    a: list[CaseMean] = field(default_factory=list)  # the scored shared cases, paired by position
    b: list[CaseMean] = field(default_factory=list)
    regressed: int = 0
    fixed: int = 0
    unchanged: int = 0
    excluded: int = 0
    added: int = 0
    removed: int = 0

    def to_json(self) -> dict:
        return {
            **paired_difference(self.a, self.b),
            "regressed": self.regressed,
            "fixed": self.fixed,
            "unchanged": self.unchanged,
            "excluded": self.excluded,
            "added": self.added,
            "removed": self.removed,
        }


def compare_results(results_a: list[dict], results_b: list[dict], eval_order: list[str] | None = None) -> dict:
    """The comparison of run B against run A: `overall`, `evals` (eval ID →
    the same shape), and the case lists: `regressedCases` and `fixedCases`
    (IDs), `changedCases` (regressions then fixes, each with its pass rates
    and scores in both runs), `excludedCases`, `addedCases`, `removedCases`."""
    means_a, means_b = case_means(results_a), case_means(results_b)
    order = list(
        dict.fromkeys(
            [*(eval_order or []), *(m.eval_id for m in means_b.values()), *(m.eval_id for m in means_a.values())]
        )
    )
    groups = {eval_id: _Group() for eval_id in order}
    overall = _Group()
    changes: list[tuple[str, dict]] = []
    excluded: list[str] = []
    added: list[str] = []
    removed: list[str] = []
    case_ids = list(dict.fromkeys([*means_a, *means_b]))
    for case_id in case_ids:
        a, b = means_a.get(case_id), means_b.get(case_id)
        present = b or a
        assert present is not None  # the ID came from one of the two runs
        group = groups[present.eval_id]
        if a is None or b is None:
            (added if a is None else removed).append(case_id)
            for g in (group, overall):
                if a is None:
                    g.added += 1
                else:
                    g.removed += 1
            continue
        if not a.graded or not b.graded:
            excluded.append(case_id)
            group.excluded += 1
            overall.excluded += 1
            continue
        if a.score is not None and b.score is not None:
            for g in (group, overall):
                g.a.append(a)
                g.b.append(b)
        rate_a, rate_b = a.pass_rate or 0.0, b.pass_rate or 0.0  # both graded, so both rates are set
        if rate_b < rate_a:
            kind = "regressed"
        elif rate_b > rate_a:
            kind = "fixed"
        else:
            kind = "unchanged"
        for g in (group, overall):
            setattr(g, kind, getattr(g, kind) + 1)
        if kind != "unchanged":
            changes.append(
                (
                    kind,
                    {
                        "caseId": case_id,
                        "evalId": b.eval_id,
                        "change": kind,
                        "a": {"passRate": _rounded(a.pass_rate), "score": _rounded(a.score)},
                        "b": {"passRate": _rounded(b.pass_rate), "score": _rounded(b.score)},
                    },
                )
            )
    position = {case_id: i for i, case_id in enumerate(case_ids)}

    def by_change(item: dict) -> tuple:
        return (-abs(item["b"]["passRate"] - item["a"]["passRate"]), position[item["caseId"]])

    regressed = sorted((c for kind, c in changes if kind == "regressed"), key=by_change)
    fixed = sorted((c for kind, c in changes if kind == "fixed"), key=by_change)
    return {
        "method": {
            "pairing": "case ID",
            "difference": "mean over shared cases of (B - A) per-case mean score",
            "interval": "Newcombe square-and-add over each run's clustered Wilson interval, correlation with "
            "half a pseudo-case in each corner",
            "confidence": CONFIDENCE,
            "mdd": f"minimum true difference detected with {POWER:.0%} power: (z0.975 + z0.80) x standard error",
        },
        "overall": overall.to_json(),
        "evals": {
            eval_id: g.to_json()
            for eval_id, g in groups.items()
            if g.a or g.excluded or g.added or g.removed or g.regressed or g.fixed or g.unchanged
        },
        "regressedCases": [c["caseId"] for c in regressed],
        "fixedCases": [c["caseId"] for c in fixed],
        "changedCases": [*regressed, *fixed],
        "excludedCases": excluded,
        "addedCases": added,
        "removedCases": removed,
    }


def significantly_worse(comparison: dict) -> bool:
    """The overall difference is significantly below zero: the upper end of
    its 95% interval is below 0."""
    ci = comparison["overall"]["ci"]
    return ci is not None and ci[1] < 0
