"""benchtape's supervisor: the agent dies with its run, whatever happens to benchtape.

Standard library only; run as `python -S supervisor_program.py` in a session of its own (a Ctrl-C
in the terminal or a kill of benchtape's process group does not reach it). It reads one
JSON spec line on stdin, then control lines ("kill", "done", "add ID", "forget ID").
benchtape's death shows as EOF on stdin without "done", or as this process being
reparented; either way everything it supervises is killed.

Two modes:

- `launch`: start a harness with its stdin from a capture file and its stdout/stderr on
  pipes this process copies into capture files as they arrive (so what it prints survives
  benchtape: this process outlives it long enough to drain them), report `started PID`; when the harness exits, record where its output
  ended and when it was started and reaped (the host's monotonic clock: the harness's own
  lifetime, without benchtape's) in the `exit` file and `exited {...}` on stdout, and kill
  everything it left behind. Left
  behind means: every descendant (this process is a child subreaper, PR_SET_CHILD_SUBREAPER,
  so `nohup`/`setsid`/double-forked children re-parent to it instead of to init and stay in
  its tree), and every process whose environment carries the session's marker variable (for
  processes that left the tree some other way; the orphan sweep of a later benchtape uses
  the same marker when this supervisor itself was killed). A process that cleared its
  environment *and* left the tree (e.g. by asking a daemon to start it) escapes both; cgroups
  would catch it, and are not available to an unprivileged user everywhere.
- `watch`: remove the listed containers (stop the ones kept with --keep-sandbox) through the
  Docker Engine API if benchtape dies.
"""

from __future__ import annotations

import json
import os
import select
import signal
import sys
import time

TYPE_CHECKING = False  # not typing's: importing typing costs this script's start (mypy knows the name)
if TYPE_CHECKING:
    from typing import Any

PR_SET_CHILD_SUBREAPER = 36
POLL = 0.05


def say(message: str) -> None:
    try:
        os.write(1, (message + "\n").encode())
    except OSError:
        pass  # benchtape is gone; keep cleaning up


class Control:
    """Lines from benchtape on stdin, read without blocking longer than asked."""

    def __init__(self) -> None:
        self.buf = b""
        self.eof = False

    def _fill(self, timeout: float) -> None:
        if self.eof:
            time.sleep(timeout)
            return
        ready, _, _ = select.select([0], [], [], timeout)
        if not ready:
            return
        data = os.read(0, 65536)
        if not data:
            self.eof = True
        self.buf += data

    def read(self, timeout: float) -> list[str]:
        """The complete lines that arrived within `timeout` seconds."""
        self._fill(timeout)
        *lines, self.buf = self.buf.split(b"\n")
        return [line.decode("utf-8", "replace") for line in lines]

    def first(self) -> str:
        while b"\n" not in self.buf and not self.eof:
            self._fill(5.0)
        line, _, self.buf = self.buf.partition(b"\n")
        return line.decode("utf-8", "replace")


# ---------------------------------------------------------------- processes


def process_table() -> dict[int, int]:
    """pid -> ppid of every live (not zombie) process."""
    table = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != b"Z":
            table[int(name)] = int(fields[1])
    return table


def descendants(root: int, table: dict[int, int]) -> set[int]:
    children: dict[int, list[int]] = {}
    for pid, ppid in table.items():
        children.setdefault(ppid, []).append(pid)
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def marked(marker: bytes, table: dict[int, int]) -> set[int]:
    """Processes whose environment holds the session's marker (NAME=value)."""
    found = set()
    for pid in table:
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if marker in f.read().split(b"\0"):
                    found.add(pid)
        except OSError:
            continue
    return found


def reap() -> dict[int, int]:
    """Reap every exited child (orphans re-parented here included): pid -> exit code."""
    done: dict[int, int] = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return done
        if pid == 0:
            return done
        done[pid] = os.waitstatus_to_exitcode(status)


def has_children() -> bool:
    """Whether this process has a live child (cheap: no scan of /proc). True when unknown."""
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as f:
            return bool(f.read().split())
    except OSError:
        return True


