"""Stop when decided, proven by simulation: the always-valid test keeps false
"distinguishable" calls at or below α however often it is looked at, and on a clear
difference it stops with at least a third fewer cells than the fixed design."""

from __future__ import annotations

import random

import pytest

from benchtape.replay.sequential import ALPHA, e_value, next_tasks, simulate, state, task_order
from benchtape.replay.stats import sign_test


def test_equal_setups_are_falsely_told_apart_at_most_alpha_of_the_time():
    rng = random.Random(20261204)
    runs = [simulate([0.5, 0.5], tasks=100, size=5, rng=rng) for _ in range(1000)]
    false = sum(1 for decided, _, _ in runs if decided) / len(runs)
    assert false <= ALPHA
    # the naive way — a sign test after every round, stopping at the first p < α — inflates it
    naive = 0
    rng = random.Random(20261204)
    for _ in range(1000):
        w = losses = 0
        for _round in range(20):
            for _task in range(5):
                a, b = rng.random() < 0.5, rng.random() < 0.5
                w, losses = w + (a and not b), losses + (b and not a)
            if sign_test(w, losses) < ALPHA:
                naive += 1
                break
    assert naive / 1000 > ALPHA  # what the e-value guards against


def test_equal_setups_with_attempts_and_three_setups_stay_under_alpha():
    rng = random.Random(7)
    runs = [simulate([0.4, 0.4, 0.4], tasks=60, size=6, rng=rng, attempts=2) for _ in range(1000)]
    assert sum(1 for decided, _, _ in runs if decided) / len(runs) <= ALPHA


def test_a_clear_difference_stops_with_a_third_fewer_cells_than_the_fixed_design():
    rng = random.Random(11)
    tasks = 100
    fixed = 2 * tasks  # the evaluation as configured: every task for both setups
    runs = [simulate([0.8, 0.4], tasks=tasks, size=5, rng=rng) for _ in range(300)]
    assert sum(1 for decided, _, _ in runs if decided) / len(runs) >= 0.95
    mean_cells = sum(cells for _, cells, _ in runs) / len(runs)
    assert mean_cells <= fixed * 2 / 3, mean_cells


def test_the_e_value_by_hand_and_the_round_plan():
    assert e_value(0, 0) == 1.0
    # 2² · B(2.5, ½) / B(½, ½) = 4 · (Γ(2.5) Γ(½) / Γ(3)) / π = 4 · (3π/8) / π = 1.5
    assert e_value(2, 0) == pytest.approx(1.5)
    assert e_value(10, 0) > e_value(9, 1) > e_value(5, 5)
    counts = {"a": dict.fromkeys("pqrstuvwxyz", (1, 1)), "b": dict.fromkeys("pqrstuvwxyz", (1, 0)), "c": {"p": (1, 0)}}
    st = state(["a", "b", "c"], counts, attempts=1)
    assert st.order[0] == "a" and st.pair("a", "b").decided and st.pair("a", "b").threshold == pytest.approx(3 / ALPHA)
    assert not st.pair("b", "c").decided and st.undecided_arms() == ["b", "c"]
    order = task_order("e", list("pqrstuvwxyz"))
    assert order == task_order("e", list("zyxwvutsrqp")) and sorted(order) == list("pqrstuvwxyz")
    todo = next_tasks(st, order, counts, attempts=1, size=3)
    assert set(todo) == {"c"} and len(todo["c"]) == 3 and "p" not in todo["c"]  # b measured every task; a is decided


def test_why_it_stopped_is_read_from_what_is_stored():
    """compare says why an evaluation run in rounds stands where it does: decided, out of tasks,
    or neither (a limit its last round recorded, or an interruption), as the loop said."""
    from benchtape.replay.sequential import DECIDED, EXHAUSTED, why_stopped

    tasks = [f"t{i}" for i in range(10)]
    apart = {"a": dict.fromkeys(tasks, (1, 1)), "b": dict.fromkeys(tasks, (1, 0))}  # A better on all 10: E far past 20
    assert why_stopped(state(["a", "b"], apart, 1), tasks, apart, 1) == DECIDED
    alike = {"a": dict.fromkeys(tasks, (1, 1)), "b": dict.fromkeys(tasks, (1, 1))}  # every task run, no difference
    assert why_stopped(state(["a", "b"], alike, 1), tasks, alike, 1) == EXHAUSTED
    halfway = {arm: dict(list(counts.items())[:4]) for arm, counts in alike.items()}
    said = why_stopped(state(["a", "b"], halfway, 1), tasks, halfway, 1, {"max_cells": 8, "budget": None})
    assert said.startswith("not decided: 1 neighbouring pair(s) undecided") and "its limit (--max-cells 8)" in said
    assert "an interruption (no --max-cells or --budget was given)" in why_stopped(state(["a", "b"], halfway, 1), tasks, halfway, 1)
