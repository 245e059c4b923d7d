"""Whether a store's schema and guards are the ones benchtape wrote, checked on every open.

History is kept by triggers stored in the file: any program can drop one (`DROP TRIGGER
verdict_sets_no_update`) and then rewrite a FAIL verdict to PASS, and a dropped table or view
ends every later command in an SQL error. So every open compares the file's schema (its
`sqlite_master` rows: tables, views, indexes, triggers, each with its SQL text) with the one
this benchtape's migrations make at the file's `user_version`, and refuses a store that
differs, naming what is missing or changed and the fix.

Cheap by construction: the schema rows are a few dozen (SQLite has read them to open the file
anyway) and their fingerprint is compared with CURRENT_FINGERPRINT, a constant a test keeps
equal to what the migrations make (~0.1 ms an open; measured in benchmarks/store_open.py).
Only when they differ, or the store is older, are the migrations run in memory (~20 ms) to
say exactly what differs. A whole-file check of pages (`PRAGMA integrity_check`) is
`benchtape verify`'s job: it reads every page, too slow for every open of a large store.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Iterable

from benchtape.core.errors import BadInput
from benchtape.store.migrations import MIGRATIONS

try:  # CPython's own SHA-256, the one hashlib falls back to: hashlib loads OpenSSL (~3 ms of
    # every command's start-up) for a hash of 22 KB an open; 3.12 renamed the module
    from _sha2 import sha256 as _sha256  # type: ignore[import-not-found,unused-ignore]
except ImportError:  # pragma: no cover - Python 3.11
    try:
        from _sha256 import sha256 as _sha256  # type: ignore[import-not-found,no-redef,unused-ignore]
    except ImportError:  # a build without it
        from hashlib import sha256 as _sha256  # type: ignore[assignment,unused-ignore]

# What the migrations make at the latest version, fingerprinted (fingerprint(expected_rows(
# len(MIGRATIONS)))). A new migration changes it: tests/storage/test_store_integrity.py says the new value.
CURRENT_FINGERPRINT = "e187257b23681500eec9b3db602dc384ccf566938cb5c6ffcf11fe4c4b67e8d8"
# Objects benchtape can put back from the SQL its migrations hold, without losing a row.
RESTORABLE = ("trigger", "view", "index")
SEVERITY = ("table", "trigger", "view", "index")
SCHEMA_SQL = "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%'"

Schema = dict[tuple[str, str], tuple[str, str]]  # (type, name) -> (its table, its SQL normalized)


@dataclass(frozen=True)
class Difference:
    """One way the file's schema is not benchtape's: `missing`, `changed` or `unknown` (an
    object benchtape did not make: only a trigger matters, it can change what is written)."""

    how: str
    type: str
    name: str
    table: str

    def __str__(self) -> str:
        if self.how == "missing":
            return f"{self.type} {self.name} is missing"
        if self.how == "changed":
            return f"{self.type} {self.name} is not the one benchtape made"
        return f"trigger {self.name} on {self.table} is not one benchtape made"

    @property
    def restorable(self) -> bool:
        return self.type in RESTORABLE


def normalized(sql: str | None) -> str:
    """SQL text compared without its layout or identifier quotes (SQLite writes `"raw"` when a
    table is renamed, as migration 8 does)."""
    return re.sub(r"\s+", " ", (sql or "").replace('"', "")).strip()


def schema_of(rows: Iterable[tuple[str, str, str, str | None]]) -> Schema:
    return {(t, n): (table, normalized(sql)) for t, n, table, sql in rows}


def fingerprint(rows: Iterable[tuple[str, str, str, str | None]]) -> str:
    """The schema rows as stored, in one hash: what an open compares (no text is normalized
    on that path: a store benchtape made or migrated holds exactly the text a new one does)."""
    return _sha256("\x1e".join(sorted("\x1f".join((t, n, table, sql or "")) for t, n, table, sql in rows)).encode()).hexdigest()


@lru_cache(maxsize=4)
def expected_rows(version: int) -> tuple[tuple[str, str, str, str], ...]:
    """The schema rows (type, name, table, SQL as written) the first `version` migrations
    make, made in memory: only when a store is older, or differs, or is repaired."""
    from benchtape.store.sqlite_utils_db import Database

    conn = sqlite3.connect(":memory:", isolation_level=None)
    try:
        conn.execute("BEGIN")
        db = Database(conn)
        for step in MIGRATIONS[:version]:
            step(db)
        rows = tuple(conn.execute(SCHEMA_SQL).fetchall())
        conn.execute("ROLLBACK")
        return rows
    finally:
        conn.close()


def expected_schema(version: int) -> Schema:
    return schema_of(expected_rows(version))


def differences(conn: sqlite3.Connection, version: int) -> list[Difference]:
    """How the file's schema differs from what `version` migrations make ([] when it does not)."""
    rows = conn.execute(SCHEMA_SQL).fetchall()
    if version == len(MIGRATIONS) and fingerprint(rows) == CURRENT_FINGERPRINT:
        return []
    actual, expected = schema_of(rows), expected_schema(version)
    out = []
    for key, (table, sql) in sorted(expected.items()):
        found = actual.get(key)
        if found is None:
            out.append(Difference("missing", key[0], key[1], table))
        elif found[1] != sql:
            out.append(Difference("changed", key[0], key[1], table))
    for (type_, name), (table, _) in sorted(actual.items()):
        if type_ == "trigger" and (type_, name) not in expected:
            out.append(Difference("unknown", type_, name, table))
    return sorted(out, key=lambda d: SEVERITY.index(d.type))  # what cannot be put back first


