"""The SQLite event store: runs, sessions, the append-only action stream, raw lines, blobs,
gradings and verdicts.

History is never rewritten, by benchtape or by any other program opening the file: triggers
stored in the schema make UPDATE, DELETE and any INSERT that would replace an existing row
(`INSERT OR REPLACE`, an UPSERT) raise on every history table, and a session's lifecycle lives
in its stream (`session.started` … `session.finished`). Each append commits, so a killed process
leaves every action and raw line it had received.

Several processes may write one store at once: each process has one connection (its threads
share it under the store's lock), every write transaction begins IMMEDIATE, and migrations run
under an exclusive lock that re-reads the schema version inside it (see benchtape.store.sqlite_io).
"""

from __future__ import annotations

import hashlib
import os
import platform
import sqlite3
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Sequence

import orjson
import sqlite_utils

from benchtape.core.errors import BadInput
from benchtape.core.model import Action, ActionRow, Session, actions_of, project_rows
from benchtape.core.payloads import check_payloads
from benchtape.store.sqlite_io import bad_store, begin, connect, retry_busy, run_script

DEFAULT_DB = Path(".benchtape") / "benchtape.db"
PAGE_SIZE = 2048  # bytes per SQLite page of a new store (see Store.__init__)


def default_db_path() -> Path:
    return Path(os.environ.get("BENCHTAPE_DB") or DEFAULT_DB)


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


