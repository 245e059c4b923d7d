"""Composite checks on real mock sessions: aggregation, weights, child errors, nesting,
and the negative control."""

from __future__ import annotations

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog

CONTROL = CheckContext(control=True)
YES = {"type": "contains", "value": "PASS"}  # passes on the session below
NO = {"type": "contains", "value": "FAIL"}  # fails on it
HALF = {"type": "rouge-n", "value": "PASS everything", "threshold": 0.9}  # scores 0.5, fails


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("s"), [{"say": "PASS"}], metrics={"cost_usd": 0.5, "duration_ms": 100})


@pytest.fixture(scope="module")
def unmetered(tmp_path_factory):
    return mock_session(tmp_path_factory.mktemp("u"), [{"say": "PASS"}])


def children_of(result):
    return [(c["type"], c["status"], c["score"]) for c in result.evidence["children"]]


# ---------------------------------------------------------------- assert-set


def test_assert_set_default_threshold_is_all(session):
    r = grade({"type": "assert-set", "checks": [YES, NO]}, session)
    assert not r.passed and r.score == 0.5
    assert r.evidence["threshold"] == 1.0 and r.evidence["passed_weight"] == 1.0 and r.evidence["total_weight"] == 2.0
    assert children_of(r) == [("contains", "PASS", 1.0), ("contains", "FAIL", 0.0)]
    assert grade({"type": "assert-set", "checks": [YES, YES]}, session).passed


def test_assert_set_weights_and_threshold(session):
    r = grade({"type": "assert-set", "threshold": 0.7, "checks": [{**YES, "weight": 3}, NO]}, session)
    assert r.passed and r.score == 0.75
    assert r.evidence["children"][0]["weight"] == 3.0
    r = grade({"type": "assert-set", "threshold": 0.8, "checks": [{**YES, "weight": 3}, NO]}, session)
    assert not r.passed and "1 of 2 children passed" in r.reason


# ---------------------------------------------------------------- any-of / not-any-of


def test_any_of(session):
    r = grade({"type": "any-of", "checks": [NO, HALF, YES]}, session)
    assert r.passed and r.score == 1.0 and r.evidence["passed"] == ["contains"]
    r = grade({"type": "any-of", "checks": [NO, HALF]}, session)
    assert not r.passed and r.score == 0.5 and r.evidence["passed"] == []


def test_not_any_of(session):
    r = grade({"type": "not-any-of", "checks": [NO, HALF]}, session)
    assert r.passed and r.score == 0.5
    r = grade({"type": "not-any-of", "checks": [NO, YES]}, session)
    assert not r.passed and r.score == 0.0 and "forbidden and passed: contains" in r.reason


# ---------------------------------------------------------------- select-best / max-score / compare


def test_select_best_always_passes_and_weights_pick(session):
    r = grade({"type": "select-best", "checks": [NO, HALF]}, session)
    assert r.passed and r.score == 0.5 and r.evidence["best"] == "rouge-n" and r.evidence["best_index"] == 1
    r = grade({"type": "select-best", "checks": [HALF, NO]}, session)
    assert r.evidence["best_index"] == 0


def test_weights_mapping_overrides_child_weight(session):
    checks = [{**HALF, "weight": 5}, {"type": "levenshtein", "value": "PASSxx", "threshold": 4}]  # 0.5 vs 1 - 2/4 = 0.5
    r = grade({"type": "select-best", "checks": checks}, session)
    assert r.evidence["best"] == "rouge-n"  # weight 5 wins
    r = grade({"type": "select-best", "args": {"weights": {"rouge-n": 1, "levenshtein": 2}}, "checks": checks}, session)
    assert r.evidence["best"] == "levenshtein" and r.evidence["children"][0]["weight"] == 1.0
    r = grade({"type": "select-best", "value": {"levenshtein": 9}, "checks": checks}, session)
    assert r.evidence["best"] == "levenshtein"


def test_max_score(session):
    r = grade({"type": "max-score", "checks": [NO, HALF]}, session)
    assert r.passed and r.score == 0.5 and r.evidence["method"] == "average" and r.evidence["aggregate"] == 0.25
    r = grade({"type": "max-score", "args": {"method": "sum"}, "checks": [YES, HALF]}, session)
    assert r.evidence["aggregate"] == 1.5 and r.score == 1.0
    r = grade({"type": "max-score", "checks": [NO, NO]}, session)
    assert not r.passed and r.score == 0.0
    r = grade({"type": "max-score", "threshold": 0.6, "checks": [NO, HALF]}, session)
    assert not r.passed and r.evidence["threshold"] == 0.6


def test_compare_single_session_beats_an_absent_opponent(session):
    r = grade({"type": "compare", "checks": [YES, HALF]}, session)
    assert r.passed and r.score == 0.75 and r.evidence["providers"] == 1 and "single session" in r.reason
    r = grade({"type": "compare", "checks": [NO, NO]}, session)
    assert not r.passed and r.score == 0.0  # never a vacuous pass
    r = grade({"type": "compare", "threshold": 0.8, "args": {"weights": {"rouge-n": 3}}, "checks": [YES, HALF]}, session)
    assert r.score == pytest.approx((1 + 0.5 * 3) / 4) and not r.passed


