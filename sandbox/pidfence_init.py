"""The first process of a fenced command's PID namespace (sandbox/pidfence.py).

Standard library only; run as `python -I -S pidfence_init.py [--report FILE] -- ARGV...` by
`unshare --pid --fork --mount-proc`. The command runs as its child, not as the namespace's
PID 1 itself: a PID 1 ignores every signal it has no handler for (a SIGTERM it sends itself, a
test suite's own `kill`), and orphans re-parent to it. This process reaps them; when the
command exits it counts what the command left running in the namespace (into FILE, for the
supervisor's "left N processes running" note), kills it, and exits with the command's status
(a death by signal as 128+N: a namespace's first process cannot die of its own signal).
"""

from __future__ import annotations

import os
import signal
import sys


def main(argv: list[str]) -> int:
    report = None
    if argv[:1] == ["--report"]:
        report, argv = argv[1], argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    pid = os.fork()
    if pid == 0:
        for ignored in (signal.SIGPIPE, signal.SIGXFSZ):  # Python ignores these; an exec would keep them ignored in the command
            signal.signal(ignored, signal.SIG_DFL)
        try:
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"{argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's output ends when the command's writers do, not this one
        os.dup2(quiet, fd)
    status = 0
    while True:
        try:
            done, got = os.waitpid(-1, 0)
        except ChildProcessError:
            break
        except InterruptedError:
            continue
        if done == pid:
            status = got
            break
    left = _alive()
    if left:
        os.kill(-1, signal.SIGKILL)  # everything in this namespace but this process
        if report:
            try:
                with open(report, "w") as f:
                    f.write(str(len(left)))
            except OSError:
                pass
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


def _alive() -> list[int]:
    """The namespace's processes but this one, not counting the dead waiting to be reaped."""
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit() or name == "1":
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as f:
                state = f.read().rsplit(b")", 1)[1].split()[0]
        except (OSError, IndexError):
            continue
        if state != b"Z":
            out.append(int(name))
    return out


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
