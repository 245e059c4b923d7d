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
    assert only["sentence"] == f"{A} and {B} are not distinguishable on these tasks (p = 0.25; {needed_to_differ(3, 0)} tasks where they differ would be needed at this rate, more than the 3 compared: these tasks cannot decide them)"
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


def _measured(outcomes: dict[tuple[str, str], str], partial: dict[tuple[str, str], float] | None = None) -> list:
    """Measurements by hand: (arm, task) → outcome, one attempt each (and the FAIL_TO_PASS
    share a verifier recorded, where given)."""
    from benchtape.replay.compare import Measurement

    shares = partial or {}
    return [Measurement(f"{arm}-{task}", "r", arm, task, 1, None, None, float(i), outcome=outcome, partial=shares.get((arm, task))) for i, ((arm, task), outcome) in enumerate(outcomes.items())]


THREE_WAY = {(arm, f"t{i}"): ("failed" if arm == "c" else "passed") for arm in "abc" for i in range(6)}  # a and b pass all 6 tasks, c none


def test_the_tasks_needed_count_for_the_test_in_force():
    """6 tasks one way: the unadjusted sign test calls it (p = 0.031), Holm over 3 pairs does
    not (the other 6–0 pair at 0.031 and a tie: 7 are needed), and the rounds' e-value test at
    its bar E ≥ 3/0.05 = 60 needs 9."""
    from benchtape.replay.conclusions import p_in_force
    from benchtape.replay.sequential import e_value

    assert needed_to_differ(6, 0) == 6
    holm = p_in_force("sign", [sign_test(6, 0), 1.0])
    assert needed_to_differ(6, 0, p_of=holm) == 7 and holm(6, 0) >= 0.05 > holm(7, 0)
    rounds = p_in_force("e-value", [1.0, 1.0])
    assert needed_to_differ(6, 0, p_of=rounds) == 9 and e_value(8, 0) < 60 <= e_value(9, 0)
    assert needed_to_differ(1, 0, p_of=p_in_force("e-value")) == 7  # one pair: the bar is 20


def test_compare_says_the_count_of_the_adjusted_test():
    from benchtape.replay.compare import compare

    result = compare(_measured(THREE_WAY), {}, title="t", evaluation=None)
    sentence = result.conclusions[-1]["sentence"]
    assert "Holm-adjusted over 3 pairs" in sentence and "7 tasks where they differ would be needed" in sentence


def test_in_rounds_the_pairs_are_called_as_the_rounds_stop():
    """An evaluation run in rounds: p = 1/E, Bonferroni over the pairs (m/E, the rounds' bar
    E ≥ m/α), "would be needed" counts for that test, and the fixed-design interval that
    excludes 0 on a 6–0 split says why it disagrees with the call."""
    from benchtape.replay.compare import compare, pair_line
    from benchtape.replay.sequential import e_value

    result = compare(_measured(THREE_WAY), {}, title="t", evaluation=None, common_only=True)
    apart = [p for p in result.pairs if {p.a, p.b} != {"a", "b"}]
    assert all(p.test == "e-value" and p.adjustment == "Bonferroni" for p in result.pairs)
    assert all(p.p_adjusted == pytest.approx(3 / e_value(6, 0)) and not p.distinguishable for p in apart)
    assert all(p.ci[0] > 0 and p.ci_note and "fixed-design interval" in p.ci_note for p in apart)
    assert "fixed-design 95% CI" in pair_line(apart[0]) and "Bonferroni-adjusted p" in pair_line(apart[0])
    assert "Bonferroni-adjusted" in (result.correction or "") and "E ≥ 60" in (result.correction or "")
    sentence = result.conclusions[-1]["sentence"]
    assert "Bonferroni-adjusted over 3 pairs" in sentence and "9 tasks where they differ would be needed" in sentence
    assert all(d["ci_note"] and d["adjustment"] == "Bonferroni" for d in result.to_dict()["pairs"] if {d["a"], d["b"]} != {"a", "b"})


