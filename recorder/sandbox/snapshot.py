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


def snapshot(root: Path, redact: Any = None) -> tuple[bytes, dict[str, Any]]:
    """Tar the tree under root (sorted, timestamps kept); returns the bytes and {files, bytes}.

    Nothing is followed: folders and files are opened relative to their parent folder's
    descriptor without following links (recorder.sandbox.nofollow), so a process that swaps a
    folder for a link to /etc while this runs cannot make it store host files. Modes keep only
    the permission bits (no setuid, setgid or sticky). Devices, FIFOs and sockets are left out
    and counted in `skipped`.

    A symlink pointing out of the tree (a venv's `bin/python -> /usr/bin/python3`, say) is left
    out and listed in `links_out`: `restore` refuses such links, and one of them must not make
    the whole workspace ungradable.

    `redact` (a recorder.redact.Redactor): files holding a known secret value, in any of its
    forms, are stored with it replaced by [REDACTED] and listed in `redacted`.
    """
    from recorder.sandbox.nofollow import walk

    buf = io.BytesIO()
    files = total = skipped = 0
    links_out: list[str] = []
    redacted: list[str] = []
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for folder in walk(root):
            if folder.rel and not folder.entries:
                tar.addfile(_info(folder.rel, tarfile.DIRTYPE, folder.st))
            for e in folder.entries:
                if e.kind == "file":
                    data = e.read(MAX_SNAPSHOT_BYTES - total)
                    if data is None:
                        skipped += 1  # swapped for something else since it was listed
                        continue
                    if redact is not None:
                        data, hits = redact.known_in_bytes(data)
                        if hits:
                            redacted.append(e.rel)
                    total += len(data)
                    if total > MAX_SNAPSHOT_BYTES:
                        raise OSError(f"workspace is larger than {MAX_SNAPSHOT_BYTES} bytes; not snapshotted")
                    info = _info(e.rel, tarfile.REGTYPE, e.st)
                    info.size = len(data)
                    tar.addfile(info, io.BytesIO(data))
                    files += 1
                elif e.kind == "link":
                    target = os.path.normpath(os.path.join(os.path.dirname(e.rel), e.link or ""))
                    if os.path.isabs(e.link or "") or target == ".." or target.startswith("../"):
                        links_out.append(f"{e.rel} -> {e.link}")
                        continue
                    info = _info(e.rel, tarfile.SYMTYPE, e.st)
                    info.linkname = e.link or ""
                    tar.addfile(info)
                elif e.kind == "other":
                    skipped += 1
    facts: dict[str, Any] = {"files": files, "bytes": total}
    if links_out:
        facts["links_out"] = links_out[:100]
        facts["links_out_count"] = len(links_out)
    if skipped:
        facts["skipped"] = skipped
    if redacted:
        facts["redacted"] = redacted[:100]
        facts["redacted_count"] = len(redacted)
    return buf.getvalue(), facts


def _info(name: str, kind: bytes, st: os.stat_result) -> tarfile.TarInfo:
    """A tar header as the snapshot stores it: owner root, permission bits only."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = stat.S_IMODE(st.st_mode) & 0o777
    info.mtime = st.st_mtime
    return info


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
