"""Multiple comparisons: Holm's step-down correction (Holm 1979), which
controls the family-wise error rate like Bonferroni and rejects at least as
often."""

from __future__ import annotations


def holm(p_values: list[float]) -> list[float]:
    """Holm-adjusted p-values, in the order given: the i-th smallest of m is
    multiplied by m − i (i from 0), made non-decreasing, capped at 1."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted
