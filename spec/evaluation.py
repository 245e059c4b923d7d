"""Evaluation files (`kind: Evaluation`, the berbench form): which setups to compare, over
the scenarios (tasks) of one or more bench files, each repeated `attempts` times.

    apiVersion: benchtape/v1alpha1
    kind: Evaluation
    bench: madbench.yaml          # default: the bench in the project folder
    attempts: 3
    project_environment: true     # a history task's agent gets the environment its verifier runs in
    tools:
      - tool: claude-code
        model: [sonnet-4.6, opus-4.6]
        effort: medium
      - tool: codex
        model: gpt-5.5
        effort: [medium, high]

A scalar and a one-item list mean the same; the lists inside a block form a cross product
(nested `steps:` lists of a workflow block too); blocks are unioned. Every value is checked
against the tool registry (overlays.py) and an unknown one is refused by name with the
closest valid one, so a typo never silently becomes a default. An evaluation resolves to
arms (one resolved setup each); arms × tasks × attempts are its cells.
"""

from __future__ import annotations

import hashlib
import itertools
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, Iterable

import orjson

from benchtape.core.errors import BadInput, closest
from benchtape.spec.bench import discover, is_eval_document, load_bench
from benchtape.spec.documents import HEADER_KEYS, DocLoader, load_document
from benchtape.spec.overlays import Effects, Registry, ToolDef, WorkflowDef, load_registry, project_config_dir, project_config_dirs
from benchtape.spec.project import MAX_ATTEMPTS, Defaults, defaults_for
from benchtape.spec.run_settings import RunSettings, load_run_settings
from benchtape.spec.task_cells import Skipped, Task, load_task_folders

__all__ = ["Arm", "Cell", "Evaluation", "Skipped", "Step", "Task"]  # Task and Skipped live with the task folders (spec/task_cells.py)
from benchtape.spec.yamlsrc import LineDict, load_yaml_file

EVALUATION_KEYS = HEADER_KEYS | {"description", "bench", "tasks", "attempts", "tools", "runs", "project_environment"}
BLOCK_KEYS = {"tool", "tool_version", "model", "effort", "options", "pre", "steps"}
STEP_OVERRIDE_KEYS = {"model", "effort", "options"}
EVALUATIONS_DIR = "evaluations"
MAIN_STEP = "main"
TOP_HINTS = {
    "id": "an evaluation's name is its file name",
    "concurrency": "concurrency is a run option, not part of the evaluation",
    "matrix": "write the axes as lists inside a `tools:` block",
    "scenarios": "an evaluation does not select scenarios: every scenario of its bench is a task (narrow a run with --task)",
}
BLOCK_HINTS = {
    "models": "the key is `model:` (a value or a list)",
    "efforts": "the key is `effort:` (a value or a list)",
    "version": "the key is `tool_version:`",
    "harness": "the key is `tool:`",
    "attempts": "`attempts:` is set once, at the top of the evaluation",
}


# ---------------------------------------------------------------- resolved forms


@dataclass(frozen=True)
class Step:
    """One harness invocation of an arm: the only step of a plain tool, or one workflow step."""

    name: str
    tool: str
    harness: str
    tool_version: str  # as asked: `latest` or a pinned version (resolved when the cell runs)
    model: str | None  # the evaluation's model key
    model_id: str | None  # the API id the harness is given
    effort: str | None
    options: tuple[tuple[str, str], ...]  # every option of the tool, chosen or default
    effects: Effects
    prompt: str | None = None  # workflow template ({prompt}, {workdir}, {handover}); None = the task prompt
    timeout: float | None = None
    shown: tuple[str, ...] = field(default=(), compare=False)  # options the label names (set on purpose)
    protected_paths: tuple[str, ...] = field(default=(), compare=False)  # from the tool definition
    state_paths: tuple[str, ...] = field(default=(), compare=False)  # from the tool definition

    def spec(self) -> dict[str, Any]:
        """What this step asks of its harness (identity input; `require_env` is not: it names host credentials)."""
        effects = self.effects.to_dict()
        effects.pop("require_env")
        return {
            "name": self.name,
            "tool": self.tool,
            "harness": self.harness,
            "tool_version": self.tool_version,
            "model_id": self.model_id,
            "effort": self.effort,
            "options": dict(self.options),
            "effects": effects,
            "prompt": self.prompt,
            "timeout": self.timeout,
        }


