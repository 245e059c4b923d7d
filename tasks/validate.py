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

import dataclasses
import re
import shutil
import time
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from benchtape.core.errors import BadInput
from benchtape.envs.build import ProjectEnv, no_compiler, not_rebuilt
from benchtape.envs.project_env import ENV_BUILD_FIX, env_mounts, env_notes, env_variables, environment_record, project_environment
from benchtape.envs.recipe import EnvError
from benchtape.sandbox.capture import SessionFolder
from benchtape.sandbox.checkout import CheckoutFailed, export_commit
from benchtape.sandbox.import_check import probe_command
from benchtape.sandbox.patches import changed_paths
from benchtape.sandbox.testcounts import runner_of
from benchtape.sandbox.testreports import ERROR, TestReport, suite_command
from benchtape.sandbox.testverdicts import Split, split_tests
from benchtape.sandbox.verifier import Evidence, Judgement, hung_runner, judge_base, judge_reference, verify, verify_task
from benchtape.sandbox.verifier_box import verifier_box
from benchtape.spec.harbor_task import VALIDATION_FILE, load_task_folder, validation_bytes
from benchtape.spec.project import Project
from benchtape.spec.task import TaskSpec, Validation, find_task, load_task, task_dirs, with_validation
from benchtape.spec.task_cells import OUTCOME
from benchtape.tasks.gitlog import resolve
from benchtape.tasks.hidden_tests import added_test_names, promise_warning, promised_tests
from benchtape.tasks.interface import unnamed_interface, warning
from benchtape.tasks.lint import repositories
from benchtape.tasks.prompt_text import thin_warning
from benchtape.tasks.validation_record import record_phase, start_run

if TYPE_CHECKING:
    from benchtape.store.views import RecordingStore

LEVELS = ("auto", "home", "container")
PHASES = ("base", "reference")
REFERENCE_RUNS = 3  # the reference phase's runs: a test whose outcome flips between them is flaky
HEALTH_REMEDIES = {
    "flaky": "a FAIL_TO_PASS test (or the whole run) flipped between the reference's runs: make it deterministic (seeds, time, order), or drop it from tests.patch",
    "fails_alone": "these tests fail when run alone but pass in the whole suite: they depend on other tests (order, shared state, imports), not on the fix; make them independent, or run the suite in verify.command",
    "changing_ids": "the failing tests' ids change from run to run (parameters made when collected, such as the current time), so no run can be matched to another: give them fixed ids (pytest's `ids=`), then validate again",
    "no_fail_to_pass": "no test failed at the base and passed with the reference (the runner's report named none): check tests.patch and verify.command",
}


@dataclass(frozen=True)
class Place:
    """Where every verifier run of one task happens: its image (None: the base image, or level
    home) and its project environment (envs/), with what a container mounts for it."""

    image: str | None
    env: ProjectEnv
    mounts: tuple[str, ...] = ()


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
    inputs: dict[str, str] = field(default_factory=dict)  # the fingerprint's parts (TaskSpec.bound_inputs), kept in the validation
    notes: list[str] = field(default_factory=list)
    phases: dict[str, PhaseReport] = field(default_factory=dict)
    environment: dict[str, Any] | None = None  # the project environment the phases ran in (envs/)
    tests: Split | None = None  # per test: FAIL_TO_PASS, PASS_TO_PASS, flaky, skipped (None: no per-test report)
    health: Judgement | None = None  # the verifier's health after both phases held (flaky, fails alone)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tests": self.tests.to_dict() if self.tests is not None else None,
            "health": {"held": self.health.held, "diagnosis": self.health.diagnosis, "remedy": self.health.remedy, "detail": self.health.detail} if self.health is not None else None,
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
    if project.dockerfile is None and _node_project(project):
        return "container", "--sandbox auto: an engine answers, and a Node project's dependencies are installed on this host and mounted into benchtape's base image: validating at level container"
    if project.dockerfile is None and project.wheelhouse() is None:
        return "home", "--sandbox auto: an engine answers, but there is no project image (no Dockerfile.benchtape, no .benchtape/wheelhouse/): validating at level home; `--sandbox container` validates in benchtape's base image with the project environment built here and mounted, and a Dockerfile.benchtape gives the project an image of its own (docs/tasks.md)"
    return "container", "--sandbox auto: an engine answers and the project has an image: validating at level container"


