"""`benchtape verify`: check a whole store, reading every row, and say what is wrong with it.

What an open checks (benchtape.store.integrity) is cheap and partial on purpose: the schema
and its guards. This reads everything, once:
- schema: every table, view, index and trigger benchtape made, as it made them (the guards
  that keep history), and no trigger it did not make;
- pages: SQLite's own `PRAGMA integrity_check` of every page and index;
- blobs: every blob decompresses to exactly its size, and hashes to its sha256;
- raw lines: every session's chunks decompress, each holding the lines it says;
- specs: every stored check spec hashes to its key;
- references: every session's run, every verdict's grading, session and spec, every
  outcome's grading and session (and the rest: dangling_references) are in the store.

Each part that SQLite cannot finish (a damaged page under it) is itself a finding, and the
next part still runs. Re-grading a sample of sessions offline is the front door's to add
(`benchtape.replay.reproduce.reproduce_sample`): grading is not the store's.
"""

from __future__ import annotations

import hashlib
import sqlite3
from dataclasses import dataclass, field
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.store import integrity
from benchtape.store.codecs import inflate_blob, raw_problem
from benchtape.store.database import Store


@dataclass(frozen=True)
class Finding:
    part: str  # schema | pages | blobs | raw | specs | references | regrade
    what: str

    def to_dict(self) -> dict[str, str]:
        return {"part": self.part, "what": self.what}


@dataclass
class Verification:
    path: str
    schema_version: int
    checked: dict[str, int] = field(default_factory=dict)  # what was read, by part
    findings: list[Finding] = field(default_factory=list)

    @property
    def clean(self) -> bool:
        return not self.findings

    def to_dict(self) -> dict[str, Any]:
        return {"file": self.path, "schema_version": self.schema_version, "clean": self.clean, "checked": dict(self.checked), "findings": [f.to_dict() for f in self.findings]}


def verify_store(store: Store) -> Verification:
    """Every check above, over the whole store (opened with check_schema=False, so a store
    whose guards are gone is reported, not refused)."""
    out = Verification(str(store.path), store.schema_version())
    for part, check in (("schema", _schema), ("pages", _pages), ("blobs", _blobs), ("raw", _raw), ("specs", _specs), ("references", _references)):
        try:
            check(store, out)
        except BadInput as exc:  # damage SQLite met under this part: the part stops, the next runs
            out.findings.append(Finding(part, f"could not be read to the end: {exc.what}"))
        except sqlite3.OperationalError as exc:  # a table or view the schema part found missing
            out.findings.append(Finding(part, f"could not be read to the end: {exc}"))
    return out


def _schema(store: Store, out: Verification) -> None:
    found = integrity.differences(store.conn, out.schema_version)
    out.checked["schema objects"] = len(integrity.expected_rows(out.schema_version))
    out.findings += [Finding("schema", str(d)) for d in found]


def _pages(store: Store, out: Verification) -> None:
    out.checked["pages"] = store.page_count()
    out.findings += [Finding("pages", line) for line in store.page_check()]


def _blobs(store: Store, out: Verification) -> None:
    count = 0
    for sha, size, codec, data in store.iter_blob_rows():
        count += 1
        problem = _blob_problem(store, sha, size, codec, data)
        if problem:
            out.findings.append(Finding("blobs", f"blob {sha[:12]}…: {problem}"))
    out.checked["blobs"] = count


def _blob_problem(store: Store, sha: str, size: int, codec: str | None, data: bytes) -> str | None:
    if codec is not None:
        try:
            data = inflate_blob(data, codec, size, store.path, sha)
        except BadInput as exc:
            return exc.what
    if len(data) != size:
        return f"holds {len(data):,} bytes, its row says {size:,}"
    if hashlib.sha256(data).hexdigest() != sha:
        return "its bytes do not hash to its sha256 (changed after they were stored)"
    return None


def _raw(store: Store, out: Verification) -> None:
    sessions = store.raw_session_ids()
    for session_id in sessions:
        problem = raw_problem(store.raw_chunk_rows(session_id))
        if problem:
            out.findings.append(Finding("raw", f"session {session_id}: {problem}"))
    out.checked["raw streams"] = len(sessions)


def _specs(store: Store, out: Verification) -> None:
    rows = store.spec_rows()
    for spec_id, sha, text in rows:
        if hashlib.sha256(text.encode()).hexdigest() != sha:
            out.findings.append(Finding("specs", f"spec {spec_id}: its text does not hash to its key {sha[:12]}…"))
    out.checked["specs"] = len(rows)


def _references(store: Store, out: Verification) -> None:
    missing = [d.name for d in integrity.differences(store.conn, out.schema_version) if d.type == "table" and d.how == "missing"]
    for table, key, what in store.dangling_references(missing):
        out.findings.append(Finding("references", f"{table} {key} names {what}, which the store does not hold"))

