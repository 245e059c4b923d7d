"""Append-only holds for every connection: a plain sqlite3 connection (recursive_triggers off, the
default, under which a REPLACE deletes without firing DELETE triggers) can neither UPDATE,
DELETE, REPLACE nor UPSERT a row of any history table."""

from __future__ import annotations

import sqlite3

import pytest
from importkit import lines_failing_at

from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import Store

HISTORY = ("runs", "sessions", "actions", "raw", "blobs", "gradings", "verdict_sets", "specs", "grading_scenarios", "generated_vars", "outcomes")
CONTENT_ADDRESSED = {"blobs": "data", "specs": "spec"}  # the same content again is skipped, other content refused


@pytest.fixture()
def db(tmp_path):
    path = tmp_path / "h.db"
    store = Store(path)
    run = store.new_run("run")
    sid = store.new_session(run, "sc")
    store.append_line(sid, 1, '{"type": "text"}', [Action("message.user", {"text": "hi"})])
    store.put_blob(b"snapshot")
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")
    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "h", "result": Result.of(True)}])
    store.add_grading_scenarios(gid, {"sc": {"vars": {}}})
    store.add_generated_vars(run, {"sc": {"ANSWER": "42"}})
    store.add_outcome(gid, sid, "passed", "1 check(s) passed", {"cost_usd": None})
    store.close()
    return path


def plain(path) -> sqlite3.Connection:
    conn = sqlite3.connect(path, isolation_level=None)
    assert conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 0
    return conn


def dump(conn: sqlite3.Connection) -> dict[str, list[tuple]]:
    return {t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in HISTORY}


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [r[1] for r in conn.execute(f"PRAGMA table_info({table})")]


def rewrites(conn: sqlite3.Connection, table: str) -> list[str]:
    """Every statement that would change an existing row of `table`."""
    cols = columns(conn, table)
    first = cols[-1] if table not in CONTENT_ADDRESSED else CONTENT_ADDRESSED[table]
    changed = ", ".join("'other'" if c == first else c for c in cols)
    out = [
        f"UPDATE {table} SET {cols[-1]} = {cols[-1]}",
        f"DELETE FROM {table}",
        f"INSERT OR REPLACE INTO {table} SELECT {changed} FROM {table} LIMIT 1",
        f"REPLACE INTO {table} SELECT {changed} FROM {table} LIMIT 1",
        f"INSERT INTO {table} SELECT {changed} FROM {table} WHERE true LIMIT 1 ON CONFLICT DO UPDATE SET {first} = excluded.{first}",
        f"INSERT INTO {table} SELECT {changed} FROM {table} WHERE true LIMIT 1 ON CONFLICT DO NOTHING",
    ]
    if table in ("runs", "sessions", "gradings", "blobs", "specs", "verdict_sets", "outcomes"):  # rowid tables: a REPLACE may also meet a row by rowid
        key = "sha256" if table == "specs" else cols[0]  # specs.id is the rowid itself
        fresh = ", ".join("'a-new-key'" if c == key else c for c in cols)
        out.append(f"INSERT OR REPLACE INTO {table} (rowid, {', '.join(cols)}) SELECT rowid, {fresh} FROM {table} LIMIT 1")
    return out


@pytest.mark.parametrize("table", HISTORY)
def test_no_connection_can_rewrite_history(db, table):
    conn = plain(db)
    before = dump(conn)
    for sql in rewrites(conn, table):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    assert dump(conn) == before


def test_the_verdicts_view_refuses_every_write(db):
    conn = plain(db)
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("UPDATE verdicts SET status = 'FAIL'")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("DELETE FROM verdicts")
    with pytest.raises(sqlite3.OperationalError, match="view"):
        conn.execute("INSERT OR REPLACE INTO verdicts SELECT * FROM verdicts")
    assert conn.execute("SELECT status, spec FROM verdicts").fetchall() == [("PASS", '{"type":"contains","value":"x"}')]


def test_content_addressed_rows_are_stored_once_and_never_swapped(db):
    store = Store(db)
    assert store.put_blob(b"snapshot") == store.put_blob(b"snapshot")
    conn = plain(db)
    assert conn.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1
    conn.execute("INSERT OR REPLACE INTO blobs SELECT * FROM blobs")  # the very same row: skipped, not an error
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        conn.execute("INSERT OR REPLACE INTO blobs (sha256, size, data) SELECT sha256, 5, x'00' FROM blobs")
    assert store.get_blob(conn.execute("SELECT sha256 FROM blobs").fetchone()[0]) == b"snapshot"


def test_appends_still_work_and_a_duplicate_seq_is_refused(db):
    store = Store(db)
    sid = store.session_rows().__next__().id
    assert store.append(sid, [Action("thinking", {"text": "more"})]) == 2
    with pytest.raises(sqlite3.IntegrityError):
        store.append(sid, [Action("thinking", {"text": "again"})], at_seq=1)
    assert [a.kind for a in store.actions(sid)] == ["message.user", "thinking"]


