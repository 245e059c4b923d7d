"""Workspace snapshots: a deterministic tar of the final tree, and a restore that cannot escape.

A snapshot is what lets a session be graded later without its sandbox; restoring one
is reading untrusted input (an agent wrote that tree), so every entry is checked.
"""

from __future__ import annotations

import io
import os
import shutil
import stat
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any

from recorder.errors import BadInput

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024


def snapshot(root: Path) -> tuple[bytes, dict[str, Any]]:
    """Tar the tree under root (sorted, timestamps kept); returns the bytes and {files, bytes}.

    A symlink pointing out of the tree (a venv's `bin/python -> /usr/bin/python3`, say) is left
    out and listed in `links_out`: `restore` refuses such links, and one of them must not make
    the whole workspace ungradable.
    """
    buf = io.BytesIO()
    files = total = 0
    links_out: list[str] = []
    real_root = os.path.realpath(root)
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
                elif info.issym():
                    target = os.path.normpath(os.path.join(real_root, os.path.dirname(arc), info.linkname))
                    if os.path.isabs(info.linkname) or not (target == real_root or target.startswith(real_root + os.sep)):
                        links_out.append(f"{arc} -> {info.linkname}")
                        continue
                    tar.addfile(info)
                elif info.isdir():
                    tar.addfile(info)
            if rel_dir != "." and not filenames and not dirnames:
                tar.addfile(tar.gettarinfo(dirpath, arcname=os.path.normpath(rel_dir)))
    facts: dict[str, Any] = {"files": files, "bytes": total}
    if links_out:
        facts["links_out"] = links_out[:100]
        facts["links_out_count"] = len(links_out)
    return buf.getvalue(), facts


def restore(data: bytes, dest: Path) -> None:
    """Unpack a snapshot into dest; nothing is ever written outside it.

    Refused with a clear error: `..`, absolute paths, hard links, devices and FIFOs, links
    pointing out of the tree (also when an escape only appears once later entries exist),
    and any entry that would be written through a link. Folders are created one component
    at a time and files are opened without following links, so a crafted order of entries
    cannot redirect a write.
    """
    dest.mkdir(parents=True, exist_ok=True)
    dest = dest.resolve()
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:*") as tar:
        members = tar.getmembers()
        total = 0
        for m in members:
            _check_member(m, dest)
            total += m.size if m.isreg() else 0
            if total > MAX_SNAPSHOT_BYTES:
                raise BadInput(f"snapshot holds more than {MAX_SNAPSHOT_BYTES} bytes; refusing to restore it", fix=_HOSTILE)
        links: list[tuple[str, Path]] = []
        for m in members:
            parts = PurePosixPath(m.name).parts
            if not parts:
                continue  # the root itself
            if m.isdir():
                _safe_dir(dest, parts, m.name)
                continue
            target = _safe_dir(dest, parts[:-1], m.name) / parts[-1]
            _clear(target, m.name)
            if m.issym():
                # judged from where it really lands: `s -> .` makes `s/l -> ..` point at the parent
                if not _inside(Path(os.path.realpath(os.path.join(target.parent, m.linkname))), dest):
                    raise BadInput(f"snapshot entry {m.name!r} is a link that points out of the tree where it lands ({m.linkname}); refusing to restore it", fix=_HOSTILE)
                os.symlink(m.linkname, target)
                links.append((m.name, target))
            else:
                _write_file(tar, m, target)
        # `l -> x/..` is inside until a later `x -> .` makes it `..`: judge links on the finished tree.
        for name, link in links:
            if os.path.islink(link) and not _inside(Path(os.path.realpath(link)), dest):
                os.unlink(link)
                raise BadInput(f"snapshot entry {name!r} is a link that points out of the tree once restored ({os.readlink(link) if os.path.islink(link) else ''}); refusing to restore it", fix=_HOSTILE)


_HOSTILE = "the snapshot is corrupt or hostile; re-run the session"


def _check_member(m: tarfile.TarInfo, dest: Path) -> None:
    name = m.name
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        raise BadInput(f"snapshot entry {name!r} is an absolute path; refusing to restore it", fix=_HOSTILE)
    if ".." in PurePosixPath(name).parts:
        raise BadInput(f"snapshot entry {name!r} climbs out of the tree with '..'; refusing to restore it", fix=_HOSTILE)
    if m.islnk():
        raise BadInput(f"snapshot entry {name!r} is a hard link (to {m.linkname!r}); refusing to restore it", fix=_HOSTILE)
    if m.ischr() or m.isblk():
        raise BadInput(f"snapshot entry {name!r} is a device file; refusing to restore it", fix=_HOSTILE)
    if m.isfifo():
        raise BadInput(f"snapshot entry {name!r} is a FIFO; refusing to restore it", fix=_HOSTILE)
    if not (m.isreg() or m.isdir() or m.issym()):
        raise BadInput(f"snapshot entry {name!r} is not a file, folder or symlink; refusing to restore it", fix=_HOSTILE)
    if m.isreg() and not PurePosixPath(name).parts:
        raise BadInput(f"snapshot entry {name!r} is a file with no name; refusing to restore it", fix=_HOSTILE)
    if m.issym():
        link = m.linkname
        resolved = Path(os.path.normpath(os.path.join(dest, os.path.dirname(name), link)))
        if os.path.isabs(link) or not _inside(resolved, dest):
            raise BadInput(f"snapshot entry {name!r} is a link pointing out of the tree ({link}); refusing to restore it", fix=_HOSTILE)


def _safe_dir(dest: Path, parts: tuple[str, ...], name: str) -> Path:
    """The real folder dest/parts, made one component at a time; a link on the way must stay inside dest."""
    cur = dest
    for part in parts:
        nxt = cur / part
        if nxt.is_symlink():
            real = Path(os.path.realpath(nxt))
            if not _inside(real, dest):
                raise BadInput(f"snapshot entry {name!r} would be written through a link out of the tree ({part} -> {os.readlink(nxt)}); refusing to restore it", fix=_HOSTILE)
            if not real.is_dir():
                raise BadInput(f"snapshot entry {name!r} needs {part!r} to be a folder, and it is a link to something else; refusing to restore it", fix=_HOSTILE)
            cur = real
        elif nxt.is_dir():
            cur = nxt
        elif os.path.lexists(nxt):
            raise BadInput(f"snapshot entry {name!r} needs {part!r} to be a folder, and it is a file; refusing to restore it", fix=_HOSTILE)
        else:
            nxt.mkdir()
            cur = nxt
    return cur


def _clear(target: Path, name: str) -> None:
    """A later entry replaces an earlier file or link of the same name (never writing through the link)."""
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.is_dir():
        raise BadInput(f"snapshot entry {name!r} would replace a folder; refusing to restore it", fix=_HOSTILE)


def _write_file(tar: tarfile.TarFile, m: tarfile.TarInfo, target: Path) -> None:
    src = tar.extractfile(m)
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
    with os.fdopen(fd, "wb") as f:
        if src is not None:
            shutil.copyfileobj(src, f)
        os.fchmod(f.fileno(), (stat.S_IMODE(m.mode) & 0o777) | stat.S_IRUSR | stat.S_IWUSR)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
