"""A VCS-versioned project's environment is built as the release its base commit descends from
(what a checkout would call itself), not a made-up 0.0.0: with pluggy at 0.0.0, uv resolved its
`testing` group to a pytest of 2016 (modern pytest requires pluggy>=1.5), which no longer
imports on Python 3.11, and every pluggy task read `missing_dependency: no module named 'UserDict'`."""

from __future__ import annotations

import subprocess
from pathlib import Path

from benchtape.envs.recipe import PRETEND_VERSION, recipe_for
from benchtape.spec.project_tree import FolderTree, GitTree

PYPROJECT = """\
[build-system]
requires = ["setuptools>=64", "setuptools-scm>=8"]
build-backend = "setuptools.build_meta"

[project]
name = "mypkg"
dynamic = ["version"]

[tool.setuptools_scm]
"""


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], capture_output=True, text=True, check=True).stdout.strip()


def _repo(tmp_path: Path) -> tuple[Path, str, str]:
    repo = tmp_path / "repo"
    (repo / "src" / "mypkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text(PYPROJECT)
    (repo / "src" / "mypkg" / "__init__.py").write_text("")
    _git(repo.parent, "init", "-q", str(repo))
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "first")
    before = _git(repo, "rev-parse", "HEAD")
    _git(repo, "tag", "v1.5.0")
    (repo / "src" / "mypkg" / "x.py").write_text("X = 1\n")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-qm", "second")
    return repo, before, _git(repo, "rev-parse", "HEAD")


def test_the_build_is_told_the_newest_release_its_base_descends_from(tmp_path: Path):
    repo, tagged, after = _repo(tmp_path)
    assert GitTree(repo, tagged).release() == "1.5.0"
    assert GitTree(repo, after).release() == "1.5.0"  # a commit after the tag is still that release's line
    recipe = recipe_for(GitTree(repo, after))
    assert recipe.detection.scm and recipe.version == "1.5.0" and recipe.to_dict()["version"] == "1.5.0"


def test_no_release_before_the_base_or_no_git_keeps_the_stated_default(tmp_path: Path):
    repo, tagged, _ = _repo(tmp_path)
    _git(repo, "tag", "-d", "v1.5.0")
    assert GitTree(repo, tagged).release() is None and recipe_for(GitTree(repo, tagged)).version == PRETEND_VERSION
    assert recipe_for(FolderTree(repo)).version == PRETEND_VERSION


def test_a_newer_tag_is_the_version_and_keeps_the_environment(tmp_path: Path):
    repo, tagged, after = _repo(tmp_path)
    at_release = recipe_for(GitTree(repo, after))
    _git(repo, "tag", "v1.6.0", after)
    again = recipe_for(GitTree(repo, after))
    assert again.version == "1.6.0" and again.key() == at_release.key()  # a tag changes no declaration: the cached environment stands