# ---------------------------------------------------------------- errors


def test_child_error_names_the_child(unmetered):
    r = grade({"type": "assert-set", "checks": [YES, {"type": "cost", "threshold": 1}]}, unmetered)
    assert r.status == "ERROR"
    assert r.reason.startswith('assert-set: child "cost": cost: the harness reported no cost')
    assert children_of(r) == [("contains", "PASS", 1.0), ("cost", "ERROR", 0.0)]
    r = grade({"type": "any-of", "checks": [YES, {"type": "cost", "threshold": 1}]}, unmetered)
    assert r.status == "ERROR" and r.reason.startswith('any-of: child "cost"')


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "assert-set"}, "assert-set: no child checks ('checks' is empty)"),
        ({"type": "compare", "checks": []}, "compare: no child checks"),
        ({"type": "any-of", "checks": [{"type": "regex", "value": "("}]}, 'any-of: child "regex" (#1): regex: bad regex'),
        ({"type": "any-of", "checks": [{"type": "nope"}]}, 'any-of: child "nope" (#1): unknown check type "nope"'),
        ({"type": "assert-set", "checks": [{**YES, "weight": -1}]}, 'assert-set: child "contains" has a negative weight -1'),
        ({"type": "assert-set", "checks": [{**YES, "weight": 0}]}, "assert-set: the children's weights add up to 0"),
        ({"type": "assert-set", "threshold": 2, "checks": [YES]}, "assert-set: 'threshold' is a score bar in [0, 1]"),
        ({"type": "max-score", "args": {"method": "median"}, "checks": [YES]}, "max-score: args.method must be average or sum, got 'median'"),
        ({"type": "select-best", "args": {"weights": {"regex": 2}}, "checks": [YES]}, "select-best: weights name ['regex'], which no child has"),
        ({"type": "compare", "args": {"weights": [1]}, "checks": [YES]}, "compare: weights must be a mapping"),
        ({"type": "assert-set", "args": {"weights": {"contains": 2}}, "checks": [YES]}, "assert-set: args.weights is read only by select-best, max-score and compare; put weight: on each child instead"),
        ({"type": "any-of", "checks": [{"type": "any-of", "checks": []}]}, 'any-of: child "any-of" (#1): any-of: no child checks'),
        ({"type": "any-of", "checks": [{"type": "assert-set", "checks": [{"type": "llm-rubric", "value": "x", "args": {"votes": 2}}]}]}, "args.votes must be a positive odd integer, got 2"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


# ---------------------------------------------------------------- nesting


def test_nested_composite_keeps_its_children(session):
    nested = {"type": "any-of", "checks": [NO, {"type": "assert-set", "checks": [YES, {"type": "starts-with", "value": "PA"}]}]}
    built = build(spec(nested))
    assert len(built.spec.checks[1].checks) == 2
    r = built.evaluate(session, CheckContext())
    assert r.passed and r.score == 1.0
    assert children_of(r) == [("contains", "FAIL", 0.0), ("assert-set", "PASS", 1.0)]
    # and the grandchildren really decide it: break one and the nested set fails
    broken = {"type": "any-of", "checks": [NO, {"type": "assert-set", "checks": [YES, {"type": "starts-with", "value": "XX"}]}]}
    r = grade(broken, session)
    assert not r.passed and r.evidence["children"][1]["score"] == 0.5


def test_nested_child_error_propagates(unmetered):
    r = grade({"type": "not-any-of", "checks": [NO, {"type": "assert-set", "checks": [{"type": "cost", "threshold": 1}]}]}, unmetered)
    assert r.status == "ERROR" and r.reason.startswith('not-any-of: child "assert-set": assert-set: child "cost"')


# ---------------------------------------------------------------- the negative control


def test_only_latency_and_cost_is_not_applicable_under_control(session):
    only = {"type": "assert-set", "checks": [{"type": "latency", "threshold": 1000}, {"type": "cost", "threshold": 1}]}
    assert grade(only, session, CONTROL).status == "NA"
    assert grade(only, session).status == "PASS"  # outside the control it grades
    nested = {"type": "any-of", "checks": [only, {"type": "cost", "threshold": 0.1}]}
    assert grade(nested, session, CONTROL).status == "NA"


def test_mixed_composite_grades_the_applicable_children_under_control(session):
    mixed = {"type": "assert-set", "checks": [NO, {"type": "latency", "threshold": 1000}]}
    r = grade(mixed, session, CONTROL)
    assert r.status == "FAIL" and r.score == 0.0  # the latency child is left out, not counted as a pass
    assert children_of(r) == [("contains", "FAIL", 0.0), ("latency", "NA", 0.0)]
    r = grade(mixed, session)
    assert r.status == "FAIL" and r.score == 0.5


def test_six_composites():
    assert {t for t, i in catalog().items() if i.family == "Composite"} == {"assert-set", "any-of", "not-any-of", "select-best", "max-score", "compare"}
