"""`kind: Task` (berbench §1.5): one task mined from a repository's own history.

    .benchtape/tasks/<id>/task.yaml      this document
    .benchtape/tasks/<id>/prompt.md      the ONLY text the agent sees
    .benchtape/tasks/<id>/tests.patch    the hidden tests (the verifier applies them)
    .benchtape/tasks/<id>/reference.patch  the known fix (the oracle's; never shown)

    apiVersion: benchtape/v1alpha1
    kind: Task
    source:
      remote: git@github.com:o/r.git
      pull_request: https://github.com/o/r/pull/603   # provenance only; never shown to the agent
      base_commit: "1fb2b9f1…"                         # the tree the agent starts from
      fix_commit: "5a7e078c…"                          # where the PR landed
    prompt: prompt.md
    verify:
      command: pytest -q toolz/tests/test_itertoolz.py
      setup: []
      protected_paths: [toolz/tests/]
      tests_patch: tests.patch
      network: false
    reference_patch: reference.patch
    validation:                                          # written only by `task validate`
      at: "2025-10-17T09:00:00Z"
      fingerprint: sha256:…
      base_failed: true
      reference_passed: true

A task's **fingerprint** is the sha256 of every input its validation depends on (the prompt,
both patches, the verify keys, the base commit, the project image's recipe); any change
makes a validated task **stale**, and stale and unvalidated tasks are never run. Its
**state** is one of unvalidated / valid / stale / leaking (a prompt naming where the answer
is; spec/prompt_leaks.py), each with the command that moves it on.

Also `.ber/bench/tasks/<id>/` (berbench's layout) is read, a name in both being `.benchtape/`'s.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

import orjson

from benchtape.core.errors import BadInput
from benchtape.spec.documents import API_VERSION, HEADER_KEYS, DocLoader, load_document
from benchtape.spec.overlays import project_config_dirs
from benchtape.spec.prompt_leaks import Finding, LeakContext, find_leaks, repository_names
from benchtape.spec.yamlsrc import LineDict

TASKS_DIR = "tasks"
TASK_FILE = "task.yaml"
HARBOR_FILE = "task.toml"  # a Harbor task's folder (spec/harbor_task.py loads it)
PROMPT_FILE = "prompt.md"
TESTS_PATCH = "tests.patch"
REFERENCE_PATCH = "reference.patch"
PLACEHOLDER_COMMAND = "false"  # what `task create` writes when it cannot infer the verify command
DEFAULT_VERIFY_TIMEOUT = 15 * 60.0  # berbench's `timeout` diagnosis: verify exceeded 15 min
TASK_ID = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9._-]{0,99}$")  # a leading `_` too (Harbor datasets name drafts `_wip-…`): never `-` (an option), never `.` (hidden, `..`)
FULL_SHA = re.compile(r"^[0-9a-f]{40}$")

TASK_KEYS = HEADER_KEYS | {"source", "prompt", "verify", "reference_patch", "validation", "description"}
SOURCE_KEYS = {"remote", "pull_request", "base_commit", "fix_commit", "fix_date"}
FIX_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
VERIFY_KEYS = {"command", "setup", "protected_paths", "tests_patch", "network", "allow_hosts", "timeout"}
VALIDATION_KEYS = {"at", "fingerprint", "inputs", "base_failed", "reference_passed", "level", "runner", "base", "reference", *("fail_to_pass", "pass_to_pass", "flaky")}
TEST_LIST_KEYS = ("fail_to_pass", "pass_to_pass", "flaky")  # per-test validation (SWE-bench's FAIL_TO_PASS / PASS_TO_PASS)
COUNT_KEYS = {"ran", "passed", "failed", "errored", "skipped", "exit"}  # exit: the runner's status in that phase (what a candidate's is held to)
STATES = ("unvalidated", "valid", "stale", "leaking")
TOP_HINTS = {
    "timeout": "the verify command's limit is `verify.timeout` (e.g. `15m`)",
    "reference": "the key is `reference_patch:`",
    "tests_patch": "`tests_patch:` belongs under `verify:`",
    "validated": "berbench G1's `validated:` is `validation:`, and only `task validate` writes it",
}
VERIFY_HINTS = {
    "script": "the key is `command:` (one command; run setup steps with `setup:`)",
    "guard": "the key is `protected_paths:`",
}


@dataclass(frozen=True)
class TaskSource:
    remote: str | None
    pull_request: str | None  # a URL, or `#N` when the forge is unknown
    base_commit: str
    fix_commit: str | None
    fix_date: str | None = None  # the fix commit's date (UTC, YYYY-MM-DD): a model trained past it may have seen the fix

    @property
    def number(self) -> int | None:
        """The PR's number, from its URL or `#N`."""
        m = re.search(r"(?:/(?:pull|pulls|merge_requests)/|^#?)(\d+)/?$", self.pull_request or "")
        return int(m.group(1)) if m else None


