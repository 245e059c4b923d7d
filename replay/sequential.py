"""Stop when decided: an always-valid test of two setups, looked at after every round, and
where the next round's tasks go.

Looking at a p-value after each round and stopping when it dips below α finds a difference
between equal setups far more often than α. This test does not: each pair's evidence is an
e-value, the mixture likelihood ratio of the tasks where the two setups differ (their
discordant tasks),

    E = 2ⁿ · B(w + ½, l + ½) / B(½, ½)

for w tasks where A did better and l where B did (n = w + l): under "equally good" each
discordant task is a fair coin, E is a nonnegative martingale with mean 1, and by Ville's
inequality the chance it ever reaches 1/α — however often it is looked at, whenever the
looking stops — is at most α. With m pairs each pair must reach m/α (Bonferroni over
e-values), so the chance of any false "distinguishable" stays at most α.

Rounds add whole tasks (every attempt of each), in one fixed seeded order per evaluation, to
the setups of undecided neighbouring pairs only: a new task tells more than another attempt
of a seen task (attempts of one task are alike), and a setup already told apart from its
neighbours needs no more cells. Only tasks both setups measured with every attempt count,
so a round never changes the evidence of an earlier one.

Pure functions: `state` reads per-task counts (replay.compare.per_task_counts), `next_tasks`
says what to run; benchtape's loop runs it.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

ALPHA = 0.05
PRIOR = 0.5  # the mixture's Beta(½, ½): Jeffreys, symmetric (two-sided)


def e_value(wins: int, losses: int) -> float:
    """The mixture e-value of w wins against l losses among discordant tasks (1 with none)."""
    n = wins + losses
    log_e = n * math.log(2) + _log_beta(wins + PRIOR, losses + PRIOR) - _log_beta(PRIOR, PRIOR)
    return math.exp(min(log_e, 700.0))


def _log_beta(a: float, b: float) -> float:
    return math.lgamma(a) + math.lgamma(b) - math.lgamma(a + b)


@dataclass
class PairState:
    a: str
    b: str
    tasks: int  # tasks both measured with every attempt
    a_wins: int
    b_wins: int
    e: float
    threshold: float

    @property
    def decided(self) -> bool:
        return self.e >= self.threshold

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "decided": self.decided}


@dataclass
class State:
    """Every pair's evidence, the setups in pass-rate order, and which neighbours are decided."""

    order: list[str]  # arm keys, best pass rate first (over complete tasks)
    pairs: dict[frozenset[str], PairState] = field(default_factory=dict)
    alpha: float = ALPHA

    def pair(self, a: str, b: str) -> PairState:
        return self.pairs[frozenset((a, b))]

    def neighbours(self) -> list[PairState]:
        return [self.pair(a, b) for a, b in zip(self.order, self.order[1:])]

    @property
    def decided(self) -> bool:
        return bool(self.order[1:]) and all(p.decided for p in self.neighbours())

    def undecided_arms(self) -> list[str]:
        out: list[str] = []
        for p in self.neighbours():
            if not p.decided:
                out += [x for x in (p.a, p.b) if x not in out]
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"order": self.order, "alpha": self.alpha, "decided": self.decided, "neighbours": [p.to_dict() for p in self.neighbours()]}


def _complete(counts: Mapping[str, tuple[int, int]], attempts: int) -> dict[str, float]:
    return {t: c / n for t, (n, c) in counts.items() if n >= attempts}


