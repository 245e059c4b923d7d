"""The statistics behind "which setup is better, and how sure": error bars that respect how
evaluations are built (Miller 2024, "Adding Error Bars to Evals").

- `clustered_se`: the standard error of a pass rate when each task was attempted several
  times. Attempts of one task are not independent (an easy task is easy every time), so the
  task, not the cell, is the unit: the cluster-robust (sandwich) error of the ratio
  Σ passes / Σ attempts, clustered by task.
- `paired_interval`: the 95% interval of the mean per-task difference of two setups: with
  one attempt, on zero's side the exact conditional bound the McNemar test inverts (so the
  interval excludes 0 exactly when the test calls a difference), on the far side the wider of
  it and Newcombe's; with several, Student's t over the
  per-task differences (Newcombe's hybrid score interval over attempt-paired cells when
  every task differed by the same amount, where t would collapse to a point).
- `holm`: Holm's step-down adjustment of many pairs' p-values, so testing every pair of
  many setups does not find differences by chance.
- `ratio_interval`: cost per solved task (Σ cost / Σ solved) with a task-clustered
  delta-method interval.

Pure functions over numbers: no store, no rendering.
"""

from __future__ import annotations

import math
from typing import Callable, Sequence

from benchtape.replay.stats import Z95, wilson

_T_SMALL = {1: 12.706204736, 2: 4.302652730, 3: 3.182446305, 4: 2.776445105, 5: 2.570581836, 6: 2.446911851, 7: 2.364624252, 8: 2.306004135, 9: 2.262157163, 10: 2.228138852}


def t_quantile(df: int) -> float:
    """The two-sided 95% critical value of Student's t with `df` degrees of freedom
    (a table to 10; above, the Cornish–Fisher expansion about the normal, error < 1e-4)."""
    if df <= 0:
        return math.inf
    if df in _T_SMALL:
        return _T_SMALL[df]
    z, v = Z95, float(df)
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def clustered_se(per_task: Sequence[tuple[int, int]]) -> float | None:
    """Standard error of Σc / Σn over tasks given as (attempts n, passes c); None with fewer
    than two tasks (one cluster says nothing about the spread between tasks)."""
    tasks = [(n, c) for n, c in per_task if n > 0]
    t = len(tasks)
    if t < 2:
        return None
    total = sum(n for n, _ in tasks)
    p = sum(c for _, c in tasks) / total
    resid = sum((c - p * n) ** 2 for n, c in tasks)
    return math.sqrt(resid * t / (t - 1)) / total


def clustered_interval(per_task: Sequence[tuple[int, int]]) -> tuple[float, float] | None:
    """The 95% interval of the pass rate with attempts clustered by task: Wilson's interval at
    the effective sample size (Kish: cells ÷ the design effect, the clustered variance over the
    independent one), between the number of tasks (attempts of a task told nothing new) and
    the number of cells (they were independent). At 0% or 100% the spread is unknown: the
    tasks count, the conservative end, so the interval never collapses to a point."""
    tasks = [(n, c) for n, c in per_task if n > 0]
    if not tasks:
        return None
    total = sum(n for n, _ in tasks)
    passes = sum(c for _, c in tasks)
    p = passes / total
    se = clustered_se(tasks)
    naive = p * (1 - p) / total
    if se is None or naive == 0:
        n_eff = float(len(tasks))
    elif se == 0:  # every task passed the same share of its attempts: no spread between tasks
        n_eff = float(total)
    else:
        n_eff = min(float(total), max(float(len(tasks)), total / (se * se / naive)))
    return _wilson_real(p, n_eff)


def _wilson_real(p: float, n: float) -> tuple[float, float]:
    """Wilson's 95% interval for a rate p over a (possibly fractional) sample size n."""
    z = Z95
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (0.0 if p == 0 else max(0.0, centre - half)), (1.0 if p == 1 else min(1.0, centre + half))


def newcombe_paired(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float] | None:
    """Newcombe's (1998, method 10) hybrid score 95% interval of p_a − p_b for paired binary
    outcomes: the Wilson intervals of the two rates, combined with their correlation."""
    n = both + only_a + only_b + neither
    if n == 0:
        return None
    pa, pb = (both + only_a) / n, (both + only_b) / n
    la, ua = wilson(both + only_a, n) or (0.0, 1.0)
    lb, ub = wilson(both + only_b, n) or (0.0, 1.0)
    denom = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    # Newcombe's corrected φ: AD − BC less N/2 where positive, so that tasks all concordant
    # (3 both passed, 3 neither: φ = 1) leave an interval, never the point 0 to 0
    ad_bc = both * neither - only_a * only_b
    phi = (max(ad_bc - n / 2, 0.0) if ad_bc > 0 else ad_bc) / math.sqrt(denom) if denom > 0 else 0.0
    d = pa - pb
    low = d - math.sqrt(max(0.0, (pa - la) ** 2 - 2 * phi * (pa - la) * (ub - pb) + (ub - pb) ** 2))
    high = d + math.sqrt(max(0.0, (ua - pa) ** 2 - 2 * phi * (ua - pa) * (pb - lb) + (pb - lb) ** 2))
    return max(-1.0, low), min(1.0, high)


