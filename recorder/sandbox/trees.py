"""Walking and removing folder trees without recursion.

An agent can leave a workspace thousands of folders deep; `os.walk` (before Python 3.12)
and `shutil.rmtree` recurse once per level and raise RecursionError there, which would
abort a run and leave the folders behind. These walk with an explicit stack instead.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Iterator


def walk(root: Path | str) -> Iterator[tuple[str, list[str], list[str]]]:
    """`os.walk(root)` top-down with sorted names, links to folders listed but not entered.

    Same order as os.walk with `dirnames.sort()` (a pre-order of sorted names), so a tar
    written from it is byte-identical to one written from os.walk. Unreadable folders are
    skipped, as os.walk skips them.
    """
    stack = [os.fspath(root)]
    while stack:
        top = stack.pop()
        try:
            with os.scandir(top) as it:
                entries = list(it)
        except OSError:
            continue
        dirnames: list[str] = []
        filenames: list[str] = []
        enter: set[str] = set()
        for entry in entries:
            try:
                is_dir = entry.is_dir()
            except OSError:
                is_dir = False
            (dirnames if is_dir else filenames).append(entry.name)
            if is_dir and not entry.is_symlink():
                enter.add(entry.name)
        dirnames.sort()
        filenames.sort()
        yield top, dirnames, filenames
        stack.extend(os.path.join(top, d) for d in reversed(dirnames) if d in enter)


def remove_tree(path: Path | str) -> None:
    """Delete a folder and everything in it, however deep, never following a link.

    Best effort, like `shutil.rmtree(ignore_errors=True)`: what cannot be removed stays.
    Folders are opened relative to their parent's descriptor, so a deep path never
    exceeds PATH_MAX and a link swapped in meanwhile is removed, not followed.
    """
    path = os.fspath(path)
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode) or not os.path.isdir(path):
            os.unlink(path)
            return
    except OSError:
        return
    parent = os.path.dirname(os.path.abspath(path))
    try:
        parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    # Each frame: the folder's descriptor, its name in its parent, the parent's descriptor,
    # and the subfolders already entered (one that could not be emptied is not retried).
    base = os.path.basename(os.path.abspath(path))
    try:
        first = os.open(base, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=parent_fd)
    except OSError:
        os.close(parent_fd)
        return
    stack: list[tuple[int, str, int, set[str]]] = [(first, base, parent_fd, set())]
    while stack:
        fd, name, up, entered = stack[-1]
        child = None
        try:
            with os.scandir(fd) as it:
                entries = list(it)
        except OSError:
            entries = []
        for entry in entries:
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if not is_dir:
                try:
                    os.unlink(entry.name, dir_fd=fd)
                except OSError:
                    pass
            elif entry.name not in entered:
                entered.add(entry.name)
                try:
                    child = (os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd), entry.name, fd, set())
                except OSError:
                    continue
                break
        if child is not None:
            stack.append(child)
            continue
        stack.pop()
        os.close(fd)
        try:
            os.rmdir(name, dir_fd=up)
        except OSError:
            pass
    os.close(parent_fd)
