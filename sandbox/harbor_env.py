"""Where a Harbor task's scripts run: its own environment, at level container or home.

Harbor's contract is a filesystem: the agent works in the environment's working directory
(WORKDIR, or task.toml's `workdir`), the oracle's `solution/` is at /solution, the verifier's
`tests/` at /tests, and tests/test.sh writes its reward into /logs/verifier/. benchtape keeps
that contract and its own shape: the workspace is a folder on the host, and every phase (the
oracle, an agent, the verifier) gets a fresh sandbox on it, so the verifier never runs where
the agent ran.

- `container`: the image built from environment/Dockerfile (sandbox/baseimage.py's scenario
  build: network off, never pulls, `FROM` a local image), or task.toml's `docker_image`; the
  starting workspace is a copy of the image's working directory, bind-mounted back there in each
  fresh container; /tests, /solution fresh copies of the task's folders (Harbor copies them
  in too: a script may write beside itself), /logs/verifier a fresh host folder. Network
  `none` unless the phase's network mode is public; `cpus` and `memory_mb` as the container's limits.
- `home`: the Dockerfile is NOT applied (its instructions need an engine): the host's own
  programs, seen through a private mount namespace (`unshare -rm`, no root needed) in which
  the workspace is at the working directory and /tests, /solution, /logs/verifier are where
  Harbor puts them; the host's folders read-only, the network taken away unless public. The
  starting workspace is empty. Hosts that refuse unprivileged namespaces cannot take a Harbor
  task at level home.

Nothing here reads the store or decides what a reward means for a validation beyond
`judge_noop` / `judge_oracle`.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import shlex
import shutil
import subprocess
import tarfile
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Iterator, Mapping

from benchtape.core.command_runner import CommandResult, grading_env, run_local
from benchtape.core.limits import box_file_limit, box_memory_limit
from benchtape.sandbox.baseimage import _FROM, BASE_IMAGE, BASE_REPOSITORY, ImageBuildError, _image_or_none, image_workdir
from benchtape.sandbox.healthcheck import wait_healthy
from benchtape.sandbox.pidfence import fence
from benchtape.sandbox.testcounts import Counts
from benchtape.sandbox.trees import remove_tree
from benchtape.sandbox.verifier import NETWORK_UNREACHABLE, Evidence, Judgement, RunCommand, problem, read_rewards, reward_of
from benchtape.sandbox.verifier_box import BOX_PATH, LOOPBACK_UP, host_tool
from benchtape.spec.task import SOLUTION_AT, HarborStep, TaskSpec

TESTS_AT = "/tests"
LOGS_AT = "/logs/verifier"
SOLVE_COMMAND = f"bash {SOLUTION_AT}/solve.sh"
DEFAULT_WORKDIR = "/app"  # what Harbor's templates use, when neither task.toml nor the image says
HOME_NOTE = "level home: environment/Dockerfile is not applied but for its plain COPY of the task's own files into the working directory (the host's own programs); /tests, /solution and /logs/verifier are mapped in a private mount namespace"
PASSED_AT = 1.0  # Harbor's convention: reward 1 = passed


@dataclass
class HarborEnv:
    """A Harbor task's environment at one level: the image (container) and the working directory."""

    task: TaskSpec
    level: str  # "container" or "home"
    workdir: str
    image: str | None = None
    notes: list[str] = field(default_factory=list)
    verifier: HarborEnv | None = None  # `verifier.environment_mode = "separate"`: where tests/test.sh runs instead

    @property
    def where(self) -> str:
        return f"container {self.image}" if self.level == "container" else "home"


# ---------------------------------------------------------------- preflight and preparing


def refused_images(task: TaskSpec, client: Any) -> list[str]:
    """Why the task's environment cannot be built here, without building it ([] when it can):
    every `FROM` (or `docker_image`) naming an image this engine does not have, with how to
    load it. benchtape's base image counts as present: benchtape builds it."""
    runtime = task.runtime
    assert runtime is not None
    found: list[tuple[str, int | None]]
    if runtime.image is not None:
        found, source = [(runtime.image, None)], f"{task.path} [environment] docker_image"
    else:
        assert task.environment is not None
        dockerfile = task.environment / "Dockerfile"
        text = dockerfile.read_text(encoding="utf-8")
        stages = {m.lower() for m in _STAGE.findall(text)}
        found = [(m.group(1), text.count("\n", 0, m.start()) + 1) for m in _FROM.finditer(text) if m.group(1).lower() not in stages and m.group(1).lower() != "scratch"]
        source = str(dockerfile)
    out = []
    for ref, line in found:
        where = f"{source}:{line}" if line is not None else source
        if ref == BASE_IMAGE:
            continue
        if ref.split(":")[0] == BASE_REPOSITORY:  # another benchtape's base (a folder an older export wrote): taken while this engine has it
            if ":" not in ref or _image_or_none(client, ref) is None:
                out.append(f"{where}: FROM {ref} is not an image of this engine; benchtape's base image is tagged with benchtape's version: start FROM {BASE_IMAGE}")
        elif "$" in ref:
            out.append(f"{where}: FROM {ref} names its image through a build argument, which benchtape does not resolve: write the image's name")
        elif _image_or_none(client, ref) is None:
            out.append(f"{where}: {ref} is not a local image and benchtape never pulls; load it first (`docker pull {ref}` where there is a network, `docker save {ref} -o image.tar`, then `docker load -i image.tar` here), or start FROM {BASE_IMAGE} (benchtape's base image, which it builds)")
    return out


