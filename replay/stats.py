"""The statistics `compare` reports, so a reader can tell a real difference from noise.

- `wilson`: the 95% Wilson score interval of a pass rate (sound at 0/n and n/n, unlike the
  normal approximation).
- `pass_at_k`: the unbiased estimator 1 − C(n−c, k) / C(n, k) of the chance that at least
  one of k attempts passes, from n attempts with c passes (Chen et al., 2021).
- `sign_test`: the exact two-sided binomial p-value of w wins against l losses (ties
  dropped). With one attempt per task this is the exact McNemar test on the discordant
  pairs; with several it is the sign test on the per-task pass-rate differences.
"""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(passes: int, n: int, z: float = Z95) -> tuple[float, float] | None:
    """(low, high) of the interval; None when nothing was measured."""
    if n <= 0:
        return None
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    low = 0.0 if passes == 0 else max(0.0, centre - half)
    high = 1.0 if passes == n else min(1.0, centre + half)  # exact at the ends, not 0.9999999
    return low, high


def pass_at_k(n: int, c: int, k: int) -> float | None:
    """None when fewer than k attempts were made (the estimator needs n ≥ k)."""
    if k < 1 or n < k:
        return None
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


_LN2 = math.log(2)
EXACT_UP_TO = 1000  # discordant pairs up to which the tail is summed in exact integers


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact p-value under H0: a win and a loss are equally likely (1.0 with no discordant pair).

    Up to `EXACT_UP_TO` discordant pairs the tail is an exact integer sum. Beyond, the summed
    coefficients are thousands of digits long (the planner and "tasks that would be needed" ask
    about up to 10,000 pairs, dozens of times per comparison): the tail's largest term is then
    C(n, low) / 2**n from log-gamma and the smaller ones from it by their ratios, each term
    still summed, in floating point (relative error below 1e-9 up to a million pairs; tested
    against the exact sum)."""
    n = wins + losses
    if n == 0:
        return 1.0
    low = min(wins, losses)
    if n > EXACT_UP_TO:
        log_term = math.lgamma(n + 1) - math.lgamma(low + 1) - math.lgamma(n - low + 1) - n * _LN2
        return min(1.0, 2 * _tail_ratio_sum(n, low) * math.exp(log_term))
    term = tail = 1  # C(n, 0); each next binomial coefficient from the last (exact integers, one product each)
    for i in range(low):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))  # 2**n, as an int (int / int stays exact where a float 2**n would overflow)


def _tail_ratio_sum(n: int, low: int) -> float:
    """Σ_{i ≤ low} C(n, i) / C(n, low): the terms below the largest, each from the one above by
    C(n, i−1) / C(n, i) = i / (n − i + 1), until they no longer change the sum."""
    total = ratio = 1.0
    for i in range(low, 0, -1):
        ratio *= i / (n - i + 1)
        total += ratio
        if ratio < total * 1e-17:
            break
    return total
