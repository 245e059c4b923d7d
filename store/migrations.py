"""The store's schema: numbered migrations applied in order, the last applied recorded in
`PRAGMA user_version`. Never edit an old one (a store in the wild ran it as it was): add the
next. Every history table gets triggers that refuse UPDATE, DELETE and any INSERT that would
replace a row, for every program that opens the file.

Migrations run inside one exclusive transaction that re-reads the version once it holds the
lock, so processes opening a new or old store at the same moment migrate it exactly once.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Sequence

from benchtape.core.errors import BadInput
from benchtape.store.codecs import RAW_CHUNK_BYTES, RawStream
from benchtape.store.sqlite_io import begin

if TYPE_CHECKING:  # the steps take it; it is imported when a step runs (store/sqlite_utils_db.py)
    import sqlite_utils


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
    import hashlib  # a migration's step: not every open's start-up

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
    session: str | None = None
    stream, size = RawStream(), 0
    batch: list[tuple[int, str]] = []
    for session_id, line_no, text in _iter_old_raw(conn):
        if session_id != session or size >= RAW_CHUNK_BYTES:
            if batch:
                assert session is not None  # a batch holds lines of the session read before them
                conn.executemany(insert, stream.rows(session, batch))
            if session_id != session:
                stream = RawStream()
            session, batch, size = session_id, [], 0
        batch.append((line_no, text))
        size += len(text)
    if batch:
        assert session is not None  # a batch holds lines of the session read before them
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
GRADING_OF_SESSION = (
    "SELECT gr.grading_id FROM grading_runs gr WHERE gr.run_id = {run} "
    "AND EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = gr.grading_id AND v.session_id = {session}) "
    "ORDER BY gr.created_at {order}, gr.grading_id {order} LIMIT 1"
)
_LATEST_BY_GRADING_RUNS = GRADING_OF_SESSION.format(run="s.run_id", session="s.id", order="DESC")
# What a user is shown of a session (sessions, show, report, query, compare, the viewer): the
# newest grading that is not a positive control's reproduction. `grade` records its grading (a
# `control` grading whose note names what it reproduces) beside the verdicts it checked; it never
# replaces them, so running the control changes nothing on display. The negative control's run
# is graded `control` too, with no such note: its sessions show that grading.
REPRODUCTION = "g.source = 'control' AND g.note LIKE 'grade: reproduces %'"
SHOWN_GRADING_OF_SESSION = (
    "SELECT gr.grading_id FROM grading_runs gr WHERE gr.run_id = {run} "
    "AND EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = gr.grading_id AND v.session_id = {session}) "
    f"AND NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = gr.grading_id AND {REPRODUCTION}) "
    "ORDER BY gr.created_at {order}, gr.grading_id {order} LIMIT 1"
)
# The run a session id (the parameter `{param}`) is filed under in grading_runs.
RUN_OF_SESSION = "COALESCE((SELECT run_id FROM sessions WHERE id = {param}), '')"


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


# The legacy action kind an evaluation's grading appended to a session's stream before
# outcomes had their table (read as outcomes, never written again).
LEGACY_OUTCOME = "cell.outcome"
# A legacy outcome action's grading: the `grading_id` it carries (JSON null: an execution
# failure, decided before any check ran, so no grading); when it carries none, the newest
# grading created before the action (`at`) holding verdicts of its session or of a later
# step of its measurement (a workflow's steps are sessions whose parent is the first).
_LEGACY_GRADING = """CASE json_type(a.data, '$.grading_id')
            WHEN 'text' THEN a.data ->> '$.grading_id'
            WHEN 'null' THEN NULL
            ELSE (SELECT gr.grading_id FROM sessions s JOIN grading_runs gr ON gr.run_id = s.run_id
                  WHERE s.id = a.session_id AND gr.created_at <= a.at
                    AND EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = gr.grading_id
                                AND (v.session_id = a.session_id OR v.session_id IN (SELECT c.id FROM sessions c WHERE c.parent_session = a.session_id)))
                  ORDER BY gr.created_at DESC, gr.grading_id DESC LIMIT 1)
        END"""


def _m16_outcomes(db: sqlite_utils.Database) -> None:
    """A cell's outcome belongs to the grading that decided it, as its verdicts do: one row per
    (grading, session) in `outcomes`, append-only, instead of a `cell.outcome` action appended
    to the session's recorded stream at every grading (which made history grow with each
    regrade, and the session's document change). `grading_id` is NULL for an execution failure
    (timeout, adapter or infrastructure error), which is decided before any check runs; `data`
    holds what the grading measured besides the outcome (cell_id, source, diff, cost_usd, steps).

    History is not rewritten: the `cell.outcome` actions of older stores stay in their streams
    and read as outcomes through the `cell_outcomes` view (each mapped to its grading, see
    _LEGACY_GRADING), found by a partial index that holds only those actions (no action of the
    recording hot path enters it: the kind is never written again)."""
    db.executescript(
        f"""
        CREATE TABLE outcomes (
            grading_id TEXT REFERENCES gradings(id), session_id TEXT NOT NULL, created_at REAL NOT NULL,
            outcome TEXT NOT NULL, reason TEXT NOT NULL, data TEXT NOT NULL
        );
        CREATE INDEX outcomes_session ON outcomes(session_id, created_at);
        CREATE INDEX actions_cell_outcome ON actions(session_id) WHERE kind = '{LEGACY_OUTCOME}';
        CREATE VIEW cell_outcomes AS
            SELECT o.grading_id AS grading_id, o.session_id AS session_id, o.created_at AS at, o.outcome AS outcome,
                   o.reason AS reason, o.data AS data, NULL AS action_seq
            FROM outcomes o
            UNION ALL
            SELECT {_LEGACY_GRADING}, a.session_id, a.at, a.data ->> '$.outcome', a.data ->> '$.reason', a.data, a.seq
            FROM actions a INDEXED BY actions_cell_outcome WHERE a.kind = '{LEGACY_OUTCOME}';
        CREATE TRIGGER outcomes_no_rewrite BEFORE INSERT ON outcomes
        WHEN EXISTS (SELECT 1 FROM outcomes WHERE (session_id = NEW.session_id AND grading_id IS NEW.grading_id) OR rowid = NEW.rowid)
        BEGIN SELECT RAISE(ABORT, 'outcomes is append-only: a grading decides a session''s outcome once'); END;
        """
    )
    db.executescript(append_only("outcomes"))


def _m17_metric_values(db: sqlite_utils.Database) -> None:
    """The bench's declared metrics (`metrics:`, `derivedMetrics:`) as a grading measured them
    for a session: one row per (grading, session), append-only, beside its verdicts and never
    in the session's recorded stream (a regrade with another `metrics:` block measures again).
    `data` is {values: {name: number or null}, errors: {name: why}}."""
    db.executescript(
        """
        CREATE TABLE metric_values (
            grading_id TEXT NOT NULL REFERENCES gradings(id), session_id TEXT NOT NULL,
            created_at REAL NOT NULL, data TEXT NOT NULL,
            PRIMARY KEY (grading_id, session_id)
        );
        CREATE INDEX metric_values_session ON metric_values(session_id, created_at);
        """
    )
    db.executescript(no_rewrite("metric_values", ("grading_id", "session_id"), rowid=True))
    db.executescript(append_only("metric_values"))


def _m18_shown_grading(db: sqlite_utils.Database) -> None:
    """session_summary shows the grading a user is shown (SHOWN_GRADING_OF_SESSION): a positive
    control's reproduction no longer becomes a session's verdicts there. A view, so nothing
    recorded changes."""
    latest = SHOWN_GRADING_OF_SESSION.format(run="s.run_id", session="s.id", order="DESC")
    db.executescript("DROP VIEW session_summary;")
    db.executescript(SESSION_SUMMARY.format(latest=latest, counts=summary_counts(_COUNT_SETS)))


def _m19_call_actions(db: sqlite_utils.Database) -> None:
    """The calls view shows each call's canonical action (benchtape.core.canonical), the files it
    touched and the command it ran. A view, so nothing recorded changes: a call recorded before
    calls carried them shows NULL here, and `benchtape query` (the read side) derives them."""
    db.executescript(
        """
        DROP VIEW calls;
        CREATE VIEW calls AS
            SELECT c.session_id AS session_id, c.thread AS thread, c.seq AS seq,
                   json_extract(c.data, '$.call_id') AS call_id,
                   json_extract(c.data, '$.tool') AS tool,
                   json_extract(c.data, '$.action') AS action,
                   CASE WHEN json_type(c.data, '$.files') = 'array'
                        THEN (SELECT json_group_array(json_extract(f.value, '$.path')) FROM json_each(c.data, '$.files') f)
                        WHEN json_type(c.data, '$.action') IS NOT NULL THEN json_array() END AS paths,
                   json_extract(c.data, '$.files') AS files,
                   json_extract(c.data, '$.command') AS command,
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
    _m16_outcomes,
    _m17_metric_values,
    _m18_shown_grading,
    _m19_call_actions,
]