def state(arms: Sequence[str], counts: Mapping[str, Mapping[str, tuple[int, int]]], attempts: int, alpha: float = ALPHA) -> State:
    """The evidence now, from arm → task → (attempts measured, passes)."""
    rates = {arm: _complete(counts.get(arm) or {}, attempts) for arm in arms}
    m = max(1, len(arms) * (len(arms) - 1) // 2)
    pairs = {}
    for a, b in itertools.combinations(arms, 2):
        common = rates[a].keys() & rates[b].keys()
        wins = sum(1 for t in common if rates[a][t] > rates[b][t])
        losses = sum(1 for t in common if rates[a][t] < rates[b][t])
        pairs[frozenset((a, b))] = PairState(a, b, len(common), wins, losses, e_value(wins, losses), m / alpha)

    def mean(arm: str) -> float:
        values = list(rates[arm].values())
        return sum(values) / len(values) if values else 0.5

    order = sorted(arms, key=lambda arm: -mean(arm))
    return State(order, pairs, alpha)


DECIDED = "decided: every neighbouring pair of setups is told apart"
EXHAUSTED = "every task is measured: the undecided pairs cannot be told apart on these tasks"


def why_stopped(st: State, order: Sequence[str], counts: Mapping[str, Mapping[str, tuple[int, int]]], attempts: int, limits: Mapping[str, Any] | None = None) -> str:
    """Why an evaluation run in rounds stands where it does, from what is stored (what `compare`
    says): decided, out of tasks, or neither, when a limit or an interruption ended the last
    invocation (`limits`: the --max-cells and --budget its last round recorded)."""
    if st.decided:
        return DECIDED
    if not next_tasks(st, order, counts, attempts, 1):
        return EXHAUSTED
    undecided = sum(1 for p in st.neighbours() if not p.decided)
    given = [f"--max-cells {limits['max_cells']}" for _ in [0] if limits and limits.get("max_cells")] + [f"--budget ${limits['budget']:g}" for _ in [0] if limits and limits.get("budget")]
    what = f"its limit ({' and '.join(given)}) or an interruption" if given else "an interruption (no --max-cells or --budget was given)"
    return f"not decided: {undecided} neighbouring pair(s) undecided with tasks left to run; {what} ended the last invocation (run it again to resume)"


def task_order(name: str, tasks: Sequence[str]) -> list[str]:
    """The evaluation's fixed order of tasks for rounds (seeded by its name: a resumed run
    continues the same order)."""
    seed = int.from_bytes(hashlib.sha256(name.encode()).digest()[:8], "big")
    out = sorted(tasks)
    random.Random(seed).shuffle(out)
    return out


def next_tasks(st: State, order: Sequence[str], counts: Mapping[str, Mapping[str, tuple[int, int]]], attempts: int, size: int) -> dict[str, list[str]]:
    """arm → the next `size` tasks (in `order`) it has not measured with every attempt, for the
    setups of undecided neighbouring pairs; empty when nothing is undecided or left."""
    out: dict[str, list[str]] = {}
    for arm in st.undecided_arms():
        done = _complete(counts.get(arm) or {}, attempts)
        todo = [t for t in order if t not in done][:size]
        if todo:
            out[arm] = todo
    return out


# ---------------------------------------------------------------- simulation (tests and docs)


def simulate(rates: Sequence[float], tasks: int, size: int, rng: random.Random, attempts: int = 1, alpha: float = ALPHA, max_cells: int | None = None) -> tuple[bool, int, str]:
    """One simulated evaluation by this module's rounds: setups whose attempts pass with these
    probabilities, independently, until decided or out of tasks.
    Returns (some neighbouring pair called distinguishable, cells used, why it stopped)."""
    arms = [f"s{i}" for i in range(len(rates))]
    outcome = {(arm, t, n): rng.random() < rate for arm, rate in zip(arms, rates) for t in range(tasks) for n in range(attempts)}
    order = [str(t) for t in range(tasks)]
    counts: dict[str, dict[str, tuple[int, int]]] = {arm: {} for arm in arms}
    cells = 0
    while True:
        st = state(arms, counts, attempts, alpha)
        if st.decided:
            return True, cells, "decided"
        todo = next_tasks(st, order, counts, attempts, size)
        if not todo:
            return any(p.decided for p in st.neighbours()), cells, "tasks exhausted"
        wanted = sum(len(ts) for ts in todo.values()) * attempts
        if max_cells is not None and cells + wanted > max_cells:
            return any(p.decided for p in st.neighbours()), cells, "max cells"
        for arm, ts in todo.items():
            for t in ts:
                counts[arm][t] = (attempts, sum(outcome[(arm, int(t), n)] for n in range(attempts)))
        cells += wanted