def kill_everything(harness: int, marker: bytes, exits: dict[int, int], *, scan: bool = True) -> int:
    """SIGKILL the harness's process group, every descendant and every marked process, until
    none is left. The group is signalled only while the harness is not reaped yet: until then
    its pid (the group's id) cannot be reused; afterwards an empty group's id may already name
    another process's group, and what is left of ours are descendants anyway (this process is a
    subreaper). `scan=False`: when no child is left, skip the scan of every process's environment."""
    if not scan and not has_children():
        return 0
    me = os.getpid()
    killed = 0
    for _ in range(100):
        if harness not in exits:
            try:
                os.killpg(harness, signal.SIGKILL)
            except OSError:
                pass
        table = process_table()
        victims = (descendants(me, table) | marked(marker, table)) - {me}
        if not victims:
            return killed
        killed += kill_all(victims)
        time.sleep(0.01)
        exits.update(reap())
    return killed


def kill_all(pids: set[int]) -> int:
    """SIGKILL each; how many were still there to kill."""
    killed = 0
    for pid in pids:
        try:
            os.kill(pid, signal.SIGKILL)
            killed += 1
        except OSError:
            pass
    return killed


# ---------------------------------------------------------------- containers


def engine(ids: list[str], docker_host: str, method: str, suffix: str) -> None:
    """`METHOD /containers/ID{suffix}` on the Docker Engine API for each container: DELETE
    ?force=1 removes one, POST /kill stops it (imported here: launch mode, the common one,
    starts faster without http.client)."""
    import http.client
    import socket
    import urllib.parse

    class UnixConnection(http.client.HTTPConnection):
        def __init__(self, path: str):
            super().__init__("localhost", timeout=30)
            self.unix_path = path

        def connect(self) -> None:
            sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            sock.settimeout(self.timeout)
            sock.connect(self.unix_path)
            self.sock = sock

    url = urllib.parse.urlparse(docker_host or "unix:///var/run/docker.sock")
    for cid in ids:
        conn = UnixConnection(url.path) if url.scheme in ("unix", "") else http.client.HTTPConnection(url.hostname or "localhost", url.port or 2375, timeout=30)
        try:
            conn.request(method, f"/containers/{urllib.parse.quote(cid)}{suffix}")
            conn.getresponse().read()
        except OSError:
            pass
        finally:
            conn.close()


# ---------------------------------------------------------------- modes


class Pump:
    """A pipe the harness writes to, copied into a capture file as it arrives. A pipe, not the
    file itself: a child that reopens the harness's stdout (`> /dev/stdout`, `/proc/PID/fd/1`)
    then opens the pipe again, as it would without benchtape, instead of truncating the file."""

    def __init__(self, path: str):
        self.read_end, self.write_end = os.pipe()
        os.set_blocking(self.read_end, False)
        self.out = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        self.open = True

    def drain(self) -> None:
        """Copy what the pipe holds now (never blocks)."""
        while self.open:
            try:
                data = os.read(self.read_end, 1 << 16)
            except BlockingIOError:
                return
            if not data:
                self.open = False  # every writer closed it
                return
            while data:
                data = data[os.write(self.out, data) :]

    def written(self) -> int:
        return os.fstat(self.out).st_size


def spawn(argv: list[str], cwd: str, env: dict[str, str], stdin: int, stdout: int, stderr: int) -> int:
    """fork + exec in a new session (its pid is its process group); OSError if exec failed."""
    errors_r, errors_w = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:  # the child: never returns
        try:
            os.setsid()
            os.chdir(cwd)
            for fd, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
                os.dup2(fd, target)
            os.closerange(3, errors_w)
            os.closerange(errors_w + 1, 65536)
            os.execvpe(argv[0], argv, env)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent, then gone
            os.write(errors_w, f"{type(exc).__name__}: {exc}".encode()[:4000])
        finally:
            os._exit(127)
    os.close(errors_w)
    failure = os.read(errors_r, 4096)
    os.close(errors_r)
    if failure:
        os.waitpid(pid, 0)
        raise OSError(failure.decode("utf-8", "replace"))
    return pid


def become_subreaper() -> bool:
    """PR_SET_CHILD_SUBREAPER (through ctypes: importing it is a few ms, so a spare supervisor
    does this while it waits for its spec, not once the session is waiting on it)."""
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0)
    except (OSError, AttributeError, ImportError):
        return False  # without it, the marker still finds what the harness left behind


