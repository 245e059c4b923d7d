"""JavaScript projects whose tests print TAP or run as plain node scripts (wooorm/markdown-table's
history, tried unprepared: mocha 2 in 2014, tape in 2020, node's own runner since 2022).

Before: a tape task's command was the placeholder `false` (package.json named no runner benchtape
knew), a test file importing `node:test` run as `node --conditions development test.js` likewise,
and mocha 2 (no `--reporter-option output=`) printed its JSON report on stdout where nothing read
it ("runner not recognised" at the reference). Now tape's TAP gives one verdict per `# name`
test, a node:test file is run by node's runner with the script's node options, and mocha's JSON
on stdout is read as its report file is. The repository below really installs tape from npm and
really runs node's runner."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from repokit import commit, init_repo

from benchtape.sandbox.testcounts import parse_counts, runner_of
from benchtape.sandbox.testreports import read_reports, read_tape
from benchtape.tasks.infer import _javascript, _mocha_options

# tape 5.9's own output for a file of five tests (one failing, one skipped, one nested, one todo), captured
TAPE = """TAP version 13
# adds
ok 1 one and one
ok 2 should be strictly equal
# fails here
not ok 3 one is two
  ---
    operator: equal
    expected: 2
    actual:   1
  ...
ok 4 should be truthy
# SKIP skipped one
# nested
# inner
ok 5 inner holds
# TODO todo one
not ok 6 not yet # TODO
  ---
    operator: ok
  ...