_STAGE = re.compile(r"^\s*FROM\s+\S+\s+AS\s+(\S+)", re.IGNORECASE | re.MULTILINE)


def prepare(task: TaskSpec, level: str, client: Any = None) -> HarborEnv:
    """The task's environment at `level`: at container the image, built (or found) with the
    network off; ImageBuildError naming an absent `FROM` image and how to load it."""
    runtime = task.runtime
    if runtime is None:
        raise ValueError(f"task {task.id} brings no environment of its own")
    if level == "home":
        if not can_map_paths():
            raise ImageBuildError("this host refuses unprivileged user and mount namespaces (`unshare -rm`), which level home needs to put /tests and /logs where a Harbor task expects them: validate at level container")
        env = HarborEnv(task, "home", home_workdir(task), notes=[HOME_NOTE, *runtime.notes])
        return _with_verifier(env, level)
    if level != "container":
        raise ValueError(f"a Harbor task runs at level home or container, not {level!r}")
    from benchtape.sandbox.baseimage import build_image_from_dockerfile, ensure_base_image
    from benchtape.sandbox.container import connect

    client = client or connect()
    problems = refused_images(task, client)
    if problems:
        raise ImageBuildError("; ".join(problems))
    if runtime.image is not None:
        image = runtime.image
    else:
        assert task.environment is not None
        if any(r.split(":")[0] == BASE_REPOSITORY for r in _FROM.findall((task.environment / "Dockerfile").read_text(encoding="utf-8"))):
            ensure_base_image(client)
        image = build_image_from_dockerfile(client, task.environment / "Dockerfile")
    workdir = runtime.workdir or image_workdir(client, image)
    if not workdir:
        raise ImageBuildError(f"{task.environment or task.path}: the environment names no working directory: add `WORKDIR /app` to the Dockerfile, or set [environment] workdir in task.toml")
    return _with_verifier(HarborEnv(task, "container", workdir, image=image, notes=[f"environment image {image}", *runtime.notes]), level, client)


def _with_verifier(env: HarborEnv, level: str, client: Any = None) -> HarborEnv:
    """`env` with its separate verifier's environment, when the task asks for one."""
    verifier = _verifier_env(env.task, level, env.workdir, client)
    if verifier is None:
        return env
    runtime = env.task.runtime
    assert runtime is not None
    outside = [a for a in runtime.artifacts if artifact_path(a, env.workdir) is None or artifact_path(a, verifier.workdir) is None]
    if outside:
        raise ImageBuildError(f"{env.task.path}: the artifact(s) {', '.join(outside)} lie outside the working directory the agent ({env.workdir}) and the separate verifier ({verifier.workdir}) share; benchtape keeps and hands over that directory only: name paths inside it")
    if verifier.image is None and level == "container":  # no verifier image of its own: a fresh copy of the task's
        verifier = HarborEnv(env.task, "container", env.workdir, image=env.image)
    env.verifier = verifier
    env.notes += [*verifier.notes, "the verifier runs in an environment of its own (verifier.environment_mode = separate), given the task's artifacts: " + (", ".join(env.task.runtime.artifacts) if env.task.runtime and env.task.runtime.artifacts else "none")]
    return env


def home_workdir(task: TaskSpec) -> str:
    """Where level home maps the workspace for the task's solve.sh and verifier (no image to ask)."""
    assert task.runtime is not None
    return task.runtime.workdir or dockerfile_workdir(task) or DEFAULT_WORKDIR


