"""`benchtape sessions` and `benchtape show`: what was recorded, readable in a terminal."""

from __future__ import annotations

from replaykit import cli, unique_prefix

from benchtape.core.model import Action
from benchtape.store.database import Store


def test_sessions_lists_each_session_newest_first_with_outcome_score_cost_duration(demo_db):
    out = cli("sessions", "--db", demo_db, "--json")
    assert out.code == 0
    lines = out.json()
    by = {s["scenario"]: s for s in lines}
    assert set(by) == {"fixes-the-bug", "wrong-fix", "weakens-the-test"}
    assert [s["id"] for s in lines] == sorted((s["id"] for s in lines), reverse=True)  # newest first
    ok = by["fixes-the-bug"]
    assert (ok["status"], ok["outcome"], ok["verdict_summary"], ok["cost_usd"], ok["duration_ms"]) == ("ok", "pass", "4 PASS", 0.012, 1800)
    assert ok["harness"] == "mock" and ok["run_kind"] == "demo" and ok["control"] is False
    assert 0.9 < ok["score"] <= 1.0
    assert (by["wrong-fix"]["outcome"], by["wrong-fix"]["verdict_summary"], by["wrong-fix"]["score"]) == ("fail", "1 PASS 1 FAIL", 0.75)
    for s in lines:  # a short handle names exactly its session
        assert len(s["handle"]) < 26 and cli("query", "session.id", "--session", s["handle"], "--db", demo_db).json() == s["id"]
    text = cli("sessions", "--db", demo_db, "--run", lines[0]["run_id"][:10])
    assert "wrong-fix #1" in text.stdout and "1 PASS 1 FAIL" in text.stdout and "$0.0120" in text.stdout and "1.8s" in text.stdout
    assert by["wrong-fix"]["handle"] in text.stdout and by["wrong-fix"]["id"] not in text.stdout


def test_sessions_started_in_the_same_millisecond_are_listed_by_their_place(tmp_path):
    """ULIDs made in one millisecond differ only in their last character: a prefix would be the
    whole id, so such a session is listed as RUN/SCENARIO#N, which every command takes back."""
    store = Store(tmp_path / "ms.db")
    run = store.new_run("run", harness="mock")
    twins = ["01JAAAAAAAAAAAAAAAAAAAAAA0", "01JAAAAAAAAAAAAAAAAAAAAAA1"]
    for attempt, sid in enumerate(twins, 1):
        store.new_session(run, "s", attempt=attempt, harness="mock", session_id=sid)
        store.append(sid, [Action("session.started", {"scenario": "s"}), Action("session.finished", {"status": "ok"})])
    store.close()
    lines = {s["id"]: s for s in cli("sessions", "--db", tmp_path / "ms.db", "--json").json()}
    run_handle = lines[twins[0]]["run_handle"]
    assert [lines[sid]["handle"] for sid in twins] == [f"{run_handle}/s#1", f"{run_handle}/s#2"] and len(run_handle) < 12
    for sid in twins:
        out = cli("show", lines[sid]["handle"], "--db", tmp_path / "ms.db")
        assert out.code == 0 and f"session {sid}" in out.stdout


def test_sessions_limit_and_scenario(demo_db):
    [one] = cli("sessions", "--db", demo_db, "--limit", "1", "--json").json()
    assert one["id"] == max(r.id for r in Store(demo_db).session_rows())
    text = cli("sessions", "--db", demo_db, "--limit", "1")
    assert "1 of 3 session(s), newest first; --limit 0 lists all" in text.stdout
    [only] = cli("sessions", "--db", demo_db, "--scenario", "wrong-fix", "--json").json()
    assert only["scenario"] == "wrong-fix"
    assert cli("sessions", "--db", demo_db, "--scenario", "nope", "--json").json() == []


def test_a_session_without_session_finished_is_incomplete(tmp_path):
    store = Store(tmp_path / "i.db")
    run = store.new_run("run", harness="mock")
    sid = store.new_session(run, "killed", harness="mock")
    store.append(sid, [Action("session.started", {"scenario": "killed"}), Action("tool.call", {"call_id": "c1", "tool": "Bash", "input": {"command": "sleep 100"}})])
    [line] = cli("sessions", "--db", tmp_path / "i.db", "--json").json()
    assert line["status"] == "incomplete" and line["outcome"] == "incomplete" and line["verdict_summary"] == "not graded"
    assert line["cost_usd"] is None and line["duration_ms"] is None
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
    assert set(doc) == {"session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts", "outcome", "bench_metrics"}
    assert set(doc["bench_metrics"]) == {"cost", "duration", "tokens", "turns"}  # the demo declares no metrics: the built-in schema
    assert doc["session"]["id"] == sid and doc["actions"][0]["kind"] == "session.started"


def test_ambiguous_and_unknown_prefixes_are_bad_input(demo_db):
    assert cli("show", "0", "--db", demo_db).code == 2  # every ULID of this decade starts with 0
    out = cli("show", "ZZZZ", "--db", demo_db)
    assert out.code == 2 and "no session with id 'ZZZZ'" in out.stderr


def test_read_commands_need_an_existing_database(tmp_path):
    out = cli("sessions", "--db", tmp_path / "none.db")
    assert out.code == 2 and "no benchtape database here" in out.stderr


def test_check_names_show_wherever_verdicts_do(tmp_path):
    """Two assert-sets told apart by their `metric:` in the run's table, `show`, the HTML page and JUnit."""
    import xml.etree.ElementTree as ET

    from replaykit import write_bench

    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: s
            prompt: "say done"
            mock: {steps: [{say: "done"}]}
            checks:
              - {type: assert-set, metric: says-done, checks: [{type: contains, value: done, metric: the-word}]}
              - {type: assert-set, metric: says-more, checks: [{type: contains, value: more}]}
        """)
    db = tmp_path / "d.db"
    run = cli("run", bench, "--db", db, "--report-junit", tmp_path / "j.xml")
    assert run.code == 1
    assert "says-done [assert-set]" in run.stdout and "says-more [assert-set]" in run.stdout and "└ the-word [contains]" in run.stdout
    shown = cli("show", "latest", "--db", db).stdout
    assert "says-done" in shown and "says-more" in shown and "└ the-word" in shown
    assert cli("report", "latest", "--html", tmp_path / "p.html", "--db", db).code == 0
    page = (tmp_path / "p.html").read_text()
    assert '<td class="name">says-done</td>' in page and '<td class="name">says-more</td>' in page and '<td class="name">the-word</td>' in page
    failure = next(ET.parse(tmp_path / "j.xml").getroot().iter("failure"))
    assert failure.get("message") == "1 check(s) failed: says-more" and "checks[1] says-more [assert-set]: FAIL" in failure.text
