"""`compare` says what it measured and how sure it is: ranks follow the paired tests (Holm-
adjusted over every pair), controls are never contenders, scripted setups are named so, and
the error bars respect tasks (clustered), pairs (paired intervals) and cost per solved task.
Cells with known outcomes are recorded into a real store; the statistics are checked against
hand computations."""

from __future__ import annotations

import math
import random
from pathlib import Path

import pytest
from cellkit import record_all
from evalkit import evaluation, make_project

from benchtape.replay.compare import comparison, display
from benchtape.replay.compare_html import render
from benchtape.replay.inference import clopper_pearson, clustered_interval, clustered_se, holm, mcnemar_interval, newcombe_paired, paired_interval, ratio_interval, t_quantile
from benchtape.replay.stats import wilson
from benchtape.spec.evaluation import load_evaluation
from benchtape.spec.pricing import load_pricing
from benchtape.store.database import Store

A = "claude-code@latest sonnet-4.6/medium"
B = "codex@latest gpt-5.5/medium"
C = "claude-code@latest opus-4.6/medium"


def _bench(n: int) -> str:
    scenarios = "".join(f"  - {{name: t{i:02d}, prompt: 'task {i}', testdata: calc, checks: [{{type: contains, value: ok}}]}}\n" for i in range(n))
    return f"description: many tasks\nharness: mock\nscenarios:\n{scenarios}"


def _setup(tmp_path: Path, body: str, tasks: int = 12):
    project = make_project(tmp_path / "proj", bench=_bench(tasks))
    evaluation(project, "e", body)
    ev = load_evaluation("e", project, user=tmp_path / "user")
    return project, ev, Store(tmp_path / "db.sqlite"), load_pricing(project, tmp_path / "user")


THREE = "attempts: 1\ntools:\n  - {tool: claude-code, model: [sonnet-4.6, opus-4.6], effort: medium}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n"


@pytest.mark.parametrize("seed", range(6))
def test_ranks_follow_the_sentences_and_holm_adjusts_every_pair(tmp_path, seed):
    """Whatever the outcomes: two neighbours share a rank exactly when their sentence says
    they are not distinguishable, and with three setups every p is Holm-adjusted."""
    project, ev, store, pricing = _setup(tmp_path, THREE, tasks=12)
    rng = random.Random(seed)
    rates = {A: rng.choice([0.1, 0.5, 0.9]), B: rng.choice([0.1, 0.5, 0.9]), C: rng.choice([0.1, 0.5, 0.9])}
    outcomes = {(label, t.id, 1): ("passed" if rng.random() < rate else "failed") for label, rate in rates.items() for t in ev.tasks()}
    record_all(store, ev, outcomes, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    assert len(result.pairs) == 3 and all(p.p_adjusted is not None and p.p_adjusted >= p.p_value for p in result.pairs)
    assert result.correction and "Holm-adjusted" in result.correction
    ranked = result.ranked
    for item, (first, second) in zip(result.conclusions, zip(ranked, ranked[1:])):
        said_apart = "not distinguishable" not in item["sentence"]
        assert item["shared_rank"] is (not said_apart) is (not item["distinguishable"])
        assert (first.rank == second.rank) is (not said_apart)
        assert "Holm-adjusted over 3 pairs" in item["sentence"]
    # the rank is the position of the group's first setup (1, 1, 3)
    for index, row in enumerate(ranked):
        assert row.rank == min(i + 1 for i, r in enumerate(ranked) if r.rank == row.rank) and (index == 0 or row.rank in (ranked[index - 1].rank, index + 1))


def test_a_clear_difference_gets_separate_ranks_and_an_interval(tmp_path):
    project, ev, store, pricing = _setup(tmp_path, "attempts: 1\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n", tasks=12)
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(A, t, 1): "passed" for t in tasks} | {(B, t, 1): ("passed" if i < 2 else "failed") for i, t in enumerate(tasks)}
    record_all(store, ev, outcomes, cost=0.02)
    result = comparison(store, ["e"], pricing, project)
    assert [r.rank for r in result.ranked] == [1, 2]
    (pair,) = result.pairs
    assert pair.p_adjusted is None and pair.distinguishable and result.correction is None
    assert pair.ci == pytest.approx(mcnemar_interval(2, 10, 0, 0)) and 0 < pair.ci[0] < 10 / 12 <= pair.ci[1]
    a = result.ranked[0]
    # cost per solved task: 12 cells at $0.02 over 12 solved; B: 12 × $0.02 over 2 solved
    assert a.cost_per_solved == pytest.approx(0.02) and result.ranked[1].cost_per_solved == pytest.approx(0.12)
    assert result.ranked[1].cost_per_solved_ci[0] < 0.12 < result.ranked[1].cost_per_solved_ci[1]


