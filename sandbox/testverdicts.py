"""Per-test validation and verdicts, as SWE-bench keeps them: FAIL_TO_PASS and PASS_TO_PASS.

At `task validate`: a test that failed (or errored, or was not there) at base + tests and
passed in every run with the reference is FAIL_TO_PASS; one that passed in both is
PASS_TO_PASS; one whose outcome flipped between the reference's runs is flaky and in
neither; one that failed in the whole suite at the base is in neither (it was broken before
the change). At grading: a candidate passes when every FAIL_TO_PASS test passes and no
PASS_TO_PASS test breaks, whatever the exit status of a run that also holds tests broken
before; the share of FAIL_TO_PASS tests passed is kept beside the verdict, never as it.

Pure: reports in, lists out.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from benchtape.sandbox.testreports import ERROR, FAILED, PASSED, SKIPPED, TestReport


@dataclass
class Split:
    """What validation learned, test by test."""

    fail_to_pass: list[str] = field(default_factory=list)
    pass_to_pass: list[str] = field(default_factory=list)
    flaky: dict[str, list[str]] = field(default_factory=dict)  # id → its outcome in each reference run
    changing: dict[str, int] = field(default_factory=dict)  # a test whose parametrized ids change from run to run → how many ids it had
    skipped_at_base: dict[str, str] = field(default_factory=dict)  # id → the reason the runner gave
    broken_before: list[str] = field(default_factory=list)  # failed in the base's whole suite: in neither list
    fails_alone: list[str] = field(default_factory=list)  # failed in the verify command at the base, passed in its whole suite
    fail_with_fix: list[str] = field(default_factory=list)  # failed (or errored) with the fix in every reference run: in neither list

    def to_dict(self) -> dict[str, Any]:
        return {
            "fail_to_pass": self.fail_to_pass,
            "pass_to_pass": len(self.pass_to_pass),
            "flaky": self.flaky,
            "changing_ids": self.changing,
            "skipped_at_base": self.skipped_at_base,
            "broken_before": self.broken_before,
            "fails_alone": self.fails_alone,
            "fail_with_fix": self.fail_with_fix,
        }


def split_tests(base: TestReport, references: Sequence[TestReport], suite: TestReport | None = None) -> Split:
    """FAIL_TO_PASS, PASS_TO_PASS and the tests that are in neither (and why), from the base
    run, each reference run, and (when it ran) the base's whole suite."""
    out = Split()
    ids = sorted(set(base.tests).union(*(r.tests for r in references)))
    changing = _changing_ids([set(r.tests) for r in references])
    for test_id in ids:
        runs = [r.tests[test_id].outcome if test_id in r.tests else "absent" for r in references]
        if test_id in changing:
            stem = _stem(test_id)
            out.changing[stem] = out.changing.get(stem, 0) + 1
            continue
        if len(set(runs)) > 1:
            out.flaky[test_id] = runs
            continue
        at_base = base.tests.get(test_id)
        if at_base is not None and at_base.outcome == SKIPPED:
            out.skipped_at_base[test_id] = at_base.message or "(no reason given)"
        if runs[0] in (FAILED, ERROR):
            out.fail_with_fix.append(test_id)
        if runs[0] != PASSED:
            continue
        if at_base is None or at_base.outcome in (FAILED, ERROR):
            whole = suite.tests.get(test_id) if suite is not None else None
            if whole is not None and whole.outcome == PASSED and at_base is not None:
                out.fails_alone.append(test_id)
            else:
                out.fail_to_pass.append(test_id)
        elif at_base.outcome == PASSED:
            whole = suite.tests.get(test_id) if suite is not None else None
            if whole is not None and whole.outcome in (FAILED, ERROR):
                out.broken_before.append(test_id)
            else:
                out.pass_to_pass.append(test_id)
    return out


def _stem(test_id: str) -> str:
    """A parametrized test's id without its parameters: `test_x[2026-12-05 22:07:12]` → `test_x`."""
    return test_id.split("[", 1)[0]


