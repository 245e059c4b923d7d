"""Tasks from a repository's history: scan, create, lint, validate, list, doctor, init
(benchtape.tasks holds them; `benchtape task …`, `doctor` and `init --tasks` call them here).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from benchtape.tasks.create import create_task
from benchtape.tasks.doctor import doctor
from benchtape.tasks.gitlog import repo_root
from benchtape.tasks.harvest import scan
from benchtape.tasks.init_project import init_tasks
from benchtape.tasks.lint import lint
from benchtape.tasks.listing import counts, runnable, task_rows
from benchtape.tasks.validate import Progress, Validated
from benchtape.tasks.validate import validate as validate_tasks

if TYPE_CHECKING:
    from benchtape.spec.project import Project
    from benchtape.store.views import RecordingStore

__all__ = ["cached_envs", "counts", "create_task", "doctor", "export_harbor", "init_tasks", "lint", "project_root", "prune_envs", "repo_root", "runnable", "scan", "task_rows", "validate"]


def project_root(folder: Path, *, history: bool = True) -> Path:
    """The project a task command works on: the git work tree holding `folder`. A command that
    mines no history (`history=False`: list, lint, validate, controls) also takes, outside any
    work tree, the nearest folder whose .benchtape/tasks/ holds Harbor tasks and no task mined
    from history: a Harbor task brings its environment and tests, and has no history to need.
    Only a folder of yours: a `.benchtape/` someone else left in a parent (/tmp's) is never
    taken up and run, nor a repository git itself distrusts for its owner."""
    import os

    from benchtape.core.errors import BadInput
    from benchtape.spec.task import TASK_FILE, task_dirs

    try:
        return repo_root(folder)
    except BadInput as exc:
        if history:
            raise
        for top in (folder, *folder.parents):
            config = top / ".benchtape"
            if (config / "tasks").is_dir():
                tasks = task_dirs(top)
                yours = all(p.stat().st_uid == os.getuid() for p in (top, config, config / "tasks"))
                if yours and tasks and not any((d / TASK_FILE).is_file() for d in tasks.values()):
                    return top
                break
        raise BadInput(exc.what, fix=f"{exc.fix} (Harbor tasks need no repository: put their folders in .benchtape/tasks/ of a folder of yours and run this beside it)") from None


def export_harbor(project: Any, ids: list[str], dest: Path) -> list[Any]:
    """`benchtape task export ID… --format harbor -o DIR`: the named tasks (mined from history)
    as Harbor task folders (benchtape.formats.harbor_export), each `Exported`."""
    from benchtape.core.errors import BadInput
    from benchtape.formats.harbor_export import export_tasks
    from benchtape.spec.harbor_task import load_task_folder
    from benchtape.spec.task import task_dirs

    if not ids:
        raise BadInput("name the tasks to export", fix="benchtape task export ID… --format harbor -o DIR (`benchtape task list` shows the ids)")
    found = task_dirs(project.root)
    missing = [i for i in ids if i not in found]
    if missing:
        raise BadInput(f"no task {', '.join(repr(m) for m in missing)} in {project.root}", fix=f"known tasks: {', '.join(list(found)[:20]) or '(none: benchtape task create REF)'}")
    return export_tasks(project, [load_task_folder(found[i]) for i in ids], dest, lambda task, base: _carried_env(project, task, base))


def _carried_env(project: Any, task: Any, base: Path) -> Any:
    """The project environment a task's container-level validation verifies in (built, or
    reused from the cache), as an exported folder's image carries it (formats.harbor_export)."""
    from benchtape.core.errors import BadInput
    from benchtape.envs.project_env import ENV_BUILD_FIX, env_mounts, project_environment
    from benchtape.envs.recipe import EnvError
    from benchtape.formats.harbor_export import CarriedEnv
    from benchtape.sandbox.baseimage import image_python
    from benchtape.sandbox.verifier_box import CONTAINER_PATH

    try:
        env = project_environment(project, task.source.base_commit, base, "container", container_python=image_python(), fix_commit=task.source.fix_commit)
        mounts = env_mounts(env, "container")
    except EnvError as exc:
        raise BadInput(f"task {task.id}: the project's environment could not be built: {exc}", file=str(task.path), fix=ENV_BUILD_FIX) from None
    if env.folder is None:
        from benchtape.sandbox.testcounts import runner_of

        why = "; ".join(env.notes) or "no project environment detected"
        said = f"none: benchtape's base image holds a Python and its standard library only ({why}); add a Dockerfile.benchtape or .benchtape/wheelhouse/ (docs/tasks.md)"
        toolchain = {"go": "Go", "cargo": "Rust's cargo"}.get(runner_of(task.verify.command) or "")
        if toolchain is not None and project.dockerfile is None:
            # a Go task's folder was written FROM benchtape-base, whose test.sh runs `go test`:
            # `harbor run -a oracle` would get 0 (go: command not found), said as "no project environment"
            said += f"; its verifier runs {toolchain}, which benchtape's base image does not have, so `harbor run -a oracle` gets 0: give the project a Dockerfile.benchtape whose image has it (FROM golang:<version>, rust:<version>), and export again"
        return CarriedEnv([], lambda workdir: {}, env.setup, lambda tree: None, said)
    said = f"the project environment {env.folder} (copied to its own path in the image)"
    if env.rebuild_with and project.dockerfile is None:
        from benchtape.envs.build import NATIVE
        from benchtape.sandbox.patches import changed_paths

        native = [p for p in changed_paths(task.reference()) if Path(p).suffix in NATIVE]
        if native:  # REBUILD stops where no compiler is (no_compiler): the oracle's reward would be 0
            said += f"; its fix changes compiled sources ({', '.join(native[:3])}) and benchtape's base image has no C compiler, so its verifier stops before the tests (`harbor run -a oracle` gets 0): give the project a Dockerfile.benchtape whose image has one, and export again"
    return CarriedEnv(mounts, lambda workdir: env.run_env(workdir, CONTAINER_PATH), env.setup, env.materialize, said)