def test_controls_are_never_contenders_and_scripts_are_named(tmp_path):
    body = "attempts: 1\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: mock, model: [scripted, noop]}\n"
    project, ev, store, pricing = _setup(tmp_path, body, tasks=4)
    labels = [a.label for a in ev.arms]
    agent, scripted, noop = labels
    outcomes = {(agent, t.id, 1): "failed" for t in ev.tasks()} | {(scripted, t.id, 1): "passed" for t in ev.tasks()} | {(noop, t.id, 1): "no_changes" for t in ev.tasks()}
    record_all(store, ev, outcomes, cost=0.0)
    result = comparison(store, ["e"], pricing, project)
    assert [r.label for r in result.ranked] == [scripted, agent]
    assert [r.label for r in result.controls] == [noop] and result.controls[0].rank is None and noop not in [r.label for r in result.unranked]
    assert all(noop not in (p.a, p.b) for p in result.pairs) and len(result.pairs) == 1
    assert result.measured == "mixed" and scripted in result.headline and "pipeline, not an agent" in result.headline
    assert display(result.ranked[0], 1)["setup"] == f"{scripted} [scripted]"
    doc = result.to_dict()
    assert doc["controls"][0]["kind"] == "no-op" and doc["controls"][0]["control"] is True and doc["ranked"][0]["kind"] == "scripted"
    page = render(result)
    assert "Controls (they check the tasks; never ranked)" in page and "pass none" in page and "holds" in page and "pipeline, not an agent" in page


def test_a_comparison_of_scripts_says_it_measured_the_pipeline_at_its_top(tmp_path, capsys):
    from benchtape.render_compare import comparison_table

    project, ev, store, pricing = _setup(tmp_path, "attempts: 1\ntools:\n  - {tool: mock, model: [scripted, noop]}\n", tasks=3)
    scripted, noop = [a.label for a in ev.arms]
    record_all(store, ev, {(scripted, t.id, 1): "passed" for t in ev.tasks()} | {(noop, t.id, 1): "passed" for t in ev.tasks()}, cost=0.0)
    result = comparison(store, ["e"], pricing, project)
    assert result.measured == "pipeline"
    comparison_table(result, plain=True)
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("MEASURED THE PIPELINE — this comparison measured the pipeline, not agents")
    assert "DOES NOT HOLD" in out  # the no-op passed every task: the checks are broken


def test_several_attempts_cluster_by_task(tmp_path):
    """Six tasks × 3 attempts where attempts agree within a task: the clustered interval is
    wider than Wilson over 18 cells that pretends they are independent."""
    project, ev, store, pricing = _setup(tmp_path, "attempts: 3\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n", tasks=6)
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(A, t, n): ("passed" if i % 2 == 0 else "failed") for i, t in enumerate(tasks) for n in (1, 2, 3)}
    outcomes |= {(B, t, n): ("passed" if i == 0 else "failed") for i, t in enumerate(tasks) for n in (1, 2, 3)}
    record_all(store, ev, outcomes, cost=0.01)
    result = comparison(store, ["e"], pricing, project)
    a = next(r for r in result.ranked if r.label == A)
    assert a.se == pytest.approx(clustered_se([(3, 3), (3, 0)] * 3))
    assert a.ci_clustered[1] - a.ci_clustered[0] > a.ci[1] - a.ci[0]
    assert display(a, 3)["ci95"] == f"{a.ci_clustered[0]:.0%}–{a.ci_clustered[1]:.0%}"
    (pair,) = result.pairs
    diffs = [0.0, 0.0, 1.0, 0.0, 1.0, 0.0]  # B passes only task 0, which A passes too
    mean, sd = sum(diffs) / 6, math.sqrt(sum((d - 1 / 3) ** 2 for d in diffs) / 5)
    half = t_quantile(5) * sd / math.sqrt(6)
    assert pair.ci == pytest.approx((mean - half, mean + half))


