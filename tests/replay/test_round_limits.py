"""--until-decided's limits: a round is trimmed to what --max-cells and --budget leave —
whole tasks dropped from the end of the task order, from every setup at once (a task one
setup of a pair measures alone is left out of the comparison: spend for nothing) — and a
setup with no stored cost stops a budgeted run before it spends."""

from __future__ import annotations

import pytest

from benchtape.app.evaluation_rounds import Rounds, Until, _limits, _within_limits, preview_limits


def test_a_budget_trims_whole_tasks_and_then_stops_it():
    todo = {"a": ["t1", "t2", "t3"], "b": ["t1", "t2", "t3"]}
    costs = {"spent": 0.50, "per_cell": {"a": 0.10, "b": 0.20}}
    # $1 budget, $0.50 spent: $0.50 left; a task costs 0.10 + 0.20 = $0.30 for both setups
    plan, why = _within_limits(todo, Until(budget=1.0), 1, Rounds("e"), costs, ["t1", "t2", "t3"])
    assert why == "" and plan == {"a": ["t1"], "b": ["t1"]}  # never t2 for b alone: a would not measure it
    plan, why = _within_limits(todo, Until(budget=0.75), 1, Rounds("e"), costs)
    assert plan == {} and why == "budget: $0.5000 of $0.75 spent; the next task (2 cell(s): 2 setup(s) × 1 attempt(s)) would pass it"


def test_max_cells_counts_a_tasks_cells_across_the_setups():
    todo = {"a": ["t1", "t2"], "b": ["t1", "t2"]}
    done = Rounds("e", cells_run=4)
    plan, why = _within_limits(todo, Until(max_cells=8), 2, done, {"spent": 0.0, "per_cell": {}})
    assert plan == {"a": ["t1"], "b": ["t1"]} and why == ""  # 4 run + 1 task × 2 setups × 2 attempts = 8
    plan, why = _within_limits(todo, Until(max_cells=7), 2, done, {"spent": 0.0, "per_cell": {}})
    assert plan == {} and why == "max cells: 4 of --max-cells 7 run; the next task needs 4 more (2 setup(s) × 2 attempt(s))"
    plan, why = _within_limits(todo, Until(budget=5.0), 1, Rounds("e"), {"spent": 0.0, "per_cell": {"a": 0.1, "b": None}})
    assert plan == {} and "no stored cost per cell for 1 setup(s)" in why


def test_the_user_report_three_cells_never_split_a_task():
    """`--max-cells 3` with two setups used to run one task for a and two for b: b's second
    was measured by b alone. Trimmed by whole tasks in the evaluation's order, a task a setup
    already measured (here b's t0) still completes its pair."""
    order = ["t0", "t1", "t2", "t3", "t4", "t5"]
    todo = {"a": ["t0", "t1", "t2", "t3", "t4"], "b": ["t1", "t2", "t3", "t4", "t5"]}
    plan, why = _within_limits(todo, Until(max_cells=3), 1, Rounds("e"), {"spent": 0.0, "per_cell": {}}, order)
    assert why == "" and plan == {"a": ["t0", "t1"], "b": ["t1"]}
    tasks = {arm: set(ts) for arm, ts in plan.items()}
    assert all(t in tasks["a"] for t in tasks["b"])  # every task b runs, a runs or had


def test_the_preview_says_at_most_what_the_limit_leaves():
    doc = {"to_run": 8, "setups": [{"key": "a", "to_run": 4}, {"key": "b", "to_run": 3}, {"key": "oracle", "to_run": 1}]}
    found = preview_limits(doc, Until(max_cells=3), {"a", "b"})
    assert found["at_most_cells"] == 3 and found["fixed_design_cells"] == 8
    assert preview_limits(doc, Until(), {"a", "b"})["at_most_cells"] == 7  # controls are not run in rounds
    assert _limits(Until(max_cells=3)) == ", when the next round would pass --max-cells 3 (new cells), or when the tasks run out"
    assert "at at" not in _limits(Until(max_cells=3, budget=2.0))


def test_the_preview_line_in_rounds():
    from benchtape.render_evaluation import _would_run

    doc = {"to_run": 8, "measured": 0, "until_decided": {"max_cells": 3, "at_most_cells": 3, "fixed_design_cells": 8}}
    assert _would_run(doc).startswith("would run at most 3 cell(s), in rounds (--until-decided, --max-cells 3)")
    assert _would_run({"to_run": 8, "measured": 2}).startswith("would run 8 cell(s); 2 measured")


@pytest.mark.parametrize("plain", [True, False])
def test_a_note_in_brackets_is_printed_as_written(plain, capsys):
    """A preview note naming a task.toml table (`[environment] network_mode = "public"`) lost its
    `[environment]`: rich read it as a style tag. Nothing benchtape prints is markup."""
    from benchtape.render_evaluation import preview

    doc = {
        "evaluation": "e", "path": "/p/e.yaml", "cells": 1, "tasks": ["t"], "setups": [], "attempts": 1, "versions": [], "fresh": False,
        "installs": [], "estimate": {"usd": 0.0, "floor": False, "known_cells": 1}, "problems": [], "to_run": 1, "measured": 0,
        "notes": ['task.toml:27: [environment] network_mode = "public" gives the agent the network [bold]as written[/bold]'],
    }
    preview(doc, plain, False)
    printed = " ".join(capsys.readouterr().out.split())  # a terminal's width wraps it
    assert '[environment] network_mode = "public" gives the agent the network [bold]as written[/bold]' in printed, printed