def launch(spec: dict[str, Any], control: Control, subreaper: bool) -> int:
    parent = spec["parent"]
    marker = spec["marker"].encode()
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)  # a child's exit wakes the select below at once
    signal.signal(signal.SIGCHLD, lambda *_: None)
    stdin = os.open(spec["stdin"], os.O_RDONLY)
    out, err = Pump(spec["stdout"]), Pump(spec["stderr"])
    env = dict(spec["env"])
    spawned = time.monotonic()  # CLOCK_MONOTONIC is the host's: benchtape compares it with its own
    try:
        pid = spawn(spec["argv"], spec["cwd"], env, stdin, out.write_end, err.write_end)
    except OSError as exc:
        say("failed " + json.dumps(str(exc)))
        return 0
    finally:
        os.close(out.write_end)
        os.close(err.write_end)
        os.close(stdin)
    say(f"started {pid}")
    exits: dict[int, int] = {}
    why = None
    reaped = 0.0
    while pid not in exits:
        exits.update(reap())
        if pid in exits:
            reaped = time.monotonic()
            break
        waiting = [p.read_end for p in (out, err) if p.open] + [wake_r]
        ready, _, _ = select.select(waiting + ([0] if not control.eof else []), [], [], POLL)
        if wake_r in ready:
            try:
                os.read(wake_r, 512)
            except BlockingIOError:
                pass
        for pump in (out, err):
            if pump.read_end in ready:
                pump.drain()
        commands = control.read(0) if 0 in ready else []
        if "kill" in commands:
            why = why or "killed"
            kill_everything(pid, marker, exits)
        if (os.getppid() != parent or control.eof) and why != "benchtape died":
            why = "benchtape died"
            kill_everything(pid, marker, exits)
    reaped = reaped or time.monotonic()  # reaped inside kill_everything
    out.drain()  # what the harness wrote before it exited and was still in the pipe
    err.drain()
    ended = out.written()  # anything after this is a leftover's
    leftovers = kill_everything(pid, marker, exits, scan=not subreaper) + reported_leftovers(spec.get("leftovers"))
    out.drain()
    err.drain()
    facts = {"exit_code": exits[pid], "stdout_bytes": ended, "killed": why, "leftovers_killed": leftovers, "at": time.time(), "spawned": spawned, "reaped": reaped, "told": time.monotonic()}
    said = json.dumps(facts)  # once, for the file and the message (the first call into json's encoder is ~0.1 ms here)
    write_exit(spec["exit"], said)
    say("exited " + said)
    return 0


def reported_leftovers(path: str | None) -> int:
    """What a fenced harness left running in its PID namespace, killed there by its first
    process when it exited (sandbox/pidfence_init.py): the count it wrote, else 0."""
    if not path:
        return 0
    try:
        with open(path) as f:
            return int(f.read().strip() or 0)
    except (OSError, ValueError):
        return 0


def write_exit(path: str, facts: str) -> None:
    """The exit facts, in one write to the empty exit file made for this process (no temp file
    renamed over it: a file creation and an inode freed, ~0.3-1 ms on a slow disk, between the
    harness's exit and benchtape noticing it). A reader that catches the write half done reads
    JSON that does not parse, which both readers (the recorder, `recover`) take as not yet."""
    data = facts.encode()
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        while data:
            data = data[os.write(fd, data) :]
    finally:
        os.close(fd)


def watch(spec: dict[str, Any], control: Control) -> int:
    """Containers to remove (`add ID`) or, kept with --keep-sandbox, only to stop (`keep ID`)
    if benchtape dies; `forget ID` once benchtape removed one itself."""
    parent = spec["parent"]
    remove: list[str] = list(spec.get("containers") or [])
    stop: list[str] = []
    while True:
        for line in control.read(0.2):
            command, _, arg = line.partition(" ")
            if command in ("add", "keep"):
                target = remove if command == "add" else stop
                if arg not in target:
                    target.append(arg)
            elif command == "forget":
                for target in (remove, stop):
                    if arg in target:
                        target.remove(arg)
            elif command == "done":
                return 0
        if control.eof or os.getppid() != parent:
            engine(remove, spec.get("docker_host", ""), "DELETE", "?force=1&v=1")
            engine(stop, spec.get("docker_host", ""), "POST", "/kill")
            return 0


def warm() -> None:
    """While a spare waits for its spec: the first call into json's encoder and decoder costs
    ~0.1 ms, and the session's start (its spec) and end (its exit facts) each make one."""
    json.loads(json.dumps({"exit_code": 0, "stdout_bytes": 0, "killed": None, "at": time.time(), "spawned": time.monotonic(), "argv": ["a"], "env": {"A": "b"}}))


def main() -> int:
    control = Control()
    subreaper = become_subreaper()  # harmless in watch mode: it starts no process
    warm()
    spec = json.loads(control.first() or "{}")
    if spec.get("mode") == "launch":
        return launch(spec, control, subreaper)
    if spec.get("mode") == "watch":
        return watch(spec, control)
    return 2


if __name__ == "__main__":
    sys.exit(main())
