"""String checks on sessions the real mock agent recorded: a pass and a fail for each
type, the refusals at construction, and the evidence each reports."""

from __future__ import annotations

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.registry import CheckConfigError, build

OUT = "Done: All 3 tests pass (fizz, Buzz). 42"


@pytest.fixture(scope="module")
def silent(tmp_path_factory):
    """A run that only used a tool and said nothing: no final output at all."""
    s = mock_session(tmp_path_factory.mktemp("silent"), [{"tool": "Glob", "input": {"pattern": "*"}}])
    assert s.final_output is None
    return s


# (type, value, passes on OUT, fails on OUT)
CASES = [
    ("equals", OUT, True),
    ("equals", "Done", False),
    ("not-equals", "Done", True),
    ("not-equals", OUT, False),
    ("contains", "3 tests pass", True),
    ("contains", "3 tests failed", False),
    ("not-contains", "TODO", True),
    ("not-contains", "fizz", False),
    ("icontains", "ALL 3 TESTS", True),
    ("icontains", "all 4 tests", False),
    ("starts-with", "Done:", True),
    ("starts-with", "All", False),
    ("ends-with", "42", True),
    ("ends-with", "Buzz", False),
    ("regex", r"\d+ tests pass", True),
    ("regex", r"^\d+ tests", False),
    ("not-regex", r"(?i)error", True),
    ("not-regex", r"B[u]zz", False),
    ("contains-any", ["nope", "fizz"], True),
    ("contains-any", "nope, FIZZ", False),
    ("contains-all", ["fizz", "Buzz"], True),
    ("contains-all", "fizz, buzz", False),
    ("icontains-any", "nope, FIZZ", True),
    ("icontains-any", ["nope", "never"], False),
    ("icontains-all", "FIZZ, buzz, done", True),
    ("icontains-all", ["fizz", "bazz"], False),
    ("equals", 42, False),  # a YAML number is read as its text
    ("ends-with", 42, True),
]


@pytest.mark.parametrize("type,value,passes", CASES, ids=[f"{t}-{i}" for i, (t, _, _) in enumerate(CASES)])
def test_pass_and_fail(said, type, value, passes):
    r = grade({"type": type, "value": value}, said(OUT))
    assert r.passed is passes, r.reason
    assert r.score == (1.0 if passes else 0.0)
    assert r.status == ("PASS" if passes else "FAIL")
    assert r.evidence["output_chars"] == len(OUT)


def test_every_string_type_is_covered():
    from benchtape.checks.registry import catalog

    mine = {t for t, i in catalog().items() if i.family == "String"}
    assert mine == {c[0] for c in CASES}
    assert len(mine) == 13


def test_missing_output_reads_as_empty(silent):
    assert grade({"type": "equals", "value": ""}, silent).passed
    assert not grade({"type": "contains", "value": "x"}, silent).passed
    assert grade({"type": "not-contains", "value": "x"}, silent).passed
    r = grade({"type": "regex", "value": "^$"}, silent)
    assert r.passed and r.evidence["output_chars"] == 0


def test_noop_run_fails_a_real_needle(tmp_path):
    noop = mock_session(tmp_path, noop=True, prompt="make the tests pass")
    assert noop.final_output == "make the tests pass"
    assert not grade({"type": "contains", "value": "All tests pass"}, noop).passed


def test_case_folding_is_unicode_aware(said):
    r = grade({"type": "icontains", "value": "STRASSE"}, said("die Straße"))
    assert r.passed and r.evidence["position"] is None  # folding changed lengths: no honest offset
    assert grade({"type": "icontains", "value": "STRASSE"}, said("die strasse")).evidence["position"] == 4


@pytest.mark.parametrize(
    "type,value,message",
    [
        ("contains", None, "contains: 'value' is required"),
        ("equals", None, "equals: 'value' is required"),
        ("contains", "", "contains: 'value' is empty"),
        ("starts-with", ["a"], "starts-with: 'value' must be a string, got a list"),
        ("regex", "(unclosed", "regex: bad regex '(unclosed'"),
        ("not-regex", "a{2,1}", "not-regex: bad regex"),
        ("contains-any", None, "contains-any: 'value' is required"),
        ("contains-all", " , ,", "contains-all: 'value' names nothing to look for"),
        ("icontains-all", [], "icontains-all: 'value' names nothing to look for"),
        ("icontains-any", {"a": 1}, "icontains-any: 'value' must be a list or a comma-separated string"),
        ("contains-all", [["nested"]], "contains-all: 'value' must be a string"),
    ],
)
def test_refused_at_construction(type, value, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec({"type": type, "value": value}))
    assert message in str(exc.value)


