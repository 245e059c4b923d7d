"""The event store: append-only history, migrations, the calls view, blobs."""

from __future__ import annotations

import hashlib
import os
import sqlite3

import orjson
import pytest

from benchtape.core.errors import BadInput
from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import MIGRATIONS, PAGE_SIZE, Store


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "bt.db")
    yield s
    s.close()


def _session(store: Store) -> str:
    run = store.new_run("run", bench_path="b.yaml")
    return store.new_session(run, "sc")


def test_schema_version_and_wal(store):
    assert store.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.db.execute("PRAGMA page_size").fetchone()[0] == PAGE_SIZE  # a new store's pages (smaller than SQLite's 4 KiB)


def test_reopen_does_not_migrate_twice(tmp_path):
    Store(tmp_path / "a.db").close()
    s = Store(tmp_path / "a.db")
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)


COLUMN = {
    "actions": "kind",
    "raw": "data",
    "gradings": "source",
    "verdicts": "status",  # a view over verdict_sets + specs: its INSTEAD OF triggers refuse too
    "verdict_sets": "verdicts",
    "specs": "spec",
    "grading_scenarios": "context",
    "generated_vars": "vars",
    "runs": "kind",
    "sessions": "scenario",
    "blobs": "data",
    "judgments": "reply",
}


@pytest.mark.parametrize("table", sorted(COLUMN))
def test_history_tables_refuse_update_and_delete(store, table):
    sid = _session(store)
    store.append(sid, [Action("message.user", {"text": "hi"})])
    store.append_raw(sid, [(1, "line")])
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")
    from benchtape.core.results import Result

    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "contains", "spec": {"type": "contains"}, "spec_sha256": "h", "result": Result.of(True)}])
    store.add_grading_scenarios(gid, {"sc": {"vars": {}}})
    store.add_generated_vars(store.session_row(sid).run_id, {"sc": {"ANSWER": "42"}})
    store.put_blob(b"snapshot")
    store.add_judgment({"grading_id": gid, "session_id": sid, "provider": "p", "transport": "openai", "model": "m", "params": {}, "request_sha256": "r", "prompt_sha256": "p", "prompt": "q", "reply": "a"})
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute(f"UPDATE {table} SET {COLUMN[table]} = {COLUMN[table]}")
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        store.db.execute(f"DELETE FROM {table}")


def test_append_assigns_increasing_seq_across_calls(store):
    sid = _session(store)
    assert store.append(sid, [Action("message.user", {"text": "a"}), Action("thinking", {"text": "b"})]) == 2
    assert store.append(sid, [Action("message.assistant", {"text": "c"})]) == 3
    assert [a.seq for a in store.actions(sid)] == [1, 2, 3]
    assert [a.kind for a in store.actions(sid)] == ["message.user", "thinking", "message.assistant"]


def test_seq_continues_after_reopen(tmp_path):
    s = Store(tmp_path / "x.db")
    sid = _session(s)
    s.append(sid, [Action("message.user", {"text": "a"})])
    s.close()
    s2 = Store(tmp_path / "x.db")
    assert s2.append(sid, [Action("thinking", {"text": "b"})]) == 2


def test_calls_view_pairs_results_and_keeps_unknown_outcome(store):
    sid = _session(store)
    store.append(
        sid,
        [
            Action("tool.call", {"call_id": "a", "tool": "Read", "input": {"file_path": "x"}}),
            Action("tool.result", {"call_id": "a", "output": "text", "is_error": None}),
            Action("tool.call", {"call_id": "b", "tool": "Bash", "input": {"command": "false"}}),
            Action("tool.result", {"call_id": "b", "output": "", "is_error": True}),
            Action("tool.call", {"call_id": "c", "tool": "Edit", "input": {}}, thread="agent-1"),
            Action("tool.result", {"call_id": "c", "output": "ok", "is_error": False}, thread="agent-1"),
            Action("tool.call", {"call_id": "d", "tool": "Grep", "input": {}}),
        ],
    )
    rows = {r["call_id"]: r for r in store.db.query("SELECT * FROM calls WHERE session_id = ?", [sid])}
    assert rows["a"]["outcome"] is None and rows["b"]["outcome"] == "error" and rows["c"]["outcome"] == "ok"
    assert rows["c"]["thread"] == "agent-1" and rows["d"]["output"] is None
    projected = {c.call_id: c.outcome for c in store.load_session(sid).calls}
    assert projected == {k: r["outcome"] for k, r in rows.items()}


def test_blobs_are_content_addressed(store):
    a = store.put_blob(b"hello")
    b = store.put_blob(b"hello")
    assert a == b and store.get_blob(a) == b"hello"
    assert store.db.execute("SELECT COUNT(*) FROM blobs").fetchone()[0] == 1