@dataclass(frozen=True)
class Verify:
    command: str
    setup: tuple[str, ...] = ()
    protected_paths: tuple[str, ...] = ()
    tests_patch: Path | None = None
    network: bool = False
    allow_hosts: tuple[str, ...] = ()
    timeout: float = DEFAULT_VERIFY_TIMEOUT
    # True for a Harbor task: the verdict is the reward the verifier writes to
    # /logs/verifier/reward.txt|json (1 = passed, a partial reward kept as the score), not the exit status
    reward_file: bool = False

    @property
    def placeholder(self) -> bool:
        return self.command.strip() == PLACEHOLDER_COMMAND

    def bound(self) -> dict[str, Any]:
        """The verify keys the fingerprint binds (the patch by content, elsewhere)."""
        return {"command": self.command, "setup": list(self.setup), "protected_paths": list(self.protected_paths), "network": self.network, "allow_hosts": list(self.allow_hosts), "timeout": self.timeout}


@dataclass(frozen=True)
class Validation:
    at: str
    fingerprint: str
    base_failed: bool
    reference_passed: bool
    level: str | None = None
    runner: str | None = None
    base: dict[str, int] = field(default_factory=dict)
    reference: dict[str, int] = field(default_factory=dict)
    # Each test by id (the runner's report): failing at base + tests and passing with the
    # reference; passing in both; flipping between the reference's runs (left out of both).
    # Empty fail_to_pass: the runner gave no per-test report, the verdict is the exit status.
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    flaky: tuple[str, ...] = ()
    inputs: dict[str, str] = field(default_factory=dict)  # each bound input's own hash (TaskSpec.bound_inputs): what a stale task says changed


# What each bound input is called when a stale task says which changed.
INPUT_NAMES = {"prompt": "prompt.md", "tests_patch": "tests.patch", "reference_patch": "reference.patch", "verify": "`verify:`", "base_commit": "the base commit", "image": "the project image or the environment's recipe (.benchtape/config.yaml `env:`, the dependency declarations)"}


@dataclass(frozen=True)
class TaskState:
    state: str  # one of STATES
    why: str
    next: str  # the command that moves it on
    findings: tuple[Finding, ...] = ()


@dataclass(frozen=True)
class Healthcheck:
    """A Harbor task's readiness check (`[environment.healthcheck]`, a step's `healthcheck`),
    Docker HEALTHCHECK's fields as Harbor reads them: `command` is run in the agent's environment
    until it exits 0 before the agent starts (sandbox/healthcheck.py)."""

    command: str
    interval: float = 5.0  # seconds between attempts once the start period is over
    timeout: float = 30.0  # one attempt's limit
    start_period: float = 0.0  # a grace period whose failures do not count
    start_interval: float = 5.0  # seconds between attempts within it
    retries: int = 3  # consecutive failures after the start period that fail it

    def to_dict(self) -> dict[str, Any]:
        return {"command": self.command, "interval_sec": self.interval, "timeout_sec": self.timeout, "start_period_sec": self.start_period, "start_interval_sec": self.start_interval, "retries": self.retries}


@dataclass(frozen=True)
class McpServer:
    """An MCP server a Harbor task gives its agent (`[[environment.mcp_servers]]`, Harbor's
    MCPServerConfig): a `stdio` command run where the agent runs, or an `sse` / `streamable-http`
    URL it connects to. Given to the harnesses that take MCP servers as Harbor gives them
    (sandbox/harbor_env.mcp_notes says which)."""

    name: str
    transport: str  # stdio | sse | streamable-http
    url: str | None = None
    command: str | None = None
    args: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        if self.transport == "stdio":
            return {"name": self.name, "transport": self.transport, "command": self.command, "args": list(self.args)}
        return {"name": self.name, "transport": self.transport, "url": self.url}


