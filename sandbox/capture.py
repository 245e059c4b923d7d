"""A session's folder in the temp dir, and the capture files the agent's output goes to.

The harness never writes into a pipe benchtape must drain: its stdout and stderr are files
in `capture/` (the supervisor, or the container's wrapper, points them there) and the
recorder tails the stdout file line by line, appending as it goes. If benchtape is killed,
every byte the agent printed is still in that file, and `benchtape recover` (or the next
start of benchtape) ingests what the store does not have yet.

The folder is owned by the benchtape process recording into it: that process holds an
exclusive `flock` on `lock` for the folder's life, so "is its owner alive?" is one
non-blocking lock attempt (the kernel drops the lock when the owner dies, even by SIGKILL;
no pid reuse to get wrong). `session.json` says what a recovery needs: the database, the
session, the harness, the workspace, the container, the secrets' fingerprints (never the
values). It is JSON lines, each adding facts (`read_manifest` merges them): a note is one
appended write, where rewriting the file whole and renaming it over the last cost a file
creation and an inode freed (~0.3–1.2 ms on a slow disk), twice a session on its path.
A line cut short by a crash is the last one, and is skipped.

Layout: benchtape-XXXX/{lock, session.json, capture/{stdin, stdout, stderr, exit}, work/, tmp/}
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from benchtape.core.errors import temp_room
from benchtape.core.jsonobjects import decode
from benchtape.sandbox.trees import remove_tree

PREFIX = "benchtape-"
LOCK = "lock"
MANIFEST = "session.json"
CAPTURE = "capture"
OWN_NAMES = (LOCK, MANIFEST, CAPTURE, f".{MANIFEST}.tmp")  # the folder's bookkeeping, beside work/ and tmp/
POLL = 0.02  # seconds between looks at a quiet capture file
READ = 1 << 16
STDERR_TAIL = 4000


class SessionFolder:
    """benchtape-XXXX in the temp dir, locked by this process until `close()`."""

    def __init__(self, path: Path, lock_fd: int | None = None):
        self.path = Path(path)
        self.capture = self.path / CAPTURE
        if lock_fd is None:
            lock_fd = os.open(self.path / LOCK, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
            fcntl.flock(lock_fd, fcntl.LOCK_EX)
        self._lock_fd = lock_fd
        self._manifest_fd = -1  # session.json, opened for appending at the first note
        self.facts: dict[str, Any] = {}
        self._shared = False
        self._pristine = False  # its capture files are new and no process has had them yet

    @classmethod
    def create(cls, **facts: Any) -> SessionFolder:
        """A new folder, locked before anything else is in it (a sweep skips folders it cannot
        read), its session.json holding `facts` from the start. A temporary folder it cannot
        write in (a full disk) is the user's message naming it, not a traceback."""
        with temp_room("a session's folder"):
            folder = cls(Path(tempfile.mkdtemp(prefix=PREFIX)))
        try:
            with temp_room("a session's folder"):
                folder.capture.mkdir()
                folder.fresh_capture()
                folder._pristine = True  # the next process started here can have these capture files
                folder.note(version=1, pid=os.getpid(), created=time.time(), **facts)
        except BaseException:
            folder.close()
            raise
        return folder

    @classmethod
    def claim(cls, path: Path) -> SessionFolder | None:
        """Take over a folder whose owner died (None when its owner is alive, or someone else
        claimed it first); its facts are read from session.json."""
        try:
            fd = os.open(path / LOCK, os.O_RDWR | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            return None
        folder = cls(path, fd)
        folder.facts = read_manifest(path)
        if not path.exists():  # removed by the claimer before us between our open and lock
            folder.close(remove=False)
            return None
        return folder

    def file(self, name: str) -> Path:
        return self.capture / name

    def note(self, **facts: Any) -> None:
        """Add facts to session.json: one line, appended in one write (a reader merges the lines)."""
        self.facts.update(facts)
        if self._manifest_fd < 0:
            self._manifest_fd = os.open(self.path / MANIFEST, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        line = orjson.dumps(facts, default=str) + b"\n"
        if os.write(self._manifest_fd, line) != len(line):  # a full disk: what recover reads must be whole
            raise OSError(f"could not write {self.path / MANIFEST} whole")

    def share_with_container(self) -> None:
        """A container user that is not the host's may append to the capture files."""
        self._shared = True
        os.chmod(self.capture, 0o755)
        for name in ("stdout", "stderr", "exit"):
            os.chmod(self.capture / name, 0o666)
        os.chmod(self.capture / "stdin", 0o644)

    def fresh_capture(self) -> None:
        """New, empty capture files for the next process started in this folder (a workflow's
        next step, a setup command): each process's output is its own, never the tail of the
        one before. Replaced, not truncated, so a straggler of the last one writes elsewhere.
        The first process after `create` takes the ones it made (nothing has written them)."""
        if self._pristine:
            self._pristine = False
            return
        for name in ("stdin", "stdout", "stderr", "exit"):
            path = self.capture / name
            path.unlink(missing_ok=True)
            path.touch(mode=0o600)
        if self._shared:
            self.share_with_container()

    def drop_capture(self) -> None:
        """The raw output (unredacted) is not kept once the session is recorded."""
        remove_tree(self.capture)

    def close(self, remove: bool = True) -> None:
        """Remove the folder (unless kept: then only its bookkeeping goes), then release the lock.
        Closed on the cleanup thread (a run's `Cleanup.park`), the lock is held until the folder
        is gone, and if benchtape dies first, the orphan sweep removes it."""
        from benchtape.sandbox.mounts import release

        release(self.path / "work")
        if remove:
            remove_tree(self.path)  # no recursion: an agent may leave a 2,500-deep tree
        else:
            self.drop_capture()
            for name in OWN_NAMES:
                with contextlib.suppress(OSError):
                    (self.path / name).unlink()
        if self._manifest_fd >= 0:
            os.close(self._manifest_fd)
            self._manifest_fd = -1
        if self._lock_fd >= 0:
            os.close(self._lock_fd)
            self._lock_fd = -1


def read_manifest(path: Path) -> dict[str, Any]:
    """A session folder's session.json: its lines' facts merged, later over earlier; a line that
    does not parse (the last, cut short by a crash) is skipped. A file of an older benchtape
    (one JSON object) is one line."""
    try:
        data = (path / MANIFEST).read_bytes()
    except OSError:
        return {}
    facts: dict[str, Any] = {}
    for line in data.splitlines():
        facts.update(decode(line) or {})
    return facts


def secret_fingerprints(values: list[str]) -> list[dict[str, Any]]:
    """What session.json keeps of the session's secrets: enough to recognise them in the
    environment of a later `recover`, never the values themselves."""
    return [{"sha256": hashlib.sha256(v.encode()).hexdigest(), "len": len(v)} for v in values]


def secrets_from(fingerprints: list[dict[str, Any]], env: dict[str, str]) -> tuple[list[str], int]:
    """The values in `env` that match the fingerprints, and how many fingerprints matched none."""
    wanted = {f.get("sha256") for f in fingerprints}
    found = {v for v in env.values() if hashlib.sha256(v.encode()).hexdigest() in wanted}
    return sorted(found), len(wanted) - len({hashlib.sha256(v.encode()).hexdigest() for v in found})


def session_folders(tmp: Path | None = None) -> list[Path]:
    """Every session folder with bookkeeping in the temp dir (folders of older versions have none)."""
    base = Path(tmp or tempfile.gettempdir())
    try:
        names = sorted(os.listdir(base))
    except OSError:
        return []
    return [base / n for n in names if n.startswith(PREFIX) and (base / n / LOCK).is_file() and (base / n / MANIFEST).is_file()]


# ---------------------------------------------------------------- reading the capture


@dataclass(frozen=True)
class Captured:
    """One line of the harness's output (newline and a trailing CR removed)."""

    text: str
    size: int  # bytes of the line as written
    cut: int = 0  # bytes left out of `text`: the line was over the per-line limit


@dataclass(frozen=True)
class Ending:
    """What happened around a harness's exit that is not its output."""

    late_bytes: int = 0  # written to its stdout after it exited, by processes it left running
    leftovers_killed: int = 0  # processes it left running, killed when it exited
    rewrites: int = 0  # times its capture file was truncated under the recorder


def cut_marker(cut: int, size: int) -> str:
    return f" …[benchtape: {cut} bytes cut from this {size}-byte line]… "


class CaptureTail:
    """The lines of a capture file as they are appended, each bounded to `max_line` bytes
    (a longer line keeps its head and its tail around a marker): memory stays bounded
    whatever the harness prints."""

    def __init__(self, path: Path, max_line: int, start: int = 0):
        self.path = path
        self.max_line = max_line
        self._f = open(path, "rb", buffering=0)
        self._f.seek(start)
        self.read_bytes = start
        self._line = bytearray()
        self._tail = bytearray()
        self._size = 0
        self._over = False
        self._mark = b""  # the last bytes read: if they change, the file was truncated and written again
        self.rewrites = 0  # times something truncated the file (a `> /proc/PID/fd/1` on a harness whose stdout is the file)

    def close(self) -> None:
        self._f.close()

    def size_now(self) -> int:
        return os.fstat(self._f.fileno()).st_size

    def lines(self, end: Callable[[], int | None], cancelled: Callable[[], bool] = lambda: False, pause: Callable[[float], Any] = time.sleep) -> Iterator[Captured]:
        """Lines until the harness's output ends: `end()` gives the byte offset where it ended
        once it has (None while it runs); bytes past it were written later, by something the
        harness left behind, and are not read. `pause(POLL)` waits between looks at a quiet
        file: an event's `wait`, set when the harness exits, ends the wait at once."""
        while True:
            stop = end()
            self._rewritten()
            want = READ if stop is None else min(READ, stop - self.read_bytes)
            chunk = self._f.read(want) if want > 0 else b""
            if not chunk:
                if stop is not None or cancelled():
                    break
                pause(POLL)
                continue
            self.read_bytes += len(chunk)
            self._mark = chunk[-16:] if len(chunk) >= 16 else (self._mark + chunk)[-16:]
            yield from self._split(chunk)
        if self._size or self._line:
            yield self._take()

    def _rewritten(self) -> bool:
        """Whether the file was truncated since it was read (smaller now, or different where
        reading stopped): then it is read again from its start, and the count says so. Where
        the harness's stdout is a pipe (the local levels) this cannot happen."""
        if not self._mark:
            return False
        size = self.size_now()
        if size >= self.read_bytes and os.pread(self._f.fileno(), len(self._mark), self.read_bytes - len(self._mark)) == self._mark:
            return False
        self.rewrites += 1
        self._f.seek(0)
        self.read_bytes = 0
        self._mark = b""
        self._line, self._tail, self._size, self._over = bytearray(), bytearray(), 0, False
        return True

    def _split(self, chunk: bytes) -> Iterator[Captured]:
        start = 0
        while True:
            nl = chunk.find(b"\n", start)
            self._add(chunk[start:] if nl < 0 else chunk[start:nl])
            if nl < 0:
                return
            yield self._take()
            start = nl + 1

    def _add(self, piece: bytes) -> None:
        self._size += len(piece)
        if self._size <= self.max_line:
            self._line += piece
            return
        half = self.max_line // 2
        if not self._over:  # first time over: keep the head, start the tail
            self._over = True
            self._line += piece
            self._tail = self._line[half:]
            del self._line[half:]
        else:
            self._tail += piece
        if len(self._tail) > half:
            del self._tail[: len(self._tail) - half]

    def _take(self) -> Captured:
        line, tail, size = bytes(self._line), bytes(self._tail), self._size
        self._line, self._tail, self._size, self._over = bytearray(), bytearray(), 0, False
        if size <= self.max_line:
            if line.endswith(b"\r"):
                line = line[:-1]
            return Captured(line.decode("utf-8", "replace"), size)
        cut = size - len(line) - len(tail)
        return Captured(line.decode("utf-8", "replace") + cut_marker(cut, size) + tail.decode("utf-8", "replace"), size, cut)


def file_size(path: Path) -> int:
    """Its size, 0 when it is gone."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def stderr_tail(path: Path, keep: int = STDERR_TAIL) -> str:
    """About `keep` bytes of a capture's stderr: all of it, or its first lines and its last
    bytes with how much was left out between. A CLI that refuses an argument says why first and
    then prints its whole usage (gemini: "Unknown argument: no-such-flag", then 3 kB of help): the
    last bytes alone kept the help and lost the reason."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            size = f.tell()
            if size <= keep:
                f.seek(0)
                return f.read().decode("utf-8", "replace")
            f.seek(0)
            head = f.read(keep // 4)
            head = head[: head.rfind(b"\n") + 1] or head  # whole lines of the head
            tail_bytes = keep - len(head)
            f.seek(size - tail_bytes)
            tail = f.read()
            skipped = size - len(head) - len(tail)
            return head.decode("utf-8", "replace") + f"[… {skipped} bytes …]\n" + tail.decode("utf-8", "replace")
    except OSError:
        return ""
