"""`benchtape sessions` and `benchtape show`: what was recorded, readable in a terminal."""

from __future__ import annotations

from recorder.model import Action
from recorder.store import Store
from replaykit import cli, unique_prefix


def test_sessions_lists_runs_sessions_status_and_verdicts(demo_db):
    out = cli("sessions", "--db", demo_db, "--json")
    assert out.code == 0
    [group] = [g for g in out.json() if g["run"]["kind"] == "demo"]
    by = {s["scenario"]: s for s in group["sessions"]}
    assert set(by) == {"fixes-the-bug", "wrong-fix", "weakens-the-test"}
    assert by["fixes-the-bug"]["status"] == "ok" and by["fixes-the-bug"]["verdict_summary"] == "4 PASS"
    assert by["wrong-fix"]["verdict_summary"] == "1 PASS 1 FAIL"
    assert {"id", "scenario", "attempt", "harness", "status"} <= by["wrong-fix"].keys()
    text = cli("sessions", "--db", demo_db, "--run", group["run"]["id"][:10])
    assert "wrong-fix" in text.stdout and "1 PASS 1 FAIL" in text.stdout


def test_a_session_without_session_finished_is_incomplete(tmp_path):
    store = Store(tmp_path / "i.db")
    run = store.new_run("run", harness="mock")
    sid = store.new_session(run, "killed", harness="mock")
    store.append(sid, [Action("session.started", {"scenario": "killed"}), Action("tool.call", {"call_id": "c1", "tool": "Bash", "input": {"command": "sleep 100"}})])
    [group] = cli("sessions", "--db", tmp_path / "i.db", "--json").json()
    [line] = group["sessions"]
    assert line["status"] == "incomplete" and line["verdict_summary"] == "not graded"
    shown = cli("show", sid, "--db", tmp_path / "i.db")
    assert shown.code == 0 and "status incomplete" in shown.stdout and "sleep 100" in shown.stdout


def test_show_timeline_by_prefix(demo_db):
    ids = [r.id for r in Store(demo_db).session_rows()]
    sid = next(r.id for r in Store(demo_db).session_rows() if r.scenario == "fixes-the-bug")
    out = cli("show", unique_prefix(ids, sid).lower(), "--db", demo_db)
    assert out.code == 0, out.stderr
    assert f"session {sid}  fixes-the-bug #1" in out.stdout
    for piece in ("seq", "thread", "kind", "tool", "outcome", "tokens", "tool.call", "Edit", "calc.py", "python3 -m unittest -q", "1440", "session.finished"):
        assert piece in out.stdout, piece
    assert "verdicts (grading" in out.stdout and "checks[3]" in out.stdout


def test_show_json_is_the_query_document(demo_db):
    sid = next(r.id for r in Store(demo_db).session_rows())
    doc = cli("show", sid, "--db", demo_db, "--json").json()
    assert set(doc) == {"session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts"}
    assert doc["session"]["id"] == sid and doc["actions"][0]["kind"] == "session.started"


def test_ambiguous_and_unknown_prefixes_are_bad_input(demo_db):
    assert cli("show", "0", "--db", demo_db).code == 2  # every ULID of this decade starts with 0
    out = cli("show", "ZZZZ", "--db", demo_db)
    assert out.code == 2 and "no session with id 'ZZZZ'" in out.stderr


def test_read_commands_need_an_existing_database(tmp_path):
    out = cli("sessions", "--db", tmp_path / "none.db")
    assert out.code == 2 and "no benchtape database here" in out.stderr