@dataclass(frozen=True)
class HarborStep:
    """One `[[steps]]` entry of a multi-step Harbor task (steps/<name>/): its own instruction,
    its verifier (steps/<name>/tests/ over the task's tests/), its oracle (steps/<name>/solution/,
    else the task's), the files put into the workspace before it (steps/<name>/workdir/, its
    setup.sh run there), and the rule that stops the steps after it (`min_reward`)."""

    name: str
    prompt_path: Path  # steps/<name>/instruction.md
    tests_dirs: tuple[Path, ...]  # copied to /tests in order (the task's tests/, then the step's): the verifier
    solution: Path | None = None  # the oracle's solve.sh (the step's, else the task's)
    workdir: Path | None = None  # steps/<name>/workdir/: copied into the workspace before the step
    agent_timeout: float | None = None
    verifier_timeout: float = DEFAULT_VERIFY_TIMEOUT
    verifier_env: tuple[tuple[str, str], ...] = ()
    min_reward: tuple[tuple[str, float], ...] = ()  # key -> the reward below which the steps after stop
    verifier_separate: bool = False
    verifier_dockerfile: Path | None = None
    verifier_image: str | None = None
    verifier_workdir: str | None = None
    verifier_network: bool = False
    artifacts: tuple[str, ...] = ()  # the task's, then the step's own
    healthcheck: Healthcheck | None = None  # run after the step's setup.sh, before its agent (besides the task's, at the start)

    def prompt(self) -> str:
        return self.prompt_path.read_text(encoding="utf-8")

    @property
    def setup_script(self) -> Path | None:
        """steps/<name>/workdir/setup.sh: run from the workspace before the step's agent (Harbor's)."""
        path = self.workdir / "setup.sh" if self.workdir is not None else None
        return path if path is not None and path.is_file() else None


@dataclass(frozen=True)
class TaskRuntime:
    """How a task that brings its own environment runs (a Harbor task's task.toml): what the
    agent phase may take, where its workspace is, and the scripts' environments. None for a
    task mined from history, which runs in the project image on its base commit's tree."""

    tests_dir: Path  # copied to /tests for the verifier (tests/test.sh writes the reward)
    workdir: str | None = None  # the workspace inside the environment (task.toml, else the image's WORKDIR)
    image: str | None = None  # a prebuilt local image (`docker_image`) instead of environment/Dockerfile
    agent_timeout: float | None = None  # seconds; None: no limit
    build_timeout: float = 600.0
    network: bool = True  # the agent phase's network (Harbor's default is public)
    network_from: str = ""  # the task.toml key (and line) that gave the agent phase its network, as a consent names it
    cpus: float | None = None
    memory_mb: int | None = None
    env: tuple[tuple[str, str], ...] = ()  # every command in the environment
    verifier_env: tuple[tuple[str, str], ...] = ()
    solution_env: tuple[tuple[str, str], ...] = ()
    agent_user: str | None = None  # `[agent] user` (a name or uid): the agent and the oracle run as it in a container
    verifier_user: str | None = None  # `[verifier] user`: tests/test.sh runs as it in a container
    notes: tuple[str, ...] = ()  # keys accepted but not enforced here, said where the task is used
    # `verifier.environment_mode = "separate"`: tests/test.sh runs in an environment of its own
    # (tests/Dockerfile, or [verifier.environment] docker_image, else a fresh copy of the task's),
    # given only the artifacts (paths in the agent's working directory) taken from the agent's workspace
    verifier_separate: bool = False
    verifier_dockerfile: Path | None = None
    verifier_image: str | None = None
    verifier_workdir: str | None = None
    artifacts: tuple[str, ...] = ()  # task.toml's `artifacts` sources, in order
    # `[[steps]]`: a multi-step task, each step an agent phase and a verifier pass on the one
    # workspace; its reward combined over the steps by `reward_strategy` ("mean" or "final")
    steps: tuple[HarborStep, ...] = ()
    reward_strategy: str = "mean"
    healthcheck: Healthcheck | None = None  # `[environment.healthcheck]`: passed before the agent (or the oracle) starts
    skills_dir: str | None = None  # `[environment] skills_dir`: the environment's folder of skills, given to the agent (sandbox/harbor_env.skills_source)
    mcp_servers: tuple[McpServer, ...] = ()  # `[[environment.mcp_servers]]`: given to the agent as Harbor gives them (adapters' `mcp_servers`)


