"""`compare` says what it found: conclusion sentences, shared ranks, pass^k, the flaky list and
the task × setup matrix, from cells with known outcomes recorded into a real store."""

from __future__ import annotations

from pathlib import Path

import pytest
from cellkit import record_all
from evalkit import evaluation, make_project

from benchtape.replay.compare import comparison
from benchtape.replay.conclusions import needed_to_differ, pass_hat_k
from benchtape.replay.stats import sign_test
from benchtape.spec.evaluation import load_evaluation
from benchtape.spec.pricing import load_pricing
from benchtape.store.database import Store

A = "claude-code@latest sonnet-4.6/medium"
B = "codex@latest gpt-5.5/medium"


def _setup(tmp_path: Path, attempts: int, tasks: int):
    project = make_project(tmp_path / "proj")
    evaluation(project, "e", f"attempts: {attempts}\ntools:\n  - {{tool: claude-code, model: sonnet-4.6, effort: medium}}\n  - {{tool: codex, model: gpt-5.5, effort: medium}}\n")
    ev = load_evaluation("e", project, user=tmp_path / "user")
    return project, ev, Store(tmp_path / "db.sqlite"), load_pricing(project, tmp_path / "user")


def test_equal_pass_rates_share_a_rank_and_are_called_indistinguishable(tmp_path):
    project, ev, store, pricing = _setup(tmp_path, 1, 3)
    tasks = [t.id for t in ev.tasks()]
    # A passes task 0, B passes task 1: 1/3 each, they differ on two tasks, one each way
    outcomes = {(A, tasks[0], 1): "passed", (A, tasks[1], 1): "failed", (A, tasks[2], 1): "failed"}
    outcomes |= {(B, tasks[0], 1): "failed", (B, tasks[1], 1): "passed", (B, tasks[2], 1): "failed"}
    record_all(store, ev, outcomes, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    assert [r.rank for r in result.ranked] == [1, 1]
    (only,) = result.conclusions
    assert only["shared_rank"] is True and only["p_value"] == 1.0
    assert "are not distinguishable on these tasks (p = 1" in only["sentence"]
    assert "split evenly: no number of tasks would separate them" in only["sentence"]
    assert any("rank 1 is shared" in n for n in __import__("benchtape.replay.compare", fromlist=["notes"]).notes(result))


def test_a_difference_the_test_cannot_confirm_shares_the_rank(tmp_path):
    project, ev, store, pricing = _setup(tmp_path, 1, 3)
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(A, t, 1): "passed" for t in tasks} | {(B, t, 1): "failed" for t in tasks}
    record_all(store, ev, outcomes, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    # 3/3 against 0/3 looks ranked 1 and 2, but the sign test cannot tell them apart: one rank
    assert [r.rank for r in result.ranked] == [1, 1]
    (only,) = result.conclusions
    assert only["shared_rank"] is True and only["distinguishable"] is False
    # 3 wins to 0: p = 0.25, not significant: the sentence says how many differing tasks it would take
    assert only["sentence"] == f"{A} and {B} are not distinguishable on these tasks (p = 0.25; {needed_to_differ(3, 0)} tasks where they differ would be needed at this rate)"
    assert needed_to_differ(3, 0) == 6 and sign_test(6, 0) < 0.05 and sign_test(5, 0) >= 0.05


def test_the_sentence_for_a_real_difference():
    from benchtape.replay.compare import Pair
    from benchtape.replay.conclusions import conclusion

    pair = Pair("a", "b", tasks=12, mean_difference=0.5, a_wins=7, b_wins=0, ties=5, p_value=sign_test(7, 0))
    assert conclusion(pair, "A", "B", attempts=1) == "A solves 7 more of 12 common tasks than B (paired sign test p = 0.016)"
    # the sentence follows the evidence, not the display order
    flipped = Pair("b", "a", tasks=12, mean_difference=-0.5, a_wins=0, b_wins=7, ties=5, p_value=sign_test(0, 7))
    assert conclusion(flipped, "B", "A", attempts=1).startswith("A solves 7 more")


def test_pass_hat_k_the_flaky_list_and_the_matrix(tmp_path):
    project, ev, store, pricing = _setup(tmp_path, 2, 3)
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(A, t, n): "passed" for t in tasks for n in (1, 2)}
    outcomes[(A, tasks[2], 2)] = "failed"  # A is flaky on the third task
    outcomes |= {(B, t, n): "failed" for t in tasks for n in (1, 2)}
    outcomes[(B, tasks[0], 1)] = "passed"  # B flaky on the first
    record_all(store, ev, outcomes, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    a = next(r for r in result.ranked if r.label == A)
    b = next(r for r in result.ranked if r.label == B)
    assert a.pass_hat_k == pytest.approx((1 + 1 + 0) / 3) and b.pass_hat_k == pytest.approx(0.0)
    assert pass_hat_k([(2, 1), (2, 2)], 2) == pytest.approx(0.5) and pass_hat_k([(1, 1)], 2) is None
    assert sorted((f.task, f.arm, f.outcomes) for f in result.flaky) == sorted([(tasks[2], a.arm, ["passed", "failed"]), (tasks[0], b.arm, ["passed", "failed"])])
    cells = result.matrix[tasks[2]][a.arm]
    assert [(c.attempt, c.outcome, c.measured) for c in cells] == [(1, "passed", True), (2, "failed", True)]
    assert all(c.session_id for c in cells)
    doc = result.to_dict()
    assert doc["matrix"][tasks[2]][a.arm][1]["outcome"] == "failed" and doc["flaky"] and doc["conclusions"]


def test_execution_failures_are_shown_apart_from_failures(tmp_path):
    project, ev, store, pricing = _setup(tmp_path, 1, 3)
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(A, t, 1): "passed" for t in tasks} | {(B, t, 1): "failed" for t in tasks}
    record_all(store, ev, outcomes, cost=0.01)
    record_all(store, ev, {(B, tasks[0], 1): "timeout"}, cost=0.01)  # a later attempt that measured nothing
    result = comparison(store, ["e"], pricing, project)
    b = next(r for r in result.rows if r.label == B)
    assert b.failures_by_outcome == {"timeout": 1} and b.outcomes == {"failed": 3}
    cells = result.matrix[tasks[0]][b.arm]
    assert [(c.outcome, c.measured) for c in cells] == [("failed", True), ("timeout", False)]
