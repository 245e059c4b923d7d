"""Which store a use case works on: `--db` (or $BENCHTAPE_DB, or .benchtape/benchtape.db) opened
for what the caller will do with it.

One place decides how a path becomes a store, so the CLI, the viewer and a notebook open the
same file the same way: a browser opens it read-only (never created, changed or migrated), a
writer may create it, and every way the path can be wrong is a BadInput from the store's open.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

if TYPE_CHECKING:
    from benchtape.store.database import Store
    from benchtape.store.views import BrowsingStore

# how a command uses its store: "read" browses an existing file; "write" may create it;
# "existing" writes into a file that must already be there (grade, regrade, reparse)
StoreMode = Literal["read", "write", "existing"]


def db_path(db: Path | None) -> Path:
    from benchtape.store.database import default_db_path

    return db or default_db_path()


@overload
def open_store(db: Path | None, must_exist: bool = ..., *, readonly: Literal[True]) -> BrowsingStore: ...  # type: ignore[overload-overlap]
@overload
def open_store(db: Path | None, must_exist: bool = ..., readonly: Literal[False] = ...) -> Store: ...
@overload
def open_store(db: Path | None, must_exist: bool = ..., *, readonly: bool) -> Store: ...  # decided at run time (a preview reads what a run writes)
def open_store(db: Path | None, must_exist: bool = False, readonly: bool = False) -> BrowsingStore | Store:
    """The store `--db` names; `readonly` for what only reads (it never creates, changes or
    migrates the file, and is typed as the browsing view, so a reader cannot call a write)."""
    from benchtape.store.database import Store

    return Store(db_path(db), readonly=readonly, create=not must_exist)


def open_for(db: Path | None, mode: StoreMode) -> BrowsingStore | Store:
    """`open_store` by the mode a command declares (benchtape.guard.command)."""
    if mode == "read":
        return open_store(db, must_exist=True, readonly=True)
    return open_store(db, must_exist=mode == "existing")
