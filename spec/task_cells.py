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
the sandbox (level home by default; a Harbor task's environment image at level container).
The scenario carries no checks: a task cell is graded by its task's verifier (`task:verify`).
What the oracle harness needs (the reference patch, or the solution script's files) is in the
scenario's raw keys under `oracle`, as the mock's script is under `mock`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput, closest
from benchtape.core.results import Where
from benchtape.spec.bench import BenchSpec, SandboxSpec, ScenarioSpec
from benchtape.spec.evaluation import Skipped, Task
from benchtape.spec.task import TaskSpec

TASK_TIMEOUT = 1800.0  # the agent's limit on a task cell when the task sets none (a real fix takes longer than a scenario)
ALL = "all"


def load_task_folders(refs: list[str], project: Path, evaluation: Path, line: int | None, *, direct: bool = False) -> tuple[list[Task], list[Skipped]]:
    """The runnable tasks `refs` names, in order, and the ones skipped with why."""
    from benchtape.spec.harbor_task import load_harbor_tasks, load_task_folder
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
            folders.update((t.id, t.dir) for t in load_harbor_tasks(path))
        else:
            near = closest(ref, list(known))
            fix = f"did you mean {near!r}?" if near else (f"tasks here: {', '.join(known)}" if known else "create tasks first: benchtape task scan, then benchtape task create N")
            raise BadInput(f"`tasks:` names {ref!r}, which is no task of this project", file=str(evaluation), line=line, fix=fix)
    tasks: list[Task] = []
    skipped: list[Skipped] = []
    recipe, repos = _project_facts(project)
    for task_id, folder in folders.items():
        try:
            spec = load_task_folder(folder)
        except BadInput as exc:
            broken.append(Skipped(task_id, "broken", exc.render().replace("\n", " "), f"fix {exc.file or folder}", str(folder)))
            continue
        state = spec.state(recipe, repos)
        run = state.state == "valid" or (direct and state.state != "leaking")
        if run:
            tasks.append(folder_task(spec, project))
        if state.state != "valid":
            skipped.append(Skipped(spec.id, state.state, state.why, state.next, str(folder), ran=run))
    return tasks, broken + skipped


def _project_facts(project: Path) -> tuple[str, list[str]]:
    """The project image's recipe (a history task's fingerprint binds it) and the repository
    names a prompt must not carry (the leak lint's)."""
    from benchtape.spec.project import load_project

    loaded = load_project(project)
    return loaded.image_recipe(), ([loaded.source.full_name] if loaded.source.full_name else [])


def fingerprint(spec: TaskSpec, project: Path | None) -> str:
    """The task's content hash as a run records it (Harbor: its folder's; history: the bound inputs')."""
    if spec.runtime is not None or project is None:
        return spec.fingerprint("")
    return spec.fingerprint(_project_facts(project)[0])


def folder_task(spec: TaskSpec, project: Path) -> Task:
    """The evaluation task of one task folder: a bench and scenario of its own making."""
    runtime = spec.runtime
    timeout = (runtime.agent_timeout if runtime is not None else None) or TASK_TIMEOUT
    scenario = ScenarioSpec(
        name=spec.id,
        prompt=spec.prompt(),
        description=spec.description,
        sandbox=_sandbox(spec),
        interactive=False,
        timeout=timeout,
        protected_paths=list(spec.verify.protected_paths),
        raw={"name": spec.id, "oracle": oracle_job(spec)},
        where=Where(str(spec.path)),
    )
    bench = BenchSpec(path=spec.path, sha256=fingerprint(spec, project), description=spec.description, harness=None, harness_config={}, params={}, scenarios=[scenario], roots=[spec.dir])
    return Task(id=spec.id, bench=bench, scenario=scenario, spec=spec, project=None if runtime is not None else project)


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
    return SandboxSpec(level="home", image=runtime.image, dockerfile=dockerfile, network="bridge" if runtime.network else "none", env=dict(runtime.env), resources=resources)


def oracle_job(spec: TaskSpec) -> dict[str, Any]:
    """What the oracle harness does for this task (adapters/oracle.py): apply reference.patch
    (history), or run solution/solve.sh from the workspace with the solution folder's files
    (Harbor). Carried by content, so it reaches a container as it reaches a host folder."""
    if spec.runtime is None:
        return {"kind": "history", "patch": spec.reference().decode("utf-8", "surrogateescape") if spec.reference_patch else None}
    files: dict[str, dict[str, Any]] = {}
    if spec.solution is not None:
        folder = spec.solution.parent
        for path in sorted(p for p in folder.rglob("*") if p.is_file()):
            files[path.relative_to(folder).as_posix()] = {"text": path.read_text(encoding="utf-8", errors="surrogateescape"), "exec": bool(path.stat().st_mode & 0o111)}
    env = {**dict(spec.runtime.env), **dict(spec.runtime.solution_env)}
    return {"kind": "harbor", "script": "solve.sh" if spec.solution is not None else None, "files": files, "env": env}


def task_field(task: Task) -> dict[str, str] | None:
    """`session.started`'s `task` for a task cell (the contract with grading), None for a scenario."""
    if task.spec is None:
        return None
    return {"kind": task.kind, "id": task.id, "folder": str(task.spec.dir), "fingerprint": task.bench.sha256}


# ---------------------------------------------------------------- `benchtape run DIR` on Harbor tasks


def is_harbor_folder(path: Path) -> bool:
    """A Harbor task folder (task.toml), or a folder holding them and no bench of its own."""
    from benchtape.spec.harbor_task import is_harbor_task
    from benchtape.spec.task import HARBOR_FILE

    if not path.is_dir():
        return False
    if is_harbor_task(path):
        return True
    if any((path / name).is_file() for name in ("madbench.yaml", "madbench.yml", "bench.yaml", "bench.yml")):
        return False
    return next(path.rglob(HARBOR_FILE), None) is not None


def harbor_evaluation(path: Path, harness: str | None, model: str | None, *, attempts: int = 1, cwd: Path | None = None) -> Any:
    """An evaluation made in memory for `benchtape run DIR --harness H [--model M]`: the Harbor
    tasks at DIR × one setup (the tool whose harness is H, with model M) × `attempts`. It is
    named after the folder, so runs of several setups on the same folder compare as one
    evaluation (`benchtape compare RUN…`); every task that loads runs (a direct run)."""
    import hashlib

    from benchtape.spec.evaluation import MAIN_STEP, Arm, Evaluation, Step
    from benchtape.spec.harbor_task import load_harbor_tasks
    from benchtape.spec.overlays import load_registry
    from benchtape.spec.task import folder_hash

    path = Path(path).resolve()
    load_harbor_tasks(path)  # BadInput now (no task, a bad task.toml), before anything else
    cwd = cwd or Path.cwd()
    registry = load_registry(cwd)
    if harness is None:
        raise BadInput(f"{path} holds Harbor tasks: name the agent that runs them", fix="add --harness oracle (the positive control), --harness mock --model noop (the negative control), or a real tool: --harness claude-code --model scripted")
    tools = [t for t in registry.tools.values() if t.harness == harness]
    if not tools:
        near = closest(harness, sorted({t.harness for t in registry.tools.values()}))
        raise BadInput(f"no tool runs harness {harness!r}", fix=f"did you mean {near!r}?" if near else f"harnesses: {', '.join(sorted({t.harness for t in registry.tools.values()}))}")
    tool = next((t for t in tools if t.name == harness), tools[0])
    by_id = {m.id: key for key, m in tool.models.items()}
    if model is None:
        if len(tool.models) != 1:
            raise BadInput(f"{tool.name} has more than one model: name one with --model", fix=f"models of {tool.name}: {', '.join(sorted(tool.models))}")
        key = next(iter(tool.models))
    elif model in tool.models or model in by_id:
        key = model if model in tool.models else by_id[model]
    else:
        near = closest(model, sorted(tool.models))
        raise BadInput(f"unknown model {model!r} for {tool.name}", fix=f"did you mean {near!r}?" if near else f"models of {tool.name}: {', '.join(sorted(tool.models))}")
    options = tool.option_values({})
    step = Step(MAIN_STEP, tool.name, tool.harness, tool.version, key, tool.models[key].id, None, tuple(options.items()), tool.effects(options), protected_paths=tool.protected_paths, state_paths=tool.state_paths)
    arm = Arm(tool.name, False, (step,))
    project = path if path.is_dir() else path.parent
    return Evaluation(
        name=path.name,
        path=path,
        project=project,
        sha256=hashlib.sha256(folder_hash(path).encode()).hexdigest(),
        description=f"the Harbor tasks in {path}",
        attempts=attempts,
        bench_paths=[],
        arms=[arm],
        blocks=[[arm]],
        registry=registry,
        task_refs=[str(path)],
        direct=True,
    )