def test_partial_credit_counts_a_cell_that_changed_nothing_as_zero():
    """A setup that changes nothing fixed no FAIL_TO_PASS test: 0, not left out (it scored
    above one that tried). Tasks whose verifier records no share stay out, as do execution
    failures (they are not measurements)."""
    from benchtape.replay.compare import compare

    outcomes = {("try", "t1"): "failed", ("try", "t2"): "failed", ("try", "t3"): "failed"}
    outcomes |= {("idle", "t1"): "no_changes", ("idle", "t2"): "guard_violation", ("idle", "t3"): "no_changes"}
    shares = {("try", "t1"): 0.5, ("try", "t2"): 0.0}  # t3 reports no share: no per-test lists
    measurements = _measured(outcomes, shares) + _measured({("try", "t4"): "timeout"})
    result = compare(measurements, {}, title="t", evaluation=None)
    by_arm = {r.arm: r for r in result.rows}
    assert by_arm["try"].partial == pytest.approx(0.25) and by_arm["idle"].partial == 0.0


def test_a_solver_cell_whose_patch_is_not_the_oracles_is_named_though_it_passed():
    """tomli #103: Claude Code and mini-swe-agent could not play the fix's hunk in a CRLF file
    and aider rewrote that file as LF; each solver cell passed (the hidden tests do not touch
    the file), and nothing said the fix was not carried. A full solver's candidate must be the
    oracle's: one that is not is named, whatever its verdict; the partial solver never is."""
    from benchtape.replay.compare import Measurement, compare, notes

    def cell(arm: str, task: str, outcome: str, candidate: str) -> Measurement:
        return Measurement(f"{arm}-{task}", "r", arm, task, 1, None, None, 0.0, outcome=outcome, candidate=candidate)

    measured = [cell("oracle", "103", "passed", "fix"), cell("claude", "103", "passed", "fix-less-a-hunk"), cell("codex", "103", "passed", "fix"), cell("partial", "103", "failed", "first-hunk")]
    step = lambda model, tool="claude-code": {"steps": [{"tool": tool, "model_id": model}]}  # noqa: E731 - an arm as a run archives it
    arms = {"oracle": step("reference", "oracle"), "claude": step("scripted-solver"), "codex": step("scripted-solver", "codex"), "partial": step("scripted-solver-partial")}
    result = compare(measured, arms, title="t", evaluation=None)
    assert result.uncarried == [{"setup": "claude", "task": "103", "session": "claude-103", "outcome": "passed"}], result.uncarried
    said = [n for n in notes(result) if "did not carry the known fix as written" in n]
    assert len(said) == 1 and "claude on task 103 (passed, session claude-103)" in said[0], said
    without_oracle = compare([m for m in measured if m.arm != "oracle"], arms, title="t", evaluation=None)
    assert without_oracle.uncarried == []  # no known fix measured: nothing to hold a solver's patch to


def test_a_partial_solver_that_changed_nothing_anywhere_is_said_to_have_tested_nothing():
    """slugify's fixes were one edit each, so `solver-partial` (a fix's first edit only, none of
    a fix of one) was no_changes on every task and compare ranked it beside the solver with
    nothing said (newcomer pass); one that failed somewhere tested something and is not named."""
    from benchtape.replay.compare import Measurement, compare, notes

    def cell(arm: str, task: str, outcome: str) -> Measurement:
        return Measurement(f"{arm}-{task}", "r", arm, task, 1, None, None, 0.0, outcome=outcome)

    step = lambda model: {"steps": [{"tool": "claude-code", "model_id": model}]}  # noqa: E731 - an arm as a run archives it
    arms = {"solver": step("scripted-solver"), "partial": step("scripted-solver-partial")}
    idle = [cell("solver", t, "passed") for t in ("36", "69")] + [cell("partial", t, "no_changes") for t in ("36", "69")]
    result = compare(idle, arms, title="t", evaluation=None)
    assert result.idle_partial == ["partial"] and any("partial changed nothing on any task" in n and "tested nothing" in n for n in notes(result)), notes(result)
    working = compare([*idle[:3], cell("partial", "69", "failed")], arms, title="t", evaluation=None)
    assert working.idle_partial == []