def test_cache_aware_token_cost(tmp_path):
    """The price table × each token class: cache reads and writes at their own rates."""
    project, ev, store, pricing = _setup(tmp_path, "attempts: 1\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n", tasks=2)
    record_all(store, ev, {(A, t.id, 1): "passed" for t in ev.tasks()}, cost=0.5, tokens=(1000, 200, 5000, 800))
    (row,) = comparison(store, ["e"], pricing, project).ranked
    rates = pricing.rates("claude-sonnet-4-6")
    expected = (1000 * rates.input + 200 * rates.output + 5000 * rates.cache_read + 800 * rates.cache_write) / 1e6
    assert row.token_cost_per_cell == pytest.approx(expected)
    assert row.cache_share == pytest.approx((5000 * rates.cache_read + 800 * rates.cache_write) / 1e6 / expected)
    assert row.cost_per_cell == pytest.approx(0.5)  # what the tool reported still is the cost


def test_the_statistics_by_hand():
    assert t_quantile(4) == pytest.approx(2.7764, abs=2e-4) and t_quantile(10) == pytest.approx(2.2281, abs=2e-4) and t_quantile(30) == pytest.approx(2.0423, abs=2e-4)
    # Holm: sorted p 0.01, 0.02, 0.04 → 0.03, 0.04, 0.04 (monotone), back in the given order
    assert holm([0.04, 0.01, 0.02]) == pytest.approx([0.04, 0.03, 0.04])
    # tasks with (attempts, passes): p = 5/9; residuals c − p n by hand
    p = 5 / 9
    resid = (3 - 3 * p) ** 2 + (2 - 3 * p) ** 2 + (0 - 3 * p) ** 2
    assert clustered_se([(3, 3), (3, 2), (3, 0)]) == pytest.approx(math.sqrt(resid * 3 / 2) / 9)
    assert clustered_se([(3, 3)]) is None
    # every attempt of four tasks passed: the spread is unknown, so the tasks count (never a point)
    assert clustered_interval([(3, 3)] * 4) == pytest.approx(wilson(4, 4))
    # every task passed one of two attempts: no spread between tasks, the cells count
    assert clustered_interval([(2, 1)] * 3) == pytest.approx(wilson(3, 6))
    low, high = newcombe_paired(0, 5, 0, 0)  # five tasks, all won by A: not a point interval
    assert 0 < low < 1 and high == pytest.approx(1.0)
    # t would collapse to a point: Newcombe's over the tasks, never over their attempt cells as if
    # independent (6 tasks × 2 attempts, A passing all 12: from +45%, where counting cells gave +66%)
    assert paired_interval([1.0] * 6, (0, 12, 0, 0), attempts=2) == newcombe_paired(0, 6, 0, 0)
    assert paired_interval([1.0] * 6, (0, 12, 0, 0), attempts=2)[0] == pytest.approx(0.448, abs=1e-3)
    # every task tied, every tie concordant (3 both passed, 3 neither): Newcombe's corrected φ
    # (AD − BC − N/2) leaves an interval, where φ = 1 made it the point 0 to 0
    low, high = paired_interval([0.0] * 6, (6, 0, 0, 6), attempts=2)
    assert low == pytest.approx(-high) and 0.2 < high < 0.4
    # the exact Clopper–Pearson interval by hand: 7 of 8 → (0.4735, 0.9968) (tables), 0 of 10 → (0, 0.3085)
    assert clopper_pearson(7, 8) == pytest.approx((0.47349, 0.99684), abs=1e-4) and clopper_pearson(0, 10) == pytest.approx((0.0, 0.30850), abs=1e-4)
    r, (lo, hi) = ratio_interval([(0.1, 1), (0.3, 0), (0.2, 1)])
    assert r == pytest.approx(0.3) and lo < 0.3 < hi
    assert ratio_interval([(0.1, 0), (0.2, 0)]) is None


