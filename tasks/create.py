"""`task create <PR number | commit>`: one UNVALIDATED task from a change in the local history.

The landing commit is proven against local history first: a PR number must name a merge or
squash merge on the first-parent chain from HEAD, a commit must be an ancestor of HEAD. Its
diff against the base (the first parent) is split file by file: test files → tests.patch (the
hidden verifier), the rest minus noise → reference.patch. The prompt comes from the change's
words (tasks/prompt_text.py), the verify command from the runner the tests use
(tasks/infer.py). The four files are written together under a temporary name and renamed:
a task folder is whole or absent. An existing task is never overwritten.
"""

from __future__ import annotations

import datetime
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.spec.project import Project
from benchtape.spec.prompt_leaks import Finding, find_leaks
from benchtape.spec.task import PROMPT_FILE, REFERENCE_PATCH, TASK_FILE, TASKS_DIR, TESTS_PATCH, UNVALIDATED_NOTE, TaskSource, Verify, render_task, task_dirs
from benchtape.tasks.classify import split
from benchtape.tasks.gitlog import Landing, branch_messages, file_diffs, history, importers_at, is_ancestor, landing_of, read_at, read_commit, remote_url, resolve
from benchtape.tasks.hidden_tests import added_test_names, promise_warning, promised_tests
from benchtape.tasks.infer import infer_command
from benchtape.tasks.interface import Unnamed, unnamed_interface, warning
from benchtape.tasks.prompt_text import prompt_for, thin_warning

TEST_DIR_NAMES = ("tests", "test", "__tests__", "spec", "testing")


@dataclass
class Created:
    id: str
    folder: Path
    landing: Landing
    command: str
    runner: str | None
    command_note: str
    prompt_source: str
    tests: list[str]
    reference: list[str]
    noise: list[str]
    leaks: list[Finding] = field(default_factory=list)
    environment: list[str] = field(default_factory=list)  # what envs/ detected at the base commit
    unnamed: list[Unnamed] = field(default_factory=list)  # names the tests need that only the fix defines, unsaid in the prompt
    promised: list[str] = field(default_factory=list)  # prompt lines pointing at the hidden tests (tasks/hidden_tests.py)
    thin_warning: str = ""  # what is said of a prompt that is a short title alone (tasks/prompt_text.thin_warning), '' when it is more
    no_code_warning: str = ""  # the fix changes no implementation code (docs, configuration only): scan skips such a change

    def unnamed_warning(self) -> str:
        """What `task create` says of `unnamed` (tasks/interface.py), '' when nothing."""
        return warning(self.unnamed) if self.unnamed else ""

    def promise_warning(self) -> str:
        """What `task create` says of `promised`, '' when nothing."""
        return promise_warning(self.promised) if self.promised else ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "folder": str(self.folder),
            "kind": self.landing.kind,
            "pull_request": self.landing.number,
            "base_commit": self.landing.base,
            "fix_commit": self.landing.fix.sha,
            "verify_command": self.command,
            "runner": self.runner,
            "command_note": self.command_note,
            "prompt_source": self.prompt_source,
            "tests": self.tests,
            "reference": self.reference,
            "noise": self.noise,
            "leaks": [f.to_dict() for f in self.leaks],
            "environment": self.environment,
            "unnamed_interface": [{"name": u.name, "test_file": u.test_file} for u in self.unnamed],
            "prompt_points_at_tests": self.promised,
            "thin_prompt": self.thin_warning or None,
            "no_code": self.no_code_warning or None,
            "state": "leaking" if self.leaks else "unvalidated",
        }


def find_landing(project: Project, ref: str) -> Landing:
    """The landing a `task create` argument names, proven against the local history."""
    text = ref.strip()
    url = re.search(r"/(?:pull|pulls|merge_requests)/(\d+)/?$", text)
    number = int(url.group(1)) if url else (int(text.lstrip("#!")) if re.fullmatch(r"[#!]?\d{1,6}", text) else None)
    if number is not None:
        for commit in history(project.root):
            landing = landing_of(commit)
            if landing.number == number and landing.kind in ("merge", "squash"):
                return landing
        if not re.fullmatch(r"\d{7,}", text):
            raise BadInput(
                f"no merged pull request #{number} in the history of HEAD in {project.root}",
                fix="give a PR number `benchtape task scan` lists, or a commit; fetch the branch that holds it first if it landed elsewhere",
            )
    sha = resolve(project.root, text)
    if sha is None:
        raise BadInput(f"{ref!r} names no pull request and no commit of {project.root}", fix="give a PR number (`benchtape task scan` lists them) or a commit sha")
    if not is_ancestor(project.root, sha):
        raise BadInput(f"commit {sha[:12]} is not in the history of HEAD", fix="check out the branch it landed on first: a task is a change that landed")
    commit = read_commit(project.root, sha)
    if not commit.parents:
        raise BadInput(f"commit {sha[:12]} is the repository's first commit: it has no base to start from")
    return landing_of(commit)