def _node_project(project: Project) -> bool:
    """Whether the checkout is a Node project (its package.json, read as detection reads it): its
    node_modules is built here and mounted into the base image, so it needs no wheelhouse."""
    from benchtape.envs.detect import detect
    from benchtape.spec.project_tree import FolderTree

    return detect(FolderTree(project.root)).language == "node"


def validate(project: Project, ids: list[str] | None, *, store: RecordingStore, level: str = "auto", logs: Path, progress: Progress | None = None, argv: list[str] | None = None) -> Validated:
    """Validate the named tasks (every task when none); write `validation:` where both phases hold."""
    say = progress or (lambda text: None)
    folders = [find_task(project.root, i) for i in ids] if ids else list(task_dirs(project.root).values())
    if not folders:
        raise BadInput(f"no tasks in {project.config_dir / 'tasks'}", fix="create some: benchtape task scan, then benchtape task create N")
    tasks, broken, errors = [], [], []
    for folder in folders:
        try:
            tasks.append(load_task_folder(folder))
        except BadInput as exc:
            if ids:  # the user named it: its file, line and fix, as any bad input (exit 2)
                raise
            errors.append(exc)
            where = f"{exc.file or folder}" + (f":{exc.line}" if exc.line else "")
            broken.append(TaskReport(folder.name, refused=f"its task file does not load: {where}: {exc.what}", next=f"fix {where}" + (f" ({exc.fix})" if exc.fix else "") + f", then: benchtape task validate {folder.name}"))
    if not tasks:  # nothing to validate: the first one's file, line and fix, the others counted
        if len(errors) > 1:
            errors[0].what += f" (and {len(errors) - 1} other task(s) do not load either: `benchtape task list` says why)"
            errors[0].args = (errors[0].render(),)
        raise errors[0]
    chosen, why = choose_level(level, project, own_environments=all(t.runtime is not None for t in tasks))
    say(why)
    run_id = start_run(store, [t.id for t in tasks], chosen, argv, why=why)
    reports = list(broken)  # every task, broken ones said (`task list` says why too), the others validated
    for report in broken:
        say(f"{report.id}: not validated: {report.refused}")
    for task in tasks:
        report = _validate_one(project, task, chosen, store, run_id, logs, say)
        write_outcome(logs, report, chosen)
        reports.append(report)
    return Validated(run_id, chosen, reports, why)


def _extra_for_missing(judgement: Judgement, tree: Path) -> Judgement:
    """A module the tests miss that one of the project's own extras provides: the remedy names
    `env.extras`, where "name it in env.install" sent cattrs #708's user to PyPI's unrelated
    `bson` (its extra `bson` is pymongo), and the next run blamed the Python version."""
    found = re.match(r"no module named '([\w.]+)'", judgement.detail or "") if judgement.diagnosis == "missing_dependency" else None
    if found is None:
        return judgement
    from benchtape.envs.detect import extras_providing
    from benchtape.spec.project_tree import FolderTree

    module = found.group(1).split(".")[0]
    extras = extras_providing(FolderTree(tree), module)
    if not extras:
        return judgement
    listed = ", ".join(extras)
    return replace(judgement, remedy=f"the project's own extra {listed} provides {module!r}: add it to `env.extras` in .benchtape/config.yaml (`env: {{extras: [{listed}]}}`); `env.install: [{module}]` would install PyPI's package of that name, which may be another project")


def _scratch(task_id: str) -> SessionFolder:
    """A validation's scratch folder in the temp dir, locked while it runs and naming no store,
    as a run's session folder is: what a killed validation leaves (an exported tree, each
    phase's copies) is removed by the next sweep (any run's start, the next validation's,
    `benchtape recover`) instead of staying in the temp dir for good."""
    return SessionFolder.create(purpose=f"task validate {task_id}")


