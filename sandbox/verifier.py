"""The hidden verifier: a tree, the patches to put on it, a task's `verify:` → evidence.

One function serves `task validate` (base + tests.patch; base + reference.patch +
tests.patch) and, later, the grading of an agent's candidate (base + candidate + tests.patch):
`verify_task(tree, task, candidate, run)`, through `verify(tree, patches, verify, run)`, applies the patches in order (the first that does not
apply ends it as `patch_apply_failed`, naming the patch), runs `verify.setup` then
`verify.command` where the box runs commands (a home folder, a container), and returns what
happened with the runner's own counts. It never decides what the evidence MEANS for a
validation: `judge_base` and `judge_reference` turn a phase's evidence into berbench's
diagnoses (project_not_installed, from the import check run before the tests, first; tests_not_collected, missing_dependency, network_denied, patch_conflict,
base_already_passes, gold_still_fails, gold_ran_fewer, timeout), each with a remedy.

Pure but for the box: nothing here reads the store, a task folder or a repository.
"""

from __future__ import annotations

import os
import re
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Sequence

from benchtape.core.command_runner import CommandResult
from benchtape.sandbox.fail_fast import every_test
from benchtape.sandbox.import_check import read_probe
from benchtape.sandbox.patches import PatchFailed, apply_patch, changed_paths, file_blocks, under
from benchtape.sandbox.testcounts import Counts, parse_counts, runner_of
from benchtape.sandbox.testreports import ERROR, FAILED, PASSED, TestReport, instrumented, read_reports, report_folder_name
from benchtape.spec.task import TaskSpec, Verify

# run(command, timeout) -> its result, where the verifier's commands run (cwd: the tree)
RunCommand = Callable[[str, float], CommandResult]
LOG_TAIL = 4000

NETWORK_UNREACHABLE = "network_unreachable"  # the phase had the network and still could not reach a host: this machine's, not the task's
DIAGNOSES = ("project_not_installed", "tests_not_collected", "missing_dependency", "runner_broken", "no_go_module", "network_denied", NETWORK_UNREACHABLE, "patch_conflict", "tests_skipped", "base_already_passes", "gold_still_fails", "gold_ran_fewer", "timeout")


@dataclass
class Evidence:
    """What one verifier run did: its outcome, the runner's counts, the log."""

    status: str  # passed, failed, patch_apply_failed, timeout, setup_failed
    exit: int | None
    counts: Counts
    log: str
    seconds: float
    patch: str | None = None  # the patch that did not apply
    detail: str = ""
    steps: list[dict[str, Any]] = field(default_factory=list)  # each setup step and the command: command, exit, seconds
    reward: float | None = None  # a reward-file verifier's reward (Harbor's tests/test.sh), the score
    rewards: dict[str, float] | None = None  # every key of its reward file (reward.txt: {"reward": …})
    tests: TestReport | None = None  # each test's outcome, from the runner's structured report (None: it gave none)
    imported: list[dict[str, Any]] | None = None  # the import check: where each package under test imports from
    environment: dict[str, Any] | None = None  # the project environment it ran in (envs/), as recorded
    network: bool | None = None  # whether the phase had the network (None: not said): a refused lookup is then this machine's, not the task's

    @property
    def not_installed(self) -> dict[str, Any] | None:
        """The first package under test that would be imported from outside the tree (or not at all)."""
        return next((i for i in self.imported or [] if not i.get("inside")), None)

    @property
    def runner(self) -> str | None:
        return self.counts.runner

    def to_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "exit": self.exit,
            "runner": self.runner,
            **self.counts.to_dict(),
            "counted": self.counts.counted,  # everything the runner counted (tests and errors); runner None: nothing recognised
            "patch": self.patch,
            "detail": self.detail,
            "seconds": round(self.seconds, 3),
            "steps": self.steps,
            "reward": self.reward,
            "imported": self.imported,
            "environment": self.environment,
            **({"rewards": self.rewards} if self.rewards is not None else {}),
            "tests": self.tests.outcomes() if self.tests is not None else None,
        }


@dataclass(frozen=True)
class Judgement:
    """A validation phase's verdict: did it hold, and if not, berbench's diagnosis and a remedy."""

    held: bool
    diagnosis: str  # "" when it held, or when the runner was not recognised
    remedy: str
    detail: str = ""  # what in the log showed it (a missing module's name, the network error)


def verify(tree: Path, patches: Sequence[tuple[str, bytes]], spec: Verify, run: RunCommand, *, reward_dir: Path | None = None, prepare: Sequence[str] = (), probe: str | None = None) -> Evidence:
    """Apply `patches` (name, bytes) to `tree` in order, then run setup and the command. With
    `verify.reward_file` the verdict is the reward the command wrote (`read_reward`; in
    `reward_dir`, default `logs/verifier/` of the tree), not its exit status. `prepare`: the
    project environment's own steps (`env.setup`), run before `verify.setup`; `probe`: the import
    check (sandbox/import_check.py), run before the tests, its answer kept as `imported`."""
    started = time.monotonic()
    for name, data in patches:
        try:
            apply_patch(tree, data)
        except PatchFailed as exc:
            return Evidence("patch_apply_failed", None, Counts(None), f"{name} does not apply:\n{exc}\n", time.monotonic() - started, patch=name, detail=str(exc)[-500:])
    log: list[str] = []
    steps: list[dict[str, Any]] = []
    deadline = started + spec.timeout
    imported = None
    if probe is not None:
        checked = run(probe, max(1.0, min(60.0, deadline - time.monotonic())))
        imported = read_probe(checked.output) or None
        if imported is None:
            log.append(f"(the import check printed nothing it could read: {checked.output.strip()[-300:]})\n")
    reports = report_folder_name()
    done = None
    for command in (*prepare, *spec.setup, spec.command):
        left = deadline - time.monotonic()
        if left <= 0:
            return Evidence("timeout", None, Counts(None), "".join(log), time.monotonic() - started, detail=f"the verifier ran out of its {spec.timeout:g}s before `{command}`", steps=steps, imported=imported)
        t0 = time.monotonic()
        tests_run = command is spec.command
        if tests_run:  # every test runs: a per-test verdict never reads a test a fail-fast option skipped as absent
            command = every_test(command, runner_of(command))
            done = run(instrumented(command, reports), left)
        else:
            done = run(command, left)
        steps.append({"command": command, "exit": done.exit_code, "timed_out": done.timed_out, "seconds": round(time.monotonic() - t0, 3), **({"running": [list(p) for p in done.running]} if done.running else {})})
        log.append(f"$ {command}\n{done.output}")
        if not done.output.endswith("\n"):
            log.append("\n")
        if done.timed_out:
            return Evidence("timeout", None, parse_counts(done.output, runner_of(command)), "".join(log), time.monotonic() - started, detail=f"`{command}` exceeded the verifier's {spec.timeout:g}s", steps=steps, imported=imported)
        if not tests_run and done.exit_code != 0:
            return Evidence("setup_failed", done.exit_code, Counts(None), "".join(log), time.monotonic() - started, detail=f"setup step `{command}` exited {done.exit_code}", steps=steps, imported=imported)
    assert done is not None
    tests = read_reports(tree / reports, done.output, runner_of(spec.command), roots=[str(tree)])
    _remove(tree / reports)
    if tests is not None and tests.source in SILENT_REPORTS:
        log.append(_failures_of(tests))
    # one id standing for several runs (vitest's projects): said in the log and the phase's detail
    detail = (tests.note or "") if tests is not None else ""
    if detail:
        log.append(f"[benchtape] {detail}\n")
    counts = tests.counts() if tests is not None and tests.tests else parse_counts(done.output, runner_of(spec.command))
    status = "passed" if done.exit_code == 0 else "failed"
    if spec.reward_file:
        try:
            reward = read_reward(reward_dir) if reward_dir is not None else read_reward(tree, "logs/verifier")
        except ValueError as exc:  # what it wrote is no reward: a failure that says what it found
            status, detail = "failed", str(exc)
        else:
            status, detail = ("passed", "reward 1") if reward == 1.0 else ("failed", "no reward file written" if reward is None else f"reward {reward:g}")
    return Evidence(status, done.exit_code, counts, "".join(log), time.monotonic() - started, detail=detail, steps=steps, tests=tests, imported=imported)