def _binom_cdf(k: int, n: int, p: float) -> float:
    """P(X ≤ k) for X ~ Binomial(n, p), summed in log space."""
    if p <= 0:
        return 1.0
    if p >= 1:
        return 1.0 if k >= n else 0.0
    lp, lq = math.log(p), math.log1p(-p)
    return min(1.0, sum(math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * lp + (n - i) * lq) for i in range(k + 1)))


def clopper_pearson(k: int, n: int, alpha: float = 0.05) -> tuple[float, float]:
    """The exact (Clopper–Pearson) interval of a binomial proportion, by bisection: the one the
    exact two-sided sign test inverts (it excludes ½ exactly when that test's p < α)."""
    def bisect(too_low: Callable[[float], bool]) -> float:
        low, high = 0.0, 1.0
        for _ in range(60):
            mid = (low + high) / 2
            low, high = (mid, high) if too_low(mid) else (low, mid)
        return (low + high) / 2

    lower = 0.0 if k == 0 else bisect(lambda p: 1.0 - _binom_cdf(k - 1, n, p) < alpha / 2)  # P(X ≥ k) rises with p
    upper = 1.0 if k == n else bisect(lambda p: _binom_cdf(k, n, p) > alpha / 2)  # P(X ≤ k) falls with p
    return lower, upper


def mcnemar_interval(both: int, only_a: int, only_b: int, neither: int) -> tuple[float, float] | None:
    """95% interval of p_a − p_b with one attempt per task, consistent with the exact McNemar
    (sign) test `compare` decides by. With no discordant task, Newcombe's (the test says nothing).

    The bound on zero's side is the exact conditional one the test inverts (the discordant share
    taken as observed, A's share of the discordant tasks given its Clopper–Pearson interval), so
    the interval excludes 0 exactly when the test calls a difference. That conditional interval
    ignores that the discordant share is itself an estimate, which the far bound cannot: with
    every discordant task won by one side it equals the estimate (3 tasks, A alone solving 2:
    +67%, interval −46% to +67%). The far bound is the wider of it and Newcombe's score
    interval, which carries both uncertainties (there −46% to +94%)."""
    n = both + only_a + only_b + neither
    d = only_a + only_b
    if n == 0:
        return None
    score = newcombe_paired(both, only_a, only_b, neither)
    if d == 0 or d > 2000:  # beyond, the exact sums are slow and Newcombe's agrees
        return score
    low, high = clopper_pearson(only_a, d)
    low, high = d / n * (2 * low - 1), d / n * (2 * high - 1)
    if score is not None and only_a > only_b:
        high = max(high, score[1])
    elif score is not None and only_b > only_a:
        low = min(low, score[0])
    return low, high


def paired_interval(diffs: Sequence[float], table: tuple[int, int, int, int], attempts: int) -> tuple[float, float] | None:
    """95% interval of the mean per-task difference. `table` is the attempt-paired 2×2 (both
    passed, only A, only B, neither): with one attempt the exact interval the McNemar test
    inverts; with several, t over the per-task differences (Newcombe's where t would collapse:
    every task differing alike, as 12/12 against 0/12 does, its counts taken per task: a task's
    attempts are not independent draws, and counted as cells they made the interval of 6 tasks
    as narrow as 12 tasks would, ±24% where the tasks support ±39%)."""
    t = len(diffs)
    if t == 0:
        return None
    if attempts <= 1:
        return mcnemar_interval(*table)
    if t < 2:
        return newcombe_paired(*table)
    mean = sum(diffs) / t
    var = sum((d - mean) ** 2 for d in diffs) / (t - 1)
    if var == 0:
        both, only_a, only_b, neither = (c / attempts for c in table)
        return newcombe_paired(both, only_a, only_b, neither)  # type: ignore[arg-type]  # counts per task: fractional where attempts split
    half = t_quantile(t - 1) * math.sqrt(var / t)
    return max(-1.0, mean - half), min(1.0, mean + half)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm's step-down adjusted p-values, in the order given (each ≥ its raw value, ≤ 1, and
    monotone in the raw order): reject where adjusted < α keeps the family-wise error ≤ α."""
    m = len(p_values)
    order = sorted(range(m), key=lambda i: p_values[i])
    adjusted = [1.0] * m
    running = 0.0
    for rank, i in enumerate(order):
        running = max(running, min(1.0, (m - rank) * p_values[i]))
        adjusted[i] = running
    return adjusted


def ratio_interval(per_task: Sequence[tuple[float, float]]) -> tuple[float, tuple[float, float] | None] | None:
    """Σ numerator / Σ denominator over tasks given as (numerator, denominator) — cost per
    solved task is (cost, tasks solved) — with a task-clustered delta-method 95% interval
    (None with fewer than two tasks); None when the denominator sums to 0 (nothing solved)."""
    den = sum(d for _, d in per_task)
    if den <= 0:
        return None
    num = sum(x for x, _ in per_task)
    r = num / den
    t = len(per_task)
    if t < 2:
        return r, None
    resid = sum((x - r * d) ** 2 for x, d in per_task)
    se = math.sqrt(resid * t / (t - 1)) / den
    half = t_quantile(t - 1) * se
    return r, (max(0.0, r - half), r + half)
