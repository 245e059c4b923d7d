"""Workspace snapshots: a deterministic tar of the final tree, and a restore that cannot escape.

A snapshot is what lets a session be graded later without its sandbox; restoring one
is reading untrusted input (an agent wrote that tree), so every entry is checked.
"""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path
from typing import Any

from recorder.errors import BadInput

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


def snapshot(root: Path) -> tuple[bytes, dict[str, Any]]:
    """Tar the tree under root (sorted, timestamps kept); returns the bytes and {files, bytes}."""
    buf = io.BytesIO()
    files = total = 0
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            rel_dir = os.path.relpath(dirpath, root)
            for name in sorted(filenames) + [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]:
                full = os.path.join(dirpath, name)
                arc = os.path.normpath(os.path.join(rel_dir, name))
                try:
                    info = tar.gettarinfo(full, arcname=arc)
                except OSError:
                    continue
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                if info.isreg():
                    total += info.size
                    if total > MAX_SNAPSHOT_BYTES:
                        raise OSError(f"workspace is larger than {MAX_SNAPSHOT_BYTES} bytes; not snapshotted")
                    with open(full, "rb") as f:
                        tar.addfile(info, f)
                    files += 1
                elif info.issym() or info.isdir():
                    tar.addfile(info)
            if rel_dir != "." and not filenames and not dirnames:
                tar.addfile(tar.gettarinfo(dirpath, arcname=os.path.normpath(rel_dir)))
    return buf.getvalue(), {"files": files, "bytes": total}


def restore(data: bytes, dest: Path) -> None:
    """Unpack a snapshot into dest, refusing `..`, absolute paths, devices and links out of the tree."""
    dest = dest.resolve()
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        members = tar.getmembers()
        for m in members:
            _check_member(m, dest)
        for m in members:
            target = dest / m.name
            if m.isdir():
                target.mkdir(parents=True, exist_ok=True)
            elif m.issym():
                target.parent.mkdir(parents=True, exist_ok=True)
                _refuse_through_link(target.parent, dest, m.name)
                os.symlink(m.linkname, target)
            elif m.isreg():
                target.parent.mkdir(parents=True, exist_ok=True)
                _refuse_through_link(target.parent, dest, m.name)
                src = tar.extractfile(m)
                with open(target, "wb") as f:
                    f.write(src.read() if src else b"")
                os.chmod(target, stat.S_IMODE(m.mode) | stat.S_IRUSR | stat.S_IWUSR)


def _check_member(m: tarfile.TarInfo, dest: Path) -> None:
    name = m.name
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        raise BadInput(f"snapshot entry {name!r} is an absolute path; refusing to restore it", fix="the snapshot is corrupt or hostile; re-run the session")
    parts = Path(name).parts
    if ".." in parts:
        raise BadInput(f"snapshot entry {name!r} climbs out of the tree with '..'; refusing to restore it", fix="the snapshot is corrupt or hostile; re-run the session")
    if not (m.isreg() or m.isdir() or m.issym()):
        raise BadInput(f"snapshot entry {name!r} is not a file, folder or symlink; refusing to restore it")
    if m.issym():
        link = m.linkname
        resolved = os.path.normpath(os.path.join(dest, os.path.dirname(name), link))
        if os.path.isabs(link) or not (resolved == str(dest) or resolved.startswith(str(dest) + os.sep)):
            raise BadInput(f"snapshot entry {name!r} is a link pointing out of the tree ({link}); refusing to restore it")


def _refuse_through_link(parent: Path, dest: Path, name: str) -> None:
    real = parent.resolve()
    if not (real == dest or str(real).startswith(str(dest) + os.sep)):
        raise BadInput(f"snapshot entry {name!r} would be written through a link out of the tree; refusing to restore it")
