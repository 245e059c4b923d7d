"""The SQLite event store: runs, sessions, the append-only action stream, raw lines, blobs,
gradings and verdicts.

History is never updated: triggers make UPDATE and DELETE on `actions`, `raw`,
`gradings`, `verdicts` and `judgments` raise, and a session's lifecycle lives in its stream
(`session.started` … `session.finished`). Each append commits, so a killed process
leaves every action it had received.
"""

from __future__ import annotations

import hashlib
import os
import platform
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator

import orjson
import sqlite_utils
from ulid import ULID

from recorder.model import Action, Session, project

DEFAULT_DB = Path(".benchtape") / "benchtape.db"


def default_db_path() -> Path:
    return Path(os.environ.get("BENCHTAPE_DB") or DEFAULT_DB)


def new_id() -> str:
    return str(ULID())


def dumps(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def loads(text: str | bytes | None) -> Any:
    return None if text is None else orjson.loads(text)


# ---------------------------------------------------------------- migrations

_APPEND_ONLY = ("actions", "raw", "gradings", "verdicts")


def append_only(table: str) -> str:
    """Triggers that make UPDATE and DELETE on a history table raise."""
    return f"""
        CREATE TRIGGER {table}_no_update BEFORE UPDATE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only: history is never updated'); END;
        CREATE TRIGGER {table}_no_delete BEFORE DELETE ON {table}
        BEGIN SELECT RAISE(ABORT, '{table} is append-only: history is never deleted'); END;
        """


def _m1_initial(db: sqlite_utils.Database) -> None:
    db.executescript(
        """
        CREATE TABLE runs (
            id TEXT PRIMARY KEY, kind TEXT NOT NULL, bench_path TEXT, bench_sha256 TEXT,
            harness TEXT, model TEXT, argv TEXT, host TEXT, benchtape_version TEXT,
            started_at REAL NOT NULL, params TEXT
        );
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY, run_id TEXT NOT NULL REFERENCES runs(id), scenario TEXT NOT NULL,
            cell_id TEXT, attempt INTEGER NOT NULL DEFAULT 1, harness TEXT, model TEXT,
            params TEXT, workdir TEXT, started_at REAL NOT NULL, parent_session TEXT, source TEXT
        );
        CREATE INDEX sessions_run ON sessions(run_id);
        CREATE INDEX sessions_scenario ON sessions(scenario);
        CREATE TABLE actions (
            session_id TEXT NOT NULL REFERENCES sessions(id), seq INTEGER NOT NULL, at REAL NOT NULL,
            thread TEXT NOT NULL, kind TEXT NOT NULL, data TEXT NOT NULL,
            PRIMARY KEY (session_id, seq)
        ) WITHOUT ROWID;
        CREATE INDEX actions_kind ON actions(kind);
        CREATE TABLE raw (
            session_id TEXT NOT NULL, line_no INTEGER NOT NULL, text TEXT NOT NULL,
            PRIMARY KEY (session_id, line_no)
        ) WITHOUT ROWID;
        CREATE TABLE blobs (sha256 TEXT PRIMARY KEY, size INTEGER NOT NULL, data BLOB NOT NULL);
        CREATE TABLE gradings (
            id TEXT PRIMARY KEY, source TEXT NOT NULL, checkset_sha256 TEXT, catalog_version TEXT,
            bench_path TEXT, run_id TEXT, created_at REAL NOT NULL, note TEXT
        );
        CREATE TABLE verdicts (
            grading_id TEXT NOT NULL REFERENCES gradings(id), session_id TEXT NOT NULL,
            check_path TEXT NOT NULL, type TEXT NOT NULL, metric TEXT, spec TEXT NOT NULL,
            spec_sha256 TEXT NOT NULL, status TEXT NOT NULL, pass INTEGER NOT NULL, score REAL NOT NULL,
            reason TEXT, evidence TEXT, readout INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
            PRIMARY KEY (grading_id, session_id, check_path)
        );
        CREATE INDEX verdicts_session ON verdicts(session_id);
        CREATE VIEW calls AS
            SELECT c.session_id AS session_id, c.thread AS thread, c.seq AS seq,
                   json_extract(c.data, '$.call_id') AS call_id,
                   json_extract(c.data, '$.tool') AS tool,
                   json_extract(c.data, '$.input') AS input,
                   json_extract(r.data, '$.output') AS output,
                   CASE WHEN r.seq IS NULL OR json_type(r.data, '$.is_error') IS NULL
                             OR json_type(r.data, '$.is_error') = 'null' THEN NULL
                        WHEN json_extract(r.data, '$.is_error') THEN 'error' ELSE 'ok' END AS outcome,
                   json_extract(r.data, '$.is_error') AS is_error
            FROM actions c
            LEFT JOIN actions r ON r.session_id = c.session_id AND r.kind = 'tool.result'
                 AND json_extract(r.data, '$.call_id') = json_extract(c.data, '$.call_id')
            WHERE c.kind = 'tool.call';
        """
    )
    for table in _APPEND_ONLY:
        db.executescript(append_only(table))


def _m2_import_index(db: sqlite_utils.Database) -> None:
    """Imports are found again by their content hash, so importing twice does not duplicate."""
    db.executescript("CREATE INDEX sessions_source ON sessions(source);")


def _m3_grading_scenarios(db: sqlite_utils.Database) -> None:
    """What a grading saw per scenario besides its check specs (vars, the scenario's output
    transform, whether it graded the negative control), so `grade` can reproduce a verdict
    exactly instead of guessing from a bench file that may have changed since."""
    db.executescript(
        """
        CREATE TABLE grading_scenarios (
            grading_id TEXT NOT NULL REFERENCES gradings(id), scenario TEXT NOT NULL,
            context TEXT NOT NULL, PRIMARY KEY (grading_id, scenario)
        ) WITHOUT ROWID;
        """
    )
    db.executescript(append_only("grading_scenarios"))


def _m4_generated_vars(db: sqlite_utils.Database) -> None:
    """A run's `generate:` values (the answer key), written once its sessions are over (never
    while an agent could read the store), so re-grading gives checks the vars live grading did."""
    db.executescript(
        """
        CREATE TABLE generated_vars (
            run_id TEXT NOT NULL REFERENCES runs(id), scenario TEXT NOT NULL, vars TEXT NOT NULL,
            PRIMARY KEY (run_id, scenario)
        ) WITHOUT ROWID;
        """
    )
    db.executescript(append_only("generated_vars"))


def _m5_drop_kind_index(db: sqlite_utils.Database) -> None:
    """The index on actions(kind) cost ~40% of the recording hot path's insert rate and served no
    query: every read filters a session first (the primary key's prefix), and the one per-kind
    read already had to switch it off (`+kind`) because the planner preferred it wrongly."""
    db.executescript("DROP INDEX IF EXISTS actions_kind;")


def _m6_judgments(db: sqlite_utils.Database) -> None:
    """Every judge request and its answer, append-only, with the grading, session and check it
    served: AI verdicts become auditable, and a regrade answers a byte-identical request
    (`request_sha256` + `vote`) from here instead of paying for it again."""
    db.executescript(
        """
        CREATE TABLE judgments (
            id TEXT PRIMARY KEY, grading_id TEXT, session_id TEXT, check_type TEXT, check_sha256 TEXT,
            vote INTEGER NOT NULL DEFAULT 0, mode TEXT, provider TEXT NOT NULL, transport TEXT NOT NULL,
            model TEXT NOT NULL, endpoint TEXT, provider_spec TEXT, params TEXT NOT NULL,
            request_sha256 TEXT NOT NULL, prompt_sha256 TEXT NOT NULL, prompt TEXT NOT NULL,
            reply TEXT NOT NULL, reply_model TEXT, stop_reason TEXT, input_tokens INTEGER,
            output_tokens INTEGER, cost_usd REAL, latency_ms REAL, created_at REAL NOT NULL
        );
        CREATE INDEX judgments_request ON judgments(request_sha256, vote);
        CREATE INDEX judgments_grading ON judgments(grading_id);
        CREATE INDEX judgments_session ON judgments(session_id, check_sha256);
        """
    )
    db.executescript(append_only("judgments"))


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [_m1_initial, _m2_import_index, _m3_grading_scenarios, _m4_generated_vars, _m5_drop_kind_index, _m6_judgments]


def migrate(db: sqlite_utils.Database) -> int:
    """Apply, in order, every migration after the one recorded in PRAGMA user_version."""
    current = db.execute("PRAGMA user_version").fetchone()[0]
    for number, step in enumerate(MIGRATIONS, start=1):
        if number <= current:
            continue
        with db.conn:
            step(db)
            db.execute(f"PRAGMA user_version = {number}")
    return len(MIGRATIONS)


# ---------------------------------------------------------------- the store


@dataclass(frozen=True)
class SessionRow:
    id: str
    run_id: str
    scenario: str
    cell_id: str | None
    attempt: int
    harness: str | None
    model: str | None
    params: dict[str, Any] | None
    workdir: str | None
    started_at: float
    parent_session: str | None = None
    source: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class Store:
    """One SQLite file; safe to share between threads (one connection, one lock)."""

    def __init__(self, path: Path | str, *, readonly: bool = False):
        self.path = Path(path)
        if not readonly:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        conn = sqlite3.connect(str(self.path), check_same_thread=False, isolation_level=None, timeout=30)
        self.db = sqlite_utils.Database(conn)
        self.lock = threading.RLock()
        self._seq: dict[str, int] = {}
        self.redactors: dict[str, Callable[[str], str]] = {}
        # Sessions written without a redactor of their own (imports, re-gradings in a later
        # process) still never store this process's *_API_KEY / *_TOKEN values in clear.
        self.default_redactor = _environment_redactor()
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(self.db)

    def close(self) -> None:
        with self.lock:
            self.db.conn.close()

    # ------------------------------------------------------------ writes
    def new_run(self, kind: str, *, bench_path: str | None = None, bench_sha256: str | None = None, harness: str | None = None, model: str | None = None, argv: list[str] | None = None, params: dict[str, Any] | None = None) -> str:
        from recorder.version import VERSION

        run_id = new_id()
        host = {"hostname": platform.node(), "platform": platform.platform(), "python": platform.python_version()}
        with self.lock, self.db.conn:
            self.db["runs"].insert(
                {
                    "id": run_id,
                    "kind": kind,
                    "bench_path": bench_path,
                    "bench_sha256": bench_sha256,
                    "harness": harness,
                    "model": model,
                    "argv": dumps(argv or []),
                    "host": dumps(host),
                    "benchtape_version": VERSION,
                    "started_at": time.time(),
                    "params": dumps(params or {}),
                }
            )
        return run_id

    def new_session(self, run_id: str, scenario: str, *, cell_id: str | None = None, attempt: int = 1, harness: str | None = None, model: str | None = None, params: dict[str, Any] | None = None, workdir: str | None = None, parent_session: str | None = None, source: str | None = None) -> str:
        session_id = new_id()
        with self.lock, self.db.conn:
            self.db["sessions"].insert(
                {
                    "id": session_id,
                    "run_id": run_id,
                    "scenario": scenario,
                    "cell_id": cell_id,
                    "attempt": attempt,
                    "harness": harness,
                    "model": model,
                    "params": dumps(params or {}),
                    "workdir": workdir,
                    "started_at": time.time(),
                    "parent_session": parent_session,
                    "source": source,
                }
            )
            self._seq[session_id] = 0
        return session_id

    def redactor_for(self, session_id: str) -> Callable[[str], str] | None:
        return self.redactors.get(session_id, self.default_redactor)

    def set_redactor(self, session_id: str, redact: Callable[[str], str]) -> None:
        """Every action and raw line of this session passes through `redact` before it is stored."""
        self.redactors[session_id] = redact

    def append(self, session_id: str, actions: Iterable[Action]) -> int:
        """Append actions in one transaction (redacted first); returns the last seq written.

        The hot path of recording: rows are built in one pass with no intermediate objects.
        """
        redact = self.redactor_for(session_id)
        now = time.time()
        encode = orjson.dumps
        with self.lock:
            seq = self._next_seq(session_id)
            rows = []
            for a in actions:
                seq += 1
                data = encode(a.data, default=str).decode()
                if redact is not None:
                    data = redact(data)
                rows.append((session_id, seq, a.at or now, a.thread, a.kind, data))
            if rows:
                conn = self.db.conn
                conn.execute("BEGIN")
                try:
                    conn.executemany("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES (?, ?, ?, ?, ?, ?)", rows)
                    conn.execute("COMMIT")
                except BaseException:
                    conn.execute("ROLLBACK")
                    raise
                self._seq[session_id] = seq
            return seq

    def append_raw(self, session_id: str, lines: Iterable[tuple[int, str]]) -> None:
        redact = self.redactor_for(session_id)
        rows = [(session_id, n, redact(t) if redact else t) for n, t in lines]
        if rows:
            with self.lock, self.db.conn:
                self.db.conn.executemany("INSERT INTO raw (session_id, line_no, text) VALUES (?, ?, ?)", rows)

    def _next_seq(self, session_id: str) -> int:
        if session_id not in self._seq:
            row = self.db.execute("SELECT COALESCE(MAX(seq), 0) FROM actions WHERE session_id = ?", [session_id]).fetchone()
            self._seq[session_id] = row[0]
        return self._seq[session_id]

    def put_blob(self, data: bytes) -> str:
        sha = hashlib.sha256(data).hexdigest()
        with self.lock, self.db.conn:
            self.db.execute("INSERT OR IGNORE INTO blobs (sha256, size, data) VALUES (?, ?, ?)", [sha, len(data), data])
        return sha

    def get_blob(self, sha: str) -> bytes | None:
        row = self.db.execute("SELECT data FROM blobs WHERE sha256 = ?", [sha]).fetchone()
        return None if row is None else bytes(row[0])

    def new_grading(self, source: str, *, checkset_sha256: str, catalog_version: str, bench_path: str | None = None, run_id: str | None = None, note: str | None = None) -> str:
        grading_id = new_id()
        with self.lock, self.db.conn:
            self.db["gradings"].insert(
                {
                    "id": grading_id,
                    "source": source,
                    "checkset_sha256": checkset_sha256,
                    "catalog_version": catalog_version,
                    "bench_path": bench_path,
                    "run_id": run_id,
                    "created_at": time.time(),
                    "note": note,
                }
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
        pays one commit per batch instead of one per session."""
        now = time.time()
        encode = orjson.dumps
        records = []
        append = records.append
        for session_id, rows in batch:
            # The session's redactor (as _redacted picks it: its own, else this process's
            # environment one) looked up once, not twice per verdict: a regrade writes
            # thousands of sessions' verdicts through here.
            redact = self.redactor_for(session_id)
            for r in rows:
                result = r["result"]
                spec = r["spec"]
                reason, evidence = result.reason, encode(result.evidence, default=str).decode()
                if redact is not None:
                    reason = redact(reason) if reason is not None else None
                    evidence = redact(evidence)
                append(
                    (
                        grading_id,
                        session_id,
                        r["check_path"],
                        r["type"],
                        r.get("metric"),
                        spec if isinstance(spec, str) else dumps(spec),
                        r["spec_sha256"],
                        result.status,
                        int(result.passed),
                        result.score,
                        reason,
                        evidence,
                        int(bool(r.get("readout"))),
                        now,
                    )
                )
        if not records:
            return
        with self.lock:
            self._in_transaction(
                "INSERT INTO verdicts (grading_id, session_id, check_path, type, metric, spec, spec_sha256, status, pass, score, reason, evidence, readout, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                records,
            )

    def _in_transaction(self, sql: str, rows: list[tuple[Any, ...]]) -> None:
        """executemany inside one explicit transaction: the connection is in autocommit mode,
        where `with conn:` commits nothing and every row would be its own transaction."""
        conn = self.db.conn
        if conn.in_transaction:
            conn.executemany(sql, rows)
            return
        conn.execute("BEGIN")
        try:
            conn.executemany(sql, rows)
            conn.execute("COMMIT")
        except BaseException:
            conn.execute("ROLLBACK")
            raise

    def add_grading_scenarios(self, grading_id: str, contexts: dict[str, dict[str, Any]]) -> None:
        """Per scenario: {vars, transform, control} as the grading used them."""
        rows = [(grading_id, name, dumps(ctx)) for name, ctx in contexts.items()]
        if rows:
            with self.lock:
                self._in_transaction("INSERT INTO grading_scenarios (grading_id, scenario, context) VALUES (?, ?, ?)", rows)

    def add_generated_vars(self, run_id: str, by_scenario: dict[str, dict[str, Any]]) -> None:
        """Call only after the run's sessions have finished: these values are the answer key."""
        rows = [(run_id, name, dumps(values)) for name, values in by_scenario.items() if values]
        if rows:
            with self.lock:
                self._in_transaction("INSERT INTO generated_vars (run_id, scenario, vars) VALUES (?, ?, ?)", rows)

    def add_judgment(self, row: dict[str, Any]) -> str:
        """One judge request and its reply (see `_m6_judgments` for the columns). The prompt
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
            self._in_transaction(f"INSERT INTO judgments ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", [tuple(record[c] for c in cols)])
        return judgment_id

    def find_judgment(self, request_sha256: str, vote: int = 0) -> dict[str, Any] | None:
        """The first stored answer to this exact request (and vote): what a regrade reuses."""
        rows = self._rows("SELECT * FROM judgments WHERE request_sha256 = ? AND vote = ? ORDER BY created_at, id LIMIT 1", [request_sha256, vote])
        return _decode_judgment(rows[0]) if rows else None

    def judgment_for(self, grading_id: str, session_id: str, check_sha256: str, vote: int = 0) -> dict[str, Any] | None:
        """The judgment a grading recorded for one session, check and vote (what `grade`
        replays: the same question, to the same provider and model)."""
        rows = self._rows(
            "SELECT * FROM judgments WHERE grading_id = ? AND session_id = ? AND check_sha256 = ? AND vote = ? ORDER BY created_at, id LIMIT 1",
            [grading_id, session_id, check_sha256, vote],
        )
        return _decode_judgment(rows[0]) if rows else None

    def judgments(self, *, grading_id: str | None = None, session_id: str | None = None, ids: Iterable[str] | None = None) -> list[dict[str, Any]]:
        where, params = [], []
        if grading_id:
            where.append("grading_id = ?")
            params.append(grading_id)
        if session_id:
            where.append("session_id = ?")
            params.append(session_id)
        if ids is not None:
            wanted = list(ids)
            if not wanted:
                return []
            where.append(f"id IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        sql = "SELECT * FROM judgments" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created_at, id"
        return [_decode_judgment(r) for r in self._rows(sql, params)]

    def judgment_totals(self, grading_id: str) -> dict[str, Any]:
        """What a grading spent on judges: requests sent, tokens, cost (None when any answer
        could not be priced: unknown is never read as zero)."""
        row = self.db.execute(
            "SELECT COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), SUM(cost_usd IS NULL) FROM judgments WHERE grading_id = ?",
            [grading_id],
        ).fetchone()
        count, tin, tout, cost, unpriced = row
        return {"requests": count, "input_tokens": tin or 0, "output_tokens": tout or 0, "cost_usd": None if unpriced else (cost or 0.0)}

    # ------------------------------------------------------------ reads
    def _rows(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Rows as dicts, fetched at once. Not sqlite-utils' `query()`: that wraps every read in
        a SAVEPOINT, which another thread's BEGIN/COMMIT on this shared connection releases
        under it ("no such savepoint") while live grading reads as sessions append."""
        cursor = self.db.conn.execute(sql, params)
        keys = [d[0] for d in cursor.description]
        return [dict(zip(keys, row)) for row in cursor.fetchall()]

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = list(self._rows("SELECT * FROM runs WHERE id = ?", [run_id]))
        return _decode_run(rows[0]) if rows else None

    def runs(self) -> list[dict[str, Any]]:
        return [_decode_run(r) for r in self._rows("SELECT * FROM runs ORDER BY started_at, id")]

    def session_row(self, session_id: str) -> SessionRow | None:
        rows = list(self._rows("SELECT * FROM sessions WHERE id = ?", [session_id]))
        return _session_row(rows[0]) if rows else None

    def session_rows(self, *, run_id: str | None = None, scenario: str | None = None) -> Iterator[SessionRow]:
        where, params = [], []
        if run_id:
            where.append("run_id = ?")
            params.append(run_id)
        if scenario:
            where.append("scenario = ?")
            params.append(scenario)
        sql = "SELECT * FROM sessions" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY started_at, id"
        for r in self._rows(sql, params):
            yield _session_row(r)

    def actions(self, session_id: str, kinds: Iterable[str] | None = None) -> list[Action]:
        """The session's actions in order (only these `kinds` when given: a reader that needs a
        few kinds does not decode the rest). Every reader (grade, regrade, query) starts here,
        so rows become Actions without the frozen dataclass's per-field __setattr__ calls."""
        sql, params = "SELECT seq, at, thread, kind, data FROM actions WHERE session_id = ?", [session_id]
        if kinds is not None:  # `+kind`: stay on the primary key, never the kind index
            wanted = sorted(set(kinds))
            sql += f" AND +kind IN ({','.join('?' * len(wanted))})"
            params.extend(wanted)
        rows = self.db.execute(sql + " ORDER BY seq", params)
        if _FAST_ACTIONS:
            # A fresh instance dict set through the `__dict__` descriptor: no kwargs dict, no
            # materializing the instance's own dict first (~7 µs a session below update()).
            new, set_dict, decode = object.__new__, _set_action_dict, orjson.loads
            out = []
            append = out.append
            for seq, at, thread, kind, data in rows:
                a = new(Action)
                set_dict(a, {"kind": kind, "data": decode(data), "thread": thread, "at": at, "seq": seq})
                append(a)
            return out
        return [Action(kind, orjson.loads(data), thread=thread, at=at, seq=seq) for seq, at, thread, kind, data in rows]

    def raw_lines(self, session_id: str) -> list[str]:
        return [t for (t,) in self.db.execute("SELECT text FROM raw WHERE session_id = ? ORDER BY line_no", [session_id])]

    def load_session(self, session_id: str, row: SessionRow | None = None, kinds: Iterable[str] | None = None) -> Session:
        """The projection of a stored session, with its id and row facts filled in (pass the
        row when you already have it: a streaming reader saves a query per session). With
        `kinds`, the projection of only those actions: right only for the parts of a Session
        that depend on nothing else (see replay.document.KINDS_FOR)."""
        session = project(self.actions(session_id, kinds))
        row = row if row is not None and row.id == session_id else self.session_row(session_id)
        session.id = session_id
        if row is not None:
            session.scenario = session.scenario or row.scenario
            session.harness = session.harness or row.harness
            session.model = session.model or row.model
            session.work_dir = session.work_dir or row.workdir
        return session

    def find_session_by_source(self, source: str) -> str | None:
        row = self.db.execute("SELECT id FROM sessions WHERE source = ? ORDER BY started_at LIMIT 1", [source]).fetchone()
        return row[0] if row else None

    def grading(self, grading_id: str) -> dict[str, Any] | None:
        rows = list(self._rows("SELECT * FROM gradings WHERE id = ?", [grading_id]))
        return rows[0] if rows else None

    def gradings(self) -> list[dict[str, Any]]:
        return list(self._rows("SELECT * FROM gradings ORDER BY created_at, id"))

    def verdicts(self, *, grading_id: str | None = None, session_id: str | None = None) -> list[dict[str, Any]]:
        where, params = [], []
        if grading_id:
            where.append("grading_id = ?")
            params.append(grading_id)
        if session_id:
            where.append("session_id = ?")
            params.append(session_id)
        sql = "SELECT * FROM verdicts" + (" WHERE " + " AND ".join(where) if where else "") + " ORDER BY created_at, rowid"
        out = []
        for r in self._rows(sql.replace("rowid", "check_path"), params):
            r["spec"] = loads(r["spec"])
            r["evidence"] = loads(r["evidence"])
            r["pass"] = bool(r["pass"])
            r["readout"] = bool(r["readout"])
            out.append(r)
        return out

    def generated_vars(self, run_id: str, scenario: str) -> dict[str, Any]:
        row = self.db.execute("SELECT vars FROM generated_vars WHERE run_id = ? AND scenario = ?", [run_id, scenario]).fetchone()
        return loads(row[0]) if row else {}

    def grading_scenarios(self, grading_id: str) -> dict[str, dict[str, Any]]:
        """The per-scenario context a grading recorded ({} for gradings made before it was kept)."""
        return {name: loads(ctx) for name, ctx in self.db.execute("SELECT scenario, context FROM grading_scenarios WHERE grading_id = ?", [grading_id])}

    def iter_session_rows(self, *, run_id: str | None = None, scenario: str | None = None, session_ids: Iterable[str] | None = None, batch: int = 500) -> Iterator[SessionRow]:
        """Session rows in id (= creation) order, a page at a time: no read cursor stays open
        while the caller writes, and memory does not grow with the store."""
        where, params = ["id > ?"], []
        if run_id:
            where.append("run_id = ?")
            params.append(run_id)
        if scenario:
            where.append("scenario = ?")
            params.append(scenario)
        if session_ids is not None:
            wanted = list(session_ids)
            where.append(f"id IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        sql = "SELECT * FROM sessions WHERE " + " AND ".join(where) + " ORDER BY id LIMIT ?"
        last = ""
        while True:
            page = [_session_row(r) for r in self._rows(sql, [last, *params, batch])]
            yield from page
            if len(page) < batch:
                return
            last = page[-1].id

    def resolve_id(self, table: str, prefix: str) -> str | None:
        """The one id in `runs` or `sessions` starting with `prefix` (ULIDs, any case); None if none.

        Raises LookupError listing the candidates when the prefix is ambiguous."""
        if table not in ("runs", "sessions", "gradings"):
            raise ValueError(table)
        text = prefix.strip().upper()
        if not text:
            return None
        hits = [r[0] for r in self.db.execute(f"SELECT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", [text, text + "\uffff"])]
        if len(hits) > 1 and text not in hits:
            raise LookupError(hits)
        return text if text in hits else (hits[0] if hits else None)

    def finish_status(self, session_id: str) -> str | None:
        """The status in the session's `session.finished` action; None when it never finished."""
        row = self.db.execute("SELECT data FROM actions WHERE session_id = ? AND kind = 'session.finished' ORDER BY seq DESC LIMIT 1", [session_id]).fetchone()
        return None if row is None else (loads(row[0]).get("status") or "ok")

    def latest_grading_for(self, session_id: str) -> str | None:
        row = self.db.execute(
            "SELECT v.grading_id FROM verdicts v JOIN gradings g ON g.id = v.grading_id WHERE v.session_id = ? ORDER BY g.created_at DESC, g.id DESC LIMIT 1",
            [session_id],
        ).fetchone()
        return row[0] if row else None


# Rows become Actions by filling the instance dict directly, which is only the same as calling
# Action(...) while Action is a plain (non-slotted) dataclass of exactly these fields with no
# __post_init__; otherwise the ordinary constructor is used.
_FAST_ACTIONS = (
    not hasattr(Action, "__slots__")
    and not hasattr(Action, "__post_init__")
    and tuple(Action.__dataclass_fields__) == ("kind", "data", "thread", "at", "seq")
)
_set_action_dict = Action.__dict__["__dict__"].__set__ if _FAST_ACTIONS else None


def _environment_redactor() -> Callable[[str], str] | None:
    from recorder.redact import redactor, secret_values

    secrets = secret_values(os.environ)
    return redactor(secrets) if secrets else None


def _decode_judgment(r: dict[str, Any]) -> dict[str, Any]:
    r = dict(r)
    for k in ("params", "provider_spec"):
        r[k] = loads(r.get(k))
    return r


def _decode_run(r: dict[str, Any]) -> dict[str, Any]:
    r = dict(r)
    for k in ("argv", "host", "params"):
        r[k] = loads(r.get(k))
    return r


def _session_row(r: dict[str, Any]) -> SessionRow:
    return SessionRow(
        id=r["id"],
        run_id=r["run_id"],
        scenario=r["scenario"],
        cell_id=r.get("cell_id"),
        attempt=r.get("attempt") or 1,
        harness=r.get("harness"),
        model=r.get("model"),
        params=loads(r.get("params")),
        workdir=r.get("workdir"),
        started_at=r["started_at"],
        parent_session=r.get("parent_session"),
        source=r.get("source"),
    )
