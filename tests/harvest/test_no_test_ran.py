"""A run that tested nothing (pytest's exit 4 or 5: a path not there, nothing collected) fails
every FAIL_TO_PASS test, and says that none ran: "5 PASS_TO_PASS test(s) broke" blamed the
candidate for tests that never ran (a newcomer's edited verify command on boltons)."""

from __future__ import annotations

from benchtape.sandbox.testreports import TestReport, TestResult
from benchtape.sandbox.testverdicts import judge_tests


def test_a_run_that_ran_no_test_fails_and_says_none_ran():
    judged = judge_tests(TestReport("pytest", "junit", {}), ["t::a", "t::b"], ["t::c", "t::d", "t::e"])
    assert not judged.passed and judged.ran == 0
    assert judged.reason() == "no test ran, so none of the 2 FAIL_TO_PASS test(s) passed (nor did the 3 PASS_TO_PASS test(s) run)"
    assert "broke" not in judged.reason()


def test_a_run_that_ran_some_still_names_what_broke():
    ran = {"t::a": TestResult("t::a", "passed"), "t::c": TestResult("t::c", "failed")}
    judged = judge_tests(TestReport("pytest", "junit", ran), ["t::a"], ["t::c"])
    assert not judged.passed and judged.ran == 2 and judged.reason() == "1 PASS_TO_PASS test(s) broke: t::c"
