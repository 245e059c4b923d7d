"""Opening a SQLite file for the store, and the transaction discipline several processes share.

Every way a path can fail to be a store (a folder, a file that is not SQLite, a damaged one, a
location nobody can write) becomes a BadInput naming the file and the fix, at open, so every
command gets the same message instead of a traceback from its first query. Writes begin
IMMEDIATE (the write lock is taken up front, so a transaction never has to upgrade a read
snapshot that another process has made stale), and a BEGIN that SQLite answers with BUSY is
retried: that is the one place SQLite says to retry.

The file is never opened outside SQLite. On Linux, closing any descriptor of a file drops every
POSIX lock the process holds on it: a header read through open()/close() while a connection of
the same process was open dropped that connection's shared lock, so a writer's exit believed it
was alone, checkpointed and deleted the -wal and -shm under the reader, and every page of a live
viewer then read "database disk image is malformed" (issue 44). SQLite shares one lock table
per file inside a process and defers such closes; a file that is not a database is found by
SQLite's own first read ("file is not a database", see bad_store).
"""

from __future__ import annotations

import atexit
import os
import sqlite3
import threading
import time
import weakref
from pathlib import Path
from typing import Any, Literal
from urllib.parse import quote

from benchtape.core.errors import BadInput

BUSY_TIMEOUT_S = 30.0  # what SQLite's own busy handler waits for a lock, per statement
BEGIN_PATIENCE_S = 60.0  # how long BEGIN is retried when SQLite returns BUSY at once
WRITABLE_FIX = "pass --db (or set BENCHTAPE_DB) to a file in a folder you can write"


def connect(path: Path, *, readonly: bool, create: bool) -> sqlite3.Connection:
    """A connection in autocommit mode (transactions are explicit), or BadInput saying why not.
    A read-only one is a ReaderConnection (see Sidecars)."""
    if path.is_dir():
        raise BadInput("this is a folder, not a database file", file=str(path), fix=f"pass a file path, e.g. --db {path / 'benchtape.db'}")
    if not path.exists():
        if readonly or not create:
            raise BadInput("no benchtape database here", file=str(path), fix="run `benchtape run BENCH` (or `benchtape demo`) first, or pass --db PATH")
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise BadInput(f"cannot create the store's folder: {exc.strerror or exc}", file=str(path), fix=WRITABLE_FIX) from None
    elif not os.access(path, os.R_OK):
        raise BadInput("cannot read the store: permission denied", file=str(path), fix="check the file's permissions, or pass --db PATH")
    try:
        if readonly:
            SIDECARS.opening(path)
            try:
                reader = sqlite3.connect(f"file:{quote(str(path.resolve()))}?mode=ro{'&immutable=1' if unchangeable(path) else ''}", uri=True, check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S, factory=ReaderConnection)
            except BaseException:
                SIDECARS.closed(path)
                raise
            SIDECARS.track(reader, path.resolve())  # as opened, whatever the working folder is later
            return reader
        else:
            conn = sqlite3.connect(str(path), check_same_thread=False, isolation_level=None, timeout=BUSY_TIMEOUT_S)
    except sqlite3.Error as exc:
        raise bad_store(path, exc) from None
    return conn


def unchangeable(path: Path) -> bool:
    """Whether nothing can change this store: it lies on a read-only filesystem (a read-only
    mount, a snapshot, a CD) and has no write-ahead log to read beside it. SQLite reads a WAL
    store only through a -shm index it creates beside the file, which such a place refuses
    ("unable to open database file"); opened `immutable`, it reads the file alone, which is
    then the whole store. A store with a -wal there is read as usual (SQLite may manage with
    the files it finds); one any process could still write is never opened immutable."""
    try:
        if not os.statvfs(path.parent).f_flag & os.ST_RDONLY:
            return False
        return os.stat(f"{path}-wal").st_size == 0
    except FileNotFoundError:
        return True
    except OSError:
        return False


class ReaderConnection(sqlite3.Connection):
    """A read-only connection, counted once and uncounted once (Sidecars): when it is closed,
    when it is collected unclosed (as any sqlite3 connection closes then), or at exit (most
    commands exit with their store open)."""

    path: Path | None = None

    def close(self) -> None:
        super().close()
        path, self.path = self.path, None
        if path is not None:
            SIDECARS.closed(path)

    def __del__(self) -> None:
        self.close()


class Sidecars:
    """A read-only connection to a WAL store creates its -wal and -shm when they are missing
    (SQLite needs the -shm to read), and cannot delete them when it closes (only a connection
    that can take the write lock may). So a browsing command or the viewer left both beside a
    store that had none. This counts the process's read-only connections per file; when the
    last closes (or the process exits with some open) and the files were not there before its
    first, an empty -wal is handed back to SQLite: one connection that can write opens and
    closes, and SQLite itself deletes the pair if no connection of any process still uses
    them (otherwise they stay, as SQLite wants). With an empty -wal there is nothing to
    checkpoint: the database file is not touched."""

    def __init__(self) -> None:
        self.lock = threading.RLock()  # a connection collected while it is held closes in the same thread
        self.open: dict[str, tuple[int, bool]] = {}  # path → (read-only connections, created the -wal)
        self.live: weakref.WeakSet[ReaderConnection] = weakref.WeakSet()
        atexit.register(self.exit)

    def opening(self, path: Path) -> None:
        key = str(path.resolve())
        with self.lock:
            count, created = self.open.get(key, (0, False))
            if count == 0:
                created = not Path(key + "-wal").exists()
            self.open[key] = (count + 1, created)

    def track(self, conn: ReaderConnection, path: Path) -> None:
        conn.path = path
        with self.lock:
            self.live.add(conn)

    def closed(self, path: Path) -> None:
        key = str(path.resolve())
        with self.lock:
            count, created = self.open.get(key, (1, False))
            if count > 1:
                self.open[key] = (count - 1, created)
                return
            self.open.pop(key, None)
            if created:
                _tidy(Path(key))

    def exit(self) -> None:
        """The connections a command left open, closed (the last of a file's tidies)."""
        for conn in list(self.live):
            try:
                conn.close()
            except sqlite3.Error:
                pass


