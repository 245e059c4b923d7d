"""On the real humanize history (shared/realrepos/humanize-truth.md): a base that "passes"
because the new tests were skipped is named for what it is, and a redaction that leaves a
stray fragment is a lint finding. PR #301 adds Latvian; its new `lv`
assertions sit in `try … except FileNotFoundError: pytest.skip(...)`, so at the base (no `lv`
catalogue) they skip and the run exits 0. The hand check gives 65 passed, 10 skipped at the
base, 75 passed with the reference; validation must say `tests_skipped`, naming the 10 tests
with the runner's reason, never `base_already_passes`.

The environment is given by hand in the task (this test is about the diagnosis, not about
building environments): the tests' one third-party import (freezegun) installed from PyPI
into a folder on PYTHONPATH, `src/` on PYTHONPATH, hatch-vcs's `_version.py` written and
the catalogues compiled (GNU msgfmt) in `verify.setup`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e.cli import benchtape
from harvestkit import BUNDLE, cli_env

VERSION_FILE = "printf '__version__ = version = \"0.0.0\"\\n__version_tuple__ = version_tuple = (0, 0, 0)\\n' > src/humanize/_version.py"


def clone_humanize(dest: Path) -> Path:
    bundle = BUNDLE.parent / "humanize.bundle" if BUNDLE is not None else None
    if bundle is None or not bundle.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail("REAL REPOSITORY NOT FOUND: shared/realrepos/humanize.bundle (CI=true)", pytrace=False)
        pytest.skip("REAL REPOSITORY NOT FOUND: shared/realrepos/humanize.bundle")
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)
    return dest


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("msgfmt") is None:
        pytest.skip("GNU gettext's msgfmt is not installed (apt-get install gettext)")
    top = tmp_path_factory.mktemp("humanize")
    repo = clone_humanize(top / "humanize")
    deps = top / "deps"
    pip = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--target", str(deps), "freezegun", "python-dateutil", "six"], capture_output=True, text=True)
    assert pip.returncode == 0, pip.stderr[-2000:]
    made = benchtape("task", "create", "301", cwd=repo)
    assert made.returncode == 0, made.stderr
    yaml = repo / ".benchtape" / "tasks" / "301" / "task.yaml"
    text = yaml.read_text()
    command = "python3 -m pytest -q tests/test_i18n.py"
    assert json.dumps(command) in text  # what task create inferred
    text = text.replace(json.dumps(command), json.dumps(f"PYTHONPATH=src:{deps} {command}"))
    text = text.replace("  setup: []", "  setup: " + json.dumps(["bash scripts/generate-translation-binaries.sh", VERSION_FILE]))
    yaml.write_text(text)
    done = benchtape("task", "validate", "301", "--sandbox", "home", "--json", cwd=repo, env=cli_env(), timeout=600)
    assert done.returncode == 1, done.stderr
    return json.loads(done.stdout)["tasks"][0]


def test_301s_skipped_lv_tests_are_named_with_the_runners_reason_not_a_passing_base(validated: dict[str, Any]):
    base, ref = validated["phases"]["base"], validated["phases"]["reference"]
    assert (base["status"], base["passed"], base["skipped"]) == ("passed", 65, 10)  # humanize-truth.md's base
    assert (ref["status"], ref["passed"], ref["skipped"]) == ("passed", 75, 0)  # and its reference
    assert base["diagnosis"] == "tests_skipped" and not validated["validated"]
    assert "10 test(s) skipped at the base" in base["detail"] and "tests.test_i18n::test_intword_i18n[lv-" in base["detail"]
    assert "Generate .mo with scripts/generate-translation-binaries.sh" in base["detail"]  # the runner's own reason
    assert "verify.setup" in validated["next"]


def test_a_redaction_that_leaves_a_stray_fragment_is_a_lint_finding_and_fix_drops_it(tmp_path: Path):
    """humanize #87's prompt is "# Fixes https://github.com/python-humanize/humanize/issues/86":
    redacted, it read "# Fixes [redacted]", a title that says nothing, and lint called it clean."""
    from benchtape.spec.prompt_leaks import redact
    from benchtape.spec.task import load_task, task_dirs
    from benchtape.tasks.lint import fragments

    repo = clone_humanize(tmp_path / "humanize")
    made = benchtape("task", "create", "87", cwd=repo)
    assert made.returncode == 0, made.stderr
    task = load_task(task_dirs(repo)["87"])
    assert task.prompt().startswith("# Fixes https://github.com/python-humanize/humanize/issues/86")
    task.prompt_path.write_text(redact(task.prompt(), task.leaks([])))  # what `lint --fix` used to leave
    assert task.prompt().startswith("# Fixes [redacted]\n") and [f.text for f in fragments(task.prompt())] == ["# Fixes [redacted]"]
    found = benchtape("task", "lint", "87", cwd=repo)
    assert found.returncode == 1 and "line 1: a stray fragment of a redaction" in found.stdout, found.stdout
    fixed = benchtape("task", "lint", "--fix", "87", cwd=repo)
    assert fixed.returncode == 0, fixed.stdout
    text = task.prompt_path.read_text()
    assert "Fixes" not in text and "Fix intword for 1000 decillion" in text  # the line that said nothing is gone, the rest kept
    assert benchtape("task", "lint", "87", cwd=repo).returncode == 0
