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


# ---------------------------------------------------------------- item 9: a name with a newline, a name with ESC


ESC_NAME = "test_esc\x1b[2J\x1b]0;pwned\x07.py"


def harvested_repo(tmp_path: Path) -> Path:
    repo = tmp_path / "esc"
    (repo / "tests").mkdir(parents=True)
    git(repo, "init", "-q")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (repo / "tests" / "test_calc.py").write_text("import calc\n")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "base")
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "tests" / "test_new\nline.py").write_text("from calc import add\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    (repo / "tests" / ESC_NAME).write_text("x = 1\n")
    (repo / "tests" / "expected\nsums.json").write_text("[3]\n")  # test data: only `tests/**` makes it a test file
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "Fix add")
    return repo


def test_a_test_named_with_a_newline_goes_to_the_hidden_tests(tmp_path: Path):
    from e2e.cli import benchtape

    repo = harvested_repo(tmp_path)
    done = benchtape("task", "create", "HEAD", "--json", cwd=repo)
    assert done.returncode == 0, done.stderr
    import json

    doc = json.loads(done.stdout)["created"][0]
    assert sorted(doc["tests"]) == sorted(["tests/test_new\nline.py", "tests/expected\nsums.json", f"tests/{ESC_NAME}"]) and doc["reference"] == ["calc.py"]
    folder = Path(doc["folder"])
    assert "tests/expected\\nsums.json" in (folder / "tests.patch").read_text() and "expected" not in (folder / "reference.patch").read_text()


def test_no_control_sequence_from_a_file_name_reaches_the_terminal(tmp_path: Path):
    from e2e.cli import benchtape

    repo = harvested_repo(tmp_path)
    created = benchtape("task", "create", "HEAD", cwd=repo)
    assert created.returncode == 0, created.stderr
    assert "\x1b" not in created.stdout + created.stderr and "\x07" not in created.stdout
    assert "tests/test_esc\\x1b[2J\\x1b]0;pwned\\x07.py" in created.stdout and "tests/test_new\\nline.py" in created.stdout
    for args in (("task", "scan"), ("task", "list")):
        done = benchtape(*args, cwd=repo)
        assert "\x1b" not in done.stdout + done.stderr, args
    # an error naming a hostile path: escaped too
    task = next((repo / ".benchtape" / "tasks").iterdir())
    (task / "prompt.md").unlink()
    (task / "prompt.md").write_text("x")
    (task / "task.yaml").rename(tmp_path / "elsewhere\x1b[2J.yaml")
    (task / "task.yaml").symlink_to(tmp_path / "elsewhere\x1b[2J.yaml")
    done = benchtape("task", "validate", task.name, "--sandbox", "home", cwd=repo)
    assert done.returncode == 2 and "link leading out of the task folder" in done.stderr, done.stderr
    assert "\x1b" not in done.stderr and "elsewhere\\x1b[2J.yaml" in done.stderr


def test_printable_escapes_controls_and_bidi_and_keeps_the_rest():
    from benchtape.core.termtext import printable

    assert printable("ok é 日本 tab\there") == "ok é 日本 tab\\there"
    assert printable("a\x1b[31mb\x9bc\u202ed\x7f") == "a\\x1b[31mb\\x9bc\\u202ed\\x7f"
    assert printable("two\nlines\tkept", one_line=False) == "two\nlines\tkept"


@pytest.mark.parametrize("plain", [False, True])
def test_the_rich_console_pictures_control_characters_and_keeps_its_own_styles(capsys: pytest.CaptureFixture[str], plain: bool):
    """Tables and lines printed through benchtape's console (show, compare, grade, diff) carry
    names and an agent's text: ESC in them is pictured (␛), the table keeps its shape."""
    from rich.table import Table
    from rich.text import Text

    from benchtape.render import console

    out = console(plain)
    table = Table()
    table.add_column("file")
    table.add_row(f"tests/{ESC_NAME}")
    out.print(table)
    out.print(Text("agent said \x1b]0;title\x07 and \u202eevil", style="red"))
    printed = capsys.readouterr().out
    assert "\x1b]" not in printed and "\x1b[2J" not in printed and "\u202e" not in printed
    assert "tests/test_esc␛[2J␛]0;pwned" in printed and "agent said ␛]0;title" in printed
