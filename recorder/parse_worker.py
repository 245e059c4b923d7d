"""A transcript's lines as store batches: parsed in this process, or, for a large transcript,
in a forked child that sends each batch over a pipe while this process writes the one before.

Why a child: an import's parse (reading, JSON, the adapter, encoding each action) and its
writes (SQLite, the commit) are each about half of its CPU, and both hold the GIL, so a thread
cannot overlap them; a process can. A 50 MB transcript imported 20% faster on 2 cores
(benchmarks/store_import.py; interleaved runs, 46-58 against 41-47 MB/s). A pipe of 1 MB lets
the child run a few batches ahead: with the default 64 kB one it waited on every write, and
the import was no faster than on one thread.

The child only reads the transcript and writes the pipe: it never touches the store, holds no
lock of it, and ends with os._exit (no atexit handler, no buffer of its parent flushed twice).
Whatever stops the parent (an error, a kill, the content found already imported) stops the
child: it is killed and reaped when the parent's `with` ends, and a parent that dies closes
the pipe, whose next write ends the child. A child that dies (killed, out of memory) ends the
stream early, which the parent raises as an error: its transaction rolls back whole."""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator, NoReturn

from adapters.transcripts import Transcript
from recorder.errors import BenchtapeError
from recorder.model import Action
from recorder.store import RAW_CHUNK_BYTES, Batch

PIPE_BYTES = 1 << 20  # the child's lead over its parent (Linux's default limit for a pipe an unprivileged process widens)
_F_SETPIPE_SZ = 1031  # fcntl's, from linux/fcntl.h (Python has it as fcntl.F_SETPIPE_SZ from 3.10, on Linux only)
_PR_SET_PDEATHSIG = 1  # prctl's, from linux/prctl.h
_LENGTH = struct.Struct("<I")


class ParseFailed(BenchtapeError):
    """The child parsing a transcript ended without sending all of it (killed, out of memory):
    nothing of the transcript is written (the import's transaction rolls back)."""


def batches(transcript: Transcript) -> Iterator[Batch]:
    """The transcript's lines and actions, ~RAW_CHUNK_BYTES of lines a batch (one raw chunk
    each); the last batch holds what the parser kept for the end, and may be empty."""
    lines: list[tuple[int, str]] = []
    pending: list[Action] = []
    size = 0
    for line_no, (line, actions) in enumerate(transcript.lines(), start=1):
        lines.append((line_no, line))
        size += len(line)
        if actions:
            pending.extend(actions)
        if size >= RAW_CHUNK_BYTES:
            yield Batch.of(lines, pending)
            lines, pending, size = [], [], 0
    pending.extend(transcript.finish())
    yield Batch.of(lines, pending)


class Parse:
    """A transcript being parsed: `batches` to write, in order, then `meta`, what the whole
    file said about the session (known once every batch has been taken)."""

    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.batches: Iterator[Batch] = batches(transcript)

    @property
    def meta(self) -> dict[str, Any]:
        return self.transcript.meta


class _ForkedParse(Parse):
    def __init__(self, transcript: Transcript, pid: int, pipe: BinaryIO):
        self.transcript, self.pid, self.pipe = transcript, pid, pipe
        self.ended = False  # the child sent everything and exits by itself
        self._meta: dict[str, Any] = {}
        self.batches = self._received()

    @property
    def meta(self) -> dict[str, Any]:
        return self._meta

    def _received(self) -> Iterator[Batch]:
        while True:
            message = self._next()
            if message[0] == "batch":
                yield Batch(*message[1:])
            elif message[0] == "end":
                self._meta, self.ended = message[1], True
                return
            else:
                raise message[1]  # what the parse raised in the child, raised here as it would have been

    def _next(self) -> tuple[Any, ...]:
        head = self.pipe.read(_LENGTH.size)
        body = self.pipe.read(_LENGTH.unpack(head)[0]) if len(head) == _LENGTH.size else b""
        if not body:
            raise ParseFailed(f"{self.transcript.files[0]}: the process parsing it ended before it was read whole ({_ending(self.pid)}); nothing of it was imported")
        return pickle.loads(body)

    def stop(self) -> None:
        self.pipe.close()
        if not self.ended:
            try:
                os.kill(self.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            os.waitpid(self.pid, 0)
        except ChildProcessError:  # reaped already (by _ending)
            pass


@contextmanager
def parsed(transcript: Transcript, *, in_child: bool) -> Iterator[Parse]:
    """The transcript's batches, parsed in a forked child when `in_child` (and this system can
    fork), else here as they are taken."""
    if not (in_child and sys.platform.startswith("linux")):
        yield Parse(transcript)
        return
    read_end, write_end = os.pipe()
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError:  # no memory or process left for a child: parse here
        os.close(read_end)
        os.close(write_end)
        yield Parse(transcript)
        return
    if pid == 0:
        os.close(read_end)
        _child(transcript, write_end, parent)
    os.close(write_end)
    parse = _ForkedParse(transcript, pid, os.fdopen(read_end, "rb", buffering=PIPE_BYTES))
    try:
        yield parse
    finally:
        parse.stop()


def _child(transcript: Transcript, write_end: int, parent: int) -> NoReturn:
    """Parse and send, then end without returning into the parent's code."""
    status = 1
    try:
        signal.signal(signal.SIGINT, signal.SIG_DFL)  # Ctrl-C ends it at once; the parent rolls back
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        try:
            import fcntl

            fcntl.fcntl(write_end, _F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:  # a system whose limit is lower: the default pipe still works, slower
            pass
        _end_with_parent(parent)
        with os.fdopen(write_end, "wb") as pipe:
            try:
                for batch in batches(transcript):
                    _send(pipe, ("batch", batch.groups, batch.heads, batch.encoded))
                _send(pipe, ("end", transcript.meta))
            except Exception as exc:  # noqa: BLE001 - the parent raises it
                _send(pipe, ("error", _portable(exc)))
        status = 0
    finally:
        os._exit(status)


def _send(pipe: BinaryIO, message: tuple[Any, ...]) -> None:
    """One message, whole in the pipe when this returns: the parent writes it while the next is parsed."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    pipe.write(_LENGTH.pack(len(data)))
    pipe.write(data)
    pipe.flush()


def _end_with_parent(parent: int) -> None:
    """A parent killed mid-import kills its child at once (not at the child's next write, which
    for a slow file may be far off): Linux's parent-death signal, set before looking whether
    the parent is gone already."""
    import ctypes

    ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)
    if os.getppid() != parent:
        os._exit(1)


def _portable(exc: Exception) -> Exception:
    """The exception itself when it survives pickling, else one that says what it was."""
    try:
        return pickle.loads(pickle.dumps(exc))
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")


def _ending(pid: int) -> str:
    try:
        _, status = os.waitpid(pid, 0)
    except ChildProcessError:
        return "it was gone"
    if os.WIFSIGNALED(status):
        return f"killed by {signal.Signals(os.WTERMSIG(status)).name}"
    return f"exit code {os.waitstatus_to_exitcode(status)}"
