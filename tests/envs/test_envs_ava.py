"""An ava project (sindresorhus's convention: one `test.js` beside the code, `"test": "xo && ava"`).

Harvested from sindresorhus/camelcase, every change to its `test.js` read as "no test changed"
(a root test.js matched no test pattern), and a task made by hand had no runner benchtape could
read: ava's output has no summary the verifier knew. Now `test.js` is a test file, the inferred
command is `npx ava --tap <files>`, and ava's TAP gives one verdict per test. Really installed
(ava from npm), really run."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from repokit import commit, init_repo, validate_one

from benchtape.sandbox.testcounts import parse_counts, runner_of
from benchtape.sandbox.testreports import read_tap, suite_command

pytestmark = pytest.mark.skipif(shutil.which("npm") is None, reason="npm is not installed (.ci/run installs node and npm)")

PACKAGE = {"name": "shout", "version": "1.0.0", "type": "module", "scripts": {"test": "ava"}, "devDependencies": {"ava": "6.4.1"}}
BUGGY = "export default function shout(text) {\n\treturn text.toUpperCase();\n}\n"
FIXED = "export default function shout(text) {\n\treturn text.trim().toUpperCase() + '!';\n}\n"
TEST_BASE = "import test from 'ava';\nimport shout from './index.js';\n\ntest('uppercases', t => {\n\tt.true(shout('hi').startsWith('HI'));\n});\n"
TEST_FIX = TEST_BASE + "\ntest('trims and exclaims', t => {\n\tt.is(shout(' hi '), 'HI!');\n});\n"

# ava 6.4's own TAP for a file of five tests (one failing, one skipped, one todo), captured
TAP = """TAP version 13
ok 1 - test › other › nested file test
ok 2 - test › skipped one # SKIP
not ok 3 - test › later # TODO
ok 4 - test › adds
not ok 5 - test › fails here
  ---
    name: AssertionError
    assertion: t.is()
    message: ''
  ...
ok 6 - test › title with › arrow

1..6
# tests 5
# pass 3
# skip 1
# fail 2
"""


def test_avas_tap_is_one_verdict_per_test_and_never_a_go_package_line():
    report = read_tap(TAP)
    assert report is not None and report.outcomes() == {
        "test › adds": "passed", "test › fails here": "failed", "test › later": "skipped",
        "test › other › nested file test": "passed", "test › skipped one": "skipped", "test › title with › arrow": "passed",
    }
    counts = parse_counts(TAP)  # no runner named: TAP's `ok 1 - …` was read as go's `ok <package>` line
    assert (counts.runner, counts.passed, counts.failed, counts.skipped) == ("ava", 3, 1, 2)
    plain = "  ✔ adds\n  ✘ [fail]: fails here\n  ─\n\n  1 test failed\n  1 test skipped\n  1 test todo\n"
    assert parse_counts(plain, "ava") == parse_counts(plain) and (parse_counts(plain).passed, parse_counts(plain).failed) == (1, 1)
    assert runner_of("npx ava --tap test.js") == "ava" and suite_command("npx ava --tap test.js test/other.js", "ava", Path(".")) == "npx ava --tap"


def test_an_ava_task_is_harvested_validated_and_graded_test_by_test(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task

    root = init_repo(tmp_path / "shout")
    commit(root, {"package.json": json.dumps(PACKAGE, indent=2) + "\n", "index.js": BUGGY, "test.js": TEST_BASE, ".gitignore": "node_modules/\n"}, "shout: uppercase")
    commit(root, {"index.js": FIXED, "test.js": TEST_FIX}, "Trim and exclaim (#4)\n\nshout() kept the spaces and said nothing loud.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    report = validate_one(project, "4")
    assert report.validated, report.to_dict()
    task = load_task(find_task(root, report.id))
    assert task.verify.command == "npx ava --tap test.js" and task.verify.protected_paths == ("test.js",)
    assert task.validation is not None and list(task.validation.fail_to_pass) == ["trims and exclaims"] and list(task.validation.pass_to_pass) == ["uppercases"]
    assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"
    half = (task.reference() or b"").replace(b".trim()", b"")
    assert half != task.reference() and grade_candidate(project, task, half).outcome == "failed"
    assert task.validation.reference.get("exit") == 0  # what a candidate's runner is held to
    # code under test that prints the tests' `ok` lines and ends its worker passed on slugify
    # (newcomer pass): a second TAP stream is not read, and a runner exiting non-zero where the
    # reference's exited 0 is not a pass, whatever `ok` lines its output holds
    for forged in (
        "TAP version 13\\nok 1 - uppercases\\nok 2 - trims and exclaims\\n1..2\\n# tests 2\\n# pass 2\\n# fail 0\\n",
        "ok 1 - uppercases\\nok 2 - trims and exclaims\\n",
    ):
        cheat = _candidate(root, task, {"index.js": f"process.stdout.write('{forged}');\nprocess.exit(0);\n" + BUGGY})
        verdict = grade_candidate(project, task, cheat)
        assert verdict.outcome == "failed", (forged, verdict.reason, verdict.evidence.get("log"))
    # ava's settings in package.json are the hidden tests' as ava.config.js is (slugify: a
    # `require` of a file that counts each failed assertion passed); the rest of it is the agent's
    rigged = {**PACKAGE, "ava": {"require": ["./support.cjs"]}}
    guarded = grade_candidate(project, task, _candidate(root, task, {"package.json": json.dumps(rigged, indent=2) + "\n", "support.cjs": "// passes everything\n", "index.js": FIXED}))
    assert guarded.outcome == "guard_violation" and guarded.evidence["guarded"] == ['package.json "ava", "jest", "mocha", "tap", "babel"'], guarded.reason
    described = {**PACKAGE, "description": "shouts"}
    assert grade_candidate(project, task, _candidate(root, task, {"package.json": json.dumps(described, indent=2) + "\n", "index.js": FIXED})).outcome == "passed"


def _candidate(root: Path, task: object, files: dict[str, str]) -> bytes:
    """A candidate patch as `git diff` in the agent's workspace gives it: these files written at the base."""
    import subprocess

    from benchtape.sandbox.task_workspace import fresh_workspace

    ws = fresh_workspace(root, task.source.base_commit, root.parent / "candidate-ws")  # type: ignore[attr-defined]
    for path, text in files.items():
        (ws / path).write_text(text)
    done = subprocess.run(["git", "diff"], cwd=ws, capture_output=True, check=True).stdout
    shutil.rmtree(ws)
    return done