def home_level_notes(tasks: list[TaskSpec]) -> list[str]:
    """Harbor tasks whose instruction or solve.sh names their working directory (`/app/...`),
    said before a run at level home: there the agent works in a folder of its own (only
    validation's boxes and the verifier see the workspace at that path), so an agent, or the
    oracle, that writes where the task says writes nothing that is verified. Said, not refused:
    a task that names it only in passing runs fine."""
    named, unapplied, commands = [], [], []
    for task in tasks:
        if task.runtime is None:
            continue
        workdir = home_workdir(task).rstrip("/")
        texts = [task.prompt()] + [p.read_text(encoding="utf-8", errors="replace") for p in (task.solution,) if p is not None and p.is_file()]
        if any(re.search(rf"(?<![\w.-]){re.escape(workdir)}(?:/|\b)", text) for text in texts):
            named.append(f"{task.id} ({workdir})")
        skipped = home_unapplied(task)
        if skipped:
            unapplied.append(f"{task.id} ({', '.join(skipped)})")
        commands += [f"{task.id}: {shlex.join([s.command or '', *s.args])}" for s in task.runtime.mcp_servers if s.transport == "stdio"]
    notes = []
    if commands:
        # the agent starts them itself, outside any sandbox of its own (Codex's included)
        notes.append(f"at level home each task's stdio MCP server is started by the agent on this machine, as you, with the network ({'; '.join(commands[:8])}): level home is no boundary; --sandbox container runs them in the task's image")
    if named:
        notes.append(f"level home: the agent's workspace is a folder of its own, not the path the task names: {', '.join(named)}; an agent or the oracle writing there is not verified. Run these tasks with --sandbox container, where the workspace is mounted at that path as under Harbor")
    if unapplied:
        # an exported task's venv (COPY host/ /, ENV PATH=…) or a task's RUN pip install: missing
        # at home, so its verifier fails for want of what they set up, and the oracle's failure
        # read as a broken task
        notes.append(
            f"level home applies a Dockerfile's FROM, WORKDIR and plain COPY into the working directory only: {'; '.join(unapplied[:8])}{' …' if len(unapplied) > 8 else ''} not applied, "
            "so what they set up is missing there and a verifier or the oracle may fail for want of it. Run these tasks with --sandbox container, where the image is built as under Harbor"
        )
    return notes


def dockerfile_workdir(task: TaskSpec) -> str | None:
    """The Dockerfile's last absolute WORKDIR (what the image's working directory would be)."""
    if task.environment is None or not (task.environment / "Dockerfile").is_file():
        return None
    found = re.findall(r"^\s*WORKDIR\s+(/\S*)\s*$", (task.environment / "Dockerfile").read_text(encoding="utf-8"), re.IGNORECASE | re.MULTILINE)
    return found[-1] if found else None


_COPY = re.compile(r"^\s*(?:COPY|ADD)\s+(?!--)(\S+)\s+(\S+)\s*$", re.IGNORECASE | re.MULTILINE)


def home_copies(task: TaskSpec) -> list[tuple[Path, str]]:
    """The Dockerfile's plain `COPY src dest` lines that put a file or folder of environment/
    into the working directory, as (the source, where under the workspace), applied at level home
    where no image is built: a task exported by benchtape (`COPY workspace/ /app/`) started
    empty there, and its oracle failed with nothing said. Only a source inside environment/
    (no `..`, no link out, no glob, no flags such as --from) and a destination at or under the
    working directory count; anything else stays the container's."""
    workdir = PurePosixPath(home_workdir(task))
    out: list[tuple[Path, str]] = []
    for source, target in _plain_copies(task):
        if target == workdir or workdir in target.parents:
            inside = target.relative_to(workdir).as_posix()
            out.append((source, "" if inside == "." else inside))
    return out


def skills_source(task: TaskSpec) -> Path | None:
    """The host folder holding what `[environment] skills_dir` names in the environment: the
    folder of environment/ a plain COPY puts there (`COPY skills/ /skills/`, Harbor's own
    layout), the same files at every level. None when no such COPY makes it (a RUN that fetches
    the skills, a path the image already has): said before a run (skills_notes)."""
    runtime = task.runtime
    if runtime is None or runtime.skills_dir is None:
        return None
    wanted = PurePosixPath(home_workdir(task)) / runtime.skills_dir  # a relative skills_dir is under the working directory
    for source, target in reversed(_plain_copies(task)):  # the last COPY there wins, as in the image
        if source.is_dir() and (target == wanted or target in wanted.parents):
            found = source / wanted.relative_to(target)
            if found.is_dir() and not found.is_symlink() and found.resolve().is_relative_to(source.resolve()):
                return found
    return None


def _plain_copies(task: TaskSpec) -> list[tuple[Path, PurePosixPath]]:
    """The Dockerfile's plain `COPY src dest` lines of a file or folder inside environment/ (no
    `..`, no link out, no glob, no flags such as --from), as (the host source, its absolute
    destination in the image), in order."""
    if task.environment is None or not (task.environment / "Dockerfile").is_file():
        return []
    root = task.environment.resolve()
    out: list[tuple[Path, PurePosixPath]] = []
    for src, dest in _COPY.findall((task.environment / "Dockerfile").read_text(encoding="utf-8", errors="replace")):
        if src.startswith("/") or any(c in src for c in "*?[$") or ".." in PurePosixPath(src).parts:
            continue
        source = task.environment / src
        if source.is_symlink() or not source.exists() or not source.resolve().is_relative_to(root):
            continue
        target = PurePosixPath(dest) / source.name if source.is_file() and dest.endswith("/") else PurePosixPath(dest)  # a file into a folder keeps its name
        if target.is_absolute():
            out.append((source, target))
    return out


