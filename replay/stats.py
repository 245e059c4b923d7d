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


def sign_test(wins: int, losses: int) -> float:
    """Two-sided exact p-value under H0: a win and a loss are equally likely (1.0 with no discordant pair)."""
    n = wins + losses
    if n == 0:
        return 1.0
    term = tail = 1  # C(n, 0); each next binomial coefficient from the last (exact integers, one product each)
    for i in range(min(wins, losses)):
        term = term * (n - i) // (i + 1)
        tail += term
    return min(1.0, 2 * tail / (1 << n))  # 2**n, as an int (int / int stays exact where a float 2**n would overflow)