def test_with_one_attempt_the_interval_excludes_zero_exactly_when_the_test_calls_a_difference():
    """The paired interval and the exact McNemar test never disagree (every split of up to 60
    discordant tasks, with some tasks both passed and some neither)."""
    from benchtape.replay.stats import sign_test

    for discordant in range(1, 61):
        for only_a in range(discordant + 1):
            only_b = discordant - only_a
            low, high = mcnemar_interval(3, only_a, only_b, 4)
            assert (low > 0 or high < 0) is (sign_test(only_a, only_b) < 0.05), (only_a, only_b)


def test_the_far_bound_carries_the_uncertainty_of_how_many_tasks_differ():
    """The exact conditional interval takes the discordant share as known: when one side wins
    every discordant task its far bound is the estimate itself (3 tasks, A alone solving 2:
    +67% with an upper bound of +67%). The far bound is Newcombe's when wider; zero's side stays
    the exact one (the test's)."""
    low, high = mcnemar_interval(1, 2, 0, 0)
    assert low == pytest.approx(2 / 3 * (2 * clopper_pearson(2, 2)[0] - 1)) and high == pytest.approx(newcombe_paired(1, 2, 0, 0)[1]) and high > 2 / 3 + 0.2
    low, high = mcnemar_interval(1, 0, 2, 0)  # mirrored
    assert high == pytest.approx(2 / 3 * (2 * clopper_pearson(0, 2)[1] - 1)) and low == pytest.approx(newcombe_paired(1, 0, 2, 0)[0]) and low < -2 / 3 - 0.2
    for table in ((7, 7, 1, 5), (50, 30, 10, 10), (3, 10, 0, 2), (3, 5, 5, 4)):
        low, high = mcnemar_interval(*table)
        estimate = (table[1] - table[2]) / sum(table)
        assert low < estimate < high or (table[1] == table[2] and low < 0 < high)


def test_the_worked_example_of_the_docs(tmp_path):
    """docs/evaluations.md's example, recorded into a real store: every figure it quotes."""
    from benchtape.replay.compare import evaluation_plan
    from benchtape.replay.sequential import e_value

    project, ev, store, pricing = _setup(tmp_path, "attempts: 1\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: codex, model: gpt-5.5, effort: medium}\n", tasks=20)
    tasks = [t.id for t in ev.tasks()]
    a_passes, b_passes = set(tasks[:14]), set(tasks[:7]) | {tasks[19]}  # both 7, A alone 7, B alone 1, neither 5
    outcomes = {(A, t, 1): ("passed" if t in a_passes else "failed") for t in tasks} | {(B, t, 1): ("passed" if t in b_passes else "failed") for t in tasks}
    record_all(store, ev, outcomes, cost=0.12)
    result = comparison(store, ["e"], pricing, project)
    a, b = result.ranked
    assert (a.label, display(a, 1)["ci95"], display(b, 1)["ci95"]) == (A, "48%–85%", "22%–61%")
    (pair,) = result.pairs
    assert (pair.a_wins, pair.b_wins, pair.ties, round(pair.p_value, 2)) == (7, 1, 12, 0.07)
    assert (round(pair.ci[0] * 100), round(pair.ci[1] * 100)) == (-2, 51)  # the far bound Newcombe's, with its corrected φ
    assert [r.rank for r in result.ranked] == [1, 1] and "9 tasks where they differ would be needed" in result.conclusions[0]["sentence"]
    assert round(a.cost_per_solved, 2) == 0.17 and (round(a.cost_per_solved_ci[0], 2), round(a.cost_per_solved_ci[1], 2)) == (0.12, 0.23)
    plan = evaluation_plan(store, ev, tasks, 0.10, pricing)
    assert round(plan["mdd"], 2) == 0.46 and 340 <= plan["detect"]["tasks_needed"] <= 360 and plan["detect"]["attempts_needed"] is None
    assert round(e_value(7, 1), 1) == 3.4


