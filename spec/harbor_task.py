"""A Harbor task folder as a benchtape task: one `TaskSpec`, the type history-mined tasks use.

Harbor (the successor of Terminal-Bench) defines a task as a folder:

    <id>/task.toml            configuration (timeouts, resources, network), arbitrary metadata
    <id>/instruction.md       the prompt                     → TaskSpec.prompt_path
    <id>/environment/Dockerfile  the agent's environment     → TaskSpec.environment (the folder: its build context)
    <id>/tests/test.sh        the verifier; writes /logs/verifier/reward.txt|json → Verify(reward_file=True)
    <id>/solution/solve.sh    the oracle (optional)          → TaskSpec.solution

Every task.toml key is honoured or refused by name (file, line, fix): a key benchtape cannot
enforce is never dropped silently. Harbor itself ignores unknown keys; benchtape refuses them,
so a typo (`timeout_secs`) is caught rather than run with the default. What each key becomes
is in docs/formats.md ("Harbor tasks").

`harbor_task_folders(path)` finds them (each loaded on its own: one bad task is that task's problem), `load_harbor_tasks(path)` loads them all strictly: a task folder, or a folder of them (a dataset
checkout). `load_task_folder(folder)` reads either kind of task folder. A Harbor task's
validation is kept beside it in `.benchtape-validation.json` (task.toml is the author's file and
is never rewritten); its fingerprint is the hash of the whole folder.
"""

from __future__ import annotations

import os
import re
import tomllib
from pathlib import Path
from typing import Any, Callable

import orjson

from benchtape.core.errors import BadInput, closest
from benchtape.spec.task import HARBOR_FILE, TASK_ID, HarborStep, Healthcheck, McpServer, TaskRuntime, TaskSource, TaskSpec, Validation, Verify, load_task
from benchtape.spec.yamlsrc import line_of, load_yaml_file

INSTRUCTION = "instruction.md"
TEST_SCRIPT = "tests/test.sh"
SOLUTION_SCRIPT = "solution/solve.sh"
DOCKERFILE = "environment/Dockerfile"
VALIDATION_FILE = ".benchtape-validation.json"
VERIFY_COMMAND = "bash /tests/test.sh"  # run from the workspace, as Harbor does
DEFAULT_VERIFIER_TIMEOUT = 600.0  # Harbor's default verifier.timeout_sec
DEFAULT_BUILD_TIMEOUT = 600.0

# Every key Harbor's task.toml defines (its task-format docs and TaskConfig, 0.26), by table.
KEYS: dict[str, set[str]] = {
    "": {"schema_version", "version", "source", "task", "metadata", "verifier", "agent", "environment", "solution", "artifacts", "steps", "multi_step_reward_strategy"},
    "task": {"name", "version", "description", "authors", "keywords"},
    "verifier": {"timeout_sec", "env", "user", "environment_mode", "environment", "collect", "network_mode", "allowed_hosts"},
    "agent": {"timeout_sec", "setup_timeout_sec", "user", "network_mode", "allowed_hosts"},
    "environment": {
        "build_timeout_sec", "docker_image", "os", "cpus", "memory_mb", "storage_mb", "gpus", "gpu_types", "tpu", "memory", "storage",
        "network_mode", "allowed_hosts", "allow_internet", "env", "workdir", "healthcheck", "mcp_servers", "skills_dir",
    },
    "solution": {"env"},
    "steps": {"name", "agent", "verifier", "min_reward", "healthcheck", "artifacts"},  # one [[steps]] entry (Harbor's StepConfig)
    "steps.agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "healthcheck": {"command", "interval_sec", "timeout_sec", "start_period_sec", "start_interval_sec", "retries"},  # Harbor's HealthcheckConfig
    "mcp_servers": {"name", "transport", "url", "command", "args", "headers"},  # one [[environment.mcp_servers]] entry (Harbor's MCPServerConfig)
}
MCP_TRANSPORTS = ("stdio", "sse", "streamable-http")  # Harbor's MCPTransport ("http" reads as streamable-http)
MCP_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # the part of a tool's name (mcp__NAME__tool) and of a config key each harness takes as written
STRATEGIES = ("mean", "final")  # multi_step_reward_strategy: per-key mean over the steps verified (Harbor's default), or the last step's
ALLOWLIST = (
    "benchtape's sandboxes have the network on or off and cannot let some hosts through (Harbor enforces an allowlist with an egress proxy "
    "benchtape does not have): use network_mode = \"no-network\" (nothing) or \"public\" (everything), or run the task under Harbor"
)
SCHEMA_MAJOR = "1"  # Harbor 0.25 writes schema_version "1.4" (older tasks: "1.0" … "1.3", or `version`)
# Keys benchtape refuses when they ask for something (a value other than empty / off): why, and the fix.
REFUSED: dict[tuple[str, str], str] = {
    ("verifier", "collect"): "verifier collect commands are not supported: run them at the start of tests/test.sh",
    ("verifier", "allowed_hosts"): ALLOWLIST,
    ("agent", "allowed_hosts"): ALLOWLIST,
    ("environment", "allowed_hosts"): ALLOWLIST,
    ("environment", "tpu"): "benchtape's sandboxes have no TPU: remove `tpu`",
}
NETWORK_MODES = {"public": True, "no-network": False}


def is_harbor_task(folder: Path) -> bool:
    return bool((folder / HARBOR_FILE).is_file())


def load_task_folder(folder: Path) -> TaskSpec:
    """A task folder of either kind: task.toml (Harbor) or task.yaml (mined from history)."""
    return load_harbor_task(folder) if is_harbor_task(folder) else load_task(folder)


def load_harbor_tasks(path: Path) -> list[TaskSpec]:
    """Every Harbor task at `path` (harbor_task_folders), each loaded strictly, sorted by id."""
    return [load_harbor_task(f) for f in harbor_task_folders(path)]


def harbor_task_folders(path: Path) -> list[Path]:
    """The Harbor task folders at `path`: the task folder itself, or each one below it (a
    dataset checkout), sorted by id, none of them read yet, so one bad task.toml among 300 is
    that task's problem (a run skips it, saying why: spec/task_cells.py), not the dataset's.
    BadInput when there is none, or two share an id."""
    path = Path(path).resolve()
    if is_harbor_task(path):
        return [path]
    if not path.is_dir():
        raise BadInput(f"{path} is no folder", fix="name a Harbor task folder (it holds task.toml) or a folder of them")
    folders = sorted({toml.parent for toml in path.rglob(HARBOR_FILE) if not _inside_task(toml.parent, path) and not toml.is_dir()}, key=lambda f: (f.name, str(f)))
    if not folders:
        raise BadInput(f"no Harbor task below {path} (no {HARBOR_FILE})", fix="name a folder holding <task>/task.toml, instruction.md, environment/, tests/test.sh")
    seen: dict[str, Path] = {}
    for folder in folders:
        if folder.name in seen:
            raise BadInput(f"two Harbor tasks are named {folder.name!r}: {seen[folder.name]} and {folder}", fix="rename one folder: a task's id is its folder's name")
        seen[folder.name] = folder
    return folders


def _inside_task(folder: Path, top: Path) -> bool:
    """Whether `folder` is inside another task folder below `top` (a task's own files)."""
    return any(is_harbor_task(p) for p in folder.parents if p != top and top in p.parents)


