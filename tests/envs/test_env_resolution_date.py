"""A task's Python packages resolve as published when its commit was made, never today's: an
old commit's unpinned dependencies had moved on (inflect's tests of 2023 read
`pydantic.typing.Annotated`, gone from the pydantic 2 that today's resolution picked, and its
pytest-flake8 no longer loaded under pytest 9). Never before this Python was established (a
tool of 2019 would predate 3.11), and `env.resolve: today` keeps today's. Really built: uv, PyPI."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from repokit import git, init_repo, write_files

from benchtape.envs.build import ensure_env
from benchtape.envs.project_env import recipe_at
from benchtape.spec.project import load_project

PYPROJECT = '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "dated"\nversion = "0.1"\ndependencies = ["packaging"]\n'


def _repo(root: Path, when: str, config: str = "") -> tuple[Path, str]:
    init_repo(root)
    write_files(root, {"pyproject.toml": PYPROJECT, "dated/__init__.py": "", **({".benchtape/config.yaml": config} if config else {})})
    git(root, "add", "-A")
    env = {**os.environ, "GIT_COMMITTER_DATE": when, "GIT_AUTHOR_DATE": when}
    subprocess.run(["git", "commit", "-qm", "dated"], cwd=root, env=env, check=True)
    return root, git(root, "rev-parse", "HEAD")


def _packaging(env_python: Path) -> str:
    done = subprocess.run([str(env_python), "-c", "import importlib.metadata as m; print(m.version('packaging'))"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_packages_resolve_as_of_the_commit_never_before_the_python(tmp_path: Path):
    root, commit = _repo(tmp_path / "dated", "2023-08-15T12:00:00Z")
    recipe = recipe_at(load_project(root), commit)
    assert recipe.resolved_at == "2023-09-01" and any("resolved as published before 2023-09-01" in n for n in recipe.notes)
    env = ensure_env(recipe, root, cache=tmp_path / "cache")
    assert env.venv is not None and _packaging(env.venv / "bin" / "python") == "23.1"  # 23.2 came in October 2023
    # a commit of 2019 on this Python: as of when it was established, not of 2019
    old_root, old = _repo(tmp_path / "older", "2019-06-01T12:00:00Z")
    floor = recipe_at(load_project(old_root), old).resolved_at
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    from benchtape.envs.recipe import ESTABLISHED

    assert floor == ESTABLISHED[version] and floor > "2019-07-01"
    from benchtape.envs.recipe import resolution_date
    from benchtape.spec.project_tree import GitTree

    assert resolution_date(GitTree(old_root, old), "3.99") is None  # a Python newer than the table: today's releases
    assert resolution_date(GitTree(old_root, old), "3.6") == "2019-07-01"  # an old one: the commit's month


def test_resolve_today_keeps_todays_releases(tmp_path: Path):
    root, commit = _repo(tmp_path / "today", "2023-08-15T12:00:00Z", "apiVersion: benchtape/v1alpha1\nkind: Project\nenv: {resolve: today}\n")
    recipe = recipe_at(load_project(root), commit)
    assert recipe.resolved_at is None
    env = ensure_env(recipe, root, cache=tmp_path / "cache")
    assert env.venv is not None and tuple(int(x) for x in _packaging(env.venv / "bin" / "python").split(".")[:2]) >= (24, 0)


def test_an_override_replaces_what_the_project_pins(tmp_path: Path):
    """`env.overrides` installs in place of the project's own pin, where `env.install` beside it
    is unsatisfiable (boltons' requirements-test.txt pins pytest==3.0.7, which does not start on
    Python 3.11: `overrides: [pytest==7.3.1]` made its task 205 valid)."""
    config = "apiVersion: benchtape/v1alpha1\nkind: Project\nenv: {requirements: [requirements-test.txt], overrides: ['packaging==23.0']}\n"
    root, commit = _repo(tmp_path / "pinned", "2023-08-15T12:00:00Z", config)
    (root / "requirements-test.txt").write_text("packaging==21.3\n")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "pin")
    commit = git(root, "rev-parse", "HEAD")
    recipe = recipe_at(load_project(root), commit)
    assert recipe.overrides == ("packaging==23.0",) and recipe.config.bound()["overrides"] == ["packaging==23.0"]
    env = ensure_env(recipe, root, cache=tmp_path / "cache")
    assert env.venv is not None and _packaging(env.venv / "bin" / "python") == "23.0"  # not the file's 21.3
