"""One exclusive lock on a file, waited for: one builder at a time of a thing several processes
may build at once (a project environment, a package manager's install, benchtape's base image)."""

from __future__ import annotations

import contextlib
import fcntl
from pathlib import Path
from typing import Iterator


@contextlib.contextmanager
def locked(path: Path | str) -> Iterator[None]:
    """`path` locked exclusively for the block, waiting for another holder. The file is made if
    missing and never removed (a process about to open it would lock another file)."""
    with open(path, "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
