"""Naming sessions the way a person does: `latest`, RUN/SCENARIO#N and unique prefixes, in
every command that takes an id; the negative control's sessions kept out of sets."""

from __future__ import annotations

from pathlib import Path

import pytest
from replaykit import cli, write_bench

from benchtape.store.database import Store

BENCH = """
harness: mock
defaults: {sandbox: workspace}
scenarios:
  - name: alpha
    prompt: "say the first word"
    mock: {steps: [{say: "alpha"}]}
    checks: [{type: contains, value: alpha}]
  - name: beta/two
    prompt: "say the second word"
    mock: {steps: [{say: "beta"}]}
    checks: [{type: contains, value: beta}]
"""


@pytest.fixture(scope="module")
def store_with_control(tmp_path_factory) -> tuple[Path, Path]:
    """A run of two scenarios twice each, then the negative control (`check`) of the same bench."""
    d = tmp_path_factory.mktemp("handles")
    bench = write_bench(d, BENCH)
    db = d / "h.db"
    assert cli("run", bench, "--repeat", "2", "--db", db).code == 0
    assert cli("check", bench, "--db", db).code == 0
    return bench, db


def _runs(db: Path) -> dict[str, str]:
    return {r["kind"]: r["id"] for r in Store(db).runs()}


def test_latest_is_the_newest_session_that_is_not_the_control(store_with_control):
    _, db = store_with_control
    run = _runs(db)["run"]
    newest = max(r.id for r in Store(db).session_rows(run_id=run))
    shown = cli("show", "latest", "--db", db)
    assert shown.code == 0 and f"session {newest}" in shown.stdout
    assert cli("query", "session.id", "--session", "LATEST", "--db", db).json() == newest


def test_run_scenario_attempt_names_one_session(store_with_control):
    _, db = store_with_control
    run = _runs(db)["run"]
    want = next(r.id for r in Store(db).session_rows(run_id=run) if r.scenario == "beta/two" and r.attempt == 2)
    for handle in (f"{run}/beta/two#2", f"{run[:12].lower()}/beta/two#2", "latest/beta/two#2"):
        out = cli("query", "session.id", "--session", handle, "--db", db)
        assert out.code == 0, (handle, out.stderr)
        assert out.json() == want
    both = cli("show", f"{run}/alpha", "--db", db)
    assert both.code == 2 and "names 2 sessions (attempts #1, #2)" in both.stderr and f"{run}/alpha#1" in both.stderr
    missing = cli("show", f"{run}/gamma#1", "--db", db)
    assert missing.code == 2 and "has no session of scenario 'gamma'" in missing.stderr and "alpha, beta/two" in missing.stderr


def test_a_place_two_setups_share_is_answered_with_their_ids_not_an_attempt(tmp_path):
    """An evaluation's setups share the run, the task and the attempt: `RUN/TASK` names a session
    of each, and adding `#1` names them all again, so the fix gives their ids (it said `#1`)."""
    db = tmp_path / "e.db"
    store = Store(db)
    run = store.new_run("evaluation")
    ids = [store.new_session(run, "378", attempt=1, harness=h) for h in ("claude-code", "codex")]
    store.close()
    for handle in (f"{run}/378", f"{run}/378#1"):
        out = cli("show", handle, "--db", db)
        assert out.code == 2 and "names 2 sessions" in out.stderr and ids[0] in out.stderr and "give the session's id" in out.stderr and "#1" not in out.stderr.split("fix")[-1], out.stderr