def write_outcome(logs: Path, report: TaskReport, level: str) -> None:
    """What this validation concluded, beside the task's logs: a task that did not hold is not
    "never validated" in `task list` (structlog's 739 said so after five minutes of validation,
    sending the user to run the same five minutes again)."""
    import datetime
    import os

    import orjson

    failed = next((f"{name}: {p.judgement.diagnosis or 'did not hold'}" + (f" ({p.judgement.detail[:200]})" if p.judgement.detail else "") for name, p in report.phases.items() if not p.judgement.held), None)
    health = f"health: {report.health.diagnosis}" if report.health is not None and not report.health.held else None
    why = (report.refused or "").split("\n", 1)[0][:300] or failed or health or ""
    doc = {"at": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"), "validated": report.validated, "level": level, "why": why, "next": report.next, "fingerprint": report.fingerprint}
    folder = logs / report.id
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{OUTCOME}.tmp"
    tmp.write_bytes(orjson.dumps(doc))
    os.replace(tmp, folder / OUTCOME)


def _validate_one(project: Project, task: TaskSpec, level: str, store: RecordingStore, run_id: str, logs: Path, say: Progress) -> TaskReport:
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
    recipe = project.task_recipe(task.source.base_commit)
    report.fingerprint, report.inputs = task.fingerprint(recipe), task.bound_inputs(recipe)
    unnamed = unnamed_interface(task.tests_patch().decode("utf-8", "surrogateescape"), (task.reference() or b"").decode("utf-8", "surrogateescape"), task.prompt())
    if unnamed:
        report.notes.append(warning(unnamed))
    promised = promised_tests(task.prompt(), changed_paths(task.tests_patch()), added_test_names(task.tests_patch()))
    if promised:
        report.notes.append(promise_warning(promised))
    thin = thin_warning(task.prompt())
    if thin:
        report.notes.append(thin)
    scratch_folder = _scratch(task.id)
    scratch = scratch_folder.path
    try:
        base_tree = scratch / "export"  # never under a phase's folder: each phase copies it whole
        try:
            export_commit(project.root, task.source.base_commit, base_tree)
        except CheckoutFailed as exc:
            report.refused = f"exporting the base tree failed: {exc}"
            return report
        try:
            env = project_environment(project, task.source.base_commit, base_tree, level, say, container_python=_image_python(level), fix_commit=task.source.fix_commit)
            mounts = tuple(env_mounts(env, level))
        except EnvError as exc:
            report.refused = f"the project's environment could not be built: {exc}"
            report.next = ENV_BUILD_FIX
            return report
        report.environment = env.to_dict()
        report.notes.extend(n for n in env_notes(env) if n not in report.notes)
        with _image(project, task, base_tree, level, report) as image:
            if env.venv is not None or env.node_modules:  # the base image with the environment mounted, not a bare Python
                report.notes = [n for n in report.notes if not n.startswith("no Dockerfile.benchtape")]
            place = Place(image, env, mounts)
            for phase in PHASES:
                say(f"{task.id}: {phase} …")
                work = scratch / phase / "work"
                shutil.copytree(base_tree, work, symlinks=True)
                env.materialize(work)
                with _box(project, task, work, level, place) as box:
                    report.where = box.where
                    report.notes.extend(n for n in box.notes if n not in report.notes)
                    candidate = task.reference() if phase == "reference" else None
                    evidence = verify_task(work, task, candidate, box.run, name="reference.patch", prepare=env.setup, probe=probe_command(env.packages))
                    evidence.environment = environment_record(env)
                removed = not_rebuilt(evidence.log)
                if removed:
                    report.notes.append(f"the {phase}'s patches changed the sources of {', '.join(removed)}, which could not be rebuilt in {report.where or 'this box'}{' (no C compiler there)' if no_compiler(evidence.log) else ''}: the tests were not run, neither against the base's binary nor without it; validate at level home, or give the project image a compiler")
                base = report.phases["base"].evidence if "base" in report.phases else None
                judgement = judge_base(evidence, work, task.tests_patch()) if phase == "base" else judge_reference(evidence, base, work)
                judgement = _extra_for_missing(judgement, work)
                if evidence.status == "setup_failed" and no_compiler(evidence.log):  # not the task's fault, nor a verify.setup step's
                    judgement = replace(judgement, diagnosis="no_compiler", remedy="give the project image a C compiler (a Dockerfile.benchtape whose image has one), or validate at level home, where this host's compiler rebuilds the extension", detail="; ".join(f"{b} could not be rebuilt: no C compiler" for b in not_rebuilt(evidence.log)))
                log_path = _write_log(logs, task.id, phase, evidence)
                phase_report = PhaseReport(phase, evidence, judgement, log_path)
                summary = phase_report.to_dict()
                summary.pop("session")
                facts = {"kind": "history", "level": level, "where": report.where, "work_dir": str(work), "fingerprint": report.fingerprint}
                phase_report.session_id = record_phase(store, run_id, task.id, phase, evidence, summary, facts)
                report.phases[phase] = phase_report
                ran_as = evidence.tests.note if evidence.tests is not None else None  # a runner's own word on how the tests ran (vitest projects)
                if ran_as and ran_as not in report.notes:
                    report.notes.append(ran_as)
                say(f"{task.id}: {phase} {evidence.status} ({_counts_text(evidence)})" + (f" — {judgement.diagnosis}" if judgement.diagnosis else ""))
            again: list[Evidence] = []
            if report.phases["base"].judgement.held and report.phases["reference"].judgement.diagnosis == "gold_still_fails":
                # a flip first (the same command again), then a test that needs the whole suite
                again = _again_at_reference(project, task, level, place, base_tree, scratch, report, store, run_id, logs, say)
                if report.phases["reference"].judgement.diagnosis == "gold_still_fails":
                    _alone_at_reference(project, task, level, place, base_tree, scratch, report, store, run_id, logs, say)
            if all(report.phases[p].judgement.held for p in PHASES):
                _health(project, task, level, place, base_tree, scratch, report, store, run_id, logs, say, again)
    finally:
        scratch_folder.close()
    if all(report.phases[p].judgement.held for p in PHASES) and report.health is not None and report.health.held:
        _write_validation(task, report, level)
        report.validated = True
        report.next = "benchtape task list"
    elif report.health is not None and not report.health.held:
        report.next = report.health.remedy
    else:
        failed = next(report.phases[p] for p in PHASES if not report.phases[p].judgement.held)
        report.next = failed.judgement.remedy
    return report


def hang_timeout(reference_seconds: float, timeout: float) -> int | None:
    """A verify.timeout for a task whose base hangs: ten times its slowest reference run, in
    whole minutes (at least one), when that is less than the one it has; None otherwise."""
    enough = max(60, -(-int(reference_seconds * 10) // 60) * 60)
    return enough if enough < timeout else None


def _health(project: Project, task: TaskSpec, level: str, place: Place, base_tree: Path, scratch: Path, report: TaskReport, store: RecordingStore, run_id: str, logs: Path, say: Progress, again: list[Evidence] | None = None) -> None:
    """After both phases held: the reference run REFERENCE_RUNS times in all, counting the runs
    made `again` after a first that failed (a test that flips is named), the base's whole suite
    once (tests broken before are left out of PASS_TO_PASS; a FAIL_TO_PASS test that passes
    there fails alone), and the per-test lists."""
    import dataclasses

    base = report.phases["base"].evidence
    references = [report.phases["reference"].evidence, *(again or [])]
    for n in range(len(references) + 1, REFERENCE_RUNS + 1):
        say(f"{task.id}: reference, run {n} of {REFERENCE_RUNS} …")
        references.append(_reference_run(n, project, task, level, place, base_tree, scratch, report, store, run_id, logs)[0])
    suite = None
    wide = suite_command(task.verify.command, runner_of(task.verify.command), base_tree)
    base_tests = base.tests
    as_a_whole = base_tests is None and all(r.tests is not None for r in references) and report.phases["base"].judgement.held
    if as_a_whole:
        # its runner died before its summary (judge_base): no test passed there, so every test the
        # reference passes is FAIL_TO_PASS, and a candidate whose run ends the same way fails
        # them all, where an exit status of 0 would have passed it
        first = references[0].tests
        assert first is not None
        base_tests = TestReport(first.runner, "none", {})
        why = "it hung: its runner was stopped at verify.timeout" if hung_runner(base) else "its runner stopped before its summary"
        report.notes.append(f"the base gave no per-test report ({why}): every test the reference passes is FAIL_TO_PASS")
        slowest = max(r.seconds for r in references)
        enough = hang_timeout(slowest, task.verify.timeout)
        if hung_runner(base) and enough is not None:
            # every graded attempt that leaves the hang waits the whole limit (loguru #1237: 15
            # minutes a cell, where the reference ran in 10 s)
            report.notes.append(f"each graded attempt that leaves the hang waits verify.timeout ({task.verify.timeout:.0f}s), where the reference ran in {slowest:.0f}s: set `timeout: \"{enough}s\"` under `verify:` in task.yaml, then validate again")
    if base_tests is None:
        report.notes.append("the runner gave no per-test report: the verdict is the verify command's exit status (no FAIL_TO_PASS / PASS_TO_PASS lists)")
    elif as_a_whole:
        # the whole suite holds the tests that hung, took the memory or ended the runner there:
        # it would end the same way, with no report to take a baseline from (marko #261's took
        # seven minutes to reach the memory cap, twice)
        report.notes.append(f"the whole suite was not run at the base{f' (`{wide}`)' if wide else ''}: it holds the tests that {'hung' if hung_runner(base) else 'ended its runner'} there")
    elif wide is None:
        report.notes.append(f"the whole suite was not run at the base (no way to widen `{task.verify.command}` to it is known): a test that fails alone but passes in the suite is not looked for")
    elif wide != task.verify.command:
        say(f"{task.id}: the whole suite at the base …")
        suite, work = _fresh_run(project, task, level, place, base_tree, scratch / "base.suite", [("tests.patch", task.tests_patch())], dataclasses.replace(task.verify, command=wide), report)
        _record_extra(task, "base.suite", suite, Judgement(True, "", ""), work, level, report, store, run_id, logs)
        found = suite.tests
        if found is None:
            report.notes.append(f"the base's whole suite (`{wide}`) gave no per-test report ({suite.status}): its baseline is not used")
        elif not found.tests:
            # the runner's own discovery finds none of the tests the verify command names
            # (itsdangerous's tests.py, which pytest collects only when named): no baseline
            report.notes.append(f"the base's whole suite (`{wide}`) ran no test (its runner's discovery finds none of the tests `{task.verify.command}` runs): its baseline is not used")
            suite = None
        else:
            # pytest's id of a module it could not collect has no `::` (tomlkit's toml-test cases
            # live in a git submodule that no task tree holds): its tests have no baseline
            lost = [f"{i} ({t.message or 'error'})" for i, t in found.tests.items() if "::" not in i and t.outcome == ERROR and found.runner == "pytest"]
            if lost:
                more = f"; and {len(lost) - 3} more" if len(lost) > 3 else ""
                report.notes.append(f"the base's whole suite could not collect {len(lost)} module(s), whose tests have no baseline: " + "; ".join(lost[:3]) + more)
    statuses = sorted({r.status for r in references})
    if base_tests is None or any(r.tests is None for r in references):
        flipped = len(statuses) > 1
        report.health = Judgement(False, "flaky", HEALTH_REMEDIES["flaky"], f"the reference's {REFERENCE_RUNS} runs ended {', '.join(r.status for r in references)}") if flipped else Judgement(True, "", "")
        return
    split = split_tests(base_tests, [r.tests for r in references if r.tests is not None], suite.tests if suite is not None else None)
    report.tests = split
    if split.flaky:
        report.notes.append(f"flaky, left out of FAIL_TO_PASS and PASS_TO_PASS ({REFERENCE_RUNS} reference runs): " + "; ".join(f"{i} ({' / '.join(o)})" for i, o in list(split.flaky.items())[:5]))
    if split.changing:
        report.notes.append("ids that change from run to run (parameters made when the tests are collected, such as the current time), left out of FAIL_TO_PASS and PASS_TO_PASS: " + "; ".join(f"{stem}[…] ({n} ids)" for stem, n in list(split.changing.items())[:5]))
    if split.skipped_at_base:
        report.notes.append("skipped at the base: " + "; ".join(f"{i} ({why})" for i, why in list(split.skipped_at_base.items())[:5]) + (f"; and {len(split.skipped_at_base) - 5} more" if len(split.skipped_at_base) > 5 else ""))
    if split.broken_before:
        report.notes.append(f"{len(split.broken_before)} test(s) fail in the base's whole suite, left out of PASS_TO_PASS: " + ", ".join(split.broken_before[:5]))
    if split.fails_alone:
        report.notes.append(f"{len(split.fails_alone)} test(s) fail alone at the base but pass in its whole suite, left out of FAIL_TO_PASS: " + ", ".join(split.fails_alone[:5]))
    shared = _shared_failure(split.fail_with_fix, references[0].tests)
    if shared is not None:
        report.notes.append(shared)
    if split.fail_to_pass:
        report.health = Judgement(True, "", "")
    elif split.flaky:
        report.health = Judgement(False, "flaky", HEALTH_REMEDIES["flaky"], "flipped: " + ", ".join(list(split.flaky)[:5]))
    elif split.changing:
        report.health = Judgement(False, "changing_ids", HEALTH_REMEDIES["changing_ids"], ", ".join(f"{stem}[…]" for stem in list(split.changing)[:5]))
    elif split.fails_alone:
        report.health = Judgement(False, "fails_alone", HEALTH_REMEDIES["fails_alone"], ", ".join(split.fails_alone[:5]))
    else:
        report.health = Judgement(False, "no_fail_to_pass", HEALTH_REMEDIES["no_fail_to_pass"])
    if not report.health.held:
        say(f"{task.id}: health — {report.health.diagnosis} ({report.health.detail})")


def _shared_failure(failing: list[str], reference: TestReport | None) -> str | None:
    """The one error most of the tests that fail with the fix too share (backoff #65: 21 async
    tests, `module 'asyncio' has no attribute 'coroutine'` on Python 3.11, dropped from both
    lists): named, with what would let them count, or None when they fail each their own way."""
    if reference is None or len(failing) < 2:
        return None
    messages = [reference.tests[i].message for i in failing if i in reference.tests and reference.tests[i].message]
    if not messages:
        return None
    common = max(set(messages), key=messages.count)
    if messages.count(common) * 2 < len(failing):
        return None
    return (
        f"{messages.count(common)} of the {len(failing)} test(s) that fail with the fix too (in neither list) fail with the same error, {common[:200]!r}: "
        "where that is this Python or a dependency's release, not the code (a removed API), `env.python` or `env.overrides` in .benchtape/config.yaml would let them count"
    )


def _alone_at_reference(project: Project, task: TaskSpec, level: str, place: Place, base_tree: Path, scratch: Path, report: TaskReport, store: RecordingStore, run_id: str, logs: Path, say: Progress) -> None:
    """The reference failed: when every test that failed passes in the whole suite with the
    reference, they fail alone (they lean on other tests), which is no gold_still_fails."""
    import dataclasses

    ref = report.phases["reference"]
    wide = suite_command(task.verify.command, runner_of(task.verify.command), base_tree)
    failing = ref.evidence.tests.with_outcome("failed", "error") if ref.evidence.tests is not None else []
    if not failing or wide is None or wide == task.verify.command:
        return
    say(f"{task.id}: the whole suite with the reference …")
    suite, work = _fresh_run(project, task, level, place, base_tree, scratch / "reference.suite", [("reference.patch", task.reference() or b""), ("tests.patch", task.tests_patch())], dataclasses.replace(task.verify, command=wide), report)
    _record_extra(task, "reference.suite", suite, Judgement(True, "", ""), work, level, report, store, run_id, logs)
    if suite.tests is not None and all(suite.tests.tests.get(t) is not None and suite.tests.tests[t].outcome == "passed" for t in failing):
        ref.judgement = Judgement(False, "fails_alone", HEALTH_REMEDIES["fails_alone"], f"{len(failing)} test(s) fail under `{task.verify.command}` but pass in the whole suite (`{wide}`): " + ", ".join(failing[:5]))


def _again_at_reference(project: Project, task: TaskSpec, level: str, place: Place, base_tree: Path, scratch: Path, report: TaskReport, store: RecordingStore, run_id: str, logs: Path, say: Progress) -> list[Evidence]:
    """The reference failed tests (gold_still_fails) in a run that ended with its report: run it
    again, up to REFERENCE_RUNS in all, until a run holds. One that holds makes the failure a
    flip, not the fix's: the phase holds and the health check, given these runs, names the
    flaky tests and leaves them out of both lists. google/uuid #150's flaky TestVersion6 made
    one validation in three blame the reference patch and the environment. The runs made are
    returned (none when the first did not end with a report, or hung: that is no flip)."""
    ref = report.phases["reference"]
    if ref.evidence.tests is None or hung_runner(ref.evidence):
        return []
    runs: list[Evidence] = []
    for n in range(2, REFERENCE_RUNS + 1):
        say(f"{task.id}: the reference failed: run {n} of {REFERENCE_RUNS}, to tell a flip from a failure …")
        ev, judgement = _reference_run(n, project, task, level, place, base_tree, scratch, report, store, run_id, logs)
        runs.append(ev)
        if judgement.held:
            failed = ref.evidence.tests.with_outcome("failed", "error")
            report.notes.append(f"the reference failed its first run and held in run {n}: " + ", ".join(failed[:5]) + (" failed once" if failed else " flipped"))
            ref.judgement = Judgement(True, "", "")
            break
    return runs


def _reference_run(n: int, project: Project, task: TaskSpec, level: str, place: Place, base_tree: Path, scratch: Path, report: TaskReport, store: RecordingStore, run_id: str, logs: Path) -> tuple[Evidence, Judgement]:
    """The reference's run `n` (2 and on): a fresh tree, judged as the phase is, kept as `reference.N`."""
    ev, work = _fresh_run(project, task, level, place, base_tree, scratch / f"reference.{n}", [("reference.patch", task.reference() or b""), ("tests.patch", task.tests_patch())], task.verify, report)
    judgement = judge_reference(ev, report.phases["base"].evidence, work)
    _record_extra(task, f"reference.{n}", ev, judgement, work, level, report, store, run_id, logs)
    return ev, judgement


def _fresh_run(project: Project, task: TaskSpec, level: str, place: Place, base_tree: Path, folder: Path, patches: list[tuple[str, bytes]], spec: Any, report: TaskReport) -> tuple[Evidence, Path]:
    """One more verifier run on a fresh copy of the base tree, in a fresh box, in the same
    project environment as the phases."""
    work = folder / "work"
    shutil.copytree(base_tree, work, symlinks=True)
    place.env.materialize(work)
    with _box(project, task, work, level, place) as box:
        report.notes.extend(n for n in box.notes if n not in report.notes)
        # no import check: the phases made it in this environment, on this tree's layout
        evidence = verify(work, patches, spec, box.run, prepare=place.env.setup)
        evidence.environment = environment_record(place.env)
        return evidence, work


def _record_extra(task: TaskSpec, phase: str, evidence: Evidence, judgement: Judgement, work: Path, level: str, report: TaskReport, store: RecordingStore, run_id: str, logs: Path) -> None:
    log_path = _write_log(logs, task.id, phase, evidence)
    phase_report = PhaseReport(phase, evidence, judgement, log_path)
    summary = phase_report.to_dict()
    summary.pop("session")
    facts = {"kind": "history", "level": level, "where": report.where, "work_dir": str(work), "fingerprint": report.fingerprint}
    phase_report.session_id = record_phase(store, run_id, task.id, phase, evidence, summary, facts)
    report.phases[phase] = phase_report


HARBOR_PHASES = {"base": "the environment untouched (no-op)", "reference": "after solution/solve.sh (oracle)"}


def _validate_harbor(task: TaskSpec, report: TaskReport, store: RecordingStore, run_id: str, logs: Path, say: Progress) -> TaskReport:
    """A Harbor task: the no-op must earn a reward below 1, the oracle reward 1, each verified in
    a fresh sandbox of the task's own environment."""
    from benchtape.sandbox import harbor_env
    from benchtape.sandbox.baseimage import ImageBuildError

    lacking = [s.name for s in task.runtime.steps if s.solution is None] if task.runtime is not None else []
    if lacking:  # a multi-step task: each step's oracle is its own solve.sh, else the task's
        report.refused = f"step(s) {', '.join(lacking)} have no steps/<name>/solution/solve.sh (nor the task a solution/solve.sh), so the oracle cannot show the task can be solved"
        report.next = f"write steps/{lacking[0]}/solution/solve.sh"
        return report
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
    scratch_folder = _scratch(task.id)
    scratch = scratch_folder.path
    try:
        for phase, what in HARBOR_PHASES.items():
            say(f"{task.id}: {phase}, {what} …")
            if task.runtime is not None and task.runtime.steps:  # a multi-step task: its steps in turn, each verified (sandbox/harbor_steps.py)
                from benchtape.sandbox.harbor_steps import run_steps

                (scratch / phase).mkdir(parents=True)
                played, said = run_steps(task, env.level, scratch / phase, oracle=phase == "reference")
                work = scratch / phase / "carried"
                evidence = played.to_evidence(task.runtime.reward_strategy)
                evidence.log = "".join(f"{s}\n" for s in said) + evidence.log
                _harbor_phase(task, report, store, run_id, logs, phase, evidence, env, work)
                say(f"{task.id}: {phase} {evidence.status} ({evidence.detail})")
                continue
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
            judgement = _harbor_phase(task, report, store, run_id, logs, phase, evidence, env, work)
            say(f"{task.id}: {phase} {evidence.status} ({evidence.detail})" + (f" — {judgement.diagnosis}" if judgement.diagnosis else ""))
    finally:
        scratch_folder.close()
    if all(report.phases[p].judgement.held for p in PHASES):
        _write_harbor_validation(task, report, env.level)
        report.validated = True
        report.next = "benchtape task list"
    else:
        report.next = next(report.phases[p] for p in PHASES if not report.phases[p].judgement.held).judgement.remedy
    return report


def _harbor_phase(task: TaskSpec, report: TaskReport, store: RecordingStore, run_id: str, logs: Path, phase: str, evidence: Any, env: Any, work: Path) -> Any:
    """One phase of a Harbor task's validation judged, its log written and its session recorded."""
    from benchtape.sandbox import harbor_env

    judgement = harbor_env.judge_noop(evidence) if phase == "base" else harbor_env.judge_oracle(evidence)
    unapplied = harbor_env.home_unapplied(task) if env.level == "home" and not judgement.held else []
    if unapplied:  # what the Dockerfile installs is not here: the task may hold in its image
        judgement = dataclasses.replace(judgement, remedy=f"environment/Dockerfile's {', '.join(unapplied)} instruction(s) are not applied at level home: validate it with --sandbox container, where they are, before changing the task (else: {judgement.remedy})")
    log_path = _write_log(logs, task.id, phase, evidence)
    phase_report = PhaseReport(phase, evidence, judgement, log_path)
    summary = phase_report.to_dict()
    summary.pop("session")
    facts = {"kind": "harbor", "level": env.level, "where": env.where, "work_dir": str(work), "fingerprint": report.fingerprint}
    phase_report.session_id = record_phase(store, run_id, task.id, phase, evidence, summary, facts)
    report.phases[phase] = phase_report
    return judgement


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


def _box(project: Project, task: TaskSpec, work: Path, level: str, place: Place) -> Any:
    from benchtape.sandbox.wheelhouse import site_for

    wheels = project.wheelhouse() if place.image is None and place.env.venv is None else None
    return verifier_box(level, work, image=place.image, network=task.verify.network, site=site_for(wheels) if wheels is not None else None, env_for=env_variables(place.env, level), mounts=place.mounts)


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
        base={**base.counts.to_dict(), **({"exit": base.exit} if base.exit is not None else {})},
        reference={**ref.counts.to_dict(), **({"exit": ref.exit} if ref.exit is not None else {})},
        fail_to_pass=tuple(report.tests.fail_to_pass) if report.tests is not None else (),
        pass_to_pass=tuple(report.tests.pass_to_pass) if report.tests is not None else (),
        flaky=tuple(report.tests.flaky) if report.tests is not None else (),
        inputs=report.inputs,
    )
    text = with_validation(task.path.read_text(encoding="utf-8"), validation, task.id)
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