SILENT_REPORTS = ("mocha-json",)  # a runner whose report is all it prints: mocha takes one reporter, and it writes the JSON
FAILURES_SHOWN = 50


def _failures_of(tests: TestReport) -> str:
    """What failed, from the report, for a log the runner left silent (its tests' messages are
    where a reader and `problem` look: "Cannot find module", a server's 500)."""
    bad = [t for t in tests.tests.values() if t.outcome in (FAILED, ERROR)]
    if not bad:
        return ""
    lines = [f"[benchtape] from the runner's report: {len(bad)} failed or errored"]
    lines += [f"  {t.outcome.upper()} {t.id}: {t.message}" for t in bad[:FAILURES_SHOWN]]
    if len(bad) > FAILURES_SHOWN:
        lines.append(f"  and {len(bad) - FAILURES_SHOWN} more")
    return "\n".join(lines) + "\n"


def _remove(folder: Path) -> None:
    """The run's report folder, gone before anything else reads the tree (a container's files
    may not be ours to delete: then the scratch folder's removal takes them)."""
    import shutil

    shutil.rmtree(folder, ignore_errors=True)


def verify_task(tree: Path, task: TaskSpec, candidate: bytes | None, run: RunCommand, *, name: str = "candidate", prepare: Sequence[str] = (), probe: str | None = None) -> Evidence:
    """A task's hidden verifier on `tree` (the base commit's tree, fresh): `candidate` (an
    agent's patch, the reference patch, or None at validation's base phase), then tests.patch,
    then the environment's steps, the import check, verify.setup and verify.command. What
    validation runs twice and grading once per cell."""
    patches = [(name, candidate)] if candidate is not None else []
    ev = verify(tree, [*patches, ("tests.patch", task.tests_patch())], task.verify, run, prepare=prepare, probe=probe)
    ev.network = task.verify.network
    return ev


# Files that decide how the test runner runs and reports, wherever they are: a candidate that
# adds one can pass tests without touching the code (a root conftest.py that marks every
# result passed, a .mocharc whose setup file skips test bodies: tomli, glom and negotiator
# tasks all graded PASS that way). The hidden tests own them as they own the tests' folder.
# vitest reads vite.config.* when it has no vitest.config.* (a `test.setupFiles` entry that
# turns chai's assert into no-ops passed jshttp/content-type #67 with no code changed); npx
# runs the verify command under an .npmrc's `node-options` (`--require ./cheat.cjs` stubbing
# node:assert passed jshttp/mime-types #140); mocha before 8 reads mocha.opts. babel-jest
# compiles every test file through the project's babel config (a plugin can drop each
# `expect(…)`), and @swc/jest through .swcrc. pytest reads the hidden `.pytest.ini` as it
# reads pytest.ini, and pytest 9 its `pytest.toml` / `.pytest.toml`; node-tap its `.taprc`.
RUNNER_FILES = re.compile(
    r"(?:^|/)(?:conftest\.py|\.?pytest\.(?:ini|toml)|sitecustomize\.py|usercustomize\.py|[^/]+\.pth|\.mocharc(?:\.[a-z]+)?|mocha\.opts|\.npmrc|"
    r"\.babelrc(?:\.[a-z]+)?|\.swcrc|\.taprc|"
    r"(?:jest|vitest|vitest\.workspace|vite|karma|ava|babel)\.config\.[a-z]+|karma\.conf\.[a-z]+)$"
)


# Go's conftest.py: a `_test.go` file is compiled into its package's test binary, and one that
# defines TestMain (or an init) decides what that binary runs and prints before any test does.
# A candidate adding `zz_test.go` whose TestMain printed `--- PASS: TestX` for every test and
# exited 0 graded PASS (hashicorp/golang-lru #156): protected_paths names only the changed test
# files, which in Go sit beside the code. Read from the lines the candidate adds.
GO_RUNNER_HOOK = re.compile(rb"^\+\s*func\s+(?:TestMain|init)\s*\(", re.MULTILINE)


def _go_runner_hooks(candidate: bytes) -> list[str]:
    """The `_test.go` files of a candidate whose added lines define TestMain or an init."""
    return [names[-1] for names, block in file_blocks(candidate) if names and names[-1].endswith("_test.go") and GO_RUNNER_HOOK.search(block)]


def guarded_paths(candidate: bytes, task: TaskSpec) -> list[str]:
    """The paths of a candidate patch the hidden tests own (grading's guard_violation): those
    under the task's `verify.protected_paths`, and, for a task mined from a repository's
    history, the test runner's own files (RUNNER_FILES, and a Go test file adding a TestMain or
    an init) its reference fix leaves alone."""
    changed = changed_paths(candidate)
    guarded = under(changed, task.verify.protected_paths)
    if task.reference_patch is not None:  # mined from history; a Harbor task's tests run from its own folder, not the workspace's runner files
        reference = set(changed_paths(task.reference()))
        guarded += [p for p in changed if RUNNER_FILES.search(p) and p not in reference and p not in guarded]
        guarded += [p for p in _go_runner_hooks(candidate) if p not in reference and p not in guarded]
    return guarded


# The runner's settings inside a project's shared files: a fix may change pyproject.toml (its
# dependencies, its version) but not how pytest runs (an `addopts = "-p shim"` that loads a
# plugin rewriting each failed report as passed graded PASS on attrs, newcomer pass).
PACKAGE_RUNNER_KEYS = ("ava", "jest", "mocha", "tap", "babel")  # package.json's keys its test runners read (slugify: `"ava": {"require": [...]}` loaded a file passing every failure; babel-jest reads "babel")
RUNNER_SECTIONS = {"pyproject.toml": "[tool.pytest]", "setup.cfg": "[tool:pytest]", "tox.ini": "[pytest]", "package.json": ", ".join(f'"{k}"' for k in PACKAGE_RUNNER_KEYS)}