def test_grading_runs_follow_the_verdicts_and_refuse_every_change(db):
    """The one row per (run, grading) that readers starting from a session use: written with
    the verdicts, the same pair again skipped, never updated or deleted; a session's gradings
    are its run's gradings that hold a set of it."""
    store = Store(db)
    sid = store.session_rows().__next__().id
    run_id = store.session_row(sid).run_id
    gid = store.gradings()[0]["id"]
    later = store.new_grading("regrade", checkset_sha256="x", catalog_version="1")
    other = store.new_grading("regrade", checkset_sha256="y", catalog_version="1")  # holds another run's session only
    store.add_verdicts(later, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "h", "result": Result.of(False)}])
    store.add_verdicts(later, sid, [{"check_path": "checks[1]", "type": "contains", "spec": {"type": "contains", "value": "y"}, "spec_sha256": "h2", "result": Result.of(True)}])
    store.add_verdicts(other, "no-such-session", [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "h", "result": Result.of(True)}])
    conn = plain(db)
    pairs = sorted(conn.execute("SELECT run_id, grading_id FROM grading_runs").fetchall())
    assert pairs == sorted([(run_id, gid), (run_id, later), ("", other)])
    assert conn.execute("SELECT created_at FROM grading_runs WHERE grading_id = ?", (later,)).fetchone()[0] == store.grading(later)["created_at"]
    assert store.latest_grading_for(sid) == later and store.first_grading_for(sid) == gid
    assert store.first_gradings([sid, "no-such-session"]) == {sid: gid}
    assert store.latest_grading_for("no-such-session") == other
    assert [v["check_path"] for v in store.verdicts(session_id=sid)] == ["checks[0]", "checks[0]", "checks[1]"]
    assert store.sessions_per_grading() == {gid: 1, later: 1, other: 1}
    assert store.first_gradings([sid]) == {sid: gid}
    # a newer grading of the same run that holds only a sibling: the walk passes it by
    sibling = store.new_session(run_id, "sc")
    newest = store.new_grading("regrade", checkset_sha256="z", catalog_version="1")
    store.add_verdicts(newest, sibling, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains", "value": "x"}, "spec_sha256": "h", "result": Result.of(True)}])
    assert store.latest_grading_for(sid) == later and store.latest_grading_for(sibling) == newest == store.first_grading_for(sibling)
    summary = {r["session_id"]: r["grading_id"] for r in store.db.query("SELECT * FROM session_summary")}
    assert summary == {sid: later, sibling: newest}
    pairs.append((run_id, newest))
    pairs.sort()
    conn.execute("INSERT INTO grading_runs VALUES (?, ?, ?)", (run_id, store.grading(gid)["created_at"], gid))  # the same row: skipped
    for sql in ("UPDATE grading_runs SET grading_id = grading_id", "DELETE FROM grading_runs"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    assert sorted(conn.execute("SELECT run_id, grading_id FROM grading_runs").fetchall()) == pairs


def triggers(conn: sqlite3.Connection) -> list[tuple]:
    return conn.execute("SELECT name, tbl_name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name").fetchall()


def transcript(tmp_path, lines: int = 400):
    f = tmp_path / "exec.jsonl"
    f.write_text("".join(f'{{"type": "item.completed", "item": {{"id": "i{i}", "type": "agent_message", "text": "hi"}}}}\n' for i in range(lines)))
    return f


def test_an_import_lifts_the_row_guards_only_inside_its_own_write_transaction(db, tmp_path, monkeypatch):
    """An import drops the per-row no-rewrite triggers of actions and raw after its BEGIN
    IMMEDIATE and makes them again before its COMMIT: meanwhile no other connection can write,
    and every other connection still reads a schema with them; afterwards they are exactly as
    they were, and a REPLACE is refused as before."""
    from benchtape.adapters import transcripts
    from benchtape.recorder.importer import import_files

    before = triggers(plain(db))
    assert {"actions_no_rewrite", "raw_no_rewrite"} <= {name for name, _, _ in before}
    seen: dict[str, object] = {}
    real = transcripts.Transcript.lines

    def watched(self):
        for n, item in enumerate(real(self)):
            if n == 200:  # mid-import, the transaction open
                other = sqlite3.connect(db, isolation_level=None, timeout=0)
                seen["schema"] = triggers(other)
                try:
                    other.execute("BEGIN IMMEDIATE")
                    seen["write"] = "began"
                except sqlite3.OperationalError as exc:
                    seen["write"] = str(exc)
                other.close()
            yield item

    store = Store(db)
    with monkeypatch.context() as m:
        m.setattr(transcripts.Transcript, "lines", watched)
        [r] = import_files(store, "codex", [transcript(tmp_path)])
    assert seen == {"schema": before, "write": "database is locked"}
    assert triggers(plain(db)) == before
    conn = plain(db)
    for sql in rewrites(conn, "actions") + rewrites(conn, "raw"):
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            conn.execute(sql)
    assert len(store.raw_lines(r.session_id)) == 400


def test_a_failed_import_leaves_the_row_guards_as_they_were(db, tmp_path, monkeypatch):
    from benchtape.adapters import transcripts
    from benchtape.recorder.importer import import_files

    before = triggers(plain(db))
    store = Store(db)
    with monkeypatch.context() as m:
        m.setattr(transcripts.Transcript, "lines", lines_failing_at(300))
        with pytest.raises(OSError):
            import_files(store, "codex", [transcript(tmp_path)])
    assert triggers(store.db.conn) == triggers(plain(db)) == before


def test_a_bulk_transaction_joined_from_outside_keeps_the_row_guards(db):
    """Only the call that begins the transaction lifts them (and so is the one that commits or
    rolls back): an outer transaction that caught an error and committed anyway could otherwise
    commit a schema without them."""
    store = Store(db)
    before = triggers(store.db.conn)
    with store.transaction():
        with store.transaction(bulk=True):
            assert triggers(store.db.conn) == before
    with store.transaction(bulk=True):
        assert not {"actions_no_rewrite", "raw_no_rewrite"} & {name for name, _, _ in triggers(store.db.conn)}
    assert triggers(store.db.conn) == before
