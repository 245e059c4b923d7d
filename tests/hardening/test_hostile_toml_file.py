"""A task.toml that is no file is refused by what it is, at once (review finding: a FIFO named
task.toml in a dataset blocked `run` and `validate` for ever on its read)."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.harbor_task import load_harbor_tasks

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor" / "hello-file"


def _load_in_time(path: Path) -> BaseException | None:
    box: dict[str, BaseException] = {}

    def load() -> None:
        try:
            load_harbor_tasks(path)
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            box["exc"] = exc

    thread = threading.Thread(target=load, daemon=True)
    thread.start()
    thread.join(20)
    assert not thread.is_alive(), "loading a dataset with a FIFO task.toml hung"
    return box.get("exc")


def test_a_fifo_named_task_toml_is_refused_not_waited_on(tmp_path: Path):
    shutil.copytree(FIXTURE, tmp_path / "good")
    (tmp_path / "bad").mkdir()
    os.mkfifo(tmp_path / "bad" / "task.toml")
    exc = _load_in_time(tmp_path)
    assert isinstance(exc, BadInput) and "no regular file" in exc.render() and "bad/task.toml" in exc.render()


def test_a_huge_task_toml_is_refused_without_reading_it_whole(tmp_path: Path):
    task = tmp_path / "big"
    shutil.copytree(FIXTURE, task)
    with (task / "task.toml").open("ab") as f:
        f.truncate(3 << 30)  # a sparse 3 GiB file: reading it whole would take it all into memory
    with pytest.raises(BadInput, match="more than a task's settings need"):
        load_harbor_tasks(task)
