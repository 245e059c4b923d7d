"""The first process of a fenced command's PID namespace (sandbox/pidfence.py).

Standard library only; run as `python -I -S pidfence_init.py [--report FILE] [--read-only
FOLDER]... [--hide PATH]... -- ARGV...` by `unshare --pid --fork --mount-proc`. Each FOLDER is first bound
read-only at its own path in the namespace's own mount namespace (none of it is seen outside);
one that cannot be is left as it is (the caller's digest of it says whether it changed). Each
PATH is covered by an empty one, and where one cannot be, the command is not started (exit 126,
said on stderr): a task's agent that could read its answer earns no verdict. The command runs as its child, not as the namespace's
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

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC, MS_SYNCHRONOUS, MS_REMOUNT, MS_MANDLOCK = 1, 2, 4, 8, 16, 32, 64
MS_NOATIME, MS_NODIRATIME, MS_BIND, MS_REC, MS_RELATIME = 1024, 2048, 4096, 16384, 1 << 21
ST_RELATIME = 4096  # statvfs's flag for it (the others share their value with the mount flags)
KEPT = MS_NOSUID | MS_NODEV | MS_NOEXEC | MS_SYNCHRONOUS | MS_MANDLOCK | MS_NOATIME | MS_NODIRATIME


def main(argv: list[str]) -> int:
    report = None
    read_only: list[str] = []
    hidden: list[str] = []
    while argv[:1] in (["--report"], ["--read-only"], ["--hide"]):
        if argv[0] == "--report":
            report = argv[1]
        else:
            (read_only if argv[0] == "--read-only" else hidden).append(argv[1])
        argv = argv[2:]
    if argv[:1] == ["--"]:
        argv = argv[1:]
    for folder in read_only:
        bind_read_only(folder)
    for path in hidden:
        if not hide(path) and os.path.lexists(path):  # fail closed: an agent that could read its task's answer is never started
            os.write(2, f"benchtape: could not cover {path} from the agent in its mount namespace, so it was not started (its verdict could not be trusted); run it with --sandbox container\n".encode())
            return 126
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


def bind_read_only(folder: str) -> bool:
    """`folder` bound read-only onto itself (its other mount flags kept: a user namespace may not
    drop nosuid or nodev from a mount it was given); False when the kernel refused."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        flags = os.statvfs(folder).f_flag
    except OSError:
        return False
    kept = (flags & KEPT) | (MS_RELATIME if flags & ST_RELATIME else 0)
    path = os.fsencode(folder)
    if libc.mount(path, path, None, MS_BIND | MS_REC, None) != 0:
        return False
    if libc.mount(None, path, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None) != 0:
        libc.umount2(path, 2)  # MNT_DETACH: the folder as it was
        return False
    return True


def hide(path: str) -> bool:
    """`path` covered, in this namespace only, by an empty read-only folder (a tmpfs) or, for a
    file, by /dev/null: the command finds it there and empty. False when the kernel refused."""
    import ctypes

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        folder = os.path.isdir(path)
    except OSError:
        return False
    target = os.fsencode(path)
    if folder:
        return libc.mount(b"tmpfs", target, b"tmpfs", MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC, b"size=4k,mode=0555") == 0
    return os.path.exists(path) and libc.mount(b"/dev/null", target, None, MS_BIND, None) == 0


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
