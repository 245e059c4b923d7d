"""Reading a tree someone else may still be changing, without ever following a link.

A workspace is read after an agent ran in it; a process the agent left behind (or a race
with one that is being killed) can swap a folder for a symlink to `/etc` between the
moment a path is listed and the moment it is opened. Path-based walking (`os.walk` +
`open(path)`) follows such a swap and reads the host's files. Here every folder is opened
relative to its parent's file descriptor with O_NOFOLLOW|O_DIRECTORY, every file with
O_NOFOLLOW|O_NONBLOCK relative to its folder's descriptor and checked with fstat after the
open, so whatever is swapped in later, what is read is what lies inside the tree. Walking is
iterative (no recursion) and keeps one descriptor per level of the current path only.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterator

MAX_DEPTH = 256  # folders deep: one open descriptor per level, and deeper paths break PATH_MAX

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)


@dataclass(frozen=True)
class Entry:
    """One name in a folder, as lstat saw it (`kind`: file, link, dir or other)."""

    rel: str  # path relative to the root, posix, no leading ./
    name: str
    kind: str
    st: os.stat_result
    dir_fd: int  # the open folder holding it (valid only while the walk is at this folder)
    link: str | None = None

    def read(self, limit: int) -> bytes | None:
        """The file's bytes (at most `limit`, else OSError), or None when what is there now is
        not a regular file (it was swapped for a link, a FIFO, a device since it was listed)."""
        try:
            fd = os.open(self.name, _FILE_FLAGS, dir_fd=self.dir_fd)
        except OSError:
            return None  # gone, or a link now (ELOOP)
        try:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                return None
            if st.st_size > limit:
                raise OSError(f"{self.rel} is larger than {limit} bytes")
            chunks, size = [], 0
            while True:
                chunk = os.read(fd, 1 << 20)
                if not chunk:
                    break
                size += len(chunk)
                if size > limit:
                    raise OSError(f"{self.rel} is larger than {limit} bytes")
                chunks.append(chunk)
            return b"".join(chunks)
        finally:
            os.close(fd)


def read_inside(root: Path, rel: str, limit: int) -> bytes | None:
    """The bytes of `rel` (a relative path) under `root`, read without following a link at any
    step below `root` (which is ours): None when there is nothing by that name; OSError naming it
    when a step is a link, or the file is a FIFO, a device, a folder (something a box made so
    that the host would read elsewhere), or larger than `limit`. For what a box wrote into a host
    folder (a verifier's reward file)."""
    parts = [p for p in rel.split("/") if p not in ("", ".")]
    if not parts or ".." in parts:
        raise ValueError(f"{rel!r} is no relative path inside the folder")
    try:
        fd = os.open(os.path.realpath(root), _DIR_FLAGS)
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        for i, part in enumerate(parts):
            try:
                st = os.stat(part, dir_fd=fd, follow_symlinks=False)
            except FileNotFoundError:
                return None
            here = "/".join(parts[: i + 1])
            last = i == len(parts) - 1
            if stat.S_ISLNK(st.st_mode):
                raise OSError(f"{here} is a symbolic link: benchtape never follows one there (it would have the host read its own files)")
            if not last:
                if not stat.S_ISDIR(st.st_mode):
                    return None
                child = os.open(part, _DIR_FLAGS, dir_fd=fd)
                os.close(fd)
                fd = child
                continue
            if not stat.S_ISREG(st.st_mode):
                raise OSError(f"{here} is {'a folder' if stat.S_ISDIR(st.st_mode) else 'no regular file (a FIFO, a socket or a device)'}, not a file")
            data = Entry(here, part, "file", st, fd).read(limit)
            if data is None:
                raise OSError(f"{here} changed into something other than a regular file while it was read")
            return data
        return None
    finally:
        os.close(fd)


def _kind(mode: int) -> str:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "other"


def _listing(fd: int, rel: str) -> list[Entry]:
    entries = []
    for name in sorted(os.listdir(fd)):
        try:
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except OSError:
            continue  # removed since it was listed
        kind = _kind(st.st_mode)
        link = None
        if kind == "link":
            try:
                link = os.readlink(name, dir_fd=fd)
            except OSError:
                continue
        entries.append(Entry(name if rel == "" else f"{rel}/{name}", name, kind, st, fd, link))
    return entries


@dataclass(frozen=True)
class Folder:
    rel: str  # relative to the root; "" for the root itself
    st: os.stat_result  # of the opened folder itself
    entries: list[Entry]


def walk(root: Path, skip: Callable[[str], bool] | None = None) -> Iterator[Folder]:
    """Every folder (relative path, its own stat, its entries), depth first,
    names sorted. Sub-folders are entered through their parent's descriptor without following
    links; one that turned into something else since it was listed is skipped. `skip`: an
    entry whose relative path it accepts is left out, and a folder left out is not entered."""
    top = os.open(os.path.realpath(root), _DIR_FLAGS)  # the root is ours; below it nothing is followed
    stack: list[tuple[int, Iterator[Entry]]] = []
    listing = _listing if skip is None else (lambda fd, rel: [e for e in _listing(fd, rel) if not skip(e.rel)])
    try:
        entries = listing(top, "")
        stack.append((top, iter([e for e in entries if e.kind == "dir"])))
        yield Folder("", os.fstat(top), entries)
        while stack:
            fd, subdirs = stack[-1]
            entry = next(subdirs, None)
            if entry is None:
                os.close(fd)
                stack.pop()
                continue
            if len(stack) >= MAX_DEPTH:
                raise OSError(f"the tree nests deeper than {MAX_DEPTH} folders at {entry.rel}")
            try:
                child = os.open(entry.name, _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue  # swapped for a link (ELOOP/ENOTDIR) or removed
            try:
                entries = listing(child, entry.rel)
            except OSError:
                os.close(child)
                continue
            stack.append((child, iter([e for e in entries if e.kind == "dir"])))
            yield Folder(entry.rel, os.fstat(child), entries)
    finally:
        for fd, _ in stack:
            os.close(fd)


def defuse(root: Path, listed: int = 20) -> list[str]:
    """Remove device nodes and clear setuid/setgid bits on files under root (a container's
    root user can make both in a host-mounted workspace; on the host, a device node owned
    by the user is raw access to a disk). Nothing is followed. Returns what was done."""
    devices: list[str] = []
    setids: list[str] = []
    for folder in walk(root):
        for e in folder.entries:
            mode = e.st.st_mode
            if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
                try:
                    os.unlink(e.name, dir_fd=e.dir_fd)
                    devices.append(e.rel)
                except OSError:
                    pass
            elif e.kind == "file" and mode & (stat.S_ISUID | stat.S_ISGID):
                try:
                    fd = os.open(e.name, _FILE_FLAGS, dir_fd=e.dir_fd)
                except OSError:
                    continue
                try:
                    if stat.S_ISREG(os.fstat(fd).st_mode):
                        os.fchmod(fd, stat.S_IMODE(mode) & ~(stat.S_ISUID | stat.S_ISGID))
                        setids.append(e.rel)
                finally:
                    os.close(fd)
    notes = []
    if devices:
        notes.append(f"removed {len(devices)} device node(s) the agent made in the workspace: {', '.join(devices[:listed])}")
    if setids:
        notes.append(f"cleared the setuid/setgid bit of {len(setids)} file(s) in the workspace: {', '.join(setids[:listed])}")
    return notes