def load_harbor_task(folder: Path) -> TaskSpec:
    """One Harbor task folder, strictly: every task.toml key honoured or refused (file:line)."""
    folder = Path(folder).resolve()
    for rel in (HARBOR_FILE, INSTRUCTION, "tests", TEST_SCRIPT, "solution", SOLUTION_SCRIPT, "environment", DOCKERFILE, VALIDATION_FILE):
        inside_folder(folder, rel)
    path = folder / HARBOR_FILE
    text = _toml_text(path)
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        m = re.search(r"line (\d+)", str(exc))
        raise BadInput(f"task.toml is not valid TOML: {exc}", file=str(path), line=int(m.group(1)) if m else None, fix="fix the TOML syntax") from None
    except RecursionError:  # tomllib recurses into nested values; _toml_text's bound should have caught it first
        raise BadInput("task.toml nests its values too deep to read", file=str(path), fix="flatten the value: no task.toml key holds more than a few levels") from None
    toml = _Toml(path, text)
    if not TASK_ID.match(folder.name):
        raise BadInput(f"the task folder's name {folder.name!r} is no task id", file=str(path), fix="rename the folder: up to 100 letters, digits, `.`, `_`, `-`, starting with a letter, a digit or `_`")
    toml.strict(doc, "")
    _schema_version(toml, doc)
    tables = {name: toml.table(doc, name) for name in ("task", "verifier", "agent", "environment", "solution")}
    for name, table in tables.items():
        toml.strict(table, name)
    for (section, key), why in REFUSED.items():
        value = doc.get(key) if section == "" else tables[section].get(key)
        if _asks(value):
            raise BadInput(f"`{_dotted(section, key)}` is not supported by benchtape", file=str(path), line=toml.line(section, key), fix=why)
    env_t, verifier_t, agent_t = tables["environment"], tables["verifier"], tables["agent"]
    notes = toml.notes
    _environment_refusals(toml, env_t, verifier_t, notes)
    if agent_t.get("setup_timeout_sec") is not None:
        notes.append("agent.setup_timeout_sec is not used (benchtape installs no agent inside the environment)")
    network = _network(toml, env_t, "environment", default=True)
    venv_t = verifier_t.get("environment") if isinstance(verifier_t.get("environment"), dict) else {}
    verify_network = _network(toml, verifier_t, "verifier", default=_network(toml, venv_t, "verifier.environment", default=network) if venv_t else network)
    agent_network = _network(toml, agent_t, "agent", default=network)
    image = toml.string(env_t, "environment", "docker_image")
    environment = folder / "environment"
    _refuse_compose(folder)
    if image is None and not (folder / DOCKERFILE).is_file():
        raise BadInput(
            f"{DOCKERFILE} is missing",
            file=str(folder / DOCKERFILE),
            fix="write environment/Dockerfile (FROM a local image, e.g. benchtape's base image), or set [environment] docker_image to a local image",
        )
    verify_timeout = toml.seconds(verifier_t, "verifier", "timeout_sec", DEFAULT_VERIFIER_TIMEOUT) or DEFAULT_VERIFIER_TIMEOUT
    separate = _separate_verifier(toml, folder, verifier_t, notes)
    steps = _steps(toml, doc, folder, tables, separate, verify_network, verify_timeout, notes)
    strategy = _strategy(toml, doc, bool(steps), notes)
    if steps:  # the task's own instruction.md, tests/test.sh and solution/ are the steps' (a step may fall back on the last two)
        instruction = steps[0].prompt_path
        tests = steps[0].tests_dirs[-1] / "test.sh"
        solution = steps[0].solution if all(st.solution is not None for st in steps) else None
    else:
        instruction = _required_file(folder, INSTRUCTION, "the prompt the agent is given")
        tests = _required_file(folder, TEST_SCRIPT, "the verifier: it writes /logs/verifier/reward.txt (or reward.json)")
        solution = folder / SOLUTION_SCRIPT
    healthcheck = _healthcheck(toml, env_t.get("healthcheck"), "environment")  # before the notes are taken: an ignored key is one
    mcp_servers = _mcp_servers(toml, env_t.get("mcp_servers"))
    runtime = TaskRuntime(
        tests_dir=tests.parent,
        workdir=_workdir(toml, env_t),
        image=image,
        agent_timeout=toml.seconds(agent_t, "agent", "timeout_sec", None),
        build_timeout=toml.seconds(env_t, "environment", "build_timeout_sec", DEFAULT_BUILD_TIMEOUT) or DEFAULT_BUILD_TIMEOUT,
        network=agent_network,
        network_from=_network_from(toml, agent_t, env_t) if agent_network else "",
        cpus=_cpus(toml, env_t),
        memory_mb=_memory_mb(toml, env_t),
        env=toml.env(env_t, "environment"),
        verifier_env=toml.env(verifier_t, "verifier"),
        solution_env=toml.env(tables["solution"], "solution"),
        agent_user=_user(toml, agent_t, "agent", notes),
        verifier_user=_user(toml, verifier_t, "verifier", notes),
        notes=tuple(notes),
        artifacts=_artifacts(toml, doc),
        steps=steps,
        reward_strategy=strategy,
        healthcheck=healthcheck,
        skills_dir=toml.string(env_t, "environment", "skills_dir"),
        mcp_servers=mcp_servers,
        **separate,
    )
    verify = Verify(command=VERIFY_COMMAND, network=verify_network, timeout=verify_timeout, reward_file=True)
    description = tables["task"].get("description")
    return TaskSpec(
        id=folder.name,
        dir=folder,
        path=path,
        source=TaskSource(remote=None, pull_request=None, base_commit="", fix_commit=None),
        prompt_path=instruction,
        verify=verify,
        reference_patch=None,
        validation=read_validation(folder),
        description=str(description) if isinstance(description, str) else None,
        solution=solution if solution is not None and solution.is_file() else None,
        environment=environment if environment.is_dir() else None,
        runtime=runtime,
    )


_STEP_NAME_BAD = re.compile(r'[<>:"/\\|?*\x00-\x1f\x7f]')


def _steps(toml: _Toml, doc: dict[str, Any], folder: Path, tables: dict[str, dict[str, Any]], separate: dict[str, Any], verify_network: bool, verify_timeout: float, notes: list[str]) -> tuple[HarborStep, ...]:
    """`[[steps]]`: each step's folder (steps/<name>/: instruction.md, tests/, solution/,
    workdir/), its verifier (the step's tests over the task's; separate when the step or the task
    says so, its environment resolved as Harbor does: the step's, then the task's), its limits
    and its `min_reward`. What a step asks that benchtape cannot honour is refused by its line."""
    value = doc.get("steps")
    if value is None or value == []:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, dict) for v in value):
        raise BadInput("`steps` must be an array of tables ([[steps]])", file=str(toml.path), line=toml.line("", "steps"), fix='write each step as [[steps]] with name = "…"')
    out: list[HarborStep] = []
    seen: dict[str, str] = {}
    task_artifacts = _artifacts(toml, doc)
    task_agent_timeout = toml.seconds(tables["agent"], "agent", "timeout_sec", None)
    task_agent_network = _network(toml, tables["agent"], "agent", default=_network(toml, tables["environment"], "environment", default=True))
    for index, table in enumerate(value):
        view = toml.step(index)
        view.strict(table, "steps")
        name = table.get("name")
        if not isinstance(name, str) or not name.strip() or name in (".", "..") or name.endswith((".", " ")) or _STEP_NAME_BAD.search(name) or len(name.encode("utf-8")) > 255:
            raise BadInput(f"step {index + 1}'s name {name!r} is no portable folder name", file=str(toml.path), line=view.line("", "name"), fix='name each step as the folder under steps/ that holds it, e.g. name = "step-1"')
        key = name.casefold()
        if key in seen:
            raise BadInput(f"two steps are named {name!r}", file=str(toml.path), line=view.line("", "name"), fix="give each step a name of its own (its folder under steps/)")
        seen[key] = name
        out.append(_step(view, table, folder, name, tables, separate, verify_network, verify_timeout, task_artifacts, (task_agent_timeout, task_agent_network), notes))
    return tuple(out)