def cached_envs() -> tuple[Path, list[Any]]:
    """`benchtape task envs`: the environment cache's folder and its entries (envs/cache.py
    `CachedEnv`), the most recently used first."""
    from benchtape.envs.build import default_cache
    from benchtape.envs.cache import entries

    cache = default_cache()
    return cache, entries(cache)


def prune_envs(unused_for: str) -> tuple[Path, Any]:
    """`benchtape task envs --prune --unused-for AGE`: remove the cached environments last used
    longer ago than AGE (0d: all) and the builds that never finished; one a running benchtape
    holds is kept, by name (`Pruned`)."""
    import time

    from benchtape.core.errors import BadInput
    from benchtape.envs.build import default_cache
    from benchtape.envs.cache import prune
    from benchtape.tasks.harvest import age_seconds

    ago = age_seconds(unused_for)
    if ago is None:
        raise BadInput(f"--unused-for {unused_for!r} is not an age", fix="e.g. --unused-for 30d (also 6w, 3m, 1y; 0d: every environment no running benchtape uses)")
    cache = default_cache()
    return cache, prune(cache, time.time() - ago)


def validate(project: Project, ids: list[str] | None, *, store: RecordingStore, level: str = "auto", logs: Path, progress: Progress | None = None, argv: list[str] | None = None) -> Validated:
    """Validate the named tasks (tasks.validate.validate), first sweeping what a killed benchtape
    left, as every run's start does: a killed validation's scratch folder among it."""
    from benchtape.recorder.recover import sweep

    say = progress or (lambda text: None)
    for found in sweep():
        say(f"recover: {found}")
    return validate_tasks(project, ids, store=store, level=level, logs=logs, progress=progress, argv=argv)
