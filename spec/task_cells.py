"""Task folders as an evaluation's tasks: which ones run, and the shape a cell reads them in.

An evaluation's `tasks:` names history-mined tasks (`.benchtape/tasks/<id>/`, by id or `all`)
and Harbor task folders (a path to one, or to a folder of them). Only VALID tasks run: a
stale, unvalidated, leaking or broken one is skipped, and the skip is said (preview, run,
`--json`) with why and the command that moves it on. `benchtape run DIR` on Harbor tasks is a
direct run (`direct`): every task that loads runs, an unvalidated one said as such, because
such a run (the oracle, the no-op agent) is how a task author sees whether the task holds.

A task folder becomes an evaluation `Task` with a bench and scenario of its own making
(`folder_task`): the prompt (prompt.md / instruction.md), the agent's time limit (a Harbor
task's `agent.timeout_sec`), the paths the agent must not change (`verify.protected_paths`),
the sandbox (level home by default; a Harbor task's environment image at level container, its
workspace mounted at the environment's working directory).
The scenario carries no checks: a task cell is graded by its task's verifier (`task:verify`).
What the oracle harness needs (the reference patch, or the solution script's files) is in the
scenario's raw keys under `oracle`, as the mock's script is under `mock`.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchtape.core.errors import BadInput, closest
from benchtape.core.results import Where
from benchtape.spec.bench import IMAGE_WORKDIR, BenchSpec, SandboxSpec, ScenarioSpec
from benchtape.spec.task import HarborStep, TaskSpec, TaskState

if TYPE_CHECKING:
    from benchtape.spec.project import Project


@dataclass(frozen=True)
class Task:
    """One task of the evaluation: a scenario of one of its benches, or a task folder (`spec`:
    a history-mined task or a Harbor task, spec/task.py). A task folder is given the bench and
    scenario shape too (folder_task below), so every bench-scenario path (sandbox level,
    timeout, protected paths, preflight) reads it the same way."""

    id: str
    bench: BenchSpec
    scenario: ScenarioSpec
    spec: TaskSpec | None = None
    project: Path | None = None  # a history task's repository (its tree at base_commit is the workspace)
    project_environment: bool = True  # a history task's agent gets its project's environment (the evaluation's `project_environment:`)

    @property
    def kind(self) -> str:
        """`scenario`, `history` or `harbor`."""
        if self.spec is None:
            return "scenario"
        return "harbor" if self.spec.runtime is not None else "history"


# Under a history task's repository, what its agent must never read: the history holding each
# fix, validation's logs, the store (the oracle's diffs are in its snapshots).
_PROJECT_SECRETS = (".git", ".benchtape/validate", ".benchtape/benchtape.db", ".benchtape/benchtape.db-wal", ".benchtape/benchtape.db-shm", ".benchtape/tasks", ".ber/bench/tasks")


def hidden_from_agent(task: Task) -> tuple[str, ...]:
    """The host paths a task's agent must never read at a level on the host (berbench: it
    never gets the hidden tests, the reference patch, the git history): a history task's folder
    and its fellows' (tests.patch, reference.patch) and, under its repository,
    `_PROJECT_SECRETS`; a Harbor task's tests/ and solution/ (its steps' too). The sandbox covers
    each with an empty one in the agent's own mount namespace (sandbox/pidfence.py); the
    agent reads what it is given by content (its prompt, its workspace), never these. An agent
    at level home could `git apply` the reference patch and was credited with the pass."""
    spec = task.spec
    if spec is None:
        return ()
    runtime = spec.runtime
    if runtime is None:
        paths = [spec.dir, spec.dir.parent]
    else:  # a Harbor task's folder may be where benchtape runs (its .benchtape/tools): only its verifier's and oracle's files
        paths = [runtime.tests_dir]
        solutions = [spec.solution, *(step.solution for step in runtime.steps)]
        paths += [p.parent for p in solutions if p is not None] + [d for step in runtime.steps for d in step.tests_dirs]
    if task.project is not None:
        paths += [task.project / p for p in _PROJECT_SECRETS]
        paths += _local_remotes(task.project, spec.source.remote if runtime is None else None)
    return tuple(dict.fromkeys(str(p) for p in paths if p.exists()))


def _local_remotes(project: Path, recorded: str | None) -> list[Path]:
    """The repository's remotes that are folders on this machine (the task's recorded
    `source.remote`, the clone's `remote.*.url`): each holds the whole history, each fix in it,
    so an agent at level home found the fix with `git --git-dir=<the mirror> log` and applied it
    (attrs, newcomer pass). One that holds the project, the agent's scratch space, or is a top
    folder is left alone: covering it would cover the workspace too."""
    import configparser
    import tempfile

    urls = [recorded] if recorded else []
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read(project / ".git" / "config", encoding="utf-8")
    except configparser.Error:
        pass
    urls += [parser[section].get("url", "") for section in parser.sections() if section.startswith('remote "')]
    keep = [project.resolve(), Path(tempfile.gettempdir()).resolve(), Path.home().resolve()]
    out = []
    for url in urls:
        if not url or ("://" in url and not url.startswith("file://")) or (":" in url.split("/", 1)[0] and not url.startswith("file://")):
            continue  # a network remote (https://, ssh://, git@host:path)
        folder = Path(url.removeprefix("file://")).expanduser()
        folder = (project / folder if not folder.is_absolute() else folder).resolve()
        if len(folder.parts) <= 2 or any(folder == k or folder in k.parents for k in keep):
            continue
        out.append(folder)
    return out


@dataclass(frozen=True)
class Skipped:
    """A task folder an evaluation does not run, and why (said by the preview and the run)."""

    id: str
    state: str  # unvalidated | stale | leaking | broken
    why: str
    next: str
    folder: str
    ran: bool = False  # a direct run (`benchtape run DIR`) runs an unvalidated Harbor task anyway: said, not skipped

    def describe(self) -> str:
        if self.ran:
            return f"task {self.id} is {self.state} ({self.why}) and runs anyway: a direct run is how a task's controls are checked; next: {self.next}"
        return f"task {self.id} skipped ({self.state}): {self.why}; next: {self.next}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "state": self.state, "why": self.why, "next": self.next, "folder": self.folder, "ran": self.ran}


TASK_TIMEOUT = 1800.0  # the agent's limit on a task cell when the task sets none (a real fix takes longer than a scenario)
ALL = "all"


def load_task_folders(refs: list[str], project: Path, evaluation: Path, line: int | None, *, direct: bool = False, project_environment: bool = True, cell_timeout: float | None = None) -> tuple[list[Task], list[Skipped]]:
    """The runnable tasks `refs` names, in order, and the ones skipped with why.
    `project_environment`: whether a history task's agent gets its project's environment;
    `cell_timeout`: the agent's limit where a task sets none (the config's `defaults.cell_timeout`)."""
    from benchtape.spec.harbor_task import harbor_task_folders, load_task_folder
    from benchtape.spec.task import task_dirs

    if not refs:
        return [], []
    folders: dict[str, Path] = {}
    broken: list[Skipped] = []
    known = task_dirs(project)
    for ref in refs:
        if ref == ALL:
            folders.update(known)
        elif ref in known:
            folders[ref] = known[ref]
        elif "/" in ref or (project / ref).exists():
            path = Path(ref) if Path(ref).is_absolute() else project / ref
            if not path.exists():
                raise BadInput(f"`tasks:` {ref} does not exist (resolved against the project folder: {path})", file=str(evaluation), line=line, fix="name a Harbor task folder (it holds task.toml) or a folder of them")
            folders.update((f.name, f) for f in harbor_task_folders(path))  # each loaded below: a bad one is skipped, saying why
        else:
            near = closest(ref, list(known))
            fix = f"did you mean {near!r}?" if near else (f"tasks here: {', '.join(known)}" if known else "create tasks first: benchtape task scan, then benchtape task create N")
            raise BadInput(f"`tasks:` names {ref!r}, which is no task of this project", file=str(evaluation), line=line, fix=fix)
    tasks: list[Task] = []
    skipped: list[Skipped] = []
    loaded, repos = _project_facts(project)
    for task_id, folder in folders.items():
        try:
            spec = load_task_folder(folder)
        except BadInput as exc:
            broken.append(Skipped(task_id, "broken", exc.render().replace("\n", " "), f"fix {exc.file or folder}", str(folder)))
            continue
        state = explained_state(loaded, spec, repos)
        run = state.state == "valid" or (direct and state.state != "leaking")
        if run:
            tasks.append(folder_task(spec, project, project_environment=project_environment, cell_timeout=cell_timeout))
        if state.state != "valid":
            skipped.append(Skipped(spec.id, state.state, state.why, state.next, str(folder), ran=run))
    return tasks, broken + skipped


OUTCOME = "outcome.json"  # beside a task's validation logs (.benchtape/validate/<id>/): what its last validation concluded


def last_outcome(logs: Path, task_id: str) -> dict[str, Any] | None:
    """The last validation's conclusion for `task_id` (tasks/validate.write_outcome), or None."""
    import orjson

    try:
        doc = orjson.loads((logs / task_id / OUTCOME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return doc if isinstance(doc, dict) else None


def explained_state(project: Project, task: TaskSpec, repos: list[str]) -> TaskState:
    """The task's state, and why, as every command says it (`task list`, an evaluation's
    skips, `run --dry-run`): an unvalidated task whose last validation did not hold says what
    that validation concluded, never "never validated" after three tries."""
    recipe = project.task_recipe(task.source.base_commit) if task.runtime is None else ""
    state = task.state(recipe, repos)
    if state.state == "valid":
        return _revalidated(project, task, recipe, state)
    if state.why != "never validated":
        return state
    last = last_outcome(project.config_dir / "validate", task.id)
    if last is None or last.get("validated"):
        return state
    why = f"its last validation ({last.get('at')}, level {last.get('level')}) did not hold: {last.get('why') or 'see its logs'}"
    if last.get("fingerprint") in (None, task.fingerprint(recipe)):
        return replace(state, why=why, next=last.get("next") or f"read {project.config_dir / 'validate' / task.id}/*.log, then: benchtape task validate {task.id}")
    # edited since, or its environment's recipe (.benchtape/config.yaml `env:`) changed: that conclusion may no longer hold
    return replace(state, why=why + "; the task or its environment's recipe has changed since", next=f"benchtape task validate {task.id}")


def _revalidated(project: Project, task: TaskSpec, recipe: str, state: TaskState) -> TaskState:
    """A valid task whose validation was made again, of the same inputs at the same level, and
    did not hold this time: unvalidated, saying both. Its record stays as it was written (a
    validation that fails writes none), and every command kept calling it valid, so a run used
    it though the last look at it found its base passing (prettytable's 344, its environment
    changed under it)."""
    last = last_outcome(project.config_dir / "validate", task.id)
    record = task.validation
    if last is None or last.get("validated") or record is None or str(last.get("at") or "") <= record.at:
        return state
    if last.get("fingerprint") != task.fingerprint(recipe) or (record.level is not None and last.get("level") != record.level):
        return state  # another task's inputs, or another level's: says nothing of this record
    why = f"validated {record.at}, but validated again {last.get('at')} (level {last.get('level')}) it did not hold: {last.get('why') or 'see its logs'}"
    return replace(state, state="unvalidated", why=why, next=last.get("next") or f"read {project.config_dir / 'validate' / task.id}/*.log, then: benchtape task validate {task.id}")


def _project_facts(project: Path) -> tuple[Project, list[str]]:
    """The project (its image's and environment's recipe: a history task's fingerprint binds
    them, Project.task_recipe) and the repository names a prompt must not carry (the leak lint's)."""
    from benchtape.spec.project import load_project

    loaded = load_project(project)
    return loaded, ([loaded.source.full_name] if loaded.source.full_name else [])


def fingerprint(spec: TaskSpec, project: Path | None) -> str:
    """The task's content hash as a run records it (Harbor: its folder's; history: the bound inputs')."""
    if spec.runtime is not None or project is None:
        return spec.fingerprint("")
    return spec.fingerprint(_project_facts(project)[0].task_recipe(spec.source.base_commit))


def folder_task(spec: TaskSpec, project: Path, *, project_environment: bool = True, cell_timeout: float | None = None) -> Task:
    """The evaluation task of one task folder: a bench and scenario of its own making. The
    agent's limit is the task's own, else `cell_timeout` (berbench's `defaults.cell_timeout`),
    else TASK_TIMEOUT."""
    runtime = spec.runtime
    fallback = cell_timeout or TASK_TIMEOUT
    timeout = (runtime.agent_timeout if runtime is not None else None) or fallback
    if runtime is not None and runtime.steps:  # a multi-step task: each step has its own limit, the cell their sum
        timeout = sum(st.agent_timeout or fallback for st in runtime.steps)
    scenario = ScenarioSpec(
        name=spec.id,
        prompt=spec.prompt(),
        description=spec.description,
        sandbox=_sandbox(spec),
        interactive=False,
        timeout=timeout,
        protected_paths=list(spec.verify.protected_paths),
        raw={"name": spec.id, "oracle": oracle_job(spec), **({"network_from": runtime.network_from} if runtime is not None and runtime.network_from else {})},
        where=Where(str(spec.path)),
    )
    bench = BenchSpec(path=spec.path, sha256=fingerprint(spec, project), description=spec.description, harness=None, harness_config={}, params={}, scenarios=[scenario], roots=[spec.dir])
    return Task(id=spec.id, bench=bench, scenario=scenario, spec=spec, project=None if runtime is not None else project, project_environment=project_environment)


def _sandbox(spec: TaskSpec) -> SandboxSpec:
    """Level home by default; at level container a Harbor task's own environment (its
    Dockerfile or `docker_image`) with its network mode and resources."""
    runtime = spec.runtime
    if runtime is None:
        return SandboxSpec(level="home")
    resources: dict[str, Any] = {}
    if runtime.cpus is not None:
        resources["cpus"] = runtime.cpus
    if runtime.memory_mb is not None:
        resources["memory"] = f"{runtime.memory_mb}m"
    dockerfile = spec.environment / "Dockerfile" if spec.environment is not None and runtime.image is None else None
    # mounted where the task's instruction, solve.sh and tests look: task.toml's workdir, else the image's WORKDIR (sandbox/harbor_env.prepare's)
    return SandboxSpec(level="home", image=runtime.image, dockerfile=dockerfile, network="bridge" if runtime.network else "none", env=dict(runtime.env), resources=resources, mount_at=runtime.workdir or IMAGE_WORKDIR, user=runtime.agent_user)


def solving(task: Task, scenario: ScenarioSpec, model_id: str | None) -> ScenarioSpec:
    """The scenario a solver model plays (spec/solver.py): the task's reference fix as its `mock:`
    script; any other model's scenario as it is."""
    from benchtape.spec.solver import SOLVER_MODELS, solver_script

    partial = SOLVER_MODELS.get(model_id or "")
    if partial is None:
        return scenario
    spec = task.spec
    if spec is None or spec.runtime is not None or spec.reference_patch is None:
        kind = "a bench scenario" if spec is None else "a Harbor task (its fix is solution/solve.sh: the oracle runs it)"
        mock: dict[str, Any] = {"steps": [{"say": f"the solver plays a history task's reference.patch; this is {kind}: nothing to play"}]}
    else:
        mock = solver_script(spec.reference(), partial=partial, verify=spec.verify.command)
    return replace(scenario, mock=mock, raw={**scenario.raw, "mock": mock})


def oracle_job(spec: TaskSpec, step: HarborStep | None = None) -> dict[str, Any]:
    """What the oracle harness does for this task (adapters/oracle.py): apply reference.patch
    (history), or run solution/solve.sh from the workspace with the solution folder's files
    (Harbor; a multi-step task's `step`: that step's solution, as Harbor's oracle takes it).
    Carried by content, so it reaches a container as it reaches a host folder."""
    if spec.runtime is None:
        return {"kind": "history", "patch": spec.reference().decode("utf-8", "surrogateescape") if spec.reference_patch else None}
    files: dict[str, dict[str, Any]] = {}
    solution = step.solution if step is not None else spec.solution
    if solution is not None:
        folder = solution.parent
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            files[path.relative_to(folder).as_posix()] = {"text": path.read_text(encoding="utf-8", errors="surrogateescape"), "exec": bool(path.stat().st_mode & 0o111)}
    env = {**dict(spec.runtime.env), **dict(spec.runtime.solution_env)}
    return {"kind": "harbor", "script": "solve.sh" if solution is not None else None, "files": files, "env": env}


def task_field(task: Task) -> dict[str, str] | None:
    """`session.started`'s `task` for a task cell (the contract with grading), None for a scenario."""
    if task.spec is None:
        return None
    return {"kind": task.kind, "id": task.id, "folder": str(task.spec.dir), "fingerprint": task.bench.sha256}
