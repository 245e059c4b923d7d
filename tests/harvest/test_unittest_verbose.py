"""unittest's verbose report (`python -m unittest -v`), read from real runs of every Python
from 3.8 to 3.13 this host has (pyenv's, else this one), with stdout and stderr in one stream
as the verifier captures them.

A run that never reached its summary is no report: candidate code that printed the verbose
lines of passing tests and then called `os._exit(0)` was graded PASS. A test whose subtests
fail is one failed test (hukkin/tomli's `test_valid`, whose subtests fail at a task's base, was
dropped: its task looked as if its tests were never collected)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import pytest

from benchtape.core.command_runner import run_local
from benchtape.sandbox.testreports import read_reports, read_unittest_verbose
from benchtape.sandbox.verifier import verify
from benchtape.spec.task import Verify


def _pythons() -> list[str]:
    """Each CPython 3.8+ pyenv holds (their unittest output differs: 3.11 named the method in
    the parenthesis and printed failed subtests; 3.12.1 left skipped tests out of `Ran N`)."""
    found = {}
    for python in sorted(Path.home().glob(".pyenv/versions/3.*/bin/python")):
        m = re.match(r"3\.(\d+)\.", python.parent.parent.name)
        if m and int(m.group(1)) >= 8:
            found[python.parent.parent.name] = str(python)
    return list(found.values()) or [sys.executable]


def _run(python: str, cwd: Path, *args: str, unbuffered: bool = True) -> str:
    """`python -m unittest -v …` as the verifier runs it: stdout and stderr in one stream."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONUNBUFFERED", "PYTHONPATH")}
    if unbuffered:
        env["PYTHONUNBUFFERED"] = "1"  # a test's prints between the runner's words
    done = subprocess.run([python, "-m", "unittest", "-v", *args], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    return done.stdout


MIX = 'import unittest\n\n\nclass T(unittest.TestCase):\n    def test_ok(self):\n        pass\n\n    def test_doc(self):\n        """A docstring that describes it."""\n        pass\n\n    def test_fail(self):\n        self.assertEqual(1, 2)\n\n    def test_error(self):\n        raise ValueError("boom")\n\n    @unittest.skip("not now")\n    def test_skip(self):\n        pass\n\n    @unittest.expectedFailure\n    def test_xfail(self):\n        self.assertEqual(1, 2)\n\n    @unittest.expectedFailure\n    def test_xpass(self):\n        pass\n\n    def test_prints(self):\n        print("hello from the test")\n\n    def test_sub_pass(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                self.assertTrue(True)\n\n    def test_sub_fail(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                self.assertNotEqual(i, 1)\n\n    def test_sub_error(self):\n        print("before", end=" ... ")\n        for path in ("a", "b"):\n            with self.subTest(path=path):\n                raise KeyError(path)\n\n    def test_sub_skip(self):\n        with self.subTest(i=0):\n            self.skipTest("sub skipped")\n\n    def test_zlast(self):\n        pass\n\n\nclass Broken(unittest.TestCase):\n    @classmethod\n    def setUpClass(cls):\n        raise RuntimeError("no db")\n\n    def test_never(self):\n        pass\n'

EXPECTED = {
    "pkg.test_mix.Broken.setUpClass": "error",  # 3.8-3.10 print a bare `ERROR`; its section names it
    "pkg.test_mix.T.test_doc": "passed",  # its docstring on a line of its own
    "pkg.test_mix.T.test_error": "error",
    "pkg.test_mix.T.test_fail": "failed",
    "pkg.test_mix.T.test_ok": "passed",
    "pkg.test_mix.T.test_prints": "passed",  # `... hello from the test` then `ok` on the next line
    "pkg.test_mix.T.test_skip": "skipped",
    "pkg.test_mix.T.test_sub_error": "error",  # prints `before ... `, then two subtests raise
    "pkg.test_mix.T.test_sub_fail": "failed",
    "pkg.test_mix.T.test_sub_pass": "passed",
    "pkg.test_mix.T.test_sub_skip": "skipped",
    "pkg.test_mix.T.test_xfail": "skipped",
    "pkg.test_mix.T.test_xpass": "failed",
    "pkg.test_mix.T.test_zlast": "passed",
}


@pytest.fixture(scope="module")
def mix(tmp_path_factory: pytest.TempPathFactory) -> Path:
    tree = tmp_path_factory.mktemp("mix")
    (tree / "pkg").mkdir()
    (tree / "pkg" / "__init__.py").write_text("")
    (tree / "pkg" / "test_mix.py").write_text(MIX)
    return tree


@pytest.mark.parametrize("python", _pythons(), ids=lambda p: Path(p).parent.parent.name if ".pyenv" in p else "this-python")
@pytest.mark.parametrize("unbuffered", [True, False], ids=["prints-between", "prints-at-exit"])
def test_every_outcome_is_read_as_each_python_prints_it(mix: Path, python: str, unbuffered: bool):
    output = _run(python, mix, "pkg.test_mix", unbuffered=unbuffered)
    assert re.search(r"^Ran 1[23] tests in ", output, re.MULTILINE), output  # 3.12.1: 12, its skipped test left out
    report = read_unittest_verbose(output)
    assert report is not None and report.outcomes() == EXPECTED, output
    messages = {i: t.message for i, t in report.tests.items()}
    assert messages["pkg.test_mix.T.test_skip"] == "not now" and messages["pkg.test_mix.T.test_sub_skip"] == "sub skipped"
    assert messages["pkg.test_mix.T.test_sub_fail"] == "subtest (i=1): FAIL" and messages["pkg.test_mix.T.test_sub_error"] == "subtest (path='a'): ERROR"


# hukkin/tomli at 920e20b with `raise KeyError(first_three)` before its special floats' return
# in src/tomli/_parser.py: `PYTHONPATH=src python -m unittest -v 2>&1`, verbatim
TOMLI_311 = """test_invalid (tests.test_data.TestData.test_invalid) ... ok
test_valid (tests.test_data.TestData.test_valid) ... \x20
  test_valid (tests.test_data.TestData.test_valid) [inf-and-nan] ... ERROR
  test_valid (tests.test_data.TestData.test_valid) [common-25] ... ERROR
  test_valid (tests.test_data.TestData.test_valid) [after-literal-no-ws] ... ERROR
test_deprecated_tomldecodeerror (tests.test_error.TestError.test_deprecated_tomldecodeerror) ... ok
test_invalid_char_quotes (tests.test_error.TestError.test_invalid_char_quotes) ... ok
test_invalid_parse_float (tests.test_error.TestError.test_invalid_parse_float) ... ok
test_line_and_col (tests.test_error.TestError.test_line_and_col) ... ok
test_missing_value (tests.test_error.TestError.test_missing_value) ... ok
test_tomldecodeerror (tests.test_error.TestError.test_tomldecodeerror) ... ok
test_type_error (tests.test_error.TestError.test_type_error) ... ok
test_deepcopy (tests.test_misc.TestMiscellaneous.test_deepcopy) ... ok
test_incorrect_load (tests.test_misc.TestMiscellaneous.test_incorrect_load) ... ok
test_inline_array_recursion_limit (tests.test_misc.TestMiscellaneous.test_inline_array_recursion_limit) ... ok
test_inline_table_recursion_limit (tests.test_misc.TestMiscellaneous.test_inline_table_recursion_limit) ... ok
test_load (tests.test_misc.TestMiscellaneous.test_load) ... ok
test_parse_float (tests.test_misc.TestMiscellaneous.test_parse_float) ... ERROR
test_types_import (tests.test_misc.TestMiscellaneous.test_types_import)
Test that `_types` module runs. ... ok

======================================================================
ERROR: test_valid (tests.test_data.TestData.test_valid) [inf-and-nan]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
             ^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'nan'

======================================================================
ERROR: test_valid (tests.test_data.TestData.test_valid) [common-25]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
             ^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

======================================================================
ERROR: test_valid (tests.test_data.TestData.test_valid) [after-literal-no-ws]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
             ^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

======================================================================
ERROR: test_parse_float (tests.test_misc.TestMiscellaneous.test_parse_float)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_misc.py", line 57, in test_parse_float
    obj = tomllib.loads(doc, parse_float=D)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
          ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
                      ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
                 ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

----------------------------------------------------------------------
Ran 16 tests in 0.058s

FAILED (errors=4)
"""

TOMLI_38 = """test_invalid (tests.test_data.TestData) ... ok
test_valid (tests.test_data.TestData) ... test_deprecated_tomldecodeerror (tests.test_error.TestError) ... ok
test_invalid_char_quotes (tests.test_error.TestError) ... ok
test_invalid_parse_float (tests.test_error.TestError) ... ok
test_line_and_col (tests.test_error.TestError) ... ok
test_missing_value (tests.test_error.TestError) ... ok
test_tomldecodeerror (tests.test_error.TestError) ... ok
test_type_error (tests.test_error.TestError) ... ok
test_deepcopy (tests.test_misc.TestMiscellaneous) ... ok
test_incorrect_load (tests.test_misc.TestMiscellaneous) ... ok
test_inline_array_recursion_limit (tests.test_misc.TestMiscellaneous) ... ok
test_inline_table_recursion_limit (tests.test_misc.TestMiscellaneous) ... ok
test_load (tests.test_misc.TestMiscellaneous) ... ok
test_parse_float (tests.test_misc.TestMiscellaneous) ... ERROR
test_types_import (tests.test_misc.TestMiscellaneous)
Test that `_types` module runs. ... ok

======================================================================
ERROR: test_valid (tests.test_data.TestData) [inf-and-nan]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'nan'

======================================================================
ERROR: test_valid (tests.test_data.TestData) [common-25]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

======================================================================
ERROR: test_valid (tests.test_data.TestData) [after-literal-no-ws]
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_data.py", line 44, in test_valid
    actual = tomllib.loads(toml_str)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

======================================================================
ERROR: test_parse_float (tests.test_misc.TestMiscellaneous)
----------------------------------------------------------------------
Traceback (most recent call last):
  File "/tmp/fixer2/tomli/tests/test_misc.py", line 57, in test_parse_float
    obj = tomllib.loads(doc, parse_float=D)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 187, in loads
    pos = key_value_rule(src, pos, out, header, parse_float)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 416, in key_value_rule
    pos, key, value = parse_key_value_pair(src, pos, parse_float, nest_lvl=0)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 459, in parse_key_value_pair
    pos, value = parse_value(src, pos, parse_float, nest_lvl)
  File "/tmp/fixer2/tomli/src/tomli/_parser.py", line 752, in parse_value
    raise KeyError(first_three)
KeyError: 'inf'

----------------------------------------------------------------------
Ran 16 tests in 0.066s

FAILED (errors=4)
"""


@pytest.mark.parametrize("output", [TOMLI_311, TOMLI_38], ids=["3.11", "3.8"])
def test_tomlis_test_valid_with_failing_subtests_is_one_test_in_error(output: str):
    report = read_unittest_verbose(output)
    assert report is not None and len(report.tests) == 16  # `Ran 16 tests`
    valid = report.tests["tests.test_data.TestData.test_valid"]
    assert valid.outcome == "error" and valid.message == "subtest [inf-and-nan]: ERROR"
    assert report.tests["tests.test_data.TestData.test_invalid"].outcome == "passed"
    assert report.with_outcome("error") == ["tests.test_data.TestData.test_valid", "tests.test_misc.TestMiscellaneous.test_parse_float"]
    assert report.counts().passed == 14


def test_subtests_that_all_pass_are_one_passed_test_and_a_run_cut_short_none(tmp_path: Path):
    (tmp_path / "test_subs.py").write_text(
        "import unittest\n\n\nclass T(unittest.TestCase):\n    def test_all(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                self.assertLess(i, 3)\n\n"
        "    def test_some(self):\n        for i in range(3):\n            with self.subTest(i=i):\n                self.assertLess(i, 2)\n"
    )
    output = _run(sys.executable, tmp_path, "test_subs")
    report = read_unittest_verbose(output)
    assert report is not None and report.outcomes() == {"test_subs.T.test_all": "passed", "test_subs.T.test_some": "failed"}, output
    # the same lines without the summary: the run did not finish, whatever its lines say
    assert read_unittest_verbose(output[: output.index("\n======")]) is None
    assert read_unittest_verbose(output[: output.index("Ran ")]) is None


# ---------------------------------------------------------------- candidate code that forges the report

TESTS = "import unittest\n\nfrom calc.core import add, sub\n\n\nclass T(unittest.TestCase):\n    def test_adds(self):\n        self.assertEqual(add(1, 2), 3)\n\n    def test_subtracts(self):\n        self.assertEqual(sub(3, 2), 1)\n"
FORGED = "test_adds (tests.test_core.T.test_adds) ... ok\ntest_subtracts (tests.test_core.T.test_subtracts) ... ok\n"
F2P = ["tests.test_core.T.test_adds", "tests.test_core.T.test_subtracts"]

CANDIDATES = {
    # prints the two tests passing, then ends the process before unittest's summary (exit 0)
    "exits-before-the-summary": f"import os\nimport sys\n\nsys.stderr.write({FORGED!r})\nsys.stderr.flush()\nos._exit(0)\n",
    # the same lines, then the test module fails to import: `Ran 1 test` (unittest's _FailedTest), three lines
    "more-lines-than-ran": f"import sys\n\nsys.stderr.write({FORGED!r})\nraise ImportError('no')\n",
    # the lines after unittest's summary, from an exit handler
    "lines-after-the-summary": f"import atexit\nimport sys\n\natexit.register(lambda: sys.stderr.write({FORGED!r}))\nraise ImportError('no')\n",
}


def _tree(tmp_path: Path, code: str) -> Path:
    tree = tmp_path / "tree"
    for folder in ("calc", "tests"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "__init__.py").write_text("")
    (tree / "calc" / "core.py").write_text(code)
    (tree / "tests" / "test_core.py").write_text(TESTS)
    return tree


def _graded(tree: Path):
    """The verifier's run of the hidden tests and grading's verdict on it (replay/task_verdict.py)."""
    from benchtape.replay.task_verdict import _per_test

    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    ev = verify(tree, [], Verify(command=f"{sys.executable} -m unittest -v tests.test_core"), lambda command, timeout: run_local(["/bin/sh", "-c", command], tree, timeout, env=env))
    task = SimpleNamespace(validation=SimpleNamespace(fail_to_pass=tuple(F2P), pass_to_pass=(), flaky=(), reference={"exit": 0}))
    return ev, _per_test(task, ev, {})  # type: ignore[arg-type]


def test_the_real_fix_passes_test_by_test(tmp_path: Path):
    ev, verdict = _graded(_tree(tmp_path, "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"))
    assert ev.tests is not None and ev.tests.outcomes() == dict.fromkeys(F2P, "passed"), ev.log
    assert verdict is not None and verdict.outcome == "passed", verdict


@pytest.mark.parametrize("name", sorted(CANDIDATES))
def test_a_forged_report_never_passes(tmp_path: Path, name: str):
    ev, verdict = _graded(_tree(tmp_path, CANDIDATES[name]))
    assert FORGED in ev.log  # the forged lines are in the run's output
    assert ev.tests is None and verdict is not None and verdict.outcome == "failed", (verdict, ev.log)
    assert "ended without its per-test report" in verdict.reason


def test_a_forged_ok_within_a_failing_test_is_outweighed_by_its_failure(tmp_path: Path):
    """The code under test writes `ok` where the runner's word goes, then the test fails: the
    runner's FAIL (its line, its section) decides."""
    code = "import sys\n\n\ndef add(a, b):\n    sys.stderr.write('ok\\n')\n    return 0\n\n\ndef sub(a, b):\n    sys.stderr.write('ok\\n')\n    return a - b\n"
    ev, verdict = _graded(_tree(tmp_path, code))
    assert "test_adds (tests.test_core.T.test_adds) ... ok\nFAIL" in ev.log, ev.log
    assert ev.tests is not None and ev.tests.outcomes() == {"tests.test_core.T.test_adds": "failed", "tests.test_core.T.test_subtracts": "passed"}
    assert verdict is not None and verdict.outcome == "failed" and verdict.evidence["fail_to_pass_failed"] == ["tests.test_core.T.test_adds"]


def test_a_run_with_no_test_lines_is_still_read_from_its_summary(tmp_path: Path):
    """A run without -v names no test: no report, and its summary still counts (testcounts)."""
    (tmp_path / "test_one.py").write_text("import unittest\n\n\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.fail('no')\n")
    done = subprocess.run([sys.executable, "-m", "unittest", "test_one"], cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=60)
    assert "FAIL: test_a" in done.stdout and read_unittest_verbose(done.stdout) is None
    assert read_reports(tmp_path / "none", done.stdout, "unittest") is None
