"""A per-test verdict needs every test run: the verifier runs its command without the runner's
fail-fast options, and a mocha command inferred from a project's test script never copies
`--bail` (jshttp/negotiator's: a task's FAIL_TO_PASS listed 142 tests where 3 failed, the tests
after the first failure read as absent at the base)."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from benchtape.core.command_runner import run_local
from benchtape.sandbox.fail_fast import every_test
from benchtape.sandbox.verifier import verify
from benchtape.spec.task import Verify
from benchtape.tasks.infer import _mocha_options

REPORT = '--reporter-option=output="${BENCHTAPE_REPORTS:-/tmp}/mocha.json"'


@pytest.mark.parametrize(
    ("command", "runner", "expected"),
    [
        (f"npx mocha --check-leaks --bail --reporter json {REPORT} test/a.js", "mocha", f"npx mocha --check-leaks --reporter json {REPORT} test/a.js"),
        ("npx mocha -b test/a.js", "mocha", "npx mocha test/a.js"),
        ("python3 -m pytest -x --maxfail 2 -q 'tests/test_a.py::T::test_b[x y]'", "pytest", "python3 -m pytest -q 'tests/test_a.py::T::test_b[x y]'"),
        ("python3 -m pytest --maxfail=1 --exitfirst tests", "pytest", "python3 -m pytest tests"),
        ("npx jest --bail=1 --json a.test.js", "jest", "npx jest --json a.test.js"),
        ("python3 -m unittest -f -v tests.test_a", "unittest", "python3 -m unittest -v tests.test_a"),
        ("go test -failfast ./...", "go", "go test ./..."),
        ("npx mocha --bail test/a.js && echo done", "mocha", "npx mocha --bail test/a.js && echo done"),  # a pipeline: as written
        ("python3 -m pytest -q tests", "pytest", "python3 -m pytest -q tests"),
        ("make test -x", None, "make test -x"),  # no runner known: no option of it is touched
    ],
)
def test_fail_fast_options_are_taken_out_and_nothing_else(command: str, runner: str | None, expected: str) -> None:
    assert every_test(command, runner) == expected


def test_an_inferred_mocha_command_never_copies_bail() -> None:
    assert _mocha_options("mocha --check-leaks --bail --reporter spec test/") == "--check-leaks "
    assert _mocha_options("mocha -b -u tdd test/") == "-u tdd "


def test_the_verifier_runs_every_test_under_a_fail_fast_command(tmp_path: Path) -> None:
    """`pytest -x` stops at the first failure: the second failing test and the passing one
    after it were never run, and a per-test verdict read them as absent."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "test_many.py").write_text("def test_a():\n    assert False\n\n\ndef test_b():\n    assert False\n\n\ndef test_c():\n    pass\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}
    ev = verify(tree, [], Verify(command="python3 -m pytest -x -q test_many.py"), lambda command, timeout: run_local(["/bin/sh", "-c", command], tree, timeout, env=env))
    assert ev.tests is not None and ev.tests.outcomes() == {"test_many::test_a": "failed", "test_many::test_b": "failed", "test_many::test_c": "passed"}, ev.log
    assert "$ python3 -m pytest -q test_many.py" in ev.log  # the log says what ran