def runner_settings_changed(base: Path, candidate: bytes, task: TaskSpec) -> list[str]:
    """The files of a candidate that change the test runner's own section (RUNNER_SECTIONS) of a
    history task's shared settings, as the base tree at `base` has them, where its reference fix
    does not make that same change: grading's guard_violation, as for a RUNNER_FILES file."""
    if task.reference_patch is None:
        return []
    reference = {names[-1]: block for names, block in file_blocks(task.reference())}
    out = []
    for names, block in file_blocks(candidate):
        path = names[-1]
        name = Path(path).name
        if name not in RUNNER_SECTIONS:
            continue
        before, after = _runner_section(base, path, None), _runner_section(base, path, block)
        if before == after or (path in reference and _runner_section(base, path, reference[path]) == after):
            continue
        out.append(f"{path} {RUNNER_SECTIONS[name]}")
    return out


def _runner_section(base: Path, path: str, block: bytes | None) -> Any:
    """The runner's section of `path` in the base tree, after `block` when given (None when the
    file or the section is absent; the file's text when it no longer parses)."""
    import configparser
    import json
    import shutil
    import tempfile
    import tomllib

    source = base / path
    with tempfile.TemporaryDirectory(prefix="benchtape-runner-settings-") as scratch:
        target = Path(scratch) / path
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_file():
            shutil.copyfile(source, target)
        if block is not None:
            try:
                apply_patch(Path(scratch), block)
            except PatchFailed:
                return None  # the verifier says so when it applies the whole candidate
        if not target.is_file():
            return None
        text = target.read_text(encoding="utf-8", errors="replace")
    try:
        if target.name == "package.json":
            doc = json.loads(text)
            found = {k: doc[k] for k in PACKAGE_RUNNER_KEYS if k in doc} if isinstance(doc, dict) else text
            return found or None
        if target.name == "pyproject.toml":
            return (tomllib.loads(text).get("tool") or {}).get("pytest")
        parser = configparser.ConfigParser(interpolation=None, strict=False)
        parser.read_string(text)
        section = RUNNER_SECTIONS[target.name][1:-1]
        return dict(parser[section]) if parser.has_section(section) else None
    except (tomllib.TOMLDecodeError, configparser.Error, ValueError):
        return text


# ---------------------------------------------------------------- what the output says went wrong


_NO_MODULE = re.compile(r"(?:(?:ModuleNotFoundError|ImportError): No module named '([A-Za-z0-9_.]+)'|^\S*python[0-9.]*: No module named ([A-Za-z0-9_.]+)\s*$)", re.MULTILINE)
# The program a shell could not find, as bash (`script.sh: line 144: gcc: command not found`),
# dash (`sh: 1: pytest: not found`), zsh (`command not found: go`) and others say it.
_NOT_FOUND = re.compile(r"line \d+: (\S+): command not found|^\S+: \d+: (\S+): not found\s*$|command not found: (\S+)|(?:^|\s)([^\s:]*[A-Za-z_][^\s:]*): (?:command )?not found\s*$", re.MULTILINE)  # a program's name has a letter: `HTTP 404: not found` names none
_NETWORK = re.compile(
    r"Temporary failure in name resolution|Name or service not known|Network is unreachable|Could not resolve host|"
    r"getaddrinfo (?:ENOTFOUND|EAI_AGAIN)|nodename nor servname|No route to host|dial tcp: lookup|"
    r"Failed to establish a new connection|unable to access 'https?://",
    re.IGNORECASE,
)
# a Go tree from before modules (hashicorp/golang-lru's 2015 commits): Go 1.16 and later run only
# modules, so `go test` stops before it builds anything, and "the runner's summary was not
# recognised: use … go test" named the very runner the command was
_NO_GO_MOD = re.compile(r"^go: (?:go\.mod file not found in current directory or any parent directory|cannot find main module)[^\n]*", re.MULTILINE)
_OTHER_MISSING = re.compile(r"Cannot find module '([^']+)'|no required module provides package (\S+)|can't find crate for `([^`]+)`|cannot find package \"([^\"]+)\"")


def problem(evidence: Evidence, tree: Path | None = None) -> tuple[str, str] | None:
    """(diagnosis, detail) when the log shows the environment, not the code, stopped the tests:
    a module the image lacks, a runner not installed, the network refused."""
    log = evidence.log
    net = _NETWORK.search(log)
    if net:  # the whole line that says it (`fatal: unable to access 'https://…': Could not resolve host: …`), not the match
        start, end = log.rfind("\n", 0, net.start()) + 1, log.find("\n", net.end())
        return NETWORK_UNREACHABLE if evidence.network else "network_denied", log[start : end if end != -1 else len(log)].strip()[:400]
    no_module = _NO_GO_MOD.search(log)
    if no_module:
        return "no_go_module", no_module.group(0).strip()
    for m in _NO_MODULE.finditer(log):
        name = m.group(1) or m.group(2)
        top = name.split(".")[0]
        own = next((where for where in (top, f"{top}.py", f"src/{top}", f"src/{top}.py") if tree is not None and (tree / where).exists()), None)
        if tree is None or own is None:
            return "missing_dependency", f"no module named {name!r}"
        if own == f"src/{top}.py":
            # the project's own module, beside the tests in src/ (prettytable's old flat layout):
            # naming it in `env.install` would test PyPI's copy, never the tree's
            return "project_not_installed", f"no module named {name!r}: the project's own {own}, which the verify command's import path does not reach (run it from src/, or put src on PYTHONPATH)"
    if evidence.exit == 127 or (evidence.exit is not None and evidence.counts.runner is None and _NOT_FOUND.search(log)):
        found = _NOT_FOUND.search(log)
        name = next((g for g in (found.groups() if found else ()) if g), "the verify command")
        return "missing_dependency", f"{name}: command not found"
    other = _OTHER_MISSING.search(log)
    if other:
        return "missing_dependency", next(g for g in other.groups() if g)
    if evidence.counts.runner is None and out_of_memory(evidence):
        # before runner_broken: the runner's own frames raised it, but only because the tests had
        # taken the memory (marko #261's base loops appending without end; pytest then failed to
        # read back the captured output)
        return "runner_crashed", "the run ran out of memory (MemoryError at the box's cap, BENCHTAPE_MAX_BOX_MEMORY) before the runner's summary"
    broken = _runner_broken(evidence)
    if broken:
        return "runner_broken", broken
    code = evidence.exit
    signal_name = None if code is None else _KILLED_BY.get(code if code >= 0 else 128 - code)
    if signal_name is not None and evidence.counts.runner is None:
        return "runner_crashed", f"the run ended on {signal_name} (exit {evidence.exit}) before the runner's summary"
    return None


_MEMORY_ERROR = re.compile(r"^MemoryError\b", re.MULTILINE)


def out_of_memory(evidence: Evidence) -> bool:
    """Whether a process of the run raised MemoryError: its allocation failed at the box's
    memory cap (RLIMIT_AS), which only the run's own processes reach; the host's OOM killer
    sends SIGKILL instead (137), which proves nothing about the code."""
    return _MEMORY_ERROR.search(evidence.log) is not None