def test_blobs_are_stored_compressed_and_read_back_exact(store):
    text = b"".join(b"line %d of a file the agent wrote\n" % i for i in range(20_000))
    noise = os.urandom(4096)  # does not compress: kept as it is
    sha, raw_sha = store.put_blob(text), store.put_blob(noise)
    rows = {r[0]: r[1:] for r in store.db.execute("SELECT sha256, codec, size, length(data) FROM blobs")}
    assert rows[sha][0] == "zstd" and rows[sha][1] == len(text) and rows[sha][2] < len(text) / 5
    assert rows[raw_sha] == (None, len(noise), len(noise))
    assert store.get_blob(sha) == text and store.get_blob(raw_sha) == noise
    assert hashlib.sha256(store.get_blob(sha)).hexdigest() == sha


def test_blobs_written_with_actions_commit_with_them_or_not_at_all(store):
    """A session's closing names its snapshot and transcript blobs: they are written in the
    closing's one transaction, so an action never names a blob the store lacks, and a closing
    that fails leaves neither. A blob the store holds already is not written again."""
    sid = _session(store)
    store.append(sid, [Action("message.user", {"text": "hi"})])
    snapshot, transcript = store.prepare_blob(b"tree " * 500), store.prepare_blob(b"transcript " * 500)
    with pytest.raises(sqlite3.IntegrityError):  # seq 1 is taken: the whole append is refused
        store.append(sid, [Action("workspace.snapshot", {"sha256": snapshot.sha256})], at_seq=1, blobs=[snapshot, transcript])
    assert store.get_blob(snapshot.sha256) is None and store.get_blob(transcript.sha256) is None
    store.append(sid, [Action("workspace.snapshot", {"sha256": snapshot.sha256})], blobs=[snapshot, transcript])
    assert store.get_blob(snapshot.sha256) == b"tree " * 500 and store.get_blob(transcript.sha256) == b"transcript " * 500
    again = store.prepare_blob(b"tree " * 500)
    assert again.sha256 == snapshot.sha256 and again.data is None


def test_a_damaged_compressed_blob_is_a_clear_error(tmp_path):
    store = Store(tmp_path / "s.db")
    sha = store.put_blob(b"x" * 100_000)
    store.close()
    con = sqlite3.connect(tmp_path / "s.db")  # a blob of another shape: claims more bytes than its frame holds
    (guard,) = con.execute("SELECT sql FROM sqlite_master WHERE name = 'blobs_no_rewrite'").fetchone()
    con.execute("DROP TRIGGER blobs_no_rewrite")
    con.execute("INSERT INTO blobs (sha256, size, data, codec) SELECT 'other', size + 1, data, codec FROM blobs")
    con.execute("INSERT INTO blobs (sha256, size, data, codec) SELECT 'newer', size, data, 'brotli' FROM blobs WHERE sha256 = ?", [sha])
    con.execute(guard)  # the guard back as it was: the store opens, and the damage is found where it is read
    con.commit()
    con.close()
    store = Store(tmp_path / "s.db")
    assert store.get_blob(sha) == b"x" * 100_000
    for bad in ("other", "newer"):
        with pytest.raises(BadInput) as err:
            store.get_blob(bad)
        assert err.value.file == str(tmp_path / "s.db") and "damaged" in str(err.value)


def test_redactor_applies_to_actions_and_raw(store):
    sid = _session(store)
    store.set_redactor(sid, lambda t: t.replace("s3cret-value", "[REDACTED]"))
    store.append(sid, [Action("message.assistant", {"text": "token is s3cret-value"})])
    store.append_raw(sid, [(1, '{"text": "s3cret-value"}')])
    assert store.actions(sid)[0].data["text"] == "token is [REDACTED]"
    assert store.raw_lines(sid) == ['{"text": "[REDACTED]"}']


