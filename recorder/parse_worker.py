"""A transcript's lines as store batches: parsed in this process, or, for a large transcript,
in a forked child that sends each batch over a pipe while this process writes the one before.

Why a child: an import's parse (reading, JSON, the adapter, encoding each action) and its
writes (SQLite, the commit) are each about half of its CPU, and both hold the GIL, so a thread
cannot overlap them (tried: slower); a process can: a 50 MB transcript imported at 55-61
against 48 MB/s on 2 cores in the interleaved runs that chose it (a later, busier 2-core
machine gives 43-45 MB/s with the child: benchmarks/store_import.py). A pipe of 1 MB lets the child run a few
batches ahead: with the default 64 kB one it waited on every write, and the import was no
faster than on one thread.

The child only reads the transcript and writes the pipe: it never touches the store, and
ends with os._exit (no atexit handler, no buffer of its parent's flushed twice, no finalizer
of the parent's objects: they are frozen out of its garbage collection). No thread of
benchtape's is alive when it forks (the hash thread starts after); an import into a new store
has run its migrations through sqlite-utils, whose numpy may have started OpenBLAS's threads:
the child never calls into numpy, so none of their locks is taken in it. Whatever stops the parent
stops the child: an error, or the content found already imported, kills and reaps it when
the parent's `with` ends; a parent killed kills it (Linux's parent-death signal). A child
that dies (killed, out of memory), even in the middle of a message, ends the stream early,
which the parent raises as ParseFailed: its transaction rolls back whole."""

from __future__ import annotations

import os
import pickle
import signal
import struct
import sys
from contextlib import contextmanager
from typing import Any, BinaryIO, Iterator, NoReturn

from benchtape.adapters.transcripts import Transcript
from benchtape.core.errors import BenchtapeError
from benchtape.core.model import Action
from benchtape.store.database import RAW_CHUNK_BYTES, Batch

PIPE_BYTES = 1 << 20  # the child's lead over its parent (Linux's default limit for a pipe an unprivileged process widens)
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
        self.reaped = False  # waited for already: its pid may be another process's by now
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
        """The next whole message; a stream that ends before one is whole (the child died, even
        in the middle of a write) is ParseFailed."""
        head = self.pipe.read(_LENGTH.size)
        size = _LENGTH.unpack(head)[0] if len(head) == _LENGTH.size else -1
        body = self.pipe.read(size) if size > 0 else b""
        if len(body) != size:
            raise self._ended_early()
        message: tuple[Any, ...] = pickle.loads(body)  # the child writes only tuples
        return message

    def _ended_early(self) -> BaseException:
        """What to raise for a child that ended mid-stream, once it has (the pipe's end says it
        is ending): a Ctrl-C (which reached the child too, and may end it before the parent
        sees its own) is the interruption it is, anything else ParseFailed."""
        _, status = os.waitpid(self.pid, 0)
        self.reaped = True
        how = f"exit code {os.waitstatus_to_exitcode(status)}"
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            if number == signal.SIGINT:
                return KeyboardInterrupt()
            try:
                how = f"killed by {signal.Signals(number).name}"
            except ValueError:  # a real-time signal has no name
                how = f"killed by signal {number}"
        return ParseFailed(f"{self.transcript.files[0]}: the process parsing it ended before it was read whole ({how}); nothing of it was imported")

    def stop(self) -> None:
        self.pipe.close()
        if self.reaped:
            return
        if not self.ended:
            os.kill(self.pid, signal.SIGKILL)  # not reaped: still ours, running or a zombie
        os.waitpid(self.pid, 0)
        self.reaped = True


_STOPS = {signal.SIGINT, signal.SIGTERM}


@contextmanager
def parsed(transcript: Transcript, *, in_child: bool) -> Iterator[Parse]:
    """The transcript's batches, parsed in a forked child when `in_child` (and this system can
    fork, and has a process to spare), else here as they are taken.

    Ctrl-C and SIGTERM are held back across the fork: in the child until its handlers are the
    default ones (the parent's would unwind the parent's code in the child), and here until
    the child is known to the `finally` that stops it."""
    if not (in_child and sys.platform.startswith("linux")):
        yield Parse(transcript)
        return
    held = signal.pthread_sigmask(signal.SIG_BLOCK, _STOPS)
    forked: _ForkedParse | None = None
    try:
        forked = _fork(transcript, held)
        signal.pthread_sigmask(signal.SIG_SETMASK, held)  # a signal held back is taken here
        yield forked or Parse(transcript)
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if forked is not None:
            forked.stop()


def _fork(transcript: Transcript, held: Any) -> _ForkedParse | None:
    """The child parsing the transcript, or None when none can be made (no memory or process left)."""
    import ctypes
    import fcntl
    import gc

    libc = ctypes.CDLL(None, use_errno=True)  # loaded here, not in the child
    read_end, write_end = os.pipe()
    parent = os.getpid()
    gc.freeze()  # what the parent has is never collected in the child: no finalizer of the parent's runs there
    try:
        pid = os.fork()
    except OSError:
        pid = -1
    if pid == 0:
        _child(transcript, read_end, write_end, parent, held, libc, fcntl)
    gc.unfreeze()
    os.close(write_end)
    if pid < 0:
        os.close(read_end)
        return None
    try:
        return _ForkedParse(transcript, pid, os.fdopen(read_end, "rb", buffering=PIPE_BYTES))
    except BaseException:
        os.close(read_end)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise


def _child(transcript: Transcript, read_end: int, write_end: int, parent: int, held: Any, libc: Any, fcntl: Any) -> NoReturn:
    """Parse and send, then end without returning into the parent's code."""
    status = 1
    try:
        for number in _STOPS:
            signal.signal(number, signal.SIG_DFL)  # Ctrl-C ends it at once; the parent rolls back
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL)  # its parent killed, it is killed at once, not at its next write
        signal.pthread_sigmask(signal.SIG_SETMASK, held)
        if os.getppid() != parent:  # the parent died before the line above
            os._exit(1)
        os.close(read_end)
        try:
            fcntl.fcntl(write_end, fcntl.F_SETPIPE_SZ, PIPE_BYTES)
        except OSError:  # a system whose limit is lower: the default pipe still works, slower
            pass
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


def _portable(exc: Exception) -> Exception:
    """The exception itself when it survives pickling, else one that says what it was."""
    try:
        copy: Exception = pickle.loads(pickle.dumps(exc))
        return copy
    except Exception:  # noqa: BLE001
        return RuntimeError(f"{type(exc).__name__}: {exc}")