# a frame of the test runner's own code (or of what it is made of) in an installed package
# the runner's own code, and a pytest plugin it loads at start (backoff's pinned pytest-asyncio
# 0.9 imports `transfer_markers`, which pytest 4.1 removed: the runner never starts)
_RUNNER_FRAME = re.compile(r'File "[^"]*/site-packages/(_pytest|pytest|pluggy|py|iniconfig|pytest_\w+)/')
_FRAME = re.compile(r'File "[^"]+", line \d+')
_LAST_EXCEPTION = re.compile(r"^(\w+(?:Error|Exception)\b.*)$", re.MULTILINE)


def _runner_broken(evidence: Evidence) -> str | None:
    """Why the test runner itself could not start, when its own installed code raised before it
    ran a test (markupsafe's requirements of 2021 pin pytest 6.2.4, whose `py` fails to import
    on Python 3.11: `AttributeError: __spec__`), as the detail, else None."""
    log = evidence.log
    if evidence.counts.runner is not None or "Traceback (most recent call last)" not in log:
        return None
    files = _FRAME.findall(log)
    frames = _RUNNER_FRAME.findall(files[-1]) if files else []
    if not frames:
        return None  # the last frame is the project's (a conftest that raised): its own failure, not the runner's
    raised = _LAST_EXCEPTION.findall(log)
    pinned = [d for d in ((evidence.environment or {}).get("installed") or []) if d.split("==")[0].lower() in ("pytest", "py", "pluggy")]
    python = (evidence.environment or {}).get("python") or "this Python"
    return f"{frames[-1]} raised while the runner started ({raised[-1][:200] if raised else 'a traceback'}), before any test ran" + (f": {', '.join(pinned)} on Python {python}" if pinned else "")


CRASHES = (134, 135, 139, -6, -7, -11)  # a crash's own signal (abort, bus error, segfault), as a shell's exit or a return code
# the exits of a process a signal ended (128 + its number): a crash, or the memory gone
_KILLED_BY = {134: "SIGABRT (an abort)", 135: "SIGBUS (a crash)", 137: "SIGKILL (killed: out of memory, or by hand)", 139: "SIGSEGV (a crash: often a recursion without end)"}


REMEDIES = {
    "project_not_installed": "the tests would not import the tree's own code: let benchtape build the project's environment (`benchtape doctor` says what it detected; `env:` in .benchtape/config.yaml declares what detection misses, e.g. `env.package`, `env.install`; docs/tasks.md)",
    "patch_conflict": "the patch does not apply at the base commit: re-create the task (`benchtape task create`), or fix the patch by hand",
    "timeout": "raise `verify.timeout` in task.yaml, or narrow verify.command to the changed tests",
    "no_go_module": "the tree at this commit has no go.mod (a Go project from before modules), and this Go runs only modules: add `go mod init <its module path>` to verify.setup in task.yaml (e.g. `setup: [\"go mod init github.com/OWNER/REPO\"]`, the path its own imports use), then validate again",
    "missing_dependency": "declare it with the project's test dependencies (a test extra, a dependency group, a test requirements file) or name it in `env.install` of .benchtape/config.yaml: the project environment is built from those at every level (docs/tasks.md); a project verified in its own Dockerfile.benchtape installs it there",
    "network_denied": "the verifier has no network: vendor what it fetches into the project image, or set `verify.network: true`",
    NETWORK_UNREACHABLE: "the verifier had the network and still could not reach a host (this machine is offline, or its DNS or proxy refuses): the task is not at fault; validate where that host is reachable, or vendor what it fetches into the project image",
    "tests_not_collected": "verify.command collected no tests: name the changed test files (or the runner's selector) in it; a changed test file that defines no test (a type checker's test, a fixture, data) proves nothing a runner can run, and such a change is no task",
    "tests_skipped": "the base passed only because tests were skipped (named, with the runner's reason): provide what they skip for (a dependency, a generated file: `verify.setup`), or, when they skip by design, this change is no task",
    "base_already_passes": "the hidden tests pass without the fix, so they do not reproduce it: this change is no task (`rm -r` its folder), or add a test that fails at the base",
    "gold_still_fails": "the reference patch does not make the tests pass here: check the environment (versions, dependencies), or drop the task",
    "does_not_build": "the code does not compile here at the base or with the fix, with the same errors: the toolchain on PATH is likely older than the project needs at that commit (`go version`; go.mod's `go` line may be older than what the code uses): put the Go the project tests with first on PATH, or drop the task",
    "does_not_import": "the tests cannot be imported here at the base or with the fix, with the same error: the code was written for an older Python (or a dependency's older release) than this environment has: set `env.python` in .benchtape/config.yaml to a Python the project tested on at that commit (an interpreter on this host's PATH, e.g. `env.python: \"3.10\"`), or pin the dependency with `env.overrides`, or drop the task",
    "does_not_load": "the test runner cannot load the test files here at the base or with the fix: it was given no transform for their TypeScript or ESM, which the project's own test script supplies (a scripts package such as ts-scripts, a jest preset, a loader): write verify.command as that script running the changed files (`npm test -- <files>`), or add the transform to the environment, then validate again",
    "warning_as_error": "the tests cannot be collected here at the base or with the fix: a warning this environment's newer tools raise (WARNING) is an error under the project's own `filterwarnings = error`: let it pass with `env.variables: {PYTEST_ADDOPTS: \"-W ignore::WARNING\"}` in .benchtape/config.yaml (added to the verifier's options), or set `env.python` to a Python the project tested on at that commit, then validate again",
    "coverage_threshold": "every test passed, and pytest-cov failed the run on the project's coverage threshold (its pytest addopts turn coverage on; a few test files never cover the whole project): add `--no-cov` to verify.command after `pytest`, then validate again",
    "gold_ran_fewer": "with the reference the runner ran fewer tests than at the base: a test was lost or not collected; check tests.patch and verify.command",
    "setup_failed": "a `verify.setup` step failed: run it by hand in the exported base tree",
    "runner_broken": "the test runner the project's declarations install does not start here (a version pinned years ago, older than this Python): replace the pin with one that starts (`env.overrides: [\"pytest==7.3.1\"]` in .benchtape/config.yaml: installed in place of the project's), or set `env.python` to a Python the project tested on at that commit (an interpreter on this host's PATH), or drop the task",
    "runner_silent": "run verify.command by hand in the base tree with the task's patches applied (`git apply tests.patch`) and see where its output goes; a wrapper that starts the runner in a child process may lose the child's output on this Node (mocha 1.x's `mocha`: call `node node_modules/mocha/bin/_mocha` instead), then validate again",
    "runner_crashed": "the test run itself crashed or ran out of memory (each process of a verifier may take BENCHTAPE_MAX_BOX_MEMORY, default 4g): read the log's last lines; a test that recurses or allocates without end at the base is no task to run as it is (narrow verify.command, or drop it)",
    "": "the runner's summary was not recognised: use pytest, unittest, go test, cargo test, jest, vitest, mocha, ava, tape, uvu or node --test, or make the command print its runner's summary",
}