def _step(view: _Toml, table: dict[str, Any], folder: Path, name: str, tables: dict[str, dict[str, Any]], separate: dict[str, Any], verify_network: bool, verify_timeout: float, task_artifacts: tuple[str, ...], task_agent: tuple[float | None, bool], notes: list[str]) -> HarborStep:
    rel = f"steps/{name}"
    for sub in ("", "/instruction.md", "/tests", "/tests/test.sh", "/solution", "/solution/solve.sh", "/workdir"):
        inside_folder(folder, rel + sub)
    step_dir = folder / rel
    if not step_dir.is_dir():
        raise BadInput(f"step {name!r} has no folder {rel}/", file=str(view.path), line=view.line("", "name"), fix=f"make {rel}/ holding instruction.md (and tests/test.sh, solution/solve.sh), or rename the step to its folder")
    prompt = _required_file(folder, f"{rel}/instruction.md", f"step {name!r}'s instruction")
    agent_t, verifier_t = view.table(table, "agent"), view.table(table, "verifier")
    view.strict(agent_t, "steps.agent")
    view.strict(verifier_t, "verifier")
    task_agent_timeout, task_agent_network = task_agent
    for key, why in (
        ("user", "benchtape runs every step's agent as the task's [agent] user: set `user` there, for the whole task"),
        ("network_mode", "benchtape opens the agent's sandbox once for every step, with the task's network: set [agent] network_mode for the whole task"),
        ("allowed_hosts", ALLOWLIST),
    ):
        if key == "network_mode" and agent_t.get(key) is not None and _network(view, agent_t, "agent", default=task_agent_network) == task_agent_network:
            continue  # the task's own network, said again: honoured
        if key == "user":
            if not _same_user(agent_t.get("user"), tables["agent"].get("user")):
                raise BadInput(f"step {name!r}: `agent.user` is not supported by benchtape", file=str(view.path), line=view.line("agent", key), fix=why)
            continue  # the task's own user, said again (or none): honoured
        if _asks(agent_t.get(key)):
            raise BadInput(f"step {name!r}: `agent.{key}` is not supported by benchtape", file=str(view.path), line=view.line("agent", key), fix=why)
    step_verifier_fixes = {"user": "benchtape runs every step's verifier as the task's [verifier] user: set `user` there, for the whole task"}
    for key in ("user", "collect", "allowed_hosts"):
        if key == "user" and _same_user(verifier_t.get("user"), tables["verifier"].get("user")):
            continue  # the task's own verifier user, said again (or none): honoured
        if key == "user" or _asks(verifier_t.get(key)):
            raise BadInput(f"step {name!r}: `verifier.{key}` is not supported by benchtape", file=str(view.path), line=view.line("verifier", key), fix=step_verifier_fixes.get(key) or REFUSED[("verifier", key)])
    own_tests = step_dir / "tests"
    vmode = verifier_t.get("environment_mode")
    if vmode not in (None, "shared", "separate"):
        raise BadInput(f"step {name!r}: `verifier.environment_mode = {vmode!r}` is no mode Harbor defines", file=str(view.path), line=view.line("verifier", "environment_mode"), fix='write "shared" or "separate"')
    venv = verifier_t.get("environment")
    if venv is not None and not isinstance(venv, dict):
        raise BadInput(f"step {name!r}: `verifier.environment` must be a table", file=str(view.path), line=view.line("verifier", "environment"))
    mode = vmode or ("separate" if venv is not None else ("separate" if separate.get("verifier_separate") else "shared"))
    tests_dirs = tuple(d for d in (folder / "tests", own_tests) if d.is_dir())
    fields: dict[str, Any] = {}
    if mode == "separate":
        fields = _step_separate(view, folder, name, venv or {}, tables["verifier"], notes)
        bundled = fields.pop("bundled", None)
        if bundled is not None:  # the verifier's image holds its tests (the Dockerfile's folder), as Harbor uploads none then
            tests_dirs = (bundled,)
    if not any((d / "test.sh").is_file() for d in tests_dirs):
        raise BadInput(f"step {name!r} has no verifier: neither {rel}/tests/test.sh nor tests/test.sh", file=str(folder / rel / "tests" / "test.sh"), fix=f"write {rel}/tests/test.sh: it writes /logs/verifier/reward.txt (or reward.json)")
    solution = step_dir / "solution" / "solve.sh" if (step_dir / "solution").is_dir() else folder / SOLUTION_SCRIPT
    min_reward = _min_reward(view, table.get("min_reward"), name)
    workdir = step_dir / "workdir"
    network = _network(view, verifier_t, "verifier", default=verify_network)
    return HarborStep(
        name=name,
        prompt_path=prompt,
        tests_dirs=tests_dirs,
        solution=solution if solution.is_file() else None,
        workdir=workdir if workdir.is_dir() else None,
        agent_timeout=view.seconds(agent_t, "agent", "timeout_sec", None) or task_agent_timeout,
        verifier_timeout=view.seconds(verifier_t, "verifier", "timeout_sec", None) or verify_timeout,
        verifier_env=view.env(verifier_t, "verifier"),
        min_reward=min_reward,
        verifier_network=network,
        artifacts=tuple(dict.fromkeys((*task_artifacts, *_artifacts(view, table)))),
        healthcheck=_healthcheck(view, table.get("healthcheck"), "", step=name),
        **({"verifier_separate": True, **fields} if mode == "separate" else {}),
    )