def _changing_ids(runs: list[set[str]]) -> set[str]:
    """Parametrized ids that some reference runs lack, of a test every run has such ids of: the
    test's parameters are made anew at each collection (marshmallow's datetime tests take the
    current time), so its ids never meet those of a later run. Not flaky: nothing flipped."""
    if len(runs) < 2:
        return set()
    common = set.intersection(*runs)
    odd = [{i for i in run - common if "[" in i} for run in runs]
    stems = set.intersection(*({_stem(i) for i in ids} for ids in odd))
    return {i for ids in odd for i in ids if _stem(i) in stems}


@dataclass(frozen=True)
class PerTestVerdict:
    """A candidate's run against the validation's lists: the tests that decided it."""

    passed: bool
    fail_to_pass_passed: list[str]
    fail_to_pass_failed: list[str]  # failed, errored, skipped or not run
    pass_to_pass_broken: list[str]
    share: float  # FAIL_TO_PASS passed / (FAIL_TO_PASS + PASS_TO_PASS broken): partial credit, never the verdict
    ran: int | None = None  # the tests the run's report holds: none is a run that tested nothing
    pass_to_pass: int = 0  # how many PASS_TO_PASS tests there were: what "none broke" covered

    def reason(self) -> str:
        total = len(self.fail_to_pass_passed) + len(self.fail_to_pass_failed)
        if self.passed:
            # the PASS_TO_PASS tests are those of the files the hidden tests change (SWE-bench's),
            # not the whole suite: a candidate that breaks code only other files test passes
            return f"every FAIL_TO_PASS test passed ({total}) and none of the {self.pass_to_pass} PASS_TO_PASS test(s) broke (the tests of the files the task's tests change; the rest of the suite is not run)"
        if self.ran == 0:  # "broke" would say the candidate broke tests that never ran
            return f"no test ran, so none of the {total} FAIL_TO_PASS test(s) passed (nor did the {len(self.pass_to_pass_broken)} PASS_TO_PASS test(s) run)"
        parts = []
        if self.fail_to_pass_failed:
            parts.append(f"{len(self.fail_to_pass_failed)} of {total} FAIL_TO_PASS test(s) did not pass: {_names(self.fail_to_pass_failed)}")
        if self.pass_to_pass_broken:
            parts.append(f"{len(self.pass_to_pass_broken)} PASS_TO_PASS test(s) broke: {_names(self.pass_to_pass_broken)}")
        return "; ".join(parts)

    def to_dict(self) -> dict[str, Any]:
        return {
            "passed": self.passed,
            "fail_to_pass_passed": self.fail_to_pass_passed,
            "fail_to_pass_failed": self.fail_to_pass_failed,
            "pass_to_pass_broken": self.pass_to_pass_broken,
            "fail_to_pass_share": round(self.share, 4),
        }


def judge_tests(report: TestReport, fail_to_pass: Sequence[str], pass_to_pass: Sequence[str]) -> PerTestVerdict:
    """A candidate's verdict from its run's report: every FAIL_TO_PASS test passed (a test not
    run counts as not passed) and every PASS_TO_PASS test still passes."""
    outcome = {i: t.outcome for i, t in report.tests.items()}
    if report.source == "go-verbose":
        # a Go test named alike in two packages is `package::name` since such reports name them
        # apart; a validation of before holds the bare name, which stands for the worst of them
        for test_id in (*fail_to_pass, *pass_to_pass):
            if test_id not in outcome:
                alike = [o for i, o in outcome.items() if i.endswith("::" + test_id)]
                if alike:
                    outcome[test_id] = PASSED if all(o == PASSED for o in alike) else FAILED
    good = [t for t in fail_to_pass if outcome.get(t) == PASSED]
    bad = [t for t in fail_to_pass if outcome.get(t) != PASSED]
    broken = [t for t in pass_to_pass if outcome.get(t) != PASSED]
    # partial credit: each PASS_TO_PASS test broken counts as one more test the fix failed, so
    # a failed verdict never scores 1.0 (a fix that passed its own tests and broke another read
    # "FAIL 1.00", and compare's partial column ranked it with the correct fixes)
    share = len(good) / (len(fail_to_pass) + len(broken)) if fail_to_pass else 0.0
    return PerTestVerdict(not bad and not broken and bool(fail_to_pass), good, bad, broken, share, len(outcome), len(pass_to_pass))


def _names(ids: Sequence[str], most: int = 5) -> str:
    shown = ", ".join(ids[:most])
    return shown + (f" and {len(ids) - most} more" if len(ids) > most else "")
