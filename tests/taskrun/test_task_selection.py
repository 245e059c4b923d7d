"""Which tasks an evaluation runs (spec/evaluation.py `tasks:`, spec/task_cells.py): bench
scenarios and task folders side by side, `all` by default in a project of tasks, only valid
ones (the rest said), unknown ids refused by name; a task folder's identity is its content.
Real files, no run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.evaluation import load_evaluation
from benchtape.spec.identity import task_hash
from benchtape.spec.task_cells import folder_task

ROOT = Path(__file__).resolve().parents[2]
HARBOR = ROOT / "fixtures-red" / "harbor"
DEMO = ROOT / "fixtures-red" / "demo"
HEAD = "apiVersion: benchtape/v1alpha1\nkind: Evaluation\n"
TOOLS = "tools:\n  - tool: oracle\n    model: reference\n"


def _project(tmp_path: Path, evaluation: str, *, bench: bool = False, tasks: bool = False) -> Path:
    root = tmp_path / "proj"
    (root / ".benchtape" / "evaluations").mkdir(parents=True)
    (root / ".benchtape" / "evaluations" / "e.yaml").write_text(HEAD + evaluation + TOOLS)
    shutil.copytree(HARBOR, root / "harbor")
    if bench:
        shutil.copy(DEMO / "bench.yaml", root / "madbench.yaml")
        shutil.copytree(DEMO / "calc", root / "calc")
    if tasks:
        shutil.copytree(HARBOR / "hello-file", root / ".benchtape" / "tasks" / "hello-file")
    return root


def test_bench_scenarios_and_harbor_tasks_side_by_side(tmp_path: Path):
    root = _project(tmp_path, "bench: madbench.yaml\ntasks: [harbor]\n", bench=True)
    ev = load_evaluation("e", root, user=tmp_path / "nouser")
    ev.direct = True  # the fixtures are not validated: run them as `benchtape run DIR` would
    kinds = {t.id: t.kind for t in ev.tasks()}
    assert set(kinds.values()) == {"scenario", "harbor"}
    assert [i for i, k in kinds.items() if k == "harbor"] == sorted(p.name for p in HARBOR.iterdir() if (p / "task.toml").is_file())
    assert len(ev.cells()) == len(kinds)


def test_an_evaluation_over_unvalidated_tasks_runs_none_and_says_why(tmp_path: Path):
    root = _project(tmp_path, "tasks: [harbor]\n")
    ev = load_evaluation("e", root, user=tmp_path / "nouser")
    assert ev.tasks() == [] and ev.bench_paths == []
    assert {s.id: s.state for s in ev.skipped} == {"fix-the-sum": "unvalidated", "hello-file": "unvalidated", "two-files-partial": "unvalidated"}
    assert all("benchtape task validate" in s.next and not s.ran for s in ev.skipped)
    with pytest.raises(BadInput, match="unvalidated"):
        ev.select(["hello-file"])


def test_no_bench_in_a_project_of_tasks_means_all_of_them(tmp_path: Path):
    root = _project(tmp_path, "", tasks=True)
    ev = load_evaluation("e", root, user=tmp_path / "nouser")
    assert ev.task_refs == ["all"] and ev.bench_paths == []
    ev.tasks()
    assert [s.id for s in ev.skipped] == ["hello-file"]


def test_an_unknown_task_is_refused_with_the_closest(tmp_path: Path):
    root = _project(tmp_path, "tasks: [hello-fil]\n", tasks=True)
    ev = load_evaluation("e", root, user=tmp_path / "nouser")
    with pytest.raises(BadInput, match="hello-fil") as err:
        ev.tasks()
    assert "hello-file" in (err.value.fix or "")


def test_a_harbor_tasks_identity_is_its_folders_content(tmp_path: Path):
    from benchtape.spec.harbor_task import load_harbor_task

    folder = tmp_path / "hello-file"
    shutil.copytree(HARBOR / "hello-file", folder)
    before = task_hash(folder_task(load_harbor_task(folder), tmp_path))
    assert task_hash(folder_task(load_harbor_task(folder), tmp_path)) == before  # stable
    (folder / "tests" / "test.sh").write_text((folder / "tests" / "test.sh").read_text() + "# edited\n")
    assert task_hash(folder_task(load_harbor_task(folder), tmp_path)) != before  # any file of the folder


def test_a_number_is_taken_only_for_a_number_one_keystroke_away():
    """markupsafe newcomer: `task validate 12345` suggested "did you mean '293'?" (two digits in
    common pass difflib's cutoff). A PR number is offered only one keystroke away."""
    from benchtape.core.errors import closest

    tasks = ["109", "224", "293", "311", "477", "hello-file"]
    assert closest("12345", tasks) is None
    assert closest("239", tasks) == "293" and closest("4777", tasks) == "477" and closest("31", tasks) == "311"
    assert closest("hello-fil", tasks) == "hello-file"
