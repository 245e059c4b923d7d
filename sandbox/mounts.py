"""nosuid,nodev for the workspace a container writes into.

Docker's bind mounts take no nosuid/nodev option (`-v src:dst:nosuid` is "invalid mode";
the local volume driver's `o=bind,nosuid,nodev` mounts the bind without them, as its
remount only happens for read-only). What works: make the host folder a bind mount of
itself remounted nosuid,nodev; docker's bind of it inherits both flags inside the container
(verified in /proc/self/mountinfo there). That needs CAP_SYS_ADMIN on the host (benchtape
running as root); otherwise the workspace is mounted without them and the session's facts
say so. Either way the container runs without CAP_MKNOD and with no-new-privileges, and the
snapshot keeps permission bits only (sandbox/container.py, snapshot.py).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
from pathlib import Path

MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_BIND = 32, 4096
MS_NOATIME, MS_NODIRATIME, MS_RELATIME = 1024, 2048, 1 << 21
MNT_DETACH = 2
# statvfs flags carried over to the remount (a flag the kernel locked must be kept)
_KEPT = ((os.ST_RDONLY, MS_RDONLY), (os.ST_NOEXEC, MS_NOEXEC), (os.ST_NOATIME, MS_NOATIME), (os.ST_NODIRATIME, MS_NODIRATIME), (getattr(os, "ST_RELATIME", 4096), MS_RELATIME))


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


def protect(folder: Path) -> str | None:
    """Make `folder` a nosuid,nodev mount of itself. None when done, else why it could not be."""
    if os.geteuid() != 0:
        return "benchtape is not root, so it cannot remount the workspace nosuid,nodev"
    path = os.fsencode(os.path.realpath(folder))
    libc = _libc()
    if libc.mount(path, path, None, MS_BIND, None) != 0:
        return f"bind-mounting the workspace failed: {os.strerror(ctypes.get_errno())}"
    current = os.statvfs(path).f_flag
    flags = MS_REMOUNT | MS_BIND | MS_NOSUID | MS_NODEV
    for st_flag, ms_flag in _KEPT:
        if current & st_flag:
            flags |= ms_flag
    if libc.mount(None, path, None, flags, None) != 0:
        why = os.strerror(ctypes.get_errno())
        libc.umount2(path, MNT_DETACH)
        return f"remounting the workspace nosuid,nodev failed: {why}"
    return None


def mounted(folder: Path) -> bool:
    """Whether `folder` is a mount point (a bind of a folder onto itself included)."""
    target = os.path.realpath(folder)
    try:
        with open("/proc/self/mountinfo", "rb") as f:
            for line in f:
                point = line.split(b" ")[4].decode("unicode_escape") if line.count(b" ") > 4 else ""
                if point == target:
                    return True
    except OSError:
        return False
    return False


def release(folder: Path) -> None:
    """Undo `protect` (lazily: a container still holding it keeps its own mount)."""
    while mounted(folder):
        if _libc().umount2(os.fsencode(os.path.realpath(folder)), MNT_DETACH) != 0:
            return