def check_schema(conn: sqlite3.Connection, version: int, path: Path) -> None:
    """BadInput naming what is missing or changed, and the fix, unless the store's schema and
    guards are the ones benchtape wrote at `version`."""
    found = differences(conn, version)
    if found:
        raise refusal(path, found)


def refusal(path: Path, found: list[Difference]) -> BadInput:
    listed = "; ".join(str(d) for d in found[:6]) + (f"; and {len(found) - 6} more" if len(found) > 6 else "")
    what = f"the store's schema is not the one benchtape wrote ({listed}): a store without all of its tables and guards may have had its history rewritten unseen, so benchtape does not use it"
    if all(d.restorable for d in found):
        fix = (
            f"restore the store from a copy you trust; or, to keep this one as it is, put benchtape's guards back with "
            f"`benchtape migrate --db {path} --repair` and check what it holds with `benchtape verify --db {path}`"
        )
    else:
        gone = ", ".join(f"{d.type} {d.name}" for d in found if not d.restorable)
        fix = f"restore the store from a copy ({gone}: what it held cannot be put back); `benchtape verify --db {path}` lists everything that differs"
    return BadInput(what, file=str(path), fix=fix)


def repair(conn: sqlite3.Connection, version: int, path: Path) -> list[Difference]:
    """Inside the caller's write transaction: put back every trigger, view and index benchtape
    made at `version` that is missing or changed, and drop the triggers it did not make.
    Returns what it repaired; refuses (BadInput) when a table differs: its rows are gone or
    changed, and nothing can put them back."""
    found = differences(conn, version)
    if not all(d.restorable for d in found):
        raise refusal(path, found)
    sql = {(t, n): text for t, n, _, text in expected_rows(version)}
    for d in sorted(found, key=_drop_order):
        if d.how != "missing":
            conn.execute(f'DROP {d.type.upper()} IF EXISTS "{d.name}"')
    for d in sorted(found, key=_create_order):
        if d.how != "unknown":
            conn.execute(sql[(d.type, d.name)])
    return found


def _drop_order(d: Difference) -> int:
    """Triggers before the views they may be on (verdicts has INSTEAD OF triggers)."""
    return {"trigger": 0, "index": 1, "view": 2}[d.type]


def _create_order(d: Difference) -> int:
    """Views before the triggers on them; the cell_outcomes view names its index (INDEXED BY)."""
    return {"index": 0, "view": 1, "trigger": 2}[d.type]
