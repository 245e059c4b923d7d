"""A task cell's verdict: the agent's candidate patch through the task's hidden verifier.

The pipeline (berbench §3.2), in order, the first that decides ends it:
  the candidate patch (the workspace diff against the pre-agent baseline; `.git/` left out)
  → it changes a path under `verify.protected_paths`  → guard_violation (nothing is run)
  → it is empty                                        → no_changes (nothing is run)
  → a FRESH verifier sandbox (the base tree exported anew, never the agent's) applies the
    candidate, then tests.patch                        → patch_apply_failed if either fails
  → verify.setup, verify.command                      → the verdict:
      with the validation's per-test lists (FAIL_TO_PASS / PASS_TO_PASS) and the runner's
      report of this run: passed when every FAIL_TO_PASS test passed and no PASS_TO_PASS test
      broke (the tests that decided it named; the share of FAIL_TO_PASS passed kept as
      `fail_to_pass_share`, partial credit, never the verdict); else exit 0 → passed
    (the verifier's own timeout                        → timeout; where the hidden tests
     themselves hung, as validation counts a base that hangs → failed)
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

from benchtape.envs.build import no_compiler, not_rebuilt
from benchtape.envs.project_env import env_mounts, env_notes, env_variables, environment_record, project_environment
from benchtape.sandbox.checkout import export_commit
from benchtape.sandbox.import_check import probe_command
from benchtape.sandbox.patches import changed_paths, file_blocks
from benchtape.sandbox.verifier import guarded_paths, hung_runner, log_tail, runner_settings_changed, verify_task
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
    blocks = file_blocks(patch)
    if not blocks:
        return patch
    preamble = patch[: len(patch) - sum(len(block) for _, block in blocks)]
    return preamble + b"".join(block for names, block in blocks if not any(name.startswith(OWN_STATE) for name in names))


def grade_candidate(project: Project, task: TaskSpec, candidate: bytes, *, level: str = "home", image: str | None = None) -> TaskVerdict:
    """The verdict of one candidate patch on `task` of `project` (its repository at project.root)."""
    candidate = candidate_without_state(candidate)
    recipe = project.task_recipe(task.source.base_commit)
    facts: dict[str, Any] = {"task": task.id, "fingerprint": task.fingerprint(recipe), "files": changed_paths(candidate), "bytes": len(candidate)}
    stale = _stale(task, recipe, facts)
    if stale is not None:
        return stale
    guarded = guarded_paths(candidate, task)
    if guarded:
        return TaskVerdict(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(guarded[:10]), {**facts, "guarded": guarded})
    if not candidate.strip():
        return TaskVerdict(NO_CHANGES, "the agent changed nothing in the base tree", facts)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-verify-{task.id}-"))
    try:
        work = scratch / "work"
        export_commit(project.root, task.source.base_commit, work)
        settings = runner_settings_changed(work, candidate, task)
        if settings:
            return TaskVerdict(GUARD_VIOLATION, "changed the test runner's settings: " + ", ".join(settings), {**facts, "guarded": settings})
        from benchtape.sandbox.baseimage import image_python

        env = project_environment(project, task.source.base_commit, work, level, container_python=image_python() if level == "container" and image is None else None, fix_commit=task.source.fix_commit)  # the same environment validation used
        env.materialize(work)
        wheels = project.wheelhouse() if image is None and env.venv is None else None
        site = None
        if wheels is not None:
            from benchtape.sandbox.wheelhouse import site_for

            site = site_for(wheels)
        with verifier_box(level, work, image=image, network=task.verify.network, site=site, env_for=env_variables(env, level), mounts=tuple(env_mounts(env, level))) as box:
            ev = verify_task(work, task, candidate, box.run, prepare=env.setup, probe=probe_command(env.packages))
            ev.environment = environment_record(env)
            where, notes = box.where, [*env_notes(env), *box.notes]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    evidence = {**facts, **ev.to_dict(), "level": level, "where": where, "notes": notes, "log": log_tail(ev.log)}
    evidence.pop("tests", None)  # every test's outcome is validation's to keep; a verdict names the tests that decided it
    if ev.not_installed is not None:
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the verifier could not test the tree: {ev.not_installed.get('package')} is not imported from it (project_not_installed)", {**evidence, "diagnosis": "project_not_installed"})
    if ev.status == "patch_apply_failed":
        return TaskVerdict(PATCH_APPLY_FAILED, f"{ev.patch} does not apply: {ev.detail[:300]}", {**evidence, "patch_apply_failed": True})
    if ev.status == "setup_failed" and no_compiler(ev.log):  # the candidate changed a compiled extension's sources, and nothing here compiles them
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the candidate changed the sources of {', '.join(not_rebuilt(ev.log))}, and there is no C compiler at level {level} to rebuild it: its tests were not run (grade it at level home, or give the project image a compiler)", {**evidence, "diagnosis": "no_compiler"})
    if ev.status == "setup_failed" and not_rebuilt(ev.log):  # the candidate's C did not build: a failure of the candidate, said as one (not the rebuild script's text)
        return TaskVerdict(FAILED, f"the candidate changed the sources of {', '.join(not_rebuilt(ev.log))}, and they did not build into a new binary (the build failed or fell back, leaving the base's): its tests were not run against the base's binary nor without it (the build's output is in the log)", {**evidence, "diagnosis": "not_rebuilt"})
    if ev.status == "timeout":
        hung = hung_runner(ev)
        if hung is not None and task.validation is not None and task.validation.reference_passed:
            # the hidden tests themselves ran past the deadline the reference's passed within
            # (tomlkit #470's parser hang, which validation counts as the base failing): the
            # candidate left the bug, a failure measured, never "not measured" (a setup step
            # that ran out of time still is)
            return TaskVerdict(FAILED, f"the hidden tests hung: {hung} was stopped at verify.timeout ({ev.detail}); the reference's finished in time", {**evidence, "hung": True})
        return TaskVerdict(TIMEOUT, ev.detail, evidence)
    per_test = _per_test(task, ev, evidence)
    if per_test is not None:
        return per_test
    if ev.status == "passed":
        return TaskVerdict(PASSED, f"the hidden tests passed ({_counts(ev.to_dict())})", evidence)
    return TaskVerdict(FAILED, f"the hidden tests failed ({_counts(ev.to_dict())})" if ev.status == "failed" else (ev.detail or ev.status), evidence)


def _stale(task: TaskSpec, recipe: str, facts: dict[str, Any]) -> TaskVerdict | None:
    """Not measured when the task changed since it was validated: its verifier and its
    FAIL_TO_PASS lists were proven for the task as it was, so an edited verify command that finds
    no tests read as "the candidate broke every test". A task never validated (a Harbor task run
    as it comes) is graded as it is."""
    changed = task.changed_since_validation(recipe)
    if changed is None:
        return None
    why = f"task {task.id} {changed}: its verifier was proven for the task as it was, so a verdict now would measure the edit, not the agent; validate it (benchtape task validate {task.id}), then regrade"
    return TaskVerdict(INFRASTRUCTURE_ERROR, why, {**facts, "diagnosis": "task_stale"})


def _per_test(task: TaskSpec, ev: Any, evidence: dict[str, Any]) -> TaskVerdict | None:
    """The verdict test by test, when the validation holds FAIL_TO_PASS; None otherwise (the
    exit status decides).

    A run that ends without the report every validation run gave fails: the code under test
    can end the runner itself (`process.exit(0)` where a test reaches it, `os._exit(0)` on
    import) with an exit status of 0 and no test shown passing, which the exit status alone
    took for a pass."""
    from benchtape.sandbox.testverdicts import judge_tests

    validation = task.validation
    if validation is None or not validation.fail_to_pass or ev.status not in ("passed", "failed"):
        return None
    if ev.tests is None:
        missing = list(validation.fail_to_pass)
        evidence.update({"fail_to_pass_passed": [], "fail_to_pass_failed": missing})
        return TaskVerdict(FAILED, f"the runner ended without its per-test report (exit {ev.exit}): none of the {len(missing)} FAIL_TO_PASS test(s) is shown passing", evidence)
    judged = judge_tests(ev.tests, validation.fail_to_pass, validation.pass_to_pass)
    evidence.update(judged.to_dict())
    unexplained = _unexplained_exit(ev, validation) if judged.passed else None
    if unexplained is not None:
        return TaskVerdict(FAILED, unexplained, evidence)
    said = judged.reason() + (f" (the runner exited {ev.exit})" if judged.ran == 0 else "")
    return TaskVerdict(PASSED if judged.passed else FAILED, said, evidence)


def _unexplained_exit(ev: Any, validation: Any) -> str | None:
    """Why a per-test pass is not trusted: with the reference fix the runner exited 0 at
    validation, and with this candidate it exited non-zero though every listed test is shown
    passing, and no test the report holds failing is one known to flip (flaky). The report then
    does not account for the runner's own status: code under test printed `ok` lines for the
    tests and ended its worker (slugify, newcomer pass: ava's real stream said `# fail 2`
    after the forged one). A project whose runner exits non-zero with every test passing
    (a coverage floor) exited so with the reference too, and is not held to this."""
    from benchtape.sandbox.testreports import ERROR
    from benchtape.sandbox.testreports import FAILED as FAILED_TEST

    if validation.reference.get("exit") != 0 or ev.exit in (0, None):
        return None
    failing = sorted(i for i, t in ev.tests.tests.items() if t.outcome in (FAILED_TEST, ERROR))
    if failing and all(i in validation.flaky for i in failing):
        return None
    shown = f": {', '.join(failing[:3])}" if failing else " (none failing)"
    return f"the runner exited {ev.exit} where with the reference fix it exited 0, and its report does not account for it{shown}: every listed test is shown passing, which a report the code under test can write into is not taken for a pass"


def _counts(d: dict[str, Any]) -> str:
    if d.get("runner") is None:
        return f"exit {d.get('exit')}"
    return ", ".join(f"{d[k]} {k}" for k in ("failed", "errored", "passed") if d.get(k)) or "no tests ran"


# ---------------------------------------------------------------- a recorded task cell's verdict

HISTORY, HARBOR = "history", "harbor"
INFRASTRUCTURE_ERROR = "infrastructure_error"  # the verifier could not run (an engine, an image, the task's folder): never the agent's


def task_project_root(folder: Path) -> Path:
    """The repository a history-mined task belongs to: the folder holding the `.benchtape/`
    (or `.ber/bench/`) whose `tasks/` holds this task."""
    from benchtape.spec.overlays import project_config_dirs
    from benchtape.spec.task import TASKS_DIR

    folder = folder.resolve()
    for root in folder.parents:
        if any(folder.parent == d / TASKS_DIR for d in project_config_dirs(root)):
            return root
    raise ValueError(f"{folder} is not in a project's .benchtape/tasks/ (nor .ber/bench/tasks/)")


def load_recorded_task(ref: dict[str, Any]) -> TaskSpec:
    """The task a cell recorded (`session.started.task`), loaded from its folder AS IT IS NOW:
    a repaired tests.patch (or verifier) grades an old candidate anew."""
    from benchtape.spec.harbor_task import load_task_folder

    return load_task_folder(Path(str(ref.get("folder") or "")))


def grade_recorded(ref: dict[str, Any], candidate: bytes, *, level: str, steps: list[bytes] | None = None, unstarted: str | None = None) -> tuple[TaskVerdict, str | None]:
    """The verdict of a recorded cell's candidate on its task as it is now, and the fingerprint
    it was graded against (None when the task could not be loaded). Never raises for what the
    verifier's surroundings did: that is an infrastructure_error verdict, named. `steps`: a
    multi-step task's candidates, one per step that ran (replay/harbor_steps.py); `unstarted`:
    why the step after them could not start."""
    level = level if level in ("home", "container") else "home"  # a workspace/none session's verifier still runs in a clean folder
    try:
        task = load_recorded_task(ref)
    except Exception as exc:  # noqa: BLE001 - a task folder gone or broken since: the cell cannot be graded now
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the task {ref.get('id')!r} could not be loaded from {ref.get('folder')}: {exc}", {"task": ref.get("id")}), None
    try:
        if task.runtime is not None and task.runtime.steps:
            verdict = grade_harbor_steps(task, steps if steps is not None else [candidate], level=level, unstarted=unstarted)
            return verdict, verdict.evidence.get("fingerprint")
        if task.runtime is not None:
            verdict = grade_harbor_candidate(task, candidate, level=level)
            return verdict, verdict.evidence.get("fingerprint")
        from benchtape.spec.project import load_project

        project = load_project(task_project_root(task.dir))
        from benchtape.sandbox.project_image import verifier_image

        level, said = _history_level(project, task, level)
        with verifier_image(project, task, level) as image:
            verdict = grade_candidate(project, task, candidate, level=level, image=image)
        if said:
            verdict.evidence["notes"] = [said, *verdict.evidence.get("notes", [])]
        return verdict, verdict.evidence.get("fingerprint")
    except Exception as exc:  # noqa: BLE001 - an engine down, an image that will not build, a base commit gone
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the verifier could not run at level {level}: {type(exc).__name__}: {exc}", {"task": task.id, "level": level}), None


def _history_level(project: Project, task: TaskSpec, level: str) -> tuple[str, str | None]:
    """The level a history task's verifier runs at: the session's, except a container session
    of a project with no image to verify in (no Dockerfile.benchtape, no wheelhouse: the base
    image holds a bare Python), which is verified where the task was validated (home), as
    `task validate --sandbox auto` chose; the note says so."""
    if level != "container" or project.dockerfile is not None or project.wheelhouse() is not None:
        return level, None
    validated = task.validation.level if task.validation is not None and task.validation.level in ("home", "container") else "home"
    if validated == "container":
        return level, None
    return "home", "the session ran at level container, but the project has no image to verify in (no Dockerfile.benchtape, no .benchtape/wheelhouse/): verified at level home, where the task was validated"


def grade_harbor_candidate(task: TaskSpec, candidate: bytes, *, level: str = "home") -> TaskVerdict:
    """A Harbor task's verdict on a candidate: guard → no_changes → a FRESH environment (its
    starting workspace made anew), the candidate applied, tests/test.sh's reward: 1 passed,
    else failed, a partial reward kept (evidence `reward`, the verdict's score)."""
    from benchtape.sandbox import harbor_env
    from benchtape.sandbox.patches import PatchFailed, apply_patch

    candidate = candidate_without_state(candidate)
    facts: dict[str, Any] = {"task": task.id, "fingerprint": task.fingerprint(""), "files": changed_paths(candidate), "bytes": len(candidate)}
    stale = _stale(task, "", facts)
    if stale is not None:
        return stale
    guarded = guarded_paths(candidate, task)
    if guarded:
        return TaskVerdict(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(guarded[:10]), {**facts, "guarded": guarded})
    if not candidate.strip():
        return TaskVerdict(NO_CHANGES, "the agent changed nothing in the environment's workspace", facts)
    env = harbor_env.prepare(task, level)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-harbor-verify-{task.id}-"))
    try:
        tree = harbor_env.starting_workspace(env, scratch / "work")
        try:
            apply_patch(tree, candidate)
        except PatchFailed as exc:
            return TaskVerdict(PATCH_APPLY_FAILED, f"candidate does not apply: {str(exc)[:300]}", {**facts, "patch": "candidate", "detail": str(exc), "level": env.level, "where": env.where, "patch_apply_failed": True})
        ev = harbor_env.run_verifier(env, tree, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    evidence = {**facts, **ev.to_dict(), "level": env.level, "where": env.where, "notes": list(env.notes), "log": log_tail(ev.log)}
    if ev.status == "timeout":
        # Harbor's own verifier timeout is an exception with no reward, and Harbor validation
        # refuses a task whose test.sh runs out of time (harbor_env.judge_noop): a hang here is
        # "not measured", where a git task's hang that validation counted as the bug is a failure
        return TaskVerdict(TIMEOUT, ev.detail, evidence)
    if ev.status == "passed":
        return TaskVerdict(PASSED, f"the verifier's {ev.detail}", evidence)
    return TaskVerdict(FAILED, f"the verifier's {ev.detail}" if ev.reward is not None else ev.detail, evidence)


def grade_harbor_steps(task: TaskSpec, candidates: list[bytes], *, level: str = "home", unstarted: str | None = None) -> TaskVerdict:
    """A multi-step Harbor task's verdict on its candidates, one per step (the workspace after
    each step against the tree the first started from): guard and no_changes on the last, then
    each step's verifier on a FRESH environment with its candidate applied, the rewards combined
    as Harbor combines them (sandbox/harbor_steps.py): passed when the combined reward reaches 1.

    `unstarted`: the step after the candidates could not start (its setup.sh or healthcheck
    failed). Harbor verifies each step before starting the next, so when an earlier step's
    rewards stop the steps after it, it never reaches that one and the task is scored as those
    steps left it: so is the cell here. Only when every step that ran let the next one start is
    the step that could not an infrastructure_error."""
    from benchtape.sandbox.harbor_steps import verify_steps
    from benchtape.sandbox.patches import PatchFailed, apply_patch

    runtime = task.runtime
    assert runtime is not None and runtime.steps
    candidates = [candidate_without_state(c) for c in candidates]
    final = candidates[-1] if candidates else b""
    facts: dict[str, Any] = {"task": task.id, "fingerprint": task.fingerprint(""), "files": changed_paths(final), "bytes": len(final), "strategy": runtime.reward_strategy}
    stale = _stale(task, "", facts)
    if stale is not None:
        return stale
    short = unstarted is not None and 0 < len(candidates) < len(runtime.steps)
    if len(candidates) != len(runtime.steps) and not short:
        return TaskVerdict(INFRASTRUCTURE_ERROR, f"the session ran {len(candidates)} step(s) and the task has {len(runtime.steps)} ({', '.join(s.name for s in runtime.steps)}): its steps changed since", facts)
    guarded = guarded_paths(final, task)
    if guarded:
        return TaskVerdict(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(guarded[:10]), {**facts, "guarded": guarded})
    if not short and not any(c.strip() for c in candidates):
        return TaskVerdict(NO_CHANGES, "the agent changed nothing in the environment's workspace, in any step", facts)
    by_step = {s.name: c for s, c in zip(runtime.steps, candidates)}

    def tree_of(step: Any, view: TaskSpec, env: Any, dest: Path) -> Path:
        from benchtape.sandbox import harbor_env

        tree = harbor_env.starting_workspace(env, dest)
        apply_patch(tree, by_step[step.name])
        return tree

    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-harbor-steps-{task.id}-"))
    try:
        done = verify_steps(task, level, scratch, tree_of, upto=len(candidates))
    except PatchFailed as exc:
        return TaskVerdict(PATCH_APPLY_FAILED, f"a step's candidate does not apply: {str(exc)[:300]}", {**facts, "detail": str(exc), "level": level, "patch_apply_failed": True})
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    detail = done.detail(runtime.reward_strategy)
    evidence = {**facts, "steps": done.steps, "stopped": done.stopped, "not_run": done.not_run, "level": level, "where": done.where, "notes": done.notes, "log": done.log, "reward": done.reward, "rewards": done.rewards, "detail": detail}
    if short:
        name = runtime.steps[len(candidates)].name
        evidence["unstarted"] = {"step": name, "why": unstarted}
        if done.stopped is None:  # every step that ran let the next start: the one that could not is the environment's failure
            return TaskVerdict(INFRASTRUCTURE_ERROR, f"step {name!r} could not start: {unstarted}", evidence)
    if done.reward is None:
        return TaskVerdict(TIMEOUT if done.timed_out else FAILED, detail, evidence)
    return TaskVerdict(PASSED if done.passed else FAILED, f"the verifiers' {detail}", evidence)
