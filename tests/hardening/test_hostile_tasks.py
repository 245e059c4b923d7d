"""A task is someone else's code: what its verifier, its folder or its files contain must never
have the host read a file of its own, hang past the task's timeout, or leave work behind
(issue 44, items 2, 3, 5, 7). Real boxes: level home through unshare, level container through
the real Docker engine (skipped loudly without one, failed in CI)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from benchtape.spec.harbor_task import load_harbor_task

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"
SECRET = "host-secret-3f9c1d: the host read this file"


@pytest.fixture(scope="module")
def engine() -> None:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: hostile tasks at level container NOT RUN: {why}")


def hostile(tmp_path: Path, test_sh: str, name: str = "hostile") -> Path:
    folder = shutil.copytree(FIXTURES / "hello-file", tmp_path / name)
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\n" + test_sh)
    return folder


def run_verifier(folder: Path, level: str, tmp_path: Path) -> Any:
    from benchtape.sandbox import harbor_env

    env = harbor_env.prepare(load_harbor_task(folder), level)
    work = harbor_env.starting_workspace(env, tmp_path / "work")
    return harbor_env.run_verifier(env, work, tmp_path / "scratch")


def host_secret(tmp_path: Path) -> Path:
    secret = tmp_path / "host-only" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET + "\n")
    return secret


LINKS = {
    "reward.txt": 'ln -s {secret} /logs/verifier/reward.txt\n',
    "reward.json": 'ln -s {secret} /logs/verifier/reward.json\n',
}


def _check_not_followed(ev: Any, secret: Path) -> None:
    assert ev.status == "failed" and ev.reward is None, ev
    assert SECRET not in ev.detail and "3f9c1d" not in ev.detail and "3f9c1d" not in str(ev.to_dict())
    assert "symbolic link" in ev.detail, ev.detail


@pytest.mark.parametrize("which", ["reward.txt", "reward.json"])
def test_a_reward_linked_to_a_host_file_is_not_followed_at_home(tmp_path: Path, which: str):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    secret = host_secret(tmp_path)
    ev = run_verifier(hostile(tmp_path, LINKS[which].format(secret=secret)), "home", tmp_path)
    _check_not_followed(ev, secret)


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
@pytest.mark.parametrize("which", ["reward.txt", "reward.json"])
def test_a_reward_linked_to_a_host_file_is_not_followed_in_a_container(engine: None, tmp_path: Path, which: str):
    secret = host_secret(tmp_path)
    ev = run_verifier(hostile(tmp_path, LINKS[which].format(secret=secret)), "container", tmp_path)
    _check_not_followed(ev, secret)


def test_a_reward_file_is_read_bounded_and_only_as_a_regular_file(tmp_path: Path):
    from benchtape.sandbox.verifier import REWARD_LIMIT, read_reward

    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "reward.txt").write_text("1" + " " * REWARD_LIMIT)
    with pytest.raises(ValueError, match="larger than"):
        read_reward(logs)
    (logs / "reward.txt").unlink()
    os.mkfifo(logs / "reward.txt")  # a FIFO nobody writes: opening it to read would block forever
    with pytest.raises(ValueError, match="no regular file"):
        read_reward(logs)
    (logs / "reward.txt").unlink()
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "reward.txt").write_text("1\n")
    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "logs").symlink_to(tmp_path / "elsewhere")  # a link on the way, not only at the end
    with pytest.raises(ValueError, match="symbolic link"):
        read_reward(tmp_path / "tree", "logs")


@pytest.mark.parametrize("written", ["1e309", "inf", "nan", "-inf", '{"reward": 1e309}'])
def test_only_a_finite_reward_counts(tmp_path: Path, written: str):
    from benchtape.sandbox.verifier import read_reward

    name = "reward.json" if written.startswith("{") else "reward.txt"
    (tmp_path / name).write_text(written + "\n")
    with pytest.raises(ValueError, match="no finite number|infinity"):  # orjson itself refuses 1e309
        read_reward(tmp_path)


def test_an_infinite_reward_does_not_pass_the_verifier(tmp_path: Path):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces (level home of a Harbor task)")
    ev = run_verifier(hostile(tmp_path, "echo 1e309 > /logs/verifier/reward.txt\n"), "home", tmp_path)
    assert ev.status == "failed" and ev.reward is None and "no finite number" in ev.detail, ev
