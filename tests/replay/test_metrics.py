"""The declared metrics' arithmetic and sources, over projected sessions (no store)."""

from __future__ import annotations

import pytest

from benchtape.core.model import Action, project
from benchtape.replay.metrics import Accumulator, aggregate, measure, schema
from benchtape.spec.arith import ExpressionError, parse


@pytest.mark.parametrize(
    "source,scope,value",
    [
        ("Consistency * 2", {"Consistency": 0.4}, 0.8),
        ("-7 % 3", {}, -1.0),  # JavaScript's remainder keeps the dividend's sign
        ("7 % -3", {}, 1.0),
        ("a / 0", {"a": 1.0}, None),  # Infinity: missing, never a number
        ("Math.round(2.5) + Math.max(a, b)", {"a": 1.0, "b": 3.0}, 6.0),
        ("a > 0.5 ? 1 : 0", {"a": 0.7}, 1.0),
        ("(a + b) / 2", {"a": 1.0, "b": None}, None),  # a check that measured nothing leaves the blend missing
        ("2 ** 3 ** 2", {}, 512.0),
        ("a && b", {"a": 0.0, "b": 5.0}, 0.0),
        ("a || b", {"a": 0.0, "b": 5.0}, 5.0),
    ],
)
def test_javascript_arithmetic(source, scope, value):
    assert parse(source).evaluate(scope) == value


@pytest.mark.parametrize("source,what", [('"x"', "strings"), ("foo(1)", "only Math.*"), ("a = 1", "'='"), ("Math.random()", "Math.random is not one of"), ("a +", "ends too soon"), ("(a", "expected ')'")])
def test_anything_beyond_the_arithmetic_is_refused_with_where(source, what):
    with pytest.raises(ExpressionError, match=None) as exc:
        parse(source)
    assert what in str(exc.value) and "column" in str(exc.value)


def _session(steps: list[Action]):
    actions = [Action("session.started", {"scenario": "s", "prompt": "p"}), Action("message.user", {"text": "p"}), *steps, Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 100.0})]
    for i, a in enumerate(actions, 1):
        a.seq, a.at = i, float(i)
    return project(actions)


def test_sources_read_the_session_and_unknown_is_never_zero():
    s = _session([
        Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {}}),
        Action("tool.result", {"call_id": "c1", "output": "x", "is_error": None}),
        Action("metrics", {"tokens_in": 10, "tokens_out": 5}),
    ])
    specs = [
        {"name": "cost", "source": "session.cost"},
        {"name": "tokens", "source": "session.tokens"},
        {"name": "calls", "source": "session.steps.all"},
        {"name": "agent", "source": "session.steps.agent", "key": "Explore"},
        {"name": "turns", "source": "session.turns"},
        {"name": "plugins", "source": "session.plugins_reported"},
        {"name": "took", "source": "action.duration", "aggregate": "max"},
    ]
    got = measure(specs, [], s, []).values
    assert got == {"cost": None, "tokens": 15.0, "calls": 1.0, "agent": None, "turns": 1.0, "plugins": None, "took": 1000.0}


def test_check_sources_and_derived_metrics_read_the_verdicts():
    s = _session([])
    verdicts = [
        {"type": "levenshtein", "metric": "Consistency", "status": "PASS", "score": 0.9, "evidence": {"raw_distance": 2}},
        {"type": "contains", "metric": None, "status": "FAIL", "score": 0.0, "evidence": {}},
        {"type": "cost", "metric": None, "status": "ERROR", "score": 0.0, "evidence": {}},
    ]
    specs = [{"name": "rate", "source": "check.pass_rate"}, {"name": "c", "source": "check.score", "check": "Consistency"}, {"name": "d", "source": "check.evidence", "key": "raw_distance", "aggregate": "max"}]
    derived = [{"name": "x", "value": "Consistency + contains"}, {"name": "y", "value": "cost * 2"}, {"name": "z", "value": "Nope + 1"}]
    m = measure(specs, derived, s, verdicts)
    assert m.values == {"rate": 0.5, "c": 0.9, "d": 2.0, "x": 0.9, "y": None, "z": None}  # an ERROR check has no score
    assert "Nope is not the name of a check of this scenario" in m.errors["z"]


def test_the_built_in_schema_and_aggregates():
    assert [m["name"] for m in schema(None)] == ["cost", "duration", "tokens", "turns"]
    assert aggregate("sum", []) == 0.0 and aggregate("sum", [None]) is None and aggregate("mean", [None]) is None and aggregate("min", [3.0, None, 1.0]) == 1.0
    acc = Accumulator()
    for v in (1.0, None, 3.0):
        acc.add(v)
    assert (acc.value("mean"), acc.value("sum"), acc.value("max"), acc.missing) == (2.0, 4.0, 3.0, 1)


@pytest.mark.parametrize(("model", "cost"), [("scripted", 0.0), ("mock-solver", 0.0), ("claude-sonnet-4-6", 0.008), (None, 0.008)])
def test_the_cost_metric_is_what_the_session_spent_as_sessions_and_compare_say_it(model, cost):
    """A scripted model's pretend tokens cost nothing (spec/pricing.reported_cost): the report
    summed Claude Code's own 0.008 for them while `sessions` and `compare` said $0."""
    actions = [Action("session.started", {"scenario": "s", "prompt": "p", **({"model": model} if model else {})}), Action("metrics", {"cost_usd": 0.008}), Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 100.0})]
    for i, a in enumerate(actions, 1):
        a.seq = i
    assert measure(None, [], project(actions), []).values["cost"] == cost
