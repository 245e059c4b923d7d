"""The spool: bundles that reached the driver, kept on disk until they are folded.

A bundle (benchtape.store.bundles) is written here the moment it arrives, then folded into the
store in one transaction, then removed. A driver killed in between leaves it here, and
`benchtape recover` (or the next run's start on the same store) folds it: folding is
idempotent, so a bundle folded already adds nothing and is removed too. The folder sits beside
the store it belongs to: `<store>.spool/<run id>/<job>-<token>.bundle`.
"""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

from benchtape.store.bundles import Bundle

if TYPE_CHECKING:
    from benchtape.store.views import RecordingStore

SUFFIX = ".bundle"


def spool_folder(store_path: Path | str) -> Path:
    return Path(f"{Path(store_path).resolve()}.spool")


def spool(folder: Path, run_id: str, name: str, data: bytes) -> Path:
    """Write one arrived bundle (whole: a reader never sees part of one) and return its path."""
    target = folder / run_id / f"{name}{SUFFIX}"
    scratch = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}")
    for tries in range(5):
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            with open(scratch, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            break
        except FileNotFoundError:  # another process's `tidy` removed the empty folder meanwhile
            if tries == 4:
                raise
    os.rename(scratch, target)
    return target


def spooled(folder: Path) -> list[Path]:
    """The bundles waiting in the spool, oldest first."""
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.glob(f"*/*{SUFFIX}") if not p.name.startswith(".")), key=lambda p: (p.stat().st_mtime, p.name))


class SpooledBundle:
    """An arrived bundle, as the scheduler folds it (benchtape.recorder.scheduler.Bundle)."""

    def __init__(self, path: Path, data: bytes):
        self.path = path
        self.bundle = Bundle.from_bytes(data, str(path))
        self.added: list[str] = []

    def fold_into(self, store: RecordingStore) -> None:
        self.added = store.fold_bundle(self.bundle)

    def done(self) -> None:
        """Folded and committed: it leaves the spool (its run's folder stays while the run may
        spool more: `tidy` removes it)."""
        self.path.unlink(missing_ok=True)


def tidy(folder: Path, run_id: str | None = None) -> None:
    """Remove the spool's empty folders (a run's, once it spools no more; the spool's own)."""
    for path in [folder / run_id] if run_id else (sorted(folder.iterdir()) if folder.is_dir() else []):
        try:
            path.rmdir()
        except OSError:
            pass  # bundles wait there still
    try:
        folder.rmdir()
    except OSError:
        pass


def fold_spooled(store: RecordingStore) -> list[str]:
    """Fold every bundle left in the store's spool (a driver killed after it arrived); one line each."""
    import sqlite3

    from benchtape.core.errors import BadInput

    done = []
    for path in spooled(spool_folder(store.path)):
        try:
            item = SpooledBundle(path, path.read_bytes())
            item.fold_into(store)
        except (BadInput, ValueError, sqlite3.IntegrityError) as exc:
            done.append(f"left {path} in the spool: it cannot be folded into this store ({exc})")
            continue
        item.done()
        b = item.bundle
        what = f"{b.key.get('scenario')} attempt {b.key.get('attempt')}"
        done.append(f"folded a bundle that arrived before its run stopped: {what}, {len(item.added)} session(s) into run {b.run_id}" if item.added else f"removed a spooled bundle folded already: {what} of run {b.run_id}")
    if done:
        tidy(spool_folder(store.path))
    return done
