"""What every page of one running viewer shares: the store's path (opened read-only, one
connection per worker thread), the project folder evaluations are found from, what it has
learnt that the append-only log can never take back, and the flag that ends its streams."""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path

from benchtape.app.sessions import BrowsingStore, Finished
from benchtape.app.stores import open_store


@dataclass
class Viewer:
    db: Path
    cwd: Path  # where `compare NAME` looks for the evaluation file and pricing, as the CLI does
    stopping: threading.Event = field(default_factory=threading.Event)
    finished: Finished = field(default_factory=Finished)
    _local: threading.local = field(default_factory=threading.local)
    _opened: list[BrowsingStore] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def store(self) -> BrowsingStore:
        """This thread's read-only store: a page's reads never wait on another page's lock."""
        store = getattr(self._local, "store", None)
        if store is None:
            store = self._local.store = self.open()
        return store

    def open(self) -> BrowsingStore:
        """A read-only store of its own (a live stream keeps one for its life). Read-only: never
        created, changed or migrated, and a WAL reader never holds a writer up."""
        store = open_store(self.db, must_exist=True, readonly=True)
        with self._lock:
            self._opened.append(store)
        return store

    def release(self, store: BrowsingStore) -> None:
        with self._lock:
            if store in self._opened:
                self._opened.remove(store)
        store.close()

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
        for store in opened:
            store.close()
