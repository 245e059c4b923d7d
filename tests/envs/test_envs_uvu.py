"""A uvu project (lukeed's convention: `"test": "uvu -r esm test"`, tests under test/).

Tried unprepared on lukeed/dequal: its tasks' command was the placeholder `false` (package.json
named no runner benchtape knew), and a command written by hand ran but read "runner not
recognised", though uvu prints `Total:` / `Passed:` / `Skipped:`. Now the inferred command runs
the changed test files through uvu's folder-and-pattern arguments, and its counts are read; uvu
names only its failing tests, so the verdict is its exit status. Really installed (uvu from npm),
really run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from repokit import commit, init_repo

from benchtape.sandbox.testcounts import parse_counts, runner_of

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed (.ci/run installs node and npm)")

PACKAGE = {"name": "tidy", "version": "1.0.0", "type": "module", "scripts": {"test": "uvu test"}, "devDependencies": {"uvu": "0.5.6"}}
BUGGY = "export function tidy(s) {\n\treturn s;\n}\n"
FIXED = "export function tidy(s) {\n\treturn s.trim();\n}\n"
TEST_BASE = "import { test } from 'uvu';\nimport * as assert from 'uvu/assert';\nimport { tidy } from '../index.js';\n\ntest('keeps words', () => {\n\tassert.is(tidy('a b'), 'a b');\n});\n\ntest.run();\n"
TEST_FIX = TEST_BASE.replace("\ntest.run();\n", "\ntest('trims', () => {\n\tassert.is(tidy(' a '), 'a');\n});\n\ntest.skip('later', () => {});\n\ntest.run();\n")
OTHER = "import { test } from 'uvu';\nimport * as assert from 'uvu/assert';\n\ntest('untouched', () => {\n\tassert.ok(false);\n});\n\ntest.run();\n"

# uvu 0.5.6's closing lines over two suites (colour codes as it prints them to a pipe), captured
SUMMARY = "\x1b[1m\x1b[4m\x1b[37mtest/a.js\x1b[22m\x1b[24m\x1b[39m\n  Total:     3\x1b[31m\n  Passed:    2\x1b[39m\n  Skipped:   \x1b[33m1\x1b[39m\n  Duration:  1.70ms\n"


def test_uvus_summary_is_counted_and_its_total_leaves_the_skipped_out():
    counts = parse_counts(SUMMARY, runner_of("npx uvu . '^(?:test/a\\.js)$'"))
    assert (counts.runner, counts.passed, counts.failed, counts.skipped) == ("uvu", 2, 1, 1)


def test_a_uvu_task_is_inferred_validated_and_graded_by_exit_status(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task
    from benchtape.store.database import Store
    from benchtape.tasks.create import create_task
    from benchtape.tasks.validate import validate

    root = init_repo(tmp_path / "tidy")
    commit(root, {"package.json": json.dumps(PACKAGE, indent=2) + "\n", "index.js": BUGGY, "test/index.js": TEST_BASE, "test/other.js": OTHER, ".gitignore": "node_modules/\n"}, "tidy: start")
    commit(root, {"index.js": FIXED, "test/index.js": TEST_FIX}, "Trim the ends (#3)\n\ntidy() kept the spaces around the text.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    task_id = create_task(project, "3").id
    store = Store(root / ".benchtape" / "benchtape.db")
    try:
        [report] = validate(project, [task_id], store=store, level="home", logs=root / ".benchtape" / "validate").tasks
    finally:
        store.close()
    assert report.validated, report.to_dict()
    task = load_task(find_task(root, task_id))
    assert task.verify.command == "npx uvu . '^(?:test/index\\.js)$'", task.verify.command  # only the changed file: test/other.js always fails
    assert task.validation is not None and task.validation.runner == "uvu" and task.validation.reference["passed"] == 2 and task.validation.reference["skipped"] == 1
    assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"
    half = (task.reference() or b"").replace(b"s.trim()", b"s.trimStart()")
    assert half != task.reference() and grade_candidate(project, task, half).outcome == "failed"