1..6
# tests 6
# pass  5
# fail  1
"""

# mocha 2.5's JSON reporter on stdout (it has no report file option), after a test's own console output, trimmed
MOCHA2 = """a line the tests printed
{
  "stats": {
    "suites": 2,
    "tests": 2,
    "passes": 1,
    "pending": 0,
    "failures": 1,
    "duration": 7
  },
  "tests": [
    {"title": "should create a table", "fullTitle": "table() should create a table", "duration": 0, "err": {}},
    {"title": "should accept a single value", "fullTitle": "table({align}) should accept a single value", "duration": 1, "err": {"message": "expected 'a' to equal 'b'"}}
  ],
  "pending": [],
  "failures": [{"title": "should accept a single value", "fullTitle": "table({align}) should accept a single value", "err": {"message": "expected 'a' to equal 'b'"}}],
  "passes": [{"title": "should create a table", "fullTitle": "table() should create a table", "err": {}}]
}
"""


def test_tapes_tests_are_its_named_groups_of_assertions():
    report = read_tape(TAPE)
    assert report is not None and report.outcomes() == {
        "adds": "passed", "fails here": "failed", "skipped one": "skipped", "nested": "passed", "inner": "passed", "todo one": "skipped",
    }
    counts = parse_counts(TAPE, runner_of("npx tape test.js"))
    assert (counts.runner, counts.passed, counts.failed, counts.skipped) == ("tape", 3, 1, 2)


def test_mochas_json_on_stdout_is_its_report(tmp_path: Path):
    counts = parse_counts(MOCHA2, "mocha")
    assert (counts.runner, counts.passed, counts.failed) == ("mocha", 1, 1)
    report = read_reports(tmp_path, MOCHA2, "mocha")  # no mocha.json in the folder
    assert report is not None and report.outcomes() == {"table() should create a table": "passed", "table({align}) should accept a single value": "failed"}
    assert _mocha_options("node_modules/.bin/_mocha --reporter spec --check-leaks -u exports test.js") == "--check-leaks -u exports "


def _package(scripts: dict, dev: dict | None = None):
    return lambda name: json.dumps({"scripts": scripts, "devDependencies": dev or {}}) if name == "package.json" else None


def test_a_node_test_file_is_run_by_nodes_runner_with_the_scripts_node_options():
    read = _package({"test-api": "node --conditions development --import ./setup.js test.js", "test": "npm run test-api"})
    found = _javascript(["test.js"], lambda name: "import test from 'node:test'\n" if name == "test.js" else read(name))
    assert found.runner == "node" and found.command.startswith("node --test --conditions development --import ./setup.js --test-reporter=spec ")
    assert found.command.endswith(" test.js") and "junit.xml" in found.command
    assert _javascript(["test.js"], _package({"test": "node test.js"})).runner is None  # a plain script importing no node:test: no runner guessed
    hostile = _javascript(["test.js"], lambda name: "import test from 'node:test'\n" if name == "test.js" else _package({"test": "node --import=$(touch${IFS}pwned) test.js"})(name))
    assert "'--import=$(touch${IFS}pwned)'" in hostile.command  # a script's option value reaches the shell quoted
    new_file = {"test/parse.test.js": b"+import {test} from 'node:test'\n+test('parses', () => {})\n"}  # a file the change adds: its patch block says what it imports
    assert _javascript(["test/parse.test.js"], _package({"test": "node test/parse.test.js"}), new_file).runner == "node"
    assert _javascript(["test.js"], _package({"test": "node test"}, {"tape": "^5"})).command == "npx tape test.js"


TALLY = "'use strict'\nmodule.exports = function tally(words) {\n  return words.length\n}\n"
TALLY_FIXED = "'use strict'\nmodule.exports = function tally(words) {\n  return words.filter(Boolean).length\n}\n"
TAPE_TEST = "'use strict'\nvar test = require('tape')\nvar tally = require('./index.js')\n\ntest('counts words', function (t) {\n  t.equal(tally(['a', 'b']), 2)\n  t.end()\n})\n"
TAPE_FIX = TAPE_TEST + "\ntest('skips empty words', function (t) {\n  t.equal(tally(['a', '', 'b']), 2, 'the empty one is no word')\n  t.end()\n})\n"
NODE_TEST = (
    "import assert from 'node:assert/strict'\nimport test from 'node:test'\nimport tally from 'tally'\n\n"
    "test('tally()', async function (t) {\n  await t.test('counts words', function () {\n    assert.equal(tally(['a', 'b']), 2)\n  })\n"
    "  await t.test('skips empty words', function () {\n    assert.equal(tally(['a', '', 'b']), 2)\n  })\n})\n"
)
NODE_FIX = NODE_TEST.replace("\n})\n", "\n  await t.test('trims words', function () {\n    assert.equal(tally([' ', 'a']), 1)\n  })\n})\n")
ESM = "export default function tally(words) {\n  return words.filter(Boolean).length\n}\n"
ESM_FIXED = "export default function tally(words) {\n  return words.filter((w) => w.trim()).length\n}\n"


@pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed (.ci/run installs node and npm)")
def test_a_tape_task_and_a_node_test_task_are_validated_and_graded_test_by_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task
    from benchtape.store.database import Store
    from benchtape.tasks.create import create_task
    from benchtape.tasks.validate import validate

    root = init_repo(tmp_path / "tally")
    pkg = {"name": "tally", "version": "1.0.0", "scripts": {"test": "node test.js"}, "devDependencies": {"tape": "5.9.0"}}
    commit(root, {"package.json": json.dumps(pkg, indent=2) + "\n", "index.js": TALLY, "test.js": TAPE_TEST, ".gitignore": "node_modules/\n"}, "tally: count words")
    commit(root, {"index.js": TALLY_FIXED, "test.js": TAPE_FIX}, "Skip empty words (#2)\n\ntally() counted '' as a word.")
    # the project moves to ESM and node's runner, run as a plain script with an export condition (wooorm's packages)
    pkg = {"name": "tally", "version": "2.0.0", "type": "module", "exports": {"development": "./index.js", "default": "./index.js"}, "scripts": {"test-api": "node --conditions development test.js", "test": "npm run test-api"}}
    commit(root, {"package.json": json.dumps(pkg, indent=2) + "\n", "index.js": ESM, "test.js": NODE_TEST}, "Use ESM and node's test runner")
    commit(root, {"index.js": ESM_FIXED, "test.js": NODE_FIX}, "Trim words (#5)\n\nA word of spaces was counted.")

    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    ids = [create_task(project, ref).id for ref in ("2", "5")]
    store = Store(root / ".benchtape" / "benchtape.db")
    try:
        reports = validate(project, ids, store=store, level="home", logs=root / ".benchtape" / "validate").tasks
    finally:
        store.close()
    assert all(r.validated for r in reports), [r.to_dict() for r in reports]
    tape_task, node_task = (load_task(find_task(root, i)) for i in ids)
    assert tape_task.verify.command == "npx tape test.js"
    assert tape_task.validation is not None and list(tape_task.validation.fail_to_pass) == ["skips empty words"] and list(tape_task.validation.pass_to_pass) == ["counts words"]
    assert node_task.verify.command.startswith("node --test --conditions development ")
    assert node_task.validation is not None and list(node_task.validation.fail_to_pass) == ["test::tally() > trims words"]
    assert list(node_task.validation.pass_to_pass) == ["test::tally() > counts words", "test::tally() > skips empty words"]
    for task, broken in ((tape_task, b"filter(Boolean)"), (node_task, b"filter((w) => w.trim())")):
        assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"
        half = (task.reference() or b"").replace(broken, b"filter(() => true)")
        assert half != task.reference() and grade_candidate(project, task, half).outcome == "failed"
