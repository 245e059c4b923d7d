"""benchtape's side of the supervisor (sandbox/supervisor_program.py): start one, talk to it.

`SupervisedProcess` is the run loop's `Process` at the local levels: the harness runs under
a supervisor with its output in capture files, and the recorder tails them. `ContainerWatch`
is one watch-mode supervisor per benchtape process that removes its containers if it dies.
"""

from __future__ import annotations

import contextlib
import math
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Iterator, Mapping

import orjson

from benchtape.sandbox.capture import Captured, CaptureTail, Ending, SessionFolder, file_size, stderr_tail

SCRIPT = Path(__file__).with_name("supervisor_program.py")
MARKER = "BENCHTAPE_SESSION"  # in the harness's environment: finds what it left behind


EOF = "\x00eof"  # the supervisor's stdout closed (a message no supervisor writes)


class Supervisor:
    """A supervisor process, its spec sent, its messages read by a thread.

    Starting a Python process is most of what a supervisor costs a session (tens of ms), so
    one spare is kept started and idle (it waits for its spec; with none, it exits when
    benchtape does) and the next session takes it."""

    _spare: Supervisor | None = None
    _spare_lock = threading.Lock()
    _finished: list[tuple[Supervisor, float]] = []  # let go, not reaped yet (with when to kill it)

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-S", str(SCRIPT)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            env={"LANG": "C.UTF-8"},
        )
        self._lock = threading.Lock()
        assert self.proc.stdout is not None
        self._said = Lines(self.proc.stdout.fileno())

    @classmethod
    def start(cls, spec: Mapping[str, Any]) -> Supervisor:
        """A supervisor running `spec` (the spare one when there is one); `replenish` starts the next spare."""
        with cls._spare_lock:
            sup, cls._spare = cls._spare, None
        if sup is None or sup.proc.poll() is not None:
            sup = cls()
        sup.send(orjson.dumps({**spec, "parent": os.getpid()}).decode())
        return sup

    @classmethod
    def replenish(cls) -> None:
        """Start the next spare (on a thread: once the harness is started, not while the
        session waits for it)."""
        threading.Thread(target=cls._keep_a_spare, name="benchtape-spare-supervisor", daemon=True).start()

    @classmethod
    def _keep_a_spare(cls) -> None:
        cls._reap_finished()
        spare = cls()
        with cls._spare_lock:
            if cls._spare is None:
                cls._spare = spare
                return
        spare.finish()  # another thread made one first

    def message(self, timeout: float) -> str | None:
        """Its next line, waiting at most `timeout` seconds for it (None if none came; EOF once its
        output ended, after every line it wrote). Read by the thread waiting for it, not handed
        over by a reader thread: each wake-up of another thread on the way cost the session a
        scheduling delay (0.3-3 ms on a loaded machine) at the harness's start and at its exit.
        One thread at a time asks (the session's)."""
        return self._said.next(timeout)

    def send(self, line: str) -> None:
        with self._lock:
            try:
                assert self.proc.stdin is not None
                self.proc.stdin.write(line.encode() + b"\n")
                self.proc.stdin.flush()
            except (BrokenPipeError, OSError, ValueError):
                pass  # it has exited: nothing left to tell it

    def finish(self) -> None:
        """Tell it all is well and let it go. It is not waited for here: its work for the session
        is done (the harness reaped, what it left killed, the exit facts written), and waiting
        would put its interpreter's shutdown, and `Popen.wait`'s polling, on the session's path.
        The next spare's thread reaps it (`_reap_finished`)."""
        self.send("done")
        try:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        except OSError:
            pass
        with Supervisor._spare_lock:
            Supervisor._finished.append((self, time.monotonic() + 10))

    @classmethod
    def _reap_finished(cls) -> None:
        """Reap the supervisors let go so far; one still there 10 s after is killed."""
        with cls._spare_lock:
            finished, cls._finished = cls._finished, []
        left = []
        for sup, deadline in finished:
            if sup.proc.poll() is not None:
                continue
            if time.monotonic() < deadline:
                left.append((sup, deadline))
                continue
            sup.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                sup.proc.wait(5)
        if left:
            with cls._spare_lock:
                cls._finished.extend(left)