def skills_notes(tasks: list[TaskSpec], harnesses: list[str]) -> list[str]:
    """Said before a run of tasks with `skills_dir`: one whose skills no plain COPY of
    environment/ makes (none are given), and the harnesses other than Claude Code, which benchtape
    does not give them to (the controls need none)."""
    with_skills = [t for t in tasks if t.runtime is not None and t.runtime.skills_dir is not None]
    if not with_skills:
        return []
    notes = [
        f"{t.id}: `skills_dir = {t.runtime.skills_dir!r}` is no folder environment/Dockerfile copies from environment/ (COPY skills/ {t.runtime.skills_dir}/): the agent is given no skills"
        for t in with_skills
        if t.runtime is not None and skills_source(t) is None
    ]
    others = sorted({h for h in harnesses if h not in ("claude-code", "oracle", "mock")})
    if others:
        notes.append(f"task.toml's skills (skills_dir) are given to claude-code only (into its ~/.claude/skills/, as Harbor does); {', '.join(others)} run without them: {', '.join(t.id for t in with_skills)}")
    return notes


MCP_HARNESSES = ("claude-code", "codex")  # the harnesses benchtape gives a task's MCP servers to (adapters' `mcp_servers`)


def mcp_notes(tasks: list[TaskSpec], harnesses: list[str], claude_asks: bool = True) -> list[str]:
    """Said before a run of tasks with `[[environment.mcp_servers]]`: the harnesses benchtape
    does not give them to (the controls need none), which run without the servers' tools;
    `claude_asks`: a Claude Code setup's permission mode does not allow MCP tool calls."""
    served = [t for t in tasks if t.runtime is not None and t.runtime.mcp_servers]
    if not served:
        return []
    ids = ", ".join(t.id for t in served)
    notes = []
    others = sorted({h for h in harnesses if h not in (*MCP_HARNESSES, "oracle", "mock")})
    if others:
        notes.append(f"task.toml's MCP servers (environment.mcp_servers) are given to {' and '.join(MCP_HARNESSES)} only, as Harbor configures each; {', '.join(others)} run without them: {ids}")
    if "claude-code" in harnesses and claude_asks:
        notes.append(f"Claude Code asks before each MCP tool call unless its permission mode allows it (Harbor runs it with bypassPermissions): give its setup `options: {{permission_mode: bypass}}`, or the calls of {ids}'s servers are refused in print mode")
    sse = sorted({f"{t.id}: {s.name}" for t in served for s in t.runtime.mcp_servers if s.transport == "sse"})  # type: ignore[union-attr]
    if sse and "codex" in harnesses:
        notes.append(f"Codex has no SSE client: an sse server is given to it by its URL, as Harbor gives it, which it speaks streamable HTTP to ({', '.join(sse)})")
    return notes


def home_unapplied(task: TaskSpec) -> list[str]:
    """The environment/Dockerfile instructions level home does not apply (all but FROM, WORKDIR,
    comments, and the plain COPY lines home_copies takes), counted by kind (`3 RUN`): said where
    a phase fails at home, since what they install (a venv, a tool, the files a script reads) is
    missing there and the task, not its fix, may be what failed."""
    if task.environment is None or not (task.environment / "Dockerfile").is_file():
        return []
    text = (task.environment / "Dockerfile").read_text(encoding="utf-8", errors="replace")
    logical = re.sub(r"\\\r?\n", " ", text)  # continued lines as one instruction
    kinds: dict[str, int] = {}
    taken = len(home_copies(task))
    for line in logical.splitlines():
        word = line.strip().split(None, 1)[0].upper() if line.strip() and not line.strip().startswith("#") else ""
        if word in ("", "FROM", "WORKDIR", "LABEL", "MAINTAINER", "STOPSIGNAL"):
            continue
        if word == "COPY" and taken:
            taken -= 1
            continue
        kinds[word] = kinds.get(word, 0) + 1
    return [f"{n} {kind}" for kind, n in kinds.items()]


def starting_workspace(env: HarborEnv, dest: Path, client: Any = None) -> Path:
    """Write the workspace the agent starts from into `dest` (a new folder): the image's
    working directory at level container, nothing at level home."""
    dest.mkdir(parents=True)
    if env.level == "home":
        for source, inside in home_copies(env.task):
            target = dest / inside
            if source.is_dir():
                shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target, follow_symlinks=False)
        return dest
    from benchtape.sandbox.container import connect

    client = client or connect()
    container = client.containers.create(env.image, command=["true"], network_mode="none")
    try:
        chunks, _ = container.get_archive(env.workdir.rstrip("/") + "/.")
        with tempfile.TemporaryFile() as tar:
            for chunk in chunks:
                tar.write(chunk)
            tar.seek(0)
            if hasattr(tarfile, "tar_filter"):
                with tarfile.open(fileobj=tar) as archive:
                    archive.extractall(dest, filter="tar")
            else:
                _restore_strictly(tar.read(), dest)
    finally:
        container.remove(force=True)
    return dest


