"""A repository is someone else's: the names of its files must not slip a change past the
protected-paths guard, move a test into the reference patch, or write control sequences onto
the user's terminal (issue 44, items 8 and 9). Every patch here is made by the real git."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from benchtape.sandbox.patches import apply_patch, changed_paths, under

HOSTILE_NAMES = ["tésts.py", 'quo"te.py', "back\\slash.py", "sp ace.py", "tab\there.py", "new\nline.py", "esc\x1b[31mred.py", "a b/c d.py"]


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args], check=True, capture_output=True).stdout


def repo_with(tmp_path: Path, names: list[str]) -> Path:
    repo = tmp_path / "repo"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q")
    for name in names:
        (repo / "tests" / name).parent.mkdir(parents=True, exist_ok=True)
        (repo / "tests" / name).write_text("x = 1\n")
    (repo / "src.py").write_text("y = 1\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    return repo


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_the_guard_sees_a_quoted_path_git_wrote(tmp_path: Path, name: str):
    repo = repo_with(tmp_path, [name])
    (repo / "tests" / name).write_text("x = 2\n")
    (repo / "src.py").write_text("y = 2\n")
    patch = git(repo, "diff")
    assert sorted(changed_paths(patch)) == sorted([f"tests/{name}", "src.py"])
    assert under(changed_paths(patch), ["tests/"]) == [f"tests/{name}"]


def test_renames_copies_deletions_and_binary_changes_name_every_side(tmp_path: Path):
    repo = repo_with(tmp_path, ["tésts.py", "sp ace.py", 'quo"te.py'])
    git(repo, "mv", "tests/tésts.py", "moved é.py")
    (repo / "tests" / "sp ace.py").unlink()
    (repo / "tests" / 'quo"te.py').write_bytes(b"\0\1\2binary")
    git(repo, "add", "-A")
    patch = git(repo, "diff", "--cached", "--binary", "-M")
    assert sorted(changed_paths(patch)) == sorted(["tests/tésts.py", "moved é.py", "tests/sp ace.py", 'tests/quo"te.py'])
    assert sorted(under(changed_paths(patch), ["tests"])) == sorted(["tests/tésts.py", "tests/sp ace.py", 'tests/quo"te.py'])


def test_a_patch_with_quoted_names_still_applies(tmp_path: Path):
    repo = repo_with(tmp_path, HOSTILE_NAMES)
    for name in HOSTILE_NAMES:
        (repo / "tests" / name).write_text("x = 3\n")
    patch = git(repo, "diff")
    tree = tmp_path / "tree"
    tree.mkdir()
    subprocess.run(["tar", "-x", "-C", str(tree)], input=git(repo, "archive", "HEAD", "--format=tar"), check=True)
    apply_patch(tree, patch)
    assert all((tree / "tests" / n).read_text() == "x = 3\n" for n in HOSTILE_NAMES)
