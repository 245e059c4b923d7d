"""A task folder is someone else's: a link in it must not put a host file into the agent's
prompt or anything else the task loader reads (issue 44, item 3), and a task.toml that is
hostile in shape or value is refused at load with file, line and fix, exit 2 (item 10)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from e2e.cli import benchtape

from benchtape.core.errors import BadInput
from benchtape.spec.harbor_task import load_harbor_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"
SECRET = "host-secret-77ad0e: the host read this file"


def task_copy(tmp_path: Path, name: str = "linked") -> Path:
    return shutil.copytree(FIXTURES / "hello-file", tmp_path / "tasks" / name)


def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host-only" / "secret.md"
    secret.parent.mkdir(exist_ok=True)
    secret.write_text(SECRET + "\n")
    return secret


@pytest.mark.parametrize("rel", ["instruction.md", "tests/test.sh", "solution/solve.sh", "environment/Dockerfile", "task.toml"])
def test_a_file_linked_out_of_the_task_folder_is_refused(tmp_path: Path, rel: str):
    folder = task_copy(tmp_path)
    secret = host_secret(tmp_path)
    if rel == "task.toml":
        shutil.copy(folder / rel, secret)  # a valid task.toml, elsewhere on the host
    (folder / rel).unlink()
    (folder / rel).symlink_to(secret)
    with pytest.raises(BadInput) as raised:
        load_harbor_task(folder)
    assert f"{rel} is a link leading out of the task folder" in str(raised.value) and raised.value.file == str(folder / rel)


@pytest.mark.parametrize("sub", ["tests", "solution", "environment"])
def test_a_folder_linked_out_of_the_task_folder_is_refused(tmp_path: Path, sub: str):
    folder = task_copy(tmp_path)
    elsewhere = shutil.move(str(folder / sub), str(tmp_path / f"outside-{sub}"))
    (folder / sub).symlink_to(elsewhere)
    with pytest.raises(BadInput, match="link leading out of the task folder"):
        load_harbor_task(folder)


def test_a_link_that_stays_inside_the_task_folder_is_the_authors_business(tmp_path: Path):
    folder = task_copy(tmp_path)
    (folder / "prompt.md").write_text("Write hello.txt\n")
    (folder / "instruction.md").unlink()
    (folder / "instruction.md").symlink_to("prompt.md")
    assert load_harbor_task(folder).prompt() == "Write hello.txt\n"


def test_the_fingerprint_never_reads_through_a_link(tmp_path: Path):
    folder = task_copy(tmp_path)
    secret = host_secret(tmp_path)
    (folder / "tests" / "data.txt").symlink_to(secret)
    before = load_harbor_task(folder).fingerprint("")
    secret.write_text("changed on the host\n")
    assert load_harbor_task(folder).fingerprint("") == before  # the link's text is hashed, not the host file


@pytest.mark.parametrize("level", ["home", "container"])
def test_validate_and_run_refuse_a_linked_instruction_with_exit_2(tmp_path: Path, level: str):
    repo = tmp_path / "project"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    folder = shutil.copytree(FIXTURES / "hello-file", repo / ".benchtape" / "tasks" / "linked")
    secret = host_secret(tmp_path)
    (folder / "instruction.md").unlink()
    (folder / "instruction.md").symlink_to(secret)
    for args in (("task", "validate", "linked", "--sandbox", level), ("run", str(folder), "--sandbox", level, "--harness", "mock")):
        done = benchtape(*args, cwd=repo, timeout=300)
        assert done.returncode == 2, (args, done.stdout, done.stderr)
        assert "instruction.md is a link leading out of the task folder" in done.stderr, done.stderr
        assert SECRET not in done.stdout + done.stderr
    db = repo / ".benchtape" / "benchtape.db"
    if db.exists():
        rows = subprocess.run(["sqlite3", str(db), "select count(*) from actions where data like '%77ad0e%'"], capture_output=True, text=True)
        assert rows.stdout.strip() in ("", "0"), rows


def test_a_mined_task_yaml_linked_out_is_refused(tmp_path: Path):
    from benchtape.spec.task import load_task

    folder = tmp_path / "tasks" / "17"
    folder.mkdir(parents=True)
    outside = tmp_path / "host-only" / "task.yaml"
    outside.parent.mkdir()
    outside.write_text("apiVersion: benchtape/v1\nkind: Task\n")
    (folder / "task.yaml").symlink_to(outside)
    with pytest.raises(BadInput, match="task.yaml is a link leading out of the task folder"):
        load_task(folder)
