"""A project's environment at a task's base commit: its recipe (read through git) and the
built venv, as validation and grading both ask for them (tasks/validate.py,
replay/task_verdict.py): one function each, so a task is graded in the environment it was
validated in."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable

from benchtape.envs.build import Progress, ProjectEnv, ensure_env
from benchtape.envs.node import describe, npm_folder
from benchtape.envs.recipe import EnvError, Recipe, recipe_for
from benchtape.spec.project import Project
from benchtape.spec.project_tree import GitTree

# What to do when a project's environment cannot be built: said by validation and by a Harbor export alike.
ENV_BUILD_FIX = 'fix what the message names, or declare what the build needs with `env:` in .benchtape/config.yaml (docs/tasks.md, "Project environments"): a dev tool no test needs whose pin cannot build or install here is left out with `env.exclude: [mypy]` (a Node package likewise), a Python pin raised with `env.overrides: ["typed-ast>=1.5"]`; `benchtape doctor` shows what was detected'


def recipe_at(project: Project, commit: str, *, python: str | None = None, fix_commit: str | None = None) -> Recipe:
    """The environment recipe of `project` at `commit` (its declarations read from git), with
    what a task's `fix_commit` newly declares (a test dependency its pull request added) when
    that commit is in the repository."""
    fix = GitTree(project.root, fix_commit) if fix_commit and fix_commit != commit and _has_commit(project.root, fix_commit) else None
    return recipe_for(GitTree(project.root, commit), project.env, python=python, fix=fix)


def _has_commit(root: Path, commit: str) -> bool:
    import subprocess

    done = subprocess.run(["git", "-C", str(root), "cat-file", "-e", f"{commit}^{{commit}}"], capture_output=True, timeout=30)
    return done.returncode == 0


def environment_at(project: Project, commit: str, base_tree: Path, *, progress: Progress | None = None, fix_commit: str | None = None) -> ProjectEnv:
    """The built environment of `project` at `commit` (`base_tree`: that commit's exported tree,
    used only when it is not cached yet). Raises EnvError when it cannot be built."""
    return ensure_env(recipe_at(project, commit, fix_commit=fix_commit), base_tree, progress=progress)


def project_environment(project: Project, commit: str, base_tree: Path, level: str, progress: Progress | None = None, *, container_python: str | None = None, fix_commit: str | None = None) -> ProjectEnv:
    """The environment a task's verifier runs in at `level`: the venv built (or reused) on this
    host. In a container of benchtape's base image (which holds this host's system Python at
    its own path, `container_python`), the same recipe built with that interpreter and mounted
    read-only at the same path: the network at build time, none in the box. A project that
    brings its own environment (a Dockerfile.benchtape, or a .benchtape/wheelhouse/) keeps it:
    the recipe only, nothing built. `fix_commit`: the task's, whose newly declared requirements
    are installed too (validation and grading both pass it: one environment per task)."""
    recipe = recipe_at(project, commit, fix_commit=fix_commit)
    if project.dockerfile is not None or project.wheelhouse() is not None:
        own = f"the project image ({project.dockerfile.name})" if project.dockerfile is not None else f"the wheelhouse ({project.wheelhouse()})"
        return ProjectEnv(recipe, notes=[f"the project brings its own environment, {own}: no venv is built"])
    if level == "container" and recipe.detection.language == "python":
        if container_python is None:
            return ProjectEnv(recipe, notes=["no interpreter for benchtape's base image: no venv is built"])
        return ensure_env(recipe_at(project, commit, python=container_python, fix_commit=fix_commit), base_tree, progress=progress)
    return ensure_env(recipe, base_tree, progress=progress)


def env_notes(env: ProjectEnv) -> list[str]:
    """One line on the environment a report shows: built or reused, where, by what."""
    det = env.recipe.detection
    how = f"built in {env.seconds:.1f}s" if env.built else "reused (cached)"
    if env.node_modules:
        return [f"project environment {how}: {env.folder} (node {env.recipe.node}, {describe(det.manager, det.manager_version, det.lock)}; {', '.join(env.generated)} linked into each verifier tree)", *env.recipe.notes, *env.notes]
    if env.venv is None:
        return [*env.recipe.notes, *env.notes]
    installed = "the project installed editable" if env.project_installed else "the project NOT installed (its dependencies only)"
    return [f"project environment {how}: {env.folder} ({env.installer}, Python {env.recipe.python_version}, {installed}; tests import {', '.join(env.packages) or 'the tree'} from {', '.join(det.roots)})", *env.recipe.notes, *env.notes]


def environment_record(env: ProjectEnv) -> dict[str, Any]:
    """What a validation phase or a graded cell records about its environment (the installed
    distributions included: what the run actually imported from)."""
    return env.to_dict()


def env_variables(env: ProjectEnv, level: str) -> Callable[[str, str], dict[str, str]]:
    """The box's `env_for`: the venv first on PATH and the tree's import roots on PYTHONPATH
    (at home, and in a container where the venv is mounted at its own path); with no venv (the
    project brings its own environment, or none) only `env.variables`, the box's own PYTHONPATH
    (a wheelhouse's) left as it is."""
    return env.run_env


def env_mounts(env: ProjectEnv, level: str) -> list[str]:
    """What a container box mounts read-only at its own path: the environment's folder (a
    Node project's node and npm instead: its node_modules is in the tree), and each of `env.tools` (a host program `env.setup` runs, such as msgfmt) with the shared
    libraries `ldd` names (benchtape's base image is this host's files at the same paths, so a
    host binary runs there as it does here)."""
    if level != "container":
        return []
    mounts = [str(env.folder)] if env.venv is not None else []  # a node_modules is in the tree itself (linked)
    if env.node_modules and env.folder is not None:  # node and npm, which benchtape's base image lacks, and the links to npm's scripts
        npm = npm_folder()
        mounts += [p for p in [*host_program("node"), *([npm] if npm else []), str(env.folder / "bin")] if p not in mounts]
    for tool in env.recipe.config.tools:
        mounts += [p for p in host_program(tool) if p not in mounts]
    return mounts


def host_program(name: str) -> list[str]:
    """The files a host program needs to run elsewhere: itself and its shared libraries."""
    import re
    import shutil
    import subprocess

    exe = shutil.which(name)
    if exe is None:
        raise EnvError(f"`env.tools` names {name!r}, which is not on this host's PATH: install it (for msgfmt: apt-get install gettext)")
    files = [os.path.realpath(exe)]
    done = subprocess.run(["ldd", files[0]], capture_output=True, text=True, timeout=30)
    for lib in re.findall(r"=>\s+(/\S+)", done.stdout):
        # by the name the loader asks for, in its real folder (/lib is /usr/lib on a merged-usr host)
        path = os.path.join(os.path.realpath(os.path.dirname(lib)), os.path.basename(lib))
        if path not in files and not re.search(r"/(?:libc|libm|libpthread|libdl|ld-linux[^/]*)\.so", path):
            files.append(path)
    return files
