"""Plan before spending: the minimum detectable difference at 80% power for tasks × attempts,
checked by hand and by simulation, and the tasks or attempts a named difference needs."""

from __future__ import annotations

import math
import random
from statistics import NormalDist

import pytest

from benchtape.core.errors import BadInput
from benchtape.replay.power import DEFAULT_ICC, Setup, difference_variance, parse_difference, plan, power_at, sentences, setups_from
from benchtape.replay.sign_power import outcome_odds, power
from benchtape.replay.stats import sign_test


def test_the_spread_and_the_power_by_hand():
    # two default setups (p = 0.5), one attempt: σ_d² = 2 · 0.25 = 0.5 (the hardest pair's spread)
    assert difference_variance(0.5, 0.5, DEFAULT_ICC, 0.0, 1) == pytest.approx(0.5)
    # more attempts shrink only the within-task half (ρ = 0.5): 0.25 · (0.5 + 0.5 / 4) per setup
    assert difference_variance(0.5, 0.5, 0.5, 0.0, 4) == pytest.approx(2 * 0.25 * 0.625)
    # one attempt, 6 tasks: A wins a task with pa(1 − pb), B with pb(1 − pa); the sign test calls
    # 6 of 6 (p = 1/32) and nothing less (5 of 5: p = 1/16), so the power is win⁶ + loss⁶
    win, loss = 0.8 * 0.7, 0.3 * 0.2
    assert outcome_odds(0.8, 0.3, DEFAULT_ICC, 0.0, 1) == pytest.approx((win, loss))
    assert power(0.8, 0.3, DEFAULT_ICC, 0.0, 1, 6) == pytest.approx(win**6 + loss**6)
    # three pairs: each at α/3, so 6 tasks call nothing (1/32 × 3 > 0.05)
    assert power(0.8, 0.3, DEFAULT_ICC, 0.0, 1, 6, 3) == 0.0


def _simulated_power(pa: float, pb: float, icc: float, attempts: int, tasks: int, runs: int, seed: int) -> float:
    """compare's call (the sign test on per-task pass counts) on tasks drawn as the planner
    models them: each task's rate Beta(p, ρ), its attempts binomial, the setups independent."""
    rng = random.Random(seed)
    nu = 1 / icc - 1
    called = 0
    for _ in range(runs):
        wins = losses = 0
        for _t in range(tasks):
            ra, rb = rng.betavariate(pa * nu, (1 - pa) * nu), rng.betavariate(pb * nu, (1 - pb) * nu)
            xa, xb = sum(rng.random() < ra for _ in range(attempts)), sum(rng.random() < rb for _ in range(attempts))
            wins, losses = wins + (xa > xb), losses + (xb > xa)
        called += sign_test(wins, losses) < 0.05
    return called / runs


def test_the_mdd_is_detected_about_80_percent_of_the_time():
    """Simulate compare's test at the planned size: at the MDD about 80% power. One attempt a
    task, and three at ρ = 0.5, where the old normal approximation promised 80% that the sign
    test (ties dropped, margins not weighed) called about half the time."""
    for tasks, attempts in ((200, 1), (40, 3)):
        doc = plan([Setup("a", "A", 0.5), Setup("b", "B", 0.5)], tasks, attempts)
        delta = doc["mdd"]
        simulated = _simulated_power(0.5 - delta / 2, 0.5 + delta / 2, DEFAULT_ICC, attempts, tasks, 500, 3)
        assert 0.74 <= simulated <= 0.88, (tasks, attempts, delta, simulated)
    # the old figure for 40 tasks × 3 attempts: (z + z_0.8) σ_d / √T, which the test calls far less often
    old = (NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)) * math.sqrt(difference_variance(0.5, 0.5, DEFAULT_ICC, 0.0, 3) / 40)
    assert old < delta and _simulated_power(0.5 - old / 2, 0.5 + old / 2, DEFAULT_ICC, 3, 40, 500, 4) < 0.7


def test_stored_rates_and_attempts_make_the_plan_and_detect_names_what_it_needs():
    # measured: A passes every attempt of half its tasks, B none; attempts of a task agree (ρ high)
    per_arm = {"a": {f"t{i}": (3, 3 if i % 2 else 0) for i in range(20)}, "b": {f"t{i}": (3, 0) for i in range(20)}}
    setups = setups_from([("a", "A"), ("b", "B")], per_arm)
    assert setups[0].measured and setups[0].rate == pytest.approx((30 + 1) / (60 + 2))
    doc = plan(setups, 20, 3, detect=0.10)
    assert doc["assumptions"]["icc"] == pytest.approx(1.0) and "ANOVA" in doc["assumptions"]["icc_from"]
    assert doc["assumptions"]["rates_from"] == "stored measurements"
    # attempts of a task agree: more attempts cannot reach 10 points, more tasks can
    assert doc["detect"]["attempts_needed"] is None and doc["detect"]["tasks_needed"] > 20
    assert power_at(0.10, doc["assumptions"]["centre"], 1.0, 0.0, 3, doc["detect"]["tasks_needed"], 1, False) >= 0.8
    assert power_at(0.10, doc["assumptions"]["centre"], 1.0, 0.0, 3, doc["detect"]["tasks_needed"] - 1, 1, False) < 0.8
    text = "\n".join(sentences(doc))
    assert "detect a difference of" in text and "to detect 10%" in text and "add tasks" in text
    fresh = plan(setups_from([("a", "A"), ("b", "B")], {}), 20, 3, detect=0.45)
    assert "the default 0.5" in fresh["assumptions"]["rates_from"] and fresh["detect"]["attempts_needed"] is not None


