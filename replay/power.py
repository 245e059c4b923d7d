"""Plan before spending: how small a difference an evaluation of this size can detect, and how
many tasks or attempts a named difference needs.

The test `compare` uses is paired over tasks: each task is won by one setup or tied (its
per-task pass rates), and the sign test (in rounds, the always-valid e-value test) is applied
to the wins and losses. Its power is computed for that test itself (`replay.sign_power`),
under a model of tasks with three inputs:

- p, a setup's pass rate;
- ρ, how alike the attempts of one task are (the intra-task correlation: at 1 more attempts
  tell nothing new, at 0 each attempt is a new task);
- r, how alike two setups' tasks are (both find the same tasks hard).

Where cells are stored, p, ρ and r are measured (p shrunk by one pass and one failure so that
0/n does not claim no spread; ρ by one-way ANOVA; r by Pearson over common tasks). Where
they are not, the stated conservative defaults: p = 0.5 (the largest spread), ρ = 0.5 and
r = 0 (setups not alike, which needs the most tasks).

The hardest pair (the one whose per-task difference spreads most, by the variance below) is
planned for; the minimum detectable difference is the smallest difference around that pair's
mean rate the test calls 80% of the time at α/m for m pairs (Bonferroni: Holm, which `compare`
uses, is never less powerful, so the figure is a safe bound):

    σ_d² = v_a + v_b − 2 r √(v_a v_b),   v = p (1 − p) (ρ + (1 − ρ) / k)

An earlier planner took (z(1 − α/2m) + z(0.8)) σ_d / √T for the minimum detectable difference:
a t-test's normal approximation, which the sign test (ties dropped, margins not weighed) does
not reach: it promised 80% where the test called 21–62%.
"""

from __future__ import annotations

import itertools
import math
import operator
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Sequence

from benchtape.replay.sign_power import power

ALPHA = 0.05
POWER = 0.8
DEFAULT_RATE = 0.5
DEFAULT_ICC = 0.5
DEFAULT_CORR = 0.0
MAX_ATTEMPTS = 50  # beyond this, "more attempts" is not an answer: more tasks are
MAX_TASKS = 100_000  # beyond this, "more tasks" is not an answer either
MIN_CORR_TASKS = 5  # fewer common tasks than this say nothing about how alike two setups are





def task_variance(p: float, icc: float, attempts: int) -> float:
    """Variance of one setup's per-task pass rate over k attempts."""
    return p * (1 - p) * (icc + (1 - icc) / max(1, attempts))


def difference_variance(pa: float, pb: float, icc: float, corr: float, attempts: int) -> float:
    va, vb = task_variance(pa, icc, attempts), task_variance(pb, icc, attempts)
    return max(0.0, va + vb - 2 * corr * math.sqrt(va * vb))


def shifted(centre: float, difference: float) -> tuple[float, float]:
    """Two pass rates `difference` apart around `centre`, kept within [0, 1]."""
    low = min(1.0 - difference, max(0.0, centre - difference / 2))
    return low, low + difference


def power_at(difference: float, centre: float, icc: float, corr: float, attempts: int, tasks: int, pairs: int, sequential: bool) -> float:
    """The chance compare calls two setups `difference` apart around `centre` different."""
    low, high = shifted(centre, difference)
    return power(low, high, icc, corr, attempts, tasks, pairs, sequential, ALPHA)


def mdd(centre: float, icc: float, corr: float, attempts: int, tasks: int, pairs: int = 1, sequential: bool = False) -> float | None:
    """The minimum detectable difference (a share, 0.1 = 10 points) at 80% power; None when
    not even a difference of 100 points is called that often (or there are no tasks)."""
    if tasks <= 0 or power_at(1.0, centre, icc, corr, attempts, tasks, pairs, sequential) < POWER:
        return None
    low, high = 0.0, 1.0
    while high - low > 0.0005:
        mid = (low + high) / 2
        if power_at(mid, centre, icc, corr, attempts, tasks, pairs, sequential) >= POWER:
            high = mid
        else:
            low = mid
    return high


def tasks_needed(difference: float, centre: float, icc: float, corr: float, attempts: int, pairs: int = 1, sequential: bool = False) -> int | None:
    """The fewest tasks (past the test's floor) on which `difference` is called 80% of the
    time; None past MAX_TASKS."""

    def enough(tasks: int) -> bool:
        return power_at(difference, centre, icc, corr, attempts, tasks, pairs, sequential) >= POWER

    low = fewest_tasks(pairs, sequential)
    if enough(low):
        return low
    high = low
    while not enough(high):
        if high >= MAX_TASKS:
            return None
        low, high = high, min(MAX_TASKS, high * 2)
    return _fewest(enough, low, high)


