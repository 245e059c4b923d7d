"""Tasks mined from history as Harbor task folders (`benchtape task export ID… --format harbor`),
so they run under Harbor (`harbor run -p DIR -a oracle`) as they run here.

One folder per task, the layout `harbor task init` makes (schema_version 1.4; a separate
verifier, Harbor's default, in a fresh copy of the environment handed the agent's working
directory as its one artifact: what benchtape's own verifier sees):

    <id>/task.toml               timeouts, networks, the task's source under [metadata.benchtape]
    <id>/instruction.md          the prompt
    <id>/environment/Dockerfile  the project's environment with the tree at the base commit
    <id>/environment/workspace/  that tree (no .git), copied to the working directory
    <id>/tests/test.sh           the hidden verifier: the tests patch's files put in place, then
                                 verify.setup and verify.command; reward 1 when the command passes
    <id>/tests/files/…           the files the tests patch leaves (and tests/deleted, those it removes)
    <id>/solution/solve.sh       the oracle: the reference patch's files put in place
    <id>/solution/files/…

The patches travel as the files they leave, never as patches: the environment need hold no
patch tool (benchtape's base image has none), and what the verifier puts in place is exactly
what benchtape's verifier sees after applying them to the base tree.

The environment: the project's `Dockerfile.benchtape` when it has one (its build context the
tree, as benchtape builds it, the working directory /workspace); else benchtape's base image
(which must be local where Harbor runs it: `benchtape sandbox build`) with the tree at /app and
the test dependencies: the project's wheelhouse unpacked on PYTHONPATH when it has one, else the
project environment container-level validation mounts (envs/: the venv with the project and its
test dependencies, a Node project's node_modules and node), copied into the image at the paths
it has here (`environment/host/`), with the variables and setup commands its verifier gets.
Without them the base image holds a Python and its standard library only, and no oracle could
pass (`No module named pytest`).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable

from benchtape.core.errors import BadInput

SCHEMA_VERSION = "1.4"  # what Harbor 0.25 writes
DEFAULT_WORKDIR = "/app"
PROJECT_WORKDIR = "/workspace"  # where Dockerfile.benchtape copies the tree (sandbox/project_image.py)
SITE_AT = "/opt/benchtape-site"


@dataclass
class Exported:
    id: str
    folder: Path
    workdir: str
    environment: str  # "Dockerfile.benchtape" or the base image's name
    dependencies: str = ""  # what the environment holds beside the tree: the wheelhouse, the project environment, or nothing

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "folder": str(self.folder), "workdir": self.workdir, "environment": self.environment, "dependencies": self.dependencies}


@dataclass
class _Layers:
    """What the base image gets beside the tree: Dockerfile lines (before the tree is copied),
    commands the verifier runs after the patches (a compiled extension's rebuild, `env.setup`),
    and one line saying what that is."""

    lines: list[str]
    setup: tuple[str, ...]
    said: str


def export_tasks(project: Any, tasks: list[Any], dest: Path, carry_env: CarryEnv) -> list[Exported]:
    """Each task (a `TaskSpec` mined from history, loaded by the caller) as a Harbor task folder
    in `dest`, a new (or empty) folder, written beside it first and moved in: a failure leaves
    nothing half-written. `carry_env`: the project environment a task's image carries when the
    project has neither a Dockerfile.benchtape nor a wheelhouse."""
    from benchtape.replay.report import new_folder

    for task in tasks:
        if task.runtime is not None:
            raise BadInput(f"task {task.id} is a Harbor task folder already", file=str(task.path), fix=f"copy {task.dir} as it is")
        if task.reference_patch is None or task.verify.placeholder:
            raise BadInput(f"task {task.id} has no reference patch or verify command to export", file=str(task.path), fix=f"benchtape task lint {task.id} --fix, then benchtape task validate {task.id}")
        broken = _failing_with_the_fix(task)
        if broken:
            raise BadInput(
                f"task {task.id}'s verify command fails with its reference fix too ({broken}: tests broken before the fix, which benchtape leaves out of "
                "FAIL_TO_PASS and PASS_TO_PASS), and the exported tests/test.sh rewards the command's exit status: under Harbor its own oracle would get 0",
                file=str(task.path),
                fix=f"leave those tests out of verify.command (pytest: --deselect ID; jest: --testPathIgnorePatterns), then benchtape task validate {task.id} and export again",
            )
    out = []
    with new_folder(dest) as tmp:
        for task in tasks:
            out.append(_export_one(project, task, tmp / task.id, carry_env))
    return [Exported(e.id, dest / e.id, e.workdir, e.environment, e.dependencies) for e in out]


def _failing_with_the_fix(task: Any) -> str:
    """What the validation's reference run failed ('2 failed'), when its exit status was no
    pass; '' otherwise (or unvalidated)."""
    counts = task.validation.reference if task.validation is not None else {}
    said = [f"{counts[k]} {k}" for k in ("failed", "errored") if counts.get(k)]
    return ", ".join(said)


def _export_one(project: Any, task: Any, folder: Path, carry_env: CarryEnv) -> Exported:
    from benchtape.sandbox.baseimage import BASE_IMAGE
    from benchtape.sandbox.checkout import export_commit

    folder.mkdir(parents=True)
    env_dir = folder / "environment"
    env_dir.mkdir()
    with tempfile.TemporaryDirectory(prefix=f"benchtape-export-{task.id}-") as scratch:
        base = Path(scratch) / "base"
        export_commit(project.root, task.source.base_commit, base)  # the tree, no .git
        dockerfile = project.root / "Dockerfile.benchtape"
        layers = _Layers([], (), "the project image's own")
        if dockerfile.is_file():
            workdir, environment = PROJECT_WORKDIR, "Dockerfile.benchtape"
            shutil.copytree(base, env_dir, symlinks=True, dirs_exist_ok=True)
            (env_dir / "Dockerfile").write_text(dockerfile.read_text(encoding="utf-8").rstrip("\n") + f"\nWORKDIR {workdir}\n")
        else:
            workdir, environment = DEFAULT_WORKDIR, BASE_IMAGE
            shutil.copytree(base, env_dir / "workspace", symlinks=True)
            wheels = project.wheelhouse()
            layers = _wheelhouse(wheels, env_dir, Path(scratch)) if wheels is not None else _carried(carry_env(task, base), env_dir, workdir)
            lines = [f"FROM {BASE_IMAGE}", *layers.lines, f"COPY workspace/ {workdir}/", f"WORKDIR {workdir}"]
            (env_dir / "Dockerfile").write_text("\n".join(lines) + "\n")
        _files_after(base, task.tests_patch(), Path(scratch) / "tests", folder / "tests", "tests.patch")
        _files_after(base, task.reference(), Path(scratch) / "reference", folder / "solution", "the reference patch")
    (folder / "instruction.md").write_text(task.prompt(), encoding="utf-8")
    _script(folder / "tests" / "test.sh", _test_sh(task, layers.setup))
    _script(folder / "solution" / "solve.sh", "#!/bin/bash\n# The oracle: the reference patch's files, as benchtape's reference phase leaves them.\nset -e\n" + _put_in_place())
    (folder / "task.toml").write_text(_task_toml(task, workdir), encoding="utf-8")
    return Exported(task.id, folder, workdir, environment, layers.said)


def _wheelhouse(wheels: Path, env_dir: Path, scratch: Path) -> _Layers:
    """The project's wheelhouse unpacked on PYTHONPATH (the test dependencies, offline)."""
    from benchtape.sandbox.verifier_box import CONTAINER_PATH
    from benchtape.sandbox.wheelhouse import site_for

    shutil.copytree(site_for(wheels, scratch / "site-cache"), env_dir / "site", symlinks=True, ignore=shutil.ignore_patterns(".complete"))
    return _Layers([f"COPY site/ {SITE_AT}/", f"ENV PYTHONPATH={SITE_AT} PATH={SITE_AT}/bin:{CONTAINER_PATH}"], (), f"test dependencies from the wheelhouse {wheels}")


@dataclass
class CarriedEnv:
    """The project environment a folder's image carries, made by the caller (benchtape.app.tasks
    builds it, or takes it from the cache, as container-level validation does): what a container
    box mounts read-only at its own path (the venv's folder; a Node project's node and npm;
    `env.tools`), the box's variables for a working directory, the setup commands its verifier
    runs first, and how the generated files (a VCS version file, a Node project's node_modules)
    are put in a tree. `mounts` empty: there is none, and `said` says why."""

    mounts: list[str]
    variables: Callable[[str], dict[str, str]]
    setup: tuple[str, ...]
    materialize: Callable[[Path], Any]
    said: str


CarryEnv = Callable[[Any, Path], CarriedEnv]  # (task, its base tree) -> the environment its image carries


def _carried(carried: CarriedEnv, env_dir: Path, workdir: str) -> _Layers:
    """The project environment as image layers: each mount copied to its own path
    (`environment/host/`, `COPY host/ /`), the generated files in the tree, the variables as
    ENV lines; its setup commands go first in tests/test.sh."""
    if not carried.mounts:
        return _Layers([], carried.setup, carried.said)
    host = env_dir / "host"
    for mount in carried.mounts:
        source = Path(mount)
        target = host / source.relative_to(source.anchor)
        target.parent.mkdir(parents=True, exist_ok=True)
        if source.is_dir():
            shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(source, target)
    _links_within(host)
    carried.materialize(env_dir / "workspace")
    lines = ["COPY host/ /"] + [f"ENV {name}={_env_value(value)}" for name, value in sorted(carried.variables(workdir).items())]
    return _Layers(lines, carried.setup, carried.said)


def _links_within(host: Path, rounds: int = 8) -> None:
    """Every symlink under `host/` (this host's paths, copied to the image by `COPY host/ /`)
    made to point inside it, relatively: Harbor refuses a task folder with a link that leaves it
    ("Input paths must stay within the task"), and a venv's `bin/python` links to the
    interpreter's absolute path (/usr/bin/python3). A target already copied (a Node project's
    npm folder) is linked to where it is; any other (the interpreter) is copied in at its own
    path first (the image then holds the same file twice over: the base image has it too)."""
    for _ in range(rounds):
        changed = False
        for folder, dirs, files in os.walk(host):
            for name in (*dirs, *files):
                link = Path(folder) / name
                if link.is_symlink() and _relink(host, link):
                    changed = True
        if not changed:
            return


def _relink(host: Path, link: Path) -> bool:
    """One link made relative and inside `host`; False when it already was."""
    target = os.readlink(link)
    here = "/" + str(link.parent.relative_to(host))
    aim = os.path.normpath(target if os.path.isabs(target) else os.path.join(here, target))  # the path it names in the image
    inside = host / aim.lstrip("/")
    if not os.path.isabs(target) and os.path.lexists(inside):
        return False  # relative, and what it names is in the folder
    if not os.path.lexists(inside):
        real = os.path.realpath(aim)  # on this host: the file the image has at that path
        inside = host / real.lstrip("/")
        if not os.path.lexists(inside):
            inside.parent.mkdir(parents=True, exist_ok=True)
            if os.path.isdir(real):
                shutil.copytree(real, inside, symlinks=True)
            else:
                shutil.copy2(real, inside)
    link.unlink()
    link.symlink_to(os.path.relpath(inside, link.parent))
    return True


def _env_value(value: str) -> str:
    """A value as a Dockerfile ENV line reads it back unchanged: double-quoted, with `\\`, `\"`
    and `$` escaped (ENV expands variables)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def _files_after(base: Path, patch: bytes, scratch: Path, dest: Path, what: str) -> None:
    """`dest/files/…` the files `patch` changes or adds, as they are once it is applied to the
    base tree; `dest/deleted` the paths it removes (one a line)."""
    from benchtape.sandbox.patches import PatchFailed, apply_patch, changed_paths

    dest.mkdir(parents=True, exist_ok=True)
    (dest / "files").mkdir()
    if not patch.strip():
        (dest / "deleted").write_text("")
        return
    tree = scratch
    shutil.copytree(base, tree, symlinks=True)
    try:
        apply_patch(tree, patch)
    except PatchFailed as exc:
        raise BadInput(f"{what} does not apply to the base tree: {str(exc)[:300]}", fix="benchtape task validate ID shows why; recreate the task") from None
    deleted = []
    for rel in changed_paths(patch):
        source = tree / rel
        if source.is_file() or source.is_symlink():
            target = dest / "files" / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=False)
        elif not source.exists():
            deleted.append(rel)
    (dest / "deleted").write_text("".join(f"{p}\n" for p in deleted))


def _put_in_place() -> str:
    """The lines that put a folder's `files/` in place and remove its `deleted` paths, read
    beside the script itself: Harbor mounts them at /solution and /tests, and benchtape's own
    oracle runs solve.sh from a copy elsewhere (`cp: cannot stat '/solution/files/.'`)."""
    return (
        'here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"\n'
        'cp -a "$here/files/." ./\n'
        'while IFS= read -r path; do [ -n "$path" ] && rm -rf -- "./$path"; done < "$here/deleted"\n'
    )


def _test_sh(task: Any, env_setup: tuple[str, ...] = ()) -> str:
    from benchtape.sandbox.fail_fast import every_test
    from benchtape.sandbox.testcounts import runner_of

    v = task.verify
    steps = "".join(f"{c}\n" for c in (*env_setup, *v.setup))
    return (
        "#!/bin/bash\n"
        "# The hidden verifier of a task mined by benchtape: the tests patch's files put in place,\n"
        "# then the task's setup and verify command; reward 1 when the command passes, else 0.\n"
        "mkdir -p /logs/verifier\n"
        "echo 0 > /logs/verifier/reward.txt\n"
        "set -e\n"
        + _put_in_place()
        + steps
        + "set +e\n"
        + f"{every_test(v.command, runner_of(v.command))}\n"
        + 'status=$?\n'
        + 'if [ "$status" -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; fi\n'
        + 'echo "benchtape verify command exited $status"\n'
    )


def _script(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    os.chmod(path, 0o755)


def _task_toml(task: Any, workdir: str) -> str:
    s = task.source
    meta = {"id": task.id, "remote": s.remote, "pull_request": s.pull_request, "base_commit": s.base_commit, "fix_commit": s.fix_commit, "fingerprint": task.fingerprint("")}
    lines = [
        f'schema_version = "{SCHEMA_VERSION}"',
        f"artifacts = [{_q(workdir)}]  # the working directory: all a separate verifier is handed",
        "",
        "[task]",
        f"name = {_q('benchtape/' + task.id)}",
        f"description = {_q(task.description or f'mined by benchtape from {s.pull_request or s.fix_commit or s.base_commit}')}",
        "",
        "[metadata.benchtape]",
        *(f"{k} = {_q(str(v))}" for k, v in meta.items() if v),
        "",
        "[verifier]",
        f"timeout_sec = {float(task.verify.timeout)}",
        'environment_mode = "separate"  # a fresh copy of the environment, given the agent\'s working directory',
        "",
        "[verifier.environment]  # the verifier's own environment: its network",
        f'network_mode = "{"public" if task.verify.network else "no-network"}"',
        "",
        "[agent]",
        "timeout_sec = 1800.0",
        "",
        "[environment]",
        'network_mode = "public"',
        "build_timeout_sec = 600.0",
        f"workdir = {_q(workdir)}",
        "",
    ]
    return "\n".join(lines)


def _q(text: str) -> str:
    """A TOML basic string."""
    import json

    return json.dumps(text)


