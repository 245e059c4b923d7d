"""How often compare's test over tasks calls a true difference: its own power, not a t-test's.

`compare` calls a pair different by the sign test on per-task pass-rate differences (in rounds,
by the always-valid e-value test on the same wins and losses). That test sees only which setup
did better on each task: a tie is dropped, a margin is not weighed, and on few tasks it is
discrete. The normal approximation of a t-test knows none of this, and promised 80% where the
sign test reached 21–62% (three attempts a task, ρ = 0.5: a simulation). Here the power is
computed for the test in force, under a stated model of tasks:

- a task's pass rate for a setup is drawn from a Beta with the setup's mean p and the
  intra-task correlation ρ (ρ = 1 / (α + β + 1): at 0 every task has the rate p, at 1 every
  task passes every attempt or none), and its k attempts pass Binomial(k, rate);
- two setups find a share r of the tasks alike (their rates coupled by quantile: a task hard
  for one is as hard for the other) and the rest independently;
- a task is a win, a loss or a tie by its pass counts, and the test is applied to the wins
  and losses as compare applies it, at α/m for m pairs (Bonferroni: Holm is never weaker).

The Beta is taken as `GRID` atoms, each at its bin's own mean (so every moment that matters
to k ≤ 50 attempts is kept); the count of discordant tasks and the wins among them are summed
exactly up to `EXACT_TASKS` tasks, by the normal approximation of the sign statistic beyond.
"""

from __future__ import annotations

import functools
import math
from statistics import NormalDist

GRID = 48  # bins of a task's latent pass rate
EXACT_TASKS = 400  # tasks up to which the test's power is an exact sum
_EDGE = 1e-9
_N = NormalDist()

Atoms = list[tuple[float, float]]  # (a task's pass rate, its probability), by rate


def betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b): P(X ≤ x) for X ~ Beta(a, b), and
    P(W ≥ c) = I_π(c, n − c + 1) for W ~ Binomial(n, π). By its continued fraction (modified
    Lentz), on the side of x where it converges fast."""
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    log_front = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(log_front) * _fraction(a, b, x) / a
    return 1.0 - math.exp(log_front) * _fraction(b, a, 1.0 - x) / b


def _fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300

    def guard(v: float) -> float:
        return tiny if abs(v) < tiny else v

    c, d = 1.0, 1.0 / guard(1.0 - (a + b) * x / (a + 1.0))
    h = d
    for m in range(1, 10_000):
        even = m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m))
        d = 1.0 / guard(1.0 + even * d)
        c = guard(1.0 + even / c)
        h *= d * c
        odd = -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))
        d = 1.0 / guard(1.0 + odd * d)
        c = guard(1.0 + odd / c)
        step = d * c
        h *= step
        if abs(step - 1.0) < 1e-13:
            break
    return h


@functools.lru_cache(maxsize=512)
def rate_atoms(p: float, icc: float) -> tuple[tuple[float, float], ...]:
    """A setup's per-task pass rate as atoms: Beta(pν, (1 − p)ν) with ν = 1/ρ − 1, its [0, 1]
    cut in `GRID` bins, each bin an atom at its own mean (E[X | bin] from I_x(a + 1, b), so the
    atoms' mean is p exactly). ρ = 0: one atom at p; ρ = 1: all-fail and all-pass."""
    p = min(1.0 - _EDGE, max(_EDGE, p))
    if icc <= _EDGE:
        return ((p, 1.0),)
    if icc >= 1.0 - _EDGE:
        return ((0.0, 1.0 - p), (1.0, p))
    nu = 1.0 / icc - 1.0
    a, b = p * nu, (1.0 - p) * nu
    edges = [i / GRID for i in range(GRID + 1)]
    mass = [betainc(a, b, x) for x in edges]
    first = [betainc(a + 1.0, b, x) for x in edges]  # x f(x; a, b) = p f(x; a + 1, b)
    out = []
    for i in range(GRID):
        m = mass[i + 1] - mass[i]
        if m > 0:
            mean = p * (first[i + 1] - first[i]) / m
            out.append((min(edges[i + 1], max(edges[i], mean)), m))
    return tuple(out)


def _counts(rate: float, attempts: int) -> list[float]:
    """Binomial(k, rate): the chance of each number of passing attempts."""
    return [math.comb(attempts, i) * rate**i * (1.0 - rate) ** (attempts - i) for i in range(attempts + 1)]


def _win_odds(a: list[float], b: list[float]) -> tuple[float, float]:
    """(P(A passes more attempts than B), P(B more than A)) for independent counts."""
    below = 0.0  # P(B < i)
    wins = losses = 0.0
    cumulative_b = [0.0]
    for x in b:
        cumulative_b.append(cumulative_b[-1] + x)
    for i, x in enumerate(a):
        below = cumulative_b[i]
        wins += x * below
        losses += x * (1.0 - cumulative_b[i + 1])
    return wins, losses


def outcome_odds(pa: float, pb: float, icc: float, corr: float, attempts: int) -> tuple[float, float]:
    """(P(setup A wins a task), P(B wins it)) under the model: a share `corr` of tasks coupled
    by quantile, the rest independent."""
    k = max(1, attempts)
    atoms_a, atoms_b = rate_atoms(pa, icc), rate_atoms(pb, icc)
    counts_a = [(_counts(r, k), m) for r, m in atoms_a]
    counts_b = [(_counts(r, k), m) for r, m in atoms_b]
    share = min(1.0, max(0.0, corr))
    win = loss = 0.0
    if share < 1.0:
        dist_a = [sum(c[i] * m for c, m in counts_a) for i in range(k + 1)]
        dist_b = [sum(c[i] * m for c, m in counts_b) for i in range(k + 1)]
        w, lo = _win_odds(dist_a, dist_b)
        win, loss = (1.0 - share) * w, (1.0 - share) * lo
    if share > 0.0:
        for i, j, m in _by_quantile([m for _, m in counts_a], [m for _, m in counts_b]):
            w, lo = _win_odds(counts_a[i][0], counts_b[j][0])
            win, loss = win + share * m * w, loss + share * m * lo
    return win, loss


def _by_quantile(a: list[float], b: list[float]) -> list[tuple[int, int, float]]:
    """The comonotone coupling of two discrete distributions (each by rate): (atom of A, atom
    of B, probability) where their cumulative probabilities overlap."""
    out = []
    i = j = 0
    left_a, left_b = a[0], b[0]
    while i < len(a) and j < len(b):
        m = min(left_a, left_b)
        if m > 0:
            out.append((i, j, m))
        left_a, left_b = left_a - m, left_b - m
        if left_a <= 1e-15:
            i += 1
            left_a = a[i] if i < len(a) else 0.0
        if left_b <= 1e-15:
            j += 1
            left_b = b[j] if j < len(b) else 0.0
    return out


@functools.lru_cache(maxsize=100_000)
def fewest_wins(discordant: int, pairs: int, sequential: bool, alpha: float) -> int:
    """The fewest wins among `discordant` tasks that the test in force calls (past `discordant`:
    none): the sign test's p × m < α, or in rounds E ≥ m/α. Symmetric: as many losses are called too."""
    from benchtape.replay.sequential import e_value
    from benchtape.replay.stats import sign_test

    def called(w: int) -> bool:
        if sequential:
            return e_value(w, discordant - w) >= pairs / alpha
        return sign_test(w, discordant - w) * pairs < alpha

    low, high = (discordant + 1) // 2, discordant + 1  # called(high) taken as true
    while low < high:
        mid = (low + high) // 2
        if called(mid):
            high = mid
        else:
            low = mid + 1
    return low


def chance_called(win: float, loss: float, tasks: int, pairs: int = 1, sequential: bool = False, alpha: float = 0.05) -> float:
    """The chance the test in force calls the pair over `tasks` tasks, each won by A with
    probability `win` and by B with `loss` (else a tie), in either direction."""
    discordant = win + loss
    if tasks <= 0 or discordant <= 0.0:
        return 0.0
    share = min(1.0, win / discordant)
    if tasks > EXACT_TASKS:
        return _normal_power(win, loss, tasks, pairs, sequential, alpha)
    total = 0.0
    for n in range(1, tasks + 1):
        weight = _binomial(tasks, n, discordant)
        if weight < 1e-15:
            continue
        c = fewest_wins(n, pairs, sequential, alpha)
        if c > n:
            continue
        called = betainc(c, n - c + 1, share) + betainc(c, n - c + 1, 1.0 - share)  # P(W ≥ c) + P(L ≥ c)
        total += weight * min(1.0, called)
    return min(1.0, total)


def _binomial(n: int, i: int, p: float) -> float:
    if p >= 1.0:
        return 1.0 if i == n else 0.0
    return math.exp(math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) + i * math.log(p) + (n - i) * math.log1p(-p))


def _normal_power(win: float, loss: float, tasks: int, pairs: int, sequential: bool, alpha: float) -> float:
    """Many tasks: the sign statistic (wins − losses) is near normal, with its null spread at
    the same share of ties; the rounds' test needs its own bar, the wins the e-value calls at
    the expected number of discordant tasks."""
    discordant = win + loss
    mean = tasks * abs(win - loss)
    spread = math.sqrt(max(1e-300, tasks * (discordant - (win - loss) ** 2)))
    expected = max(1, round(tasks * discordant))
    needed = fewest_wins(expected, pairs, sequential, alpha)
    bar = (2 * needed - expected - 1) * math.sqrt(discordant * tasks) / math.sqrt(expected)  # the called margin (wins − losses, halfway to the step below), scaled to the null's spread
    return _N.cdf((mean - bar) / spread)


def power(pa: float, pb: float, icc: float, corr: float, attempts: int, tasks: int, pairs: int = 1, sequential: bool = False, alpha: float = 0.05) -> float:
    """The chance compare calls two setups of these pass rates different, over `tasks` tasks
    of `attempts` attempts each."""
    win, loss = outcome_odds(pa, pb, icc, corr, attempts)
    return chance_called(win, loss, tasks, pairs, sequential, alpha)
