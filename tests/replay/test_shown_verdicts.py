"""What a user is shown does not move when a control runs: `grade` records its grading beside
the verdicts it reproduced, and sessions, show, query and the summary view keep the run's."""

from __future__ import annotations

import sqlite3

from replaykit import cli, write_bench
from test_grade import NONDET

from benchtape.store.database import Store


def _diverged(tmp_path):
    flag = tmp_path / "outside" / "flag"
    flag.parent.mkdir()
    flag.write_text("on")
    db = tmp_path / "g.db"
    assert cli("run", write_bench(tmp_path, NONDET.format(flag=flag)), "--db", db).code == 0
    flag.unlink()
    assert cli("grade", "--all", "--db", db).code == 1  # the exec check now fails: DIVERGED
    return db


def test_a_diverging_grade_changes_no_verdict_on_display(tmp_path):
    db = _diverged(tmp_path)
    store = Store(db)
    [live] = [g["id"] for g in store.gradings() if g["source"] == "live"]
    [row] = store.session_rows()

    [listed] = cli("sessions", "--db", db, "--json").json()
    assert (listed["grading_id"], listed["outcome"], listed["verdicts"]) == (live, "pass", {"PASS": 2}), listed

    shown = cli("show", row.id, "--db", db, "--json").json()
    assert {v["grading_id"] for v in shown["verdicts"]} == {live}
    assert [v["status"] for v in shown["verdicts"]] == ["PASS", "PASS"]
    assert shown["reproduction"]["status"] == "DIVERGED" and shown["reproduction"]["diverged"] == ["checks[1]"]

    text = cli("show", row.id, "--db", db, "--plain")
    assert f"verdicts (grading {live})" in text.stdout and "DIVERGED on checks[1]" in text.stdout

    queried = cli("query", "verdicts[].status", "--session", row.id, "--db", db)
    assert queried.code == 0 and "FAIL" not in queried.stdout and "PASS" in queried.stdout

    summary = sqlite3.connect(db).execute("SELECT grading_id, pass, fail FROM session_summary").fetchall()
    assert summary == [(live, 2, 0)]


def test_latest_is_the_newest_run_with_sessions(tmp_path):
    flag = tmp_path / "outside" / "flag"
    flag.parent.mkdir()
    flag.write_text("on")
    db = tmp_path / "g.db"
    assert cli("run", write_bench(tmp_path, NONDET.format(flag=flag)), "--db", db).code == 0
    store = Store(db)
    [with_sessions] = [r["id"] for r in store.runs()]
    store.new_run("run", bench_path="empty.yaml", bench_sha256="0" * 64, harness="mock", model=None, argv=[], params={})  # a run refused before its first session
    store.close()
    out = cli("sessions", "--run", "latest", "--db", db, "--json")
    assert out.code == 0 and [s["run_id"] for s in out.json()] == [with_sessions]


def test_sessions_of_a_run_that_matches_nothing_says_so(tmp_path):
    flag = tmp_path / "outside" / "flag"
    flag.parent.mkdir()
    flag.write_text("on")
    db = tmp_path / "g.db"
    assert cli("run", write_bench(tmp_path, NONDET.format(flag=flag)), "--db", db).code == 0
    [run] = [r["id"] for r in Store(db).runs()]
    out = cli("sessions", "--run", run, "--scenario", "nothing-like-it", "--db", db, "--plain")
    assert out.code == 0
    assert f"no session matches --run {run} and --scenario nothing-like-it (1 stored" in out.stdout
    assert "no sessions recorded yet" not in out.stdout


def test_a_control_of_an_earlier_grading_vouches_for_none_of_the_shown_verdicts(tmp_path):
    """`grade` reproduces each session's first grading; after a `regrade`, `show` shows the new
    one. Saying REPRODUCED under verdicts the control never checked would vouch for them: show
    names what it did check, and the command that checks these."""
    db = tmp_path / "g.db"
    bench = write_bench(tmp_path, "harness: mock\nscenarios:\n  - name: s\n    prompt: say done\n    mock: {steps: [{say: done}]}\n    checks:\n      - {type: contains, value: done}\n")
    assert cli("run", bench, "--db", db).code == 0
    newer = write_bench(tmp_path, "harness: mock\nscenarios:\n  - name: s\n    prompt: say done\n    checks:\n      - {type: contains, value: nope}\n", "newer.yaml")
    assert cli("regrade", "--bench", newer, "--db", db).code in (0, 1)
    assert cli("grade", "--all", "--db", db).code == 0  # the run's own grading, reproduced
    store = Store(db)
    [row] = store.session_rows()
    first, latest = store.first_grading_for(row.id), store.latest_grading_for(row.id)
    assert first != latest

    shown = cli("show", row.id, "--db", db, "--json").json()
    assert {v["grading_id"] for v in shown["verdicts"]} == {latest}
    assert shown["reproduction"]["status"] == "OTHER" and (shown["reproduction"]["reproduced"], shown["reproduction"]["shown"]) == (first, latest)
    text = cli("show", row.id, "--db", db, "--plain").stdout
    assert "REPRODUCED" not in text and f"it reproduced grading {first}, not the verdicts above (grading {latest})" in text
    assert f"benchtape grade --session {row.id} --grading {latest}" in text

    # the command it names checks the verdicts on screen, and show says so
    assert cli("grade", "--session", row.id, "--grading", latest, "--db", db).code == 0
    shown = cli("show", row.id, "--db", db, "--json").json()
    assert shown["reproduction"]["status"] == "REPRODUCED" and shown["reproduction"]["reproduced"] == latest
