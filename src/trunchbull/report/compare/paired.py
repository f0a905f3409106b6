"""Paired comparison of two runs (SPEC §9), from their graded results.

Cases are paired by ID. Per run, a case's score is the mean of its non-error
samples' scores (over its repeats) and its pass rate the share of those
samples that pass. A case enters the comparison only when both runs have a
non-error sample of it; the others are counted (`excluded`), and with a
release change the cases of only one run are listed (`added`, `removed`).

The cases' figures are stats/run_stats.py's. Per eval and overall (every
shared case one observation): the difference of mean scores B − A, which is
the mean of the per-case differences d, with its 95% interval
(stats/paired.py: the square-and-add over what B gained and what it lost;
it stays inside [−1, 1]), the paired standard error, and the minimum
difference detectable at 80% power with that standard error (`mdd80`).

With a breakdown (`--by FIELD`), the same figures per group of cases
(`groups`), and their macro average (`macro`: the mean of the groups'
means and differences, each group alike, a point estimate; the overall row
is the micro average, every case alike). Each group's interval is the
paired interval over its cases; the groups' intervals are not corrected
for being many (the verdict is the overall one).

A case *regressed* when its pass rate is lower in B than in A, *fixed* when it
is higher, *unchanged* when equal: with one sample per case, exactly pass→fail,
fail→pass and the rest. Regressions are listed largest drop first.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from trunchbull.stats.paired import PairedDifference
from trunchbull.stats.paired import paired_difference as paired_statistics
from trunchbull.stats.quantiles import CONFIDENCE, POWER
from trunchbull.stats.run_stats import CaseTally, GroupOf, macro_mean, rounded


def paired_result(a: list[CaseTally], b: list[CaseTally]) -> PairedDifference | None:
    """B − A over paired cases (the same case at the same position), both scored."""
    return paired_statistics(
        [case.score for case in a],  # type: ignore[misc]  # both scored
        [case.score for case in b],  # type: ignore[misc]
        [min(x.scored, y.scored) for x, y in zip(a, b)],
    )


def paired_json(result: PairedDifference | None) -> dict:
    """B − A over paired cases: the means, the difference with its
    interval, standard error and mdd80."""
    if result is None:
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
    return {
        "n": result.n,
        "meanA": rounded(result.mean_a),
        "meanB": rounded(result.mean_b),
        "difference": rounded(result.difference),
        "standardError": rounded(result.standard_error),
        "ci": [rounded(result.low), rounded(result.high)],
        "mdd80": rounded(result.mdd80),
        "pValue": rounded(result.p_value),
    }


@dataclass
class _Group:
    a: list[CaseTally] = field(default_factory=list)  # the scored shared cases, paired by position
    b: list[CaseTally] = field(default_factory=list)
    regressed: int = 0
    fixed: int = 0
    unchanged: int = 0
    excluded: int = 0
    added: int = 0
    removed: int = 0
    _result: tuple[PairedDifference | None] | None = field(default=None, repr=False)

    def result(self) -> PairedDifference | None:
        if self._result is None:
            self._result = (paired_result(self.a, self.b),)
        return self._result[0]

    def counted(self) -> bool:
        return bool(
            self.a or self.excluded or self.added or self.removed or self.regressed or self.fixed or self.unchanged
        )

    def to_json(self) -> dict:
        return {
            **paired_json(self.result()),
            "regressed": self.regressed,
            "fixed": self.fixed,
            "unchanged": self.unchanged,
            "excluded": self.excluded,
            "added": self.added,
            "removed": self.removed,
        }


METHOD = {
    "pairing": "case ID",
    "difference": "mean over shared cases of (B - A) per-case mean score",
    "interval": "MOVER (square-and-add) over the mean improvement and the mean regression, each with its "
    "continuity-corrected Wilson interval on the effective size; their correlation with half a pseudo-case "
    "at (0,0), (1,0), (0,1)",
    "confidence": CONFIDENCE,
    "mdd": f"minimum true difference detected with {POWER:.0%} power: (z0.975 + z0.80) x standard error",
}


@dataclass
class _Cases:
    """The case lists of a comparison."""

    changes: list[tuple[str, dict]] = field(default_factory=list)  # (regressed | fixed, the case's entry)
    excluded: list[str] = field(default_factory=list)
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)


def _change(a: CaseTally, b: CaseTally) -> str:
    """regressed, fixed or unchanged, by the pass rates (both cases are graded)."""
    rate_a, rate_b = a.pass_rate or 0.0, b.pass_rate or 0.0
    return "regressed" if rate_b < rate_a else "fixed" if rate_b > rate_a else "unchanged"


def _place(case_id: str, a: CaseTally | None, b: CaseTally | None, groups: list[_Group], lists: _Cases) -> None:
    """Count one case in `groups` (its eval's and the overall) and list it where it belongs."""
    if a is None or b is None:
        (lists.added if a is None else lists.removed).append(case_id)
        for g in groups:
            g.added += a is None
            g.removed += b is None
        return
    if not a.graded or not b.graded:
        lists.excluded.append(case_id)
        for g in groups:
            g.excluded += 1
        return
    kind = _change(a, b)
    for g in groups:
        if a.score is not None and b.score is not None:
            g.a.append(a)
            g.b.append(b)
        setattr(g, kind, getattr(g, kind) + 1)
    if kind != "unchanged":
        entry = {
            "caseId": case_id,
            "evalId": b.eval_id,
            "change": kind,
            "a": {"passRate": rounded(a.pass_rate), "score": rounded(a.score)},
            "b": {"passRate": rounded(b.pass_rate), "score": rounded(b.score)},
        }
        lists.changes.append((kind, entry))


def _macro(groups: dict[str, _Group]) -> dict:
    """The macro average over the groups with shared scored cases: each group's means and difference alike."""
    results = [r for r in (g.result() for g in groups.values()) if r is not None]
    return {
        "groups": len(results),
        "meanA": rounded(macro_mean(r.mean_a for r in results)),
        "meanB": rounded(macro_mean(r.mean_b for r in results)),
        "difference": rounded(macro_mean(r.difference for r in results)),
    }


def compare_results(
    cases_a: dict[str, CaseTally],
    cases_b: dict[str, CaseTally],
    eval_order: list[str] | None = None,
    breakdown: bool = False,
    group_of: GroupOf = None,
) -> dict:
    """The comparison of run B against run A (each: case ID → its tally,
    stats/run_stats.py): `overall`, `evals` (eval ID → the same shape), and
    the case lists: `regressedCases` and `fixedCases` (IDs), `changedCases`
    (regressions then fixes, each with its pass rates and scores in both
    runs), `excludedCases`, `addedCases`, `removedCases`. With
    `breakdown`, also `groups` (label → the same shape: by `group_of`, or
    by eval when it is None) and `macro`."""
    order = [*(eval_order or []), *(c.eval_id for c in cases_b.values()), *(c.eval_id for c in cases_a.values())]
    groups = {eval_id: _Group() for eval_id in dict.fromkeys(order)}
    by_group: dict[str, _Group] = {}
    overall = _Group()
    lists = _Cases()
    case_ids = list(dict.fromkeys([*cases_a, *cases_b]))
    for case_id in case_ids:
        a, b = cases_a.get(case_id), cases_b.get(case_id)
        present = b or a
        assert present is not None  # the ID came from one of the two runs
        places = [groups[present.eval_id], overall]
        if breakdown:
            label = present.eval_id if group_of is None else group_of(present.eval_id, case_id)
            places.append(by_group.setdefault(label, _Group()))
        _place(case_id, a, b, places, lists)
    position = {case_id: i for i, case_id in enumerate(case_ids)}

    def by_change(item: dict) -> tuple:
        return (-abs(item["b"]["passRate"] - item["a"]["passRate"]), position[item["caseId"]])

    regressed = sorted((c for kind, c in lists.changes if kind == "regressed"), key=by_change)
    fixed = sorted((c for kind, c in lists.changes if kind == "fixed"), key=by_change)
    per_group = {}
    if breakdown:
        per_group = {"groups": {label: g.to_json() for label, g in by_group.items()}, "macro": _macro(by_group)}
    return {
        "method": METHOD,
        "overall": overall.to_json(),
        "evals": {eval_id: g.to_json() for eval_id, g in groups.items() if g.counted()},
        **per_group,
        "regressedCases": [c["caseId"] for c in regressed],
        "fixedCases": [c["caseId"] for c in fixed],
        "changedCases": [*regressed, *fixed],
        "excludedCases": lists.excluded,
        "addedCases": lists.added,
        "removedCases": lists.removed,
    }


def significantly_worse(comparison: dict) -> bool:
    """The overall difference is significantly below zero: the upper end of
    its 95% interval is below 0."""
    ci = comparison["overall"]["ci"]
    return ci is not None and ci[1] < 0