def test_after_cutoff_needs_every_setups_cutoff_and_never_guesses_an_undated_task(tmp_path):
    from benchtape.core.errors import BadInput

    body = "attempts: 1\ntools:\n  - {tool: claude-code, model: [sonnet-4.5, haiku-4.5], effort: medium}\n  - {tool: codex, model: gpt-5.4-mini, effort: medium}\n"
    project, ev, store, pricing = _setup(tmp_path, body, tasks=3)
    record_all(store, ev, {(a.label, t.id, 1): "passed" for a in ev.arms for t in ev.tasks()}, cost=0.01)
    with pytest.raises(BadInput, match="none is published for codex@latest gpt-5.4-mini/medium"):
        comparison(store, ["e"], pricing, project, after_cutoff=True)
    # bench scenarios carry no fix commit: nothing is dated, so nothing is flagged, and nothing passes --after-cutoff
    plain = comparison(store, ["e"], pricing, project)
    assert plain.contamination == {} and len(plain.ranked) == 3


def test_what_stands_in_for_a_model():
    from benchtape.spec.agent_kind import agent_kind

    assert agent_kind("claude-code", "claude-sonnet-4-6") is None
    assert agent_kind("claude-code", "scripted") == agent_kind("codex", "scripted-solver") == agent_kind("mock", "mock-solver-partial") == agent_kind("mock", None) == "scripted"
    assert agent_kind("mock", "mock-noop") == agent_kind("claude-code", "scripted", noop=True) == "no-op"
    assert agent_kind("oracle", "oracle") == "oracle"


def test_a_workflow_is_the_no_op_control_only_when_every_step_is_the_no_op():
    """A workflow whose no-op plan step is followed by a working build step is measured by the
    build step: it was taken for the negative control and never ranked."""
    from benchtape.spec.agent_kind import arm_kind

    assert arm_kind([("mock", "noop"), ("claude-code", "claude-sonnet-4-6")]) is None
    assert arm_kind([("mock", "noop"), ("mock", "scripted")]) == "scripted"
    assert arm_kind([("mock", "noop"), ("mock", "mock-noop")]) == "no-op"
    assert arm_kind([("mock", "noop"), ("oracle", "oracle")]) == "oracle"  # the known fix applied: a control, whatever else ran
    assert arm_kind([]) is None


def test_the_terminal_prints_every_bracketed_tag(tmp_path, capsys, monkeypatch):
    """A setup's `[scripted]`, a control's `[control: …]` and a matrix cell's
    `[infrastructure_error]` are data, not rich markup: every print path of `compare` keeps
    them (rich took them for style tags and dropped them, leaving the failed cell empty)."""
    import os
    import subprocess
    import sys

    from benchtape.render_compare import comparison_table

    body = "attempts: 1\ntools:\n  - {tool: claude-code, model: sonnet-4.6, effort: medium}\n  - {tool: mock, model: [scripted, noop]}\n"
    project, ev, store, pricing = _setup(tmp_path, body, tasks=3)
    agent, scripted, noop = [a.label for a in ev.arms]
    tasks = [t.id for t in ev.tasks()]
    outcomes = {(agent, t, 1): ("infrastructure_error" if i == 0 else "passed") for i, t in enumerate(tasks)}
    outcomes |= {(scripted, t, 1): "passed" for t in tasks} | {(noop, t, 1): "no_changes" for t in tasks}
    record_all(store, ev, outcomes, cost=0.0)
    result = comparison(store, ["e"], pricing, project)

    def tagged(out: str) -> None:
        assert f"{scripted} [scripted]" in out  # the ranking's row and the matrix's header
        assert f"{noop} [control: no-op]: 0/3 passed" in out
        matrix = out[out.index("per task × setup (attempts in order; [ ] not measured)"):]
        assert f"{tasks[0]}  " in matrix and "[infrastructure_error]" in matrix.splitlines()[2]

    monkeypatch.setenv("COLUMNS", "400")  # rich's own width off a terminal: rows unwrapped, to be read whole
    for plain in (True, False):
        comparison_table(result, plain=plain)
        tagged(capsys.readouterr().out)
    store.close()
    for args in (["--plain"], []):  # the command itself, with --plain and with no terminal
        env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "user"), "COLUMNS": "400"}
        done = subprocess.run([sys.executable, "-m", "benchtape", "compare", "e", "--db", str(tmp_path / "db.sqlite"), *args], cwd=project, capture_output=True, text=True, timeout=120, env=env)
        assert done.returncode == 0, done.stderr
        tagged(done.stdout)
