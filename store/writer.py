"""Every append to the store: runs, sessions, actions, raw lines, blobs, gradings, verdicts,
grading contexts, generated vars, judgments and cell outcomes.

Each append commits (or joins the caller's transaction, `Store.transaction`), so a killed
process leaves every action and raw line it had received; nothing is ever updated. Writes
begin IMMEDIATE and retry BUSY (benchtape.store.sqlite_io); damage SQLite finds while writing
is the user's message naming the file and the fix (a BadInput), and the transaction rolls
back whole.
"""

from __future__ import annotations

import os
import platform
import sqlite3
import threading
import time
from functools import cached_property
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Literal, Sequence

import orjson

from benchtape.store.bundles import FOLDED_SOURCE, Bundle
from benchtape.store.codecs import Batch, Blob, Head, RawStream, compress_blob, dumps, encode_actions, raw_groups
from benchtape.store.migrations import LEGACY_OUTCOME
from benchtape.store.sqlite_io import DamageIsBadInput, begin

if TYPE_CHECKING:  # the domain model loads when actions are read or written, not with every store open
    from benchtape.core.model import Action

INSERT_RAW = "INSERT INTO raw (session_id, line_no, lines, fresh, data) VALUES (?, ?, ?, ?, ?)"
RAW_STREAMS = 32  # open compressors kept per store (~1.3 MB each); an evicted one restarts fresh
# The no-rewrite triggers (no_rewrite) a bulk write lifts while it holds the write lock (Writer._lift_row_guards).
ROW_GUARDS = ("actions_no_rewrite", "raw_no_rewrite")


CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def new_id() -> str:
    """A ULID (26 characters of Crockford's base32: 48 bits of milliseconds, then 80 random
    bits), so ids sort by the millisecond they were made in. Made here: python-ulid cost ~10 ms
    of imports (its package metadata, typing_extensions) in every run and import."""
    value = (time.time_ns() // 1_000_000) << 80 | int.from_bytes(os.urandom(10), "big")
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


def host_platform() -> str:
    """What `platform.platform()` says (`Linux-6.1.0-x86_64-with-glibc2.36`), without the
    `uname -p` subprocess it starts on Linux for a processor name it then leaves out (~7 ms of
    every run and import)."""
    u = platform.uname()  # its processor is looked up only when read
    if u.system != "Linux":
        return platform.platform()
    libc = "".join(platform.libc_ver())
    return "-".join(part for part in (u.system, u.release, u.machine, *(("with", libc) if libc else ())) if part)


class Transaction:
    """Writer.transaction's context: under the store's lock, a write transaction begun (or the
    caller's joined), committed at the end with the row guards a bulk write lifted put back,
    or rolled back whole; damage SQLite finds on the way is the user's message (BadInput).

    A class, not a generator-based manager: every append enters one, and the generator's
    enter and exit cost ~1.5 µs of a live line's ~40."""

    __slots__ = ("writer", "defer_foreign_keys", "bulk", "began", "lifted")

    def __init__(self, writer: Writer, defer_foreign_keys: bool, bulk: bool) -> None:
        self.writer, self.defer_foreign_keys, self.bulk = writer, defer_foreign_keys, bulk
        self.began, self.lifted = False, NO_GUARDS

    def __enter__(self) -> None:
        writer = self.writer
        writer.lock.acquire()
        try:
            conn = writer.conn
            if conn.in_transaction:
                return
            begin(conn)
            self.began = True
            try:
                if self.defer_foreign_keys:
                    conn.execute("PRAGMA defer_foreign_keys = ON")
                if self.bulk:
                    self.lifted = writer._lift_row_guards()
            except BaseException:
                writer._roll_back(conn)
                raise
        except BaseException as exc:
            writer.lock.release()
            DamageIsBadInput(writer.path).__exit__(type(exc), exc, None)
            raise

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> Literal[False]:
        writer = self.writer
        try:
            if self.began:
                conn = writer.conn
                if exc is not None:
                    writer._roll_back(conn)
                else:
                    try:
                        for sql in self.lifted:
                            conn.execute(sql)
                        conn.execute("COMMIT")
                    except BaseException as failed:
                        writer._roll_back(conn)
                        DamageIsBadInput(writer.path).__exit__(type(failed), failed, None)
                        raise
        finally:
            writer.lock.release()
        return DamageIsBadInput(writer.path).__exit__(kind, exc, tb)


NO_GUARDS: list[str] = []  # a transaction that lifted none (never appended to)


class Writer:
    """The store's appends (a part of Store: it holds the connection, its lock and its path)."""

    path: Path
    conn: sqlite3.Connection
    lock: threading.RLock
    _one: Callable[..., tuple[Any, ...] | None]  # the reader's
    held_sessions: Callable[[Sequence[str]], set[str]]  # the reader's
    held_blobs: Callable[[Iterable[str]], set[str]]  # the reader's
    folded_attempt: Callable[[str, dict[str, Any]], str | None]  # the reader's

    def _init_writer(self) -> None:
        self._seq: dict[str, int] = {}
        self._raw: dict[str, RawStream] = {}
        # Idle compressors, for the next raw stream or blob: a zstd context is ~1.3 MB, and
        # making and freeing one per session fragmented the C heap (a 500-session run's peak
        # memory grew ~10 KB a session); reused, it stays flat.
        self._compressors: list[Any] = []
        self._spec_ids: dict[str, int] = {}
        self.redactors: dict[str, Callable[[str], str]] = {}

    @cached_property
    def default_redactor(self) -> Callable[[str], str] | None:
        """Sessions written without a redactor of their own (imports, re-gradings in a later
        process) still never store this process's *_API_KEY / *_TOKEN values in clear. Made
        by the first write that asks for it (a read-only store never does; compiling it was a
        tenth of `benchtape sessions`)."""
        return _environment_redactor()

    # ------------------------------------------------------------ transactions
    def transaction(self, *, defer_foreign_keys: bool = False, bulk: bool = False) -> Transaction:
        """One write transaction around several store calls (an import writes a whole file's
        session in one). Writes inside it join it; it commits at the end or rolls back whole.

        `bulk` (an import's): when this call begins the transaction, the per-row no-rewrite
        triggers of actions and raw are lifted for its length and put back before it commits
        (see _lift_row_guards); a transaction joined from outside keeps them."""
        return Transaction(self, defer_foreign_keys, bulk)

    def _roll_back(self, conn: sqlite3.Connection) -> None:
        """Undo the transaction whole. SQLite may have rolled it back itself (it does on some
        damage it meets): then there is nothing to undo, and the error that ended it is what
        the caller sees, never a failed ROLLBACK."""
        try:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
        except sqlite3.DatabaseError:
            pass
        self._forget_uncommitted()

    def _lift_row_guards(self) -> list[str]:
        """Inside a write transaction this connection began: drop the BEFORE INSERT triggers
        that refuse a rewrite of actions and raw (ROW_GUARDS), returning their SQL as stored,
        which the transaction runs again before its COMMIT.

        Each fires per inserted row and searches the table for the row's key; those keys'
        cells spill into overflow pages (an action is mostly larger than the ~490 bytes a
        cell of a WITHOUT ROWID table keeps in a 2 KiB page), which SQLite reads whole to
        compare keys: 2-10% of an import's CPU (a 50 MB transcript; two sets of 7 interleaved runs).

        The guarantee holds without them for the transaction's length: it holds the write
        lock from BEGIN IMMEDIATE to COMMIT, so no other connection writes meanwhile, and
        every other connection reads the committed schema, which has the triggers (the drop
        and the re-creation commit together, so no committed state lacks them; a rollback, a
        kill or a crash restores them with everything else). This connection writes under the
        store's lock for that length, and only plain INSERTs, which the key's uniqueness
        refuses should they meet an existing row."""
        conn = self.conn
        marks = ",".join("?" * len(ROW_GUARDS))
        rows = conn.execute(f"SELECT name, sql FROM sqlite_master WHERE type = 'trigger' AND name IN ({marks}) ORDER BY name", ROW_GUARDS).fetchall()
        for name, _ in rows:
            conn.execute(f'DROP TRIGGER "{name}"')
        return [sql for _, sql in rows]

    def _forget_uncommitted(self) -> None:
        """After a rollback, what this process remembered about written rows may be wrong: next
        seqs are re-read, raw streams restart fresh, spec ids are looked up again."""
        self._seq.clear()
        for session_id in list(self._raw):
            self._end_stream(session_id)
        self._spec_ids.clear()

    # ------------------------------------------------------------ writes
    def new_run(self, kind: str, *, bench_path: str | None = None, bench_sha256: str | None = None, harness: str | None = None, model: str | None = None, argv: list[str] | None = None, params: dict[str, Any] | None = None) -> str:
        from benchtape.core.version import VERSION

        run_id = new_id()
        host = {"hostname": platform.node(), "platform": host_platform(), "python": platform.python_version()}
        with self.transaction():
            self.conn.execute(
                "INSERT INTO runs (id, kind, bench_path, bench_sha256, harness, model, argv, host, benchtape_version, started_at, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, kind, bench_path, bench_sha256, harness, model, dumps(argv or []), dumps(host), VERSION, time.time(), dumps(params or {})),
            )
        return run_id

    def new_session(self, run_id: str, scenario: str, *, cell_id: str | None = None, attempt: int = 1, harness: str | None = None, model: str | None = None, params: dict[str, Any] | None = None, workdir: str | None = None, parent_session: str | None = None, source: str | None = None, session_id: str | None = None) -> str:
        """A new session row (`session_id` when the caller chose the id already, as an import
        does: it writes the session's actions first and this row last, once it knows them)."""
        session_id = session_id or new_id()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO sessions (id, run_id, scenario, cell_id, attempt, harness, model, params, workdir, started_at, parent_session, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, run_id, scenario, cell_id, attempt, harness, model, dumps(params or {}), workdir, time.time(), parent_session, source),
            )
            self._seq.setdefault(session_id, 0)
        return session_id

    def redactor_for(self, session_id: str) -> Callable[[str], str] | None:
        return self.redactors.get(session_id, self.default_redactor)

    def set_redactor(self, session_id: str, redact: Callable[[str], str]) -> None:
        """Every action and raw line of this session passes through `redact` before it is stored."""
        self.redactors[session_id] = redact

    def append(self, session_id: str, actions: Iterable[Action], *, at_seq: int | None = None, blobs: Sequence[Blob] = ()) -> int:
        """Append actions in one transaction (redacted first); returns the last seq written.

        `at_seq` writes them from a seq the caller reserved with `reserve_seq` instead of after
        the last one. `blobs` (prepare_blob's) are written in the same transaction: the
        actions that name them are never stored without them."""
        with self.transaction():
            for blob in blobs:
                self._insert_blob(blob)
            return self._insert_actions(session_id, actions, at_seq)

    def append_line(self, session_id: str, line_no: int, text: str, actions: Sequence[Action]) -> int:
        """One line of the harness's output and the actions parsed from it, in ONE transaction:
        both are durable when this returns (a killed recorder keeps every line it was given).
        Returns the last seq written."""
        actions = actions if isinstance(actions, (list, tuple)) else list(actions)
        encoded = encode_actions(actions)  # a payload that does not match its kind is refused before anything is written
        line = text.encode("utf-8", "surrogatepass")
        lines: list[bytes] | None = [line]  # the line's UTF-8 as stored (None: encoded from its redacted text)
        redact = self.redactor_for(session_id)
        # The line and its actions' JSON probed for secrets at once (one probe per line, not one
        # each); only when it finds something does each go through the redactor, as append and
        # append_raw would send it (a text the redactor finds nothing in comes back unchanged).
        if redact is not None and not _clean(redact, b"\n".join([line, *encoded])):
            text, lines = redact(text), None
            encoded = [redact(e.decode()).encode() for e in encoded]
        with self.transaction():
            self._insert_raw(session_id, [(line_no, text)], lines)
            return self._insert_encoded(session_id, [(a.kind, a.thread, a.at) for a in actions], encoded, None)

    def append_raw(self, session_id: str, lines: Iterable[tuple[int, str]]) -> None:
        """Raw lines (line_no, text), redacted then compressed; consecutive lines of one call
        share a chunk, so a batch writer (an import) passes ~RAW_CHUNK_BYTES of lines a call."""
        redact = self.redactor_for(session_id)
        batch = list(lines)
        clear = [t.encode("utf-8", "surrogatepass") for _, t in batch]
        encoded: list[bytes] | None = clear
        if redact is not None and not _clean(redact, b"\n".join(clear)):
            batch, encoded = [(n, redact(t)) for n, t in batch], None
        if batch:
            with self.transaction():
                self._insert_raw(session_id, batch, encoded)

    def batch_writer(self, session_id: str) -> BatchWriter:
        """A new session's raw lines and actions from a batch writer (an import, a reparse),
        written inside the caller's transaction; see BatchWriter."""
        return BatchWriter(self, session_id)

    def reserve_seq(self, session_id: str, count: int = 1) -> int:
        """Keep the next `count` seqs for actions written later with `append(at_seq=...)` (an
        import writes `session.started` last, once the file has told it the session's facts)."""
        with self.lock:
            first = self._next_seq(session_id) + 1
            self._seq[session_id] = first + count - 1
            return first

    def _insert_actions(self, session_id: str, actions: Iterable[Action], at_seq: int | None) -> int:
        """Inside a transaction: the actions (redacted) at the next seqs, or from `at_seq`. The
        hot path of recording: each action's JSON is encoded once, and the batch is probed for
        secrets once (the common batch holds none, and no text of it is scanned again).

        A payload with a non-ASCII character goes to SQLite as orjson's UTF-8 bytes, stored as
        TEXT by the CAST (a BLOB cast to TEXT is its bytes taken as text in the database's
        encoding, UTF-8: unchanged); an ASCII one as str (_insert_encoded). Bound as str, each
        non-ASCII action was decoded from UTF-8 and encoded back by sqlite3, which
        for real transcripts (most of whose bytes are in non-ASCII lines) was 4.5% of an
        import's instructions (callgrind, a 5 MB transcript)."""
        actions = actions if isinstance(actions, (list, tuple)) else list(actions)
        return self._insert_encoded(session_id, [(a.kind, a.thread, a.at) for a in actions], self._stored_json(session_id, encode_actions(actions)), at_seq)

    def _stored_json(self, session_id: str, encoded: list[bytes], clean: bool | None = None) -> list[bytes]:
        """Encoded actions as they are stored: as they are when the probe of their batch finds
        nothing (`clean`: that probe's answer, when a batch writer probed it on its worker),
        else each through the session's redactor."""
        redact = self.redactor_for(session_id)
        if redact is None or (_clean(redact, b"\n".join(encoded)) if clean is None else clean):
            return encoded
        return [redact(e.decode()).encode() for e in encoded]

    def _insert_encoded(self, session_id: str, heads: Sequence[Head], encoded: list[bytes], at_seq: int | None) -> int:
        """Inside a transaction: actions (their heads, and their JSON encoded and redacted), at
        the next seqs or from `at_seq`; returns the last seq written."""
        now = time.time()
        first = (self._next_seq(session_id) if at_seq is None else at_seq - 1) + 1
        kinds = set(map(itemgetter(0), heads))
        if LEGACY_OUTCOME in kinds:
            raise ValueError(f"{LEGACY_OUTCOME!r} is never appended to a session's stream: a grading's outcome is stored with Store.add_outcome")
        # An ASCII payload (most of them) is bound as str: sqlite3 binds a compact ASCII str's
        # bytes as they are, where a BLOB cast to TEXT is copied once more inside SQLite (~10% of
        # a bare insert of this schema). A payload with any other character stays bytes (see
        # _insert_actions): decoding it here and encoding it back in sqlite3 cost more.
        rows = [(session_id, seq, at or now, thread, kind, data.decode() if data.isascii() else data) for seq, (kind, thread, at), data in zip(range(first, first + len(heads)), heads, encoded)]
        if not rows:
            return first - 1
        seq = first + len(rows) - 1
        self.conn.executemany("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT))", rows)
        if at_seq is None:
            self._seq[session_id] = seq
        if "session.finished" in kinds:  # nothing more will be appended to it by this process
            self._end_stream(session_id)
        return seq

    def _insert_raw(self, session_id: str, lines: list[tuple[int, str]], encoded: list[bytes] | None = None) -> None:
        stream = self._raw.get(session_id)
        if stream is None:
            if len(self._raw) >= RAW_STREAMS:
                self._end_stream(next(iter(self._raw)))
            stream = self._raw[session_id] = self._new_stream()
        self.conn.executemany(INSERT_RAW, stream.rows(session_id, lines, encoded))

    def _new_stream(self) -> RawStream:
        """A raw stream on an idle compressor when there is one (popping a list is atomic)."""
        return RawStream(compressor=self._compressors.pop() if self._compressors else None)

    def _end_stream(self, session_id: str) -> None:
        """Under the lock: drop the session's raw stream, keeping its compressor for the next."""
        stream = self._raw.pop(session_id, None)
        if stream is not None:
            self._keep_compressor(stream.compressor)

    def _keep_compressor(self, compressor: Any) -> None:
        """A finished stream's compressor, for the next stream or blob (up to RAW_STREAMS idle)."""
        if len(self._compressors) < RAW_STREAMS:
            self._compressors.append(compressor)

    def _next_seq(self, session_id: str) -> int:
        if session_id not in self._seq:
            with self.lock:
                row = self._one("SELECT COALESCE(MAX(seq), 0) FROM actions WHERE session_id = ?", [session_id])
                self._seq[session_id] = row[0] if row else 0
        return self._seq[session_id]

    def put_blob(self, data: bytes) -> str:
        """Store bytes under their sha256 (once: the same bytes again are not compressed or
        written again), compressed unless that does not make them smaller."""
        blob = self.prepare_blob(data)
        if blob.data is not None:
            with self.transaction():
                self._insert_blob(blob)
        return blob.sha256

    def prepare_blob(self, data: bytes) -> Blob:
        """Bytes hashed and compressed for storing, outside any transaction (a snapshot can be
        megabytes: other sessions' writers do not wait for it), to be written with the actions
        that name it (`append(blobs=...)`): one transaction instead of one more each."""
        import hashlib  # OpenSSL's, ~3 ms: loaded by a writer that stores a blob, not by every command

        sha = hashlib.sha256(data).hexdigest()
        if self._one("SELECT 1 FROM blobs WHERE sha256 = ?", [sha]) is not None:
            return Blob(sha, None, None, len(data))  # stored already: nothing to write
        stored, codec = compress_blob(data, self._compressors)
        return Blob(sha, stored, codec, len(data))

    def _insert_blob(self, blob: Blob) -> None:
        """Inside a transaction: a prepared blob's row, unless it is there already."""
        if blob.data is None:
            return
        try:
            self.conn.execute("INSERT OR IGNORE INTO blobs (sha256, size, data, codec) VALUES (?, ?, ?, ?)", [blob.sha256, blob.size, blob.data, blob.codec])
        except sqlite3.IntegrityError:
            # another writer stored the same bytes first, compressed by another zstd build: the
            # trigger refuses the other form of the same content (that statement only: the
            # transaction goes on), and the content is there
            if self._one("SELECT 1 FROM blobs WHERE sha256 = ?", [blob.sha256]) is None:
                raise


    def fold_bundle(self, bundle: Bundle) -> list[str]:
        """Write a bundle (an attempt recorded in another store: benchtape.store.bundles) into
        its run, in one transaction; returns the sessions added. Idempotent: a bundle whose
        sessions are stored already, or whose place in the run (scenario, cell id, attempt)
        holds a folded bundle already (a retried or duplicated attempt), adds nothing. Its
        rows are written as the other store wrote them (already redacted there), each session
        filed under `bundle.run_id` with `source` worker:<token>; its blobs are written unless
        stored already, and a bundle naming a blob that is neither in it nor in the store is
        refused whole (nothing is written)."""
        ids = bundle.session_ids
        if not ids:
            return []
        with self.transaction():
            conn = self.conn
            if self.held_sessions(ids) or self.folded_attempt(bundle.run_id, bundle.key) is not None:
                return []
            shipped = {sha for sha, _, _, _ in bundle.blobs}
            unshipped = [sha for sha in bundle.blob_names if sha not in shipped]
            held = self.held_blobs(unshipped)
            missing = [sha for sha in unshipped if sha not in held]
            if missing:
                raise ValueError(f"bundle {bundle.token} names {len(missing)} blob(s) it does not carry and the store does not hold ({missing[0][:12]}…)")
            for sha, size, codec, data in bundle.blobs:
                self._insert_blob(Blob(sha, data, codec, size))
            source = FOLDED_SOURCE + bundle.token
            conn.executemany(
                "INSERT INTO sessions (id, run_id, scenario, cell_id, attempt, harness, model, params, workdir, started_at, parent_session, source) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(s["id"], bundle.run_id, s["scenario"], s["cell_id"], s["attempt"], s["harness"], s["model"], s["params"], s["workdir"], s["started_at"], s["parent_session"], source) for s in bundle.sessions],
            )
            for sid, seq, _, _, kind, _ in bundle.actions:
                if kind == LEGACY_OUTCOME:
                    raise ValueError(f"bundle {bundle.token}: {LEGACY_OUTCOME!r} is never appended to a session's stream (session {sid}, seq {seq})")
            conn.executemany("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT))", bundle.actions)
            if bundle.raw:
                conn.executemany(INSERT_RAW, bundle.raw)
            for sid in ids:
                self._seq.pop(sid, None)  # read again from the store when something is appended
        return ids

    def new_grading(self, source: str, *, checkset_sha256: str, catalog_version: str, bench_path: str | None = None, run_id: str | None = None, note: str | None = None) -> str:
        grading_id = new_id()
        with self.transaction():
            self.conn.execute(
                "INSERT INTO gradings (id, source, checkset_sha256, catalog_version, bench_path, run_id, created_at, note) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (grading_id, source, checkset_sha256, catalog_version, bench_path, run_id, time.time(), note),
            )
        return grading_id

    def add_verdicts(self, grading_id: str, session_id: str, rows: list[dict[str, Any]]) -> None:
        """rows: {check_path, type, metric, spec, spec_sha256, result: Result, readout}."""
        self.add_verdicts_many(grading_id, [(session_id, rows)])

    def _redacted(self, session_id: str, text: str | None) -> str | None:
        """A verdict's reason and evidence (e.g. an exec check's output) get the session's redaction too."""
        redact = self.redactor_for(session_id)
        return redact(text) if redact is not None and text is not None else text

    def add_verdicts_many(self, grading_id: str, batch: Iterable[tuple[str, list[dict[str, Any]]]]) -> None:
        """Several sessions' verdicts in one transaction: a re-grading of thousands of sessions
        pays one commit per batch instead of one per session. Each session's verdicts are one
        row, its set (`verdict_sets`; written once per grading), and each distinct spec is
        stored once."""
        now = time.time()
        encode = orjson.dumps
        # A redactor is a pure function of the text, and a batch repeats texts (each check's
        # spec in every session, many reasons and evidence): each distinct (redactor, text)
        # is redacted once per batch.
        redacted: dict[int, dict[str, str]] = {}  # per redactor: each text met -> its redacted form
        sets: dict[str, list[list[Any]]] = {}  # the batch's sessions, once each, in order: their verdicts
        for session_id, rows in batch:
            if not rows:
                continue
            # The session's redactor (as _redacted picks it: its own, else this process's
            # environment one) looked up once, not per verdict.
            redact = self.redactor_for(session_id)
            seen = None if redact is None else redacted.setdefault(id(redact), {})
            entries = sets.setdefault(session_id, [])
            for r in rows:
                result = r["result"]
                spec = r["spec"]
                reason, evidence = result.reason, encode(result.evidence, default=str).decode()
                spec = spec if isinstance(spec, str) else dumps(spec)
                if seen is not None:  # a check's value may be a secret too (its spec_sha256 stays the clear spec's)
                    assert redact is not None  # seen is set exactly when the session has a redactor
                    if reason is not None:
                        clear = seen.get(reason)
                        reason = clear if clear is not None else seen.setdefault(reason, redact(reason))
                    clear = seen.get(evidence)
                    evidence = clear if clear is not None else seen.setdefault(evidence, redact(evidence))
                    clear = seen.get(spec)
                    spec = clear if clear is not None else seen.setdefault(spec, redact(spec))
                # as VERDICT_FIELDS; the spec's text stands in for its id until the transaction
                # a Result's score is a float already (Result.__init__ makes it one)
                entries.append([r["check_path"], r["type"], r.get("metric"), spec, r["spec_sha256"], result.status, 1 if result.passed else 0, result.score, reason, evidence, 1 if r.get("readout") else 0])
        if not sets:
            return
        with self.transaction():
            ids: dict[str, int] = {}
            for entries in sets.values():
                for entry in entries:
                    text = entry[3]
                    spec_id = ids.get(text)
                    if spec_id is None:
                        spec_id = ids[text] = self._spec_id(text)
                    entry[3] = spec_id
            conn = self.conn
            # orjson's UTF-8 bound as TEXT, as actions' data is: decoded to a str first, a set with
            # one non-ASCII character ("≤") was re-encoded from UCS-2 by sqlite3 (~2% of a regrade's work).
            conn.executemany(
                "INSERT INTO verdict_sets (grading_id, session_id, first_check, created_at, verdicts) VALUES (?, ?, ?, ?, CAST(? AS TEXT))",
                [(grading_id, sid, entries[0][0], now, encode(entries)) for sid, entries in sets.items()],
            )
            conn.executemany(
                "INSERT INTO grading_runs (run_id, created_at, grading_id) SELECT ?, created_at, id FROM gradings WHERE id = ?",
                [(run_id, grading_id) for run_id in self._runs_of(list(sets))],
            )

    def _runs_of(self, session_ids: list[str]) -> set[str]:
        """The runs these sessions belong to ('' for a session without a row), as grading_runs files them."""
        runs: set[str] = set()
        for start in range(0, len(session_ids), 500):  # within SQLite's bound on parameters
            page = session_ids[start : start + 500]
            found = self.conn.execute(f"SELECT id, run_id FROM sessions WHERE id IN ({','.join('?' * len(page))})", page).fetchall()
            runs.update(run_id for _, run_id in found)
            if len(found) < len(page):  # the batch's sessions, once each
                runs.add("")
        return runs

    def _spec_id(self, text: str) -> int:
        """Inside a transaction: the id of this spec text in `specs`, stored on first use."""
        import hashlib

        sha = hashlib.sha256(text.encode()).hexdigest()
        known = self._spec_ids.get(sha)
        if known is not None:
            return known
        conn = self.conn
        conn.execute("INSERT OR IGNORE INTO specs (sha256, spec) VALUES (?, ?)", (sha, text))
        spec_id: int = conn.execute("SELECT id FROM specs WHERE sha256 = ?", (sha,)).fetchone()[0]
        self._spec_ids[sha] = spec_id
        return spec_id

    def add_grading_scenarios(self, grading_id: str, contexts: dict[str, dict[str, Any]]) -> None:
        """Per scenario: {vars, transform, control} as the grading used them."""
        rows = [(grading_id, name, dumps(ctx)) for name, ctx in contexts.items()]
        if rows:
            with self.transaction():
                self.conn.executemany("INSERT INTO grading_scenarios (grading_id, scenario, context) VALUES (?, ?, ?)", rows)

    def add_generated_vars(self, run_id: str, by_scenario: dict[str, dict[str, Any]]) -> None:
        """Call only after the run's sessions have finished: these values are the answer key."""
        rows = [(run_id, name, dumps(values)) for name, values in by_scenario.items() if values]
        if rows:
            with self.transaction():
                self.conn.executemany("INSERT INTO generated_vars (run_id, scenario, vars) VALUES (?, ?, ?)", rows)

    def add_outcome(self, grading_id: str | None, session_id: str, outcome: str, reason: str, data: dict[str, Any] | None = None) -> None:
        """The outcome a grading decided for a measurement (on its first session): `data` is
        what it measured besides (cell_id, source, diff, cost_usd, steps). `grading_id` None:
        an execution failure, decided before any check ran. Once per (grading, session); the
        reason and data get the session's redaction, as a verdict's do."""
        redact = self.redactor_for(session_id)
        text = dumps(data or {})
        if redact is not None:
            reason, text = redact(reason), redact(text)
        with self.transaction():
            self.conn.execute(
                "INSERT INTO outcomes (grading_id, session_id, created_at, outcome, reason, data) VALUES (?, ?, ?, ?, ?, ?)",
                (grading_id, session_id, time.time(), outcome, reason, text),
            )

    def add_metric_values(self, grading_id: str, measured: Sequence[tuple[str, dict[str, Any]]]) -> None:
        """The declared metrics a grading measured, per session ({values, errors}; see
        `_m17_metric_values`): once per (grading, session), each with its session's redaction,
        all in one transaction (a regrade writes them a batch at a time)."""
        now = time.time()
        rows = []
        for session_id, data in measured:
            redact = self.redactor_for(session_id)
            text = dumps(data)
            rows.append((grading_id, session_id, now, redact(text) if redact is not None else text))
        if rows:
            with self.transaction():
                self.conn.executemany("INSERT INTO metric_values (grading_id, session_id, created_at, data) VALUES (?, ?, ?, ?)", rows)

    def add_judgment(self, row: dict[str, Any]) -> str:
        """One judge request and its reply (see `_m10_judgments` for the columns). The prompt
        and reply pass through the session's redaction like everything else it stored; their
        hashes are of what was really sent."""
        judgment_id = row.get("id") or new_id()
        redact = self.redactor_for(row["session_id"]) if row.get("session_id") else self.default_redactor
        record = {**row, "id": judgment_id, "created_at": row.get("created_at") or time.time()}
        for key in ("params", "provider_spec"):
            if not isinstance(record.get(key), (str, type(None))):
                record[key] = dumps(record[key])
        if redact is not None:
            record["prompt"] = redact(record["prompt"])
            record["reply"] = redact(record["reply"])
        cols = list(record)
        with self.lock:
            with self.transaction():
                self.conn.execute(f"INSERT INTO judgments ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", tuple(record[c] for c in cols))
        return judgment_id



