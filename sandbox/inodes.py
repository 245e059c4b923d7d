"""Empty files and folders made ahead, for restoring a snapshot without creating inodes on the way.

Creating a file or folder is what restoring a workspace for grading costs: ~0.15 ms for a
file and ~0.28 ms for a folder of kernel time on a slow disk (a virtual machine's ext4),
where a hard link costs ~0.015 ms and a rename ~0.016 ms. A run keeps a pool of empty
files and folders in a session folder of its own (locked, so a sweep leaves it alone while
benchtape lives and removes it once it is gone), refilled on the cleanup thread to the
size of the last restore. A restore links a pooled file to its entry's name (failing, as
O_EXCL would, if the name exists) and renames a pooled folder into place, then checks that
what it got is what a creation would have given it (a regular file of ours with no other
name and no bytes; an empty folder of ours); anything else is removed and the entry made
the ordinary way. With no pool, or a pool on another file system, entries are created.
"""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
import tempfile
import threading
from typing import TYPE_CHECKING

from benchtape.sandbox.trees import Cleanup

if TYPE_CHECKING:
    from benchtape.sandbox.capture import SessionFolder

MAX_POOL = 5000  # entries kept ready (a bigger restore creates the rest)


class InodePool:
    """One run's pool: it pools from its making to `discard` at the run's end; its folder is
    made at the first refill and filled on the run's cleanups (`cleanup`)."""

    def __init__(self, cleanup: Cleanup) -> None:
        self.lock = threading.Lock()
        self.cleanup = cleanup
        self.folder: SessionFolder | None = None  # once first filled
        self.enabled = True
        self.files: list[str] = []
        self.dirs: list[str] = []
        self.counter = 0
        self.filling = False

    def discard(self) -> None:
        """Stop pooling and remove the pool's folder (on the cleanup thread)."""
        with self.lock:
            self.enabled = False
            folder, self.folder, self.files, self.dirs = self.folder, None, [], []
        if folder is not None:
            self.cleanup.later(folder.close)

    # ------------------------------------------------------------ taking
    def file(self, target: str) -> int | None:
        """`target` (which must not exist) as a new empty file opened for writing, from the pool;
        None when the pool has none to give (the caller creates it)."""
        name = self._pop(self.files)
        if name is None:
            return None
        try:
            os.link(name, target, follow_symlinks=False)
        except OSError as exc:
            self._drop(name, exc)
            if exc.errno == errno.EEXIST:
                raise
            return None
        os.unlink(name)
        fd = os.open(target, os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode) and st.st_nlink == 1 and st.st_size == 0 and st.st_uid == os.geteuid():
            return fd
        os.close(fd)  # not what a creation gives: tampered with; made the ordinary way
        os.unlink(target)
        return None

    def dir(self, target: str) -> bool:
        """Whether `target` (which must not exist) is now a new empty folder, from the pool."""
        name = self._pop(self.dirs)
        if name is None:
            return False
        if os.path.lexists(target):
            self._give_back(name)
            return False  # the caller's mkdir says so
        try:
            os.rename(name, target)
        except OSError as exc:
            self._drop(name, exc)
            return False
        return self._fresh_dir(target)

    def temp_dir(self, prefix: str) -> str:
        """`tempfile.mkdtemp(prefix=prefix)`, from the pool when it has a folder to give."""
        name = self._pop(self.dirs)
        if name is not None:
            target = os.path.join(tempfile.gettempdir(), prefix + secrets.token_hex(8))
            with contextlib.suppress(OSError):
                os.chmod(name, 0o700)  # as mkdtemp makes it
                if not os.path.lexists(target):
                    os.rename(name, target)
                    if self._fresh_dir(target):
                        return target
        return tempfile.mkdtemp(prefix=prefix)

    def _fresh_dir(self, target: str) -> bool:
        st = os.lstat(target)
        if stat.S_ISDIR(st.st_mode) and st.st_uid == os.geteuid() and not os.listdir(target):
            return True
        from benchtape.sandbox.trees import remove_tree

        remove_tree(target)  # not what a creation gives: tampered with
        return False

    def _pop(self, names: list[str]) -> str | None:
        with self.lock:
            return names.pop() if names and self.enabled else None

    def _give_back(self, name: str) -> None:
        with self.lock:
            (self.dirs if os.path.basename(name).startswith("d") else self.files).append(name)

    def _drop(self, name: str, exc: OSError) -> None:
        """A pooled entry that could not be used: another file system (every entry would fail the
        same way, so the pool is emptied) or a name already there (the entry is kept)."""
        if exc.errno == errno.EEXIST:
            self._give_back(name)
            return
        with self.lock:
            self.files, self.dirs = [], []
            self.enabled = False

    # ------------------------------------------------------------ filling
    def refill_later(self, files: int, dirs: int) -> None:
        """Bring the pool up to `files` and `dirs` on the cleanup thread (after a restore that used
        as many), once the next harness has started (`Cleanup.park`): filling it at once put a thread
        creating files beside the grading that follows the restore (spikes of 1-5 ms in the
        checks on a loaded machine), and the next restore is a whole session away."""
        with self.lock:
            if not self.enabled or self.filling:
                return
            self.filling = True
        if not self.cleanup.park(lambda: self._fill(min(files, MAX_POOL), min(dirs, MAX_POOL)), optional=True):
            with self.lock:
                self.filling = False

    def _fill(self, files: int, dirs: int) -> None:
        try:
            folder = self._folder()
            if folder is None:
                return
            for kind, want, names in (("f", files, self.files), ("d", dirs, self.dirs)):
                while self.enabled and len(names) < want:
                    self.counter += 1
                    path = os.path.join(folder, f"{kind}{self.counter}")
                    if kind == "f":
                        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600))
                    else:
                        os.mkdir(path)
                    with self.lock:
                        names.append(path)
        finally:
            with self.lock:
                self.filling = False

    def _folder(self) -> str | None:
        from benchtape.sandbox.capture import SessionFolder

        with self.lock:
            if not self.enabled:
                return None
            if self.folder is not None:
                return str(self.folder.path / "pool")
        folder = SessionFolder.create(spare="the inode pool of a run")
        (folder.path / "pool").mkdir(mode=0o700)
        with self.lock:
            if self.enabled and self.folder is None:
                self.folder = folder
                return str(folder.path / "pool")
        with contextlib.suppress(OSError):
            folder.close()
        return None

