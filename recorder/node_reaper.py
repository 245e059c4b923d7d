"""One reaper per node: what a dead attempt left is removed even when nothing else of
benchtape is left alive on the node.

A cell recorded on a worker of a cluster (benchtape.recorder.ray_worker) can lose its process
at any moment: its node is drained, Ray kills the worker with its driver, the OOM killer picks
it. Ray kills the worker's process group and its children, but a container is no child (dockerd
runs it), and the container watch a benchtape process keeps (benchtape.sandbox.supervisor) is
killed with the worker when Ray kills its children. So each attempt leaves a marker in the node
folder naming its process (`attempts/<token>`), and a reaper process of the node's own (started
by the first attempt, detached twice so no process group or parent takes it along) watches
them: once a marker's process is gone, it removes the benchtape containers whose owner process
is gone, kills what the dead sessions left running and finishes their session folders
(benchtape.recorder.recover.sweep, only for the stores under the node folder: the shards), and
drops the marker once nothing of the attempt is left (a folder still held is looked at again).
With no marker left for IDLE seconds it exits; the next attempt starts another.

Run as `python -m benchtape.recorder.node_reaper NODE_FOLDER` (what `ensure_reaper` starts).
"""

from __future__ import annotations

import errno
import fcntl
import os
import subprocess
import sys
import time
from pathlib import Path

ATTEMPTS = "attempts"
LOCK = "reaper.lock"
POLL = 0.5  # seconds between looks at the markers (a listdir and a /proc read each)
IDLE = float(os.environ.get("BENCHTAPE_REAPER_IDLE", "30"))  # seconds with no attempt before the reaper exits
RETRY = 2.0  # seconds between sweeps while a dead attempt's session folder is still held
GIVE_UP = 600.0  # seconds a dead attempt's marker is kept for a folder that stays held


def register_attempt(base: Path, token: str) -> None:
    """This process records attempt `token` on this node (until `unregister_attempt`)."""
    from benchtape.sandbox.container import owner_token

    folder = base / ATTEMPTS
    while True:
        folder.mkdir(parents=True, exist_ok=True)
        try:
            (folder / token).write_text(owner_token())
            return
        except FileNotFoundError:
            continue  # a reaper leaving removed the empty folder between the two: make it again


def unregister_attempt(base: Path, token: str) -> None:
    (base / ATTEMPTS / token).unlink(missing_ok=True)


def ensure_reaper(base: Path) -> None:
    """Start the node's reaper unless one runs (it holds the lock on `reaper.lock`)."""
    base.mkdir(parents=True, exist_ok=True)
    if _held(base / LOCK):
        return
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtape.recorder.node_reaper", str(base)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    proc.wait(30)  # it forks the reaper and exits at once


def _held(path: Path) -> bool:
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    finally:
        os.close(fd)
    return False


def dead_attempts(base: Path) -> list[Path]:
    """Markers whose process has ended without removing them."""
    from benchtape.sandbox.container import owner_gone

    folder = base / ATTEMPTS
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    out = []
    for name in names:
        try:
            owner = (folder / name).read_text()
        except OSError:
            continue
        if owner_gone(owner):
            out.append(folder / name)
    return out


def reap(base: Path, dead_since: dict[str, float] | None = None) -> list[str]:
    """Remove what dead attempts on this node left: benchtape containers whose owner process is
    gone, the processes and session folders of sessions recording into the node's shards; then
    their markers. One line per thing done.

    A marker stays while a session folder recording under the node is left: a folder whose lock
    a dead attempt's supervisor still holds (draining the last output, removing a container,
    slow on a loaded machine) cannot be claimed yet, and a marker dropped then left it for good.
    The marker is the reaper's reason to look again; after GIVE_UP seconds (counted in
    `dead_since`, from when the reaper first saw it dead) it is dropped whatever is left."""
    from benchtape.recorder.recover import records_under, sweep
    from benchtape.sandbox.capture import session_folders

    seen = {} if dead_since is None else dead_since
    dead = dead_attempts(base)
    done = sweep(containers=True, only_under=base)
    now = time.monotonic()
    waiting = any(records_under(path, base) for path in session_folders())
    for marker in dead:
        first = seen.setdefault(marker.name, now)
        if waiting and now - first < GIVE_UP:
            continue
        marker.unlink(missing_ok=True)
        seen.pop(marker.name, None)
        done.append(f"attempt {marker.name} of a process that is gone: its leftovers removed")
    return done


def main(base: Path) -> int:
    """The reaper: detach, take the node's lock (or leave: one runs), watch, reap, exit when idle."""
    if os.fork() > 0:
        os._exit(0)  # the starter's child exits at once: the reaper is nobody's child any more
    os.setsid()
    fd = _take_lock(base)
    if fd is None:
        return 0
    idle_since = last_reap = time.monotonic()
    dead_since: dict[str, float] = {}
    while True:
        if dead_attempts(base) and (not dead_since or time.monotonic() - last_reap >= RETRY):  # a new death at once, a held folder every RETRY
            reap(base, dead_since)
            last_reap = time.monotonic()
        try:
            active = bool(os.listdir(base / ATTEMPTS))
        except OSError:
            active = False
        now = time.monotonic()
        if active:
            idle_since = now
        elif now - idle_since >= IDLE:
            reap(base)  # a last look before leaving
            kept = _leave(base, fd)
            if kept is None:
                return 0
            fd, idle_since = kept, time.monotonic()
        time.sleep(POLL)


def _take_lock(base: Path) -> int | None:
    """The node's reaper lock, held on the file its path names now (a reaper leaving unlinks
    the file it held: a lock on that one would watch nothing), or None when another holds it."""
    base.mkdir(parents=True, exist_ok=True)
    while True:
        fd = os.open(base / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        try:
            if os.stat(base / LOCK).st_ino == os.fstat(fd).st_ino:
                return fd
        except FileNotFoundError:
            pass
        os.close(fd)  # unlinked while taken: take the new one


def _leave(base: Path, fd: int) -> int | None:
    """Take the reaper's own files, and the node folder once empty, with it (it was left in
    /tmp for good). None once gone; the lock to keep watching with when an attempt registered
    meanwhile.

    An attempt registers its marker, then starts a reaper unless the lock is held. One that
    registered after the reaper's last look found the lock held by a reaper about to leave,
    and started none: so a marker found while leaving keeps this reaper, and one whose folder
    appeared after the reaper's own files went takes the lock again (unless the attempt's new
    reaper has it)."""
    try:
        (base / ATTEMPTS).rmdir()
    except FileNotFoundError:
        pass
    except OSError as exc:
        if exc.errno in (errno.ENOTEMPTY, errno.EEXIST):
            return fd  # an attempt registered since the last look: keep watching it
        os.close(fd)  # the folder cannot be removed at all (its permissions): leave it and go
        return None
    (base / LOCK).unlink(missing_ok=True)
    os.close(fd)
    try:
        base.rmdir()
    except OSError:
        pass  # a run's shards or seeds are still there: its sweep removes them
    if (base / ATTEMPTS).exists():
        return _take_lock(base)
    return None


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