def _step_separate(view: _Toml, folder: Path, name: str, venv: dict[str, Any], task_verifier: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """A step's separate verifier environment, resolved as Harbor resolves it: an image named by
    the step's `[verifier.environment]`, else steps/<name>/tests/Dockerfile, else the task's
    image or tests/Dockerfile, else a fresh copy of the task's own environment."""
    view.strict(venv, "environment")
    if _asks(venv.get("allowed_hosts")) or venv.get("network_mode") == "allowlist":
        raise BadInput(f"step {name!r}: `verifier.environment` asks for a host allowlist", file=str(view.path), line=view.line("verifier.environment", "allowed_hosts") or view.line("verifier.environment", "network_mode"), fix=ALLOWLIST)
    if venv.get("os", "linux") != "linux":
        raise BadInput(f"step {name!r}: `verifier.environment.os`: benchtape's sandboxes are Linux", file=str(view.path), line=view.line("verifier.environment", "os"), fix='remove `os`, or set os = "linux"')
    task_venv: dict[str, Any] = task_verifier["environment"] if isinstance(task_verifier.get("environment"), dict) else {}
    workdir = view.string(venv, "verifier.environment", "workdir") or (task_venv.get("workdir") if isinstance(task_venv.get("workdir"), str) else None)
    for env_t, tests in ((venv, folder / "steps" / name / "tests"), (task_venv, folder / "tests")):
        image = env_t.get("docker_image")
        if isinstance(image, str) and image.strip():
            return {"verifier_image": image, "verifier_workdir": workdir, "bundled": tests if tests.is_dir() else None}
        dockerfile = tests / "Dockerfile"
        if dockerfile.is_file():
            found = re.findall(r"^\s*WORKDIR\s+(/\S*)\s*$", dockerfile.read_text(encoding="utf-8"), re.IGNORECASE | re.MULTILINE)
            return {"verifier_dockerfile": dockerfile, "verifier_workdir": workdir or (found[-1] if found else None), "bundled": tests}
    for key in sorted(set(venv) - {"docker_image", "workdir", "os", "network_mode", "allow_internet", "build_timeout_sec"}):
        notes.append(f"steps.{name}.verifier.environment.{key} is not applied (the separate verifier gets the task's limits)")
    return {"verifier_workdir": workdir}


def _min_reward(view: _Toml, value: Any, name: str) -> tuple[tuple[str, float], ...]:
    """`min_reward`: a number gates on `reward`, a table on each key it names."""
    if value is None:
        return ()
    pairs = {"reward": value} if not isinstance(value, dict) else value
    out = []
    for key, threshold in pairs.items():
        if isinstance(threshold, bool) or not isinstance(threshold, (int, float)) or threshold != threshold:
            raise BadInput(f"step {name!r}: `min_reward` must be a number or a table of numbers, got {value!r}", file=str(view.path), line=view.line("", "min_reward"), fix='e.g. min_reward = 1.0, or min_reward = { tests = 1.0 }')
        out.append((str(key), float(threshold)))
    return tuple(out)


def _strategy(toml: _Toml, doc: dict[str, Any], steps: bool, notes: list[str]) -> str:
    value = doc.get("multi_step_reward_strategy")
    if value is None:
        return "mean"
    if value not in STRATEGIES:
        raise BadInput(f"`multi_step_reward_strategy = {value!r}` is no strategy Harbor defines", file=str(toml.path), line=toml.line("", "multi_step_reward_strategy"), fix='write "mean" (each reward key averaged over the steps) or "final" (the last step\'s rewards)')
    if not steps:
        notes.append("multi_step_reward_strategy applies to multi-step tasks only: this task has no [[steps]]")
    return str(value)


def step_view(task: TaskSpec, step: HarborStep, tests_dir: Path) -> TaskSpec:
    """The task as one step's verifier sees it, a single-step task: its tests the step's
    (`tests_dir`, made here: the task's tests/ with the step's own over it, as Harbor uploads them
    to /tests in that order), its verifier's environment, timeout, network and `env` (the task's,
    the step's over it), its artifacts. What runs a single-step task's verifier runs it."""
    import dataclasses
    import shutil

    runtime = task.runtime
    assert runtime is not None
    shutil.rmtree(tests_dir, ignore_errors=True)
    tests_dir.mkdir(parents=True)
    for folder in step.tests_dirs:
        shutil.copytree(folder, tests_dir, symlinks=True, dirs_exist_ok=True)
    env = {**dict(runtime.verifier_env), **dict(step.verifier_env)}
    steprun = dataclasses.replace(
        runtime,
        tests_dir=tests_dir,
        verifier_env=tuple(env.items()),
        verifier_separate=step.verifier_separate,
        verifier_dockerfile=step.verifier_dockerfile,
        verifier_image=step.verifier_image,
        verifier_workdir=step.verifier_workdir,
        artifacts=step.artifacts,
        steps=(),
    )
    verify = dataclasses.replace(task.verify, timeout=step.verifier_timeout, network=step.verifier_network)
    return dataclasses.replace(task, prompt_path=step.prompt_path, solution=step.solution, verify=verify, runtime=steprun)


def _schema_version(toml: _Toml, doc: dict[str, Any]) -> None:
    """task.toml's schema: Harbor 0.25 writes `schema_version = "1.4"`; older tasks say "1.0" to
    "1.3" (or the deprecated `version`). Harbor reads any value and checks none (Terminal-Bench
    2.1's guide has its authors write `version = "2.0"`): another major version is read the
    same way, and a note says so."""
    key = "schema_version" if "schema_version" in doc else "version"
    value = doc.get(key)
    if value is None:
        return
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise BadInput(f"`{key}` must be a version string, got {value!r}", file=str(toml.path), line=toml.line("", key), fix='e.g. schema_version = "1.4"')
    if str(value).split(".")[0] != SCHEMA_MAJOR:
        toml.notes.append(f"`{key} = {orjson.dumps(str(value)).decode()}` (task.toml line {toml.line('', key)}): read as Harbor 0.25 reads it, with schema 1.4's keys (Harbor checks no version)")


def _artifacts(toml: _Toml, doc: dict[str, Any]) -> tuple[str, ...]:
    """`artifacts`: paths (or `{source = …}` tables) Harbor collects from the agent's environment.
    benchtape keeps the agent's whole working directory, so an artifact inside it is kept (and
    handed to a separate verifier); one elsewhere, or from another compose service, is refused:
    benchtape would not have it."""
    value = doc.get("artifacts")
    if value is None:
        return ()
    line = toml.line("", "artifacts")
    if not isinstance(value, list):
        raise BadInput("`artifacts` must be a list of paths", file=str(toml.path), line=line, fix='e.g. artifacts = ["/app/output.txt"]')
    out = []
    for entry in value:
        source = entry.get("source") if isinstance(entry, dict) else entry
        if not isinstance(source, str) or not source.strip():
            raise BadInput(f"`artifacts` entry {entry!r} names no path", file=str(toml.path), line=line, fix='write a path, or a table with source = "/app/…"')
        if isinstance(entry, dict):
            unknown = set(entry) - {"source", "destination", "exclude", "service"}
            if unknown:
                raise BadInput(f"`artifacts` entry has keys Harbor does not define: {', '.join(sorted(unknown))}", file=str(toml.path), line=line, fix="keys of an artifact: source, destination, exclude, service")
            if entry.get("service") not in (None, "main"):
                raise BadInput(f"the artifact {source!r} comes from the compose service {entry['service']!r}: benchtape runs no compose services", file=str(toml.path), line=line, fix="collect it from the main environment, or run the task under Harbor")
            if entry.get("exclude"):
                raise BadInput(f"the artifact {source!r} has `exclude` patterns, which benchtape does not apply", file=str(toml.path), line=line, fix="remove `exclude` (benchtape hands over the whole path), or narrow `source`")
        if source.startswith("/logs/"):
            raise BadInput(f"the artifact {source!r} is under /logs, which benchtape does not collect from the agent (it keeps the working directory)", file=str(toml.path), line=line, fix="have the agent leave it in the working directory and name it there")
        out.append(source)
    return tuple(out)



COMPOSE_FILES = ("environment/docker-compose.yaml", "environment/docker-compose.yml")


def _refuse_compose(folder: Path) -> None:
    """A task whose environment is a compose file, refused by its first service and the way to
    run it. Harbor merges environment/docker-compose.yaml over its own `main` service: the
    services it adds (a database, an API the agent calls by name) live beside the task's
    container for the whole trial, and the task is only what its author meant with them there.
    benchtape gives each phase its own container and runs no other service, so running it
    anyway (as before: the file was passed over whenever a Dockerfile sat beside it) measured
    every agent, and the oracle, against a service that was not there."""
    path = next((folder / name for name in COMPOSE_FILES if (folder / name).is_file()), None)
    if path is None:
        return
    try:
        doc = load_yaml_file(path)
    except BadInput:
        doc = None
    services = doc.get("services") if isinstance(doc, dict) else None
    names = [str(name) for name in services] if isinstance(services, dict) else []
    others = [name for name in names if name != "main"]
    line = line_of(services, others[0]) if others else line_of(doc, "services") if isinstance(doc, dict) else None
    noun = "service" if len(others) == 1 else "services"
    what = f"{noun} {', '.join(others)} beside the task's container" if others else "overrides of the task's container"
    raise BadInput(
        f"{path.relative_to(folder)} asks for {what} (a docker-compose environment), which benchtape does not run: each phase here gets its own container and no other service",
        file=str(path),
        line=line,
        fix=f"run the task under Harbor, which brings its compose services up (`harbor run -p {folder} -a oracle`), or fold what it needs into environment/Dockerfile",
    )

def _separate_verifier(toml: _Toml, folder: Path, verifier_t: dict[str, Any], notes: list[str]) -> dict[str, Any]:
    """TaskRuntime's separate-verifier fields: its mode (Harbor: separate when asked, or when a
    `[verifier.environment]` is given), its Dockerfile (tests/Dockerfile), its image."""
    venv = verifier_t.get("environment")
    if venv is not None and not isinstance(venv, dict):
        raise BadInput("`verifier.environment` must be a table ([verifier.environment])", file=str(toml.path), line=toml.line("verifier", "environment"))
    mode = verifier_t.get("environment_mode") or ("separate" if venv is not None else "shared")
    if mode != "separate":
        return {}
    venv = venv or {}
    toml.strict(venv, "environment")
    if _asks(venv.get("allowed_hosts")) or venv.get("network_mode") == "allowlist":
        raise BadInput("`verifier.environment` asks for a host allowlist", file=str(toml.path), line=toml.line("verifier.environment", "allowed_hosts") or toml.line("verifier.environment", "network_mode"), fix=ALLOWLIST)
    image = toml.string(venv, "verifier.environment", "docker_image")
    for key in sorted(set(venv) - {"docker_image", "workdir", "os", "network_mode", "allow_internet", "build_timeout_sec"}):  # its network: the verifier's (load_harbor_task)
        notes.append(f"verifier.environment.{key} is not applied (the separate verifier gets the task's limits)")
    if venv.get("os", "linux") != "linux":
        raise BadInput("`verifier.environment.os`: benchtape's sandboxes are Linux", file=str(toml.path), line=toml.line("verifier.environment", "os"), fix='remove `os`, or set os = "linux"')
    dockerfile = folder / "tests" / "Dockerfile"
    workdir = toml.string(venv, "verifier.environment", "workdir")
    if workdir is None and image is None and dockerfile.is_file():
        found = re.findall(r"^\s*WORKDIR\s+(/\S*)\s*$", dockerfile.read_text(encoding="utf-8"), re.IGNORECASE | re.MULTILINE)
        workdir = found[-1] if found else None
    return {"verifier_separate": True, "verifier_dockerfile": dockerfile if image is None and dockerfile.is_file() else None, "verifier_image": image, "verifier_workdir": workdir}


MAX_SECONDS = 7 * 86400.0  # a timeout past a week is a typo (1e308, inf), and overflows the clocks it is added to
MAX_TOML_BYTES = 1 << 20  # a task.toml is a page of settings
TOML_MAX_DEPTH = 64


def _bounded_file(path: Path, limit: int) -> bytes:
    """At most `limit` bytes of a regular file: a FIFO named task.toml (which would block a read
    for ever) or a device is refused by what it is, and a huge file is never read whole."""
    import stat

    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise BadInput(f"task.toml cannot be read: {exc.strerror}", file=str(path), fix="make task.toml a readable file") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise BadInput("task.toml is no regular file (a FIFO, a socket or a device)", file=str(path), fix="make task.toml a plain file")
        chunks, size = [], 0
        while size < limit:
            chunk = os.read(fd, min(1 << 16, limit - size))
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def _toml_text(path: Path) -> str:
    """task.toml's text: BadInput naming the line of the first byte that is not UTF-8, or a
    file larger than a task.toml could need; nesting deeper than TOML_MAX_DEPTH is refused before
    the parser recurses into it."""
    data = _bounded_file(path, MAX_TOML_BYTES + 1)
    if len(data) > MAX_TOML_BYTES:
        raise BadInput(f"task.toml is {len(data):,} bytes, more than a task's settings need ({MAX_TOML_BYTES:,})", file=str(path), fix="keep task.toml to its settings; put data in the task's folders")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise BadInput(f"task.toml is not UTF-8 text (byte {exc.start}: {data[exc.start:exc.start + 1]!r})", file=str(path), line=line, fix="save task.toml as UTF-8 (TOML files are UTF-8)") from None
    deepest, line = _depth(text)
    if deepest > TOML_MAX_DEPTH:
        raise BadInput(f"task.toml nests arrays or inline tables {deepest} levels deep, more than benchtape reads ({TOML_MAX_DEPTH})", file=str(path), line=line or None, fix="flatten the value: no task.toml key holds more than a few levels")
    return text


def _depth(text: str) -> tuple[int, int]:
    """(the deepest nesting of arrays and inline tables outside strings and comments, the line
    where it first passes TOML_MAX_DEPTH or 0): a bound read before the recursive parser runs."""
    deepest = depth = 0
    where = 0
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'":
            triple = text.startswith(c * 3, i)
            closing = c * 3 if triple else c
            j = i + len(closing)
            while j < n:
                if text[j] == "\\" and c == '"':
                    j += 2
                    continue
                if text.startswith(closing, j) or (not triple and text[j] == "\n"):
                    break
                j += 1
            i = j + len(closing)
            continue
        if c == "#":
            end = text.find("\n", i)
            i = n if end < 0 else end
            continue
        if c in "[{":
            depth += 1
            if depth > deepest:
                deepest = depth
                if depth > TOML_MAX_DEPTH and not where:
                    where = text.count("\n", 0, i) + 1
        elif c in "]}":
            depth = max(0, depth - 1)
        i += 1
    return deepest, where


def _environment_refusals(toml: _Toml, env_t: dict[str, Any], verifier_t: dict[str, Any], notes: list[str]) -> None:
    os_name = env_t.get("os", "linux")
    if os_name != "linux":
        raise BadInput(f"`environment.os = {os_name!r}`: benchtape's sandboxes are Linux", file=str(toml.path), line=toml.line("environment", "os"), fix='remove `os`, or set os = "linux"')
    gpus = env_t.get("gpus")
    if gpus not in (None, 0):
        raise BadInput(f"`environment.gpus = {gpus!r}`: benchtape's sandboxes have no GPU", file=str(toml.path), line=toml.line("environment", "gpus"), fix="set gpus = 0, or run the task under Harbor")
    mode = verifier_t.get("environment_mode")
    if mode not in (None, "shared", "separate"):
        raise BadInput(f"`verifier.environment_mode = {mode!r}` is no mode Harbor defines", file=str(toml.path), line=toml.line("verifier", "environment_mode"), fix='write "shared" (the verifier runs on the agent\'s workspace) or "separate" (in an environment of its own, given the artifacts)')
    if mode == "shared" and verifier_t.get("environment") is not None:
        raise BadInput("`[verifier.environment]` with `verifier.environment_mode = \"shared\"`: Harbor refuses this pair", file=str(toml.path), line=toml.line("verifier", "environment"), fix='remove [verifier.environment], or set environment_mode = "separate"')
    for key in ("storage_mb", "storage"):
        if env_t.get(key) is not None:
            notes.append(f"environment.{key} is not enforced (benchtape's sandboxes have no disk quota)")
    if env_t.get("gpu_types"):
        notes.append("environment.gpu_types is not used (gpus = 0)")


def _network(toml: _Toml, table: dict[str, Any], name: str, default: bool) -> bool:
    mode = table.get("network_mode")
    if mode == "allowlist" and not _asks(table.get("allowed_hosts")):
        return False  # an allowlist of no host lets nothing through: no network, which benchtape honours
    if mode is not None:
        if not isinstance(mode, str) or mode not in NETWORK_MODES:  # a list or table here is no mode (and no dict key)
            fix = ALLOWLIST if mode == "allowlist" else "use \"no-network\" or \"public\""
            raise BadInput(f"`{name}.network_mode = {mode!r}` is not supported", file=str(toml.path), line=toml.line(name, "network_mode"), fix=fix)
        return NETWORK_MODES[mode]
    if name == "environment" and "allow_internet" in table:
        value = table["allow_internet"]
        if not isinstance(value, bool):
            raise BadInput(f"`environment.allow_internet` must be true or false, got {value!r}", file=str(toml.path), line=toml.line(name, "allow_internet"))
        return value
    return default


RESERVED_PATHS = ("/opt/benchtape", "/run/benchtape-endpoint", "/tests", "/solution", "/logs", "/proc", "/sys", "/dev")  # benchtape's and Harbor's own mounts


def _workdir(toml: _Toml, env_t: dict[str, Any]) -> str | None:
    """`[environment] workdir`, where the workspace is mounted: an absolute path of its own,
    normalised (`/app/` is /app), never / or a path benchtape or Harbor mounts something at."""
    import posixpath

    value = toml.string(env_t, "environment", "workdir")
    if value is None:
        return None
    path = posixpath.normpath(value)
    if not path.startswith("/") or path == "/" or any(path == r or path.startswith(r + "/") for r in RESERVED_PATHS):
        raise BadInput(f"`environment.workdir = {value!r}` cannot hold the workspace", file=str(toml.path), line=toml.line("environment", "workdir"), fix='an absolute folder of its own, e.g. workdir = "/app"')
    return path


def _user(toml: _Toml, table: dict[str, Any], name: str, notes: list[str]) -> str | None:
    """`[agent] user` / `[verifier] user`: a user name or a uid the phase runs as, applied in a
    container (the image must know a name; a uid needs no entry); level home runs as you."""
    value = table.get("user")
    if value is None or value == "":
        return None
    uid = isinstance(value, int) and not isinstance(value, bool) and value >= 0
    if not (uid or isinstance(value, str) and value.strip() and not any(c.isspace() for c in value)):
        raise BadInput(f"`{name}.user` must be a user name or a uid, got {value!r}", file=str(toml.path), line=toml.line(name, "user"), fix='e.g. user = "agent" or user = 1000')
    notes.append(f"{name}.user = {value!r} applies at level container (level home runs as you)")
    return str(value)


def _network_from(toml: _Toml, agent_t: dict[str, Any], env_t: dict[str, Any]) -> str:
    """Which key of task.toml gave the agent its network (what _network read), by its line."""
    for name, table, key in (("agent", agent_t, "network_mode"), ("environment", env_t, "network_mode"), ("environment", env_t, "allow_internet")):
        if key in table:
            value = table[key]
            shown = "true" if value is True else "false" if value is False else f'"{value}"'
            line = toml.line(name, key)
            return f"{toml.path}{f':{line}' if line else ''}: [{name}] {key} = {shown}"
    return f"{toml.path}: no [environment] network_mode or allow_internet (Harbor's default: the network)"


def _cpus(toml: _Toml, env_t: dict[str, Any]) -> float | None:
    value = env_t.get("cpus")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= 4096:  # nan and inf fail
        raise BadInput(f"`environment.cpus` must be a positive number, got {value!r}", file=str(toml.path), line=toml.line("environment", "cpus"), fix="e.g. cpus = 1")
    return float(value)


def _memory_mb(toml: _Toml, env_t: dict[str, Any]) -> int | None:
    if env_t.get("memory_mb") is not None:
        value = env_t["memory_mb"]
        if isinstance(value, bool) or not isinstance(value, int) or value <= 0:
            raise BadInput(f"`environment.memory_mb` must be a positive whole number, got {value!r}", file=str(toml.path), line=toml.line("environment", "memory_mb"), fix="e.g. memory_mb = 2048")
        return value
    legacy = env_t.get("memory")  # Harbor's deprecated form: "2G", "512M"
    if legacy is None:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([GMK])B?\s*", str(legacy), re.IGNORECASE)
    if not m:
        raise BadInput(f"`environment.memory = {legacy!r}` is not a size like \"2G\" or \"512M\"", file=str(toml.path), line=toml.line("environment", "memory"), fix="write memory_mb = 2048")
    return max(1, int(float(m.group(1)) * {"g": 1024, "m": 1, "k": 1 / 1024}[m.group(2).lower()]))


def inside_folder(folder: Path, rel: str) -> Path:
    """`folder`/`rel`, refused (BadInput naming it and where it leads) when it, or a folder on
    the way, is a link leading out of `folder`: a task is someone else's folder, and a linked
    instruction.md would put a host file into the agent's prompt (stored, and sent to a model).
    A link that stays inside the task folder is the author's business."""
    path = folder / rel
    if not (path.is_symlink() or any(p.is_symlink() for p in path.parents if folder in p.parents)):
        return path
    target = path.resolve()
    if target == folder or folder in target.parents:
        return path
    raise BadInput(f"{rel} is a link leading out of the task folder (to {target})", file=str(path), fix="put the file itself in the task folder in place of the link")


def _required_file(folder: Path, name: str, what: str) -> Path:
    path = folder / name
    if not path.is_file():
        raise BadInput(f"{name} is missing ({what})", file=str(path), fix=f"write {folder.name}/{name}: a Harbor task holds task.toml, instruction.md, environment/Dockerfile, tests/test.sh")
    return path


def _same_user(step: Any, task: Any) -> bool:
    """Whether a step's `user` asks for nothing beyond the task's: none given, or the very same
    (a uid 0 is a user, never "not set")."""
    if step is None or step == "":
        return True
    return not isinstance(step, bool) and task is not None and not isinstance(task, bool) and str(step) == str(task)


def _healthcheck(toml: _Toml, value: Any, table: str, step: str | None = None) -> Healthcheck | None:
    """`healthcheck = { command = "…", … }` (the environment's, or a step's), each field checked
    as Harbor's HealthcheckConfig checks it, by its line (the table's, when written inline)."""
    if value is None:
        return None
    where = _dotted(table, "healthcheck")
    said = f"step {step!r}: " if step is not None else ""

    def line(key: str) -> int | None:
        return toml.line(where, key) or toml.line(table, "healthcheck")

    if not isinstance(value, dict):
        raise BadInput(f"{said}`{where}` must be a table", file=str(toml.path), line=line(""), fix='e.g. healthcheck = { command = "curl -fs localhost:8000/health", retries = 10 }')
    _known_keys(toml, value, "healthcheck", f"{said}`{where}", "healthcheck", line)
    command = value.get("command")
    if not isinstance(command, str) or not command.strip():
        raise BadInput(f"{said}`{where}.command` must be a shell command, got {command!r}", file=str(toml.path), line=line("command"), fix='e.g. command = "test -S /run/db.sock" (exit 0: healthy)')
    retries = value.get("retries", 3)
    if isinstance(retries, bool) or not isinstance(retries, int) or not 1 <= retries <= 10_000:
        raise BadInput(f"{said}`{where}.retries` must be a whole number from 1 to 10000, got {retries!r}", file=str(toml.path), line=line("retries"), fix="e.g. retries = 3")
    seconds: dict[str, float] = {}
    for key, default, least in (("interval_sec", 5.0, 0.0), ("timeout_sec", 30.0, 1.0), ("start_period_sec", 0.0, 0.0), ("start_interval_sec", 5.0, 0.0)):
        got = value.get(key, default)
        if isinstance(got, bool) or not isinstance(got, (int, float)) or not least <= got <= MAX_SECONDS:  # nan fails both
            raise BadInput(f"{said}`{where}.{key}` must be a number of seconds from {least:g} to {MAX_SECONDS:g}, got {got!r}", file=str(toml.path), line=line(key), fix=f"e.g. {key} = {default:g}" if default else f"e.g. {key} = 10")
        seconds[key] = float(got)
    return Healthcheck(command, seconds["interval_sec"], seconds["timeout_sec"], seconds["start_period_sec"], seconds["start_interval_sec"], retries)


def _mcp_servers(toml: _Toml, value: Any) -> tuple[McpServer, ...]:
    """`[[environment.mcp_servers]]`, each entry checked as Harbor's MCPServerConfig checks it
    (`transport` defaults to sse; a URL for sse and streamable-http, a command for stdio), by
    its line. `headers` is refused: Harbor resolves a header's `${VAR}` from the agent's
    credentials, which benchtape's agents run without."""
    if value is None:
        return ()
    where = "environment.mcp_servers"
    if not isinstance(value, list):
        raise BadInput(f"`{where}` must be a list of tables ([[environment.mcp_servers]])", file=str(toml.path), line=toml.entry_line(where, 0, ""), fix='e.g. [[environment.mcp_servers]] with name = "files", transport = "stdio", command = "mcp-files"')
    out: list[McpServer] = []
    for index, entry in enumerate(value):

        def line(key: str, index: int = index) -> int | None:
            return toml.entry_line(where, index, key)

        if not isinstance(entry, dict):
            raise BadInput(f"`{where}` entry {entry!r} is no table", file=str(toml.path), line=line(""), fix="write each server as a [[environment.mcp_servers]] table")
        _known_keys(toml, entry, "mcp_servers", f"`{where}", "MCP server", line)
        name = entry.get("name")
        if not isinstance(name, str) or not MCP_NAME.match(name):
            raise BadInput(f"`{where}.name` must be a server name of letters, digits, `_` and `-`, got {name!r}", file=str(toml.path), line=line("name"), fix='e.g. name = "files" (its tools are called mcp__files__<tool>)')
        if name in {s.name for s in out}:
            raise BadInput(f"two MCP servers are named {name!r}", file=str(toml.path), line=line("name"), fix="give each server its own name")
        transport = entry.get("transport", "sse")
        transport = "streamable-http" if transport == "http" else transport
        if transport not in MCP_TRANSPORTS:
            raise BadInput(f"MCP server {name!r}: `transport` must be one of {', '.join(MCP_TRANSPORTS)}, got {transport!r}", file=str(toml.path), line=line("transport"), fix='e.g. transport = "stdio"')
        if entry.get("headers"):
            raise BadInput(
                f"MCP server {name!r} sends `headers`, whose ${{VAR}} Harbor fills from the agent's credentials: benchtape's agents run without them",
                file=str(toml.path),
                line=line("headers"),
                fix="remove `headers` (a server on the task's own network needs none), or run the task under Harbor (`harbor run -p TASK -a claude-code`)",
            )
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise BadInput(f"MCP server {name!r}: `args` must be a list of strings, got {args!r}", file=str(toml.path), line=line("args"), fix='e.g. args = ["--root", "/app"]')
        if transport == "stdio":
            command = entry.get("command")
            if not isinstance(command, str) or not command.strip():
                raise BadInput(f"MCP server {name!r}: a stdio server needs `command`, got {command!r}", file=str(toml.path), line=line("command"), fix='e.g. command = "python3" with args = ["/app/server.py"]')
            out.append(McpServer(name, transport, command=command, args=tuple(args)))
        else:
            url = entry.get("url")
            if not isinstance(url, str) or not re.fullmatch(r"https?://\S+", url):
                raise BadInput(f"MCP server {name!r}: transport {transport} needs `url`, an http(s) URL, got {url!r}", file=str(toml.path), line=line("url"), fix='e.g. url = "http://127.0.0.1:8000/mcp"')
            out.append(McpServer(name, transport, url=url))
    return tuple(out)


def _known_keys(toml: _Toml, table: dict[str, Any], kind: str, where: str, what: str, line: Callable[[str], int | None]) -> None:
    """The keys of a sub-table (a healthcheck, an MCP server) as Harbor reads them: its pydantic
    models ignore a key they do not define (an MCP server's `env`, `description`), and so does
    benchtape, saying so in the task's notes, unless the key reads as a misspelt one of the
    model's (`retrys`), which is refused by its line with the key it resembles: under Harbor it
    would run with the default. `where`: how the message opens (`` `environment.healthcheck``)."""
    for key in table:
        if key not in KEYS[kind]:
            near = closest(key, KEYS[kind])
            if not near:
                toml.notes.append(f"{where.lstrip('`')}.{key}` (task.toml line {line(key)}) is no key Harbor 0.25 defines: ignored, as Harbor ignores it")
                continue
            raise BadInput(f"{where}.{key}` is no {what} key Harbor defines", file=str(toml.path), line=line(key), fix=f"did you mean `{near}`?")


def _misspelt(key: str, near: str) -> bool:
    """A slip of the keyboard rather than another word: one edit apart, or two in a key of six
    characters or more (`timeout_secs`, `cpu`, `retrys`; not `tags` for `task`)."""
    from benchtape.core.edit_distance import levenshtein

    edits = levenshtein(key, near)
    return edits <= 1 or (edits == 2 and len(key) >= 6)


def _asks(value: Any) -> bool:
    """Whether a refused key asks for something (not absent, empty or off)."""
    return value not in (None, False, "", [], {})


def _dotted(table: str, key: str) -> str:
    return f"{table}.{key}" if table else key


# ---------------------------------------------------------------- task.toml with its line numbers


class _Toml:
    """task.toml's values, and the line each key is on (tomllib gives none)."""

    _HEADER = re.compile(r"^\s*\[\[?\s*([A-Za-z0-9_.\" -]+?)\s*\]\]?\s*(?:#.*)?$")
    _KEY = re.compile(r"^\s*\"?([A-Za-z0-9_.-]+)\"?\s*=")

    def __init__(self, path: Path, text: str):
        self.path = path
        self.notes: list[str] = []  # what was read and left alone (a key Harbor does not define, which it ignores)
        self.lines: dict[tuple[str, str], int] = {}
        self.steps: list[dict[tuple[str, str], int]] = []  # each [[steps]] entry's lines, its tables named from the step
        self.entries: dict[str, list[dict[str, int]]] = {}  # each entry of another array of tables ([[environment.mcp_servers]]): its keys' lines, "" its header's
        table = ""
        for n, line in enumerate(text.splitlines(), start=1):
            header = self._HEADER.match(line)
            if header:
                table = header.group(1).replace('"', "").replace(" ", "")
                head, _, last = table.rpartition(".")
                self.lines.setdefault((head, last), n)
                if table == "steps" and line.lstrip().startswith("[["):
                    self.steps.append({("", ""): n})
                elif table.startswith("steps.") and self.steps:
                    head, _, last = table[len("steps."):].rpartition(".")
                    self.steps[-1].setdefault((head, last), n)
                elif line.lstrip().startswith("[["):
                    self.entries.setdefault(table, []).append({"": n})
                continue
            key = self._KEY.match(line)
            if key:
                dotted = f"{table}.{key.group(1)}" if table else key.group(1)
                head, _, last = dotted.rpartition(".")
                self.lines.setdefault((head, last), n)
                if table in self.entries:
                    self.entries[table][-1].setdefault(key.group(1), n)
                if (table == "steps" or table.startswith("steps.")) and self.steps:
                    head, _, last = dotted[len("steps."):].rpartition(".")
                    self.steps[-1].setdefault((head, last), n)

    def entry_line(self, table: str, index: int, key: str) -> int | None:
        """The line of `key` in the `index`th `[[table]]` entry (its header's when the key is not
        written there, the table's first when the entries are inline)."""
        entries = self.entries.get(table) or []
        if index < len(entries):
            return entries[index].get(key) or entries[index][""]
        head, _, last = table.rpartition(".")
        return self.line(table, key) or self.line(head, last)

    def step(self, index: int) -> _Toml:
        """The same file seen from its `index`th [[steps]] entry: `line("verifier", "timeout_sec")`
        is that step's line (its header's when the key's own is not found)."""
        view = _StepLines.__new__(_StepLines)
        view.path, view.steps, view.notes = self.path, self.steps, self.notes
        view.lines = dict(self.steps[index]) if index < len(self.steps) else {}
        return view

    def line(self, table: str, key: str) -> int | None:
        return self.lines.get((table, key)) or self.lines.get(("", table) if table else ("", key))

    def table(self, doc: dict[str, Any], name: str) -> dict[str, Any]:
        value = doc.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise BadInput(f"`{name}` must be a table ([{name}])", file=str(self.path), line=self.line("", name), fix=f"write it as a [{name}] section")
        return value

    def strict(self, table: dict[str, Any], name: str) -> None:
        """A key Harbor does not define is ignored, as Harbor ignores it (a note says so), unless
        it is a misspelling of a key of this table (`_misspelt`) and asks for something:
        `timeout_secs = 30` would run with the default timeout under Harbor, silently; that is
        refused by its line. A key that is merely like one (`tags`, `dockerfile`, real tasks'
        keys for other tools) is another word, and is noted."""
        known = KEYS[name]
        for key in table:
            if key in known:
                continue
            near = closest(key, known)
            where = f"[{name}]" if name else "the top level"
            if near and _misspelt(key, near) and _asks(table[key]):
                fix = f"did you mean `{near}`? (Harbor ignores a key it does not know, so a misspelt one runs with the default; if `{key}` is meant for another tool, remove it: neither Harbor 0.25 nor benchtape applies it)"
                raise BadInput(f"`{_dotted(name, key)}` is no task.toml key Harbor defines (in {where})", file=str(self.path), line=self.line(name, key), fix=fix)
            self.notes.append(f"`{_dotted(name, key)}` (task.toml line {self.line(name, key)}) is no key Harbor 0.25 defines: ignored, as Harbor ignores it" + (f" (if `{near}` was meant, spell it so)" if near else ""))

    def string(self, table: dict[str, Any], name: str, key: str) -> str | None:
        value = table.get(key)
        if value is None:
            return None
        if not isinstance(value, str) or not value.strip():
            raise BadInput(f"`{name}.{key}` must be a string, got {value!r}", file=str(self.path), line=self.line(name, key))
        return value

    def seconds(self, table: dict[str, Any], name: str, key: str, default: float | None) -> float | None:
        value = table.get(key)
        if value is None:
            return default
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value <= MAX_SECONDS:  # nan fails both
            raise BadInput(
                f"`{name}.{key}` must be a positive number of seconds, at most {MAX_SECONDS:g} (a week), got {value!r}",
                file=str(self.path),
                line=self.line(name, key),
                fix=f"e.g. {key} = 600.0",
            )
        return float(value)

    def env(self, table: dict[str, Any], name: str) -> tuple[tuple[str, str], ...]:
        """`env = {…}`, each value's `${VAR}` / `${VAR:-default}` taken from this host's
        environment as Harbor does; a `${VAR}` that is unset and has no default is refused."""
        value = table.get("env")
        if value is None:
            return ()
        if not isinstance(value, dict):
            raise BadInput(f"`{name}.env` must be a table of strings", file=str(self.path), line=self.line(name, "env"), fix='e.g. env = { MODE = "test" }')
        out = []
        for key, raw in value.items():
            if not isinstance(raw, str):
                raise BadInput(f"`{name}.env.{key}` must be a string, got {raw!r}", file=str(self.path), line=self.line(name, "env"), fix="quote it")
            out.append((str(key), self._resolve(raw, name, key)))
        return tuple(out)

    def _resolve(self, raw: str, name: str, key: str) -> str:
        def one(m: re.Match[str]) -> str:
            var, default = m.group(1), m.group(3)
            if var in os.environ:
                return os.environ[var]
            if default is None:
                raise BadInput(f"`{name}.env.{key}` needs ${{{var}}}, which is not set here", file=str(self.path), line=self.line(name, "env"), fix=f"export {var}=…, or write ${{{var}:-default}}")
            return default

        return re.sub(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:-([^}]*))?\}", one, raw)


