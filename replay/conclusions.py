"""What a comparison found, in words a reader can act on, and the figures behind it.

A ranking table alone invites over-reading: two setups at 2/6 look ranked 1 and 2 because
one row is printed first. These functions say what the measurements support:

- `shared_ranks`: ranks follow the statistics (`RANK_RULE`): neighbours in pass-rate order
  that the paired test cannot tell apart share a rank, chained; cost, tokens and time only
  order the rows for display.
- `conclusion`: one sentence per pair of neighbours in the ranking — a difference with its
  paired sign test, or "not distinguishable" with how many differing tasks would be needed
  at the observed rate to tell them apart by the test in force (`p_in_force`: adjusted over
  the pairs, and the always-valid e-value test when the evaluation ran in rounds).
- `pass_hat_k`: the chance that all k attempts pass (pass^k), beside pass@k.
- `flaky`: tasks whose attempts of one setup disagree.
- `matrix`: every attempt of every task × setup, measured or not, with its session.

Pure functions over measurements and pairs: no store, no rendering.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping, Protocol, Sequence

from benchtape.replay.stats import sign_test

ALPHA = 0.05
RANK_RULE = (
    "setups are ordered by pass rate; two neighbours share a rank when the paired test cannot tell them apart "
    f"(p ≥ {ALPHA:g}, adjusted when more than two setups are compared: Holm, or Bonferroni on 1/E for an evaluation run in rounds), and such pairs chain into one group; "
    "a group's rank is the position of its first setup (1, 1, 3)"
)
NEEDED_CAP = 10_000  # beyond this many differing tasks, "would be needed" says "more than"
SCANNED = 200  # up to this many differing tasks the fewest is found one by one; beyond, by bisection


class _Attempt(Protocol):
    session_id: str
    arm: str
    task: str
    attempt: int
    outcome: str | None
    reason: str | None

    @property
    def measured(self) -> bool: ...


class _Pair(Protocol):
    a: str
    b: str
    tasks: int
    mean_difference: float
    a_wins: int
    b_wins: int
    ties: int
    p_value: float
    p_adjusted: float | None
    test: str

    @property
    def p(self) -> float: ...


def pass_hat_k(per_task: Iterable[tuple[int, int]], k: int) -> float | None:
    """The mean over tasks of C(c, k) / C(n, k): the unbiased estimate that k attempts all
    pass (from n attempts with c passes). A task with fewer than k attempts does not count;
    None when none has k."""
    values = [math.comb(c, k) / math.comb(n, k) for n, c in per_task if n >= k >= 1]
    return sum(values) / len(values) if values else None


def needed_to_differ(wins: int, losses: int, alpha: float = ALPHA, p_of: Callable[[int, int], float] = sign_test) -> int | None:
    """The fewest differing tasks that, split at the observed rate, would make the test in
    force significant; None when the split is even (no number would) or nothing differed.
    `p_of(lead, rest)` is that test's p as the decision uses it — the sign test by default;
    Holm-adjusted among the other pairs, or the rounds' m/E (`p_in_force`), where those decide
    — so the count never promises a difference the test would not call."""
    n = wins + losses
    if n == 0 or wins == losses:
        return None
    rate = max(wins, losses) / n

    def significant(total: int) -> bool:
        lead = round(total * rate)
        return p_of(lead, total - lead) < alpha

    scanned = min(NEEDED_CAP, max(n, SCANNED))
    for total in range(n, scanned + 1):  # the exact fewest, where rounding the split can make p wobble
        if significant(total):
            return total
    if not significant(NEEDED_CAP):
        return NEEDED_CAP + 1
    low, high = scanned, NEEDED_CAP  # far out p falls steadily with the total: bisect (not significant at low, significant at high)
    while high - low > 1:
        mid = (low + high) // 2
        low, high = (low, mid) if significant(mid) else (mid, high)
    return high


def p_in_force(test: str, others: Sequence[float] = ()) -> Callable[[int, int], float]:
    """The p the decision uses for a split of `lead` against `rest` differing tasks: the exact
    sign test, Holm-adjusted among the `others` pairs' raw p-values as they stand (fixed
    design), or for an evaluation run in rounds (`test` "e-value") the always-valid 1/E,
    Bonferroni over the pairs (m/E: the bar E ≥ m/α the rounds stop on)."""
    pairs = len(others) + 1
    if test == "e-value":
        from benchtape.replay.sequential import e_value

        return lambda lead, rest: min(1.0, pairs / e_value(lead, rest))
    if not others:
        return sign_test
    from benchtape.replay.inference import holm

    return lambda lead, rest: holm([sign_test(lead, rest), *others])[0]


def conclusion(pair: _Pair, label_a: str, label_b: str, attempts: int, pairs: int = 1, p_of: Callable[[int, int], float] = sign_test) -> str:
    """One sentence for two setups ranked next to each other (A is the one ranked first);
    with `pairs` > 1 tested, the p-value said is adjusted (Holm; Bonferroni for the rounds'
    e-values), and the sentence says so. `p_of` is the test in force (`p_in_force`): "N tasks
    where they differ would be needed" counts for it."""
    a_wins, b_wins = pair.a_wins, pair.b_wins
    a, b = label_a, label_b
    if a_wins < b_wins:  # displayed order says A first; the sentence follows the evidence
        a, b, a_wins, b_wins = b, a, b_wins, a_wins
    how = "Bonferroni" if pair.test == "e-value" else "Holm"
    p = f"{pair.p_value:.2g}" + (f", {how}-adjusted over {pairs} pairs {pair.p:.2g}" if pair.p_adjusted is not None and pairs > 1 else "")
    if pair.tasks == 0:
        return f"{a} and {b} have no task in common: nothing can be said about them together"
    test = "always-valid test (rounds), p = 1/E =" if pair.test == "e-value" else "paired sign test p ="
    if pair.p < ALPHA:
        if attempts == 1:
            more = a_wins - b_wins
            return f"{a} solves {more} more of {pair.tasks} common tasks than {b} ({test} {p})"
        return f"{a} passes more often than {b} on {a_wins} of {pair.tasks} common tasks, {b} on {b_wins} ({test} {p})"
    need = needed_to_differ(a_wins, b_wins, p_of=p_of)
    if a_wins + b_wins == 0:
        why = "they differ on no task"
    elif need is None:
        why = f"they differ on {a_wins + b_wins} task(s), split evenly: no number of tasks would separate them at this rate"
    elif need > NEEDED_CAP:
        why = f"more than {NEEDED_CAP:,} tasks where they differ would be needed at this rate"
    else:
        why = f"{need} tasks where they differ would be needed at this rate" + (f", more than the {pair.tasks} compared: these tasks cannot decide them" if need > pair.tasks else "")
    return f"{a} and {b} are not distinguishable on these tasks (p = {p}; {why})"