def test_action_data_is_stored_as_json_text_whether_or_not_a_secret_was_redacted(store):
    """Clean batches are bound as orjson's bytes and cast; flagged ones as redacted str: both
    are TEXT that SQLite's JSON functions read, and non-ASCII text comes back as it went in."""
    from benchtape.core.redact import shapes_only

    sid = _session(store)
    store.set_redactor(sid, shapes_only())
    store.append(sid, [Action("message.assistant", {"text": "héllo 😀 \u2028 done"}), Action("message.assistant", {"text": "plain ascii"})])
    store.append(sid, [Action("message.assistant", {"text": "key glpat-Xy7Qm2Zp9Rt4Lk8Wn3Vb é"})])
    rows = store.db.conn.execute("SELECT typeof(data), json_extract(data, '$.text'), CAST(data AS BLOB) FROM actions WHERE session_id = ? ORDER BY seq", [sid]).fetchall()
    assert [r[:2] for r in rows] == [("text", "héllo 😀 \u2028 done"), ("text", "plain ascii"), ("text", "key [REDACTED] é")]
    # an ASCII payload (bound as str) and a non-ASCII one (bound as bytes) hold orjson's bytes exactly
    assert [r[2] for r in rows[:2]] == [orjson.dumps({"text": "héllo 😀 \u2028 done"}), b'{"text":"plain ascii"}']
    assert [a.data["text"] for a in store.actions(sid)] == ["héllo 😀 \u2028 done", "plain ascii", "key [REDACTED] é"]


def test_verdict_reason_and_evidence_are_redacted(store):
    from benchtape.core.results import Result

    sid = _session(store)
    store.set_redactor(sid, lambda t: t.replace("s3cret-value", "[REDACTED]"))
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")
    result = Result.of(False, "output: s3cret-value", {"output_tail": "s3cret-value"})
    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "exec", "spec": {"type": "exec"}, "spec_sha256": "h", "result": result}])
    row = store.verdicts(grading_id=gid)[0]
    assert row["reason"] == "output: [REDACTED]" and row["evidence"] == {"output_tail": "[REDACTED]"}


def test_a_verdict_set_is_stored_as_utf8_text_whatever_its_characters(store):
    """The set's JSON is bound as orjson's UTF-8 bytes cast to TEXT (no str round trip): it must
    stay TEXT, which SQLite's JSON functions and every reader expect, with its characters exact."""
    from benchtape.core.results import Result

    sid = _session(store)
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")
    result = Result.of(True, "cost 0.01 USD ≤ 1 USD 😀", {"note": "é \u2028"})
    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "cost", "spec": {"type": "cost", "value": "≤"}, "spec_sha256": "h", "result": result}])
    kind, checks = store.db.execute("SELECT typeof(verdicts), json_array_length(verdicts) FROM verdict_sets WHERE grading_id = ?", [gid]).fetchone()
    assert (kind, checks) == ("text", 1)
    row = store.verdicts(grading_id=gid)[0]
    assert row["reason"] == "cost 0.01 USD ≤ 1 USD 😀" and row["evidence"] == {"note": "é \u2028"}


def test_an_older_store_migrates_forward_keeping_its_history(tmp_path):
    import sqlite_utils

    from benchtape.store import database as store_module

    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    store_module.MIGRATIONS[0](db)  # a store written by the first release
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r1', 'run', 0)")
    db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES ('s1', 'r1', 'sc', 0)")
    db.execute("INSERT INTO actions (session_id, seq, at, thread, kind, data) VALUES ('s1', 1, 0, 'main', 'message.user', '{\"text\": \"hi\"}')")
    db.conn.commit()
    db.conn.close()
    s = Store(path)
    assert s.db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert s.load_session("s1").turns[0].prompt == "hi"
    assert s.generated_vars("r1", "sc") == {}  # a table a later migration added
    assert s.db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'actions_kind'").fetchone()[0] == 0


def _store_at_schema(path, version: int):
    """A store as the benchtape that stopped at migration `version` left it."""
    import sqlite_utils

    from benchtape.store import database as store_module

    db = sqlite_utils.Database(path)
    for step in store_module.MIGRATIONS[:version]:
        step(db)
    db.execute(f"PRAGMA user_version = {version}")
    return db


