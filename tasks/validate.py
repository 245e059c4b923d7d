"""`task validate <id>…`: prove each task's hidden verifier, in clean sandboxes, twice.

(1) the base tree + tests.patch must FAIL, with tests the runner counted; (2) the base tree +
reference.patch + tests.patch must PASS. Only when both hold is `validation:` written into
task.yaml (when, the fingerprint of the bound inputs, both flags, the counts). Each phase runs
in a fresh copy of the base commit's tree, exported without `.git`, in a fresh sandbox: a
container of the project image when an engine answers and the project has one (network off
unless `verify.network`), else a folder on this host (level home, its network taken away
where the host allows). A leaking prompt or the
placeholder command is refused before anything runs.

A Harbor task (task.toml; spec/harbor_task.py) is validated the same way in its own
environment (sandbox/harbor_env.py): (1) the environment as it starts, untouched (the
no-op), must earn a reward below 1 from tests/test.sh; (2) after solution/solve.sh (the
oracle) it must earn reward 1. Its record is written beside it (.benchtape-validation.json),
never into task.toml. Each phase is recorded in the store like any other.

This module only orchestrates: the verifier itself (patches, runner counts, diagnoses) is
benchtape.sandbox.verifier, the same function grading will call on a candidate patch.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Callable

from benchtape.core.errors import BadInput
from benchtape.envs.build import ProjectEnv
from benchtape.envs.project_env import env_mounts, env_notes, env_variables, environment_record, project_environment
from benchtape.envs.recipe import EnvError
from benchtape.sandbox.checkout import CheckoutFailed, export_commit
from benchtape.sandbox.import_check import probe_command
from benchtape.sandbox.verifier import Evidence, Judgement, judge_base, judge_reference, verify_task
from benchtape.sandbox.verifier_box import verifier_box
from benchtape.spec.harbor_task import VALIDATION_FILE, load_task_folder, validation_bytes
from benchtape.spec.project import Project
from benchtape.spec.task import TaskSpec, Validation, find_task, load_task, task_dirs, with_validation
from benchtape.tasks.gitlog import resolve
from benchtape.tasks.lint import repositories
from benchtape.tasks.validation_record import record_phase, start_run

LEVELS = ("auto", "home", "container")
PHASES = ("base", "reference")


@dataclass
class PhaseReport:
    phase: str
    evidence: Evidence
    judgement: Judgement
    log_path: Path
    session_id: str | None = None

    def to_dict(self) -> dict[str, Any]:
        ev = self.evidence.to_dict()
        ev.pop("steps", None)
        detail = "; ".join(d for d in (ev.pop("detail"), self.judgement.detail) if d)
        return {**ev, "detail": detail, "held": self.judgement.held, "diagnosis": self.judgement.diagnosis, "remedy": self.judgement.remedy, "log_path": str(self.log_path), "session": self.session_id}


@dataclass
class TaskReport:
    id: str
    validated: bool = False
    refused: str | None = None  # why nothing ran
    next: str | None = None
    level: str | None = None
    where: str | None = None
    fingerprint: str | None = None
    notes: list[str] = field(default_factory=list)
    phases: dict[str, PhaseReport] = field(default_factory=dict)
    environment: dict[str, Any] | None = None  # the project environment the phases ran in (envs/)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "validated": self.validated,
            "refused": self.refused,
            "next": self.next,
            "level": self.level,
            "where": self.where,
            "fingerprint": self.fingerprint,
            "notes": self.notes,
            "phases": {name: p.to_dict() for name, p in self.phases.items()},
            "environment": self.environment,
        }


@dataclass
class Validated:
    run_id: str | None
    level: str
    tasks: list[TaskReport]
    why: str = ""  # how the level was chosen: said on every run and kept with the run, so a level that changed between two runs of one command is explained

    @property
    def ok(self) -> bool:
        return all(t.validated for t in self.tasks)

    def to_dict(self) -> dict[str, Any]:
        return {"run": self.run_id, "level": self.level, "level_why": self.why, "ok": self.ok, "tasks": [t.to_dict() for t in self.tasks]}


Progress = Callable[[str], None]


def choose_level(level: str, project: Project, own_environments: bool = False) -> tuple[str, str]:
    """(level, why) for `--sandbox`: `auto` is container when an engine answers and the project
    has an image to verify in (a Dockerfile.benchtape, or test dependencies in its wheelhouse
    for benchtape's base image, which holds a bare Python) or every task brings its own
    environment (Harbor tasks); else home. The reason is always given: `auto` can choose
    differently between two runs of one command (an engine came up), and the user must see why."""
    if level not in LEVELS:
        raise BadInput(f"--sandbox {level!r} is no validation level", fix=f"use one of {', '.join(LEVELS)}")
    from benchtape.sandbox.container import available

    if level == "home":
        return "home", "--sandbox home, as asked"
    ok, why = available()
    if level == "container":
        if not ok:
            raise BadInput(f"--sandbox container: {why}", fix="start an engine (`.ci/docker.sh`), or validate at level home: --sandbox home")
        return "container", "--sandbox container, as asked"
    if not ok:
        return "home", f"--sandbox auto: no engine answers ({why}): validating at level home"
    if own_environments:
        return "container", "--sandbox auto: an engine answers and every task brings its own environment: validating at level container"
    if project.dockerfile is None and project.wheelhouse() is None:
        return "home", "--sandbox auto: an engine answers, but there is no project image (no Dockerfile.benchtape, no .benchtape/wheelhouse/): validating at level home; provide one to validate at level container (docs/tasks.md)"
    return "container", "--sandbox auto: an engine answers and the project has an image: validating at level container"


def validate(project: Project, ids: list[str] | None, *, store: Any, level: str = "auto", logs: Path, progress: Progress | None = None, argv: list[str] | None = None) -> Validated:
    """Validate the named tasks (every task when none); write `validation:` where both phases hold."""
    say = progress or (lambda text: None)
    folders = [find_task(project.root, i) for i in ids] if ids else list(task_dirs(project.root).values())
    if not folders:
        raise BadInput(f"no tasks in {project.config_dir / 'tasks'}", fix="create some: benchtape task scan, then benchtape task create N")
    tasks = [load_task_folder(f) for f in folders]
    chosen, why = choose_level(level, project, own_environments=all(t.runtime is not None for t in tasks))
    say(why)
    run_id = start_run(store, [t.id for t in tasks], chosen, argv, why=why)
    reports = [_validate_one(project, task, chosen, store, run_id, logs, say) for task in tasks]
    return Validated(run_id, chosen, reports, why)


def _validate_one(project: Project, task: TaskSpec, level: str, store: Any, run_id: str, logs: Path, say: Progress) -> TaskReport:
    report = TaskReport(task.id, level=level)
    findings = task.leaks(repositories(project))
    if findings:
        report.refused = f"the prompt leaks where the answer is ({'; '.join(f.describe() for f in findings[:3])})"
        report.next = f"benchtape task lint --fix {task.id}"
        return report
    if task.runtime is not None:
        return _validate_harbor(task, report, store, run_id, logs, say)
    if task.verify.placeholder:
        report.refused = "verify.command is the placeholder `false`"
        report.next = f"write the command that runs the hidden tests in {task.path}, then validate again"
        return report
    if resolve(project.root, task.source.base_commit) is None:
        report.refused = f"the base commit {task.source.base_commit[:12]} is not in this repository"
        report.next = "fetch the history that holds it (git fetch), or validate in the repository the task came from"
        return report
    report.fingerprint = task.fingerprint(project.task_recipe(task.source.base_commit))
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-validate-{task.id}-"))
    try:
        base_tree = scratch / "base"
        try:
            export_commit(project.root, task.source.base_commit, base_tree)
        except CheckoutFailed as exc:
            report.refused = f"exporting the base tree failed: {exc}"
            return report
        try:
            env = project_environment(project, task.source.base_commit, base_tree, level, say, container_python=_image_python(level))
            mounts = tuple(env_mounts(env, level))
        except EnvError as exc:
            report.refused = f"the project's environment could not be built: {exc}"
            report.next = "fix what the message names, or declare what the build needs with `env:` in .benchtape/config.yaml (docs/tasks.md, \"Project environments\"); `benchtape doctor` shows what was detected"
            return report
        report.environment = env.to_dict()
        report.notes.extend(n for n in env_notes(env) if n not in report.notes)
        with _image(project, task, base_tree, level, report) as image:
            if env.venv is not None:  # the base image with the environment mounted, not a bare Python
                report.notes = [n for n in report.notes if not n.startswith("no Dockerfile.benchtape")]
            for phase in PHASES:
                say(f"{task.id}: {phase} …")
                work = scratch / phase / "work"
                shutil.copytree(base_tree, work, symlinks=True)
                env.materialize(work)
                with _box(project, task, work, level, image, env, mounts) as box:
                    report.where = box.where
                    report.notes.extend(n for n in box.notes if n not in report.notes)
                    candidate = task.reference() if phase == "reference" else None
                    evidence = verify_task(work, task, candidate, box.run, name="reference.patch", prepare=env.setup, probe=probe_command(env.packages))
                    evidence.environment = environment_record(env)
                base = report.phases["base"].evidence if "base" in report.phases else None
                judgement = judge_base(evidence, work) if phase == "base" else judge_reference(evidence, base, work)
                log_path = _write_log(logs, task.id, phase, evidence)
                phase_report = PhaseReport(phase, evidence, judgement, log_path)
                summary = phase_report.to_dict()
                summary.pop("session")
                facts = {"kind": "history", "level": level, "where": report.where, "work_dir": str(work), "fingerprint": report.fingerprint}
                phase_report.session_id = record_phase(store, run_id, task.id, phase, evidence, summary, facts)
                report.phases[phase] = phase_report
                say(f"{task.id}: {phase} {evidence.status} ({_counts_text(evidence)})" + (f" — {judgement.diagnosis}" if judgement.diagnosis else ""))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if all(report.phases[p].judgement.held for p in PHASES):
        _write_validation(task, report, level)
        report.validated = True
        report.next = "benchtape task list"
    else:
        failed = next(report.phases[p] for p in PHASES if not report.phases[p].judgement.held)
        report.next = failed.judgement.remedy
    return report


HARBOR_PHASES = {"base": "the environment untouched (no-op)", "reference": "after solution/solve.sh (oracle)"}


def _validate_harbor(task: TaskSpec, report: TaskReport, store: Any, run_id: str, logs: Path, say: Progress) -> TaskReport:
    """A Harbor task: the no-op must earn a reward below 1, the oracle reward 1, each verified in
    a fresh sandbox of the task's own environment."""
    from benchtape.sandbox import harbor_env
    from benchtape.sandbox.baseimage import ImageBuildError

    if task.solution is None:
        report.refused = "it has no solution/solve.sh, so the oracle cannot show it can be solved"
        report.next = harbor_env.REMEDIES["no_solution"]
        return report
    report.fingerprint = task.fingerprint("")
    try:
        env = harbor_env.prepare(task, report.level or "home")
    except ImageBuildError as exc:
        report.refused = str(exc)
        report.next = "load the image it names (docker load), or start the Dockerfile FROM benchtape's base image"
        return report
    report.where = env.where
    report.notes.extend(env.notes)
    scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-validate-{task.id}-"))
    try:
        for phase, what in HARBOR_PHASES.items():
            say(f"{task.id}: {phase}, {what} …")
            work = harbor_env.starting_workspace(env, scratch / phase / "work")
            steps = []
            if phase == "reference":
                t0 = time.monotonic()
                solved = harbor_env.run_solution(env, work, scratch / phase)
                steps.append({"command": harbor_env.SOLVE_COMMAND, "exit": solved.exit_code, "timed_out": solved.timed_out, "seconds": round(time.monotonic() - t0, 3)})
            evidence = harbor_env.run_verifier(env, work, scratch / phase)
            if phase == "reference":
                evidence.steps = steps + evidence.steps
                evidence.log = f"$ {harbor_env.SOLVE_COMMAND}\n{solved.output}\n" + evidence.log
            judgement = harbor_env.judge_noop(evidence) if phase == "base" else harbor_env.judge_oracle(evidence)
            log_path = _write_log(logs, task.id, phase, evidence)
            phase_report = PhaseReport(phase, evidence, judgement, log_path)
            summary = phase_report.to_dict()
            summary.pop("session")
            facts = {"kind": "harbor", "level": env.level, "where": env.where, "work_dir": str(work), "fingerprint": report.fingerprint}
            phase_report.session_id = record_phase(store, run_id, task.id, phase, evidence, summary, facts)
            report.phases[phase] = phase_report
            say(f"{task.id}: {phase} {evidence.status} ({evidence.detail})" + (f" — {judgement.diagnosis}" if judgement.diagnosis else ""))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if all(report.phases[p].judgement.held for p in PHASES):
        _write_harbor_validation(task, report, env.level)
        report.validated = True
        report.next = "benchtape task list"
    else:
        report.next = next(report.phases[p] for p in PHASES if not report.phases[p].judgement.held).judgement.remedy
    return report


def _write_harbor_validation(task: TaskSpec, report: TaskReport, level: str) -> None:
    import os

    validation = Validation(
        at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        fingerprint=report.fingerprint or "",
        base_failed=True,
        reference_passed=True,
        level=level,
        runner="reward",
    )
    path = task.dir / VALIDATION_FILE
    tmp = path.with_name(f"{path.name}.tmp")
    tmp.write_bytes(validation_bytes(validation, {p: report.phases[p].evidence.reward for p in PHASES}))
    os.replace(tmp, path)
    load_task_folder(task.dir)  # what was written reads back


def _image(project: Project, task: TaskSpec, base_tree: Path, level: str, report: TaskReport) -> Any:
    """The container image a task's phases run in (None: benchtape's base image, or level home)."""
    from benchtape.sandbox.project_image import verifier_image

    return verifier_image(project, task, level, base_tree, report.notes)


def _box(project: Project, task: TaskSpec, work: Path, level: str, image: str | None, env: ProjectEnv, mounts: tuple[str, ...]) -> Any:
    from benchtape.sandbox.wheelhouse import site_for

    wheels = project.wheelhouse() if image is None and env.venv is None else None
    return verifier_box(level, work, image=image, network=task.verify.network, site=site_for(wheels) if wheels is not None else None, env_for=env_variables(env, level), mounts=mounts)


def _image_python(level: str) -> str | None:
    from benchtape.sandbox.baseimage import image_python

    return image_python() if level == "container" else None


def _write_log(logs: Path, task_id: str, phase: str, evidence: Evidence) -> Path:
    folder = logs / task_id
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{phase}.log"
    path.write_text(evidence.log or f"({evidence.status}: {evidence.detail})\n", encoding="utf-8")
    return path


def _write_validation(task: TaskSpec, report: TaskReport, level: str) -> None:
    import os

    base, ref = report.phases["base"].evidence, report.phases["reference"].evidence
    validation = Validation(
        at=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        fingerprint=report.fingerprint or "",
        base_failed=True,
        reference_passed=True,
        level=level,
        runner=ref.runner or base.runner,
        base=base.counts.to_dict(),
        reference=ref.counts.to_dict(),
    )
    text = with_validation(task.path.read_text(encoding="utf-8"), validation)
    tmp = task.path.with_name(f".{task.path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, task.path)
    load_task(task.dir)  # what was written reads back


def _counts_text(ev: Evidence) -> str:
    c = ev.counts
    if c.runner is None:
        return f"exit {ev.exit}" if ev.exit is not None else ev.status
    parts = [f"{n} {w}" for n, w in ((c.failed, "failed"), (c.errored, "errors"), (c.passed, "passed"), (c.skipped, "skipped")) if n]
    return ", ".join(parts) or "no tests ran"
