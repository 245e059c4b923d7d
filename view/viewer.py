"""What every page of one running viewer shares: the store's path (opened read-only, one
connection per page thread, opened once), the project folder evaluations are found from, what
it has learnt that the append-only log can never take back, and the flag that ends its streams.

Pages run on the viewer's own threads (PAGE_THREADS of them, which live as long as the viewer):
the server's default pool retires a thread after 10 s idle and starts new ones for the next
burst, and each new thread opened a store that nothing closed, ~77 descriptors a burst until
"Too many open files" (issue 44). A store opened by any thread is closed when that thread ends.
"""

from __future__ import annotations

import asyncio
import threading
import weakref
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar

from benchtape.app.sessions import BrowsingStore, Finished
from benchtape.app.stores import open_store

T = TypeVar("T")
PAGE_THREADS = 8  # pages answered at once; more wait their turn (each thread holds one connection)


class _Held:
    """A thread's store, held in the viewer's thread-local: when the thread ends, Python drops
    its locals, and the finalizer closes the store."""

    __slots__ = ("__weakref__", "store")

    def __init__(self, store: BrowsingStore) -> None:
        self.store = store


@dataclass
class Viewer:
    db: Path
    cwd: Path  # where `compare NAME` looks for the evaluation file and pricing, as the CLI does
    stopping: threading.Event = field(default_factory=threading.Event)
    finished: Finished = field(default_factory=Finished)
    _local: threading.local = field(default_factory=threading.local)
    _opened: list[BrowsingStore] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _pool: ThreadPoolExecutor | None = None

    def store(self) -> BrowsingStore:
        """This thread's read-only store, opened once: a page's reads never wait on another
        page's lock, and the store is closed when the thread ends."""
        held = getattr(self._local, "held", None)
        if held is None:
            held = self._local.held = _Held(self.open())
            weakref.finalize(held, self.release, held.store)
        store: BrowsingStore = held.store
        return store

    async def run(self, work: Callable[[], T]) -> T:
        """`work` on one of the viewer's page threads."""
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(PAGE_THREADS, thread_name_prefix="benchtape-page")
            pool = self._pool
        return await asyncio.get_running_loop().run_in_executor(pool, work)

    def open(self) -> BrowsingStore:
        """A read-only store of its own (a live stream keeps one for its life). Read-only: never
        created, changed or migrated, and a WAL reader never holds a writer up."""
        store = open_store(self.db, must_exist=True, readonly=True)
        with self._lock:
            self._opened.append(store)
        return store

    def release(self, store: BrowsingStore) -> None:
        with self._lock:
            if store not in self._opened:
                return  # closed already (the viewer's close, then its thread's end)
            self._opened.remove(store)
        store.close()

    def close(self) -> None:
        with self._lock:
            opened, self._opened = self._opened, []
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=False, cancel_futures=True)
        for store in opened:
            store.close()