def schema_version(conn: sqlite3.Connection) -> int:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    return version


def migrate(conn: sqlite3.Connection, path: Path | None = None, check: Callable[[sqlite3.Connection, int], None] | None = None) -> int:
    """Bring the store to the current schema: every migration after PRAGMA user_version, all in
    one exclusive transaction that re-reads the version once it holds the lock, so processes
    opening a new or old store at the same moment migrate it exactly once.

    `check(conn, version)` (benchtape.store.integrity) is called with the schema as found (an
    older store's is checked before any step runs on it) and as left: raising, it rolls the
    migration back whole. sqlite-utils is imported only when a step runs."""
    if schema_version(conn) == len(MIGRATIONS):
        if check is not None:
            check(conn, len(MIGRATIONS))
        return len(MIGRATIONS)
    begin(conn, "BEGIN EXCLUSIVE")
    try:
        current = schema_version(conn)
        check_version(conn, current, path, readonly=False)
        if check is not None and current:
            check(conn, current)
        if current < len(MIGRATIONS):
            from benchtape.store.sqlite_utils_db import Database

            db = Database(conn)
            for number, step in enumerate(MIGRATIONS, start=1):
                if number > current:
                    step(db)
        conn.execute(f"PRAGMA user_version = {len(MIGRATIONS)}")
        if check is not None:
            check(conn, len(MIGRATIONS))
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return len(MIGRATIONS)


def check_version(conn: sqlite3.Connection, version: int, path: Path | None, *, readonly: bool) -> None:
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