def test_verdict_rows_migrate_to_one_set_per_session_keeping_every_column(tmp_path):
    """Migration 14: each (grading, session)'s verdict rows become one set, in their order; the
    `verdicts` view, the briefs a diff reads, the counts and session_summary read the same."""
    db = _store_at_schema(tmp_path / "old.db", 13)
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r1', 'run', 0)")
    for sid in ("s1", "s2"):
        db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES (?, 'r1', 'sc', 0)", [sid])
    db.execute("INSERT INTO gradings (id, source, checkset_sha256, catalog_version, created_at) VALUES ('g1', 'live', 'x', '1', 1)")
    db.execute("INSERT INTO specs (id, sha256, spec) VALUES (7, 'h7', '{\"type\":\"contains\",\"value\":\"x\"}')")
    rows = [
        ("s1", "checks[0]", "PASS", 1, 1.0, "found it", '{"at":3}', 0),
        ("s1", "checks[1]", "FAIL", 0, 0.25, None, '{"why":["a","b"]}', 1),
        ("s2", "checks[0]", "NA", 0, 0.0, "no output", "{}", 0),
    ]
    for sid, path, status, ok, score, reason, evidence, readout in rows:
        db.execute(
            "INSERT INTO verdict_rows VALUES ('g1', ?, ?, 'contains', 'm', 7, 'sha-' || ?, ?, ?, ?, ?, ?, ?, 5)",
            [sid, path, path, status, ok, score, reason, evidence, readout],
        )
    db.execute("INSERT INTO session_gradings VALUES ('s1', 'g1')")
    db.execute("INSERT INTO session_gradings VALUES ('s2', 'g1')")
    before = [tuple(r) for r in db.execute("SELECT * FROM verdicts ORDER BY session_id, check_path").fetchall()]
    db.conn.commit()
    db.conn.close()

    s = Store(tmp_path / "old.db")
    assert s.db.execute("SELECT COUNT(*) FROM verdict_sets").fetchone()[0] == 2
    after = [tuple(r) for r in s.db.execute("SELECT * FROM verdicts ORDER BY session_id, check_path").fetchall()]
    assert after == before and len(after) == 3
    assert s.verdict_briefs("g1", "s1") == [
        ("checks[0]", "contains", "m", "sha-checks[0]", '{"type":"contains","value":"x"}', "PASS", 1, 1.0, "found it", 0),
        ("checks[1]", "contains", "m", "sha-checks[1]", '{"type":"contains","value":"x"}', "FAIL", 0, 0.25, None, 1),
    ]
    assert s.verdict_counts("g1", "s1") == {"PASS": 1, "FAIL": 1} and s.graded("g1", "s2") and not s.graded("g1", "nope")
    assert s.graded_session_ids("g1") == ["s1", "s2"]
    summary = {r["session_id"]: (r["pass"], r["fail"], r["error"], r["na"]) for r in s.db.query("SELECT * FROM session_summary")}
    assert summary == {"s1": (1, 1, 0, 0), "s2": (0, 0, 0, 1)}


def test_session_gradings_migrate_to_the_runs_each_grading_holds(tmp_path):
    """Migration 15: one row per (session, grading) becomes one per (run, grading); a session's
    latest and first grading, its verdicts and session_summary read the same as before."""
    db = _store_at_schema(tmp_path / "old.db", 14)
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r1', 'run', 0)")
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('r2', 'run', 0)")
    for sid, run in (("s1", "r1"), ("s2", "r1"), ("s3", "r2")):
        db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES (?, ?, 'sc', 0)", [sid, run])
    for gid, at in (("g1", 1), ("g2", 2), ("g3", 3)):
        db.execute("INSERT INTO gradings (id, source, checkset_sha256, catalog_version, created_at) VALUES (?, 'live', 'x', '1', ?)", [gid, at])
    db.execute("INSERT INTO specs (id, sha256, spec) VALUES (7, 'h7', '{\"type\":\"contains\",\"value\":\"x\"}')")
    sets = (("g1", "s1", "PASS"), ("g1", "s2", "FAIL"), ("g2", "s1", "FAIL"), ("g3", "s3", "PASS"), ("g3", "gone", "NA"))
    for gid, sid, status in sets:
        verdict = f'[["checks[0]","contains","m",7,"h7","{status}",{int(status == "PASS")},1.0,null,"{{}}",0]]'
        db.execute("INSERT INTO verdict_sets (grading_id, session_id, first_check, created_at, verdicts) VALUES (?, ?, 'checks[0]', 1, ?)", [gid, sid, verdict])
        db.execute("INSERT INTO session_gradings VALUES (?, ?)", [sid, gid])
    before = [tuple(r) for r in db.execute("SELECT * FROM session_summary ORDER BY session_id").fetchall()]
    db.conn.commit()
    db.conn.close()

    s = Store(tmp_path / "old.db")
    assert sorted(s.db.execute("SELECT run_id, grading_id FROM grading_runs").fetchall()) == [("", "g3"), ("r1", "g1"), ("r1", "g2"), ("r2", "g3")]
    assert s.db.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'session_gradings'").fetchone()[0] == 0
    assert [tuple(r) for r in s.db.execute("SELECT * FROM session_summary ORDER BY session_id").fetchall()] == before
    assert (s.latest_grading_for("s1"), s.first_grading_for("s1"), s.latest_grading_for("s2"), s.latest_grading_for("gone")) == ("g2", "g1", "g1", "g3")
    assert s.first_gradings(["s1", "s2", "s3"]) == {"s1": "g1", "s2": "g1", "s3": "g3"}
    assert [v["status"] for v in s.verdicts(session_id="s1")] == ["PASS", "FAIL"]
    assert s.sessions_per_grading() == {"g1": 2, "g2": 1, "g3": 2}