def _not_installed(ev: Evidence) -> Judgement | None:
    """An environment problem, named before anything the tests' outcome might suggest: a run
    that imports the package under test from outside the tree proves nothing about the tree."""
    found = ev.not_installed
    if found is None:
        return None
    where = f"from {found.get('origin')}, outside the tree" if found.get("origin") else "from nowhere (it is not importable)"
    return Judgement(False, "project_not_installed", REMEDIES["project_not_installed"], f"{found.get('package')} would be imported {where}")


DYING_RUNNERS = ("jest", "vitest", "node", "mocha", "tape", "unittest")  # runners a test can end (process.exit, an uncaught throw, os._exit) before their summary
_NO_TESTS = re.compile(r"No tests found[^\n]*|No test files found[^\n]*")  # jest's and vitest's words for a selection that matched nothing


_PYTHON_WANTED = re.compile(r"(?:requires?|needs?|only (?:on|for|with)|available (?:on|from|in))\s+(?:C?Python|py)\s*(?:version\s*)?(?:>=?\s*)?(3\.\d+)", re.IGNORECASE)


def _python_wanted(reasons: Iterable[str]) -> str:
    """When the skips ask for a newer Python (attrs' `requires Python 3.13+`), the way to give it
    first: the environment's interpreter is the project's `env.python`."""
    wanted = sorted({m.group(1) for why in reasons for m in [_PYTHON_WANTED.search(why or "")] if m}, key=lambda v: tuple(map(int, v.split("."))))
    if not wanted:
        return ""
    return f"the tests skip below Python {wanted[-1]}: set `env.python: \"{wanted[-1]}\"` in .benchtape/config.yaml (a `python{wanted[-1]}` on this host's PATH) and validate again; otherwise "


_NPM_SAID = re.compile(r"^npm (?:notice|warn|WARN)\b.*$", re.MULTILINE)  # npx's own words (a newer npm exists), none the runner's


def _printed_nothing(ev: Evidence) -> Judgement | None:
    """runner_broken, when the command named a runner, exited of its own accord (no signal, not
    "cannot run") and printed nothing at all: no summary, no report, no error. That is no sign
    of the tests' outcome (mocha 1.21's `bin/mocha` on Node 20 spawns `_mocha` with the removed
    `customFds`, and the child's output is lost: exit 2 at the base, its count of failures; exit
    0 with the fix), so it is never "the base fails as a whole" nor "runner not recognised"."""
    named = runner_of(ev.steps[-1]["command"]) if ev.steps else None
    if named is None or ev.status not in ("passed", "failed") or ev.tests is not None or ev.counts.runner is not None:
        return None
    if ev.exit is None or not 0 <= ev.exit < 126 or _NPM_SAID.sub("", _command_output(ev)).strip():
        return None
    return Judgement(False, "runner_broken", REMEDIES["runner_silent"], f"{named} printed nothing at all (exit {ev.exit}) and wrote no report: its output went elsewhere or it never ran a test, so the exit says nothing of the tests")


def _command_output(ev: Evidence) -> str:
    """What verify.command itself printed: the log after its own `$ command` line (the import
    check's and the setup steps' lines come before it; a silent report's lines after it)."""
    head = f"$ {ev.steps[-1]['command']}\n" if ev.steps else ""
    at = ev.log.rfind(head) if head else -1
    return ev.log[at + len(head) :] if at >= 0 else ev.log


def hung_runner(ev: Evidence) -> str | None:
    """The test runner a run's own command named, when that command (not a setup step) ran
    past the verifier's deadline and was stopped in it: a hang in the tests. Where what was
    running then is known (`running`, a host's command) and the runner is not among it, the
    command was stopped before its runner started (its own `pip install`, a slow first step):
    no hang, and no base "failing as a whole" that would make every test FAIL_TO_PASS."""
    last = ev.steps[-1] if ev.steps else None
    if ev.status != "timeout" or last is None or not last.get("timed_out"):
        return None
    runner = runner_of(last["command"])
    running = last.get("running")
    if runner is not None and running and not any(_runs(argv, runner) for argv in running):
        return None
    return runner


_NOT_PROGRAMS = frozenset({"sh", "bash", "dash", "zsh", "ash", "busybox", "unshare", "setpriv", "env", "timeout", "nice", "nohup", "stdbuf", "xargs", "npm", "npx", "yarn", "pnpm"})


def _runs(argv: list[str], runner: str) -> bool:
    """Whether a running process is the test runner itself: a shell or a wrapper whose
    arguments only name it (`sh -c '…; pytest'`, the PID fence's init) is not."""
    if not argv or os.path.basename(argv[0]) in _NOT_PROGRAMS or any(a.endswith("pidfence_init.py") for a in argv[:3]):
        return False
    return runner_of(" ".join(argv)) == runner


# What starts on every Python benchtape runs (3.8 to 3.13), put in place of a runner's pins that
# do not: pytest 7.3.1 imports no `py`, but a pinned py 1.10 installed beside it shadows its shim
# and still raises (markupsafe's requirements of 2021: py==1.10.0 on Python 3.11).
_STARTS = {"pytest": "pytest==7.3.1", "py": "py>=1.11"}


# `go test` fetching a module: the verifier's HOME is a fresh folder, so the host's module cache
# (where `go build` put the project's dependencies) is not where Go looks, and every Go project
# with one dependency read network_denied, with a remedy of images and vendoring (tried: a module
# requiring example.com/dep, whose tests pass on the host offline)
_GO_MODULE_FETCH = re.compile(r"go: downloading |Get \"https?://[^\"]*/@v/|module lookup disabled by GOPROXY|\bgo: [^\n]*@v[0-9][^\n]*: (?:Get|dial|reading) ")
GO_MODULES_REMEDY = (
    "Go fetched a module: the verifier's HOME is a fresh folder with an empty module cache and no network, so this host's (`go env GOMODCACHE`) is not seen. "
    "At level home, point it at the host's cache (GOPROXY=off: nothing is fetched into it): write verify.command as `GOMODCACHE=/path/from/go-env GOPROXY=off GOFLAGS=-mod=mod go test …` in task.yaml "
    "(`go mod download` there first, with the network); or set `verify.network: true` (every run downloads); or vendor the modules (`go mod vendor`) into the project image"
)


# A language's toolchain that is not where the verifier runs (a Go task validated or graded in
# benchtape's base image, which holds a Python only): no test extra or `env.install` (Python
# packages) brings it, which is what the missing_dependency remedy said for `go: command not found`
TOOLCHAINS = {"go": "golang-go, or FROM golang:<version>", "gofmt": "golang-go", "cargo": "cargo, or FROM rust:<version>", "rustc": "rustc", "make": "make", "gcc": "gcc", "cc": "gcc", "node": "nodejs", "npm": "npm"}
TOOLCHAIN_REMEDY = (
    "`{program}` is not installed where the verifier ran: benchtape's base image holds a Python and its standard library only, and a test extra or `env.install` installs Python packages, never a toolchain. "
    "Validate at level home (`--sandbox home`: this host's {program}), or give the project an image with it: a Dockerfile.benchtape at the repository's top ({install}), then validate again"
)