SOLUTION_AT = "/solution"  # where a Harbor task's solution/ is when its solve.sh runs (validation's box, the oracle in a container)


@dataclass(frozen=True)
class TaskSpec:
    id: str
    dir: Path
    path: Path
    source: TaskSource
    prompt_path: Path
    verify: Verify
    reference_patch: Path | None
    validation: Validation | None
    description: str | None = None
    # A Harbor task's oracle is a script run in the workspace (solution/solve.sh) rather than
    # reference_patch; its image comes from environment/Dockerfile rather than the project image.
    solution: Path | None = None
    environment: Path | None = None
    runtime: TaskRuntime | None = None

    def prompt(self) -> str:
        return self.prompt_path.read_text(encoding="utf-8")

    def tests_patch(self) -> bytes:
        return self.verify.tests_patch.read_bytes() if self.verify.tests_patch else b""

    def reference(self) -> bytes:
        return self.reference_patch.read_bytes() if self.reference_patch else b""

    def fingerprint(self, image_recipe: str) -> str:
        """sha256 of every bound input: prompt, both patches, verify keys, base commit, image recipe.
        A task that brings its own environment binds its whole folder instead (the project image
        plays no part in it)."""
        if self.runtime is not None:
            return "sha256:" + folder_hash(self.dir)
        return "sha256:" + _sha(orjson.dumps(self._bound(image_recipe), option=orjson.OPT_SORT_KEYS))

    def _bound(self, image_recipe: str) -> dict[str, Any]:
        return {
            "prompt": _sha(self.prompt().encode("utf-8")),
            "tests_patch": _sha(self.tests_patch()),
            "reference_patch": _sha(self.reference()),
            "verify": self.verify.bound(),
            "base_commit": self.source.base_commit,
            "image": image_recipe,
        }

    def bound_inputs(self, image_recipe: str) -> dict[str, str]:
        """Each bound input's own short hash (the fingerprint's parts), kept beside it in the
        validation so a stale task says which changed, not a list of all it could be."""
        if self.runtime is not None:
            return {}
        return {k: _sha(orjson.dumps(v, option=orjson.OPT_SORT_KEYS))[:16] for k, v in self._bound(image_recipe).items()}

    def leak_context(self, repositories: Iterable[str] = ()) -> LeakContext:
        names = tuple(dict.fromkeys([*repositories, *repository_names(self.source.remote, self.source.pull_request)]))
        commits = tuple(c for c in (self.source.base_commit, self.source.fix_commit) if c)
        url = self.source.pull_request if (self.source.pull_request or "").startswith(("http://", "https://")) else None
        return LeakContext(number=self.source.number, pull_request_url=url, repositories=names, commits=commits)

    def leaks(self, repositories: Iterable[str] = ()) -> list[Finding]:
        return find_leaks(self.prompt(), self.leak_context(repositories))

    def state(self, image_recipe: str, repositories: Iterable[str] = ()) -> TaskState:
        """unvalidated / valid / stale / leaking, why, and the next command."""
        findings = self.leaks(repositories)
        if findings:
            return TaskState("leaking", f"the prompt names where the answer is ({len(findings)} finding(s): {findings[0].describe()})", f"benchtape task lint --fix {self.id}", tuple(findings))
        if self.validation is None:
            if self.verify.placeholder:
                return TaskState("unvalidated", "verify.command is the placeholder `false`: write the command that runs the hidden tests", f"edit {self.path}, then: benchtape task validate {self.id}")
            return TaskState("unvalidated", "never validated", f"benchtape task validate {self.id}")
        changed = self.changed_since_validation(image_recipe)
        if changed is not None:
            return TaskState("stale", changed, f"benchtape task validate {self.id}")
        if not (self.validation.base_failed and self.validation.reference_passed):
            return TaskState("unvalidated", "its validation did not hold", f"benchtape task validate {self.id}")
        return TaskState("valid", f"validated {self.validation.at}", "benchtape run EVALUATION")

    def changed_since_validation(self, image_recipe: str) -> str | None:
        """What changed since the task was validated (None: nothing, or it never was): a task
        whose validation was made of other inputs is stale, and a verdict against it measures
        the edit, never an agent (replay/task_verdict.py)."""
        if self.validation is None or self.validation.fingerprint == self.fingerprint(image_recipe):
            return None
        return self._what_changed(image_recipe)

    def _what_changed(self, image_recipe: str) -> str:
        """Why a task is stale: the bound inputs whose hashes differ from the validation's (one
        written before they were kept says what any of them could be)."""
        kept = self.validation.inputs if self.validation is not None else {}
        changed = [INPUT_NAMES[k] for k, v in self.bound_inputs(image_recipe).items() if kept and kept.get(k) != v]
        if changed:
            return f"changed since it was validated: {', '.join(changed)}"
        return "a bound input changed since it was validated (prompt, a patch, verify, base commit, project image, or the environment's dependency declarations)"