def attempts_needed(difference: float, centre: float, icc: float, corr: float, tasks: int, pairs: int = 1, sequential: bool = False) -> int | None:
    """The fewest attempts per task (up to MAX_ATTEMPTS) at which `difference` is called 80% of
    the time over `tasks` tasks; None when no number of them is enough."""

    def enough(attempts: int) -> bool:
        return power_at(difference, centre, icc, corr, attempts, tasks, pairs, sequential) >= POWER

    if not enough(MAX_ATTEMPTS):
        return None
    return _fewest(enough, 0, MAX_ATTEMPTS)


def _fewest(enough: Callable[[int], bool], low: int, high: int) -> int:
    """The fewest n in (low, high] that is `enough`, by bisection: enough(high) holds, enough(low)
    does not (power rises with tasks and attempts, save the sign test's small steps)."""
    while high - low > 1:
        mid = (low + high) // 2
        if enough(mid):
            high = mid
        else:
            low = mid
    return high


def smallest_p(tasks: int, pairs: int = 1, sequential: bool = False) -> float:
    """The smallest p `compare`'s test in force can give any pair over `tasks` tasks: every task
    won by one setup. The sign test's 2^(1−T), times m (Holm's first step) for m pairs; in rounds
    the always-valid m/E (Bonferroni), E the e-value of T wins. No difference, however large,
    is called below it: the normal approximation above knows nothing of this floor, and quoted
    94% power on 6 tasks and 15 pairs, whose best adjusted p is 0.47."""
    if tasks <= 0:
        return 1.0
    if sequential:
        from benchtape.replay.sequential import e_value

        return min(1.0, max(1, pairs) / e_value(tasks, 0))
    from benchtape.replay.stats import sign_test

    return min(1.0, max(1, pairs) * sign_test(tasks, 0))


def fewest_tasks(pairs: int = 1, sequential: bool = False, alpha: float = ALPHA) -> int:
    """The fewest tasks on which the test in force can tell any pair apart at all (smallest_p < α)."""
    tasks = 1
    while smallest_p(tasks, pairs, sequential) >= alpha:
        tasks += 1
    return tasks


@dataclass
class Setup:
    """What is known of one setup: its pass rate (measured or the default) and per-task (n, c)."""

    key: str
    label: str
    rate: float = DEFAULT_RATE
    measured: bool = False
    per_task: dict[str, tuple[int, int]] = field(default_factory=dict)


@dataclass
class Assumptions:
    icc: float = DEFAULT_ICC
    icc_measured: bool = False
    icc_unmeasurable: bool = False  # tasks with several attempts stored, every attempt alike (no spread at all: ρ has no value)
    corr: dict[frozenset[str], float] = field(default_factory=dict)  # measured pairs only; else DEFAULT_CORR

    def corr_of(self, a: str, b: str) -> float:
        return self.corr.get(frozenset((a, b)), DEFAULT_CORR)


def estimate(setups: Sequence[Setup]) -> Assumptions:
    """ρ pooled over setups with several attempts per task (one-way ANOVA), r per pair from
    their per-task rates over common tasks (clamped to [0, 0.9]: a plan never counts on more)."""
    between = within = 0.0
    df_between = df_within = 0
    sizes: list[int] = []
    for s in setups:
        tasks = [(n, c) for n, c in s.per_task.values() if n >= 2]
        if len(tasks) < 2:
            continue
        total = sum(n for n, _ in tasks)
        p = sum(c for _, c in tasks) / total
        between += sum(n * (c / n - p) ** 2 for n, c in tasks)
        within += sum(c * (1 - c / n) for n, c in tasks)  # Σ over attempts of (y − task mean)²
        df_between += len(tasks) - 1
        df_within += total - len(tasks)
        sizes += [n for n, _ in tasks]
    out = Assumptions()
    if df_between and df_within:
        msb, msw = between / df_between, within / df_within
        k = sum(sizes) / len(sizes)
        if msb + (k - 1) * msw > 0:
            out.icc = min(1.0, max(0.0, (msb - msw) / (msb + (k - 1) * msw)))
            out.icc_measured = True
        else:
            out.icc_unmeasurable = True
    centred = {s.key: _centred(s) for s in setups}  # setups that measured the same tasks: one dot product a pair
    for a, b in itertools.combinations(setups, 2):
        ca, cb = centred[a.key], centred[b.key]
        if ca[0] == cb[0]:
            if len(ca[0]) < MIN_CORR_TASKS or not ca[2] or not cb[2]:
                continue
            r: float | None = sum(map(operator.mul, ca[1], cb[1])) / (ca[2] * cb[2])
        else:
            common = a.per_task.keys() & b.per_task.keys()
            if len(common) < MIN_CORR_TASKS:
                continue
            r = _pearson([a.per_task[t][1] / a.per_task[t][0] for t in common], [b.per_task[t][1] / b.per_task[t][0] for t in common])
        if r is not None:
            out.corr[frozenset((a.key, b.key))] = min(0.9, max(0.0, r))
    return out