def test_a_second_set_of_a_session_may_add_checks_but_never_repeat_one(store):
    sid = _session(store)
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1")

    def verdict(path: str, ok: bool) -> dict:
        return {"check_path": path, "type": "contains", "spec": {"type": "contains"}, "spec_sha256": "h", "result": Result.of(ok)}

    store.add_verdicts(gid, sid, [verdict("checks[0]", True), verdict("checks[1]", False)])
    store.add_verdicts(gid, sid, [verdict("checks[2]", True)])
    for again in ("checks[1]", "checks[0]"):  # a set of its own, or the key of the first set
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            store.add_verdicts(gid, sid, [verdict(again, True)])
    assert [b[0] for b in store.verdict_briefs(gid, sid)] == ["checks[0]", "checks[1]", "checks[2]"]
    assert store.verdict_counts(gid, sid) == {"PASS": 2, "FAIL": 1}


def test_the_same_blob_stored_first_in_another_form_is_kept_and_not_an_error(tmp_path):
    """Two writers may store the same new bytes at once, one compressed by another zstd build:
    the first form stays, the second put returns its sha without an error."""
    store = Store(tmp_path / "s.db")
    data = b"the same workspace\n" * 2000
    sha = hashlib.sha256(data).hexdigest()
    store.db.conn.execute("INSERT INTO blobs (sha256, size, data, codec) VALUES (?, ?, ?, NULL)", [sha, len(data), data])  # as it is
    real_one, raced = store._one, []

    def racing(sql, params=()):
        if sql.startswith("SELECT 1 FROM blobs") and not raced:
            raced.append(sql)
            return None  # put_blob's existence check ran just before the other writer's insert
        return real_one(sql, params)

    store._one = racing
    assert store.put_blob(data) == sha
    assert store.db.execute("SELECT codec FROM blobs").fetchall() == [(None,)] and store.get_blob(sha) == data


def test_a_stored_session_builds_its_actions_only_when_a_reader_asks(store):
    """A regrade whose checks read only the folds makes no Action of the hundred a session
    holds (the cost `project_rows` exists to save); reading `actions` then gives them all."""
    from benchtape.checks import build
    from benchtape.core.results import CheckSpec
    from benchtape.replay.grading import GradingContext, NoWorkspace, grade_session

    sid = store.new_session(store.new_run("r"), "s")
    stored = [
        Action("session.started", {"prompt": "p"}),
        Action("tool.call", {"call_id": "c1", "tool": "Read", "input": {"file_path": "a.py"}}),
        Action("tool.result", {"call_id": "c1", "output": "x", "is_error": False}),
        Action("tool.call", {"call_id": "c2", "tool": "Task", "input": {}}, thread="t1"),
        Action("final_output", {"text": "done"}),
        Action("session.finished", {"status": "ok", "exit_code": 0}),
    ]
    store.append(sid, stored)
    session = store.load_session(sid)
    checks = [build(CheckSpec("contains", value="done")), build(CheckSpec("session:tool-used", value="Read"))]
    verdicts = grade_session(session, checks, NoWorkspace(), GradingContext())
    assert [v.result.status for v in verdicts] == ["PASS", "PASS"]
    assert session.__dict__["_structure"]._actions is None  # graded, and not one Action made
    assert [(a.seq, a.kind, a.thread, a.data) for a in session.actions] == [(i + 1, a.kind, a.thread, a.data) for i, a in enumerate(stored)]
    assert [a.kind for a in session.subagents["t1"].actions] == ["tool.call"]


def test_ids_are_ulids_that_sort_by_their_millisecond_and_a_run_records_its_host(tmp_path):
    """Ids are made without python-ulid: 26 characters of Crockford's base32 whose first ten
    are the milliseconds they were made in; the run's host line is platform.platform()'s."""
    import json
    import platform
    import time

    from benchtape.store.database import CROCKFORD, new_id

    before = time.time_ns() // 1_000_000
    first = new_id()
    time.sleep(0.002)
    second = new_id()
    assert len(first) == 26 and set(first + second) <= set(CROCKFORD)
    assert first[:10] < second[:10] and int("".join(f"{CROCKFORD.index(c):05b}" for c in first[:10]), 2) >= before
    assert len({new_id() for _ in range(1000)}) == 1000
    store = Store(tmp_path / "h.db")
    run = store.new_run("import")
    host = json.loads(store.db.conn.execute("SELECT host FROM runs WHERE id = ?", [run]).fetchone()[0])
    assert host["platform"] == platform.platform()
    store.close()