def test_too_few_tasks_say_no_difference_is_detectable_never_a_difference_past_100_points():
    """With one task nothing is called: there is no minimum detectable difference (not even 100
    points), and the sentence says none is detectable, never a figure past 100 points."""
    doc = plan(setups_from([("a", "A"), ("b", "B")], {}), 1, 1)
    assert doc["mdd"] is None
    text = "\n".join(sentences(doc))
    assert "can never tell two setups apart" in text and "detect a difference of" not in text
    # at the test's floor (6 tasks) only near-total differences are called: 6 of 6 tasks won
    six = plan(setups_from([("a", "A"), ("b", "B")], {}), 6, 1)
    assert six["decidable"] and 0.9 < six["mdd"] < 1 and "detect a difference of 96%" in "\n".join(sentences(six))
    assert "detect a difference of" in "\n".join(sentences(plan(setups_from([("a", "A"), ("b", "B")], {}), 200, 1)))

def test_a_hundred_setups_plan_fast():
    import time

    per_arm = {f"s{i}": {f"t{j}": (2, (i + j) % 3 % 2 + (j % 2)) for j in range(50)} for i in range(100)}
    setups = setups_from([(f"s{i}", f"S{i}") for i in range(100)], per_arm)
    started = time.perf_counter()
    doc = plan(setups, 50, 2, detect=0.1)
    assert time.perf_counter() - started < 2.0 and doc["pairs"] == 4950


def test_detect_parses_points():
    assert parse_difference("10pp") == pytest.approx(0.1) and parse_difference("5%") == pytest.approx(0.05) and parse_difference("0.2") == pytest.approx(0.2)
    with pytest.raises(BadInput):
        parse_difference("ten")
    with pytest.raises(BadInput):
        parse_difference("150pp")


def test_a_design_the_test_in_force_can_never_decide_says_so_before_any_spend():
    """A newcomer on boltons: 6 tasks and 6 setups (15 pairs) planned "detect 49%, 80% of the
    time", while compare's sign test gives at best p = 2^-5 on 6 tasks and Holm over 15 pairs
    makes it 0.47: no difference could ever be called. In rounds, the always-valid test's E of
    6 straight wins (14.4) never reaches m/α. The plan now says so, and what it takes."""
    from benchtape.replay.inference import holm
    from benchtape.replay.power import fewest_tasks, smallest_p
    from benchtape.replay.sequential import e_value

    six = setups_from([(f"s{i}", f"S{i}") for i in range(6)], {})
    doc = plan(six, 6, 2, detect=0.5)
    assert doc["pairs"] == 15 and not doc["decidable"] and doc["smallest_p"] == pytest.approx(15 * 2**-5)
    # the floor is the test compare applies: every task won by one setup, Holm over the pairs
    assert doc["smallest_p"] == pytest.approx(holm([sign_test(6, 0)] + [1.0] * 14)[0])
    floor = doc["fewest_tasks"]
    assert holm([sign_test(floor, 0)] + [1.0] * 14)[0] < 0.05 <= holm([sign_test(floor - 1, 0)] + [1.0] * 14)[0]
    assert doc["detect"]["tasks_needed"] >= floor and doc["detect"]["attempts_needed"] is None
    text = "\n".join(sentences(doc))
    assert "6 task(s) can never tell two setups apart" in text and f"at least {floor} task(s)" in text and "detect a difference of" not in text
    assert "more attempts do not help" in text and "the test is over tasks" in text
    # one pair: the sign test's floor is 6 tasks (2^-5 < 0.05 ≤ 2^-4)
    assert fewest_tasks(1) == 6 and plan(six[:2], 6, 1)["decidable"] and not plan(six[:2], 5, 1)["decidable"]
    # in rounds (three setups): 3/E of six straight wins is far above α
    rounds = plan(six[:3], 6, 2, sequential=True)
    assert not rounds["decidable"] and rounds["smallest_p"] == pytest.approx(3 / e_value(6, 0))
    assert "always-valid" in "\n".join(sentences(rounds))
    assert smallest_p(rounds["fewest_tasks"], 3, True) < 0.05


def test_attempts_that_never_vary_are_said_to_be_unmeasurable_not_missing():
    """Every task had two stored attempts, every attempt of a setup alike (12/12, 0/12): the plan
    said "no task with several stored attempts", which was not why ρ took its default."""
    per_arm = {"a": {f"t{i}": (2, 2) for i in range(6)}, "b": {f"t{i}": (2, 0) for i in range(6)}}
    said = plan(setups_from([("a", "A"), ("b", "B")], per_arm), 6, 2)["assumptions"]["icc_from"]
    assert "do not vary" in said and "no task with several stored attempts" not in said
    assert "no task with several stored attempts" in plan(setups_from([("a", "A"), ("b", "B")], {}), 6, 2)["assumptions"]["icc_from"]