@dataclass(frozen=True)
class Arm:
    """One resolved setup: a tool (or workflow) with every axis chosen."""

    tool: str
    workflow: bool
    steps: tuple[Step, ...]
    pre: tuple[str, ...] = ()  # the block's own setup commands, run before the first step
    block: int = 1  # which `tools:` block produced it (1-based; display only)

    def spec(self) -> dict[str, Any]:
        return {"tool": self.tool, "workflow": self.workflow, "pre": list(self.pre), "steps": [s.spec() for s in self.steps]}

    @cached_property
    def key(self) -> str:
        """A stable short id of the setup as asked (versions unresolved): what `compare` groups by."""
        return hashlib.sha256(orjson.dumps(self.spec(), option=orjson.OPT_SORT_KEYS)).hexdigest()[:16]

    @cached_property
    def label(self) -> str:
        """A readable name: tool@version model/effort and each non-default option."""
        if not self.workflow:
            return _step_label(self.steps[0], with_tool=True) + _pre_label(self.pre)
        parts = [f"{s.name}={_step_label(s, with_tool=False)}" for s in self.steps]
        version = self.steps[0].tool_version
        return f"{self.tool}@{version} " + " ".join(parts) + _pre_label(self.pre)

    def all_pre(self) -> tuple[str, ...]:
        """Every setup command before the agent: the block's `pre`, then each first-step option's."""
        return self.pre + self.steps[0].effects.pre

    def protected_paths(self, task: Task | None = None) -> tuple[str, ...]:
        """Paths the agent must not change: the task's (`protected_paths:` in the bench) and each step's tool's."""
        found = list(task.scenario.protected_paths) if task is not None else []
        found += [p for s in self.steps for p in s.protected_paths]
        return tuple(dict.fromkeys(found))

    def state_paths(self) -> tuple[str, ...]:
        """Files the harnesses keep as their own state in the workspace (HOME): left out of the agent's diff."""
        return tuple(dict.fromkeys(p for s in self.steps for p in s.state_paths))

    def summary(self) -> dict[str, Any]:
        """What a report shows of the arm."""
        return {
            "key": self.key,
            "label": self.label,
            "tool": self.tool,
            "workflow": self.workflow,
            "block": self.block,
            "pre": list(self.pre),
            "steps": [
                {"name": s.name, "tool": s.tool, "tool_version": s.tool_version, "model": s.model, "model_id": s.model_id, "effort": s.effort, "options": dict(s.options)}
                for s in self.steps
            ],
        }


def _step_label(step: Step, with_tool: bool) -> str:
    head = f"{step.tool}@{step.tool_version} " if with_tool else (f"{step.tool}:" if step.tool else "")
    text = head + (step.model or "?") + (f"/{step.effort}" if step.effort else "")
    values = dict(step.options)
    return text + "".join(f" {name}={values[name]}" for name in step.shown)


def _pre_label(pre: tuple[str, ...]) -> str:
    return f" +pre[{len(pre)}]" if pre else ""




@dataclass(frozen=True)
class Cell:
    arm: Arm
    task: Task
    attempt: int  # 1-based


