"""Matchers for tool-args-match expectations and file-read values."""

from __future__ import annotations

import pytest

from benchtape.checks.matchers import MatcherError, compile_matcher, value_matches


@pytest.mark.parametrize(
    "pattern, actual, hit",
    [
        ("src/app.py", "src/app.py", True),
        ("src/app.py", "/w/src/app.py", False),  # no prefix: exact
        ("exact:glob:x", "glob:x", True),  # exact: escapes a literal that looks like a matcher
        ("exact:glob:x", "x", False),
        ("suffix:app.py", "/w/src/app.py", True),
        ("suffix:app.py", "app.pyc", False),
        ("contains:/src/", "/w/src/app.py", True),
        ("contains:/lib/", "/w/src/app.py", False),
        ("https://x.test/a", "https://x.test/a", True),  # an unknown prefix stays a literal
        ("glob:src/*.py", "src/app.py", True),
        ("glob:src/*.py", "src/sub/app.py", False),  # * stays within a segment
        ("glob:src/**/*.py", "src/sub/deep/app.py", True),  # ** crosses segments
        ("glob:src/**/*.py", "src/app.py", True),  # **/ may match no directory
        ("glob:**/SKILL.md", "/tmp/run/skills/security/SKILL.md", True),
        ("glob:**/SKILL.md", "/tmp/run/SKILL.md.bak", False),  # anchored at the end
        ("glob:*.md", "docs/a.md", False),  # anchored at the start
        ("glob:a?c", "abc", True),
        ("glob:a?c", "a/c", False),  # ? never matches /
        ("glob:f[0-9].txt", "f7.txt", True),
        ("glob:f[!0-9].txt", "f7.txt", False),
        ("glob:f[!0-9].txt", "fx.txt", True),
        ("glob:[[]x]", "[x]", True),
        ("glob:a.b", "axb", False),  # regex metacharacters are literal
    ],
)
def test_matcher(pattern, actual, hit):
    assert compile_matcher(pattern).matches(actual) is hit


def test_a_matcher_never_matches_a_non_string():
    assert not compile_matcher("contains:1").matches(1)
    assert not compile_matcher("5").matches(5)


def test_non_string_expectations_are_exact():
    assert value_matches(5000, 5000)
    assert not value_matches(5000, "5000")
    assert not value_matches(True, 1)  # a bool is not a number in a tool's arguments
    assert not value_matches(1, True)
    assert value_matches({"a": [1, 2]}, {"a": [1, 2]})
    assert not value_matches({"a": [1, 2]}, {"a": [1, 2], "b": 0})  # maps are exact, not a subset


@pytest.mark.parametrize("bad", ["glob:", "glob:src/[abc.py", "glob:[z-a]"])
def test_a_broken_glob_is_refused_when_compiled(bad):
    with pytest.raises(MatcherError, match="glob"):
        compile_matcher(bad)


def test_matcher_prints_as_written():
    assert str(compile_matcher("glob:**/a.py")) == "glob:**/a.py"
    assert str(compile_matcher("a.py")) == "a.py"