class BatchWriter:
    """One session's raw lines and actions, written a batch (~RAW_CHUNK_BYTES of lines) at a
    time inside the caller's transaction (an import, a reparse).

    From the second batch on, each is packed on a worker thread (its raw lines probed for
    secrets and compressed, its actions' JSON probed) while the caller writes the batch before
    it and parses the next. RE2's probe and zstd release the GIL, so that work left the
    caller's path: a 50 MB transcript imported at 55-59 MB/s against 44-46 on the one thread
    (benchmarks/store_import.py, interleaved runs). A file of one batch (most transcripts) is
    packed on the caller's thread: a thread for it cost more than it saved (~20% of importing
    many small files). Rows are written on the caller's thread, in order; the caller's
    transaction is what makes them all or nothing."""

    def __init__(self, store: Writer, session_id: str):
        if not store.conn.in_transaction:
            raise RuntimeError("a BatchWriter writes inside its caller's transaction (Store.transaction)")
        self.store = store
        self.session_id = session_id
        self.redact = store.redactor_for(session_id)
        self.stream = store._new_stream()
        self.worker: Any = None  # a ThreadPoolExecutor, from the second batch on
        self.first: tuple[Batch, bytes] | None = None  # the first batch (and its actions' JSON joined), not packed yet
        self.pending: tuple[Batch, Any] | None = None  # the batch being packed (its Future), written next

    def __enter__(self) -> BatchWriter:
        return self

    def add(self, lines: list[tuple[int, str]], actions: list[Action]) -> None:
        """The next lines (line_no, text) and the actions parsed from them."""
        self.write(Batch.of(lines, actions))

    def write(self, batch: Batch) -> None:
        """The next batch (Batch.of, or as a parse worker made it)."""
        job = (batch, b"\n".join(batch.encoded))
        if self.worker is None:
            if self.first is None:
                self.first = job
                return
            from concurrent.futures import ThreadPoolExecutor

            self.worker = ThreadPoolExecutor(1, thread_name_prefix="benchtape-pack")
            first, self.first = self.first, None
            self.pending = (first[0], self.worker.submit(self._pack, *first))
        packing = self.worker.submit(self._pack, *job)
        # The batch before is written while this one is packed: sqlite3 lets go of the GIL
        # at each row it writes, which is when the worker gets it without waiting.
        self._write_pending()
        self.pending = (batch, packing)

    def _pack(self, batch: Batch, json: bytes) -> tuple[list[tuple[str, int, int, int, bytes]], bool]:
        """The batch's raw rows, and whether its actions need no redaction. On the worker, the
        fewest calls possible, each one letting go of the GIL: each return to Python waits for
        the caller's thread to let go of it (up to the switch interval)."""
        redact, sid, groups = self.redact, self.session_id, batch.groups
        if redact is not None and not all(_clean(redact, text) for _, _, text in groups):
            groups = raw_groups([(n, redact(t)) for n, t in batch.lines()])
        rows = [self.stream.chunk(sid, *group) for group in groups]
        return rows, redact is None or _clean(redact, json)

    def _write_pending(self) -> None:
        if self.pending is None:
            return
        (batch, packing), self.pending = self.pending, None
        self._write(batch, packing.result())

    def _write(self, batch: Batch, packed: tuple[list[tuple[str, int, int, int, bytes]], bool]) -> None:
        rows, clean = packed
        store = self.store
        if rows:
            store.conn.executemany(INSERT_RAW, rows)
        if batch.heads:
            store._insert_encoded(self.session_id, batch.heads, store._stored_json(self.session_id, batch.encoded, clean), None)

    def __exit__(self, kind: Any, exc: Any, tb: Any) -> None:
        """Writes the last batch, unless the caller is failing (its transaction rolls back)."""
        try:
            if kind is None:
                if self.first is not None:  # the only batch: packed here
                    self._write(self.first[0], self._pack(*self.first))
                self._write_pending()
        finally:
            if self.worker is not None:
                self.worker.shutdown(wait=True)  # a failed batch's packing finishes before its stream is reused
            self.store._keep_compressor(self.stream.compressor)


def _clean(redact: Callable[[str], str], joined: bytes) -> bool:
    """Whether a batch of texts (their UTF-8, joined by newlines) is its own redaction, found by
    one probe of the whole batch (benchtape.core.redact.Redactor.clean); a redactor with no probe says
    no, and each text passes through it."""
    clean = getattr(redact, "clean", None)
    return clean is not None and clean(joined)


def _environment_redactor() -> Callable[[str], str] | None:
    """This process's known secrets and every credential shape (benchtape.core.redact)."""
    from benchtape.core.redact import redactor, secret_values

    return redactor(secret_values(os.environ))

