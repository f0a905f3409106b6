"""pass@k and pass^k over cases with repeats (SPEC §8.5)."""

from __future__ import annotations

from math import comb

SHOWN_K = (1, 2, 5, 10)  # with K repeats the terminal shows these below K, and K


def pass_at_k(counts: list[tuple[int, int]], repeats: int) -> dict[str, float | None]:
    """k → the mean over cases with at least k graded samples of
    1 − C(n−c, k)/C(n, k) (Chen et al. 2021), `counts` being (n graded, c passed) per case."""
    out: dict[str, float | None] = {}
    for k in range(1, repeats + 1):
        values = [1.0 - comb(n - c, k) / comb(n, k) for n, c in counts if n >= k]
        out[str(k)] = sum(values) / len(values) if values else None
    return out


def pass_hat_k(counts: list[tuple[int, int]], repeats: int) -> float | None:
    """The share of cases whose `repeats` graded samples all pass, over the
    cases graded that many times (C(c, K)/C(n, K) per case)."""
    values = [comb(c, repeats) / comb(n, repeats) for n, c in counts if n >= repeats]
    return sum(values) / len(values) if values else None


def shown_ks(repeats: int) -> list[int]:
    """The k a summary prints for K repeats: 1, 2, 5, 10 below K, and K (JSON has every k)."""
    return [k for k in SHOWN_K if k < repeats] + [repeats]
