"""Agent-written code never reads another process's environment: a PID namespace of its own.

At the local levels the agent and every grading command (an `exec` or `python` check runs
code the agent wrote) get a scrubbed environment. That is not enough by itself: the
environment of benchtape's own process, of its supervisor and of whatever started benchtape
(your shell, a CI runner) holds every host secret, in `/proc/<pid>/environ`, readable by the
same user and by root. So those commands run in a PID namespace with its own /proc
(`unshare --pid --fork --mount-proc --kill-child`; where benchtape is not root, inside a user
namespace too, `--user --map-current-user`): no process outside it can be seen, read or
signalled, and when the command (its namespace's first process) exits, the kernel ends
everything it left in there.

Where the kernel or a seccomp profile refuses (a container without CAP_SYS_ADMIN, user
namespaces turned off, no `unshare`), commands run without it, and `fence().why` says why:
preflight notes it and each session's `session.started` records it (`process_fence`).

The namespace has a mount namespace of its own too (`--mount-proc`), so folders the command may
read but never write (`read_only`: a task's project environment, which is a cache every later
verifier uses) are bound read-only at their own paths in it, for it alone: a write there fails
with EROFS, whoever the command runs as. `Fence.read_only_works` says whether this host allows it.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Sequence

FLAGS = ("--pid", "--fork", "--mount-proc", "--kill-child")
INIT = Path(__file__).with_name("pidfence_init.py")


@dataclass(frozen=True)
class Fence:
    prefix: tuple[str, ...]  # empty: no fence here
    why: str | None = None  # why there is none

    @property
    def confined(self) -> bool:
        return bool(self.prefix)

    def wrap(self, argv: list[str], cwd: Path | str | None = None, env: Mapping[str, str] | None = None, report: Path | None = None, read_only: Sequence[str] = (), hidden: Sequence[str] = ()) -> list[str]:
        """argv, started in a PID namespace of its own under a small first process
        (sandbox/pidfence_init.py; `report`: the file it writes how many processes the command
        left running into; `read_only`: folders it binds read-only before the command starts;
        `hidden`: folders and files it covers with empty ones). A program that cannot be found
        is left unwrapped, so starting it fails exactly as it would have (nothing runs either way)."""
        if not self.prefix or not argv or not _findable(argv[0], cwd, env):
            return list(argv)
        bound = [arg for folder in read_only for arg in ("--read-only", str(folder))]
        bound += [arg for path in hidden for arg in ("--hide", str(path))]
        return [*self.prefix, "--", sys.executable, "-I", "-S", str(INIT), *(["--report", str(report)] if report else []), *bound, "--", *argv]

    @functools.cached_property
    def read_only_works(self) -> bool:
        """Whether a folder bound read-only in the namespace refuses a write there (probed once)."""
        if not self.prefix:
            return False
        import tempfile

        with tempfile.TemporaryDirectory(prefix="benchtape-ro-") as folder:
            probe = "echo x > " + os.path.join(folder, "w") + " 2>/dev/null && exit 1 || exit 0"
            try:
                done = subprocess.run(self.wrap(["/bin/sh", "-c", probe], read_only=[folder]), stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False)
            except (OSError, subprocess.TimeoutExpired):
                return False
            return done.returncode == 0 and not os.path.exists(os.path.join(folder, "w"))

    def facts(self) -> dict[str, Any]:
        return {"pid_namespace": True} if self.confined else {"pid_namespace": False, "why": self.why}


def _findable(program: str, cwd: Path | str | None, env: Mapping[str, str] | None) -> bool:
    if os.sep in program:
        path = Path(program) if os.path.isabs(program) or cwd is None else Path(cwd) / program
        return path.is_file() and os.access(path, os.X_OK)
    path_var = (env or {}).get("PATH", os.environ.get("PATH", os.defpath))
    return shutil.which(program, path=path_var) is not None


@functools.cache
def fence() -> Fence:
    """This machine's fence, probed once per process: a shell started in it must be PID 1."""
    unshare = shutil.which("unshare") or next((p for p in ("/usr/bin/unshare", "/bin/unshare") if os.access(p, os.X_OK)), None)
    if unshare is None:
        return Fence((), "`unshare` (util-linux) is not installed")
    tries = [(unshare, *FLAGS)] if os.geteuid() == 0 else [(unshare, "--user", "--map-current-user", *FLAGS), (unshare, "--user", "--map-root-user", *FLAGS)]
    last = ""
    for prefix in tries:
        try:
            done = subprocess.run([*prefix, "--", "/bin/sh", "-c", "echo $$"], stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=10, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            last = str(exc)
            continue
        if done.returncode == 0 and done.stdout.strip() == "1":
            return Fence(tuple(prefix))
        text = (done.stderr or done.stdout).strip()
        last = text.splitlines()[-1] if text else f"exit {done.returncode}"
    who = "as root" if os.geteuid() == 0 else "without root (user namespaces)"
    return Fence((), f"this machine refuses a PID namespace {who}: {last}")


def unconfined_note() -> str | None:
    """A sentence for preflight when there is no fence here; None when there is one."""
    f = fence()
    if f.confined:
        return None
    return f"agents and grading commands at levels none, workspace and home can read other processes' environments (/proc/<pid>/environ, benchtape's own included) here: {f.why}; use `sandbox: container` to keep host secrets from agent-written code"


def uncovered_note() -> str | None:
    """A sentence for an evaluation's preflight when there is no fence here: nothing covers a
    task's secrets from its agent at a host level (spec/task_cells.hidden_from_agent), so a
    pass there is not proof; None when there is one."""
    f = fence()
    if f.confined:
        return None
    return f"task cells at levels workspace and home: nothing here can cover a task's hidden tests, its reference fix and the repository's history from its agent ({f.why}), so a cell's pass is no proof the agent solved the task; use `--sandbox container` for verdicts it cannot cheat"