class _StepLines(_Toml):
    """A [[steps]] entry's lines: a key not found falls back on the step's header line."""

    def line(self, table: str, key: str) -> int | None:
        table = "" if table == "steps" else table.removeprefix("steps.")
        return super().line(table, key) or self.lines.get(("", ""))


# ---------------------------------------------------------------- the validation record, beside the task


def read_validation(folder: Path) -> Validation | None:
    path = folder / VALIDATION_FILE
    if not path.is_file():
        return None
    try:
        doc = orjson.loads(path.read_bytes())
        return Validation(
            at=str(doc["at"]),
            fingerprint=str(doc["fingerprint"]),
            base_failed=bool(doc["base_failed"]),
            reference_passed=bool(doc["reference_passed"]),
            level=doc.get("level"),
            runner=doc.get("runner"),
            base={k: v for k, v in (doc.get("base") or {}).items() if isinstance(v, int)},
            reference={k: v for k, v in (doc.get("reference") or {}).items() if isinstance(v, int)},
        )
    except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError):
        raise BadInput(f"{VALIDATION_FILE} is not benchtape's validation record", file=str(path), fix="delete it and run `benchtape task validate` again") from None


def validation_bytes(validation: Validation, rewards: dict[str, float | None]) -> bytes:
    """The record `task validate` writes beside a Harbor task (its rewards kept for the reader)."""
    doc = {
        "written_by": "benchtape task validate; any change to the task's folder makes it stale",
        "at": validation.at,
        "fingerprint": validation.fingerprint,
        "base_failed": validation.base_failed,
        "reference_passed": validation.reference_passed,
        "level": validation.level,
        "runner": validation.runner,
        "base": validation.base,
        "reference": validation.reference,
        "rewards": rewards,
    }
    return orjson.dumps(doc, option=orjson.OPT_INDENT_2) + b"\n"