def _centred(s: Setup) -> tuple[tuple[str, ...], list[float], float]:
    """(its tasks in order, their pass rates minus the mean, the vector's length)."""
    tasks = tuple(sorted(t for t, (n, _) in s.per_task.items() if n))
    rates = [s.per_task[t][1] / s.per_task[t][0] for t in tasks]
    mean = sum(rates) / len(rates) if rates else 0.0
    vector = [x - mean for x in rates]
    return tasks, vector, math.sqrt(sum(x * x for x in vector))


def _pearson(xs: list[float], ys: list[float]) -> float | None:
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    syy = sum((y - my) ** 2 for y in ys)
    if sxx == 0 or syy == 0:
        return None
    return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / math.sqrt(sxx * syy)


def plan(setups: Sequence[Setup], tasks: int, attempts: int, detect: float | None = None, *, sequential: bool = False) -> dict[str, Any]:
    """The plan of an evaluation of `tasks` × `attempts` over these setups: the minimum
    detectable difference of its hardest pair (the one with the most spread), and with
    `detect` the tasks (at these attempts) and the attempts (at these tasks) that difference
    needs. Every figure says where its inputs came from. Below `fewest_tasks` (the test in
    force: the sign test, or the always-valid one when `sequential`, run in rounds) nothing is
    detectable at any size, and no number of attempts changes that: the test is over tasks."""
    pairs = max(1, len(setups) * (len(setups) - 1) // 2)
    floor = fewest_tasks(pairs, sequential)
    found = estimate(setups)
    worst: tuple[float, Setup, Setup] | None = None
    for a, b in itertools.combinations(setups, 2):
        var = difference_variance(a.rate, b.rate, found.icc, found.corr_of(a.key, b.key), attempts)
        if worst is None or var > worst[0]:
            worst = (var, a, b)
    if worst is None:  # one setup: nothing to tell apart; plan as two default setups would
        centre, corr = DEFAULT_RATE, DEFAULT_CORR
        names: tuple[str, str] | None = None
    else:
        _, first, second = worst
        centre, corr = (first.rate + second.rate) / 2, found.corr_of(first.key, second.key)
        names = (first.label, second.label)
    measured = [s.label for s in setups if s.measured]
    doc: dict[str, Any] = {
        "tasks": tasks,
        "attempts": attempts,
        "setups": len(setups),
        "pairs": pairs,
        "alpha": ALPHA,
        "power": POWER,
        "mdd": mdd(centre, found.icc, corr, attempts, tasks, pairs, sequential),
        "hardest_pair": list(names) if names else None,
        "test": "always-valid e-value test (rounds)" if sequential else "paired sign test over tasks",
        "smallest_p": smallest_p(tasks, pairs, sequential),
        "fewest_tasks": floor,
        "decidable": tasks >= floor,
        "assumptions": {
            "rates": {s.label: round(s.rate, 4) for s in setups},
            "rates_from": "stored measurements" if len(measured) == len(setups) and setups else ("stored measurements where there are, else the default " + f"{DEFAULT_RATE:g}" if measured else f"the default {DEFAULT_RATE:g} (nothing stored: the largest spread)"),
            "icc": round(found.icc, 4),
            "icc_from": "stored attempts (one-way ANOVA)" if found.icc_measured else (
                f"the default {DEFAULT_ICC:g} (the stored attempts do not vary: within each setup every attempt of every task ended alike, so how alike a task's attempts are cannot be measured)"
                if found.icc_unmeasurable
                else f"the default {DEFAULT_ICC:g} (no task with several stored attempts)"
            ),
            "setup_correlation_from": f"{len(found.corr)} measured pair(s), the others the default {DEFAULT_CORR:g}" if found.corr else f"the default {DEFAULT_CORR:g} (setups not alike: the most tasks)",
            "correction": f"Bonferroni over {pairs} pair(s) (compare's Holm is never less powerful)" if pairs > 1 else "one pair: none",
            "centre": round(centre, 4),
            "model": "each task's pass rate Beta(p, ρ), its attempts binomial, a share r of tasks alike for the two setups; the power is the test's own (replay/sign_power.py)",
        },
    }
    if detect is not None:
        need_tasks = tasks_needed(detect, centre, found.icc, corr, attempts, pairs, sequential)
        need_attempts = None if tasks < floor else attempts_needed(detect, centre, found.icc, corr, tasks, pairs, sequential)
        doc["detect"] = {"difference": detect, "tasks_needed": need_tasks, "attempts_needed": need_attempts}
    return doc


def setups_from(arms: Sequence[tuple[str, str]], per_arm: Mapping[str, Mapping[str, tuple[int, int]]]) -> list[Setup]:
    """Setups from (key, label) and stored per-task (attempts, passes); the rate shrunk by one
    pass and one failure (0/3 plans as 1/5, not as a setup that never varies)."""
    out = []
    for key, label in arms:
        tasks = dict(per_arm.get(key) or {})
        n = sum(x for x, _ in tasks.values())
        c = sum(y for _, y in tasks.values())
        out.append(Setup(key, label, (c + 1) / (n + 2) if n else DEFAULT_RATE, bool(n), tasks))
    return out


def sentences(doc: dict[str, Any]) -> list[str]:
    """The plan in words (terminal; the JSON carries the figures)."""
    a = doc["assumptions"]
    out = []
    if doc["tasks"] <= 0:
        return ["plan: no task selected: nothing can be detected"]
    pair = f" (hardest pair: {doc['hardest_pair'][0]} vs {doc['hardest_pair'][1]})" if doc["hardest_pair"] else ""
    if not doc.get("decidable", True):
        over = f", corrected over {doc['pairs']} pairs" if doc["pairs"] > 1 else ""
        out.append(
            f"plan: {doc['tasks']} task(s) can never tell two setups apart, whatever the difference: compare's {doc['test']}{over} gives at best p = {doc['smallest_p']:.2g} "
            f"on {doc['tasks']} task(s) (every task won by one setup), not below α = {doc['alpha']:g}; it takes at least {doc['fewest_tasks']} task(s), and more attempts do not help"
        )
    elif doc["mdd"] is None:  # not even 100 points (one setup passing everything, the other nothing) is called that often
        out.append(f"plan: {doc['tasks']} task(s) × {doc['attempts']} attempt(s) are too few to detect any difference in pass rate 80% of the time at α = {doc['alpha']:g} (not even one of 100 points){pair}")
    else:
        out.append(f"plan: {doc['tasks']} task(s) × {doc['attempts']} attempt(s) detect a difference of {doc['mdd']:.0%} in pass rate or more, 80% of the time at α = {doc['alpha']:g}{pair}")
    out.append(f"  from: pass rates {a['rates_from']}; attempts of a task alike ρ = {a['icc']:g} ({a['icc_from']}); setups alike: {a['setup_correlation_from']}; {a['correction']}")
    d = doc.get("detect")
    if d:
        if d["attempts_needed"]:
            attempts = f"{d['attempts_needed']} attempt(s) per task at {doc['tasks']} task(s)"
        elif not doc.get("decidable", True):
            attempts = f"no number of attempts at {doc['tasks']} task(s) (the test is over tasks: add tasks)"
        else:
            attempts = f"no number of attempts up to {MAX_ATTEMPTS} at {doc['tasks']} task(s) (the test is over tasks: however many attempts, {doc['tasks']} task(s) are too few for it; add tasks)"
        tasks = f"{d['tasks_needed']} task(s)" if d["tasks_needed"] else f"more than {MAX_TASKS:,} task(s)"
        out.append(f"  to detect {d['difference']:.0%}: {tasks} at {doc['attempts']} attempt(s), or {attempts}")
    return out


def parse_difference(text: str) -> float:
    """`10pp`, `10%`, `0.1` → 0.1; a clear error otherwise."""
    from benchtape.core.errors import BadInput

    raw = text.strip().lower()
    try:
        if raw.endswith("pp") or raw.endswith("%"):
            value = float(raw.rstrip("p%").strip()) / 100
        else:
            value = float(raw)
            value = value / 100 if value >= 1 else value
    except ValueError:
        raise BadInput(f"--detect {text!r} is not a difference in pass rate", fix="--detect 10pp (ten percentage points), or 0.1") from None
    if not 0 < value < 1:
        raise BadInput(f"--detect {text!r} is not between 0 and 100 points", fix="--detect 10pp") from None
    return value
