"""sqlite-utils' Database as the store uses it: only what runs migrations (and callers that
want its table helpers) imports it, so opening a current store for a read or a write never
loads sqlite-utils (which imports numpy and pandas when they are installed: ~100 ms)."""

from __future__ import annotations

import sqlite_utils

from benchtape.store.sqlite_io import run_script


class Database(sqlite_utils.Database):
    """sqlite-utils' Database whose executescript runs inside the caller's transaction (the
    sqlite3 module's own COMMITs first), so a migration is all or nothing."""

    def executescript(self, sql: str) -> None:  # type: ignore[override]
        run_script(self.conn, sql)