class Lines:
    """The lines written to a pipe, read by whoever asks for the next one."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buf = b""  # read, not a whole line yet
        self.closed = False  # the writer closed it
        self.ready = select.poll()  # poll, not select: a descriptor past 1023 is fine
        self.ready.register(fd, select.POLLIN)

    def next(self, timeout: float) -> str | None:
        """The next whole line, waiting at most `timeout` seconds for it (None if none came; EOF
        once the pipe is closed and every line in it was given)."""
        deadline = time.monotonic() + timeout
        while b"\n" not in self.buf:
            if self.closed:
                return EOF
            if not self.ready.poll(max(0, math.ceil((deadline - time.monotonic()) * 1000))):
                return None
            data = os.read(self.fd, 65536)
            self.closed = not data
            self.buf += data
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace")


class SupervisedProcess:
    """A harness on the host under a launch-mode supervisor; its stdout and stderr are the
    session folder's capture files, which survive benchtape."""

    def __init__(self, argv: list[str], env: Mapping[str, str], cwd: Path, stdin: bytes, folder: SessionFolder):
        self.folder = folder
        folder.fresh_capture()
        folder.file("stdin").write_bytes(stdin or b"")
        marker = f"{MARKER}={folder.path.name}"
        folder.file("leftovers").unlink(missing_ok=True)
        spec = {
            "mode": "launch",
            "argv": [str(a) for a in argv],
            "env": {**env, MARKER: folder.path.name},
            "cwd": str(cwd),
            "stdin": str(folder.file("stdin")),
            "stdout": str(folder.file("stdout")),
            "stderr": str(folder.file("stderr")),
            "exit": str(folder.file("exit")),
            "leftovers": str(folder.file("leftovers")),  # a fenced harness's first process counts what it left here (sandbox/pidfence_init.py)
            "marker": marker,
        }
        self.sup = Supervisor.start(spec)
        first = self.sup.message(30)
        Supervisor.replenish()
        if first is None or not first.startswith("started "):
            self.sup.finish()
            why = orjson.loads(first[len("failed ") :]) if first and first.startswith("failed ") else "the supervisor did not start"
            raise OSError(why)
        self.pid = int(first.split()[1])
        folder.note(supervisor=self.sup.proc.pid, harness_pid=self.pid)
        self.exit: dict[str, Any] | None = None
        self._ended = threading.Event()  # set with `exit`: wakes the reader at once
        self._tail: CaptureTail | None = None

    def _poll(self, timeout: float) -> None:
        if self.exit is not None:
            return
        message = self.sup.message(timeout)
        if message is None:
            return  # nothing yet
        if message == EOF:  # its output ended with no `exited` before it: it died without a word
            self._ended_with({"exit_code": None, "stdout_bytes": file_size(self.folder.file("stdout")), "killed": "supervisor died"})
            return
        if message.startswith("exited "):
            exit = orjson.loads(message[len("exited ") :])
            self.sup.finish()  # first: once the reader is woken, it contends for the GIL
            self._ended_with(exit)

    def _ended_with(self, exit: dict[str, Any]) -> None:
        self.exit = exit
        self._ended.set()

    def lines(self, max_line: int) -> Iterator[Captured]:
        self._tail = CaptureTail(self.folder.file("stdout"), max_line)
        try:
            yield from self._tail.lines(self._end, pause=self._ended.wait)
        finally:
            self._tail.close()

    def _end(self) -> int | None:
        exit = self.exit if self.exit is not None else self._exit_file()
        return None if exit is None else int(exit.get("stdout_bytes") or 0)

    def _exit_file(self) -> dict[str, Any] | None:
        """The supervisor's exit facts, written (in one write; half of it does not parse) before it says so: the reader sees the
        end without waiting on the supervisor's messages, which belong to `wait`."""
        try:
            data = self.folder.file("exit").read_bytes()
        except OSError:
            return None
        try:
            return orjson.loads(data) if data else None
        except orjson.JSONDecodeError:
            return None

    def wait(self, timeout: float) -> int | None:
        deadline = time.monotonic() + timeout
        while self.exit is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self._poll(min(left, 0.5))
        code = self.exit.get("exit_code")
        return code if code is not None else -9

    def kill(self) -> None:
        self.sup.send("kill")
        if self.wait(5) is None:  # the supervisor is stuck or gone: find what it ran by its marker

            kill_marked(f"{MARKER}={self.folder.path.name}".encode())
            if self.exit is None:
                self._ended_with({"exit_code": None, "stdout_bytes": file_size(self.folder.file("stdout")), "killed": "supervisor unresponsive"})

    def stderr_tail(self) -> str:
        return stderr_tail(self.folder.file("stderr"))

    def ending(self) -> Ending:
        end = self._end()
        late = max(0, file_size(self.folder.file("stdout")) - end) if end is not None else 0
        return Ending(late, int((self.exit or {}).get("leftovers_killed") or 0), self._tail.rewrites if self._tail else 0)


class ContainerWatch:
    """One watch-mode supervisor per benchtape process: the containers it started are removed
    if benchtape dies (normally each is removed by its sandbox, and forgotten here)."""

    _instance: ContainerWatch | None = None
    _guard = threading.Lock()

    def __init__(self) -> None:
        self.sup = Supervisor.start({"mode": "watch", "containers": [], "docker_host": os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")})
        Supervisor.replenish()  # it may have taken the spare a session was to have

    @classmethod
    def get(cls) -> ContainerWatch:
        with cls._guard:
            if cls._instance is None or cls._instance.sup.proc.poll() is not None:
                cls._instance = cls()
            return cls._instance

    def add(self, container_id: str, keep: bool = False) -> None:
        """Remove it if benchtape dies (`keep`: only stop it, it was asked to outlive the run)."""
        self.sup.send(f"{'keep' if keep else 'add'} {container_id}")

    def forget(self, container_id: str) -> None:
        self.sup.send(f"forget {container_id}")


def kill_marked(marker: bytes, rounds: int = 50) -> int:
    """SIGKILL every process whose environment carries `marker` (NAME=value), until none does."""
    from benchtape.sandbox.supervisor_program import kill_all, marked, process_table

    killed = 0
    for _ in range(rounds):
        victims = marked(marker, process_table()) - {os.getpid()}
        if not victims:
            break
        killed += kill_all(victims)
        time.sleep(0.02)
    return killed
