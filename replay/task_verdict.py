"""A task cell's verdict: the agent's candidate patch through the task's hidden verifier.

The pipeline (berbench §3.2), in order, the first that decides ends it:
  the candidate patch (the workspace diff against the pre-agent baseline; `.git/` left out)
  → it changes a path under `verify.protected_paths`  → guard_violation (nothing is run)
  → it is empty                                        → no_changes (nothing is run)
  → a FRESH verifier sandbox (the base tree exported anew, never the agent's) applies the
    candidate, then tests.patch                        → patch_apply_failed if either fails
  → verify.setup, verify.command: exit 0               → passed, else failed
    (the verifier's own timeout                        → timeout)
The verifier's log tail and the runner's counts are the verdict's evidence. The verifier is
benchtape.sandbox.verifier.verify_task, the same function `task validate` runs, so a task
graded here is graded as it was validated. Grading reads the task as it is NOW: a repaired
tests.patch re-grades a stored candidate without running the agent again.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.sandbox.checkout import export_commit
from benchtape.sandbox.patches import changed_paths
from benchtape.sandbox.verifier import guarded_paths, log_tail, verify_task
from benchtape.sandbox.verifier_box import verifier_box
from benchtape.spec.project import Project
from benchtape.spec.task import TaskSpec

PASSED, FAILED, NO_CHANGES, GUARD_VIOLATION, PATCH_APPLY_FAILED, TIMEOUT = "passed", "failed", "no_changes", "guard_violation", "patch_apply_failed", "timeout"
OWN_STATE = (".git/",)  # the workspace's fresh repository: its objects are never part of a candidate


@dataclass
class TaskVerdict:
    outcome: str  # passed | failed | no_changes | guard_violation | patch_apply_failed | timeout
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED


def candidate_without_state(patch: bytes) -> bytes:
    """The candidate minus the file patches of `.git/` (an agent that committed changed it)."""
    parts = patch.split(b"diff --git ")
    kept = [parts[0]] + [p for p in parts[1:] if not any(p.startswith(b"a/" + s.encode()) for s in OWN_STATE)]
    return b"diff --git ".join(kept) if len(kept) > 1 else kept[0]


def grade_candidate(project: Project, task: TaskSpec, candidate: bytes, *, level: str = "home", image: str | None = None) -> TaskVerdict:
    """The verdict of one candidate patch on `task` of `project` (its repository at project.root)."""
    candidate = candidate_without_state(candidate)
    facts: dict[str, Any] = {"task": task.id, "fingerprint": task.fingerprint(project.image_recipe()), "files": changed_paths(candidate), "bytes": len(candidate)}
    guarded = guarded_paths(candidate, task)
    if guarded:
        return TaskVerdict(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(guarded[:10]), {**facts, "guarded": guarded})
    if not candidate.strip():
        return TaskVerdict(NO_CHANGES, "the agent changed nothing in the base tree", facts)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-verify-{task.id}-"))
    try:
        work = scratch / "work"
        export_commit(project.root, task.source.base_commit, work)
        wheels = project.wheelhouse() if image is None else None
        site = None
        if wheels is not None:
            from benchtape.sandbox.wheelhouse import site_for

            site = site_for(wheels)
        with verifier_box(level, work, image=image, network=task.verify.network, site=site) as box:
            ev = verify_task(work, task, candidate, box.run)
            where, notes = box.where, list(box.notes)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    evidence = {**facts, **ev.to_dict(), "level": level, "where": where, "notes": notes, "log": log_tail(ev.log)}
    if ev.status == "patch_apply_failed":
        return TaskVerdict(PATCH_APPLY_FAILED, f"{ev.patch} does not apply: {ev.detail[:300]}", {**evidence, "patch_apply_failed": True})
    if ev.status == "timeout":
        return TaskVerdict(TIMEOUT, ev.detail, evidence)
    if ev.status == "passed":
        return TaskVerdict(PASSED, f"the hidden tests passed ({_counts(ev.to_dict())})", evidence)
    return TaskVerdict(FAILED, f"the hidden tests failed ({_counts(ev.to_dict())})" if ev.status == "failed" else (ev.detail or ev.status), evidence)


def _counts(d: dict[str, Any]) -> str:
    if d.get("runner") is None:
        return f"exit {d.get('exit')}"
    return ", ".join(f"{d[k]} {k}" for k in ("failed", "errored", "passed") if d.get(k)) or "no tests ran"
