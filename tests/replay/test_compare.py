"""`compare` over cells recorded into a real store: correctness first, cost and the rest only
over tasks every ranked setup measured, unknown cost null, honest statistics."""

from __future__ import annotations

from pathlib import Path

import pytest
from cellkit import record_all, record_cell, start_run
from evalkit import evaluation, make_project

from benchtape.core.model import Action
from benchtape.replay.compare import comparison, read_measurements
from benchtape.replay.stats import pass_at_k, sign_test, wilson
from benchtape.spec.evaluation import Cell, load_evaluation
from benchtape.spec.pricing import load_pricing
from benchtape.store.database import Store

A = "claude-code@latest sonnet-4.6/medium"
B = "codex@latest gpt-5.5/medium"
C = "claude-code@latest sonnet-5/medium"  # an overlay model nobody has priced
TASKS = ("fix-add", "fix-sub", "explain")
BLOCKS = """
attempts: 2
tools:
  - {tool: claude-code, model: [sonnet-4.6, sonnet-5], effort: medium}
  - {tool: codex, model: gpt-5.5, effort: medium}
"""


@pytest.fixture
def setup(tmp_path: Path):
    project = make_project(tmp_path / "proj")
    evaluation(project, "e", BLOCKS)
    ev = load_evaluation("e", project, user=tmp_path / "user")
    store = Store(tmp_path / "db.sqlite")
    return project, ev, store, load_pricing(project, tmp_path / "user")


def grid(label: str, passes: dict[tuple[str, int], bool]) -> dict:
    return {(label, t, n): ("passed" if passes.get((t, n)) else "failed") for t in TASKS for n in (1, 2)}


def test_ranks_by_correctness_with_intervals_pass_at_k_and_a_paired_test(setup):
    project, ev, store, pricing = setup
    cells = {**grid(A, {(t, n): True for t in TASKS for n in (1, 2)} | {("explain", 2): False}), **grid(B, {("fix-add", 1): True, ("explain", 1): True})}
    cells.update({(C, t, n): "passed" for t in TASKS for n in (1, 2)})
    record_all(store, ev, cells, cost=0.05)
    result = comparison(store, ["e"], pricing, project)
    assert [r.label for r in result.ranked] == [C, A, B]
    c, a, b = result.ranked
    assert (a.passes, a.cells, a.pass_rate) == (5, 6, 5 / 6)
    assert a.ci == pytest.approx(wilson(5, 6)) and a.ci[0] < 5 / 6 < a.ci[1]
    assert a.pass_at_1 == pytest.approx((1 + 1 + 0.5) / 3) and a.pass_at_k == pytest.approx(1.0)
    assert b.pass_at_k == pytest.approx((1 + 0 + 1) / 3)
    pair = next(p for p in result.pairs if (p.a, p.b) == (a.arm, b.arm))
    # per task: fix-add 1 vs 0.5, fix-sub 1 vs 0, explain 0.5 vs 0.5 → A better twice, one tie
    assert (pair.a_wins, pair.b_wins, pair.ties, pair.tasks) == (2, 0, 1, 3)
    assert pair.mean_difference == pytest.approx((0.5 + 1 + 0) / 3)
    assert pair.p_value == pytest.approx(0.5)
    assert result.cost_ranked and a.cost_per_cell == pytest.approx(0.05) and a.cost_total == pytest.approx(0.30)
    assert result.to_dict()["ranked"][0]["priced"] is True


def test_a_measurement_keeps_the_price_it_was_graded_with(setup):
    """berbench: a run archives its resolved configuration, so later edits to global files
    (pricing.yaml) cannot rewrite history. A cell's cost is what its first grading priced it at;
    a re-grading under new prices, or compare under them, leaves it; a cell nobody could price
    when it was measured is priced now (that fills a gap, it rewrites nothing)."""
    project, ev, store, pricing = setup
    run_id = record_all(store, ev, {**grid(A, {}), **grid(C, {})}, cost=None)
    before = {r.label: r.cost_per_cell for r in comparison(store, ["e"], pricing, project).ranked}
    assert before[C] is None and before[A] is not None and before[A] != pytest.approx(0.5)
    live, regrade = (store.new_grading(source, checkset_sha256="c", catalog_version="v") for source in ("live", "regrade"))
    for row in store.session_rows(run_id=run_id):  # as CellGrader records them: the price then, then a re-grading's under new prices
        store.add_outcome(live, row.id, "failed", "", {"cost_usd": 0.5, "source": "live"})
        store.add_outcome(regrade, row.id, "failed", "", {"cost_usd": 0.9, "source": "regrade"})
    after = {r.label: r.cost_per_cell for r in comparison(store, ["e"], pricing, project).ranked}
    assert after[A] == pytest.approx(0.5) and after[C] == pytest.approx(0.5)