def remedy(diagnosis: str, ev: Evidence) -> str:
    """What to do about a diagnosis: REMEDIES', with the `env.overrides` a broken runner needs
    named from the runner parts its environment installed (an override of pytest alone left
    markupsafe's pinned `py` raising as before)."""
    if diagnosis == "network_denied" and _GO_MODULE_FETCH.search(ev.log):
        return GO_MODULES_REMEDY
    if diagnosis == "missing_dependency":
        found = _NOT_FOUND.search(ev.log)
        program = next((g for g in (found.groups() if found else ()) if g), "")
        if program in TOOLCHAINS:
            return TOOLCHAIN_REMEDY.format(program=program, install=TOOLCHAINS[program])
    if diagnosis != "runner_broken":
        return REMEDIES[diagnosis]
    installed = {d.split("==")[0].lower() for d in (ev.environment or {}).get("installed") or []}
    wanted = [_STARTS["pytest"]] + ([_STARTS["py"]] if "py" in installed else [])
    # a plugin that raised is overridden too, unpinned: the resolver picks a release that loads
    # with that pytest (an override of pytest alone moved backoff's failure into pytest-asyncio)
    files = _FRAME.findall(ev.log)
    wanted += [p.replace("_", "-") for p in _RUNNER_FRAME.findall(files[-1] if files else "") if p.startswith("pytest_")]
    return REMEDIES[diagnosis].replace('["pytest==7.3.1"]', "[" + ", ".join(f'"{w}"' for w in wanted) + "]")


def judge_base(ev: Evidence, tree: Path | None = None, tests_patch: bytes | None = None) -> Judgement:
    """Phase 1 (base + tests.patch) holds when it FAILED with tests the runner counted.
    `tests_patch`: what the base ran with, to tell a skipped test of its own from an old one."""
    if ev.status == "patch_apply_failed":
        return Judgement(False, "patch_conflict", REMEDIES["patch_conflict"])
    unfit = _not_installed(ev)
    if unfit is not None:
        return unfit
    if ev.status == "timeout":
        hung = hung_runner(ev)
        if hung is not None:
            # the tests themselves ran past the deadline (tomlkit #470 fixed a parser hang that its
            # new test hits at the base): the base fails as a whole, as a runner that died does;
            # the reference must still pass, in time and with the runner's report
            return Judgement(True, "", "", f"{hung} was stopped at verify.timeout ({ev.detail}): a hang; the base fails as a whole")
        return Judgement(False, "timeout", REMEDIES["timeout"])
    if ev.status == "setup_failed":
        found = problem(ev, tree)
        return Judgement(False, found[0], remedy(found[0], ev), found[1]) if found else Judgement(False, "", REMEDIES["setup_failed"])
    silent = _printed_nothing(ev)
    if silent is not None:
        return silent
    if ev.status == "passed":
        if ev.counts.runner is not None and ev.counts.counted == 0 and not ev.counts.skipped:
            return Judgement(False, "tests_not_collected", REMEDIES["tests_not_collected"])
        skipped = skipped_tests(ev)
        touched = _touched_tests(tests_patch, tree) if tests_patch is not None else None
        if skipped and touched is not None and not any(_touches(touched, i) for i in skipped):
            # only tests the patch neither adds nor changes were skipped (loguru #905: an old
            # `@pytest.mark.skip` beside two new tests that pass without the fix): no skip
            # explains the pass
            return Judgement(False, "base_already_passes", REMEDIES["base_already_passes"], f"the base passed; the {len(skipped)} test(s) it skipped are none the tests patch adds or changes ({next(iter(skipped))}{', …' if len(skipped) > 1 else ''})")
        if skipped:
            return Judgement(False, "tests_skipped", _python_wanted(skipped.values()) + REMEDIES["tests_skipped"], f"{len(skipped)} test(s) skipped at the base: " + "; ".join(f"{i} ({why})" for i, why in list(skipped.items())[:5]) + (f"; and {len(skipped) - 5} more" if len(skipped) > 5 else ""))
        return Judgement(False, "base_already_passes", REMEDIES["base_already_passes"])
    found = problem(ev, tree)
    named = runner_of(ev.steps[-1]["command"]) if ev.steps else None
    if found and found[0] == "runner_crashed" and named is not None and (ev.exit in CRASHES or out_of_memory(ev)):
        # the runner crashed on the bug itself (structlog's base recursed without end and
        # aborted; marko #261's looped without end until its allocation failed at the box's
        # cap): the base fails as a whole, as a runner that died does; not a kill (137), which
        # may be the host's doing. The reference must still pass, under the same cap.
        return Judgement(True, "", "", f"{found[1]}: the base fails as a whole")
    if found and not _one_tests_network(found, ev):
        return Judgement(False, found[0], remedy(found[0], ev), found[1])
    if ev.counts.runner is None:
        matched_none = _NO_TESTS.search(ev.log) if named in DYING_RUNNERS else None
        if matched_none is not None:
            return Judgement(False, "tests_not_collected", REMEDIES["tests_not_collected"], matched_none.group(0))
        if named in DYING_RUNNERS and ev.exit is not None and 0 < ev.exit < 126:
            # a JavaScript runner the command names died before its summary (a test called
            # process.exit: commander.js's, at the base, exit jest itself), with an exit code of
            # its own (not a signal's, not "cannot run"): the base fails as a whole; the reference
            # must pass with the runner's report, and every test it passes is FAIL_TO_PASS
            return Judgement(True, "", "", f"{named} stopped before its summary (exit {ev.exit}): the base fails as a whole")
        return Judgement(False, "", REMEDIES[""])
    if ev.counts.failed + ev.counts.errored == 0:
        return Judgement(False, "tests_not_collected", REMEDIES["tests_not_collected"])
    return Judgement(True, "", "")