@dataclass
class Evaluation:
    name: str
    path: Path
    project: Path
    sha256: str
    description: str | None
    attempts: int
    bench_paths: list[Path]
    arms: list[Arm]
    blocks: list[list[Arm]]  # each block's arms, before the union (a repeated arm appears in each)
    registry: Registry
    direct: bool = False  # `benchtape run DIR` on Harbor tasks: every task that loads runs (unvalidated ones said)
    runs: RunSettings = field(default_factory=RunSettings)  # where its cells run (`runs:`), over the project's
    task_refs: list[str] = field(default_factory=list)  # `tasks:` as written (ids, `all`, Harbor paths); [] with `bench:` only
    task_line: int | None = None  # the line of `tasks:` (errors name it)
    project_environment: bool = True  # `project_environment: false`: history tasks' agents run without their project's environment
    defaults: Defaults = field(default_factory=Defaults)  # the project's config over the user's: what it runs with where it says nothing
    _tasks: list[Task] | None = field(default=None, repr=False)
    skipped: list[Skipped] = field(default_factory=list)  # task folders not run (stale, unvalidated, leaking, broken), known after tasks()

    @property
    def cells_per_task(self) -> int:
        return len(self.arms) * self.attempts

    def duplicates(self) -> list[tuple[int, Arm]]:
        """Arms a later block repeats (counted once): (block number, arm)."""
        seen: set[str] = set()
        out = []
        for number, arms in enumerate(self.blocks, start=1):
            for arm in arms:
                if arm.key in seen:
                    out.append((number, arm))
                seen.add(arm.key)
        return out

    def tasks(self) -> list[Task]:
        """Every scenario of the benches (loaded once; bad input in a bench is refused here)."""
        if self._tasks is None:
            tasks = load_tasks(self.bench_paths, self.path)
            folders, self.skipped = load_task_folders(self.task_refs, self.project, self.path, self.task_line, direct=self.direct, project_environment=self.project_environment, cell_timeout=self.defaults.cell_timeout)
            multi = next((t for t in folders if t.spec is not None and t.spec.runtime is not None and t.spec.runtime.steps), None)
            workflow = next((a for a in self.arms if a.workflow), None)
            if multi is not None and workflow is not None:  # each task step would need every workflow step: not run here
                raise BadInput(f"the workflow {workflow.label!r} cannot run the multi-step Harbor task {multi.id!r}: benchtape runs a multi-step task's steps with a one-step setup", file=str(self.path), line=self.task_line, fix="run multi-step Harbor tasks with plain tools, or leave them out of this evaluation's `tasks:`")
            self._tasks = _unique(tasks + folders, self.path)
        return self._tasks

    def fingerprints(self) -> dict[str, str]:
        """Each task folder's content as it is now, by task id: the fingerprint a grading
        records, by which compare and reuse count only gradings of the task as it is."""
        return {t.id: t.bench.sha256 for t in self.tasks() if t.spec is not None and t.bench.sha256}

    def select(self, ids: Iterable[str] | None) -> list[Task]:
        """The tasks `--task ID` names (all when none), refusing an unknown id with the closest."""
        tasks = self.tasks()
        wanted = list(ids or [])
        if not wanted:
            return tasks
        known = [t.id for t in tasks]
        skipped = {s.id: s for s in self.skipped}
        for i in wanted:
            if i not in known and i in skipped and not skipped[i].ran:
                raise BadInput(f"--task {i!r} is {skipped[i].state}: {skipped[i].why}", file=str(self.path), fix=skipped[i].next)
            if i not in known:
                near = closest(i, known)
                listed = [p.strip() for p in i.split(",") if p.strip()]
                if len(listed) > 1 and all(p in known for p in listed):  # berbench G1's `--challenge a,b`
                    fix = "give each its own flag: " + " ".join(f"--task {p}" for p in listed)
                else:
                    fix = f"did you mean {near!r}?" if near else f"tasks: {', '.join(known)}"
                raise BadInput(f"--task {i!r} is no task of this evaluation", file=str(self.path), fix=fix)
        return [t for t in tasks if t.id in wanted]

    def cells(self, tasks: list[Task] | None = None) -> list[Cell]:
        """Every cell: per task, per arm, per attempt (in that order)."""
        return [Cell(arm, task, attempt) for task in (tasks if tasks is not None else self.tasks()) for arm in self.arms for attempt in range(1, self.attempts + 1)]


