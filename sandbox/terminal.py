"""A terminal for an interactive agent: tmux on a private socket, one server per session.

Why tmux rather than a PTY library: a TUI is driven by what is on its screen, and tmux is
a terminal emulator as well as a pseudo-terminal host — `capture-pane` gives the rendered
screen (what a person sees, the evidence benchtape stores), `paste-buffer -p` sends a
bracketed paste (a multi-line prompt arrives as one prompt), `send-keys` types keys, and
`remain-on-exit` keeps the last screen and the exit status of a command that ended. A PTY
library would hand back raw escape sequences and need a second library to render them. A
person can also watch a live session: `tmux -S <socket> attach`. madbench hosts its TUI in
a multiplexer too (magmux), so a session runs the way it would there.

Each session gets its own tmux server (`-S` socket in a private folder, `-f` a config
benchtape writes), started with exactly the sandbox's environment, which the pane
inherits: nothing from benchtape's own environment and no secret on a command line.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Mapping

COLUMNS, ROWS = 160, 45
_CONFIG = """set -g remain-on-exit on
set -g default-terminal xterm-256color
set -g history-limit 10000
set -g status off
set -g escape-time 0
"""


class TerminalError(Exception):
    """The terminal host cannot do what was asked; the message says what to install or fix."""


def tmux_binary() -> str | None:
    return shutil.which("tmux")


def tmux_problem() -> str | None:
    """Why interactive sessions cannot run here (None: they can): a missing or too old tmux."""
    binary = tmux_binary()
    if binary is None:
        return "tmux is not installed (interactive sessions run the agent in a tmux pane); install it: apt-get install tmux"
    try:
        out = subprocess.run([binary, "-V"], capture_output=True, text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"tmux does not answer `tmux -V` ({exc})"
    version = out.split()[-1] if out else ""
    digits = "".join(c for c in version.split(".")[0] if c.isdigit())
    if not digits or int(digits) < 3:
        return f"tmux {version or '(unknown)'} is too old; interactive sessions need tmux 3 or newer (new-session -e, paste-buffer -p)"
    return None


@dataclass
class PaneCommand:
    """How a sandbox runs one command in a terminal: the host argv of the pane, its host cwd,
    the environment it starts with, and (for a command that runs elsewhere, a container)
    how to kill it there."""

    argv: list[str]
    cwd: Path
    env: dict[str, str]
    kill: Callable[[], None] | None = None
    cleanup: Callable[[], None] = field(default=lambda: None)


SOCKET_PATH_MAX = 100  # a Unix socket's path is at most 107 bytes (sun_path); tmux refuses a longer one


def _socket_folder() -> Path:
    """A private folder for the tmux socket: under TMPDIR, unless that path is too long for a
    socket (a deep TMPDIR, as a test runner's or a CI's), then under /tmp, still private (0700)."""
    folder = Path(tempfile.mkdtemp(prefix="benchtape-tty-"))
    if len(str(folder / "tmux.sock").encode()) <= SOCKET_PATH_MAX:
        return folder
    folder.rmdir()
    return Path(tempfile.mkdtemp(prefix="benchtape-tty-", dir="/tmp"))


class Terminal:
    """One pane running one command. Start it, read the screen, type, and end it."""

    def __init__(self, command: PaneCommand, *, columns: int = COLUMNS, rows: int = ROWS):
        binary = tmux_binary()
        if binary is None:
            raise TerminalError(tmux_problem() or "tmux is missing")
        self.tmux = binary
        self.command = command
        self.folder = _socket_folder()
        self.socket = self.folder / "tmux.sock"
        (self.folder / "tmux.conf").write_text(_CONFIG, encoding="utf-8")
        self.columns, self.rows = columns, rows
        self.pane_pid: int | None = None
        self.started = False

    # ------------------------------------------------------------ lifecycle
    def start(self) -> Terminal:
        env = dict(self.command.env)
        env.setdefault("TERM", "xterm-256color")
        argv = [self.tmux, "-S", str(self.socket), "-f", str(self.folder / "tmux.conf"), "new-session", "-d", "-s", "agent",
                "-x", str(self.columns), "-y", str(self.rows), "-c", str(self.command.cwd), "--", *self.command.argv]
        done = subprocess.run(argv, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        if done.returncode != 0:
            raise TerminalError(f"tmux could not start the agent: {done.stderr.strip() or done.stdout.strip()}")
        self.started = True
        pid = self._query("#{pane_pid}")
        self.pane_pid = int(pid) if pid.isdigit() else None
        return self

    def close(self) -> None:
        """Kill whatever still runs, stop the tmux server, remove its folder."""
        try:
            if self.started:
                self.kill()
                self._tmux("kill-server", check=False)
        finally:
            self.command.cleanup()
            shutil.rmtree(self.folder, ignore_errors=True)

    def kill(self) -> None:
        """SIGKILL the agent's process group (where it runs), then the pane's, while its
        process is still running.

        Only then: once tmux has reaped the pane's process, its id is free, and on a machine
        that starts many processes (pid_max is 32768 here) another process may soon lead a
        group with that id; signalling it then would kill someone else's processes (a test
        run's other tmux servers, once). What the agent left running after the pane's
        process exited is its sandbox's to kill (`command.kill`)."""
        if self.command.kill is not None:
            try:
                self.command.kill()
            except Exception:  # noqa: BLE001 - best effort: the sandbox's own removal kills it too
                pass
        if self.pane_pid is None or not self._pane_running():
            return
        try:
            os.killpg(self.pane_pid, signal.SIGKILL)
        except ProcessLookupError:
            # No such group: the pane's process was just forked and has not made its own session
            # yet (a kill right after start, under load). It is not reaped, so its pid is its own.
            try:
                os.kill(self.pane_pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        except PermissionError:
            pass

    def _pane_running(self) -> bool:
        """Whether tmux answers and has no exit status for the pane's process (not reaped yet)."""
        out = self._query("#{pane_pid}:#{pane_dead_status}:#{pane_dead_signal}") if self.started else ""
        pid, _, dead = out.partition(":")
        return pid == str(self.pane_pid) and dead.strip(":") == ""

    # ------------------------------------------------------------ state
    def screen(self) -> str:
        """The visible screen as text (trailing blanks trimmed)."""
        out = self._tmux("capture-pane", "-p", "-t", "agent", check=False)
        return "\n".join(line.rstrip() for line in out.splitlines()).rstrip("\n")

    def exit_status(self) -> int | None:
        """The command's exit status once it has ended (-N: killed by signal N), else None.

        tmux knows it once it has reaped the command, even while a child the command left
        behind still holds the terminal open (the pane then is not yet "dead"); until then
        the command counts as running.

        Under load tmux can miss the SIGCHLD of the pane's process: the pane is dead (its
        terminal closed) and the process a zombie nobody reaps, so no status ever comes. A
        child of the server's own exiting (`run-shell true`) makes it reap every child, and
        the status is read again."""
        dead, status, signal_ = self._dead_status()
        if dead and status is None and signal_ is None:
            self._tmux("run-shell", "true", check=False)
            dead, status, signal_ = self._dead_status()
        if status is not None:
            return status
        return -signal_ if signal_ is not None else None

    def _dead_status(self) -> tuple[bool, int | None, int | None]:
        """(the pane is dead, its process's exit status, the signal that killed it), as tmux knows them."""
        dead, _, rest = self._query("#{pane_dead}:#{pane_dead_status}:#{pane_dead_signal}").partition(":")
        status, _, signal_ = rest.partition(":")
        return dead == "1", int(status) if status.strip().lstrip("-").isdigit() else None, int(signal_) if signal_.strip().isdigit() else None

    def exited(self) -> bool:
        """Whether the command has ended: tmux has its status, or its process is a zombie that
        tmux has not reaped yet (under load that took seconds here) or is gone."""
        if self.exit_status() is not None:
            return True
        if self.pane_pid is None:
            return False
        try:
            stat = Path(f"/proc/{self.pane_pid}/stat").read_text()
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return stat.rpartition(")")[2].split()[:1] in (["Z"], ["X"])

    # ------------------------------------------------------------ input
    def type(self, text: str) -> None:
        """Type text as keys (no key names interpreted)."""
        self._tmux("send-keys", "-t", "agent", "-l", text)

    def paste(self, text: str) -> None:
        """A bracketed paste: the program sees one paste, newlines included, not Enter presses."""
        buffer = self.folder / "paste.txt"
        buffer.write_text(text, encoding="utf-8")
        self._tmux("load-buffer", "-b", "prompt", str(buffer))
        self._tmux("paste-buffer", "-p", "-d", "-b", "prompt", "-t", "agent")

    def keys(self, *names: str) -> None:
        """Press named keys (Enter, Escape, C-d, ...)."""
        self._tmux("send-keys", "-t", "agent", *names)

    # ------------------------------------------------------------ tmux
    def _query(self, fmt: str) -> str:
        return self._tmux("display-message", "-p", "-t", "agent", fmt, check=False).strip()

    def _tmux(self, *args: str, check: bool = True) -> str:
        done = subprocess.run([self.tmux, "-S", str(self.socket), *args], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        if check and done.returncode != 0:
            raise TerminalError(f"tmux {args[0]} failed: {done.stderr.strip()}")
        return done.stdout


def wait_for(predicate: Callable[[], bool], seconds: float, every: float = 0.1) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(every)
    return predicate()


def pane_env(env: Mapping[str, str]) -> dict[str, str]:
    """The pane's environment: the sandbox's, with a terminal type a TUI renders for."""
    return {**env, "TERM": "xterm-256color"}