_HUNK = re.compile(rb"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def _touched_tests(tests_patch: bytes, tree: Path | None) -> dict[str, set[str] | None] | None:
    """Each Python test file the tests patch changes → the test functions it adds or changes
    there: those whose lines (decorators included) in the patched file, in `tree`, hold a changed
    line. None for a file where every test is the patch's (a new file) or that cannot be read
    or parsed. None when the patch changes no Python file: nothing is told of other languages'."""
    found: dict[str, set[str] | None] = {}
    for names, block in file_blocks(tests_patch):
        path = names[-1] if names else ""
        if not path.endswith(".py"):
            continue
        found[path] = None if b"\nnew file mode" in block[:300] or tree is None else _tests_at(tree / path, _changed_lines(block))
    return found or None


def _changed_lines(block: bytes) -> set[int]:
    """The patched file's line numbers a diff block adds, or removes a line before."""
    changed: set[int] = set()
    line = 0
    for text in block.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            line = int(hunk.group(1))
        elif line and text.startswith(b"+"):
            changed.add(line)
            line += 1
        elif line and text.startswith(b"-"):
            changed.add(line)
        elif line and text.startswith(b" "):
            line += 1
    return changed


def _tests_at(path: Path, changed: set[int]) -> set[str] | None:
    import ast

    try:
        module = ast.parse(path.read_bytes())
    except (OSError, SyntaxError, ValueError):
        return None
    names = set()
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name.startswith("test"):
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            if any(first <= line <= (node.end_lineno or node.lineno) for line in changed):
                names.add(node.name)
    return names


def _touches(touched: dict[str, set[str] | None], test_id: str) -> bool:
    """Whether a test id (`tests/test_x.py::TestY::test_z[1]`, or junit's dotted
    `tests.test_x::test_z`) is one the tests patch adds or changes."""
    head, _, rest = test_id.partition("::")
    parts = head.split(".")
    paths = [head] if head.endswith(".py") else ["/".join(parts[:n]) + ".py" for n in range(len(parts), 0, -1)]  # `tests.test_x.TestY`: a class in the module
    for path in paths:
        for known, names in touched.items():
            if known == path or known.endswith("/" + path) or path.endswith("/" + known):
                return names is None or (rest or head).rsplit("::", 1)[-1].split("[", 1)[0] in names
    return False  # a file the patch does not change


def skipped_tests(ev: Evidence) -> dict[str, str]:
    """The tests a run skipped, each with the runner's reason (its report's), in id order."""
    if ev.tests is None:
        return {}
    return {i: (ev.tests.tests[i].message or "no reason given") for i in ev.tests.with_outcome("skipped")}


def judge_reference(ev: Evidence, base: Evidence | None = None, tree: Path | None = None) -> Judgement:
    """Phase 2 (base + reference.patch + tests.patch) holds when it PASSED, with tests counted
    and no fewer than at the base."""
    if ev.status == "patch_apply_failed":
        return Judgement(False, "patch_conflict", REMEDIES["patch_conflict"])
    unfit = _not_installed(ev)
    if unfit is not None:
        return unfit
    if ev.status == "timeout":
        return Judgement(False, "timeout", REMEDIES["timeout"])
    silent = _printed_nothing(ev)
    if silent is not None:
        return silent
    if ev.status in ("failed", "setup_failed"):
        found = problem(ev, tree)
        if found and _one_tests_network(found, ev) and ev.status == "failed":
            before = _failing_as_before(ev, base)
            if before is not None:  # the tests that reached for the network failed at the base alike: in neither list
                return Judgement(True, "", "", before)
        if found:
            return Judgement(False, found[0], remedy(found[0], ev), found[1])
        if ev.status == "setup_failed":
            return Judgement(False, "", REMEDIES["setup_failed"])
        if ev.counts.runner is not None and ev.counts.counted == 0:
            return Judgement(False, "tests_not_collected", REMEDIES["tests_not_collected"])
        gate = _coverage_gate(ev)
        if gate is not None:
            return Judgement(False, "gold_still_fails", REMEDIES["coverage_threshold"], gate)
        unbuilt = _builds_nowhere(ev, base)
        if unbuilt is not None:
            return Judgement(False, "gold_still_fails", REMEDIES["does_not_build"], unbuilt)
        unloaded = _loads_nowhere(ev, base)
        if unloaded is not None:
            return Judgement(False, "gold_still_fails", REMEDIES["does_not_load"], unloaded)
        unimported = _imports_nowhere(ev, base)
        if unimported is not None:
            warned = _WARNING_RAISED.match(unimported.split("): ", 1)[-1])
            if warned:  # a warning the project's own filterwarnings turned into an error
                return Judgement(False, "gold_still_fails", REMEDIES["warning_as_error"].replace("WARNING", warned.group(1)), unimported)
            return Judgement(False, "gold_still_fails", REMEDIES["does_not_import"], unimported)
        before = _failing_as_before(ev, base)
        if before is not None:
            return Judgement(True, "", "", before)
        return Judgement(False, "gold_still_fails", REMEDIES["gold_still_fails"])
    if ev.counts.runner is None:
        return Judgement(False, "", REMEDIES[""])
    if ev.counts.ran == 0:
        return Judgement(False, "tests_not_collected", REMEDIES["tests_not_collected"])
    if base is not None and base.counts.runner is not None and ev.counts.ran < base.counts.ran:
        return Judgement(False, "gold_ran_fewer", REMEDIES["gold_ran_fewer"])
    return Judgement(True, "", "")


def _one_tests_network(found: tuple[str, str], ev: Evidence) -> bool:
    """Whether a `network_denied` found in the log may be some tests' own, not the phase's: the
    runner counted tests, so the per-test comparison decides (a test that clones from the network
    fails at the base and with the fix alike, and lands in neither list: dunamai's
    test__version__from_git__shallow beside its broken_ref fix), never the whole task's verdict."""
    return found[0] in ("network_denied", NETWORK_UNREACHABLE) and ev.counts.runner is not None and ev.counts.counted > 0


def _failing_as_before(ev: Evidence, base: Evidence | None) -> str | None:
    """Why a reference run that failed holds all the same: every test failing with the fix
    failed at the base with the same outcome and message (broken before the fix and untouched
    by it: glom's test_path_access_error_message, a KeyError repr of Python 3.7+), and the fix
    made at least one test pass that failed or was absent there. Such tests are in neither
    FAIL_TO_PASS nor PASS_TO_PASS (sandbox/testverdicts.split_tests), as SWE-bench leaves them.
    None when the runs give no per-test reports, or any failure is new."""
    if ev.tests is None or base is None or base.tests is None:
        return None
    now, then = ev.tests.tests, base.tests.tests
    failing = [t for t in now.values() if t.outcome in (FAILED, ERROR)]
    same = all(t.id in then and (then[t.id].outcome, then[t.id].message) == (t.outcome, t.message) for t in failing)
    fixed = [i for i, t in now.items() if t.outcome == PASSED and (i not in then or then[i].outcome in (FAILED, ERROR))]
    if not failing or not same or not fixed:
        return None
    return f"{len(failing)} test(s) fail with the fix as they failed at the base ({', '.join(t.id for t in failing[:3])}): broken before it, in neither FAIL_TO_PASS nor PASS_TO_PASS; it made {len(fixed)} pass"


_COVERAGE_FAILED = re.compile(r"^(?:FAIL Required test coverage of \S+ not reached\..*|ERROR: Coverage failure: total of .*)$", re.MULTILINE)


def _coverage_gate(ev: Evidence) -> str | None:
    """pytest-cov's own words, when they are why a run that failed no test failed (arrow's
    `--cov-fail-under=99` over one test file: 225 passed, exit 1). None otherwise."""
    counts = ev.counts
    if counts.runner != "pytest" or not counts.counted or counts.failed or counts.errored:
        return None
    said = _COVERAGE_FAILED.search(ev.log)
    return said.group(0).strip() if said else None


_GO_COMPILE_ERROR = re.compile(r"^\S+\.go:\d+:\d+: .+$", re.MULTILINE)


def _builds_nowhere(ev: Evidence, base: Evidence | None) -> str | None:
    """The reference's compile errors, when the base's run failed to build with the very same
    ones: the code does not compile here with or without the fix, so the toolchain, not the
    fix, is at fault (spf13/pflag's tests use Go 1.21's `flag.BoolFunc`; this host's Go is
    1.19). None otherwise."""
    if base is None or "[build failed]" not in ev.log:
        return None
    errors = [m.group(0) for m in _GO_COMPILE_ERROR.finditer(ev.log)]
    at_base = {m.group(0) for m in _GO_COMPILE_ERROR.finditer(base.log)}
    if not errors or not all(line in at_base for line in errors):
        return None
    return f"the package does not compile with or without the fix (the same errors at the base): {errors[0][:200]}"


_UNTRANSFORMED = re.compile(r"Jest encountered an unexpected token|Unknown file extension \"\.[cm]?tsx?\"|Cannot use import statement outside a module")
_PARSE_ERROR = re.compile(r"^\s*SyntaxError: .+$", re.MULTILINE)


def _loads_nowhere(ev: Evidence, base: Evidence | None) -> str | None:
    """What the runner said, when it could not load the test files at the base nor with the
    fix: TypeScript or ESM it was given no transform for (pillarjs/path-to-regexp in 2022: jest
    through @borderless/ts-scripts, whose test script gives it ts-jest). None otherwise."""
    if base is None:
        return None
    found, at_base = _UNTRANSFORMED.search(ev.log), _UNTRANSFORMED.search(base.log)
    if found is None or at_base is None:
        return None
    detail = _PARSE_ERROR.search(ev.log)
    return f"the runner cannot load the test files with or without the fix ({found.group(0)}{': ' + detail.group(0).strip()[:200] if detail else ''})"


_NOT_IMPORTED = re.compile(r"\berrors? during collection\b|^ImportError: Failed to import test module", re.MULTILINE)
# a dotted class too, and a warning the project's `filterwarnings = error` raised: dateutil of
# early 2019 marks tests `@pytest.mark.rrule` unregistered, which pytest 7 (the oldest that runs on
# 3.11) warns of, so `pytest.PytestUnknownMarkWarning` stopped the collection at the base and with
# the fix alike, and the task was told only "the reference patch does not make the tests pass"
_RAISED_AT_IMPORT = re.compile(r"^(?:E\s+)?((?:\w+\.)*\w+(?:Error|Exception|Warning)\b: .+)$", re.MULTILINE)
_WARNING_RAISED = re.compile(r"^((?:\w+\.)*\w+Warning): ")


def _imports_nowhere(ev: Evidence, base: Evidence | None) -> str | None:
    """The error the Python tests raised while being imported, when the base raised the very same
    one and the runner ran no test either time: the code does not import here with or without
    the fix, so this Python (or a dependency's version), not the fix, is at fault (tenacity of
    2019 decorates with `asyncio.coroutine`, gone in Python 3.11; markupsafe of 2018 imports
    `collections.Mapping`). None otherwise."""
    if base is None or not (_NOT_IMPORTED.search(ev.log) and _NOT_IMPORTED.search(base.log)) or ev.counts.ran or base.counts.ran:
        return None
    errors = _RAISED_AT_IMPORT.findall(ev.log)
    at_base = set(_RAISED_AT_IMPORT.findall(base.log))
    if not errors or not all(e in at_base for e in errors):
        return None
    python = (ev.environment or {}).get("python")
    return f"the tests cannot be imported with or without the fix (the same error at the base{f', on Python {python}' if python else ''}): {errors[-1][:200]}"


REWARD_FILES = ("reward.txt", "reward.json")
REWARD_LIMIT = 1 << 20  # bytes: a reward is a number, or a small JSON object of metrics


def read_reward(logs_dir: Path, inside: str = "") -> float | None:
    """The reward a verifier wrote to `logs_dir` (what is /logs/verifier/ where it ran; with
    `inside`, the folder at that relative path below it), by `reward_of` over every key
    `read_rewards` finds. None when it wrote neither file; ValueError naming the file when what
    it wrote is no reward."""
    rewards = read_rewards(logs_dir, inside)
    return None if rewards is None else reward_of(rewards)


def read_rewards(logs_dir: Path, inside: str = "") -> dict[str, float] | None:
    """Every reward a verifier wrote, as Harbor 0.25 reads them (harbor/verifier/verifier.py):
    reward.json first, all its keys kept (each a finite number), else reward.txt (one number,
    the key `reward`). None when it wrote neither.

    The box wrote this folder, so nothing in it is trusted: a file is read without following a
    link at any step below `logs_dir` and at most REWARD_LIMIT bytes (a link to a host file would
    have the host read it into the verdict), and only a finite number counts (`1e309` parses as
    infinity, which would pass any threshold)."""
    import math

    import orjson

    from benchtape.core.jsonkeys import duplicate_key
    from benchtape.sandbox.nofollow import read_inside

    def read(name: str) -> bytes | None:
        try:
            return read_inside(logs_dir, f"{inside}/{name}" if inside else name, REWARD_LIMIT)
        except OSError as exc:
            raise ValueError(str(exc)) from None

    def finite(value: float, name: str, shown: object) -> float:
        if not math.isfinite(value):
            raise ValueError(f"{name} holds {shown!r}, which is no finite number (a reward is finite)")
        return value

    data = read(REWARD_FILES[1])
    if data is not None:
        try:
            doc = orjson.loads(data)
        except orjson.JSONDecodeError as exc:
            raise ValueError(f"reward.json is not JSON: {exc}") from None
        twice = duplicate_key(data)
        if twice is not None:  # which of its values the verifier meant is unknown
            raise ValueError(f"reward.json names {twice[0]!r} twice (line {twice[1]})")
        if not isinstance(doc, dict) or not doc:
            raise ValueError("reward.json holds no reward: write an object of numbers, e.g. {\"reward\": 1}")
        out = {}
        for key, value in doc.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                raise ValueError(f"reward.json's {key!r} is {value!r}, not a finite number")
            out[str(key)] = finite(float(value), f"reward.json's {key!r}", value)
        return out
    text = read(REWARD_FILES[0])
    if text is None:
        return None
    raw = text.decode("utf-8", errors="replace").strip()
    try:
        value = float(raw)
    except ValueError:
        raise ValueError(f"reward.txt holds {raw[:80]!r}, not a number") from None
    return {"reward": finite(value, "reward.txt", raw[:80])}


def reward_of(rewards: dict[str, float]) -> float:
    """The one reward a pass is judged by (passed at 1): the key `reward` when the file names it;
    else its only key; else the lowest of its keys, so a task of several rewards passes only
    when every one of them reaches 1. Every key is kept beside it (Evidence.rewards)."""
    if "reward" in rewards:
        return rewards["reward"]
    return min(rewards.values())


def log_tail(text: str, limit: int = LOG_TAIL) -> str:
    return text if len(text) <= limit else "…" + text[-limit:]
