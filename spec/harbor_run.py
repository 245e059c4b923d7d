"""`benchtape run DIR` on Harbor task folders: an evaluation made in memory (docs/formats.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput, closest


def is_harbor_folder(path: Path) -> bool:
    """A Harbor task folder (task.toml), or a folder holding them and no bench of its own (a
    folder `run` reads as benches, with *.yaml files or case directories, stays one)."""
    from benchtape.spec.harbor_task import is_harbor_task
    from benchtape.spec.task import HARBOR_FILE

    if not path.is_dir():
        return False
    if is_harbor_task(path):
        return True
    if any(path.glob("*.yaml")) or any(path.glob("*.yml")) or (path / "assert.yaml").is_file() or any(path.glob("*/assert.yaml")):
        return False  # a folder of benches (its *.yaml files and case directories), as before
    return next(path.rglob(HARBOR_FILE), None) is not None


def harbor_evaluation(path: Path, harness: str | None, model: str | None, *, attempts: int = 1, cwd: Path | None = None) -> Any:
    """An evaluation made in memory for `benchtape run DIR --harness H [--model M]`: the Harbor
    tasks at DIR × one setup (the tool whose harness is H, with model M) × `attempts`. It is
    named after the folder, so runs of several setups on the same folder compare as one
    evaluation (`benchtape compare RUN…`); every task that loads runs (a direct run)."""
    import hashlib

    from benchtape.spec.evaluation import Evaluation
    from benchtape.spec.harbor_task import harbor_task_folders, load_harbor_task
    from benchtape.spec.overlays import load_registry
    from benchtape.spec.task import folder_hash

    path = Path(path).resolve()
    folders = harbor_task_folders(path)  # BadInput now (no task, two of one id), before anything else
    # A bad task.toml skips that task (spec/task_cells.py, which loads every task); when none
    # is left, the first says why, first. Read only up to the first task that loads: the run
    # reads them all again.
    refused = []
    for folder in folders:
        try:
            load_harbor_task(folder)
            break
        except BadInput as exc:
            refused.append(exc)
    if refused and len(refused) == len(folders):
        if len(refused) > 1:
            refused[0].what += f" (and each of the other {len(refused) - 1} task(s) here is refused too: `benchtape task list` names why)"
            refused[0].args = (refused[0].render(),)
        raise refused[0]
    cwd = cwd or Path.cwd()
    registry = load_registry(cwd)
    if harness is None:
        raise BadInput(f"{path} holds Harbor tasks: name the agent that runs them", fix="add --harness oracle (the positive control), --harness mock --model noop (the negative control), or a real tool: --harness claude-code --model scripted")
    arm = setup_arm(registry, harness, model)
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


def setup_arm(registry: Any, harness: str, model: str | None) -> Any:
    """The one setup `--harness H [--model M]` names: the registry's tool whose harness is H
    (the one named H when several are), with model M (its only model when M is not given)."""
    from benchtape.spec.evaluation import MAIN_STEP, Arm, Step

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
    return Arm(tool.name, False, (step,))
