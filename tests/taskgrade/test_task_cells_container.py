"""A history-mined task cell recorded at level container is verified at level container: in
benchtape's base image with the project's wheelhouse, or in the project image its
Dockerfile.benchtape builds (the build validation uses, now in sandbox/project_image.py)."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from e2e.cli import benchtape  # noqa: E402
from harvestkit import clone_toolz  # noqa: E402
from taskgradekit import git_apply, grade_live, record_task_cell  # noqa: E402
from test_task_container import PYTEST_DEPS, wheel_of  # noqa: E402

from benchtape.sandbox.task_workspace import fresh_workspace  # noqa: E402
from benchtape.spec.project import load_project  # noqa: E402
from benchtape.spec.task import load_task, task_dirs  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("docker")]
TASK = "434"


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: container grading NOT RUN: {why}")
    repo = clone_toolz(tmp_path_factory.mktemp("container-grade") / "toolz")
    assert benchtape("task", "create", TASK, cwd=repo).returncode == 0
    return {"repo": repo, "task": load_task(task_dirs(repo)[TASK])}


def _cell(toolz: dict[str, Any], tmp_path: Path) -> dict[str, Any]:
    task = toolz["task"]
    store = Store(tmp_path / "s.db")
    ws = fresh_workspace(toolz["repo"], task.source.base_commit, tmp_path / "ws")
    sid = record_task_cell(store, task, ws, git_apply(task.reference()), recipe=load_project(toolz["repo"]).task_recipe(task.source.base_commit), sandbox="container")
    return grade_live(store, sid)[1]


def test_in_the_base_image_with_the_wheelhouse(toolz: dict[str, Any], tmp_path: Path):
    wheels = toolz["repo"] / ".benchtape" / "wheelhouse"
    wheels.mkdir()
    try:
        for name in PYTEST_DEPS:
            wheel_of(name, wheels)
        row = _cell(toolz, tmp_path)
    finally:
        import shutil

        shutil.rmtree(wheels)
    ev = row["evidence"]
    assert (ev["outcome"], row["status"]) == ("passed", "PASS"), row["reason"] + ev.get("log", "")
    assert ev["level"] == "container" and ev["where"].startswith("container benchtape-base:")


def test_in_the_project_image_its_dockerfile_builds(toolz: dict[str, Any], tmp_path: Path):
    from benchtape.sandbox.baseimage import BASE_IMAGE

    dockerfile = toolz["repo"] / "Dockerfile.benchtape"
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nCOPY . /workspace\nRUN test -f /workspace/toolz/itertoolz.py && test ! -e /workspace/.git\n")
    try:
        row = _cell(toolz, tmp_path)
    finally:
        dockerfile.unlink()
    ev = row["evidence"]
    assert ev["where"].startswith("container benchtape-project:"), row["reason"]
    # that image has no pytest: the verifier ran in it and failed, saying why (never a pass)
    assert (ev["outcome"], row["status"]) == ("failed", "FAIL") and "pytest" in ev["log"]
