"""The SQLite event store: runs, sessions, the append-only action stream, raw lines, blobs,
gradings, verdicts, judgments and cell outcomes, composed from modules with one job each:

- benchtape.store.migrations: the numbered schema steps and `PRAGMA user_version`;
- benchtape.store.integrity: that the schema and guards are the ones benchtape wrote, on every open;
- benchtape.store.codecs: JSON, raw lines as zstd chunks, blobs;
- benchtape.store.writer: every append;
- benchtape.store.reader: every query the read side runs.

History is never rewritten, by benchtape or by any other program opening the file: triggers
stored in the schema make UPDATE, DELETE and any INSERT that would replace an existing row
(`INSERT OR REPLACE`, an UPSERT) raise on every history table, and a session's lifecycle lives
in its stream (`session.started` … `session.finished`). Each append commits, so a killed process
leaves every action and raw line it had received.

Several processes may write one store at once: each process has one connection (its threads
share it under the store's lock), every write transaction begins IMMEDIATE, and migrations run
under an exclusive lock that re-reads the schema version inside it (see benchtape.store.sqlite_io).

The names other modules import from here (Store, SessionRow, Blob, new_id, …) stay importable
from here: this module is the store's front.
"""

from __future__ import annotations

import os
import sqlite3
import threading
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from benchtape.store import integrity
from benchtape.store.codecs import RAW_CHUNK_BYTES, VERDICT_FIELDS, Batch, Blob, dumps, inflate_blob, loads
from benchtape.store.migrations import MIGRATIONS, check_version, migrate, schema_version
from benchtape.store.reader import Reader, SessionRow
from benchtape.store.sqlite_io import bad_store, begin, connect, retry_busy
from benchtape.store.writer import CROCKFORD, BatchWriter, Writer, new_id

if TYPE_CHECKING:
    from benchtape.store.sqlite_utils_db import Database

__all__ = [
    "CROCKFORD",
    "DEFAULT_DB",
    "MIGRATIONS",
    "PAGE_SIZE",
    "RAW_CHUNK_BYTES",
    "VERDICT_FIELDS",
    "Batch",
    "BatchWriter",
    "Blob",
    "SessionRow",
    "Store",
    "default_db_path",
    "dumps",
    "inflate_blob",
    "loads",
    "new_id",
    "schema_version",
]

DEFAULT_DB = Path(".benchtape") / "benchtape.db"
PAGE_SIZE = 2048  # bytes per SQLite page of a new store (see Store.__init__)


def default_db_path(cwd: Path | None = None) -> Path:
    """$BENCHTAPE_DB, else .benchtape/benchtape.db here, or, from a folder inside a git work tree
    with none of its own, the work tree's (git finds its repository from any folder in it, and
    `init`, the tasks and their validation live at its top): from `src/`, `task validate` made a
    second store there, wrote the hidden tests' logs into the source tree, and `sessions` found
    nothing. Only a `.benchtape/` of this user's at the top of that work tree is taken."""
    explicit = os.environ.get("BENCHTAPE_DB")
    if explicit:
        return Path(explicit)
    here = cwd or Path.cwd()
    local = DEFAULT_DB if cwd is None else here / DEFAULT_DB
    if (here / ".benchtape").is_dir():
        return local
    for folder in (here, *here.parents):  # up to the work tree's top, and no further (a repository inside another is its own)
        dot_git = folder / ".git"
        if dot_git.is_file() or (dot_git / "HEAD").is_file():  # a repository's (an empty `.git` folder in /tmp is none)
            top = folder / ".benchtape"
            try:
                mine = top.is_dir() and top.stat().st_uid == os.getuid()
            except OSError:
                mine = False
            return top / "benchtape.db" if mine else local
    return local


class Store(Reader, Writer):
    """One SQLite file; one connection per Store, shared by threads under one lock.

    `readonly=True` opens the file read-only: it is never created, changed or migrated (a
    browsing command pointed at someone else's database leaves it as it was). `create=False`
    refuses a path with no database yet. Every way the path can fail is a BadInput at open,
    and so is a schema or a guard that is not the one benchtape wrote (benchtape.store.integrity;
    `check_schema=False` only for `benchtape verify`, which reports it instead). `repair=True`
    (`benchtape migrate --repair`) first puts back the triggers, views and indexes benchtape
    made, listed in `repaired`."""

    def __init__(self, path: Path | str, *, readonly: bool = False, create: bool = True, check_schema: bool = True, repair: bool = False):
        self.path = Path(path)
        self.readonly = readonly
        self.repaired: list[integrity.Difference] = []
        conn = self.conn = connect(self.path, readonly=readonly, create=create)
        self.lock = threading.RLock()
        self._init_reader()
        self._init_writer()
        try:
            # what wrapping the connection in sqlite-utils' Database did on every open: a REPLACE's
            # implicit delete fires the history tables' DELETE guards on this connection too
            conn.execute("PRAGMA recursive_triggers = ON")
            check = (lambda c, version: integrity.check_schema(c, version, self.path)) if check_schema else None
            if readonly:
                version = schema_version(conn)
                check_version(conn, version, self.path, readonly=True)
                if check is not None:
                    check(conn, version)
            else:
                # A new file only (SQLite ignores it once a table exists, and WAL fixes it):
                # with 2 KiB pages a store is 8% smaller than with 4 KiB ones, because each
                # table and index starts with one page and every action larger than a page
                # ends in a half-empty overflow page. Reads measured no slower.
                conn.execute(f"PRAGMA page_size = {PAGE_SIZE}")
                if retry_busy(conn, "PRAGMA journal_mode")[0][0] != "wal":
                    retry_busy(conn, "PRAGMA journal_mode = WAL")
                conn.execute("PRAGMA synchronous = NORMAL")
                conn.execute("PRAGMA foreign_keys = ON")
                if repair:
                    self.repaired = self._repair(conn)
                migrate(conn, self.path, check)
        except sqlite3.Error as exc:
            conn.close()
            raise bad_store(self.path, exc) from None
        except BaseException:
            conn.close()
            raise

    def _repair(self, conn: sqlite3.Connection) -> list[integrity.Difference]:
        """Put back benchtape's guards at the store's own version, in one exclusive transaction."""
        begin(conn, "BEGIN EXCLUSIVE")
        try:
            version = schema_version(conn)
            check_version(conn, version, self.path, readonly=False)
            done = integrity.repair(conn, version, self.path) if version else []
            conn.execute("COMMIT")
            return done
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise

    @cached_property
    def db(self) -> Database:
        """The connection as sqlite-utils' Database (its table helpers), made on first use:
        the store's own reads and opens use `conn`, and never import sqlite-utils."""
        from benchtape.store.sqlite_utils_db import Database

        return Database(self.conn)

    def close(self) -> None:
        with self.lock:
            self.conn.close()