def test_evidence(said):
    s = said(OUT)
    r = grade({"type": "contains", "value": "tests"}, s)
    assert r.evidence == {"output_chars": len(OUT), "needle": "tests", "found": True, "position": OUT.index("tests")}
    r = grade({"type": "equals", "value": "x"}, s)
    assert set(r.evidence) == {"output_chars", "expected", "equal"} and r.evidence["equal"] is False
    r = grade({"type": "regex", "value": r"(\d+) tests"}, s)
    assert r.evidence["match"] == "3 tests" and r.evidence["span"] == [10, 17] and r.evidence["pattern"] == r"(\d+) tests"
    r = grade({"type": "not-regex", "value": "zzz"}, s)
    assert r.evidence["matched"] is False and r.evidence["match"] is None
    r = grade({"type": "icontains-all", "value": "FIZZ, nope, buzz"}, s)
    assert r.evidence["matched"] == ["FIZZ", "buzz"] and r.evidence["missing"] == ["nope"]
    assert "missing 1 of 3: 'nope'" in r.reason
    r = grade({"type": "ends-with", "value": "42"}, s)
    assert r.evidence["position"] == len(OUT) - 2


EVIDENCE_KEYS = {
    "equals": {"output_chars", "expected", "equal"},
    "not-equals": {"output_chars", "expected", "equal"},
    "contains": {"output_chars", "needle", "found", "position"},
    "not-contains": {"output_chars", "needle", "found", "position"},
    "icontains": {"output_chars", "needle", "found", "position"},
    "starts-with": {"output_chars", "needle", "found", "position"},
    "ends-with": {"output_chars", "needle", "found", "position"},
    "regex": {"output_chars", "pattern", "matched", "match", "span"},
    "not-regex": {"output_chars", "pattern", "matched", "match", "span"},
    "contains-any": {"output_chars", "needles", "matched", "missing"},
    "contains-all": {"output_chars", "needles", "matched", "missing"},
    "icontains-any": {"output_chars", "needles", "matched", "missing"},
    "icontains-all": {"output_chars", "needles", "matched", "missing"},
}


@pytest.mark.parametrize("type", sorted(EVIDENCE_KEYS))
def test_evidence_keys(said, type):
    r = grade({"type": type, "value": "fizz"}, said(OUT))
    assert set(r.evidence) == EVIDENCE_KEYS[type]


@pytest.mark.parametrize(
    "type, pattern, output, passes",
    [
        ("not-regex", "done$", "done\n", True),  # `$` is the end of the output (Python's re matched before the newline)
        ("regex", "^[[:alpha:]]+$", "abc", True),  # a POSIX class (Python's re read a nested set)
        ("not-regex", r"^\w+$", "café", True),  # \w is ASCII
        ("not-regex", r"\d", "٣", True),  # \d is ASCII
        ("regex", r"^\p{Lu}", "Ábc", True),
        ("regex", "b(?i)C", "abc", True),  # a flag group mid-pattern
        ("regex", r"\QÁb\E", "xÁb", True),
        ("regex", r"x\z", "x", True),
    ],
)
def test_regexes_mean_what_they_mean_in_madbench(said, type, pattern, output, passes):
    """madbench compiles `regex`/`not-regex` with Go's regexp (RE2): each of these gave the
    opposite verdict, or a refusal, under Python's re."""
    r = grade({"type": type, "value": pattern}, said(output))
    assert r.passed is passes, r.reason


def test_a_regex_go_refuses_is_refused_at_construction_by_name():
    for pattern in (r"(a)\1", "a(?=b)"):
        with pytest.raises(CheckConfigError, match="RE2 syntax, as madbench's: no backreferences or lookaround"):
            build(spec({"type": "regex", "value": pattern}))
