"""Running a command for grading: the one runner interface every sandbox provides.

Exec-style checks never start processes themselves; they call the `CommandRunner` their
context hands them, so the same check runs on the host, in a home sandbox or inside a
container without knowing which. This module is neutral ground: checks and sandboxes both
import it, neither imports the other.
"""

from __future__ import annotations

import functools
import os
import re
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping


@dataclass(frozen=True)
class CommandResult:
    exit_code: int | None
    output: str
    timed_out: bool = False
    # a command stopped at its deadline: the programs its process group was running then (each
    # one's first arguments), None when not looked at (it ended; a container's command)
    running: tuple[tuple[str, ...], ...] | None = None


DRAIN_S = 2.0  # after a kill, how long what is left in the pipe is still read
MAX_OUTPUT = 64 << 20  # bytes of a command's output kept (its first quarter and its last lines)


def run_local(
    argv: list[str],
    cwd: Path,
    timeout: float,
    env: Mapping[str, str] | None = None,
    stdin: bytes | None = None,
    *,
    max_output: int = MAX_OUTPUT,
    file_limit: int | None = None,
    memory_limit: int | None = None,
) -> CommandResult:
    """Run argv (no shell) on the host; the default command runner for exec-style checks.

    The command gets its own process group, and the timeout is the whole budget: at the
    deadline the group is killed and reading stops DRAIN_S later, whatever still holds the
    pipe (a child that left the group with setsid, a daemon: `communicate()` would wait for
    its EOF forever). When the command ends, what it left in its group is killed too. Output
    past `max_output` bytes keeps its head and its last lines. `file_limit`: no file it
    writes may grow past this many bytes (RLIMIT_FSIZE, for it and all it starts);
    `memory_limit`: nor may any of them write to more memory than this (RLIMIT_DATA). A child
    that left the group outlives this: a box runs its commands in a PID namespace
    (sandbox/pidfence.py) so that nothing does.
    """
    if file_limit is not None or memory_limit is not None:
        argv = [sys.executable, "-I", "-S", "-c", _LIMITS, str(int(file_limit or 0)), str(int(memory_limit or 0)), *argv]
    argv = dies_with_us(argv, cwd, env)
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        env=dict(env) if env is not None else None,
        start_new_session=True,
    )
    deadline = time.monotonic() + max(0.0, timeout)
    if stdin is not None:
        threading.Thread(target=_feed, args=(proc, stdin), daemon=True).start()
    out = CappedOutput(max_output)
    assert proc.stdout is not None
    try:
        ended = _read_until(proc.stdout.fileno(), out, deadline, proc)
        pipe_open = ended != "eof"
        if ended == "eof":  # every writer closed the pipe; the command itself may still run
            ended = "exited" if _exited_by(proc, deadline) is not None else "deadline"
        timed_out = ended == "deadline"
        running = group_programs(proc.pid) if timed_out else None
        _kill_group(proc.pid)  # at the deadline, or what it left behind (it is a zombie still, not reaped: its group id is not reused yet)
        if pipe_open:  # something still held the pipe: what it wrote until now, then no more
            _read_until(proc.stdout.fileno(), out, time.monotonic() + DRAIN_S, None)
    finally:
        _kill_group(proc.pid)  # again on an interrupt (Ctrl-C, an exception): the command is in a session of its own and got no SIGINT; twice is harmless
        proc.stdout.close()
        if proc.stdin is not None:
            try:
                proc.stdin.close()  # a feed that met a closed pipe left it open
            except OSError:
                pass
        try:
            proc.wait(timeout=DRAIN_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    text = out.text()
    if timed_out:
        return CommandResult(None, text, timed_out=True, running=running)
    return CommandResult(proc.returncode, text)


def group_programs(pgid: int, limit: int = 50) -> tuple[tuple[str, ...], ...] | None:
    """The live processes of group `pgid` (Linux's /proc; None where it cannot be read), each as
    its first eight arguments, what a stopped command was doing: a verifier stopped in a setup
    (`pip install`, a `sleep`) before its test runner ever started is no hang of the tests."""
    try:
        pids = [name for name in os.listdir("/proc") if name.isdigit()]
    except OSError:
        return None
    found: list[tuple[str, ...]] = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            if int(fields[2]) != pgid or fields[0] == b"Z":
                continue
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
        except (OSError, IndexError, ValueError):
            continue
        found.append(tuple(a.decode("utf-8", "replace")[:200] for a in argv[:8] if a))
        if len(found) >= limit:
            break
    return tuple(found)


# RLIMIT_FSIZE and RLIMIT_DATA (each when not 0) for what follows, then exec it: a write past
# the file limit fails (SIGXFSZ kills the writer), an allocation past the memory limit fails.
# Python ignores SIGPIPE and SIGXFSZ at start and an exec keeps ignored signals: both are put
# back to their defaults first, or `yes | head -1` would end in "Broken pipe", exit 1, at home
# and 141 anywhere else.
_LIMITS = "import os,resource,signal,sys;f,m=int(sys.argv[1]),int(sys.argv[2]);f and resource.setrlimit(resource.RLIMIT_FSIZE,(f,f));m and resource.setrlimit(resource.RLIMIT_DATA,(m,m));signal.signal(signal.SIGPIPE,signal.SIG_DFL);signal.signal(signal.SIGXFSZ,signal.SIG_DFL);os.execvp(sys.argv[3],sys.argv[3:])"


def dies_with_us(argv: list[str], cwd: Path | str, env: Mapping[str, str] | None = None) -> list[str]:
    """argv, started so that it is SIGKILLed when the thread that started it dies
    (PR_SET_PDEATHSIG, through util-linux's `setpriv`, where there is one): the `finally` that
    kills a command's group runs on an exception, never when benchtape itself is killed
    (SIGKILL; or SIGTERM where Python keeps its default, which ends it at once). A `task validate` killed while its
    base hung (tomlkit #470) left pytest spinning for good; now the command dies, and a fenced
    one (`unshare --kill-child`) takes its whole PID namespace with it. A program that cannot
    be found is left as it is, so starting it fails exactly as it would have."""
    setpriv = _setpriv()
    if setpriv is None or not argv:
        return argv
    import shutil

    first = argv[0]
    found = os.access(os.path.join(cwd, first), os.X_OK) if "/" in first else shutil.which(first, path=(env if env is not None else os.environ).get("PATH")) is not None
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if found else argv


@functools.cache
def _setpriv() -> str | None:
    """util-linux's setpriv where it knows --pdeathsig (2.33 on), looked up once."""
    import shutil

    path = shutil.which("setpriv", path="/usr/bin:/bin:/usr/sbin:/sbin") if sys.platform == "linux" else None
    if path is None:
        return None
    try:
        done = subprocess.run([path, "--pdeathsig", "KILL", "--", "true"], stdin=subprocess.DEVNULL, capture_output=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return path if done.returncode == 0 else None


def _feed(proc: subprocess.Popen[bytes], data: bytes) -> None:
    assert proc.stdin is not None
    try:
        proc.stdin.write(data)
        proc.stdin.close()
    except (BrokenPipeError, OSError, ValueError):
        pass


def _read_until(fd: int, out: CappedOutput, deadline: float, proc: subprocess.Popen[bytes] | None) -> str:
    """Read `fd` into `out` until EOF ("eof"), the deadline ("deadline"), or (with `proc`) the
    command's exit while something it started still holds the pipe open ("exited")."""
    import select

    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "deadline"
        ready, _, _ = select.select([fd], [], [], min(left, 0.2))
        if ready:
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                return "eof"
            out.add(chunk)
        if proc is not None and _exited_by(proc, 0.0) is not None:
            return "exited"


def _exited_by(proc: subprocess.Popen[bytes], deadline: float) -> int | None:
    """Wait (without reaping) until the process exits or the deadline: its pid, or None."""
    while True:
        try:
            found = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
        except ChildProcessError:
            return proc.pid  # reaped already
        if found is not None:
            return proc.pid
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.01)


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class CappedOutput:
    """A command's output, at most `limit` bytes kept: the first quarter and the last lines,
    with a marker saying how much was left out between."""

    def __init__(self, limit: int):
        self.head_limit = max(1, limit // 4)
        self.tail_limit = max(1, limit - self.head_limit)
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        # a container's reader thread may still add while the command's result is taken (a child
        # that left its group holds the stream): what `text` reads is one consistent moment
        self._lock = threading.Lock()

    def add(self, chunk: bytes) -> None:
        with self._lock:
            room = self.head_limit - len(self.head)
            if room > 0:
                self.head += chunk[:room]
                chunk = chunk[room:]
            if not chunk:
                return
            self.tail += chunk
            over = len(self.tail) - self.tail_limit
            if over > 0:
                del self.tail[:over]
                self.dropped += over

    def text(self) -> str:
        with self._lock:
            middle = f"\n[… {self.dropped} bytes of output not kept …]\n".encode() if self.dropped else b""
            return (bytes(self.head) + middle + bytes(self.tail)).decode("utf-8", "replace")


CommandRunner = Callable[..., CommandResult]


Interpreter = Callable[[str], "list[str] | None"]
"""An interpreter by name (`python`, `node`, `bun`, `go`, …) → the argv prefix that starts it
where grading commands run, or None when that place has none. Code checks ask for their
runtime this way, never `sys.executable`, so they work on the host and inside a container."""

_HOST_ALIASES = {"python": "python3"}


def local_interpreter(name: str) -> list[str] | None:
    """The host's interpreters: benchtape's own Python for `python`, else the first on PATH."""
    import shutil
    import sys

    if name in ("python", "python3"):
        return [sys.executable]
    found = shutil.which(_HOST_ALIASES.get(name, name))
    return [found] if found else None


# What a grading command inherits from the host; nothing else (no API keys, no tokens).
GRADING_ENV = ("PATH", "HOME", "LANG", "LC_ALL", "TMPDIR")


def grading_env() -> dict[str, str]:
    """The scrubbed environment every grading command runs with (madbench's custom:exec rule),
    plus the flags graders test for."""
    env = {k: os.environ[k] for k in GRADING_ENV if k in os.environ}
    env["BENCHTAPE"] = "1"
    env["MADBENCH"] = "1"  # graders ported from madbench test for this marker
    return env


class Unavailable(Exception):
    """Something a check needs could not be provided where it is graded: the workspace (no
    snapshot, a corrupt one), the grading sandbox (no engine), the output (a transform that
    raised). Raised by the context when a check first asks for it, so exactly the checks that
    needed it ERROR, with one wording per cause (`str(exc)`) and a machine-readable `cause`
    that the positive control reads (a report without snapshots SKIPs, never DIVERGEs)."""

    def __init__(self, cause: str, why: str):
        super().__init__(why)
        self.cause = cause


_SAYS_WHY = re.compile(r"\berror\b|error:|exception\b|\bfatal\b|\bpanic", re.IGNORECASE)


def telling_line(stderr: str | None) -> str | None:
    """The line of a failed program's stderr that says why: the last one naming an error
    (Python's traceback ends on its exception, a CLI's usage error comes first and is followed
    by usage and `For more information, try '--help'.`, which said nothing of why Codex refused
    a flag meant for Claude Code), else the last line; None for nothing."""
    lines = [line.strip() for line in (stderr or "").splitlines() if line.strip()]
    if not lines:
        return None
    return next((line for line in reversed(lines) if _SAYS_WHY.search(line)), lines[-1])
