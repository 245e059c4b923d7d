"""A multi-step Harbor task's steps in one cell: each step an agent phase on the one workspace.

Harbor runs a `[[steps]]` task as a sequence in one environment: before step N it copies
steps/<name>/workdir/ into the working directory and runs its setup.sh there, then the agent
is started afresh with steps/<name>/instruction.md (the files it left behind stay; its session
does not continue), then step N's verifier runs. Here each step is one session of the cell, in
order, in the sandbox the cell opened once: its `session.started` names the step (`task.step`:
name, index, count, the earlier steps' sessions, what setup.sh did, the files workdir/ and
setup.sh changed: `prelude`), so every action of a
session belongs to the step it names. The steps' verifiers run when the cell is graded
(replay/task_verdict.py grade_harbor_steps), each on the workspace as that step left it.
"""

from __future__ import annotations

import shutil
from dataclasses import replace
from typing import Any

from benchtape.sandbox.box_commands import CommandRun, run_command
from benchtape.sandbox.levels import OpenWorkspace
from benchtape.spec.identity import workspace_manifest
from benchtape.spec.task import HarborStep, TaskSpec
from benchtape.spec.task_cells import TASK_TIMEOUT, oracle_job

SETUP_COMMAND = "bash setup.sh"  # Harbor's: the step's workdir/setup.sh, from the working directory


def task_steps(spec: TaskSpec | None) -> tuple[HarborStep, ...]:
    """The task's `[[steps]]` (none for a single-step task, a history task or a bench scenario)."""
    return spec.runtime.steps if spec is not None and spec.runtime is not None else ()


def enter_step(box: OpenWorkspace, step: HarborStep, env: dict[str, str]) -> tuple[CommandRun | None, list[str]]:
    """Put steps/<name>/workdir/ into the workspace and run its setup.sh there, as Harbor does
    before the step's agent: what setup.sh did (None when the step has none), and the files this
    changed (the workspace's paths): they are the step's, part of what its verifier is given,
    never benchtape's own (grading tells them apart: replay/changes.py step_candidate)."""
    if step.workdir is None:
        return None, []
    before = workspace_manifest(box.root)
    shutil.copytree(step.workdir, box.root, symlinks=True, dirs_exist_ok=True)
    ran = run_command(box, "cd {workdir} && " + SETUP_COMMAND, env, step.agent_timeout or TASK_TIMEOUT) if step.setup_script is not None else None
    after = workspace_manifest(box.root)
    return ran, sorted(p for p in set(before) | set(after) if before.get(p) != after.get(p))


def step_session(plan: Any, spec: TaskSpec, step: HarborStep, index: int, earlier: list[str], setup: CommandRun | None, prelude: list[str], left: float) -> Any:
    """The cell's session plan as step `index` runs it: the step's instruction, its oracle, its
    time limit (within what is left of the cell's), and the step named in `session.started`."""
    prompt = step.prompt()
    scenario = replace(plan.scenario, prompt=prompt, raw={**plan.scenario.raw, "oracle": oracle_job(spec, step)})
    started = dict(plan.started)
    task = dict(started.get("task") or {})
    task["step"] = {"name": step.name, "index": index, "of": len(task_steps(spec)), "earlier": list(earlier), "setup": setup.to_dict() if setup is not None else None, "prelude": prelude}
    started["task"] = task
    params = {**plan.params, "task_step": index, "task_step_name": step.name}
    timeout = min(step.agent_timeout or TASK_TIMEOUT, left)
    return replace(plan, scenario=scenario, prompt=prompt, started=started, params=params, timeout=timeout)


def setup_failure(setup: CommandRun | None) -> str | None:
    """Why the step cannot start (its setup.sh failed), else None."""
    if setup is None or setup.ok:
        return None
    how = "timed out" if setup.timed_out else f"exited {setup.exit_code}"
    return f"the step's workdir/setup.sh {how}: {setup.output.strip()[-400:]}"