def dumps(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def loads(text: str | bytes | None) -> Any:
    return None if text is None else orjson.loads(text)


# ---------------------------------------------------------------- migrations
_APPEND_ONLY = ("actions", "raw", "gradings", "verdicts")
# The no-rewrite triggers (no_rewrite) a bulk write lifts while it holds the write lock (Store._lift_row_guards).
ROW_GUARDS = ("actions_no_rewrite", "raw_no_rewrite")


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


def no_rewrite(table: str, key: Sequence[str], *, rowid: bool = False, content: str | None = None) -> str:
    """A trigger refusing any INSERT that meets an existing row of a history table.

    `INSERT OR REPLACE` deletes the row it meets without firing DELETE triggers (unless that
    connection turned recursive_triggers on) and an UPSERT becomes an UPDATE of it; a BEFORE
    INSERT trigger stored in the schema stops both, whatever program opened the file. A rowid
    table is also matched on an explicit rowid. In a content-addressed table (`content` names
    the content column) the very same row again is skipped, as INSERT OR IGNORE would."""
    match = " AND ".join(f"{k} = NEW.{k}" for k in key)
    if rowid:
        match = f"({match}) OR rowid = NEW.rowid"
    refuse = f"RAISE(ABORT, '{table} is append-only: an existing row is never replaced')"
    if content:
        same = " AND ".join(f"{k} IS NEW.{k}" for k in (*key, content))
        body = f"SELECT CASE WHEN EXISTS (SELECT 1 FROM {table} WHERE ({match}) AND NOT ({same})) THEN {refuse} ELSE RAISE(IGNORE) END;"
    else:
        body = f"SELECT {refuse};"
    return f"CREATE TRIGGER {table}_no_rewrite BEFORE INSERT ON {table} WHEN EXISTS (SELECT 1 FROM {table} WHERE {match}) BEGIN {body} END;"


def skip_repeats(table: str, key: Sequence[str]) -> str:
    """A trigger for a table whose every column is its key: a row met again is the very same
    row, so it is skipped, never an error and never a change."""
    match = " AND ".join(f"{k} = NEW.{k}" for k in key)
    return f"CREATE TRIGGER {table}_no_rewrite BEFORE INSERT ON {table} WHEN EXISTS (SELECT 1 FROM {table} WHERE {match}) BEGIN SELECT RAISE(IGNORE); END;"


def _m6_no_rewrites(db: sqlite_utils.Database) -> None:
    """Every history table refuses every rewrite, on every connection: REPLACE and UPSERT are
    refused like UPDATE and DELETE, and runs, sessions and blobs (which had no guard) get all."""
    for table in ("runs", "sessions", "blobs"):
        db.executescript(append_only(table))
    for table, key in (("runs", ["id"]), ("sessions", ["id"]), ("gradings", ["id"]), ("verdicts", ["grading_id", "session_id", "check_path"])):
        db.executescript(no_rewrite(table, key, rowid=True))
    db.executescript(no_rewrite("blobs", ["sha256"], rowid=True, content="data"))
    for table, key in (("actions", ["session_id", "seq"]), ("raw", ["session_id", "line_no"]), ("grading_scenarios", ["grading_id", "scenario"]), ("generated_vars", ["run_id", "scenario"])):
        db.executescript(no_rewrite(table, key))


def _sha256_text(text: str | None) -> str | None:
    return None if text is None else hashlib.sha256(text.encode()).hexdigest()


def _m7_specs_once(db: sqlite_utils.Database) -> None:
    """Each check spec is stored once (`specs`, keyed by the sha256 of its JSON) instead of once
    per verdict: a regrade of N sessions wrote each spec N times. Verdict rows move to
    `verdict_rows` (referencing their spec), and `verdicts` becomes a view with the same
    columns as the table it replaces, so every reader (SQL or Store.verdicts) reads it as before.
    Existing verdicts are carried over row for row."""
    db.conn.create_function("benchtape_sha256", 1, _sha256_text, deterministic=True)
    db.executescript(
        """
        CREATE TABLE specs (id INTEGER PRIMARY KEY, sha256 TEXT NOT NULL UNIQUE, spec TEXT NOT NULL);
        CREATE TABLE verdict_rows (
            grading_id TEXT NOT NULL REFERENCES gradings(id), session_id TEXT NOT NULL,
            check_path TEXT NOT NULL, type TEXT NOT NULL, metric TEXT, spec_id INTEGER NOT NULL REFERENCES specs(id),
            spec_sha256 TEXT NOT NULL, status TEXT NOT NULL, pass INTEGER NOT NULL, score REAL NOT NULL,
            reason TEXT, evidence TEXT, readout INTEGER NOT NULL DEFAULT 0, created_at REAL NOT NULL,
            PRIMARY KEY (grading_id, session_id, check_path)
        ) WITHOUT ROWID;
        INSERT INTO specs (sha256, spec) SELECT benchtape_sha256(spec), spec FROM verdicts GROUP BY spec ORDER BY MIN(rowid);
        INSERT INTO verdict_rows
            SELECT v.grading_id, v.session_id, v.check_path, v.type, v.metric, s.id, v.spec_sha256, v.status,
                   v.pass, v.score, v.reason, v.evidence, v.readout, v.created_at
            FROM verdicts v JOIN specs s ON s.sha256 = benchtape_sha256(v.spec);
        DROP TABLE verdicts;
        CREATE INDEX verdict_rows_session ON verdict_rows(session_id);
        CREATE VIEW verdicts AS
            SELECT v.grading_id AS grading_id, v.session_id AS session_id, v.check_path AS check_path,
                   v.type AS type, v.metric AS metric, s.spec AS spec, v.spec_sha256 AS spec_sha256,
                   v.status AS status, v.pass AS pass, v.score AS score, v.reason AS reason,
                   v.evidence AS evidence, v.readout AS readout, v.created_at AS created_at
            FROM verdict_rows v JOIN specs s ON s.id = v.spec_id;
        CREATE TRIGGER verdicts_no_update INSTEAD OF UPDATE ON verdicts
        BEGIN SELECT RAISE(ABORT, 'verdicts is append-only: history is never updated'); END;
        CREATE TRIGGER verdicts_no_delete INSTEAD OF DELETE ON verdicts
        BEGIN SELECT RAISE(ABORT, 'verdicts is append-only: history is never deleted'); END;
        """
    )
    db.executescript(append_only("verdict_rows") + append_only("specs"))
    db.executescript(no_rewrite("verdict_rows", ["grading_id", "session_id", "check_path"]))
    db.executescript(no_rewrite("specs", ["sha256"], rowid=True, content="spec"))


def _m8_compressed_raw(db: sqlite_utils.Database) -> None:
    """Raw lines are stored compressed: each session's lines are one zstd frame cut at block
    flushes into chunks (a live line is a chunk of its own, durable when its append returns; an
    import writes ~RAW_CHUNK_BYTES chunks), each chunk compressing against the lines before it. `raw`
    keeps its name and key (session_id, line_no = the chunk's first line); `lines` counts the
    chunk's lines and `fresh` marks a chunk that starts a new stream. Existing rows are carried
    over, compressed."""
    db.executescript(
        """
        CREATE TABLE raw_chunks (
            session_id TEXT NOT NULL, line_no INTEGER NOT NULL, lines INTEGER NOT NULL,
            fresh INTEGER NOT NULL, data BLOB NOT NULL,
            PRIMARY KEY (session_id, line_no)
        ) WITHOUT ROWID;
        """
    )
    conn = db.conn
    insert = "INSERT INTO raw_chunks (session_id, line_no, lines, fresh, data) VALUES (?, ?, ?, ?, ?)"
    session, stream, batch, size = None, RawStream(), [], 0
    for session_id, line_no, text in _iter_old_raw(conn):
        if session_id != session or size >= RAW_CHUNK_BYTES:
            if batch:
                conn.executemany(insert, stream.rows(session, batch))
            if session_id != session:
                stream = RawStream()
            session, batch, size = session_id, [], 0
        batch.append((line_no, text))
        size += len(text)
    if batch:
        conn.executemany(insert, stream.rows(session, batch))
    db.executescript("DROP TABLE raw; ALTER TABLE raw_chunks RENAME TO raw;")
    db.executescript(append_only("raw"))
    db.executescript(no_rewrite("raw", ["session_id", "line_no"]))


def _iter_old_raw(conn: sqlite3.Connection) -> Iterator[tuple[str, int, str]]:
    """The first release's raw rows in order, a page at a time (memory stays flat)."""
    last = ("", -1)
    while True:
        page = conn.execute("SELECT session_id, line_no, text FROM raw WHERE (session_id, line_no) > (?, ?) ORDER BY session_id, line_no LIMIT 2000", last).fetchall()
        yield from page
        if len(page) < 2000:
            return
        last = (page[-1][0], page[-1][1])


# The session_summary view; `latest` is the subquery naming a session's latest grading, `counts`
# its four verdict counts (`summary_counts`).
SESSION_SUMMARY = """
        CREATE VIEW session_summary AS
        SELECT
            s.id AS session_id,
            s.run_id AS run_id,
            r.kind AS run_kind,
            r.bench_path AS bench,
            s.scenario AS scenario,
            s.attempt AS attempt,
            s.harness AS harness,
            s.model AS model,
            CASE WHEN fa.seq IS NULL THEN 'unfinished' ELSE COALESCE(json_extract(fa.data, '$.status'), 'ok') END AS status,
            (SELECT json_extract(a.data, '$.cost_usd') FROM actions a WHERE a.session_id = s.id AND a.kind = 'metrics'
                AND json_extract(a.data, '$.cost_usd') IS NOT NULL ORDER BY a.seq DESC LIMIT 1) AS cost_usd,
            (SELECT json_extract(a.data, '$.tokens_in') FROM actions a WHERE a.session_id = s.id AND a.kind = 'metrics'
                AND json_extract(a.data, '$.tokens_in') IS NOT NULL ORDER BY a.seq DESC LIMIT 1) AS tokens_in,
            (SELECT json_extract(a.data, '$.tokens_out') FROM actions a WHERE a.session_id = s.id AND a.kind = 'metrics'
                AND json_extract(a.data, '$.tokens_out') IS NOT NULL ORDER BY a.seq DESC LIMIT 1) AS tokens_out,
            json_extract(fa.data, '$.wall_ms') AS duration_ms,
            s.latest_grading AS grading_id,
{counts},
            strftime('%Y-%m-%dT%H:%M:%fZ', s.started_at, 'unixepoch') AS started_at,
            strftime('%Y-%m-%dT%H:%M:%fZ', fa.at, 'unixepoch') AS finished_at
        FROM (
            SELECT s.*, ({latest}) AS latest_grading
            FROM sessions s
        ) s
        LEFT JOIN runs r ON r.id = s.run_id
        LEFT JOIN actions fa ON fa.session_id = s.id AND fa.kind = 'session.finished'
            AND fa.seq = (SELECT MAX(x.seq) FROM actions x WHERE x.session_id = s.id AND x.kind = 'session.finished');
"""
_COUNT_ROWS = "(SELECT COUNT(*) FROM verdict_rows v WHERE v.grading_id = s.latest_grading AND v.session_id = s.id AND v.status = '{status}') AS {name}"
_COUNT_SETS = "(SELECT COUNT(*) FROM verdict_sets v, json_each(v.verdicts) j WHERE v.grading_id = s.latest_grading AND v.session_id = s.id AND j.value ->> 5 = '{status}') AS {name}"


def summary_counts(count: str) -> str:
    """The view's pass, fail, error and na columns, each `count` (a subquery template) of its status."""
    return ",\n            ".join(count.format(status=status, name=status.lower()) for status in ("PASS", "FAIL", "ERROR", "NA"))


_LATEST_BY_VERDICTS = "SELECT v.grading_id FROM verdict_rows v JOIN gradings g ON g.id = v.grading_id WHERE v.session_id = s.id ORDER BY g.created_at DESC, g.id DESC LIMIT 1"
_LATEST_BY_SESSION_GRADINGS = "SELECT sg.grading_id FROM session_gradings sg JOIN gradings g ON g.id = sg.grading_id WHERE sg.session_id = s.id ORDER BY g.created_at DESC, g.id DESC LIMIT 1"
# The first (`{order}` ASC) or latest (DESC) grading of the session's run that holds a set of
# it: the run's gradings are walked in their order on grading_runs' key, each probed in
# verdict_sets by its key, and the walk stops at the first that holds one.
_GRADING_OF_SESSION = (
    "SELECT gr.grading_id FROM grading_runs gr WHERE gr.run_id = {run} "
    "AND EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = gr.grading_id AND v.session_id = {session}) "
    "ORDER BY gr.created_at {order}, gr.grading_id {order} LIMIT 1"
)
_LATEST_BY_GRADING_RUNS = _GRADING_OF_SESSION.format(run="s.run_id", session="s.id", order="DESC")
# The run a session id (the parameter `{param}`) is filed under in grading_runs.
_RUN_OF_SESSION = "COALESCE((SELECT run_id FROM sessions WHERE id = {param}), '')"


def _m9_session_summary(db: sqlite_utils.Database) -> None:
    """One row per session to browse the store as it is (Datasette, sqlite-utils): its run,
    scenario, attempt, harness, model, status, cost, tokens, duration, the verdict counts of its
    latest grading and ISO times, all derived from the history (a view, nothing stored)."""
    db.executescript(SESSION_SUMMARY.format(latest=_LATEST_BY_VERDICTS, counts=summary_counts(_COUNT_ROWS)))


def _m10_judgments(db: sqlite_utils.Database) -> None:
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
    db.executescript(no_rewrite("judgments", ["id"], rowid=True))


def _m11_cell_index(db: sqlite_utils.Database) -> None:
    """An evaluation run asks, for every cell it would measure, whether the store already holds
    a measurement of that identity (and a workflow's later steps by their first): by index,
    so a second invocation of a large matrix finds its cells without scanning every session."""
    db.executescript(
        """
        CREATE INDEX sessions_cell ON sessions(cell_id);
        CREATE INDEX sessions_parent ON sessions(parent_session);
        """
    )


def _m12_session_gradings(db: sqlite_utils.Database) -> None:
    """Which gradings hold verdicts of a session, one row per (session, grading), written in the
    verdicts' own transaction. It replaces the index of verdict_rows by session, which took five
    entries per graded session (one per check), each at its session's place in the index, so a
    regrade of N sessions paid 5N scattered index inserts (a third of its writing time); one
    row per session does the same job for the few readers that start from a session."""
    db.executescript(
        """
        CREATE TABLE session_gradings (
            session_id TEXT NOT NULL, grading_id TEXT NOT NULL REFERENCES gradings(id),
            PRIMARY KEY (session_id, grading_id)
        ) WITHOUT ROWID;
        INSERT INTO session_gradings SELECT DISTINCT session_id, grading_id FROM verdict_rows;
        DROP INDEX verdict_rows_session;
        DROP VIEW session_summary;
        """
    )
    db.executescript(SESSION_SUMMARY.format(latest=_LATEST_BY_SESSION_GRADINGS, counts=summary_counts(_COUNT_ROWS)))
    db.executescript(append_only("session_gradings"))
    db.executescript(skip_repeats("session_gradings", ("session_id", "grading_id")))  # a grading may add a session's verdicts in more than one call


def _m13_compressed_blobs(db: sqlite_utils.Database) -> None:
    """Blobs (workspace snapshots, harness transcripts) may be stored zstd-compressed: `codec`
    says how `data` holds the bytes (NULL: as they are, 'zstd': one zstd frame), while `sha256`
    and `size` stay those of the bytes themselves. A real Codex session leaves ~1.5 MB of its
    own state in a home-level workspace; stored as it is, that was 1.5 MB of B-tree pages and
    WAL a session (~4 ms, and a checkpoint every other session), compressed ~10× smaller.
    Existing rows keep their bytes as they are (history is never rewritten)."""
    db.executescript("ALTER TABLE blobs ADD COLUMN codec TEXT;")


# A verdict as an element of its set's JSON array (verdict_sets.verdicts), by position.
VERDICT_FIELDS = ("check_path", "type", "metric", "spec_id", "spec_sha256", "status", "pass", "score", "reason", "evidence", "readout")


def _m14_verdict_sets(db: sqlite_utils.Database) -> None:
    """A session's verdicts in a grading are stored as one row, their set: a JSON array of
    verdicts, each an array of VERDICT_FIELDS (evidence as its JSON text). They are written
    together and read together (a diff, a positive control, a report reads a session's set),
    and a regrade wrote five B-tree rows a session, each through the no-rewrite trigger: ~35 µs
    of a 275 µs session, against ~17 as one row. A rowid table with its key in an index, not a
    WITHOUT ROWID table: a set (~1.3 kB for five checks) is more than such a table keeps on its
    page with 2 KiB pages, so each spilled into an overflow page (~3 µs more a session).
    `verdicts` stays a view with the same columns
    (json_each over the sets), so every SQL reader reads it as before. Existing verdicts are
    carried over set by set, in their order.

    A grading may add a session's verdicts in more than one set (`first_check`, the first
    verdict's check path, tells them apart); a set holding a check path the session already
    has in the grading is refused, as the old per-verdict key refused it."""
    db.executescript(
        """
        CREATE TABLE verdict_sets (
            grading_id TEXT NOT NULL REFERENCES gradings(id), session_id TEXT NOT NULL,
            first_check TEXT NOT NULL, created_at REAL NOT NULL, verdicts TEXT NOT NULL
        );
        CREATE UNIQUE INDEX verdict_sets_key ON verdict_sets(grading_id, session_id, first_check);
        INSERT INTO verdict_sets (grading_id, session_id, first_check, created_at, verdicts)
            SELECT grading_id, session_id, MIN(check_path), MIN(created_at),
                   json_group_array(json_array(check_path, type, metric, spec_id, spec_sha256, status, pass, score, reason, evidence, readout))
            FROM (SELECT * FROM verdict_rows ORDER BY grading_id, session_id, created_at, check_path)
            GROUP BY grading_id, session_id;
        DROP VIEW session_summary;
        DROP VIEW verdicts;
        DROP TABLE verdict_rows;
        CREATE VIEW verdicts AS
            SELECT v.grading_id AS grading_id, v.session_id AS session_id, j.value ->> 0 AS check_path,
                   j.value ->> 1 AS type, j.value ->> 2 AS metric, s.spec AS spec, j.value ->> 4 AS spec_sha256,
                   j.value ->> 5 AS status, j.value ->> 6 AS pass, j.value ->> 7 AS score, j.value ->> 8 AS reason,
                   j.value ->> 9 AS evidence, j.value ->> 10 AS readout, v.created_at AS created_at
            FROM verdict_sets v, json_each(v.verdicts) j JOIN specs s ON s.id = j.value ->> 3;
        CREATE TRIGGER verdicts_no_update INSTEAD OF UPDATE ON verdicts
        BEGIN SELECT RAISE(ABORT, 'verdicts is append-only: history is never updated'); END;
        CREATE TRIGGER verdicts_no_delete INSTEAD OF DELETE ON verdicts
        BEGIN SELECT RAISE(ABORT, 'verdicts is append-only: history is never deleted'); END;
        """
    )
    db.executescript(SESSION_SUMMARY.format(latest=_LATEST_BY_SESSION_GRADINGS, counts=summary_counts(_COUNT_SETS)))
    db.executescript(append_only("verdict_sets"))
    # two probes when the session has no set in the grading yet (every regrade): only a second
    # set is compared, verdict by verdict, with those before it (a REPLACE meets its own key,
    # or its rowid)
    db.executescript(
        """
        CREATE TRIGGER verdict_sets_no_rewrite BEFORE INSERT ON verdict_sets
        WHEN EXISTS (SELECT 1 FROM verdict_sets WHERE grading_id = NEW.grading_id AND session_id = NEW.session_id)
            OR EXISTS (SELECT 1 FROM verdict_sets WHERE rowid = NEW.rowid)
        BEGIN
            SELECT CASE
                WHEN EXISTS (SELECT 1 FROM verdict_sets WHERE (grading_id = NEW.grading_id AND session_id = NEW.session_id AND first_check = NEW.first_check) OR rowid = NEW.rowid)
                    THEN RAISE(ABORT, 'verdict_sets is append-only: an existing row is never replaced')
                WHEN NOT json_valid(NEW.verdicts)
                    THEN RAISE(ABORT, 'verdict_sets holds a JSON array of verdicts')
                WHEN EXISTS (
                    SELECT 1 FROM verdict_sets o, json_each(o.verdicts) a, json_each(NEW.verdicts) b
                    WHERE o.grading_id = NEW.grading_id AND o.session_id = NEW.session_id AND a.value ->> 0 = b.value ->> 0
                ) THEN RAISE(ABORT, 'verdict_sets is append-only: an existing verdict is never replaced')
            END;
        END;
        """
    )


def _m15_grading_runs(db: sqlite_utils.Database) -> None:
    """Which runs each grading holds sessions of, one row per (run, grading) with the grading's
    created_at (its order), in place of one row per (session, grading). A session's first or
    latest grading is found by walking its run's gradings in order, each probed in verdict_sets
    by its key (grading, session), to the first that holds it: usually the first probed. The
    per-session rows were inserted in session order into a table keyed by session, a B-tree
    descent and a touched page a session: ~15 µs of a regrade's ~260 µs a session, twice the
    verdict set's own insert. A session without a row in `sessions` is filed under the run ''."""
    db.executescript(
        """
        CREATE TABLE grading_runs (
            run_id TEXT NOT NULL, created_at REAL NOT NULL, grading_id TEXT NOT NULL REFERENCES gradings(id),
            PRIMARY KEY (run_id, created_at, grading_id)
        ) WITHOUT ROWID;
        INSERT INTO grading_runs SELECT DISTINCT COALESCE(s.run_id, ''), g.created_at, sg.grading_id
            FROM session_gradings sg JOIN gradings g ON g.id = sg.grading_id LEFT JOIN sessions s ON s.id = sg.session_id;
        DROP VIEW session_summary;
        DROP TABLE session_gradings;
        """
    )
    db.executescript(SESSION_SUMMARY.format(latest=_LATEST_BY_GRADING_RUNS, counts=summary_counts(_COUNT_SETS)))
    db.executescript(append_only("grading_runs"))
    db.executescript(skip_repeats("grading_runs", ("run_id", "created_at", "grading_id")))  # each batch of a grading's verdicts names its runs again


MIGRATIONS: list[Callable[[sqlite_utils.Database], None]] = [
    _m1_initial,
    _m2_import_index,
    _m3_grading_scenarios,
    _m4_generated_vars,
    _m5_drop_kind_index,
    _m6_no_rewrites,
    _m7_specs_once,
    _m8_compressed_raw,
    _m9_session_summary,
    _m10_judgments,
    _m11_cell_index,
    _m12_session_gradings,
    _m13_compressed_blobs,
    _m14_verdict_sets,
    _m15_grading_runs,
]


def schema_version(conn: sqlite3.Connection) -> int:
    return conn.execute("PRAGMA user_version").fetchone()[0]


def migrate(db: sqlite_utils.Database, path: Path | None = None) -> int:
    """Bring the store to the current schema: every migration after PRAGMA user_version, all in
    one exclusive transaction that re-reads the version once it holds the lock, so processes
    opening a new or old store at the same moment migrate it exactly once."""
    conn = db.conn
    if schema_version(conn) == len(MIGRATIONS):
        return len(MIGRATIONS)
    begin(conn, "BEGIN EXCLUSIVE")
    try:
        current = schema_version(conn)
        _check_version(conn, current, path, readonly=False)
        for number, step in enumerate(MIGRATIONS, start=1):
            if number > current:
                step(db)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        conn.execute("COMMIT")
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    return len(MIGRATIONS)


def _check_version(conn: sqlite3.Connection, version: int, path: Path | None, *, readonly: bool) -> None:
    """BadInput when this file is not a store this benchtape may open as asked."""
    where = str(path) if path else None
    if version > len(MIGRATIONS):
        raise BadInput(f"this store was written by a newer benchtape (schema {version}; this version knows {len(MIGRATIONS)})", file=where, fix="upgrade benchtape to open it")
    if version == 0:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        if tables:
            raise BadInput(
                f"not a benchtape store: it holds other tables ({', '.join(tables[:5])}{', …' if len(tables) > 5 else ''})",
                file=where,
                fix="pass --db a new path (benchtape creates the store there) or the path of a benchtape store",
            )
        if readonly:
            raise BadInput("not a benchtape store (an empty database)", file=where, fix="record into it first (`benchtape run` or `benchtape import` with this --db), or pass the path of a benchtape store")
    elif readonly and version < len(MIGRATIONS):
        raise BadInput(
            f"this store was written by an older benchtape (schema {version}; this version reads {len(MIGRATIONS)}), and this command only reads",
            file=where,
            fix=f"bring it forward once with `benchtape migrate --db {where or 'PATH'}` (any recording command, such as run or import, does it too)",
        )


# ---------------------------------------------------------------- raw lines, compressed

# zstd level of raw chunks and blobs. Over every real transcript in shared/realdata, level 1
# against 3: 672 against 449 MB/s in one piece (a blob), 396 against 317 MB/s in 64 kB chunks
# each flushed (raw lines), 5.03x against 5.34x smaller. Compression was ~20% of importing a
# transcript whose text does not repeat (benchmarks/store_import.py); the store of the real
# transcripts grows 0.934x -> 0.941x their size (with the chunks below).
ZSTD_LEVEL = 1
# How much text a batch writer (import, migration) puts in one chunk: each is flushed to a
# block boundary on its own, and 256 kB against 64 kB made a 50 MB import ~4% faster and its
# raw ~1% smaller (1 MB gained nothing more).
RAW_CHUNK_BYTES = 256 * 1024
INSERT_RAW = "INSERT INTO raw (session_id, line_no, lines, fresh, data) VALUES (?, ?, ?, ?, ?)"
RAW_STREAMS = 32  # open compressors kept per store (~1.3 MB each); an evicted one restarts fresh


class RawStream:
    """One session's raw lines as one zstd frame, cut at block flushes into chunks.

    A chunk is stored as soon as it is cut (a live line is durable when its append returns) yet
    compresses against the lines before it; a reader decompresses a session's chunks in order,
    starting a new frame at each chunk marked fresh (a new process, or after a failed write).
    zstd over zlib: per line 5.1× at ~140 MB/s against zlib's 4.8× at ~30 MB/s on the real
    transcripts, which is most of an import's time (measured in benchmarks/store_import.py)."""

    __slots__ = ("compressor", "_z", "_flush", "_fresh")

    def __init__(self, level: int = ZSTD_LEVEL, compressor: Any = None):
        import zstandard  # only the commands that write or read raw lines pay for the import

        # `compressor`: a finished stream's, reused (compressobj() starts a new frame on it)
        self.compressor = compressor if compressor is not None else zstandard.ZstdCompressor(level=level)
        self._z = self.compressor.compressobj()
        self._flush = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        self._fresh = 1

    def rows(self, session_id: str, lines: Iterable[tuple[int, str]], encoded: Sequence[bytes] | None = None) -> list[tuple[str, int, int, int, bytes]]:
        """The rows for these lines (see raw_groups); `encoded`: their UTF-8, if the caller has it."""
        return [self.chunk(session_id, *group) for group in raw_groups(lines, encoded)]

    def chunk(self, session_id: str, first: int, count: int, text: bytes) -> tuple[str, int, int, int, bytes]:
        """The row of one group of lines: its text compressed and flushed to a block boundary."""
        data = self._z.compress(text) + self._z.flush(self._flush)
        fresh, self._fresh = self._fresh, 0
        return (session_id, first, count, fresh, data)


def raw_groups(lines: Iterable[tuple[int, str]], encoded: Sequence[bytes] | None = None) -> list[tuple[int, int, bytes]]:
    """Lines as chunks' texts (first line_no, lines, UTF-8 each ending in a newline):
    consecutive line numbers share a chunk; a line holding a newline gets a chunk of its own,
    so splitting a chunk on newlines is always exact.

    Each line is encoded on its own and the bytes joined (`encoded`: already done by the
    caller): joining the texts first would widen the whole chunk to 4 bytes a character as
    soon as one emoji is in it, and encoding that costs more than encoding the lines (1.5x
    over the real transcripts' 64 kB chunks, 6x over a whole 10 MB file)."""
    out: list[tuple[int, int, bytes]] = []
    group: list[bytes] = []
    first = last = 0
    pairs = list(lines)
    datas = encoded if encoded is not None else [t.encode("utf-8", "surrogatepass") for _, t in pairs]
    for (n, _), text in zip(pairs, datas):
        alone = b"\n" in text
        if group and (n != last + 1 or alone):
            out.append((first, len(group), b"\n".join(group) + b"\n"))
            group = []
        if not group:
            first = n
        group.append(text)
        last = n
        if alone:
            out.append((first, len(group), b"\n".join(group) + b"\n"))
            group = []
    if group:
        out.append((first, len(group), b"\n".join(group) + b"\n"))
    return out


def encode_actions(actions: Sequence[Action]) -> list[bytes]:
    """Each action's data as the JSON stored for it (not yet redacted), once its payload is
    found to match its kind (PayloadError otherwise: the batch is refused, nothing written)."""
    check_payloads(actions)
    return [orjson.dumps(a.data, default=str) for a in actions]


Head = tuple[str, str, float]  # an action's (kind, thread, at): what its row holds besides its JSON


@dataclass(slots=True)
class Batch:
    """A batch of a session's raw lines and the actions parsed from them, ready to write: the
    lines as chunks' texts (raw_groups), each action's JSON encoded (not yet redacted).

    Bytes and tuples only, made where the lines were parsed: an import of a large transcript
    parses in a child process (benchtape.recorder.parse_worker), which sends batches, not Action objects."""

    groups: list[tuple[int, int, bytes]]
    heads: list[Head]
    encoded: list[bytes]

    @classmethod
    def of(cls, lines: list[tuple[int, str]], actions: Sequence[Action]) -> "Batch":
        return cls(raw_groups(lines), [(a.kind, a.thread, a.at) for a in actions], encode_actions(actions))

    def lines(self) -> list[tuple[int, str]]:
        """The batch's lines (line_no, text) again, read back from its groups (a line holding a
        newline has a group of its own, so the split is exact); only a redaction needs them."""
        out: list[tuple[int, str]] = []
        for first, count, text in self.groups:
            out.extend(zip(range(first, first + count), chunk_lines(text, count)))
        return out

    def warnings(self) -> int:
        return sum(kind == "adapter.warning" for kind, _, _ in self.heads)


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

    def __init__(self, store: "Store", session_id: str):
        if not store.db.conn.in_transaction:
            raise RuntimeError("a BatchWriter writes inside its caller's transaction (Store.transaction)")
        self.store = store
        self.session_id = session_id
        self.redact = store.redactor_for(session_id)
        self.stream = store._new_stream()
        self.worker: Any = None  # a ThreadPoolExecutor, from the second batch on
        self.first: tuple[Batch, bytes] | None = None  # the first batch (and its actions' JSON joined), not packed yet
        self.pending: tuple[Batch, Any] | None = None  # the batch being packed (its Future), written next

    def __enter__(self) -> "BatchWriter":
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
            store.db.conn.executemany(INSERT_RAW, rows)
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


def inflate_raw(rows: Iterable[tuple[int, int, bytes]]) -> Iterator[str]:
    """The lines of a session's raw chunks (lines, fresh, data), in order."""
    import zstandard

    inflate = None
    for lines, fresh, data in rows:
        if fresh or inflate is None:
            inflate = zstandard.ZstdDecompressor().decompressobj()
        yield from chunk_lines(inflate.decompress(data), lines)


def chunk_lines(text: bytes, count: int) -> list[str]:
    """The `count` lines of a chunk's text (raw_groups): a chunk of one line is that line whole
    (it may hold a newline), a longer one splits on its newlines exactly."""
    body = text.decode("utf-8", "surrogatepass")[:-1]
    return [body] if count == 1 else body.split("\n")


@dataclass(frozen=True)
class Blob:
    """Bytes ready to store (Store.prepare_blob): `data` as the row holds them (compressed by
    `codec`), or None when the store has them already."""

    sha256: str
    data: bytes | None
    codec: str | None
    size: int


def compress_blob(data: bytes, pool: list[Any]) -> tuple[bytes, str | None]:
    """`data` as a blob row holds it: (bytes, codec). `pool`: the store's idle compressors (raw
    streams return theirs there too), each used by one thread at a time (popping and appending
    a list is atomic), so sessions storing snapshots at once neither wait for each other nor
    make a ~1 MB context each time."""
    if len(data) < 512:
        return data, None
    import zstandard

    compressor = pool.pop() if pool else zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    try:
        packed = compressor.compress(data)
    finally:
        pool.append(compressor)
    return (packed, "zstd") if len(packed) < len(data) else (data, None)


def inflate_blob(data: bytes, codec: str, size: int, path: Path, sha: str) -> bytes:
    """A compressed blob's bytes; a codec this version does not know, or a frame that does not
    hold exactly `size` bytes, is a damaged store (a frame is never trusted to size its output)."""
    import zstandard

    if codec == "zstd" and zstandard.frame_content_size(data) == size:
        try:
            out = zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
        except zstandard.ZstdError:
            out = None
        if out is not None and len(out) == size:
            return out
    raise BadInput(
        f"blob {sha[:12]}… is damaged or in a form this version cannot read (codec {codec!r}, {size:,} bytes expected)",
        file=str(path),
        fix="upgrade benchtape if a newer one wrote this store; otherwise restore the store from a copy",
    )


# ---------------------------------------------------------------- the store


@dataclass
class SessionRow:
    """A `sessions` row, decoded. Treat it as immutable: not frozen because every streaming
    reader makes one per session, and a frozen __init__ of twelve fields costs 3x a plain one."""

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


class _Database(sqlite_utils.Database):
    """sqlite-utils' Database whose executescript runs inside the caller's transaction (the
    sqlite3 module's own COMMITs first), so a migration is all or nothing."""

    def executescript(self, sql: str) -> None:  # type: ignore[override]
        run_script(self.conn, sql)


class Store:
    """One SQLite file; one connection per Store, shared by threads under one lock.

    `readonly=True` opens the file read-only: it is never created, changed or migrated (a
    browsing command pointed at someone else's database leaves it as it was). `create=False`
    refuses a path with no database yet. Every way the path can fail is a BadInput at open."""

    def __init__(self, path: Path | str, *, readonly: bool = False, create: bool = True):
        self.path = Path(path)
        self.readonly = readonly
        conn = connect(self.path, readonly=readonly, create=create)
        self.lock = threading.RLock()
        self._seq: dict[str, int] = {}
        self._raw: dict[str, RawStream] = {}
        # Idle compressors, for the next raw stream or blob: a zstd context is ~1.3 MB, and
        # making and freeing one per session fragmented the C heap (a 500-session run's peak
        # memory grew ~10 KB a session); reused, it stays flat.
        self._compressors: list[Any] = []
        self._spec_ids: dict[str, int] = {}
        self._spec_texts: dict[int, str] = {}  # _spec_text's
        self.redactors: dict[str, Callable[[str], str]] = {}
        # Sessions written without a redactor of their own (imports, re-gradings in a later
        # process) still never store this process's *_API_KEY / *_TOKEN values in clear.
        self.default_redactor = _environment_redactor()
        try:
            self.db = _Database(conn)
            if readonly:
                _check_version(conn, schema_version(conn), self.path, readonly=True)
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
                migrate(self.db, self.path)
        except sqlite3.Error as exc:
            conn.close()
            raise bad_store(self.path, exc) from None
        except BaseException:
            conn.close()
            raise

    def close(self) -> None:
        with self.lock:
            self.db.conn.close()

    # ------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self, *, defer_foreign_keys: bool = False, bulk: bool = False) -> Iterator[None]:
        """One write transaction around several store calls (an import writes a whole file's
        session in one). Writes inside it join it; it commits at the end or rolls back whole.

        `bulk` (an import's): when this call begins the transaction, the per-row no-rewrite
        triggers of actions and raw are lifted for its length and put back before it commits
        (see _lift_row_guards); a transaction joined from outside keeps them."""
        with self.lock:
            conn = self.db.conn
            if conn.in_transaction:
                yield
                return
            begin(conn)
            try:
                if defer_foreign_keys:
                    conn.execute("PRAGMA defer_foreign_keys = ON")
                lifted = self._lift_row_guards() if bulk else []
                yield
                for sql in lifted:
                    conn.execute(sql)
                conn.execute("COMMIT")
            except BaseException:
                conn.execute("ROLLBACK")
                self._forget_uncommitted()
                raise

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
        conn = self.db.conn
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
            self.db.conn.execute(
                "INSERT INTO runs (id, kind, bench_path, bench_sha256, harness, model, argv, host, benchtape_version, started_at, params) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (run_id, kind, bench_path, bench_sha256, harness, model, dumps(argv or []), dumps(host), VERSION, time.time(), dumps(params or {})),
            )
        return run_id

    def new_session(self, run_id: str, scenario: str, *, cell_id: str | None = None, attempt: int = 1, harness: str | None = None, model: str | None = None, params: dict[str, Any] | None = None, workdir: str | None = None, parent_session: str | None = None, source: str | None = None, session_id: str | None = None) -> str:
        """A new session row (`session_id` when the caller chose the id already, as an import
        does: it writes the session's actions first and this row last, once it knows them)."""
        session_id = session_id or new_id()
        with self.transaction():
            self.db.conn.execute(
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

    def append(self, session_id: str, actions: Iterable[Action], *, at_seq: int | None = None, blobs: Sequence["Blob"] = ()) -> int:
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
        redact = self.redactor_for(session_id)
        line = redact(text) if redact is not None else text
        with self.transaction():
            self._insert_raw(session_id, [(line_no, line)])
            return self._insert_actions(session_id, actions, None)

    def append_raw(self, session_id: str, lines: Iterable[tuple[int, str]]) -> None:
        """Raw lines (line_no, text), redacted then compressed; consecutive lines of one call
        share a chunk, so a batch writer (an import) passes ~RAW_CHUNK_BYTES of lines a call."""
        redact = self.redactor_for(session_id)
        batch = list(lines)
        encoded: list[bytes] | None = [t.encode("utf-8", "surrogatepass") for _, t in batch]
        if redact is not None and not _clean(redact, b"\n".join(encoded)):
            batch, encoded = [(n, redact(t)) for n, t in batch], None
        if batch:
            with self.transaction():
                self._insert_raw(session_id, batch, encoded)

    def batch_writer(self, session_id: str) -> "BatchWriter":
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

        The JSON goes to SQLite as orjson's UTF-8 bytes, stored as TEXT by the CAST (a BLOB
        cast to TEXT is its bytes taken as text in the database's encoding, UTF-8: unchanged).
        Bound as str, each action was decoded from UTF-8 and encoded back by sqlite3, which
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
        seq = self._next_seq(session_id) if at_seq is None else at_seq - 1
        rows = []
        finished = False
        for (kind, thread, at), data in zip(heads, encoded):
            seq += 1
            rows.append((session_id, seq, at or now, thread, kind, data))
            if kind == "session.finished":
                finished = True
        if rows:
            self.db.conn.executemany("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES (?, ?, ?, ?, ?, CAST(? AS TEXT))", rows)
            if at_seq is None:
                self._seq[session_id] = seq
            if finished:  # nothing more will be appended to it by this process
                self._end_stream(session_id)
        return seq

    def _insert_raw(self, session_id: str, lines: list[tuple[int, str]], encoded: list[bytes] | None = None) -> None:
        stream = self._raw.get(session_id)
        if stream is None:
            if len(self._raw) >= RAW_STREAMS:
                self._end_stream(next(iter(self._raw)))
            stream = self._raw[session_id] = self._new_stream()
        self.db.conn.executemany(INSERT_RAW, stream.rows(session_id, lines, encoded))

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
                row = self.db.conn.execute("SELECT COALESCE(MAX(seq), 0) FROM actions WHERE session_id = ?", [session_id]).fetchone()
                self._seq[session_id] = row[0]
        return self._seq[session_id]

    def put_blob(self, data: bytes) -> str:
        """Store bytes under their sha256 (once: the same bytes again are not compressed or
        written again), compressed unless that does not make them smaller."""
        blob = self.prepare_blob(data)
        if blob.data is not None:
            with self.transaction():
                self._insert_blob(blob)
        return blob.sha256

    def prepare_blob(self, data: bytes) -> "Blob":
        """Bytes hashed and compressed for storing, outside any transaction (a snapshot can be
        megabytes: other sessions' writers do not wait for it), to be written with the actions
        that name it (`append(blobs=...)`): one transaction instead of one more each."""
        sha = hashlib.sha256(data).hexdigest()
        if self._one("SELECT 1 FROM blobs WHERE sha256 = ?", [sha]) is not None:
            return Blob(sha, None, None, len(data))  # stored already: nothing to write
        stored, codec = compress_blob(data, self._compressors)
        return Blob(sha, stored, codec, len(data))

    def _insert_blob(self, blob: "Blob") -> None:
        """Inside a transaction: a prepared blob's row, unless it is there already."""
        if blob.data is None:
            return
        try:
            self.db.conn.execute("INSERT OR IGNORE INTO blobs (sha256, size, data, codec) VALUES (?, ?, ?, ?)", [blob.sha256, blob.size, blob.data, blob.codec])
        except sqlite3.IntegrityError:
            # another writer stored the same bytes first, compressed by another zstd build: the
            # trigger refuses the other form of the same content (that statement only: the
            # transaction goes on), and the content is there
            if self._one("SELECT 1 FROM blobs WHERE sha256 = ?", [blob.sha256]) is None:
                raise

    def get_blob(self, sha: str) -> bytes | None:
        """The bytes stored under sha (readers that trust them verify the hash themselves)."""
        row = self._one("SELECT data, codec, size FROM blobs WHERE sha256 = ?", [sha])
        if row is None:
            return None
        data, codec, size = row
        return bytes(data) if codec is None else inflate_blob(bytes(data), codec, size, self.path, sha)

    def new_grading(self, source: str, *, checkset_sha256: str, catalog_version: str, bench_path: str | None = None, run_id: str | None = None, note: str | None = None) -> str:
        grading_id = new_id()
        with self.transaction():
            self.db.conn.execute(
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
            conn = self.db.conn
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
            found = self.db.conn.execute(f"SELECT id, run_id FROM sessions WHERE id IN ({','.join('?' * len(page))})", page).fetchall()
            runs.update(run_id for _, run_id in found)
            if len(found) < len(page):  # the batch's sessions, once each
                runs.add("")
        return runs

    def _spec_id(self, text: str) -> int:
        """Inside a transaction: the id of this spec text in `specs`, stored on first use."""
        sha = hashlib.sha256(text.encode()).hexdigest()
        known = self._spec_ids.get(sha)
        if known is not None:
            return known
        conn = self.db.conn
        conn.execute("INSERT OR IGNORE INTO specs (sha256, spec) VALUES (?, ?)", (sha, text))
        spec_id = conn.execute("SELECT id FROM specs WHERE sha256 = ?", (sha,)).fetchone()[0]
        self._spec_ids[sha] = spec_id
        return spec_id

    def add_grading_scenarios(self, grading_id: str, contexts: dict[str, dict[str, Any]]) -> None:
        """Per scenario: {vars, transform, control} as the grading used them."""
        rows = [(grading_id, name, dumps(ctx)) for name, ctx in contexts.items()]
        if rows:
            with self.transaction():
                self.db.conn.executemany("INSERT INTO grading_scenarios (grading_id, scenario, context) VALUES (?, ?, ?)", rows)

    def add_generated_vars(self, run_id: str, by_scenario: dict[str, dict[str, Any]]) -> None:
        """Call only after the run's sessions have finished: these values are the answer key."""
        rows = [(run_id, name, dumps(values)) for name, values in by_scenario.items() if values]
        if rows:
            with self.transaction():
                self.db.conn.executemany("INSERT INTO generated_vars (run_id, scenario, vars) VALUES (?, ?, ?)", rows)

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
                self.db.conn.execute(f"INSERT INTO judgments ({', '.join(cols)}) VALUES ({', '.join('?' * len(cols))})", tuple(record[c] for c in cols))
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
        where, params = _equal({"grading_id": grading_id, "session_id": session_id})
        if ids is not None:
            wanted = list(ids)
            if not wanted:
                return []
            where.append(f"id IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        sql = "SELECT * FROM judgments" + _where(where) + " ORDER BY created_at, id"
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
        """Rows as dicts, fetched at once under the lock. Not sqlite-utils' `query()`: that wraps
        every read in a SAVEPOINT, which another thread's BEGIN/COMMIT on this shared connection
        releases under it ("no such savepoint") while live grading reads as sessions append."""
        with self.lock, self._damage_is_bad_input():
            cursor = self.db.conn.execute(sql, params)
            keys = [d[0] for d in cursor.description]
            return [dict(zip(keys, row)) for row in cursor.fetchall()]

    def _all(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row at once, under the lock: no statement of this connection is left pending
        for another thread's transaction to trip over."""
        with self.lock, self._damage_is_bad_input():
            return self.db.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self.lock, self._damage_is_bad_input():
            return self.db.conn.execute(sql, params).fetchone()

    def _damage_is_bad_input(self) -> "_DamageIsBadInput":
        """Damage found past the pages read at open (a file cut short or overwritten in the
        middle) is the user's message with the fix, like damage found at open."""
        return _DamageIsBadInput(self.path)

    def run(self, run_id: str) -> dict[str, Any] | None:
        rows = list(self._rows("SELECT * FROM runs WHERE id = ?", [run_id]))
        return _decode_run(rows[0]) if rows else None

    def runs(self) -> list[dict[str, Any]]:
        return [_decode_run(r) for r in self._rows("SELECT * FROM runs ORDER BY started_at, id")]

    def session_row(self, session_id: str) -> SessionRow | None:
        row = self._one(f"SELECT {_SESSION_COLUMNS} FROM sessions WHERE id = ?", [session_id])
        return _session_row(row) if row else None

    def session_rows(self, *, run_id: str | None = None, scenario: str | None = None) -> Iterator[SessionRow]:
        where, params = _equal({"run_id": run_id, "scenario": scenario})
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions" + _where(where) + " ORDER BY started_at, id"
        for r in self._all(sql, params):
            yield _session_row(r)

    def actions(self, session_id: str, kinds: Iterable[str] | None = None) -> list[Action]:
        """The session's actions in order (only these `kinds` when given)."""
        return actions_of(self.action_rows(session_id, kinds))

    def action_rows(self, session_id: str, kinds: Iterable[str] | None = None) -> list[ActionRow]:
        """The session's actions in order as rows, data decoded (only these `kinds` when given:
        a reader that needs a few kinds does not decode the rest). Every reader (grade,
        regrade, query) starts here."""
        sql, params = "SELECT seq, at, thread, kind, data FROM actions WHERE session_id = ?", [session_id]
        if kinds is not None:  # `+kind`: stay on the primary key, never the kind index
            wanted = sorted(set(kinds))
            sql += f" AND +kind IN ({','.join('?' * len(wanted))})"
            params.extend(wanted)
        rows = self._all(sql + " ORDER BY seq", params)
        decode = orjson.loads
        return [(seq, at, thread, kind, decode(data)) for seq, at, thread, kind, data in rows]

    def last_raw_line(self, session_id: str) -> int:
        """The number of the session's last stored raw line (0 for none): where a recovery resumes."""
        row = self._one("SELECT MAX(line_no + lines - 1) FROM raw WHERE session_id = ?", [session_id])
        return int(row[0] or 0) if row else 0

    def raw_lines(self, session_id: str) -> list[str]:
        """The session's raw lines as received (after redaction), in order."""
        return list(inflate_raw(self._all("SELECT lines, fresh, data FROM raw WHERE session_id = ? ORDER BY line_no", [session_id])))

    def load_session(self, session_id: str, row: SessionRow | None = None, kinds: Iterable[str] | None = None) -> Session:
        """The projection of a stored session, with its id and row facts filled in (pass the
        row when you already have it: a streaming reader saves a query per session). With
        `kinds`, the projection of only those actions: right only for the parts of a Session
        that depend on nothing else (see benchtape.replay.document.KINDS_FOR)."""
        session = project_rows(self.action_rows(session_id, kinds))
        row = row if row is not None and row.id == session_id else self.session_row(session_id)
        session.id = session_id
        if row is not None:
            session.scenario = session.scenario or row.scenario
            session.harness = session.harness or row.harness
            session.model = session.model or row.model
            session.work_dir = session.work_dir or row.workdir
        return session

    def find_session_by_source(self, source: str) -> str | None:
        row = self._one("SELECT id FROM sessions WHERE source = ? ORDER BY started_at LIMIT 1", [source])
        return row[0] if row else None

    def grading(self, grading_id: str) -> dict[str, Any] | None:
        rows = list(self._rows("SELECT * FROM gradings WHERE id = ?", [grading_id]))
        return rows[0] if rows else None

    def gradings(self) -> list[dict[str, Any]]:
        return list(self._rows("SELECT * FROM gradings ORDER BY created_at, id"))

    def verdicts(self, *, grading_id: str | None = None, session_id: str | None = None) -> list[dict[str, Any]]:
        """Verdict rows with their spec (decoded), read through the `verdicts` view, which joins
        each row to its spec stored once in `specs`; the same for stores of any age."""
        where, params = _equal({"grading_id": grading_id, "session_id": session_id})
        if session_id is not None and grading_id is None:  # by the session's gradings: verdict_sets is keyed by grading first
            where.append(f"grading_id IN (SELECT grading_id FROM grading_runs WHERE run_id = {_RUN_OF_SESSION.format(param='?')})")
            params.append(session_id)
        sql = "SELECT * FROM verdicts" + _where(where) + " ORDER BY created_at, rowid"
        out = []
        for r in self._rows(sql.replace("rowid", "check_path"), params):
            r["spec"] = loads(r["spec"])
            r["evidence"] = loads(r["evidence"])
            r["pass"] = bool(r["pass"])
            r["readout"] = bool(r["readout"])
            out.append(r)
        return out

    def generated_vars(self, run_id: str, scenario: str) -> dict[str, Any]:
        row = self._one("SELECT vars FROM generated_vars WHERE run_id = ? AND scenario = ?", [run_id, scenario])
        return loads(row[0]) if row else {}

    def grading_scenarios(self, grading_id: str) -> dict[str, dict[str, Any]]:
        """The per-scenario context a grading recorded ({} for gradings made before it was kept)."""
        return {name: loads(ctx) for name, ctx in self._all("SELECT scenario, context FROM grading_scenarios WHERE grading_id = ?", [grading_id])}

    def iter_session_rows(self, *, run_id: str | None = None, scenario: str | None = None, session_ids: Iterable[str] | None = None, batch: int = 500) -> Iterator[SessionRow]:
        """Session rows in id (= creation) order, a page at a time: no read cursor stays open
        while the caller writes, and memory does not grow with the store."""
        where, params = _equal({"run_id": run_id, "scenario": scenario})
        where.insert(0, "id > ?")  # the page's start, given first in each query below
        if session_ids is not None:
            wanted = list(session_ids)
            where.append(f"id IN ({','.join('?' * len(wanted))})")
            params.extend(wanted)
        sql = f"SELECT {_SESSION_COLUMNS} FROM sessions" + _where(where) + " ORDER BY id LIMIT ?"
        last = ""
        while True:
            page = [_session_row(r) for r in self._all(sql, [last, *params, batch])]
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
        hits = [r[0] for r in self._all(f"SELECT id FROM {table} WHERE id >= ? AND id < ? ORDER BY id LIMIT 6", [text, text + "\uffff"])]
        if len(hits) > 1 and text not in hits:
            raise LookupError(hits)
        return text if text in hits else (hits[0] if hits else None)

    def finish_status(self, session_id: str) -> str | None:
        """The status in the session's `session.finished` action; None when it never finished."""
        row = self._one("SELECT data FROM actions WHERE session_id = ? AND kind = 'session.finished' ORDER BY seq DESC LIMIT 1", [session_id])
        return None if row is None else (loads(row[0]).get("status") or "ok")

    # ------------------------------------------------------------ gradings of a session
    # The read side asks these (never the tables): which gradings graded which sessions.

    def latest_grading_for(self, session_id: str) -> str | None:
        """The newest grading holding verdicts of this session (what `show` and reports display)."""
        return self._grading_for(session_id, "DESC")

    def first_grading_for(self, session_id: str) -> str | None:
        """The grading the session was first graded with: the one recorded with its run (what
        the positive control reproduces by default)."""
        return self._grading_for(session_id, "ASC")

    def first_gradings(self, session_ids: Sequence[str]) -> dict[str, str]:
        """`first_grading_for` of many sessions in one query (a positive control over thousands
        of sessions asks it of each): session id → its first grading, for those graded at all."""
        if not session_ids:
            return {}
        first = _GRADING_OF_SESSION.format(run="s.run_id", session="s.id", order="ASC")
        sql = f"SELECT s.id, ({first}) FROM sessions s WHERE s.id IN ({','.join('?' * len(session_ids))})"
        return {session_id: grading_id for session_id, grading_id in self._all(sql, list(session_ids)) if grading_id is not None}

    def _grading_for(self, session_id: str, order: str) -> str | None:
        row = self._one(_GRADING_OF_SESSION.format(run=_RUN_OF_SESSION.format(param="?1"), session="?1", order=order), [session_id])
        return row[0] if row else None

    def verdict_briefs(self, grading_id: str, session_id: str) -> list[tuple[Any, ...]]:
        """The session's verdicts in the grading as (check_path, type, metric, spec_sha256, spec
        JSON text, status, pass, score, reason, readout): what a diff compares, the spec left
        undecoded until a change is shown."""
        spec_text = self._spec_text
        return [(v[0], v[1], v[2], v[4], spec_text(v[3]), v[5], v[6], v[7], v[8], v[10]) for v in self._verdict_set(grading_id, session_id)]

    def _verdict_set(self, grading_id: str, session_id: str) -> list[list[Any]]:
        """The session's verdicts in the grading, each as VERDICT_FIELDS ([] if it holds none)."""
        parts = self._all("SELECT created_at, first_check, verdicts FROM verdict_sets WHERE grading_id = ? AND session_id = ?", [grading_id, session_id])
        if len(parts) == 1:
            return loads(parts[0][2])
        parts.sort()  # in the order they were added (SQL's ORDER BY would sort even the one set a session mostly has)
        return [v for _at, _first, part in parts for v in loads(part)]

    def _spec_text(self, spec_id: int) -> str:
        """A stored spec's JSON text by its id (each read once per store: a grading's sessions share their specs)."""
        text = self._spec_texts.get(spec_id)
        if text is None:
            row = self._one("SELECT spec FROM specs WHERE id = ?", [spec_id])
            text = self._spec_texts[spec_id] = row[0] if row else "null"
        return text

    def graded(self, grading_id: str, session_id: str) -> bool:
        """Whether the grading holds any verdict of the session."""
        return self._one("SELECT 1 FROM verdict_sets WHERE grading_id = ? AND session_id = ? LIMIT 1", [grading_id, session_id]) is not None

    def graded_session_ids(self, grading_id: str) -> list[str]:
        """Every session the grading holds verdicts of, in id (= creation) order."""
        return [r[0] for r in self._all("SELECT DISTINCT session_id FROM verdict_sets WHERE grading_id = ? ORDER BY session_id", [grading_id])]

    def verdict_counts(self, grading_id: str, session_id: str) -> dict[str, int]:
        """The session's verdicts in the grading, counted by status."""
        counts: dict[str, int] = {}
        for v in self._verdict_set(grading_id, session_id):
            counts[v[5]] = counts.get(v[5], 0) + 1
        return counts

    def sessions_per_grading(self) -> dict[str, int]:
        """How many sessions each grading graded."""
        return dict(self._all("SELECT grading_id, COUNT(DISTINCT session_id) FROM verdict_sets GROUP BY grading_id"))

    # ------------------------------------------------------------ finding sessions
    # What naming and listing sessions asks (benchtape.replay.select, the session list): ids by age and place.

    def newest_id(self, table: str, *, not_kind: str | None = None) -> str | None:
        """The newest run, session (ids are ULIDs: they grow with time; `not_kind` leaves out runs of that kind) or grading."""
        if table == "gradings":
            row = self._one("SELECT id FROM gradings ORDER BY created_at DESC, id DESC LIMIT 1")
        elif table == "runs":
            row = self._one("SELECT id FROM runs WHERE kind IS NOT ? ORDER BY id DESC LIMIT 1", [not_kind])
        elif table == "sessions":
            row = self._one("SELECT s.id FROM sessions s JOIN runs r ON r.id = s.run_id WHERE r.kind IS NOT ? ORDER BY s.id DESC LIMIT 1", [not_kind])
        else:
            raise ValueError(table)
        return row[0] if row else None

    def neighbour_ids(self, table: str, id_: str) -> tuple[str | None, str | None]:
        """The ids just before and just after `id_` in the table, in id order."""
        if table not in ("runs", "sessions", "gradings"):
            raise ValueError(table)
        before = self._one(f"SELECT id FROM {table} WHERE id < ? ORDER BY id DESC LIMIT 1", [id_])
        after = self._one(f"SELECT id FROM {table} WHERE id > ? ORDER BY id LIMIT 1", [id_])
        return (before[0] if before else None, after[0] if after else None)

    def sessions_at(self, run_id: str, scenario: str, attempt: int | None = None) -> list[tuple[str, int]]:
        """(id, attempt) of the run's sessions of a scenario (of one attempt), by attempt."""
        sql, params = "SELECT id, attempt FROM sessions WHERE run_id = ? AND scenario = ?", [run_id, scenario]
        if attempt is not None:
            sql, params = sql + " AND attempt = ?", [*params, attempt]
        return [(r[0], r[1]) for r in self._all(sql + " ORDER BY attempt, id", params)]

    def run_scenarios(self, run_id: str) -> list[str]:
        return [r[0] for r in self._all("SELECT DISTINCT scenario FROM sessions WHERE run_id = ? ORDER BY scenario", [run_id])]

    def run_ids_of_kind(self, kind: str) -> set[str]:
        return {r[0] for r in self._all("SELECT id FROM runs WHERE kind = ?", [kind])}

    def newest_sessions(self, *, run_id: str | None = None, scenario: str | None = None, not_kind: str | None = None, limit: int | None = None) -> list[tuple[str, str]]:
        """(session id, its run's kind), newest first; `not_kind` leaves out runs of that kind."""
        where, params = _equal({"s.run_id": run_id, "s.scenario": scenario})
        if not_kind:
            where.append("r.kind IS NOT ?")
            params.append(not_kind)
        sql = "SELECT s.id, r.kind FROM sessions s JOIN runs r ON r.id = s.run_id" + _where(where) + " ORDER BY s.id DESC"
        if limit:
            sql, params = sql + " LIMIT ?", [*params, int(limit)]
        return [(r[0], r[1]) for r in self._all(sql, params)]

    def count_sessions(self, *, not_kind: str | None = None) -> int:
        row = self._one("SELECT COUNT(*) FROM sessions s JOIN runs r ON r.id = s.run_id WHERE r.kind IS NOT ?", [not_kind])
        return int(row[0]) if row else 0


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


class _DamageIsBadInput:
    """Store._damage_is_bad_input's context manager: a class, not a generator, because every
    read of a regrade or query enters it (a generator-based one cost ~1 µs a read)."""

    __slots__ = ("path",)

    def __init__(self, path: Path) -> None:
        self.path = path

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any) -> bool:
        if isinstance(exc, sqlite3.DatabaseError) and ("malformed" in str(exc) or "not a database" in str(exc)):
            raise bad_store(self.path, exc) from None
        return False


def _equal(filters: dict[str, Any]) -> tuple[list[str], list[Any]]:
    """`column = ?` conditions and their parameters for the filters given (None or "" filters nothing)."""
    given = {column: value for column, value in filters.items() if value}
    return [f"{column} = ?" for column in given], list(given.values())


def _where(conditions: list[str]) -> str:
    return " WHERE " + " AND ".join(conditions) if conditions else ""


# SessionRow's fields, in order, as `sessions` names them: every reader selects these and
# builds its rows positionally (a streaming reader makes one per session)
_SESSION_COLUMNS = "id, run_id, scenario, cell_id, attempt, harness, model, params, workdir, started_at, parent_session, source"
if tuple(SessionRow.__dataclass_fields__) != tuple(_SESSION_COLUMNS.split(", ")):
    raise TypeError("SessionRow's fields changed: update _SESSION_COLUMNS, which every SessionRow is built from")


def _session_row(r: Sequence[Any]) -> SessionRow:
    """A SessionRow from a row of `_SESSION_COLUMNS`."""
    i, run, scenario, cell, attempt, harness, model, params, workdir, started, parent, source = r
    return SessionRow(i, run, scenario, cell, attempt or 1, harness, model, loads(params), workdir, started, parent, source)