def test_setups_missing_tasks_are_listed_with_the_command_that_fills_them(setup):
    project, ev, store, pricing = setup
    cells = {**grid(A, {}), **{(B, "fix-add", 1): "passed"}}
    record_all(store, ev, cells, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    assert [r.label for r in result.ranked] == [A]
    unranked = {r.label: r for r in result.unranked}
    assert unranked[B].missing == ["fix-sub", "explain"] and unranked[B].tasks_measured == 1
    assert unranked[B].fill == "benchtape run e --task fix-sub --task explain"
    assert unranked[C].missing == list(TASKS) and unranked[C].fill == "benchtape run e" and unranked[C].cells == 0
    assert result.pairs == []


def test_unknown_cost_is_null_never_zero_and_does_not_rank(setup):
    project, ev, store, pricing = setup
    record_all(store, ev, {**grid(A, {}), **grid(C, {})}, cost=None)  # no reported cost: sonnet-4.6 is priced, sonnet-5 is not
    result = comparison(store, ["e"], pricing, project)
    rows = {r.label: r for r in result.ranked}
    assert rows[C].cost_total is None and rows[C].cost_per_cell is None and rows[C].unpriced_cells == 6
    # pricing.yaml × (1000 in, 200 out, 5000 cache read, 800 cache write) at sonnet-4.6 rates
    expected = (1000 * 3 + 200 * 15 + 5000 * 0.3 + 800 * 3.75) / 1e6
    assert rows[A].cost_per_cell == pytest.approx(expected) and rows[A].unpriced_cells == 0
    assert not result.cost_ranked
    doc = result.to_dict()
    row_c = next(r for r in doc["ranked"] if r["label"] == C)
    assert row_c["cost_total"] is None and row_c["priced"] is False


def test_execution_failures_are_attempts_not_measurements_and_the_latest_measurement_counts(setup):
    project, ev, store, pricing = setup
    first = record_all(store, ev, {**grid(A, {}), (B, "fix-add", 1): "timeout", (B, "fix-sub", 1): "adapter_error"}, cost=0.01)
    record_all(store, ev, {(A, "fix-add", 1): "passed", (B, "fix-add", 1): "passed"}, cost=0.01)  # a later run fills and re-measures
    result = comparison(store, ["e"], pricing, project)
    a = next(r for r in result.rows if r.label == A)
    b = next(r for r in result.rows if r.label == B)
    assert a.passes == 1 and a.cells == 6  # the re-measurement replaced the first fix-add #1
    assert b.missing == ["fix-sub", "explain"] and b.attempted_failures == 2 and b.outcomes == {"passed": 1}
    only_first = comparison(store, [first], pricing, project)  # one run: only what it measured
    assert next(r for r in only_first.rows if r.label == A).passes == 0
    assert only_first.title == f"runs {first}"


def test_a_regrading_outcome_replaces_the_earlier_one(setup):
    project, ev, store, pricing = setup
    run = start_run(store, ev)
    arm = next(a for a in ev.arms if a.label == A)
    sid = record_cell(store, run, ev, Cell(arm, ev.tasks()[0], 1), "failed", cost=0.01)
    regrade = store.new_grading("regrade", checkset_sha256="fixed", catalog_version="1")
    store.add_outcome(regrade, sid, "passed", "re-graded with the fixed check")
    (m,) = read_measurements(store, pricing, evaluation="e")[0]
    assert m.outcome == "passed" and m.reason == "re-graded with the fixed check"


def test_measurements_of_an_edited_task_are_stale(setup):
    project, ev, store, pricing = setup
    record_all(store, ev, {**grid(A, {}), **grid(B, {})}, cost=0.01)
    bench = project / "madbench.yaml"
    bench.write_text(bench.read_text().replace("say what calc does", "say what calc.py does"))
    result = comparison(store, ["e"], pricing, project)
    assert result.stale == 4 and result.ranked == []
    assert all(r.missing == ["explain"] for r in result.rows if r.label in (A, B))
    evaluation(project, "e", BLOCKS.replace("[sonnet-4.6, sonnet-5]", "sonnet-5"))  # A is no longer asked for
    result = comparison(store, ["e"], pricing, project)
    assert result.retired == 6 and A not in [r.label for r in result.rows]


def _workflow(tmp_path):
    """A project whose evaluation runs one two-step workflow (plan, then build), its store, its
    pricing and a started run."""
    project = make_project(tmp_path / "proj")
    evaluation(project, "w", "tools:\n  - {tool: plan-build, steps: {plan: {model: opus-4.6}, build: {model: sonnet-4.6}}}\n")
    ev = load_evaluation("w", project, user=tmp_path / "user")
    store = Store(tmp_path / "db.sqlite")
    return ev, store, load_pricing(project, tmp_path / "user"), start_run(store, ev)


def test_a_workflow_costs_the_sum_of_its_steps(tmp_path):
    ev, store, pricing, run = _workflow(tmp_path)
    tasks = ev.tasks()
    record_cell(store, run, ev, Cell(ev.arms[0], tasks[0], 1), "passed", step_costs=[0.10, 0.02], wall_ms=1000)
    record_cell(store, run, ev, Cell(ev.arms[0], tasks[1], 1), "failed", step_costs=[0.10, None], tokens=None)
    measurements, arms = read_measurements(store, pricing, evaluation="w")
    by_task = {m.task: m for m in measurements}
    assert by_task["fix-add"].steps == 2 and by_task["fix-add"].cost == pytest.approx(0.12) and by_task["fix-add"].wall_ms == 2000
    assert by_task["fix-sub"].cost is None and by_task["fix-sub"].tokens is None
    assert arms[ev.arms[0].key]["label"].startswith("plan-build@latest plan=claude-code:opus-4.6")


def test_compare_without_the_evaluation_file_uses_the_store(setup):
    project, ev, store, pricing = setup
    record_all(store, ev, {**grid(A, {}), **grid(B, {("fix-add", 1): True})}, cost=0.01)
    ev.path.unlink()
    result = comparison(store, ["e"], pricing, project)
    assert [r.label for r in result.ranked] == [B, A] and result.tasks == sorted(TASKS)


def test_statistics():
    assert wilson(0, 10)[0] == 0.0 and 0.27 < wilson(0, 10)[1] < 0.28
    assert wilson(10, 10)[1] == 1.0 and wilson(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    assert wilson(0, 0) is None
    assert pass_at_k(10, 3, 1) == pytest.approx(0.3)
    assert pass_at_k(5, 0, 3) == 0.0 and pass_at_k(5, 3, 3) == 1.0 and pass_at_k(2, 1, 3) is None
    assert pass_at_k(4, 1, 2) == pytest.approx(1 - 3 / 6)
    assert sign_test(0, 0) == 1.0 and sign_test(6, 0) == pytest.approx(2 / 64)
    assert sign_test(9, 1) == pytest.approx(2 * 11 / 1024) and sign_test(5, 5) == 1.0
    assert 0 < sign_test(600, 400) < 1e-9


def test_the_sign_test_beyond_its_exact_range_agrees_with_the_exact_sum():
    """Past EXACT_UP_TO discordant pairs the tail is summed in floating point from log-gamma
    (the fast path "tasks that would be needed" and the planner use up to 10,000 pairs): it
    must agree with the exact rational sum, on both sides of the switch, near p = 1, near
    alpha and far in the tail."""
    from fractions import Fraction

    from benchtape.replay.stats import EXACT_UP_TO

    def exact(wins: int, losses: int) -> Fraction:
        # the binomial terms each from the last, in integers (exact as math.comb per term, which
        # took ~10 s of the suite at n = 10,000)
        n, low = wins + losses, min(wins, losses)
        term = total = 1
        for i in range(low):
            term = term * (n - i) // (i + 1)
            total += term
        return min(Fraction(1), 2 * Fraction(total, 2**n))

    for n, low in [(EXACT_UP_TO, 470), (EXACT_UP_TO + 1, 470), (EXACT_UP_TO + 1, 0), (1500, 700), (2000, 1000), (5000, 2400), (10_000, 4918), (10_000, 4000)]:
        want, got = exact(low, n - low), sign_test(low, n - low)
        assert abs(Fraction(got) - want) <= want * Fraction(1, 10**9), (n, low, float(want), got)
        assert sign_test(n - low, low) == got  # two-sided: the order of wins and losses does not matter


def test_one_attempt_shows_pass_at_1_once_in_every_renderer():
    """pass@k with k = 1 is pass@1: the terminal and HTML tables (one list of columns) show it once."""
    from benchtape.replay.compare import columns

    assert columns(1).count("pass@1") == 1 and not [c for c in columns(1) if c.startswith("pass@") and c != "pass@1"]
    assert columns(3)[3:7] == ["ci95", "se", "pass@1", "pass@3"] and "se" not in columns(1)  # the clustered SE with several attempts only


def _reparsed(store: Store, session_id: str, *, metrics: dict | None) -> str:
    """What `benchtape reparse` stores: a new session of the same run, cell, attempt and params,
    naming the recording as its parent, re-derived actions (here `metrics`, when the parser
    found any) and the recording's own `session.finished`."""
    row = store.session_row(session_id)
    assert row is not None
    finished = next(a for a in store.actions(session_id) if a.kind == "session.finished")
    new = store.new_session(
        row.run_id, row.scenario, cell_id=row.cell_id, attempt=row.attempt, harness=row.harness, model=row.model, params=row.params, parent_session=session_id, source=f"reparse:{session_id}"
    )
    derived = [Action("metrics", metrics)] if metrics is not None else []
    store.append(new, [Action("session.started", {"scenario": row.scenario, "reparsed_from": session_id}), *derived, Action("session.finished", finished.data)])
    return new


def test_a_reparse_is_another_reading_of_the_recording_never_an_extra_step(setup):
    project, ev, store, pricing = setup
    run = start_run(store, ev)
    arm = next(a for a in ev.arms if a.label == A)
    sid = record_cell(store, run, ev, Cell(arm, ev.tasks()[0], 1), "passed", cost=0.01, tokens=(1000, 200, 0, 0), wall_ms=5000)
    (before,) = read_measurements(store, pricing, evaluation="e")[0]
    _reparsed(store, sid, metrics={"tokens_in": 1000, "tokens_out": 200, "cost_usd": 0.01})
    again = _reparsed(store, sid, metrics=None)  # a second reading that found no metrics: the recording's stand
    _reparsed(store, again, metrics={"tokens_in": 1100, "tokens_out": 200, "cost_usd": 0.01})  # a reparse of a reparse: the newest reading's figures
    (m,) = read_measurements(store, pricing, evaluation="e")[0]
    assert (m.session_id, m.steps, m.outcome, m.wall_ms, m.started_at) == (before.session_id, 1, "passed", 5000, before.started_at)  # graded once, on the recording
    assert (m.tokens, m.cost) == (1300, pytest.approx(0.01))


def test_a_reparsed_workflow_step_stays_one_step(tmp_path):
    ev, store, pricing, run = _workflow(tmp_path)
    root = record_cell(store, run, ev, Cell(ev.arms[0], ev.tasks()[0], 1), "passed", step_costs=[0.10, 0.02], wall_ms=1000)
    build = next(sid for sid in store.cell_session_ids(run, store.session_row(root).cell_id, 1) if sid != root)
    _reparsed(store, root, metrics={"cost_usd": 0.10})
    _reparsed(store, build, metrics={"cost_usd": 0.03})
    (m,) = read_measurements(store, pricing, evaluation="w")[0]
    assert (m.session_id, m.steps, m.outcome, m.wall_ms) == (root, 2, "passed", 2000)
    assert m.cost == pytest.approx(0.13)