# ---------------------------------------------------------------- finding and loading


def task_dirs(root: Path) -> dict[str, Path]:
    """id → task folder, for every `<id>/task.yaml` under .ber/bench/tasks/ then .benchtape/tasks/
    (a name in both is `.benchtape/`'s), sorted by id (numbers numerically). A Harbor task
    (`<id>/task.toml`) counts too, as does a folder of them one level down (a dataset checkout,
    or a link to one: `.benchtape/tasks/<dataset>/<id>/task.toml`)."""
    found: dict[str, Path] = {}
    for folder in project_config_dirs(root):
        tasks = folder / TASKS_DIR
        if tasks.is_dir():
            here: dict[str, Path] = {}  # this folder's: one id twice here is two tasks, never an override
            for d in sorted(tasks.iterdir()):
                if (d / TASK_FILE).is_file() or (d / HARBOR_FILE).is_file():
                    _one_id(here, d.name, d)
                elif d.is_dir():
                    for t in sorted(d.iterdir()):
                        if (t / HARBOR_FILE).is_file():
                            _one_id(here, t.name, t)
            found.update(here)
    return dict(sorted(found.items(), key=lambda kv: _id_order(kv[0])))


def _one_id(found: dict[str, Path], task_id: str, folder: Path) -> None:
    """A task's id is its folder's name: a dataset's task named like a mined one (or like
    another dataset's) replaced it silently, and the valid one vanished from every list."""
    if task_id in found:
        raise BadInput(
            f"two tasks are named {task_id!r}: {found[task_id]} and {folder}",
            file=str(folder),
            fix="rename one folder (a task's id is its folder's name), or move the dataset out of .benchtape/tasks/ and run it as `benchtape run DATASET_DIR`",
        )
    found[task_id] = folder



FOLDER_HASH_SKIP = (".benchtape-validation.json", "__pycache__", ".git")


def folder_hash(folder: Path) -> str:
    """sha256 over every file below `folder` (relative path, executable bit, bytes), in path
    order: a task folder's identity, so any edit to it shows. What benchtape writes there
    (its validation record) and caches are left out."""
    h = hashlib.sha256()
    for path in sorted(p for p in folder.rglob("*") if not any(part in FOLDER_HASH_SKIP for part in p.relative_to(folder).parts)):
        if path.is_symlink():  # its text, never what it points to (which may be a host file)
            rel = path.relative_to(folder).as_posix()
            h.update(rel.encode() + b"\0l\0" + str(path.readlink()).encode() + b"\0")
        elif path.is_file():
            rel = path.relative_to(folder).as_posix()
            h.update(rel.encode() + b"\0" + (b"x" if path.stat().st_mode & 0o111 else b"-") + b"\0")
            h.update(hashlib.sha256(path.read_bytes()).digest())
    return h.hexdigest()