# ---------------------------------------------------------------- finding and loading


def find_evaluation(name: str, cwd: Path | None = None) -> Path:
    """A path as given, or `.benchtape/evaluations/NAME.yaml` under the current folder."""
    cwd = cwd or Path.cwd()
    if len(name.encode(errors="surrogateescape")) > 255 or "\0" in name:  # no file is named so: the file system would refuse the look-up (OSError)
        raise BadInput(f"no evaluation named {name[:60]!r}{'…' if len(name) > 60 else ''}: not a name a file can have", fix="name a file of .benchtape/evaluations/ (without .yaml), or give the evaluation file's path")
    given = Path(name)
    if given.suffix in (".yaml", ".yml") or len(given.parts) > 1 or (cwd / given).is_file():
        path = given if given.is_absolute() else cwd / given
        if not path.is_file():
            raise BadInput("no such evaluation file", file=str(path), fix="check the path, or give the name of a file in .benchtape/evaluations/")
        return path
    found = project_evaluation(name, cwd)
    if found is not None:
        return found
    folders = [project_config_dir(cwd) / EVALUATIONS_DIR, *(d / EVALUATIONS_DIR for d in project_config_dirs(cwd) if (d / EVALUATIONS_DIR).is_dir())]
    known = evaluation_names(cwd)
    near = closest(name, known)
    fix = f"did you mean {near!r}?" if near else (f"evaluations here: {', '.join(known)}" if known else f"create it: benchtape evaluation create {name}")
    raise BadInput(f"no evaluation named {name!r} in {' or '.join(map(str, dict.fromkeys(folders)))}", fix=fix)


def project_evaluation(name: str, cwd: Path) -> Path | None:
    """`.benchtape/evaluations/NAME.yaml` (or `.yml`) of the project at `cwd`, when it is there;
    else berbench's `.ber/bench/evaluations/NAME.yaml`."""
    for folder in reversed([d / EVALUATIONS_DIR for d in project_config_dirs(cwd)]):
        found = next((folder / f"{name}{suffix}" for suffix in (".yaml", ".yml") if (folder / f"{name}{suffix}").is_file()), None)
        if found is not None:
            return found
    return None


def evaluation_ref(path: Path, cwd: Path | None = None) -> str:
    """How to name this evaluation file in a command printed for the user to run from `cwd`:
    its bare name when `benchtape run NAME` finds this very file (no file or folder of that
    name here: `run` reads an existing path as a bench), else its path, relative when it is
    below `cwd`, quoted for a shell."""
    import shlex

    cwd = cwd or Path.cwd()
    name = path.stem
    try:
        if not (cwd / name).exists() and find_evaluation(name, cwd).resolve() == path.resolve():
            return name
    except BadInput:
        pass
    try:
        shown = str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        shown = str(path)
    return shlex.quote(shown)


def evaluation_names(cwd: Path) -> list[str]:
    names: set[str] = set()
    for folder in (d / EVALUATIONS_DIR for d in project_config_dirs(cwd)):
        if folder.is_dir():
            names |= {p.stem for p in list(folder.glob("*.yaml")) + list(folder.glob("*.yml"))}
    return sorted(names)


def project_of(path: Path) -> Path:
    """The project folder: the parent of `.benchtape/` (or of `.ber/`) for a file in its
    evaluations/ folder, else the file's folder."""
    path = path.resolve()
    if path.parent.name == EVALUATIONS_DIR:
        config = path.parent.parent
        if config.name == ".benchtape":
            return config.parent
        if config.name == "bench" and config.parent.name == ".ber":
            return config.parent.parent
    return path.parent


