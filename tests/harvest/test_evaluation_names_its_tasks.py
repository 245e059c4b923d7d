"""An evaluation over task folders says where its tasks come from and which it skips (issue 44:
the template had no `tasks:` key and `validate` printed "tasks: 5 from " with nothing after it)."""

from __future__ import annotations

import json

from e2e.cli import benchtape
from harvestkit import clone_toolz


def test_the_template_names_tasks_and_validate_names_the_task_folders(tmp_path):
    repo = clone_toolz(tmp_path / "toolz")
    assert benchtape("task", "create", "603", cwd=repo).returncode == 0
    made = benchtape("evaluation", "create", "ev", cwd=repo)
    assert made.returncode == 0, made.stderr
    assert "# tasks: all" in (repo / ".benchtape" / "evaluations" / "ev.yaml").read_text()
    shown = benchtape("evaluation", "validate", "ev", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    assert lines[1] == "tasks: 0 from task folders (all)"
    assert lines[2].strip().startswith("task 603 skipped (unvalidated)") and "benchtape task validate 603" in lines[2]
    doc = json.loads(benchtape("evaluation", "validate", "ev", "--json", cwd=repo).stdout)
    assert doc["task_folders"] == ["all"] and doc["tasks"] == [] and "603" in doc["skipped_tasks"][0]