def find_task(root: Path, task_id: str) -> Path:
    """The folder of task `task_id`, or BadInput naming the closest id."""
    from benchtape.core.errors import closest

    dirs = task_dirs(root)
    if task_id in dirs:
        return dirs[task_id]
    near = closest(task_id, list(dirs))
    fix = f"did you mean {near!r}?" if near else (f"tasks here: {', '.join(dirs)}" if dirs else "create one: benchtape task scan, then benchtape task create N")
    raise BadInput(f"no task {task_id!r} in {root / '.benchtape' / TASKS_DIR}", fix=fix)


def load_task(folder: Path) -> TaskSpec:
    """A task folder's task.yaml, strictly (file:line errors), its files checked to exist inside it."""
    folder = folder.resolve()
    path = folder / TASK_FILE
    if path.is_symlink() and folder not in path.resolve().parents:
        raise BadInput(f"{TASK_FILE} is a link leading out of the task folder (to {path.resolve()})", file=str(path), fix="put the file itself in the task folder in place of the link")
    ld, doc, _ = load_document(path, ("Task",))
    top = ld.strict(doc, TASK_KEYS, "the Task", extra_hint=TOP_HINTS)
    if not TASK_ID.match(folder.name):
        raise BadInput(f"the task folder's name {folder.name!r} is no task id", file=str(path), fix="letters, digits, `.`, `_`, `-` (the PR number, usually)")
    source = _source(ld, top)
    verify = _verify(ld, top, folder)
    prompt = _file(ld, top, "prompt", folder, required=True)
    assert prompt is not None
    return TaskSpec(
        id=folder.name,
        dir=folder,
        path=path,
        source=source,
        prompt_path=prompt,
        verify=verify,
        reference_patch=_file(ld, top, "reference_patch", folder, required=False),
        validation=_validation(ld, top),
        description=str(top["description"]) if top.get("description") is not None else None,
    )


def _source(ld: DocLoader, top: LineDict) -> TaskSource:
    if top.get("source") is None:
        raise ld.err("a Task needs `source:` (base_commit at least)", top, None, 'e.g. `source: {base_commit: "<40-hex sha>"}`')
    node = ld.strict(ld.mapping(top["source"], "`source:`", top, "source"), SOURCE_KEYS, "`source:`")
    base = _sha_value(ld, node, "base_commit", required=True)
    assert base is not None
    fix = _sha_value(ld, node, "fix_commit", required=False)
    pr = node.get("pull_request")
    if pr is not None and (isinstance(pr, bool) or not isinstance(pr, (str, int))):
        raise ld.err("`source.pull_request` must be the PR's URL (or its number)", node, "pull_request")
    pr_text = (f"#{pr}" if isinstance(pr, int) else str(pr)) if pr is not None else None
    remote = node.get("remote")
    fix_date = node.get("fix_date")
    if fix_date is not None:
        fix_date = str(fix_date)  # YAML reads an unquoted date as a date
        if not FIX_DATE.match(fix_date):
            raise ld.err(f"`source.fix_date: {fix_date!r}` is not a date", node, "fix_date", 'the fix commit\'s date, quoted: `fix_date: "2025-10-16"`')
    return TaskSource(remote=str(remote) if remote is not None else None, pull_request=pr_text, base_commit=base, fix_commit=fix, fix_date=fix_date)


def _sha_value(ld: DocLoader, node: LineDict, key: str, required: bool) -> str | None:
    value = node.get(key)
    if value is None:
        if required:
            raise ld.err(f"`source.{key}` is missing", node, None, f'add `{key}: "<40-hex sha>"` (quoted)')
        return None
    if not isinstance(value, str):
        raise ld.err(f"`source.{key}` must be a quoted 40-hex commit sha, got {value!r}", node, key, "quote it: YAML reads an all-digit sha as a number")
    if not FULL_SHA.match(value.lower()):
        raise ld.err(f"`source.{key}` must be a full 40-hex commit sha, got {value!r}", node, key, "write the full sha (git rev-parse COMMIT)")
    return value.lower()