def _restore_strictly(data: bytes, dest: Path) -> None:
    """A Python before 3.11.4 (Debian 12's 3.11.2) has no tar extraction filter, and an image's
    tree is not to be trusted: it is unpacked by benchtape's own snapshot restore, which refuses
    whatever could write outside `dest` (and, stricter than the filter, hard links and devices)."""
    from benchtape.sandbox.snapshot import restore

    restore(data, dest)


# ---------------------------------------------------------------- the phases


def run_solution(env: HarborEnv, tree: Path, scratch: Path, step: HarborStep | None = None) -> CommandResult:
    """The oracle: solution/solve.sh from the working directory, in a fresh sandbox on `tree`,
    once the environment's healthcheck (and the step's) passes there, as Harbor starts an agent;
    when one fails, solve.sh is not run and the result says why."""
    task, runtime = env.task, env.task.runtime
    assert runtime is not None and task.solution is not None
    mounts = {SOLUTION_AT: (_fresh_copy(task.solution.parent, scratch / "solution"), False)}
    timeout = runtime.agent_timeout or task.verify.timeout
    checks = [(runtime.healthcheck, "the environment's healthcheck")] if runtime.healthcheck is not None else []
    if step is not None and step.healthcheck is not None:
        checks.append((step.healthcheck, f"step {step.name!r}'s healthcheck"))
    with _box(env, tree, scratch / "solution-box", mounts, runtime.network, {**dict(runtime.env), **dict(runtime.solution_env)}, user=runtime.agent_user) as run:
        for check, what in checks:
            waited = wait_healthy(check, run)
            if not waited.ok:
                return CommandResult(None, waited.failure(what, stopped="solution/solve.sh was not run"))
        return run(SOLVE_COMMAND, timeout)


def run_in_workspace(env: HarborEnv, tree: Path, scratch: Path, command: str) -> CommandResult:
    """`command` from the working directory in a fresh sandbox on `tree`, as the agent's phase
    has it (its network, the environment's `env`): a multi-step task's workdir/setup.sh."""
    runtime = env.task.runtime
    assert runtime is not None
    with _box(env, tree, scratch / "box", {}, runtime.network, dict(runtime.env)) as run:
        return run(command, runtime.agent_timeout or env.task.verify.timeout)


def run_verifier(env: HarborEnv, tree: Path, scratch: Path) -> Evidence:
    """tests/test.sh in a fresh sandbox on `tree` (the workspace as the agent, or the oracle,
    left it), its reward read from /logs/verifier: passed at reward 1, the reward kept either way.
    A separate verifier (`environment_mode = "separate"`) runs in its own environment instead,
    on its own working directory holding only the task's `artifacts` taken from `tree`, as
    Harbor hands a separate verifier the agent's artifacts and nothing else."""
    ev = _verify(env, tree, scratch)
    ev.network = env.task.verify.network  # a refused lookup with the network on is this machine's (problem)
    return ev


def _verify(env: HarborEnv, tree: Path, scratch: Path) -> Evidence:
    task, runtime = env.task, env.task.runtime
    assert runtime is not None
    if env.verifier is not None:
        tree = _artifacts_tree(env, tree, scratch / "verifier-work")
        env = env.verifier
    logs = scratch / "logs-verifier"
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    logs.chmod(0o777)  # as Harbor makes it: test.sh writes its reward there as whichever user [verifier] names
    mounts = {TESTS_AT: (_fresh_copy(runtime.tests_dir, scratch / "tests"), False), LOGS_AT: (logs, False)}
    started = time.monotonic()
    with _box(env, tree, scratch / "verifier-box", mounts, task.verify.network, {**dict(runtime.env), **dict(runtime.verifier_env)}, user=runtime.verifier_user) as run:
        done = run(task.verify.command, task.verify.timeout)
    seconds = time.monotonic() - started
    step = {"command": task.verify.command, "exit": done.exit_code, "timed_out": done.timed_out, "seconds": round(seconds, 3)}
    log = f"$ {task.verify.command}\n{done.output}" + ("" if done.output.endswith("\n") else "\n")
    if done.timed_out:
        return Evidence("timeout", None, Counts(None), log, seconds, detail=f"tests/test.sh exceeded the verifier's {task.verify.timeout:g}s (verifier.timeout_sec)", steps=[step])
    try:
        rewards = read_rewards(logs)
    except ValueError as exc:
        return Evidence("failed", done.exit_code, Counts(None), log, seconds, detail=f"tests/test.sh wrote no usable reward: {exc}", steps=[step])
    if rewards is None:
        return Evidence("failed", done.exit_code, Counts(None), log, seconds, detail=f"tests/test.sh (exit {done.exit_code}) wrote neither {LOGS_AT}/reward.txt nor reward.json", steps=[step])
    reward = reward_of(rewards)
    status = "passed" if reward >= PASSED_AT else "failed"
    detail = f"reward {reward:g}" if list(rewards) == ["reward"] else f"reward {reward:g} ({', '.join(f'{k} {v:g}' for k, v in rewards.items())}; {'`reward`' if 'reward' in rewards else 'the lowest'} decides)"
    return Evidence(status, done.exit_code, Counts(None), log, seconds, detail=detail, steps=[step], reward=reward, rewards=rewards)