def create_task(project: Project, ref: str) -> Created:
    """Write `.benchtape/tasks/<id>/` for the change `ref` names; refuse to overwrite."""
    landing = find_landing(project, ref)
    task_id = landing.id
    existing = task_dirs(project.root)
    if task_id in existing:
        raise BadInput(f"task {task_id} already exists; a task is never overwritten", file=str(existing[task_id] / TASK_FILE), fix=f"edit it, or remove its folder first to create it anew: rm -r {existing[task_id]}")
    diffs = file_diffs(project.root, landing.base, landing.fix.sha)
    parts = split([p for p, _ in diffs], project.test_patterns, project.noise_patterns)
    blocks = dict(diffs)
    if not parts.tests:
        raise BadInput(f"{_what(landing)} changes no test file, so it has no hidden tests to verify with", fix="pick a change that touches tests and implementation (`benchtape task scan` ranks them), or widen `harvest.test_patterns` in .benchtape/config.yaml")
    if not parts.reference:
        raise BadInput(f"{_what(landing)} changes only tests (and noise): there is no fix for an agent to make", fix="pick a change that touches the implementation too (`benchtape task scan`)")
    tests_patch = b"".join(blocks[p] for p in parts.tests)
    reference_patch = b"".join(blocks[p] for p in parts.reference)
    live_tests = {p: blocks[p] for p in parts.tests if b"\ndeleted file mode" not in blocks[p][:400]}
    inferred = infer_command(live_tests, lambda name: read_at(project.root, landing.base, name), lambda name: importers_at(project.root, landing.base, name))
    prompt, source_of_prompt = prompt_for(landing, branch_messages(project.root, landing), project.prompt_source)
    remote = project.source.remote or remote_url(project.root)
    pr = project.source.pull_request_url(landing.number) if landing.number is not None else None
    fixed = datetime.datetime.fromtimestamp(landing.fix.time, datetime.UTC).date().isoformat()
    source = TaskSource(remote=remote, pull_request=pr or (f"#{landing.number}" if landing.number is not None else None), base_commit=landing.base, fix_commit=landing.fix.sha, fix_date=fixed)
    verify = Verify(command=inferred.command, protected_paths=_protected(parts.tests) + (CARGO_PROTECTED if inferred.runner == "cargo" else ()))
    notes = [
        f"Harvested by `benchtape task create {ref}` from the {landing.kind} {landing.fix.sha[:12]}" + (f" (PR #{landing.number})" if landing.number is not None else "") + ".",
        f"verify.command: {inferred.note}.",
        UNVALIDATED_NOTE.format(id=task_id),
    ]
    text = render_task(source, verify, notes=notes)
    folder = project.config_dir / TASKS_DIR / task_id
    _write_whole(folder, {TASK_FILE: text.encode(), PROMPT_FILE: prompt.encode(), TESTS_PATCH: tests_patch, REFERENCE_PATCH: reference_patch})
    from benchtape.spec.task import load_task

    task = load_task(folder)
    leaks = find_leaks(prompt, task.leak_context(_repositories(project)))
    from benchtape.envs.project_env import recipe_at

    detected = recipe_at(project, landing.base, fix_commit=landing.fix.sha)
    environment = [*detected.detection.lines(), *detected.notes]
    unnamed = unnamed_interface(tests_patch.decode("utf-8", "surrogateescape"), reference_patch.decode("utf-8", "surrogateescape"), prompt)
    promised = promised_tests(prompt, parts.tests, added_test_names(tests_patch))
    no_code = "" if parts.code else (
        f"its fix changes no implementation code (only {', '.join(parts.reference)}): `benchtape task scan` skips such a change as tests only, "
        "and validation will likely find the tests passing at the base already; pick a change that fixes code, or validate to see"
    )
    return Created(task_id, folder, landing, inferred.command, inferred.runner, inferred.note, source_of_prompt, parts.tests, parts.reference, parts.noise, leaks, environment, unnamed, promised, thin_warning(prompt), no_code)


def _repositories(project: Project) -> list[str]:
    return [project.source.full_name] if project.source.full_name else []


def _what(landing: Landing) -> str:
    return f"PR #{landing.number}" if landing.number is not None else f"commit {landing.fix.sha[:12]}"


# What decides how `cargo test` runs rather than what it tests: a candidate's `.cargo/config.toml`
# whose `runner` printed `test x ... ok` for every test of each binary passed every task with no
# fix; a rust-toolchain file picks the compiler. A fix has no need to change them.
CARGO_PROTECTED = (".cargo/", "rust-toolchain", "rust-toolchain.toml")


def _protected(tests: list[str]) -> tuple[str, ...]:
    """Path prefixes the agent must not change: each test's test folder, else the file itself."""
    out: list[str] = []
    for path in tests:
        parts = PurePosixPath(path).parts
        idx = max((i for i, part in enumerate(parts[:-1]) if part in TEST_DIR_NAMES), default=None)
        prefix = "/".join(parts[: idx + 1]) + "/" if idx is not None else path
        if prefix not in out:
            out.append(prefix)
    return tuple(out)


def _write_whole(folder: Path, files: dict[str, bytes]) -> None:
    """Every file under a temporary folder, then one rename: whole or absent."""
    folder.parent.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{folder.name}-", dir=folder.parent))
    try:
        for name, data in files.items():
            (scratch / name).write_bytes(data)
        os.rename(scratch, folder)  # refuses a folder that appeared meanwhile (not empty)
    except OSError as exc:
        shutil.rmtree(scratch, ignore_errors=True)
        if folder.exists():
            raise BadInput(f"task {folder.name} already exists; a task is never overwritten", file=str(folder)) from None
        raise BadInput(f"cannot write the task: {exc.strerror or exc}", file=str(folder), fix="check that the project folder is writable") from None