def test_every_command_that_takes_an_id_takes_a_handle(store_with_control, tmp_path):
    bench, db = store_with_control
    run = _runs(db)["run"]
    listed = cli("sessions", "--db", db, "--run", run, "--json").json()
    sid, prefix = next((s["id"], s["handle"]) for s in listed if s["scenario"] == "alpha" and s["attempt"] == 1)
    assert len(prefix) < 26  # a unique prefix, or RUN/SCENARIO#N when the ids differ only at their end
    assert cli("show", prefix.lower() if "/" not in prefix else prefix, "--db", db).code == 0
    assert cli("query", "session.id", "--session", prefix, "--db", db).json() == sid
    assert cli("report", "--session", prefix, "--html", tmp_path / "s.html", "--db", db).code == 0
    assert cli("export", prefix, tmp_path / "ws", "--db", db).code == 0
    graded = cli("grade", "--session", prefix, "--db", db, "--json")
    assert graded.code == 0 and [s["session_id"] for s in graded.json()["sessions"]] == [sid]
    reparsed = cli("reparse", prefix, "--db", db)
    assert reparsed.code == 0, reparsed.stderr
    assert Store(db).session_row(reparsed.lines[-1].split()[0]).parent_session == sid  # "NEW_ID  re-derived from …"
    assert cli("grade", "latest", "--db", db).code == 0  # a run handle
    assert cli("report", "latest", "--html", tmp_path / "r.html", "--db", db).code == 0
    assert cli("sessions", "--run", "latest", "--db", db).code == 0
    regraded = cli("regrade", "--bench", bench, "--run", "latest", "--db", db)
    assert regraded.code == 0 and Store(db).grading(regraded.lines[-1])["run_id"] == run
    assert cli("diff", "latest", "latest", "--db", db).code == 0


def test_control_sessions_are_labelled_and_left_out_unless_asked(store_with_control):
    bench, db = store_with_control
    runs = _runs(db)
    listed = cli("sessions", "--db", db, "--json").json()
    assert listed and all(s["run_id"] != runs["control"] for s in listed)
    everything = cli("sessions", "--db", db, "--json", "--include-controls").json()
    controls = [s for s in everything if s["control"]]
    assert len(controls) == 2 and {s["run_id"] for s in controls} == {runs["control"]}
    assert "[control]" in cli("sessions", "--db", db, "--include-controls").stdout
    named = cli("sessions", "--db", db, "--run", runs["control"], "--json").json()
    assert len(named) == 2  # naming the run is asking for it
    assert "(negative control: the no-op agent)" in cli("show", controls[0]["id"], "--db", db).stdout

    queried = cli("query", "session.id", "--all", "--db", db).jsonl()
    assert {q["result"] for q in queried}.isdisjoint({s["id"] for s in controls})
    by_scenario = cli("query", "session.id", "--scenario", "alpha", "--db", db).jsonl()
    alphas = {r.id for r in Store(db).session_rows(scenario="alpha") if r.run_id != runs["control"]}
    assert {q["result"] for q in by_scenario} == alphas
    with_controls = cli("query", "session.id", "--all", "--include-controls", "--db", db).jsonl()
    assert {s["id"] for s in controls} <= {q["result"] for q in with_controls}

    regraded = cli("regrade", "--bench", bench, "--db", db)
    graded = {v["session_id"] for v in Store(db).verdicts(grading_id=regraded.lines[-1])}
    assert graded and graded.isdisjoint({s["id"] for s in controls})
    regraded = cli("regrade", "--bench", bench, "--include-controls", "--db", db)
    assert {s["id"] for s in controls} <= {v["session_id"] for v in Store(db).verdicts(grading_id=regraded.lines[-1])}


def test_latest_grading_is_the_newest_that_holds_verdicts(tmp_path):
    """A regrade killed before its first batch of verdicts leaves only its grading's row
    (history is never deleted): `latest` skips it, so `diff X latest` compares with the last
    grading that graded something, not with nothing ("0 sessions graded by both")."""
    bench = write_bench(tmp_path, BENCH)
    db = tmp_path / "g.db"
    assert cli("run", bench, "--db", db).code == 0
    assert cli("regrade", "--bench", bench, "--all", "--db", db).code == 0
    store = Store(db)
    live, regraded = [g["id"] for g in store.gradings()]
    killed = store.new_grading("regrade", checkset_sha256="x", catalog_version="x")  # what a regrade killed at once left
    store.close()
    out = cli("diff", live, "latest", "--db", db)
    assert out.code == 0 and f"B {regraded} " in out.stdout and killed not in out.stdout and "2 session(s) graded by both" in out.stdout, out.stdout