REMEDIES = {
    "no_reward": "tests/test.sh must write its reward to /logs/verifier/reward.txt (a number) or reward.json: run it by hand in the environment",
    "timeout": "raise verifier.timeout_sec in task.toml",
    "base_already_passes": "the untouched environment already earns reward 1: the tests do not test what the instruction asks; fix tests/test.sh",
    "gold_still_fails": "solution/solve.sh does not earn reward 1: fix it (or the tests); its output is in the log",
    "no_solution": "write solution/solve.sh: without it the oracle cannot show the task can be solved",
    "missing_dependency": "the environment lacks a program or module that solution/solve.sh or tests/test.sh runs (the log names it): install it in environment/Dockerfile (if `benchtape task export` made this folder and it has neither Dockerfile.benchtape nor a wheelhouse, it does not carry the project environment: export it again with this benchtape)",
    "network_denied": "tests/test.sh reached for the network, which the verifier's environment does not have: install what it fetches in environment/Dockerfile, or give [verifier.environment] a network_mode in task.toml",
    NETWORK_UNREACHABLE: "tests/test.sh had the network and still could not reach a host (this machine is offline, or its DNS or proxy refuses): the task is not at fault; run it where that host is reachable, or install what it fetches in environment/Dockerfile",
}


def _artifacts_tree(env: HarborEnv, tree: Path, dest: Path) -> Path:
    """The separate verifier's working directory: its environment's own (its image's WORKDIR at
    level container, empty at home), with each of the task's artifacts copied from the agent's
    workspace `tree` to the same place (an artifact the agent did not make is left out, as
    Harbor leaves it out)."""
    assert env.verifier is not None and env.task.runtime is not None
    shutil.rmtree(dest, ignore_errors=True)
    out = starting_workspace(env.verifier, dest)
    for artifact in env.task.runtime.artifacts:
        rel = artifact_path(artifact, env.workdir)
        if rel is None:
            continue
        source = tree / rel if str(rel) != "." else tree
        target = out / rel if str(rel) != "." else out
        if source.is_dir() and not source.is_symlink():
            _copy_over(source, target)
        elif source.is_file() or source.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            remove_tree(target)
            shutil.copy2(source, target, follow_symlinks=False)
    return out


def _copy_over(source: Path, target: Path) -> None:
    """`source` copied onto `target`, replacing what is there, as Harbor's upload of an artifact
    (a tar extracted over the verifier's working directory) does: symlinks stay symlinks, and a
    file or link already at a path gives way. copytree(dirs_exist_ok=True) stopped at the
    first link the image already had (a Node project's node_modules: `File exists`)."""
    for folder, dirs, files in os.walk(source):
        here = Path(folder)
        into = target / here.relative_to(source)
        if into.is_symlink() or (into.exists() and not into.is_dir()):
            remove_tree(into)
        into.mkdir(parents=True, exist_ok=True)
        links = [d for d in dirs if (here / d).is_symlink()]  # a link to a folder is copied as the link
        dirs[:] = [d for d in dirs if d not in links]
        for name in (*files, *links):
            remove_tree(into / name)
            shutil.copy2(here / name, into / name, follow_symlinks=False)


def artifact_path(artifact: str, workdir: str) -> PurePosixPath | None:
    """An artifact's place inside the working directory (`.` for the directory itself); None for
    one outside it (the task's load refused those that ask for more than the workspace)."""
    path = PurePosixPath(artifact) if artifact.startswith("/") else PurePosixPath(workdir) / artifact
    try:
        return path.relative_to(workdir)
    except ValueError:
        return None


