"""Every query the read side runs: runs, sessions, actions, raw lines, blobs, gradings,
verdicts, judgments, outcomes. Rooms outside the store ask these methods, never the tables
(tests/test_layout.py refuses SQL composed anywhere else).

Reads fetch their rows at once under the store's lock: no statement of the shared connection
stays pending for another thread's transaction to trip over. Damage found past the pages
read at open is the user's message with the fix (benchtape.store.sqlite_io.DamageIsBadInput).
"""

from __future__ import annotations

import sqlite3
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import orjson

from benchtape.core.errors import BadInput
from benchtape.store.bundles import FOLDED_SOURCE, SESSION_FIELDS, Bundle, named_blobs
from benchtape.store.codecs import inflate_blob, inflate_raw, loads
from benchtape.store.migrations import REPRODUCTION, RUN_OF_SESSION, SHOWN_GRADING_OF_SESSION
from benchtape.store.sqlite_io import DamageIsBadInput

if TYPE_CHECKING:  # the domain model loads when actions are read or written, not with every store open
    from benchtape.core.model import Action, ActionRow, Session


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



class Reader:
    """The store's queries (a part of Store: it holds the connection, its lock and its path)."""

    path: Path
    conn: sqlite3.Connection
    lock: threading.RLock

    def _init_reader(self) -> None:
        self._spec_texts: dict[int, str] = {}  # _spec_text's

    def _rows(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[dict[str, Any]]:
        """Rows as dicts, fetched at once under the lock. Not sqlite-utils' `query()`: that wraps
        every read in a SAVEPOINT, which another thread's BEGIN/COMMIT on this shared connection
        releases under it ("no such savepoint") while live grading reads as sessions append."""
        with self.lock, self._damage_is_bad_input():
            cursor = self.conn.execute(sql, params)
            keys = [d[0] for d in cursor.description]
            return [dict(zip(keys, row)) for row in cursor.fetchall()]

    def _all(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
        """Every row at once, under the lock: no statement of this connection is left pending
        for another thread's transaction to trip over."""
        with self.lock, self._damage_is_bad_input():
            return self.conn.execute(sql, params).fetchall()

    def _one(self, sql: str, params: list[Any] | tuple[Any, ...] = ()) -> tuple[Any, ...] | None:
        with self.lock, self._damage_is_bad_input():
            row: tuple[Any, ...] | None = self.conn.execute(sql, params).fetchone()
            return row

    def _damage_is_bad_input(self) -> DamageIsBadInput:
        """Damage found past the pages read at open (a file cut short or overwritten in the
        middle) is the user's message with the fix, like damage found at open."""
        return DamageIsBadInput(self.path)

    def get_blob(self, sha: str) -> bytes | None:
        """The bytes stored under sha (readers that trust them verify the hash themselves)."""
        row = self._one("SELECT data, codec, size FROM blobs WHERE sha256 = ?", [sha])
        if row is None:
            return None
        data, codec, size = row
        return bytes(data) if codec is None else inflate_blob(bytes(data), codec, size, self.path, sha)


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
        from benchtape.core.model import actions_of

        return actions_of(self.action_rows(session_id, kinds))

    def action_rows(self, session_id: str, kinds: Iterable[str] | None = None, skip: Iterable[str] | None = None) -> list[ActionRow]:
        """The session's actions in order as rows, data decoded (only these `kinds` when given,
        and none of the `skip` ones: a reader that needs a few kinds does not decode the rest,
        nor SQLite hand over their rows). Every reader (grade, regrade, query) starts here."""
        sql, params = "SELECT seq, at, thread, kind, data FROM actions WHERE session_id = ?", [session_id]
        if kinds is not None:  # `+kind`: stay on the primary key, never the kind index
            wanted = sorted(set(kinds))
            sql += f" AND +kind IN ({','.join('?' * len(wanted))})"
            params.extend(wanted)
        if skip is not None:
            unwanted = sorted(set(skip))
            sql += f" AND +kind NOT IN ({','.join('?' * len(unwanted))})"
            params.extend(unwanted)
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

    def load_session(self, session_id: str, row: SessionRow | None = None, kinds: Iterable[str] | None = None, skip: Iterable[str] | None = None) -> Session:
        """The projection of a stored session, with its id and row facts filled in (pass the
        row when you already have it: a streaming reader saves a query per session). With
        `kinds`, the projection of only those actions: right only for the parts of a Session
        that depend on nothing else (see benchtape.replay.document.KINDS_FOR); with `skip`,
        of all but those (benchtape.core.model.BULK_KINDS says what that leaves right)."""
        from benchtape.core.model import project_rows

        session = project_rows(self.action_rows(session_id, kinds, skip))
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
            where.append(f"grading_id IN (SELECT grading_id FROM grading_runs WHERE run_id = {RUN_OF_SESSION.format(param='?')})")
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
        """The newest grading holding verdicts of this session that is not a positive control's
        reproduction: what `sessions`, `show`, reports, `query` and `compare` display (running
        `grade` changes none of them)."""
        return self._grading_for(session_id, "DESC")

    def latest_reproduction_for(self, session_id: str) -> str | None:
        """The newest positive control (`grade`) that reproduced this session's verdicts, if any:
        shown beside them as a marker, never as them."""
        row = self._one(
            f"SELECT gr.grading_id FROM grading_runs gr JOIN gradings g ON g.id = gr.grading_id WHERE gr.run_id = {RUN_OF_SESSION.format(param='?1')} "
            f"AND {REPRODUCTION} AND EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = gr.grading_id AND v.session_id = ?1) "
            "ORDER BY gr.created_at DESC, gr.grading_id DESC LIMIT 1",
            [session_id],
        )
        return row[0] if row else None

    def first_grading_for(self, session_id: str) -> str | None:
        """The grading the session was first graded with: the one recorded with its run (what
        the positive control reproduces by default)."""
        return self._grading_for(session_id, "ASC")

    def first_gradings(self, session_ids: Sequence[str]) -> dict[str, str]:
        """`first_grading_for` of many sessions in one query (a positive control over thousands
        of sessions asks it of each): session id → its first grading, for those graded at all."""
        if not session_ids:
            return {}
        first = SHOWN_GRADING_OF_SESSION.format(run="s.run_id", session="s.id", order="ASC")
        sql = f"SELECT s.id, ({first}) FROM sessions s WHERE s.id IN ({','.join('?' * len(session_ids))})"
        return {session_id: grading_id for session_id, grading_id in self._all(sql, list(session_ids)) if grading_id is not None}

    def _grading_for(self, session_id: str, order: str) -> str | None:
        row = self._one(SHOWN_GRADING_OF_SESSION.format(run=RUN_OF_SESSION.format(param="?1"), session="?1", order=order), [session_id])
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
            verdicts: list[list[Any]] = loads(parts[0][2])
            return verdicts
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
        if table == "gradings":  # the newest that holds verdicts: a regrade killed before its first batch wrote only its row, and `diff X latest` compared nothing
            row = self._one("SELECT g.id FROM gradings g WHERE EXISTS (SELECT 1 FROM verdict_sets v WHERE v.grading_id = g.id) ORDER BY g.created_at DESC, g.id DESC LIMIT 1")
        elif table == "runs":  # the newest run that holds sessions: a run refused before its first session is not what a user means by `latest`
            row = self._one("SELECT r.id FROM runs r WHERE r.kind IS NOT ? AND EXISTS (SELECT 1 FROM sessions s WHERE s.run_id = r.id) ORDER BY r.id DESC LIMIT 1", [not_kind])
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
        sql = "SELECT id, attempt FROM sessions WHERE run_id = ? AND scenario = ?"
        params: list[Any] = [run_id, scenario]
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

    def schema_version(self) -> int:
        """The schema this file is at (`PRAGMA user_version`)."""
        row = self._one("PRAGMA user_version")
        return int(row[0]) if row else 0

    # ------------------------------------------------------------ evaluations: cells, measurements, outcomes
    # What an evaluation run and `compare` ask: the sessions of cells (by identity, by run or by
    # evaluation), their steps and their outcomes.

    def cell_session_ids(self, run_id: str, cell_id: str, attempt: int) -> list[str]:
        """The run's sessions of one cell's attempt (a session per step), in id order."""
        return [r[0] for r in self._all("SELECT id FROM sessions WHERE run_id = ? AND cell_id = ? AND attempt = ? ORDER BY id", [run_id, cell_id, attempt])]

    def measurement_roots(self, cell_ids: Sequence[str], *, run_kind: str, evaluation: str) -> list[tuple[str, str, str, str, dict[str, Any]]]:
        """(session id, run id, cell id, scenario, params) of the first sessions (no parent) of
        these identities in runs of `run_kind` made by `evaluation`, in id order: one query per
        CHUNK identities, by the sessions_cell index."""
        out: list[tuple[str, str, str, str, dict[str, Any]]] = []
        for chunk in _chunks(list(cell_ids)):
            rows = self._all(
                f"SELECT s.id, s.run_id, s.cell_id, s.scenario, s.params FROM sessions s JOIN runs r ON r.id = s.run_id "
                f"WHERE s.cell_id IN ({_marks(chunk)}) AND s.parent_session IS NULL AND r.kind = ? AND json_extract(r.params, '$.evaluation') = ? ORDER BY s.id",
                [*chunk, run_kind, evaluation],
            )
            out.extend((sid, run_id, cell_id, scenario, loads(params) or {}) for sid, run_id, cell_id, scenario, params in rows)
        return out

    def later_steps(self, root_ids: Sequence[str]) -> list[tuple[str, str, dict[str, Any]]]:
        """(session id, its first step's id, params) of the later steps of these measurements, in id order."""
        out: list[tuple[str, str, dict[str, Any]]] = []
        for chunk in _chunks(list(root_ids)):
            rows = self._all(f"SELECT id, parent_session, params FROM sessions WHERE parent_session IN ({_marks(chunk)}) ORDER BY id", chunk)
            out.extend((sid, parent, loads(params) or {}) for sid, parent, params in rows)
        return out

    def cell_sessions(self, *, runs: Sequence[str] | None = None, run_kind: str | None = None, evaluation: str | None = None) -> list[tuple[Any, ...]]:
        """Every session of a cell in these runs, or in the runs of `run_kind` made by
        `evaluation`, in id order: (id, run_id, scenario, cell_id, attempt, model, params
        decoded, parent_session, started_at)."""
        where, params = _cells_where(runs, run_kind, evaluation)
        rows = self._all(
            "SELECT s.id, s.run_id, s.scenario, s.cell_id, s.attempt, s.model, s.params, s.parent_session, s.started_at "
            f"FROM sessions s JOIN runs r ON r.id = s.run_id WHERE {where} ORDER BY s.id",
            params,
        )
        return [(*r[:6], loads(r[6]) or {}, *r[7:]) for r in rows]

    def cell_actions(self, kinds: Sequence[str], *, runs: Sequence[str] | None = None, run_kind: str | None = None, evaluation: str | None = None) -> list[tuple[str, str, Any]]:
        """(session id, kind, data decoded) of these kinds' actions of the same sessions as
        cell_sessions, each session's in seq order."""
        where, params = _cells_where(runs, run_kind, evaluation)
        # CROSS JOIN fixes the loop order: the selected sessions first, then each one's actions by
        # the primary key's prefix (in seq order), so the cost grows with the cells asked for, not
        # with the store. (A partial index on these kinds would halve this read, but it doubles
        # the insert cost of every action on the recording hot path: measured, not worth it.)
        rows = self._all(
            f"SELECT a.session_id, a.kind, a.data FROM runs r CROSS JOIN sessions s ON r.id = s.run_id CROSS JOIN actions a ON a.session_id = s.id WHERE {where} AND a.kind IN ({_marks(kinds)})",
            [*params, *kinds],
        )
        decode = orjson.loads
        return [(sid, kind, decode(data)) for sid, kind, data in rows]

    def cell_run_params(self, *, runs: Sequence[str] | None = None, run_kind: str | None = None, evaluation: str | None = None) -> list[dict[str, Any]]:
        """The params (decoded) of each run holding the same sessions as cell_sessions, oldest
        run first. (Each run is asked whether it holds one: a DISTINCT over the joined
        sessions compared a run's params, which list every arm, once per cell.)"""
        where, params = _cells_where(runs, run_kind, evaluation)
        sql = f"SELECT r.params FROM runs r WHERE EXISTS (SELECT 1 FROM sessions s WHERE s.run_id = r.id AND {where}) ORDER BY r.started_at, r.id"
        return [loads(text) or {} for (text,) in self._all(sql, params)]

    def newest_run_of(self, run_kind: str, evaluation: str) -> dict[str, Any] | None:
        """The newest run of `run_kind` made by `evaluation`; None when the store holds none."""
        rows = self._rows("SELECT * FROM runs WHERE kind = ? AND json_extract(params, '$.evaluation') = ? ORDER BY started_at DESC LIMIT 1", [run_kind, evaluation])
        return _decode_run(rows[0]) if rows else None

    def outcomes(self, session_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
        """Session id → every outcome a grading decided for it, oldest first: each {outcome,
        reason, grading_id, at, **what the grading measured besides (cell_id, source, diff,
        cost_usd, steps)}. Read through the `cell_outcomes` view: the `outcomes` table and the
        `cell.outcome` actions older stores appended to the stream (each mapped to its grading;
        `action_seq` says where it is), legacy ones first: none is written after migration 16."""
        out: dict[str, list[dict[str, Any]]] = {}
        for chunk in _chunks(list(session_ids)):
            rows = self._all(
                f"SELECT session_id, grading_id, at, outcome, reason, data, action_seq FROM cell_outcomes WHERE session_id IN ({_marks(chunk)}) "
                "ORDER BY session_id, action_seq IS NULL, at, action_seq",
                chunk,
            )
            for sid, grading_id, at, outcome, reason, data, seq in rows:
                record = loads(data) or {}
                record.update(outcome=outcome, reason=reason, grading_id=grading_id, at=at)
                if seq is not None:
                    record["action_seq"] = seq
                out.setdefault(sid, []).append(record)
        return out

    def metric_values(self, session_ids: Sequence[str], grading_id: str | None = None) -> dict[str, dict[str, Any]]:
        """Session id → the declared metrics ({values, errors, grading_id}) its newest grading
        that measured any measured (or `grading_id`'s); sessions no grading measured are absent."""
        out: dict[str, dict[str, Any]] = {}
        for chunk in _chunks(list(session_ids)):
            where, params = (f"session_id IN ({_marks(chunk)})", list(chunk))
            if grading_id is not None:
                where, params = where + " AND grading_id = ?", params + [grading_id]
            for sid, gid, data in self._all(f"SELECT session_id, grading_id, data FROM metric_values WHERE {where} ORDER BY session_id, created_at, grading_id", params):
                out[sid] = {**(loads(data) or {}), "grading_id": gid}  # the newest wins
        return out

    def latest_outcomes(self, session_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Session id → the outcome its latest grading decided (what reuse, costs and compare read)."""
        return {sid: found[-1] for sid, found in self.outcomes(session_ids).items()}



    # ------------------------------------------------------------ the whole store (benchtape verify, migrate)
    # Reads of every row of a table: for the commands that check a store, never on a hot path.

    def page_check(self, *, quick: bool = False) -> list[str]:
        """SQLite's own check of every page (`PRAGMA integrity_check`; `quick`: quick_check,
        which skips comparing indexes with their tables): [] when it finds nothing. Damage
        that stops the check itself is looked for table by table, so each damaged one is named."""
        pragma = "quick_check" if quick else "integrity_check"
        try:
            return _check_lines(self._all(f"PRAGMA {pragma}"))
        except BadInput:
            pass
        found = []
        for (table,) in self._all("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
            try:
                with self.lock:
                    found += [f"table {table}: {line}" for line in _check_lines(self.conn.execute(f'PRAGMA {pragma}("{table}")').fetchall())]
            except sqlite3.DatabaseError as exc:
                found.append(f"table {table} cannot be read ({exc})")
        return found

    def page_count(self) -> int:
        row = self._one("PRAGMA page_count")
        return int(row[0]) if row else 0

    def iter_blob_rows(self, batch: int = 64) -> Iterator[tuple[str, int, str | None, bytes]]:
        """Every blob as stored (sha256, size, codec, data), in sha256 order, a few at a time
        (a blob may be megabytes: memory stays bounded by the page)."""
        last = ""
        while True:
            page = self._all("SELECT sha256, size, codec, data FROM blobs WHERE sha256 > ? ORDER BY sha256 LIMIT ?", [last, batch])
            yield from ((sha, size, codec, bytes(data)) for sha, size, codec, data in page)
            if len(page) < batch:
                return
            last = page[-1][0]

    def raw_session_ids(self) -> list[str]:
        """Every session that has raw lines stored, in id order."""
        return [r[0] for r in self._all("SELECT DISTINCT session_id FROM raw ORDER BY session_id")]

    def raw_chunk_rows(self, session_id: str) -> list[tuple[int, int, int, bytes]]:
        """The session's raw chunks as stored (line_no, lines, fresh, data), in order."""
        return [(n, lines, fresh, bytes(data)) for n, lines, fresh, data in self._all("SELECT line_no, lines, fresh, data FROM raw WHERE session_id = ? ORDER BY line_no", [session_id])]

    def spec_rows(self) -> list[tuple[int, str, str]]:
        """Every stored check spec: (id, sha256, spec JSON text)."""
        return [(i, sha, spec) for i, sha, spec in self._all("SELECT id, sha256, spec FROM specs ORDER BY id")]

    def dangling_references(self, missing: Iterable[str] = ()) -> list[tuple[str, str, str]]:
        """Rows naming a run, session, grading or spec the store does not hold, as (table, the
        row's key, what it names): each a finding of `benchtape verify`. The references a
        `missing` table would answer are not looked at (its absence is the finding)."""
        gone = set(missing)
        out: list[tuple[str, str, str]] = []
        for table, reads, sql in _DANGLING:
            if not gone.intersection(reads):
                out.extend((table, str(key), str(what)) for key, what in self._all(sql))
        return out

    # ------------------------------------------------------------ bundles (benchtape.store.bundles)
    def bundle_blob_names(self, session_ids: Sequence[str]) -> list[str]:
        """The blobs these sessions' actions name that this store holds (what a bundle of them carries)."""
        return self._held_blobs(named_blobs(self._action_json(session_ids)))

    def export_bundle(self, session_ids: Sequence[str], *, run_id: str, key: dict[str, Any], token: str, have: Iterable[str] = (), facts: dict[str, Any] | None = None) -> Bundle:
        """These sessions (one attempt: a session per step) as a bundle to fold into the run
        `run_id` of another store: their rows, actions and raw chunks as stored, and the blobs
        their actions name, less `have` (the ones the other store holds already)."""
        ids = list(session_ids)
        names = self._held_blobs(named_blobs(self._action_json(ids)))
        skip = set(have)
        bundle = Bundle(run_id=run_id, key=dict(key), token=token, blob_names=names, facts=dict(facts or {}))
        for page in _chunks(ids):
            marks = _marks(page)
            for row in self._all(f"SELECT {', '.join(SESSION_FIELDS)} FROM sessions WHERE id IN ({marks}) ORDER BY started_at, id", page):
                bundle.sessions.append(dict(zip(SESSION_FIELDS, row)))
            bundle.actions += [(sid, seq, at, thread, kind, data if isinstance(data, bytes) else data.encode()) for sid, seq, at, thread, kind, data in self._all(f"SELECT session_id, seq, at, thread, kind, data FROM actions WHERE session_id IN ({marks}) ORDER BY session_id, seq", page)]
            bundle.raw += [(sid, n, lines, fresh, bytes(data)) for sid, n, lines, fresh, data in self._all(f"SELECT session_id, line_no, lines, fresh, data FROM raw WHERE session_id IN ({marks}) ORDER BY session_id, line_no", page)]
        wanted = [n for n in names if n not in skip]
        for page in _chunks(wanted):
            bundle.blobs += [(sha, size, codec, bytes(data)) for sha, size, codec, data in self._all(f"SELECT sha256, size, codec, data FROM blobs WHERE sha256 IN ({_marks(page)}) ORDER BY sha256", page)]
        return bundle

    def held_sessions(self, session_ids: Sequence[str]) -> set[str]:
        """Which of these sessions this store holds."""
        held: set[str] = set()
        for page in _chunks(list(session_ids)):
            held.update(r[0] for r in self._all(f"SELECT id FROM sessions WHERE id IN ({_marks(page)})", page))
        return held

    def held_blobs(self, shas: Iterable[str]) -> set[str]:
        """Which of these blobs this store holds."""
        return set(self._held_blobs(list(shas)))

    def folded_attempt(self, run_id: str, key: dict[str, Any]) -> str | None:
        """The first session of a bundle already folded into the run at this place (scenario,
        cell id, attempt), if any: a second bundle of the same place adds nothing."""
        row = self._one(
            "SELECT id FROM sessions WHERE run_id = ? AND scenario = ? AND cell_id IS ? AND attempt = ? AND parent_session IS NULL AND source LIKE ? ORDER BY started_at, id LIMIT 1",
            [run_id, key["scenario"], key.get("cell_id"), key["attempt"], FOLDED_SOURCE + "%"],
        )
        return row[0] if row else None

    def _action_json(self, session_ids: Sequence[str]) -> list[bytes]:
        out: list[bytes] = []
        for page in _chunks(list(session_ids)):
            out += [d if isinstance(d, bytes) else d.encode() for (d,) in self._all(f"SELECT data FROM actions WHERE session_id IN ({_marks(page)}) ORDER BY session_id, seq", page)]
        return out

    def _held_blobs(self, shas: list[str]) -> list[str]:
        held: set[str] = set()
        for page in _chunks(shas):
            held.update(r[0] for r in self._all(f"SELECT sha256 FROM blobs WHERE sha256 IN ({_marks(page)})", page))
        return [s for s in shas if s in held]

    # ------------------------------------------------------------ judgments
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
        row = self._one(
            "SELECT COUNT(*), SUM(input_tokens), SUM(output_tokens), SUM(cost_usd), SUM(cost_usd IS NULL) FROM judgments WHERE grading_id = ?",
            [grading_id],
        )
        count, tin, tout, cost, unpriced = row or (0, None, None, None, None)
        return {"requests": count, "input_tokens": tin or 0, "output_tokens": tout or 0, "cost_usd": None if unpriced else (cost or 0.0)}


def _check_lines(rows: Iterable[tuple[Any, ...]]) -> list[str]:
    """An integrity check's rows as one line each ([] for its lone "ok")."""
    lines = [" ".join(part for part in str(r[0]).split("\n") if not part.startswith("*** in database")) for r in rows]
    return [] if lines == ["ok"] else lines


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



# Per table: the tables a query reads, and the rows whose reference names nothing the store
# holds, as (the row's key, what it names). Verdicts name their session and grading, each
# verdict its spec (by id, in its set).
_DANGLING = (
    ("sessions", ("runs", "sessions"), "SELECT s.id, 'run ' || s.run_id FROM sessions s WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = s.run_id)"),
    ("actions", ("actions", "sessions"), "SELECT a.session_id, 'session ' || a.session_id FROM actions a WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = a.session_id) GROUP BY a.session_id"),
    ("raw", ("raw", "sessions"), "SELECT r.session_id, 'session ' || r.session_id FROM raw r WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = r.session_id) GROUP BY r.session_id"),
    ("verdict_sets", ("gradings", "verdict_sets"), "SELECT v.grading_id || '/' || v.session_id, 'grading ' || v.grading_id FROM verdict_sets v WHERE NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = v.grading_id)"),
    ("verdict_sets", ("sessions", "verdict_sets"), "SELECT v.grading_id || '/' || v.session_id, 'session ' || v.session_id FROM verdict_sets v WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = v.session_id)"),
    ("verdict_sets", ("specs", "verdict_sets"), "SELECT v.grading_id || '/' || v.session_id || ' ' || (j.value ->> 0), 'spec ' || (j.value ->> 3) FROM verdict_sets v, json_each(v.verdicts) j WHERE NOT EXISTS (SELECT 1 FROM specs p WHERE p.id = j.value ->> 3)"),
    ("grading_runs", ("grading_runs", "gradings"), "SELECT gr.run_id || '/' || gr.grading_id, 'grading ' || gr.grading_id FROM grading_runs gr WHERE NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = gr.grading_id)"),
    ("grading_scenarios", ("grading_scenarios", "gradings"), "SELECT c.grading_id || '/' || c.scenario, 'grading ' || c.grading_id FROM grading_scenarios c WHERE NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = c.grading_id)"),
    ("generated_vars", ("generated_vars", "runs"), "SELECT v.run_id || '/' || v.scenario, 'run ' || v.run_id FROM generated_vars v WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = v.run_id)"),
    ("outcomes", ("gradings", "outcomes"), "SELECT COALESCE(o.grading_id, '-') || '/' || o.session_id, 'grading ' || o.grading_id FROM outcomes o WHERE o.grading_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = o.grading_id)"),
    ("outcomes", ("outcomes", "sessions"), "SELECT COALESCE(o.grading_id, '-') || '/' || o.session_id, 'session ' || o.session_id FROM outcomes o WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = o.session_id)"),
    ("metric_values", ("gradings", "metric_values"), "SELECT m.grading_id || '/' || m.session_id, 'grading ' || m.grading_id FROM metric_values m WHERE NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = m.grading_id)"),
    ("metric_values", ("metric_values", "sessions"), "SELECT m.grading_id || '/' || m.session_id, 'session ' || m.session_id FROM metric_values m WHERE NOT EXISTS (SELECT 1 FROM sessions s WHERE s.id = m.session_id)"),
    ("judgments", ("gradings", "judgments"), "SELECT j.id, 'grading ' || j.grading_id FROM judgments j WHERE j.grading_id IS NOT NULL AND NOT EXISTS (SELECT 1 FROM gradings g WHERE g.id = j.grading_id)"),
)
CHUNK = 500  # ids in one IN (...) list: well inside SQLite's bound on parameters


def _chunks(items: list[str]) -> Iterator[list[str]]:
    for i in range(0, len(items), CHUNK):
        yield items[i : i + CHUNK]


def _marks(items: Sequence[Any]) -> str:
    return ",".join("?" * len(items))


def _cells_where(runs: Sequence[str] | None, run_kind: str | None, evaluation: str | None) -> tuple[str, list[Any]]:
    """The condition on `sessions s JOIN runs r` naming the sessions of cells in these runs, or
    in the runs of `run_kind` made by `evaluation`."""
    if runs:
        return f"s.cell_id IS NOT NULL AND s.run_id IN ({_marks(runs)})", list(runs)
    if run_kind is None or evaluation is None:
        raise ValueError("name the runs, or the run kind and the evaluation")
    return "s.cell_id IS NOT NULL AND r.kind = ? AND json_extract(r.params, '$.evaluation') = ?", [run_kind, evaluation]


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
