"""Task cells in a store, written with the Store API the way the run loop records them (no
record side needed): a `session.started` naming the task (the contract: kind, id, folder,
fingerprint) and the workspace, the workspace snapshotted before the agent (the staged
snapshot, and the cell's baseline) and after it (the final snapshot)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Callable

from benchtape.core.model import Action
from benchtape.core.payloads import STAGED
from benchtape.replay.grading import TASK_VERIFY, GradingContext, grade_stored, new_grading
from benchtape.sandbox.snapshot import snapshot
from benchtape.spec.task import TaskSpec
from benchtape.store.database import Store

Change = Callable[[Path], None]


def task_ref(task: TaskSpec, recipe: str = "") -> dict[str, str]:
    """What a task cell's session.started records of its task."""
    return {"kind": "harbor" if task.runtime is not None else "history", "id": task.id, "folder": str(task.dir), "fingerprint": task.fingerprint(recipe)}


def record_task_cell(store: Store, task: TaskSpec, workspace: Path, change: Change | None, *, recipe: str = "", sandbox: str = "home", run_id: str | None = None) -> str:
    """One finished task cell whose agent made `change` in `workspace` (None: the no-op agent)."""
    run_id = run_id or store.new_run("run")
    sid = store.new_session(run_id, task.id, harness="mock", workdir=str(workspace))
    staged_tar, staged_facts = snapshot(workspace)
    staged = store.put_blob(staged_tar)
    if change is not None:
        change(workspace)
    final, facts = snapshot(workspace)
    final_sha = store.put_blob(final)
    started = {"scenario": task.id, "prompt": task.prompt(), "harness": "mock", "model": "mock-solve", "sandbox": sandbox, "work_dir": str(workspace), "task": task_ref(task, recipe), "cell": {"id": f"cell-{task.id}", "baseline": staged}}
    store.append(
        sid,
        [
            Action("session.started", started),
            Action("workspace.snapshot", {"sha256": staged, **staged_facts, "stage": STAGED}),
            Action("message.user", {"text": task.prompt()}),
            Action("message.assistant", {"text": "done"}),
            Action("final_output", {"text": "done"}),
            Action("workspace.snapshot", {"sha256": final_sha, **facts}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 5.0}),
        ],
    )
    return sid


def grade_live(store: Store, sid: str) -> tuple[str, dict]:
    """Live grading of one task cell (a bench-less grading, as a task cell has no checks):
    the grading's id and its task:verify verdict row."""
    gid = new_grading(store, "live", {}, bench_path=None)
    grade_stored(store, gid, sid, [], GradingContext())
    return gid, task_verdict(store, gid, sid)


def task_verdict(store: Store, gid: str, sid: str) -> dict:
    (row,) = [v for v in store.verdicts(grading_id=gid, session_id=sid) if v["check_path"] == TASK_VERIFY]
    return row


def git_apply(patch: bytes) -> Change:
    def change(ws: Path) -> None:
        subprocess.run(["git", "apply", "-"], input=patch, cwd=ws, check=True, capture_output=True)

    return change