def _verifier_env(task: TaskSpec, level: str, workdir: str, client: Any = None) -> HarborEnv | None:
    """A separate verifier's environment: at level container the image built from
    tests/Dockerfile (network off, never pulls), else `[verifier.environment] docker_image`,
    else a fresh copy of the task's own; at home the host's programs, as for every phase."""
    runtime = task.runtime
    assert runtime is not None
    if not runtime.verifier_separate:
        return None
    if level == "home":
        note = "the separate verifier's tests/Dockerfile is not applied at level home" if runtime.verifier_dockerfile is not None else ""
        vworkdir = runtime.verifier_workdir or workdir
        return HarborEnv(task, "home", vworkdir, notes=[n for n in (note,) if n])
    from benchtape.sandbox.baseimage import build_image_from_dockerfile, ensure_base_image
    from benchtape.sandbox.container import connect

    client = client or connect()
    if runtime.verifier_image is not None:
        image = runtime.verifier_image
        if _image_or_none(client, image) is None:
            raise ImageBuildError(f"{task.path} [verifier.environment] docker_image: {image} is not a local image and benchtape never pulls; load it first (docker load)")
    elif runtime.verifier_dockerfile is not None:
        dockerfile = runtime.verifier_dockerfile
        text = dockerfile.read_text(encoding="utf-8")
        stages = {m.lower() for m in _STAGE.findall(text)}
        missing = [r for r in _FROM.findall(text) + _COPY_FROM.findall(text) if r.lower() not in stages and r.lower() != "scratch" and r.split(":")[0] != BASE_REPOSITORY and _image_or_none(client, r) is None]
        if missing:
            raise ImageBuildError(f"{dockerfile}: {', '.join(missing)} {'is' if len(missing) == 1 else 'are'} not a local image and benchtape never pulls; load {'it' if len(missing) == 1 else 'them'} first (docker load), or start the verifier's Dockerfile FROM {BASE_IMAGE}")
        if any(r.split(":")[0] == BASE_REPOSITORY for r in _FROM.findall(text)):
            ensure_base_image(client)
        image = build_image_from_dockerfile(client, dockerfile)
    else:
        return HarborEnv(task, "container", workdir, image=None, notes=[])
    vworkdir = runtime.verifier_workdir or image_workdir(client, image) or workdir
    return HarborEnv(task, "container", vworkdir, image=image, notes=[f"separate verifier image {image}"])


_COPY_FROM = re.compile(r"^\s*COPY\s+--from=(\S+)", re.IGNORECASE | re.MULTILINE)


def judge_noop(ev: Evidence) -> Judgement:
    """The no-op phase (the environment as it starts) holds when the verifier ran and gave a reward below 1."""
    if ev.status == "timeout":
        return Judgement(False, "timeout", REMEDIES["timeout"])
    if ev.reward is None:
        return Judgement(False, "no_reward", REMEDIES["no_reward"], ev.detail)
    if ev.reward >= PASSED_AT:
        return Judgement(False, "base_already_passes", REMEDIES["base_already_passes"], ev.detail)
    return Judgement(True, "", "")


def judge_oracle(ev: Evidence) -> Judgement:
    """The oracle phase (after solution/solve.sh) holds when the verifier gave reward 1."""
    if ev.status == "timeout":
        return Judgement(False, "timeout", REMEDIES["timeout"])
    if ev.reward is None:
        return Judgement(False, "no_reward", REMEDIES["no_reward"], ev.detail)
    if ev.reward < PASSED_AT:
        # the environment, not the solution, stopped the tests: say what it lacks, never "fix solve.sh"
        found = problem(ev)
        if found is not None and found[0] in ("missing_dependency", "network_denied", NETWORK_UNREACHABLE):
            return Judgement(False, found[0], REMEDIES[found[0]], f"{ev.detail}: {found[1]}")
        return Judgement(False, "gold_still_fails", REMEDIES["gold_still_fails"], ev.detail)
    return Judgement(True, "", "")


def _fresh_copy(folder: Path, dest: Path) -> Path:
    """A copy of a task's folder for one phase, so nothing a script writes reaches the task."""
    shutil.rmtree(dest, ignore_errors=True)
    shutil.copytree(folder, dest, symlinks=True)
    return dest


# ---------------------------------------------------------------- the sandboxes

Mounts = Mapping[str, tuple[Path, bool]]  # container path -> (host path, read-only)


@contextlib.contextmanager
def _box(env: HarborEnv, tree: Path, scratch: Path, mounts: Mounts, network: bool, extra_env: Mapping[str, str], user: str | None = None) -> Iterator[RunCommand]:
    """run(command, timeout) -> CommandResult, from the working directory of a fresh sandbox on
    `tree`; as `user` in a container (task.toml's [agent] or [verifier] user), as you at home."""
    if env.level == "container":
        from benchtape.sandbox.container import ContainerSandbox

        runtime = env.task.runtime
        assert runtime is not None
        resources: dict[str, Any] = {}
        if runtime.cpus is not None:
            resources["cpus"] = runtime.cpus
        if runtime.memory_mb is not None:
            resources["memory"] = f"{runtime.memory_mb}m"
        shares = [{"from": str(host), "to": at, "access": "ro" if ro else "rw"} for at, (host, ro) in mounts.items()]
        box = ContainerSandbox(env.image, network="bridge" if network else "none", user=user, env=dict(extra_env), shares=shares, resources=resources, file_limit=box_file_limit())
        box.start(tree, mount_at=env.workdir)
        try:
            yield lambda command, timeout: box.run(["/bin/sh", "-c", command], env.workdir, timeout)
        finally:
            box.remove()
        return
    scratch.mkdir(parents=True, exist_ok=True)
    base = grading_env()
    base.update({"HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1", **extra_env})
    limit = box_file_limit()
    argv = [host_tool("unshare") or "unshare", "-rm" if network else "-rmn", "--", "/bin/sh", "-c", ("" if network else LOOPBACK_UP) + _home_script(scratch / "root", {env.workdir: (tree, False), **mounts}, tmp_bytes=limit)]

    def run(command: str, timeout: float) -> CommandResult:
        return run_local(fence().wrap([*argv, "sh", env.workdir, command], scratch, base), scratch, timeout, env=base, file_limit=limit, memory_limit=box_memory_limit())

    yield run


