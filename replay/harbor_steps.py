"""A multi-step Harbor task's verdict: each step's verifier, in order, then the rewards combined.

As Harbor grades a `[[steps]]` task: step N's verifier (its tests, its environment) runs on the
workspace as step N left it (here: a FRESH environment, the candidate after step N applied,
as a single-step task's verifier runs, sandbox/harbor_env.py). The steps stop early, as
Harbor's do, after a step whose verifier gave no reward, or whose rewards fall below its
`min_reward`; the steps after it count for nothing. The task's rewards are then combined by
`multi_step_reward_strategy`: `mean` (Harbor's default) averages each key over the steps that
gave rewards (a key a step did not write counts 0 for it), `final` takes the last such step's.
The pass rule is the single-step one on the combined rewards: the `reward` key, else the lowest
key, must reach 1.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any, Sequence

from benchtape.spec.task import HarborStep, TaskSpec

GATE_MISSING = float("-inf")  # a key min_reward names and the step did not write: below any threshold (Harbor's)


def combine(rewards: Sequence[dict[str, float] | None], strategy: str) -> dict[str, float] | None:
    """The task's rewards from its steps' (None for a step whose verifier gave none)."""
    given = [r for r in rewards if r is not None]
    if strategy == "final":
        return dict(rewards[-1]) if rewards and rewards[-1] is not None else None
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


def grade_harbor_steps(task: TaskSpec, candidates: Sequence[bytes], *, level: str = "home") -> Any:
    """The verdict of a multi-step task on its candidates, one per step (the workspace after
    each step against the one it started from): guard and no_changes on the last, then each
    step's verifier in a fresh environment, the rewards combined (module docstring)."""
    from benchtape.replay.task_verdict import FAILED, GUARD_VIOLATION, INFRASTRUCTURE_ERROR, NO_CHANGES, PASSED, PATCH_APPLY_FAILED, TIMEOUT, TaskVerdict, candidate_without_state
    from benchtape.sandbox import harbor_env
    from benchtape.sandbox.patches import PatchFailed, apply_patch, changed_paths
    from benchtape.sandbox.verifier import guarded_paths, log_tail, reward_of
    from benchtape.spec.harbor_task import step_view

    runtime = task.runtime
    assert runtime is not None and runtime.steps
    steps = runtime.steps
    candidates = [candidate_without_state(c) for c in candidates]
    final = candidates[-1] if candidates else b""
    facts: dict[str, Any] = {"task": task.id, "fingerprint": task.fingerprint(""), "files": changed_paths(final), "bytes": len(final), "strategy": runtime.reward_strategy}
    if len(candidates) != len(steps):
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the session ran {len(candidates)} step(s) and the task now has {len(steps)} ({', '.join(s.name for s in steps)}): its steps changed since", facts)
    guarded = guarded_paths(final, task)
    if guarded:
        return TaskVerdict(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(guarded[:10]), {**facts, "guarded": guarded})
    if not any(c.strip() for c in candidates):
        return TaskVerdict(NO_CHANGES, "the agent changed nothing in the environment's workspace, in any step", facts)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-harbor-steps-{task.id}-"))
    done: list[dict[str, Any]] = []
    rewards: list[dict[str, float] | None] = []
    notes: list[str] = []
    logs: list[str] = []
    stopped: str | None = None
    where = level
    try:
        for step, candidate in zip(steps, candidates):
            view = step_view(task, step, scratch / "tests" / step.name)
            env = harbor_env.prepare(view, level)
            where = env.where
            notes += [n for n in env.notes if n not in notes]
            tree = harbor_env.starting_workspace(env, scratch / "work" / step.name)
            try:
                apply_patch(tree, candidate)
            except PatchFailed as exc:
                return TaskVerdict(PATCH_APPLY_FAILED, f"the candidate after step {step.name!r} does not apply: {str(exc)[:300]}", {**facts, "step": step.name, "detail": str(exc), "level": env.level, "where": env.where, "patch_apply_failed": True})
            ev = harbor_env.run_verifier(env, tree, scratch / "run" / step.name)
            rewards.append(ev.rewards)
            done.append({"name": step.name, "status": ev.status, "reward": ev.reward, "rewards": ev.rewards, "detail": ev.detail, "exit": ev.exit, "seconds": round(ev.seconds, 3)})
            logs.append(f"--- step {step.name}\n{ev.log}")
            stopped = gate(step, ev.rewards)
            if stopped is not None:
                break
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    combined = combine(rewards, runtime.reward_strategy)
    skipped = [s.name for s in steps[len(done):]]
    evidence = {**facts, "steps": done, "stopped": stopped, "not_run": skipped, "level": level, "where": where, "notes": notes, "log": log_tail("\n".join(logs))}
    if combined is None:
        if any(d["status"] == "timeout" for d in done):
            return TaskVerdict(TIMEOUT, f"step {done[-1]['name']!r}'s verifier timed out: {done[-1]['detail']}", evidence)
        return TaskVerdict(FAILED, f"no step's verifier gave a reward ({done[-1]['detail']})", evidence)
    reward = reward_of(combined)
    how = "mean over the steps" if runtime.reward_strategy == "mean" else "the final step's"
    per = ", ".join(f"{d['name']} {d['reward']:g}" if d["reward"] is not None else f"{d['name']} none" for d in done)
    detail = f"reward {reward:g} ({how}: {per}" + (f"; {stopped}, the steps after it not run" if stopped and skipped else "") + ")"
    evidence.update(reward=reward, rewards=combined, detail=detail)
    return TaskVerdict(PASSED if reward >= harbor_env.PASSED_AT else FAILED, f"the verifiers' {detail}", evidence)