def shared_ranks(order: Sequence[Any], pairs: Iterable[_Pair]) -> dict[str, int]:
    """Rank by arm, for rows already in display order (pass rate first), by `RANK_RULE`: a row
    the test cannot tell from the row before it shares that row's rank."""
    p_of = {frozenset((p.a, p.b)): p.p for p in pairs}
    ranks: dict[str, int] = {}
    for index, row in enumerate(order):
        previous = order[index - 1] if index else None
        if previous is not None and p_of.get(frozenset((row.arm, previous.arm)), 1.0) >= ALPHA:
            ranks[row.arm] = ranks[previous.arm]  # not distinguishable from the row before
        else:
            ranks[row.arm] = index + 1
    return ranks


@dataclass
class Flaky:
    """A task whose attempts of one setup disagree: some passed, some did not."""

    task: str
    arm: str
    outcomes: list[str | None] = field(default_factory=list)  # by attempt

    def to_dict(self) -> dict[str, Any]:
        return {"task": self.task, "arm": self.arm, "outcomes": self.outcomes}


def flaky(chosen: Mapping[str, Mapping[str, Mapping[int, _Attempt]]], passed: str) -> list[Flaky]:
    out = []
    for arm, by_task in chosen.items():
        for task, attempts in sorted(by_task.items()):
            outcomes = [attempts[n].outcome for n in sorted(attempts)]
            if len(outcomes) > 1 and len({o == passed for o in outcomes}) > 1:
                out.append(Flaky(task, arm, outcomes))
    return out


@dataclass
class MatrixCell:
    """One attempt of one task by one setup: a measurement, or an attempt that measured nothing."""

    attempt: int
    outcome: str | None
    session_id: str
    measured: bool
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def matrix(measurements: Iterable[_Attempt], chosen: Mapping[str, Mapping[str, Mapping[int, _Attempt]]], tasks: Sequence[str], arms: Sequence[str]) -> dict[str, dict[str, list[MatrixCell]]]:
    """task → arm → its attempts in order: the measurement that counts for each attempt, and
    every attempt that ended in an execution failure (shown apart, never counted)."""
    grid: dict[str, dict[str, list[MatrixCell]]] = {t: {a: [] for a in arms} for t in tasks}
    counted = {id(m) for by_task in chosen.values() for attempts in by_task.values() for m in attempts.values()}
    for m in measurements:
        if m.task not in grid or m.arm not in grid[m.task]:
            continue
        if m.measured and id(m) not in counted:
            continue  # superseded by a later measurement of the same attempt
        grid[m.task][m.arm].append(MatrixCell(m.attempt, m.outcome, m.session_id, m.measured, m.reason))
    for by_arm in grid.values():
        for cells in by_arm.values():
            cells.sort(key=lambda c: (c.attempt, not c.measured))
    return grid