def _home_script(root: Path, mounts: Mounts, tmp_bytes: int) -> str:
    """The shell script that builds the task's view of the host in a private mount namespace
    and runs `$2` from `$1` in it: a tmpfs root holding the host's folders read-only, /dev and
    /proc, a fresh /tmp, then each mount at its path. A host folder on the way to a mount is
    rebuilt from its entries rather than bound whole, so the mount point is made in the tmpfs,
    never on the host (a workdir of /usr/src/app keeps the host's /usr/bin). The script finds
    its own tools on a fixed PATH and `chroot` by absolute path: the task's PATH (its
    `[verifier.env]`) is the command's, not the box's. /tmp holds at most `tmp_bytes`."""
    q = shlex.quote
    chroot = host_tool("chroot") or "chroot"
    lines = ["set -e", '_task_path="${PATH-}"', f"PATH={BOX_PATH}", f"r={q(str(root))}", 'mkdir -p "$r"', 'mount -t tmpfs benchtape "$r"']
    targets = [PurePosixPath(at).relative_to("/") for at in mounts]
    _host_view(Path("/"), PurePosixPath("."), [t for t in targets if t.parts], lines, top=True)
    lines += ['mkdir -p "$r/dev" "$r/proc" "$r/tmp"', 'mount --rbind /dev "$r/dev"', 'mount --rbind /proc "$r/proc"', f'mount -t tmpfs -o size={int(tmp_bytes)} tmp "$r/tmp"']
    for at, (host, ro) in sorted(mounts.items()):
        lines.append(f'mkdir -p "$r"{q(at)} && mount --bind {q(str(host))} "$r"{q(at)}')
        if ro:
            lines.append(f'mount -o remount,bind,ro "$r"{q(at)}')
    lines.append('PATH="$_task_path"; export PATH')
    lines.append(f'exec {q(chroot)} "$r" /bin/sh -c \'cd "$1" && exec /bin/sh -c "$2"\' sh "$1" "$2"')
    return "\n".join(lines)


HOME_SKIP = ("proc", "sys", "dev", "tmp", "run")  # made fresh (or left out) in the task's view


def _host_view(host: Path, rel: PurePosixPath, targets: list[PurePosixPath], lines: list[str], top: bool = False) -> None:
    """Lines putting `host`'s entries at "$r"/`rel`: bound read-only whole, unless a mount goes
    inside one (then rebuilt from its own entries) or onto it (then left to the mount)."""
    q = shlex.quote
    try:
        entries = sorted(host.iterdir())
    except OSError:
        return
    for entry in entries:
        name = entry.name
        if top and name in HOME_SKIP:
            continue
        inside = [PurePosixPath(*t.parts[1:]) for t in targets if t.parts[0] == name]
        at = f'"$r"/{q(str(rel / name))}'
        if entry.is_symlink():
            lines.append(f"ln -s {q(str(entry.readlink()))} {at}")
        elif entry.is_dir():
            if not inside:
                lines.append(f"mkdir {at} && mount --rbind {q(str(entry))} {at} && (mount -o remount,bind,ro {at} 2>/dev/null || true)")
            elif all(t.parts for t in inside):
                lines.append(f"mkdir {at}")
                _host_view(entry, rel / name, inside, lines)
            # else: a mount lands on this very folder; it is made below
        elif entry.is_file() and not inside:
            lines.append(f"touch {at} && mount --bind {q(str(entry))} {at}")


@functools.lru_cache(maxsize=1)
def can_map_paths() -> bool:
    """Whether this host lets an unprivileged process have its own mount namespace and chroot."""
    unshare = host_tool("unshare")
    if unshare is None or host_tool("chroot") is None:
        return False
    try:
        probe = 'd=$(mktemp -d) && mount -t tmpfs t "$d" && umount "$d" && rmdir "$d"'
        return subprocess.run([unshare, "-rm", "--", "/bin/sh", "-c", probe], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def preflight_problems(tasks: list[TaskSpec], level: str, client: Any = None) -> list[str]:
    """What stops these Harbor tasks running at `level`, before anything runs (a run's
    preflight): at container every absent `FROM` / `docker_image` image, named with how to load
    it; at home a host that cannot map Harbor's paths. Tasks mined from history are skipped."""
    harbor = [t for t in tasks if t.runtime is not None]
    if not harbor:
        return []
    if level == "home":
        return [] if can_map_paths() else [f"Harbor tasks at level home need unprivileged user and mount namespaces (`unshare -rm`), which this host refuses: use level container ({', '.join(t.id for t in harbor)})"]
    from benchtape.sandbox.container import connect

    client = client or connect()
    return [f"task {t.id}: {problem}" for t in harbor for problem in refused_images(t, client)]
