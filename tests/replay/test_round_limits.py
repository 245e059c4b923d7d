"""--until-decided's limits: a round is trimmed to what --max-cells and --budget leave (tasks
dropped from the end, taking turns between setups), and a setup with no stored cost stops a
budgeted run before it spends."""

from __future__ import annotations

from benchtape.app.evaluation_rounds import Rounds, Until, _within_limits


def test_a_budget_trims_the_round_and_then_stops_it():
    todo = {"a": ["t1", "t2", "t3"], "b": ["t1", "t2", "t3"]}
    costs = {"spent": 0.50, "per_cell": {"a": 0.10, "b": 0.20}}
    # $1 budget, $0.50 spent: $0.50 left; the whole round would cost 3 × 0.10 + 3 × 0.20 = $0.90
    plan, why = _within_limits(todo, Until(budget=1.0), 1, Rounds("e"), costs)
    assert why == "" and sum(costs["per_cell"][arm] * len(ts) for arm, ts in plan.items()) <= 0.50
    assert plan == {"a": ["t1"], "b": ["t1", "t2"]}  # 0.10 + 0.40 = 0.50: the longest list loses its last task, in turns
    plan, why = _within_limits(todo, Until(budget=0.55), 1, Rounds("e"), costs)
    assert plan == {} and why.startswith("budget: $0.5000 of $0.55 spent")


def test_max_cells_counts_attempts_and_unknown_cost_stops_a_budget():
    todo = {"a": ["t1", "t2"], "b": ["t1", "t2"]}
    done = Rounds("e", cells_run=4)
    plan, why = _within_limits(todo, Until(max_cells=8), 2, done, {"spent": 0.0, "per_cell": {}})
    assert plan == {"a": ["t1"], "b": ["t1"]} and why == ""  # 4 run + 2 tasks × 2 attempts = 8
    plan, why = _within_limits(todo, Until(max_cells=5), 2, done, {"spent": 0.0, "per_cell": {}})
    assert plan == {} and why == "max cells: 4 of --max-cells 5 run; the next task needs 2 more"
    plan, why = _within_limits(todo, Until(budget=5.0), 1, Rounds("e"), {"spent": 0.0, "per_cell": {"a": 0.1, "b": None}})
    assert plan == {} and "no stored cost per cell for 1 setup(s)" in why