def _tidy(path: Path) -> None:
    wal = Path(f"{path}-wal")
    try:
        if not wal.exists() or wal.stat().st_size != 0 or not os.access(path, os.W_OK) or not os.access(path.parent, os.W_OK):
            return
        conn = sqlite3.connect(str(path), isolation_level=None, timeout=0)
        try:
            conn.execute("PRAGMA query_only = ON")
            conn.execute("PRAGMA user_version").fetchone()  # a read: the connection joins the WAL, so its close may end it
        finally:
            conn.close()
    except (OSError, sqlite3.Error):
        pass  # in use, or not ours to tidy: SQLite's next writer will


SIDECARS = Sidecars()


def not_sqlite(path: Path) -> BadInput:
    return BadInput(
        "not a SQLite database (a benchtape store is a SQLite file)",
        file=str(path),
        fix="pass --db the path of a benchtape store, or a new path for benchtape to create one",
    )


def bad_store(path: Path, exc: sqlite3.Error) -> BadInput:
    """The user-facing form of an error SQLite raised while opening or preparing the store."""
    text = str(exc)
    if "file is not a database" in text:
        return not_sqlite(path)
    if "malformed" in text or "corrupt" in text:
        return BadInput(f"the database is damaged ({text})", file=str(path), fix=damaged_fix(path))
    if "readonly" in text or "read-only" in text or "unable to open" in text or "disk I/O" in text:
        return BadInput(f"cannot write to the store ({text})", file=str(path), fix=WRITABLE_FIX)
    if is_busy(exc):
        return BadInput(f"the store stayed locked by another process ({text})", file=str(path), fix="wait for the other benchtape process to finish, then run this again")
    return BadInput(f"cannot use this database ({text})", file=str(path), fix="pass --db the path of a benchtape store")


# What SQLite says of a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB, a schema it cannot parse),
# never of a statement it refuses ("malformed JSON" is a value, not the file).
DAMAGE_SIGNS = ("disk image is malformed", "malformed database schema", "not a database", "corrupt")


def is_damage(exc: BaseException) -> bool:
    """Whether SQLite found the file damaged (pages that do not parse, a file cut short or not
    a database past its header) rather than refusing a statement."""
    if not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.IntegrityError):
        return False
    text = str(exc)
    return any(sign in text for sign in DAMAGE_SIGNS)


class DamageIsBadInput:
    """A context manager turning damage SQLite finds into the user's message naming the file
    and the fix (bad_store). A class, not a generator, because every read of a regrade or
    query enters it (a generator-based one cost ~1 µs a read)."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        if exc is not None and is_damage(exc):
            raise bad_store(self.path, exc) from None  # type: ignore[arg-type]
        return False


def damaged_fix(path: Path) -> str:
    """What to do with a damaged store: a copy, else SQLite's own salvage, through its command
    line tool (said how to get where it is missing: it is no part of Python's sqlite3)."""
    import shutil

    missing = "" if shutil.which("sqlite3") else " (SQLite's command-line tool: `apt-get install sqlite3`, `brew install sqlite`)"
    return f"restore it from a copy, or salvage what is left with `sqlite3 {path} .recover | sqlite3 recovered.db`{missing} and pass --db recovered.db"


def is_busy(exc: BaseException) -> bool:
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def begin(conn: sqlite3.Connection, sql: str = "BEGIN IMMEDIATE", patience: float = BEGIN_PATIENCE_S) -> None:
    """Start a write transaction, retrying while SQLite answers BUSY without waiting (a read
    snapshot went stale under a pending statement, or a lock SQLite will not wait for).
    The first try is the bare statement: every append begins one, and most find no one else
    writing (the clock and the retry loop only when SQLite said BUSY)."""
    started = time.monotonic()
    try:
        conn.execute(sql)
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
        retry_busy(conn, sql, patience - (time.monotonic() - started))


def retry_busy(conn: sqlite3.Connection, sql: str, patience: float = BEGIN_PATIENCE_S) -> list[tuple[Any, ...]]:
    """Run a statement, retrying with jittered backoff while SQLite answers BUSY: a BEGIN, or a
    statement outside a transaction (e.g. switching the journal to WAL) that may find the file
    locked by another process starting up at the same moment."""
    deadline = time.monotonic() + patience
    delay = 0.002
    while True:
        try:
            return conn.execute(sql).fetchall()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or time.monotonic() >= deadline:
                raise
        import random  # only when contended: not every open's start-up

        time.sleep(delay * (0.5 + random.random()))
        delay = min(delay * 2, 0.25)


def run_script(conn: sqlite3.Connection, sql: str) -> None:
    """Execute a multi-statement script inside the caller's transaction, one statement at a time.

    sqlite3's executescript COMMITs any open transaction first, so a migration written with it
    would not be atomic: a second process could see half of it."""
    statement = ""
    for piece in sql.split(";"):
        statement += piece + ";"
        if sqlite3.complete_statement(statement):
            if statement.strip(" \t\r\n;"):
                conn.execute(statement)
            statement = ""
    if statement.strip(" \t\r\n;"):
        conn.execute(statement)