def _verify(ld: DocLoader, top: LineDict, folder: Path) -> Verify:
    if top.get("verify") is None:
        raise ld.err("a Task needs `verify:` (command at least)", top, None, "e.g. `verify: {command: pytest -q tests/test_bug.py, tests_patch: tests.patch}`")
    node = ld.strict(ld.mapping(top["verify"], "`verify:`", top, "verify"), VERIFY_KEYS, "`verify:`", extra_hint=VERIFY_HINTS)
    command = node.get("command")
    if command is False:  # `command: false` unquoted: YAML's boolean, the placeholder as written by hand
        command = PLACEHOLDER_COMMAND
    if not isinstance(command, str) or not command.strip():
        raise ld.err("`verify.command` must be a command (a string; exit 0 means passed)", node, "command" if "command" in node else None, "e.g. `command: pytest -q tests/test_bug.py`")
    network = ld.boolish(node.get("network", False), node, "network")  # "false" quoted reads as false, as in a bench
    protected = tuple(ld.strings(node, "protected_paths", "`verify.protected_paths`"))
    for p in protected:
        if p.startswith("/") or ".." in Path(p).parts:
            raise ld.err(f"`verify.protected_paths`: {p!r} must be a path prefix inside the repository", node, "protected_paths")
    timeout = ld.duration(node.get("timeout"), node, "timeout", DEFAULT_VERIFY_TIMEOUT) or DEFAULT_VERIFY_TIMEOUT  # at most a week (spec/bench.MAX_DURATION)
    return Verify(
        command=command,
        setup=tuple(ld.strings(node, "setup", "`verify.setup`")),
        protected_paths=protected,
        tests_patch=_file(ld, node, "tests_patch", folder, required=False, what="`verify.tests_patch`"),
        network=network,
        allow_hosts=tuple(ld.strings(node, "allow_hosts", "`verify.allow_hosts`")),
        timeout=timeout,
    )


def _file(ld: DocLoader, node: LineDict, key: str, folder: Path, required: bool, what: str | None = None) -> Path | None:
    what = what or f"`{key}`"
    value = node.get(key)
    if value is None:
        if required:
            raise ld.err(f"{what} is missing", node, None, f"add `{key}: {PROMPT_FILE if key == 'prompt' else key}` (a file in the task's folder)")
        return None
    if not isinstance(value, str) or not value.strip():
        raise ld.err(f"{what} must be a file name in the task's folder", node, key)
    path = (folder / value).resolve()
    if folder not in path.parents:
        raise ld.err(f"{what}: {value!r} is outside the task's folder", node, key, "a task's files live beside its task.yaml")
    if not path.is_file():
        raise ld.err(f"{what}: {value} does not exist in {folder}", node, key, "restore the file, or fix the name")
    return path


def _validation(ld: DocLoader, top: LineDict) -> Validation | None:
    if top.get("validation") is None:
        return None
    node = ld.strict(ld.mapping(top["validation"], "`validation:`", top, "validation"), VALIDATION_KEYS, "`validation:`")
    for key in ("at", "fingerprint"):
        if not isinstance(node.get(key), str):
            raise ld.err(f"`validation.{key}` is missing or not a string", node, key if key in node else None, "only `benchtape task validate` writes `validation:`; drop the block and validate again")
    flags = {}
    for key in ("base_failed", "reference_passed"):
        if not isinstance(node.get(key), bool):
            raise ld.err(f"`validation.{key}` must be true or false", node, key if key in node else None, "drop the block and run `benchtape task validate`")
        flags[key] = node[key]
    counts = {}
    for phase in ("base", "reference"):
        raw = ld.strict(ld.mapping(node.get(phase), f"`validation.{phase}`", node, phase), COUNT_KEYS, f"`validation.{phase}`")
        counts[phase] = {k: int(v) for k, v in raw.items() if isinstance(v, int) and not isinstance(v, bool)}
    lists = {key: tuple(ld.strings(node, key, f"`validation.{key}`")) for key in TEST_LIST_KEYS}
    inputs = ld.mapping(node.get("inputs"), "`validation.inputs`", node, "inputs")
    return Validation(
        inputs={str(k): str(v) for k, v in inputs.items() if k in INPUT_NAMES},
        at=node["at"],
        fingerprint=node["fingerprint"],
        level=str(node["level"]) if node.get("level") is not None else None,
        runner=str(node["runner"]) if node.get("runner") is not None else None,
        base=counts["base"],
        reference=counts["reference"],
        fail_to_pass=lists["fail_to_pass"],
        pass_to_pass=lists["pass_to_pass"],
        flaky=lists["flaky"],
        **flags,
    )


