"""An evaluation's cells, resolved far enough to know each one's identity before anything runs.

A cell's identity names the versions its tools resolved to, its task's content (with the
image digest when containerised and the commit a repository's ref names today), its
sandbox and network policy, and what its `pre` commands do to the workspace. So planning:
1. resolves every step's tool version (benchtape.recorder.toolversions; nothing is installed here);
2. resolves each task's image digest and repository commit;
3. runs each arm's `pre` commands once per task in a scratch sandbox to capture their
   effects (no agent, no spend; only arms that have `pre` commands);
4. computes each cell's identity.
What cannot be resolved for a task (the engine is down, staging failed) becomes the task's
`Problem`: its cells are recorded as attempts that never started (infrastructure_error).

Staging is shared with recording: a task's seed tree is staged once per invocation, with what
a history task's agent gets of its project's environment (`agent_environment`).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

from benchtape.core.errors import BenchtapeError
from benchtape.core.launch_plan import LaunchPlan
from benchtape.envs.agent_env import AgentEnv
from benchtape.recorder.toolversions import Resolved, VersionResolver
from benchtape.sandbox.box_commands import capture_pre
from benchtape.sandbox.by_level import sandbox_for
from benchtape.spec.evaluation import Arm, Cell, Evaluation, Step, Task
from benchtape.spec.identity import CellIdentity, PreEffects, SandboxPolicy, cell_identity, sandbox_policy, setup_inputs, step_config, task_hash
from benchtape.spec.task_cells import hidden_from_agent

Event = Callable[[str, dict[str, Any]], None]
DEFAULT_SETUP_TIMEOUT = 300.0


@dataclass(frozen=True)
class Problem:
    """Why a cell cannot start, and whose fault it is (an `error` action's `cause`)."""

    cause: str  # staging | engine | sandbox
    message: str


@dataclass
class CellPlan:
    cell: Cell
    level: str
    task_digest: str
    resolved: tuple[Resolved, ...]  # per step
    identity: CellIdentity
    pre: PreEffects | None = None
    problem: Problem | None = None

    @property
    def versions(self) -> dict[str, str]:
        return versions_of(self.cell.arm, self.resolved)


def versions_of(arm: Arm, resolved: tuple[Resolved, ...]) -> dict[str, str]:
    """Tool name → resolved version, for the identity (a workflow's steps share one asked version)."""
    return {step.tool: r.version for step, r in zip(arm.steps, resolved)}


def harness_config(step: Step, task: Task, resolved: Resolved) -> dict[str, Any]:
    """What the step's harness is given: the arm's config, with the resolved binary to run."""
    config = step_config(step, task.bench)
    if resolved.binary is not None and step.harness != "mock":
        config["binary"] = str(resolved.binary)
    return config


# ---------------------------------------------------------------- staging, once per task


class Staging:
    """Each task's seed tree, staged on first use and kept for the invocation; a failure is
    remembered as the task's problem."""

    def __init__(self, on_event: Event | None = None, level: str | None = None):
        self.on_event = on_event or (lambda kind, data: None)
        self.level = level  # a --sandbox override (a Harbor task's starting tree depends on the level)
        self._lock = threading.Lock()
        self._locks: dict[str, threading.Lock] = {}
        self._seeds: dict[str, Any] = {}
        self._problems: dict[str, Problem] = {}
        self._envs: dict[str, AgentEnv] = {}  # a history task's project environment, as its agents get it

    def seed(self, task: Task) -> tuple[Path | None, Problem | None]:
        from benchtape.sandbox.staging import stage_seeds

        with self._lock:
            lock = self._locks.setdefault(task.id, threading.Lock())
        with lock:
            if task.id not in self._seeds and task.id not in self._problems:
                try:
                    if task.spec is not None:
                        self._seeds[task.id], found = starting_tree(task, self.level)
                        if found is not None:
                            self._envs[task.id] = found
                    else:
                        self._seeds[task.id] = stage_seeds(task.bench, [task.scenario], on_event=self.on_event)
                except BenchtapeError as exc:
                    self._problems[task.id] = Problem("staging", exc.render())
                except OSError as exc:
                    self._problems[task.id] = Problem("staging", f"staging failed: {exc}")
        if task.id in self._problems:
            return None, self._problems[task.id]
        return self._seeds[task.id].get(task.scenario.name), None

    def environment(self, task: Task) -> AgentEnv | None:
        """What a history task's agent gets of its project's environment (known once the task is
        staged; None for any other task)."""
        return self._envs.get(task.id)

    def scenario(self, task: Task) -> Any:
        """The task's scenario as its session sends it (its `generated:` pictures resolved), once staged."""
        seeds = self._seeds.get(task.id)
        return seeds.scenario(task.scenario) if seeds is not None else task.scenario

    def ready(self, task: Task) -> bool:
        """Whether the task is staged already (`seed` then returns at once): its seeds are set
        once staging finished."""
        return task.id in self._seeds or task.id in self._problems

    def vars(self, task: Task) -> dict[str, Any]:
        """The `generate:` values of the task's staging (the checks' answer key)."""
        seeds = self._seeds.get(task.id)
        return seeds.vars(task.scenario.name) if seeds is not None else {}

    def generated(self) -> dict[str, dict[str, Any]]:
        """Task id → its `generate:` values, for the run's record (re-grading needs them)."""
        return {tid: seeds.vars(tid) for tid, seeds in self._seeds.items() if seeds.vars(tid)}

    def cleanup(self) -> None:
        for seeds in self._seeds.values():
            seeds.cleanup()


def starting_tree(task: Task, level: str | None) -> tuple[Any, AgentEnv | None]:
    """THE starting tree of a task folder's cell (what its sandbox is seeded from), as staged
    seeds: a history task's tree at base_commit as a fresh one-commit repository (nothing of
    the history, no hidden tests, no reference patch, no remote: sandbox/task_workspace.py),
    a Harbor task's environment working directory (sandbox/harbor_env.py: empty at level home,
    the image's at level container). With a history task's seeds, what its agent gets of the
    project's environment (`agent_environment`: what its build generated is in the one commit)."""
    import tempfile

    from benchtape.sandbox.staging import Seeds

    assert task.spec is not None
    temp = Path(tempfile.mkdtemp(prefix=f"benchtape-task-{task.id}-"))
    seeds = Seeds(temps=[temp])
    found: list[AgentEnv] = []
    try:
        if task.spec.runtime is None:
            from benchtape.sandbox.task_workspace import fresh_workspace

            assert task.project is not None
            at = sandbox_policy(task.scenario, level).level

            def environment(tree: Path) -> None:
                agent = agent_environment(task, at, tree)
                found.append(agent)
                try:
                    agent.workspace_files(tree)
                except OSError as exc:  # the agent runs without them, as the verifier's tree never does: said
                    agent.notes.append(f"what the build generated could not be written into the workspace: {exc}")

            seeds.trees[task.id] = fresh_workspace(task.project, task.spec.source.base_commit, temp / "workspace", add=environment)
        else:
            from benchtape.sandbox.harbor_env import prepare, starting_workspace

            policy = sandbox_policy(task.scenario, level)
            seeds.trees[task.id] = starting_workspace(prepare(task.spec, policy.level), temp / "workspace")
    except Exception as exc:
        seeds.cleanup()
        if isinstance(exc, (BenchtapeError, OSError)):
            raise
        raise BenchtapeError(f"the task's starting workspace could not be made: {exc}") from exc
    return seeds, (found[0] if found else None)


def agent_environment(task: Task, level: str, tree: Path) -> AgentEnv:
    """What a history task's agent gets at `level` of its project's environment (envs/agent_env.py):
    the one its verifier runs in there, through the `project_environment` call validation and
    grading make (so the cached one; built from `tree`, the exported base tree, when it is not
    cached yet). Never raises: what cannot be given is said, and the cell runs without it."""
    if not task.project_environment:
        return AgentEnv.withheld(level, "`project_environment: false` in the evaluation: the agent runs without the project's environment")
    if level == "none":
        return AgentEnv.withheld(level, "level none runs the agent in your own folder: nothing is laid out for it")
    from benchtape.envs.project_env import project_environment
    from benchtape.sandbox.baseimage import image_python
    from benchtape.sandbox.pidfence import fence
    from benchtape.spec.project import load_project

    assert task.spec is not None and task.project is not None
    try:
        project = load_project(task.project)
        container_python = image_python() if level == "container" else None
        env = project_environment(project, task.spec.source.base_commit, tree, "container" if level == "container" else "home", container_python=container_python, fix_commit=task.spec.source.fix_commit)
        if level == "container":
            protection = "mounted read-only in the agent's container"
        elif fence().read_only_works:
            protection = "bound read-only in the agent's own mount namespace"
        else:
            protection = f"not read-only here ({fence().why or 'no mount namespace of its own'}): a venv's digest is checked after the agent, and a changed one discarded"
        agent = AgentEnv.of(env, level, protection)
        agent.plan()  # what a container mounts is found now (a host program `env.tools` names, say)
    except Exception as exc:  # noqa: BLE001 - a build that failed, a tool not on this host: the cell runs without it, saying why
        return AgentEnv.withheld(level, f"the project's environment could not be given to the agent: {type(exc).__name__}: {exc}")
    if not agent.given and level == "container" and (project.dockerfile is not None or project.wheelhouse() is not None):
        agent.why = f"{agent.why}; the agent's container is benchtape's base image, without it"
    return agent


# ---------------------------------------------------------------- the plan


@dataclass
class _TaskFacts:
    digest: str
    level: str
    policy: SandboxPolicy
    problem: Problem | None = None


@dataclass
class Matrix:
    """The planning of one invocation: resolver, staging and per-task facts, shared with recording."""

    ev: Evaluation
    tasks: list[Task]
    resolver: VersionResolver
    staging: Staging
    level: str | None = None  # a --sandbox override
    on_event: Event = field(default=lambda kind, data: None)
    _facts: dict[str, _TaskFacts] = field(default_factory=dict)
    _pre: dict[tuple[Any, ...], PreEffects] = field(default_factory=dict)
    _setups: dict[tuple[Any, ...], dict[str, Any]] = field(default_factory=dict)

    def resolve_versions(self) -> list[Resolved]:
        """Every step's tool version (npm is asked about `latest` once per tool)."""
        out: list[Resolved] = []
        for arm in self.ev.arms:
            for task in self._bench_tasks():
                out.extend(self.resolved(arm, task))
        return list(dict.fromkeys(out))

    def resolved(self, arm: Arm, task: Task) -> tuple[Resolved, ...]:
        out = []
        for step in arm.steps:
            bench_binary = step_config(step, task.bench).get("binary")
            out.append(self.resolver.resolve(step.harness, step.tool_version, str(bench_binary) if bench_binary else None))
        return tuple(out)

    def _bench_tasks(self) -> list[Task]:
        """One task per bench: resolution depends on the bench's config, not the scenario."""
        return list({t.bench.path: t for t in self.tasks}.values())

    def plan(self, *, capture: bool = True) -> list[CellPlan]:
        """Every cell of the selected tasks with its identity. `capture=False` skips running
        `pre` commands (their cells are then planned as not reusable: a run captures them)."""
        plans = []
        for cell in self.ev.cells(self.tasks):
            facts = self.task_facts(cell.task)
            resolved = self.resolved(cell.arm, cell.task)
            pre = None
            problem = facts.problem
            if cell.arm.all_pre():
                pre, pre_problem = self.pre_effects(cell.arm, cell.task, facts) if capture and problem is None else (PreEffects.not_capturable(problem.message if problem else "setup commands not run in this preview"), None)
                problem = problem or pre_problem
            versions = versions_of(cell.arm, resolved)
            identity = cell_identity(cell, versions=versions, task_digest=facts.digest, sandbox=facts.policy, pre=pre, setup=self._setup(cell, versions))
            plans.append(CellPlan(cell, facts.level, facts.digest, resolved, identity, pre, problem))
        return plans

    def identity(self, plan: CellPlan, pre: PreEffects | None) -> CellIdentity:
        """The identity of a planned cell with the effects its `pre` commands had when it ran."""
        facts = self.task_facts(plan.cell.task)
        return cell_identity(plan.cell, versions=plan.versions, task_digest=facts.digest, sandbox=facts.policy, pre=pre, setup=self._setup(plan.cell, plan.versions))

    def _setup(self, cell: Cell, versions: dict[str, str]) -> dict[str, Any]:
        """The setup half of the identity, once per arm, bench and versions (not per cell)."""
        key = (cell.arm.key, str(cell.task.bench.path), tuple(sorted(versions.items())))
        if key not in self._setups:
            self._setups[key] = setup_inputs(cell.arm, cell.task.bench, versions)
        return self._setups[key]

    # ------------------------------------------------------------ per task
    def task_facts(self, task: Task) -> _TaskFacts:
        if task.id not in self._facts:
            self._facts[task.id] = self._task_facts(task)
        return self._facts[task.id]

    def _task_facts(self, task: Task) -> _TaskFacts:
        sc = task.scenario
        policy = sandbox_policy(sc, self.level)
        image_digest = commit = None
        problem = None
        if policy.level == "container":
            try:
                image_digest = image_digest_of(sc)
            except Exception as exc:  # noqa: BLE001 - no engine, an image that will not build: the cells cannot start
                problem = Problem("engine", f"the task's image could not be resolved: {exc}")
        if sc.repo is not None:
            from benchtape.sandbox.checkout import CheckoutFailed, resolve_commit

            try:
                commit = resolve_commit(sc.repo, timeout=sc.staging_timeout or DEFAULT_SETUP_TIMEOUT)
            except CheckoutFailed as exc:
                problem = problem or Problem("staging", f"repo: {exc}")
        digest = task_hash(task, image_digest=image_digest, repo_commit=commit)
        return _TaskFacts(digest, policy.level, policy, problem)

    # ------------------------------------------------------------ pre commands
    def pre_effects(self, arm: Arm, task: Task, facts: _TaskFacts) -> tuple[PreEffects, Problem | None]:
        """What the arm's setup commands do to the task's staged tree, run once in a scratch
        sandbox of the task's level (shared by every attempt of the arm)."""
        env = dict(arm.steps[0].effects.env)
        key = (arm.all_pre(), tuple(sorted(env.items())), task.id, facts.level)
        if key not in self._pre:
            seed, problem = self.staging.seed(task)
            if problem is not None:
                return PreEffects.not_capturable(problem.message), problem
            try:
                with sandbox_for(facts.level).open(task.scenario, seed, self.launch_plan(arm, task, facts.level)) as box:
                    effects, _ = capture_pre(box, arm.all_pre(), env, task.scenario.staging_timeout or DEFAULT_SETUP_TIMEOUT)
            except Exception as exc:  # noqa: BLE001 - the sandbox would not open: the run records it
                effects = PreEffects.not_capturable(f"the sandbox could not open to capture the setup commands' effects: {exc}")
            self._pre[key] = effects
        return self._pre[key], None

    def launch_plan(self, arm: Arm, task: Task, level: str) -> LaunchPlan:
        """The launch plan of a cell's sandbox: its arm's, with what a history task's agent gets
        of its project's environment (once the task is staged)."""
        hidden = hidden_from_agent(task) if level in ("workspace", "home") else ()  # a container sees none of the host; level none is your own folder
        plan = arm_plan(arm, level).joined(LaunchPlan(hidden=hidden))
        agent = self.staging.environment(task)
        return plan.joined(agent.plan()) if agent is not None else plan


def arm_plan(arm: Arm, level: str) -> LaunchPlan:
    """The launch plan of the sandbox an arm's steps share: their harnesses' plans joined. Each
    step's session merges its own harness's home JSON (a step may change what an earlier one's
    seeded), so the plan lays none out ahead."""
    from benchtape.adapters.base import launch_plan

    return launch_plan((s.harness for s in arm.steps), level, home_json=False)


def image_digest_of(scenario: Any) -> str:
    """The content id of the image the task's container runs (built or resolved as a run would)."""
    from benchtape.sandbox.container import connect
    from benchtape.sandbox.container_level import resolve_image

    ref = resolve_image(scenario.sandbox)
    return str(connect().images.get(ref).id)