def load_evaluation(name: str, cwd: Path | None = None, *, user: Path | None = None, registry: Registry | None = None) -> Evaluation:
    """Find, load and resolve an evaluation (its benches load lazily, with `tasks()`)."""
    path = find_evaluation(name, cwd)
    project = project_of(path)
    registry = registry if registry is not None else load_registry(project, user)
    ld, doc, _ = load_document(path, ("Evaluation",))
    top = ld.strict(doc, EVALUATION_KEYS, "the Evaluation", extra_hint=TOP_HINTS)
    defaults = defaults_for(project, user)
    attempts = _attempts(ld, top) if "attempts" in top else defaults.attempts or 1  # berbench: falls back to the project's, then the user's `defaults.attempts`
    task_refs = _task_refs(ld, top, project)
    bench_paths = [] if task_refs and top.get("bench") is None else _bench_paths(ld, top, project)
    tools_node = top.get("tools")
    if not isinstance(tools_node, list) or not tools_node:
        raise ld.err("an Evaluation needs a non-empty `tools:` list", top, "tools", "e.g. `tools: [{tool: claude-code, model: sonnet-4.6, effort: medium}]`")
    blocks = [_block(ld, node, i, registry, tools_node) for i, node in enumerate(tools_node)]
    arms: dict[str, Arm] = {}
    for block in blocks:
        for arm in block:
            arms.setdefault(arm.key, arm)
    return Evaluation(
        name=path.stem,
        path=path.resolve(),
        project=project,
        sha256=hashlib.sha256(path.read_bytes()).hexdigest(),
        description=top.get("description"),
        attempts=attempts,
        bench_paths=bench_paths,
        arms=list(arms.values()),
        blocks=blocks,
        registry=registry,
        runs=load_run_settings(ld, top),
        task_refs=task_refs,
        task_line=top.line_of("tasks") if "tasks" in top else None,
        project_environment=_project_environment(ld, top),
        defaults=defaults,
    )


def _project_environment(ld: DocLoader, top: LineDict) -> bool:
    """`project_environment:` (default true): whether the agent of a history task's cell gets
    the project environment its verifier runs in (docs/tasks.md)."""
    value = top.get("project_environment", True)
    if not isinstance(value, bool):
        raise ld.err(f"`project_environment:` must be true or false, got {value!r}", top, "project_environment", "`project_environment: false` runs history tasks' agents without the project's environment (its venv or node_modules); leave it out to give it (the default)")
    return value


def _task_refs(ld: DocLoader, top: LineDict, project: Path) -> list[str]:
    """`tasks:` as written; with neither `tasks:` nor `bench:`, `all` when the project holds
    task folders (.benchtape/tasks/) and no madbench.yaml."""
    if top.get("tasks") is not None:
        value = top["tasks"]
        if isinstance(value, list):  # `tasks: [434, 603]`: YAML reads a PR number as a number
            top["tasks"] = [str(v) if isinstance(v, int) and not isinstance(v, bool) else v for v in value]
        elif isinstance(value, int) and not isinstance(value, bool):
            top["tasks"] = str(value)
        refs = ld.strings(top, "tasks", "`tasks:`")
        if not refs:
            raise ld.err("`tasks:` is empty", top, "tasks", "list task ids, `all`, or paths to Harbor task folders")
        twice = next((r for i, r in enumerate(refs) if r in refs[:i]), None)
        if twice is not None:  # read as one task, silently: a slip for another id, as a repeated model is refused
            raise ld.err(f"`tasks:` lists {twice!r} twice", top, "tasks", "list each task once (attempts: repeats every task)")
        return refs
    if top.get("bench") is None:
        from benchtape.spec.task import task_dirs

        try:
            discover(project)
        except BadInput:
            return ["all"] if task_dirs(project) else []
    return []


def _unique(tasks: list[Task], evaluation: Path) -> list[Task]:
    seen: dict[str, Task] = {}
    for task in tasks:
        if task.id in seen:
            first = seen[task.id]
            raise BadInput(f"task id {task.id!r} names two tasks ({_where(first)} and {_where(task)}); a task id must be unique", file=str(evaluation), fix="rename one (a task folder's id is its name), or split the evaluation")
        seen[task.id] = task
    return list(seen.values())


