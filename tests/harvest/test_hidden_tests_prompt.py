"""A prompt that points the agent at the hidden tests is named at create and validate.

jd/tenacity #556's prompt (its squash body) ends "New regression tests have been added to
`tests/test_utils.py` to cover these scenarios.": the agent's tree has that file without them,
so the line sends it looking for tests it cannot see. Tried on the prompts of seven repositories'
tasks (tenacity, loguru, tomlkit, boltons, markdown-table, path-to-regexp): only #556 is named."""

from __future__ import annotations

from pathlib import Path

from e2e.cli import benchtape
from repokit import commit, init_repo

from benchtape.tasks.hidden_tests import added_test_names, promised_tests


def test_lines_that_say_tests_were_added_or_name_a_hidden_test_file():
    tests = ["tests/test_utils.py", "tests/__init__.py"]
    prompt = "# Fix ordinal suffixes\n\nThe `find_ordinal` utility gave 111st.\n\nNew regression tests have been added to `tests/test_utils.py` to cover these scenarios.\n"
    assert promised_tests(prompt, tests) == ["New regression tests have been added to `tests/test_utils.py` to cover these scenarios."]
    assert promised_tests("See test_utils.py for the cases.\nAdded tests for the 11-13 range.\n", tests) == ["See test_utils.py for the cases.", "Added tests for the 11-13 range."]
    quiet = "# Fix ordinal suffixes\n\nNumbers ending in 11, 12 or 13 take `th` (111th); the tests of `utils.py` and `__init__.py` say so.\nThe test suite passes.\n"
    assert promised_tests(quiet, tests) == []  # a module of the code, a common file name, "the test suite": none is a pointer
    assert promised_tests("# Add test cases for multiple mapper errors\n\nWith stopOnError false.\n", tests) == ["Add test cases for multiple mapper errors"]  # the title, a heading
    hooks = ["tests/test_hooks.py", "tests/utils_test.py", "tests/helpers.py"]
    said = "* Fix assert style in test_hooks\n* Tidy utils_test and helpers\n* Faster helpers\n"
    assert promised_tests(said, hooks) == ["* Fix assert style in test_hooks", "* Tidy utils_test and helpers"]  # attrs #1401: a test module by its bare name, never a plain one



def test_a_line_naming_a_hidden_test_function_is_named_too():
    """boltons #454's title, "Adds test_args2sh_sep and test_args2cmd_sep", named both of its
    FAIL_TO_PASS tests and was not found: `tests?\\b` never matches `test_…`."""
    patch = (b"--- a/tests/test_strutils.py\n+++ b/tests/test_strutils.py\n@@ -1,2 +1,8 @@\n"
             b"+def test_args2sh_sep():\n+    pass\n+\n+    async def test_args2cmd_sep(self):\n+        pass\n def test_old():\n-def test_gone():\n")
    names = added_test_names(patch)
    assert names == ["test_args2cmd_sep", "test_args2sh_sep"]  # added lines only: neither the kept nor the removed test
    prompt = "# Adds test_args2sh_sep and test_args2cmd_sep\n\nargs2sh and args2cmd take a separator.\nThe old test_old still passes.\n"
    assert promised_tests(prompt, ["tests/test_strutils.py"], names) == ["Adds test_args2sh_sep and test_args2cmd_sep"]
    assert promised_tests(prompt, ["tests/test_strutils.py"]) == []  # without the names, as before


def test_task_create_says_so(tmp_path: Path):
    root = init_repo(tmp_path / "ordinal")
    commit(root, {"ordinal.py": "def suffix(n):\n    return 'th'\n", "tests/test_ordinal.py": "from ordinal import suffix\n\n\ndef test_th():\n    assert suffix(4) == 'th'\n"}, "ordinal suffixes")
    fix = "def suffix(n):\n    if n % 100 in (11, 12, 13):\n        return 'th'\n    return {1: 'st', 2: 'nd', 3: 'rd'}.get(n % 10, 'th')\n"
    commit(root, {"ordinal.py": fix, "tests/test_ordinal.py": "from ordinal import suffix\n\n\ndef test_th():\n    assert suffix(4) == 'th'\n\n\ndef test_teens():\n    assert suffix(111) == 'th' and suffix(21) == 'st'\n"}, "Fix ordinal suffixes (#3)\n\nsuffix() gave th for every number.\n\nNew regression tests have been added to `tests/test_ordinal.py`.")
    done = benchtape("task", "create", "3", cwd=root)
    assert done.returncode == 0, done.stderr
    assert "! prompt.md points at the hidden tests" in done.stdout and "tests/test_ordinal.py" in done.stdout, done.stdout
