"""A multi-step Harbor task's verifiers: each step's, in order, then the rewards combined.

As Harbor grades a `[[steps]]` task, step N's verifier (its tests, its environment) runs on
the workspace as step N left it; here in a FRESH environment with the workspace after step N
applied, as a single-step task's verifier runs (sandbox/harbor_env.py). The steps stop early,
as Harbor's do, after a step whose verifier gave no reward or whose rewards fall below its
`min_reward`: the steps after it count for nothing. The task's rewards are then combined by
`multi_step_reward_strategy`: `mean` (Harbor's default) averages each key over the steps that
gave rewards (a key a step did not write counts 0 for it), `final` takes the last such step's.
The pass rule is the single-step one, on the combined rewards: the `reward` key, else the lowest
key, must reach 1 (verifier.reward_of).

Two callers: grading (replay/task_verdict.py: the workspace after each step is a candidate
patch) and `task validate` (`run_steps`: the no-op and the oracle played step by step here).
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence

from benchtape.sandbox import harbor_env
from benchtape.sandbox.testcounts import Counts
from benchtape.sandbox.verifier import Evidence, log_tail, reward_of
from benchtape.spec.harbor_task import step_view
from benchtape.spec.task import HarborStep, TaskSpec

GATE_MISSING = float("-inf")  # a key min_reward names and the step did not write: below any threshold (Harbor's)


def combine(rewards: Sequence[dict[str, float] | None], strategy: str) -> dict[str, float] | None:
    """The task's rewards from its steps' (None for a step whose verifier gave none)."""
    if strategy == "final":
        return dict(rewards[-1]) if rewards and rewards[-1] is not None else None
    given = [r for r in rewards if r is not None]
    keys = sorted({k for r in given for k in r})
    if not keys:
        return None
    return {k: sum(r.get(k, 0.0) for r in given) / len(given) for k in keys}


def gate(step: HarborStep, rewards: dict[str, float] | None) -> str | None:
    """Why the steps after `step` do not run (None when they do)."""
    if rewards is None:
        return f"step {step.name!r}'s verifier gave no reward"
    for key, threshold in step.min_reward:
        got = rewards.get(key, GATE_MISSING)
        if got < threshold:
            return f"step {step.name!r}: {key} {got:g} is below its min_reward {threshold:g}"
    return None


@dataclass
class StepsEvidence:
    """What a multi-step task's verifiers did, step by step, and the rewards combined."""

    steps: list[dict[str, Any]] = field(default_factory=list)  # name, status, reward, rewards, detail, exit, seconds
    rewards: dict[str, float] | None = None  # combined
    stopped: str | None = None  # why the steps after the last one verified did not count
    not_run: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    log: str = ""
    where: str = ""
    timed_out: bool = False

    @property
    def reward(self) -> float | None:
        return reward_of(self.rewards) if self.rewards else None

    @property
    def passed(self) -> bool:
        return self.reward is not None and self.reward >= harbor_env.PASSED_AT

    def detail(self, strategy: str) -> str:
        per = ", ".join(f"{d['name']} {d['reward']:g}" if d["reward"] is not None else f"{d['name']} none" for d in self.steps)
        if self.reward is None:
            return f"no step's verifier gave a reward ({per})"
        how = "mean over the steps" if strategy == "mean" else "the final step's"
        return f"reward {self.reward:g} ({how}: {per}" + (f"; {self.stopped}, the steps after it not run" if self.stopped and self.not_run else "") + ")"

    def to_evidence(self, strategy: str) -> Evidence:
        """One Evidence for the task (what a single-step verifier run gives: `task validate` judges it)."""
        status = "timeout" if self.reward is None and self.timed_out else ("passed" if self.passed else "failed")
        return Evidence(status, None, Counts(None), self.log, sum(float(d["seconds"]) for d in self.steps), detail=self.detail(strategy), reward=self.reward, rewards=self.rewards)


# A step's tree, prepared: (the step, the step as a single-step task, its environment) -> the workspace its verifier is given.
Prepare = Callable[[HarborStep, TaskSpec, harbor_env.HarborEnv, Path], Path]


def verify_steps(task: TaskSpec, level: str, scratch: Path, tree_of: Prepare, upto: int | None = None) -> StepsEvidence:
    """Each step's verifier in a fresh environment on the workspace `tree_of` makes for it,
    until one stops the steps after it (or the first `upto` steps, the ones that ran, are
    verified); the rewards combined (module docstring)."""
    runtime = task.runtime
    assert runtime is not None and runtime.steps
    out = StepsEvidence(where=level)
    rewards: list[dict[str, float] | None] = []
    logs: list[str] = []
    for step in runtime.steps[:upto]:
        view = step_view(task, step, scratch / "tests" / step.name)
        env = harbor_env.prepare(view, level)
        out.where = env.where
        out.notes += [n for n in env.notes if n not in out.notes]
        tree = tree_of(step, view, env, scratch / "work" / step.name)
        ev = harbor_env.run_verifier(env, tree, scratch / "run" / step.name)
        rewards.append(ev.rewards)
        out.timed_out = out.timed_out or ev.status == "timeout"
        out.steps.append({"name": step.name, "status": ev.status, "reward": ev.reward, "rewards": ev.rewards, "detail": ev.detail, "exit": ev.exit, "seconds": round(ev.seconds, 3)})
        logs.append(f"--- step {step.name}\n{ev.log}")
        out.stopped = gate(step, ev.rewards)
        if out.stopped is not None:
            break
    out.not_run = [s.name for s in runtime.steps[len(out.steps):]]
    out.rewards = combine(rewards, runtime.reward_strategy)
    out.log = log_tail("\n".join(logs))
    return out


def run_steps(task: TaskSpec, level: str, scratch: Path, *, oracle: bool) -> tuple[StepsEvidence, list[str]]:
    """`task validate`'s phases of a multi-step task: the workspace carried from step to step as
    Harbor carries it (each step's workdir/ put in, its setup.sh run, then, for the oracle, its
    solution/solve.sh), each step verified on a copy of the workspace as that step left it. Also
    what each command printed, for the phase's log."""
    runtime = task.runtime
    assert runtime is not None and runtime.steps
    first = harbor_env.prepare(step_view(task, runtime.steps[0], scratch / "tests" / "_start"), level)
    work = harbor_env.starting_workspace(first, scratch / "carried")
    said: list[str] = []

    def tree_of(step: HarborStep, view: TaskSpec, env: harbor_env.HarborEnv, dest: Path) -> Path:
        if step.workdir is not None:
            shutil.copytree(step.workdir, work, symlinks=True, dirs_exist_ok=True)
            if step.setup_script is not None:
                done = harbor_env.run_in_workspace(env, work, scratch / "setup" / step.name, "bash setup.sh")
                said.append(f"$ bash setup.sh  # step {step.name}\n{done.output}")
        if oracle and view.solution is not None:
            done = harbor_env.run_solution(env, work, scratch / "solve" / step.name, step)
            said.append(f"$ {harbor_env.SOLVE_COMMAND}  # step {step.name}\n{done.output}")
        shutil.rmtree(dest, ignore_errors=True)
        shutil.copytree(work, dest, symlinks=True)
        return dest

    return verify_steps(task, level, scratch, tree_of), said