def _where(task: Task) -> str:
    return str(task.spec.dir) if task.spec is not None else str(task.bench.path)


def _attempts(ld: DocLoader, top: LineDict) -> int:
    value = top.get("attempts", 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ld.err(f"`attempts:` must be a whole number of at least 1, got {value!r}", top, "attempts", "e.g. `attempts: 3`")
    if value > MAX_ATTEMPTS:
        # `attempts: 1000000000` planned 8e9 cells in memory: `run --dry-run` took 3.8 GB in 25 s
        raise ld.err(f"`attempts: {value:,}` is more than the {MAX_ATTEMPTS:,} a task may have: every attempt is a cell planned (and run)", top, "attempts", "a few attempts per task measure a setup; add tasks for more power (`benchtape run NAME --dry-run` plans it)")
    return value


def _bench_paths(ld: DocLoader, top: LineDict, project: Path) -> list[Path]:
    if top.get("bench") is None:
        try:
            return [discover(project)]
        except BadInput:
            raise ld.err(f"no `bench:` and no madbench.yaml in the project folder {project}", top, None, "name the bench file(s) whose scenarios are the tasks: `bench: path/to/madbench.yaml` (relative to the project folder)") from None
    out: list[Path] = []
    for rel in ld.strings(top, "bench", "`bench:`"):
        path = Path(rel) if Path(rel).is_absolute() else project / rel
        if not path.exists():
            raise ld.err(f"`bench:` {rel} does not exist (resolved against the project folder: {path})", top, "bench", "paths are relative to the project folder (the one holding .benchtape/)")
        if path.is_file() and is_eval_document(load_yaml_file(path)):
            raise ld.err(f"`bench:` {rel} is an Eval file (bench + runs), not a bench", top, "bench", "name the bench file that Eval runs")
        if path.resolve() in out:
            raise ld.err(f"`bench:` lists {rel} twice", top, "bench")
        out.append(path.resolve())
    return out


def load_tasks(bench_paths: list[Path], evaluation: Path) -> list[Task]:
    tasks: list[Task] = []
    seen: dict[str, Path] = {}
    for path in bench_paths:
        bench = load_bench(path)
        for sc in bench.scenarios:
            if sc.name in seen:
                raise BadInput(
                    f"task {sc.name!r} is a scenario of two benches ({seen[sc.name]} and {path}); a task id must be unique",
                    file=str(evaluation),
                    fix="rename one of the scenarios (`name:`), or split the evaluation",
                )
            seen[sc.name] = path
            tasks.append(Task(id=sc.name, bench=bench, scenario=sc))
    return tasks


# ---------------------------------------------------------------- blocks → arms


def _block(ld: DocLoader, node: Any, index: int, reg: Registry, parent: Any) -> list[Arm]:
    what = f"tool block #{index + 1}"
    block = ld.strict(ld.mapping(node, what, parent), BLOCK_KEYS, what, extra_hint=BLOCK_HINTS)
    name = block.get("tool")
    if not isinstance(name, str) or not name.strip():
        raise ld.err(f"{what} has no `tool:`", block, None, f"name one of: {', '.join(reg.names())}")
    target = reg.get(ld.choose(name, reg.names(), "tool", block, "tool", " — or define it in .benchtape/tools/"))
    pre = tuple(ld.strings(block, "pre", "`pre:`"))
    if isinstance(target, WorkflowDef):
        return _workflow_arms(ld, block, target, reg, pre, index + 1)
    if "steps" in block:
        raise ld.err(f"`steps:` is for workflow tools; {name} is a tool", block, "steps", "drop `steps:`, or name a workflow")
    assert target is not None  # choose() refused a name the registry does not hold
    return _tool_arms(ld, block, target, pre, index + 1)


def _versions(ld: DocLoader, block: LineDict, tools: list[ToolDef]) -> list[str]:
    asked = ld.axis(block, "tool_version", "`tool_version`")
    if asked is None:
        defaults = {t.version for t in tools}
        return [defaults.pop()] if len(defaults) == 1 else ["latest"]
    for version in asked:
        for tool in tools:
            problem = tool.version_problem(version)
            if problem:
                near = closest(version, ["latest"])
                fix = "did you mean 'latest'?" if near else problem
                raise ld.err(f"unknown tool_version {version!r} for {tool.name}", block, "tool_version", fix)
    return asked


def _models(ld: DocLoader, node: LineDict, key: str, tool: ToolDef, required: bool) -> list[str] | None:
    models = ld.axis(node, key, "`model`")
    if models is None:
        if required:
            raise ld.err(f"no `model:` for {tool.name}", node, None, f"add `model:` (one of {', '.join(sorted(tool.models))})")
        return None
    # a model may be named by its API id too (`scripted-solver` for `solver`, as `run DIR --model`
    # takes it): the setup is the key's, whichever was written
    by_id = {m.id: name for name, m in tool.models.items()}
    chosen = [ld.choose(m if m in tool.models else by_id.get(m, m), sorted(tool.models), "model", node, key, of=f"for {tool.name}") for m in models]
    for name in chosen:
        if chosen.count(name) > 1:
            raise ld.err(f"`model` names {name!r} twice (as {' and '.join(repr(m) for m, c in zip(models, chosen) if c == name)})", node, key, "list each model once: a repeated one would measure the same setup twice")
    return chosen


def _efforts(ld: DocLoader, node: LineDict, tools: list[ToolDef]) -> list[str] | None:
    efforts = ld.axis(node, "effort", "`effort`")
    if efforts is None:
        return None
    valid = sorted({e for t in tools for m in t.models.values() for e in m.efforts})
    return [ld.choose(e, valid, "effort", node, "effort") for e in efforts]


def _check_effort(ld: DocLoader, tool: ToolDef, model: str, effort: str | None, node: LineDict, key: str, step: str | None = None) -> None:
    accepted = tool.models[model].efforts
    if effort is None or effort in accepted:
        return
    where = f"step {step!r}: " if step else ""
    raise ld.err(
        f"{where}model {model} does not accept effort {effort!r}",
        node,
        key,
        f"{model} accepts {', '.join(accepted) or 'no effort'}; every model in a block must accept every listed effort — split the block",
    )


def _option_axes(ld: DocLoader, node: LineDict, tool: ToolDef, what: str) -> list[tuple[str, list[str]]]:
    options = ld.mapping(node.get("options"), f"{what} `options:`", node, "options")
    axes = []
    for name in options:
        known = ld.choose(str(name), sorted(tool.options), "option", options, name, of=f"of {tool.name}")
        values = ld.axis(options, name, f"option {known!r}") or []
        axes.append((known, [ld.choose(v, list(tool.options[known].values), "value", options, name, of=f"for option {known!r}") for v in values]))
    return axes


def _tool_arms(ld: DocLoader, block: LineDict, tool: ToolDef, pre: tuple[str, ...], number: int) -> list[Arm]:
    versions = _versions(ld, block, [tool])
    models = _models(ld, block, "model", tool, required=True) or []
    efforts: list[str | None] = [*(_efforts(ld, block, [tool]) or [])] or [None]
    option_axes = _option_axes(ld, block, tool, "the block's")
    arms = []
    for version, model, effort in itertools.product(versions, models, efforts):
        for chosen in itertools.product(*[values for _, values in option_axes]):  # the options vary fastest, as in one product
            _check_effort(ld, tool, model, effort, block, "effort")
            options = tool.option_values({name: value for (name, _), value in zip(option_axes, chosen)})
            step = Step(MAIN_STEP, tool.name, tool.harness, version, model, tool.models[model].id, effort, tuple(options.items()), tool.effects(options), shown=tuple(n for n, _ in option_axes), protected_paths=tool.protected_paths, state_paths=tool.state_paths)
            arms.append(Arm(tool.name, False, (step,), pre, number))
    return arms


def _workflow_arms(ld: DocLoader, block: LineDict, wf: WorkflowDef, reg: Registry, pre: tuple[str, ...], number: int) -> list[Arm]:
    if "options" in block:
        raise ld.err(f"options of workflow {wf.name} are set per step", block, "options", "write them under `steps: {STEP: {options: {...}}}`")
    step_tools = [reg.tools[s.tool] for s in wf.steps]
    versions = _versions(ld, block, step_tools)
    overrides = ld.mapping(block.get("steps"), "`steps:`", block, "steps")
    names = [s.name for s in wf.steps]
    per_step: dict[str, LineDict] = {}
    for name, node in overrides.items():
        known = ld.choose(str(name), names, "step", overrides, name, of=f"of workflow {wf.name}")
        per_step[known] = ld.strict(ld.mapping(node, f"step {known!r}", overrides, name), STEP_OVERRIDE_KEYS, f"`steps.{known}`", extra_hint={"tool": "a step's tool is fixed by the workflow", "prompt": "a step's prompt is part of the workflow definition"})

    # Every axis, in a fixed order: block model, block effort, then per step model, effort, options.
    axes: list[tuple[str, list[Any]]] = [("version", versions)]
    block_models = ld.axis(block, "model", "`model`")
    axes.append(("block.model", block_models or [None]))
    axes.append(("block.effort", _efforts(ld, block, step_tools) or [None]))
    for step in wf.steps:
        tool = reg.tools[step.tool]
        node = per_step.get(step.name)
        if node is None:
            continue
        axes.append((f"{step.name}.model", _models(ld, node, "model", tool, required=False) or [None]))
        axes.append((f"{step.name}.effort", _efforts(ld, node, [tool]) or [None]))
        for opt, values in _option_axes(ld, node, tool, f"step {step.name!r}"):
            axes.append((f"{step.name}.options.{opt}", values))

    arms = []
    labels = [label for label, _ in axes]
    for combo in itertools.product(*[values for _, values in axes]):
        chosen = dict(zip(labels, combo))
        steps = tuple(_resolve_step(ld, block, per_step, wf, reg, step, chosen) for step in wf.steps)
        arms.append(Arm(wf.name, True, steps, pre, number))
    return arms


def _resolve_step(ld: DocLoader, block: LineDict, per_step: dict[str, LineDict], wf: WorkflowDef, reg: Registry, step: Any, chosen: dict[str, Any]) -> Step:
    """Weakest to strongest: the block's value → the workflow's step definition → the evaluation's `steps.<name>`."""
    tool = reg.tools[step.tool]
    node = per_step.get(step.name)
    model = chosen.get(f"{step.name}.model") or step.model or chosen["block.model"]
    if model is None:
        raise ld.err(f"step {step.name!r} of workflow {wf.name} has no model", block, "steps" if "steps" in block else "tool", f"give one: `model:` in the block, or `steps: {{{step.name}: {{model: ...}}}}`")
    if model not in tool.models:  # only a block-level value can be unchecked here (it may suit another step's tool)
        ld.choose(model, sorted(tool.models), "model", block, "model", of=f"for step {step.name!r} ({tool.name})")
    effort = chosen.get(f"{step.name}.effort") or step.effort or chosen["block.effort"]
    effort_at = (node, "effort") if node is not None and "effort" in node else (block, "effort")
    _check_effort(ld, tool, model, effort, effort_at[0], effort_at[1], step.name)
    options = dict(step.options)
    prefix = f"{step.name}.options."
    options.update({k[len(prefix):]: v for k, v in chosen.items() if k.startswith(prefix)})
    resolved = tool.option_values(options)
    version = chosen["version"]
    shown = tuple(sorted(options))
    return Step(step.name, tool.name, tool.harness, version, model, tool.models[model].id, effort, tuple(resolved.items()), tool.effects(resolved), step.prompt, step.timeout, shown, tool.protected_paths, tool.state_paths)
