"""`benchtape check` on tasks (issue 33's negative control): the no-op agent runs every task,
and the control holds only when none passes (`no_changes` or `failed`). A folder of Harbor tasks and an evaluation whose
`tasks:` lists them are both checked; the control's cells are their own evaluation, so the
evaluation's `compare` never counts the no-op as a setup."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e.cli import benchtape  # noqa: E402

from benchtape.sandbox.harbor_env import can_map_paths  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"

pytestmark = pytest.mark.skipif(not can_map_paths(), reason="Harbor tasks at level home need unprivileged mount namespaces (unshare -rm)")


def _project(tmp: Path, broken: bool = False) -> Path:
    subprocess.run(["git", "init", "-q", str(tmp)], check=True)
    folder = shutil.copytree(FIXTURES / "hello-file", tmp / "tasks" / "hello-file")
    if broken:
        always = shutil.copytree(folder, tmp / "tasks" / "always-passes")
        (always / "tests" / "test.sh").write_text("#!/bin/bash\nmkdir -p /logs/verifier\necho 1 > /logs/verifier/reward.txt\n")
    return tmp / "tasks"


def test_the_control_holds_when_the_noop_passes_no_task(tmp_path: Path):
    tasks = _project(tmp_path)
    out = benchtape("check", str(tasks), "--json", "--db", str(tmp_path / "c.db"), cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["holds"] is True and [c["task"] for c in doc["cells"]] == ["hello-file"]
    assert doc["cells"][0]["outcome"] == "no_changes" and doc["evaluation"].endswith(":control")


def test_the_noops_empty_change_is_no_changes_before_any_verifier_runs(tmp_path: Path):
    """As the spec's pipeline orders it: an empty candidate is no_changes, so even a verifier
    that passes anything cannot pass the no-op; `task validate` is what refuses that verifier."""
    tasks = _project(tmp_path, broken=True)
    out = benchtape("check", str(tasks), "--json", "--db", str(tmp_path / "c.db"), cwd=tmp_path, timeout=300)
    doc = json.loads(out.stdout)
    # the no-op changes nothing, so each cell is no_changes before any verifier runs (the spec's
    # pipeline); a verifier that passes an untouched tree is `task validate`'s base_already_passes
    assert out.returncode == 0 and doc["holds"] is True, out.stdout + out.stderr
    assert sorted((c["task"], c["outcome"]) for c in doc["cells"]) == [("always-passes", "no_changes"), ("hello-file", "no_changes")]


def test_an_evaluation_over_tasks_is_checked_by_name_apart_from_its_setups(tmp_path: Path):
    tasks = _project(tmp_path, broken=True)
    evaluations = tmp_path / ".benchtape" / "evaluations"
    evaluations.mkdir(parents=True)
    (evaluations / "mine.yaml").write_text(f"apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: [{tasks}]\ntools:\n  - tool: oracle\n    model: reference\n")
    out = benchtape("check", "mine", "--json", "--db", str(tmp_path / "c.db"), cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["evaluation"] == "mine:control" and sorted(c["task"] for c in doc["cells"]) == ["always-passes", "hello-file"]
    compared = benchtape("compare", "mine", "--json", "--db", str(tmp_path / "c.db"), cwd=tmp_path, timeout=120)
    assert "mock" not in compared.stdout  # the control's no-op is no setup of the evaluation
