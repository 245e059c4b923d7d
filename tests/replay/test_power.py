"""Plan before spending: the minimum detectable difference at 80% power for tasks × attempts,
checked by hand and by simulation, and the tasks or attempts a named difference needs."""

from __future__ import annotations

import math
import random

import pytest

from benchtape.core.errors import BadInput
from benchtape.replay.power import DEFAULT_ICC, Setup, difference_variance, mdd, parse_difference, plan, sentences, setups_from, tasks_needed, z_for
from benchtape.replay.stats import sign_test


def test_the_formula_by_hand():
    # two default setups (p = 0.5), one attempt: σ_d² = 2 · 0.25 = 0.5; 100 tasks, one pair
    var = difference_variance(0.5, 0.5, DEFAULT_ICC, 0.0, 1)
    assert var == pytest.approx(0.5)
    assert mdd(var, 100) == pytest.approx((1.959964 + 0.841621) * math.sqrt(0.5 / 100), rel=1e-5)
    # more attempts help only the within-task half (ρ = 0.5): 0.25 · (0.5 + 0.5 / 4) per setup
    assert difference_variance(0.5, 0.5, 0.5, 0.0, 4) == pytest.approx(2 * 0.25 * 0.625)
    # three setups: three pairs, each at α/3
    assert z_for(3) > z_for(1)
    assert tasks_needed(var, 0.10) == math.ceil(((1.959964 + 0.841621) / 0.1) ** 2 * 0.5)


def test_the_mdd_is_detected_about_80_percent_of_the_time():
    """Simulate the paired sign test at the planned size: at the MDD about 80% power."""
    tasks = 200
    doc = plan([Setup("a", "A", 0.5), Setup("b", "B", 0.5)], tasks, 1)
    delta = doc["mdd"]
    rng = random.Random(3)
    hits = 0
    for _ in range(400):
        w = losses = 0
        for _t in range(tasks):
            a, b = rng.random() < 0.5 + delta / 2, rng.random() < 0.5 - delta / 2
            w, losses = w + (a and not b), losses + (b and not a)
        hits += sign_test(w, losses) < 0.05
    assert 0.7 <= hits / 400 <= 0.92


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
    text = "\n".join(sentences(doc))
    assert "detect a difference of" in text and "to detect 10%" in text and "add tasks" in text
    fresh = plan(setups_from([("a", "A"), ("b", "B")], {}), 20, 3, detect=0.35)
    assert "the default 0.5" in fresh["assumptions"]["rates_from"] and fresh["detect"]["attempts_needed"] is not None


def test_too_few_tasks_say_no_difference_is_detectable_never_a_difference_past_100_points():
    """With one task the formula asks for more than 100 points, which no pass rate can differ by:
    the sentence says none is detectable (the figure stays in the JSON, and in brackets)."""
    doc = plan(setups_from([("a", "A"), ("b", "B")], {}), 1, 1)
    assert doc["mdd"] > 1
    text = "\n".join(sentences(doc))
    assert "can never tell two setups apart" in text and "detect a difference of" not in text
    wide = dict(doc, decidable=True)  # past the test's floor, a formula past 100 points still says none is detectable
    assert "too few to detect any difference" in "\n".join(sentences(wide))
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