# ---------------------------------------------------------------- writing


def render_task(source: TaskSource, verify: Verify, *, description: str | None = None, notes: Iterable[str] = ()) -> str:
    """task.yaml for a new, unvalidated task (its files beside it under the standard names)."""
    lines = [f"# {n}" for n in notes]
    lines += [f"apiVersion: {API_VERSION}", "kind: Task"]
    if description:
        lines.append(f"description: {_q(description)}")
    lines.append("source:")
    if source.remote:
        lines.append(f"  remote: {_q(source.remote)}")
    if source.pull_request:
        lines.append(f"  pull_request: {_q(source.pull_request)}  # provenance only; never shown to the agent")
    lines.append(f'  base_commit: "{source.base_commit}"')
    if source.fix_commit:
        lines.append(f'  fix_commit: "{source.fix_commit}"')
    if source.fix_date:
        lines.append(f'  fix_date: "{source.fix_date}"  # the fix commit\'s date: a model trained past it may have seen the fix')
    lines.append(f"prompt: {PROMPT_FILE}")
    lines.append("verify:")
    lines.append(f"  command: {_q(verify.command)}")
    lines.append("  setup: [" + ", ".join(_q(s) for s in verify.setup) + "]")
    lines.append("  protected_paths: [" + ", ".join(_q(p) for p in verify.protected_paths) + "]")
    lines.append(f"  tests_patch: {TESTS_PATCH}")
    lines.append(f"  network: {'true' if verify.network else 'false'}")
    lines.append(f"reference_patch: {REFERENCE_PATCH}")
    return "\n".join(lines) + "\n"


UNVALIDATED_NOTE = "Unvalidated: review prompt.md and the patches, then run `benchtape task validate {id}`."  # task create's header line
VALIDATED_NOTE = "Validated: see `validation:` below; an edit to the prompt, a patch or verify makes the task stale, and `benchtape task validate {id}` proves it again."


def with_validation(text: str, validation: Validation, task_id: str | None = None) -> str:
    """task.yaml's text with its `validation:` block replaced (or added at the end); the rest,
    comments included, as the user left it, but for `task create`'s "Unvalidated" header line,
    which then says what it is now (it kept telling a validated task's reader to validate it)."""
    kept: list[str] = []
    skipping = False
    stale_header = f"# {UNVALIDATED_NOTE.format(id=task_id)}" if task_id else None
    for line in text.splitlines():
        if stale_header is not None and line.strip() == stale_header:
            line = f"# {VALIDATED_NOTE.format(id=task_id)}"
        if re.match(r"^validation\s*:", line):
            skipping = True
            continue
        if skipping and (line.startswith((" ", "\t")) or not line.strip()):
            continue
        skipping = False
        kept.append(line)
    while kept and not kept[-1].strip():
        kept.pop()
    block = [
        "validation:  # written by `benchtape task validate`; any change to a bound input makes the task stale",
        f'  at: "{validation.at}"',
        f'  fingerprint: "{validation.fingerprint}"',
        *([f"  inputs: {{{', '.join(f'{k}: {_q(v)}' for k, v in sorted(validation.inputs.items()))}}}"] if validation.inputs else []),
        f"  base_failed: {'true' if validation.base_failed else 'false'}",
        f"  reference_passed: {'true' if validation.reference_passed else 'false'}",
    ]
    if validation.level:
        block.append(f"  level: {validation.level}")
    if validation.runner:
        block.append(f"  runner: {validation.runner}")
    for phase, counts in (("base", validation.base), ("reference", validation.reference)):
        block.append(f"  {phase}: {{" + ", ".join(f"{k}: {counts[k]}" for k in sorted(counts)) + "}")
    for key in TEST_LIST_KEYS:
        ids = getattr(validation, key)
        if ids:
            block.append(f"  {key}:")
            block.extend(f"    - {_q(i)}" for i in ids)
    return "\n".join(kept + block) + "\n"


def _q(text: str) -> str:
    """A YAML scalar that reads back as this exact string."""
    return orjson.dumps(text).decode()


def _sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _id_order(task_id: str) -> tuple[int, int, str]:
    return (0, int(task_id), "") if task_id.isdigit() else (1, 0, task_id)
