"""Where cells run, refused before anything runs when it cannot be right; and a node's reaper
on its own (no cluster): it outlives the process that started it and removes what a dead
attempt left."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from raykit import make_project, wait_for
from storekit import cli


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.mark.parametrize(
    ("args", "what", "fix"),
    [
        (["--executor", "ray"], "--executor ray needs the cluster's address", "--address HOST:PORT"),
        (["--executor", "ray", "--address", "127.0.0.1:9", "--sandbox", "workspace"], "cells at sandbox level workspace would change a worker's real files", "--sandbox home"),
        (["--executor", "rey"], "unknown executor 'rey'", "local, ray"),
    ],
)
def test_a_placement_that_cannot_run_is_refused_before_anything_runs(project, monkeypatch, args, what, fix):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    out = cli("run", "base", "--yes", *args, cwd=project)
    assert out.code == 2 and what in out.stderr and fix in out.stderr, out.stderr
    assert not (project / ".benchtape" / "benchtape.db").exists()  # nothing made, nothing spent


def test_executor_flags_belong_to_an_evaluation(tmp_path):
    bench = make_project(tmp_path / "proj") / "madbench.yaml"
    out = cli("run", bench, "--executor", "ray", cwd=tmp_path)
    assert out.code == 2 and "--executor applies to an evaluation" in out.stderr, out.stderr


def test_the_runs_setting_is_read_from_the_evaluation_and_the_address_from_the_environment(project, monkeypatch):
    (project / ".benchtape" / "config.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nruns: {executor: ray}\n")
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:6379")
    out = cli("run", "base", "--dry-run", cwd=project)
    assert out.code == 0 and "cells run on the Ray cluster at 10.0.0.5:6379" in out.stdout + out.stderr, out.stdout + out.stderr
    out = cli("run", "base", "--dry-run", "--executor", "local", cwd=project)
    assert out.code == 0 and "Ray cluster" not in out.stdout + out.stderr


def dying_attempt(base: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """A worker of the node: it records attempt `tok`, starts the reaper, and dies without cleaning up."""
    code = "import sys; from pathlib import Path; from benchtape.recorder.node_reaper import register_attempt, ensure_reaper; b = Path(sys.argv[1]); register_attempt(b, 'tok'); ensure_reaper(b)"
    return subprocess.run([sys.executable, "-c", code, str(base)], env=env, capture_output=True, text=True, timeout=60)


def test_a_nodes_reaper_outlives_its_starter_removes_a_dead_attempts_marker_and_leaves_when_idle(tmp_path):
    base = tmp_path / "node"
    env = {**os.environ, "BENCHTAPE_REAPER_IDLE": "1"}
    worker = dying_attempt(base, env)
    assert worker.returncode == 0, worker.stderr
    from benchtape.recorder.node_reaper import LOCK, _held

    assert _held(base / LOCK)  # the reaper runs, though the process that started it is gone
    assert wait_for(lambda: not (base / "attempts" / "tok").exists(), 30)  # its marker named a dead process
    assert wait_for(lambda: not _held(base / LOCK), 30)  # idle: it left


def test_a_dead_attempts_folder_still_held_is_reaped_once_let_go(tmp_path):
    """A dead attempt's session folder whose lock another process still holds (its supervisor
    draining output or removing a container, slow under load) cannot be claimed at the
    reaper's first look: the reaper keeps the attempt's marker and looks again, and removes
    the folder once it is let go (it used to drop the marker at once and leave the folder)."""
    base, tmp = tmp_path / "node", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "BENCHTAPE_REAPER_IDLE": "1", "TMPDIR": str(tmp)}
    hold = "import sys; from benchtape.sandbox.capture import SessionFolder; f = SessionFolder.create(db=sys.argv[1]); print(f.path, flush=True); sys.stdin.read()"
    holder = subprocess.Popen([sys.executable, "-c", hold, str(base / "shard.db")], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        folder = Path(holder.stdout.readline().strip())
        assert folder.parent == tmp and (folder / "session.json").is_file()
        worker = dying_attempt(base, env)
        assert worker.returncode == 0, worker.stderr
        from benchtape.recorder.node_reaper import LOCK, _held

        assert _held(base / LOCK)
        assert not wait_for(lambda: not (base / "attempts" / "tok").exists(), 3)  # looked at (every 0.5 s), kept: the folder is held
        assert folder.is_dir()
    finally:
        holder.communicate("", timeout=30)  # let go
    assert wait_for(lambda: not folder.exists(), 30), list(folder.iterdir())
    assert wait_for(lambda: not (base / "attempts" / "tok").exists(), 30)
    assert wait_for(lambda: not _held(base / LOCK), 30)  # and it left, idle


def test_a_dead_workers_spare_folder_naming_no_store_is_reaped_too(tmp_path):
    """A worker makes folders ahead that name no store yet (the next session's spare, its run's
    inode pool). Killed with its node, it left one in the node's temp dir for good: the reaper
    swept only folders recording into the node's shards (seen in CI, a node killed mid-cell at
    the container level). A folder that names no store holds nothing to finish, and any sweep
    takes it once its owner is gone; one whose owner lives is left alone."""
    base, tmp = tmp_path / "node", tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "BENCHTAPE_REAPER_IDLE": "1", "TMPDIR": str(tmp)}
    make = "from benchtape.sandbox.capture import SessionFolder; f = SessionFolder.create(spare='the inode pool of a run'); print(f.path, flush=True); import os; os._exit(0)"
    dead = subprocess.run([sys.executable, "-c", make], env=env, capture_output=True, text=True, timeout=60)
    assert dead.returncode == 0, dead.stderr
    orphan = Path(dead.stdout.strip())
    live = "import sys; from benchtape.sandbox.capture import SessionFolder; f = SessionFolder.create(level='home', keep=False); print(f.path, flush=True); sys.stdin.read()"
    holder = subprocess.Popen([sys.executable, "-c", live], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None
        kept = Path(holder.stdout.readline().strip())
        assert orphan.parent == kept.parent == tmp and orphan.is_dir()
        worker = dying_attempt(base, env)
        assert worker.returncode == 0, worker.stderr
        assert wait_for(lambda: not orphan.exists(), 30), list(orphan.iterdir())
        from benchtape.recorder.node_reaper import LOCK, _held

        assert wait_for(lambda: not _held(base / LOCK), 30)
        assert kept.is_dir()  # its owner lives: not the reaper's
    finally:
        holder.communicate("", timeout=30)


def test_a_held_folder_keeps_its_dead_attempts_marker_until_the_reaper_gives_up(tmp_path, monkeypatch):
    """In the reaper's own loop (the same `dead_since` each look): the marker of a dead attempt
    stays while a session folder of the node is held, counted from the first look; after
    GIVE_UP seconds it is dropped whatever is left."""
    import platform
    import tempfile

    from benchtape.recorder import node_reaper
    from benchtape.sandbox.capture import SessionFolder

    base, tmp = tmp_path / "node", tmp_path / "tmp"
    tmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))
    (base / "attempts").mkdir(parents=True)
    (base / "attempts" / "tok").write_text(f"{platform.node()} 999999999 1")  # a process that is gone
    folder = SessionFolder.create(db=str(base / "shard.db"))  # held: this process has its lock
    try:
        seen: dict[str, float] = {}
        node_reaper.reap(base, seen)
        node_reaper.reap(base, seen)
        assert (base / "attempts" / "tok").exists() and folder.path.is_dir() and list(seen) == ["tok"]
        first = seen["tok"]
        node_reaper.reap(base, seen)
        assert seen["tok"] == first  # counted from the first look, not from each
        monkeypatch.setattr(node_reaper, "GIVE_UP", 0.0)
        node_reaper.reap(base, seen)
        assert not (base / "attempts" / "tok").exists() and seen == {} and folder.path.is_dir()
    finally:
        folder.close(remove=True)


def test_an_attempt_registered_while_the_reaper_leaves_keeps_a_reaper(tmp_path, monkeypatch):
    """An attempt writes its marker, then starts a reaper unless the node's lock is held. Two
    moments of a reaper's leaving used to leave such an attempt unwatched (its folder then
    stayed for good when its worker died, seen in CI after a killed driver): a marker written
    after the reaper's last look (it left anyway), and a marker written after the reaper
    removed the empty attempts folder while its lock was still held (the attempt saw the lock
    held and started none). Here each happens at its moment, in one process: flock locks
    belong to an open file, so the attempt's look at the lock sees the reaper's."""
    from benchtape.recorder import node_reaper
    from benchtape.recorder.node_reaper import LOCK, _held, register_attempt, unregister_attempt

    started: list[Path] = []
    monkeypatch.setattr(node_reaper.subprocess, "Popen", lambda args, **kw: started.append(Path(args[-1])))
    base = tmp_path / "node"

    # a marker written after the last look: the reaper stays, with its lock
    fd = node_reaper._take_lock(base)
    assert fd is not None
    register_attempt(base, "late")
    assert node_reaper._leave(base, fd) == fd and _held(base / LOCK) and (base / "attempts" / "late").exists()
    unregister_attempt(base, "late")
    assert node_reaper._leave(base, fd) is None and not base.exists()  # idle now: it goes, and its folder

    # a marker written once the empty attempts folder is gone, the old lock still held
    fd = node_reaper._take_lock(base)
    assert fd is not None
    (base / "attempts").mkdir()  # an attempt came and went
    original = Path.rmdir

    def rmdir_then_register(self: Path) -> None:
        original(self)
        if self == base / "attempts":
            register_attempt(base, "between")
            node_reaper.ensure_reaper(base)  # sees the lock held: starts nothing

    monkeypatch.setattr(Path, "rmdir", rmdir_then_register)
    kept = node_reaper._leave(base, fd)
    monkeypatch.setattr(Path, "rmdir", original)
    assert started == []
    assert kept is not None and _held(base / LOCK)  # the leaving reaper took the new lock: it watches the marker
    assert (base / "attempts" / "between").exists()
    os.close(kept)
