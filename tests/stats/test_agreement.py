"""A panel's agreement (stats/agreement.py): Fleiss' (1971) worked example,
and random panels against an oracle that counts agreeing pairs of judges one
by one from their labels (bench/judge_agreement.py also checks statsmodels'
fleiss_kappa)."""

from __future__ import annotations

import itertools
import random

import pytest

from trunchbull.stats.agreement import agreement

# The worked example of Fleiss' kappa (14 raters, 10 subjects, 5 categories): P̄ 0.378, P̄e 0.213, κ 0.210.
FLEISS = [
    [0, 0, 0, 0, 14],
    [0, 2, 6, 4, 2],
    [0, 0, 3, 5, 6],
    [0, 3, 9, 2, 0],
    [2, 2, 8, 1, 1],
    [7, 7, 0, 0, 0],
    [3, 2, 6, 3, 0],
    [2, 5, 3, 2, 2],
    [6, 5, 2, 1, 0],
    [0, 2, 2, 3, 7],
]


def pairwise(labels: list[list[str]]) -> tuple[float, float | None]:
    """(observed, kappa) from each subject's labels: agreeing ordered pairs of distinct raters counted one
    by one; chance from the labels' overall shares."""
    observed = sum(
        sum(1 for a, b in itertools.permutations(row, 2) if a == b) / (len(row) * (len(row) - 1)) for row in labels
    ) / len(labels)
    flat = [label for row in labels for label in row]
    chance = sum((flat.count(label) / len(flat)) ** 2 for label in set(flat))
    return observed, None if chance == 1 else (observed - chance) / (1 - chance)


def test_fleiss_worked_example():
    found = agreement(FLEISS)
    assert (found.samples, found.raters) == (10, 14)
    assert round(found.percent, 3) == 0.378 and round(found.kappa, 3) == 0.210


@pytest.mark.parametrize("seed", range(40))
def test_random_panels_match_pairwise_counting(seed):
    rng = random.Random(seed)
    raters, grades = rng.randint(2, 7), rng.sample("CPI", rng.randint(1, 3))
    bias = [rng.random() for _ in grades]
    labels = [rng.choices(grades, weights=bias, k=raters) for _ in range(rng.randint(1, 60))]
    found = agreement([[row.count(grade) for grade in "CPI"] for row in labels])
    observed, kappa = pairwise(labels)
    assert found.percent == pytest.approx(observed, abs=1e-12)
    assert (found.kappa is None) == (kappa is None)
    if kappa is not None:
        assert found.kappa == pytest.approx(kappa, abs=1e-12)


def test_no_sample_no_figure_and_unequal_panels_refused():
    assert agreement([]) == (0, 0, None, None)
    with pytest.raises(ValueError):
        agreement([[2, 1, 0], [1, 1, 0]])
    assert agreement([[3, 0, 0], [3, 0, 0]]).kappa is None  # every grade the same: chance agreement is 1
