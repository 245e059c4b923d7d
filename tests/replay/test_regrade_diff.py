"""`benchtape regrade` then `benchtape diff`: the checks as they are now, over what was
recorded, and exactly which verdicts that changed."""

from __future__ import annotations

from pathlib import Path

import pytest
from replaykit import cli, write_bench

from benchtape.store.database import Store

BENCH = """
description: cost and output checks
harness: mock
defaults: {{sandbox: home, timeout: 30s}}
scenarios:
  - name: cheap
    prompt: "say done"
    mock:
      steps: [{{say: "done"}}]
      metrics: {{cost_usd: 0.01, duration_ms: 100}}
    checks:
      - {{type: contains, value: done}}
      - {{type: cost, threshold: {threshold}}}
      - {{type: session:step-count, args: {{lte: 5}}}}
  - name: pricey
    prompt: "say done"
    mock:
      steps: [{{say: "done, expensively"}}]
      metrics: {{cost_usd: 0.03, duration_ms: 100}}
    checks:
      - {{type: contains, value: done}}
      - {{type: cost, threshold: {threshold}}}
"""


@pytest.fixture()
def recorded(tmp_path) -> tuple[Path, Path, str]:
    """Two scenarios run twice each (--repeat 2) under a 0.05 USD ceiling: all pass."""
    bench = write_bench(tmp_path, BENCH.format(threshold=0.05))
    db = tmp_path / "d.db"
    out = cli("run", bench, "--db", db, "--repeat", "2")
    assert out.code == 0, out.stdout + out.stderr
    [live] = Store(db).gradings()
    return bench, db, live["id"]


def test_edited_threshold_regrade_and_diff_show_exactly_the_flips(recorded):
    bench, db, live = recorded
    bench.write_text(BENCH.format(threshold=0.02))  # now only the cheap scenario is under it
    out = cli("regrade", "--bench", bench, "--db", db)
    assert out.code == 0, out.stderr
    new = out.lines[-1]
    assert Store(db).grading(new)["source"] == "regrade"
    assert "regraded 4 session(s)" in out.stdout
    assert "No agent" not in out.stdout and "(no agent ran)" in out.stdout
    assert f"next: benchtape diff {live} {new}" in out.stdout  # the command to run, whole (it said OLD_GRADING)

    d = cli("diff", live, new, "--db", db, "--json").json()
    assert d["sessions"] == 4
    flips = d["flips"]
    assert [(f["scenario"], f["check_path"], f["label"], f["spec_changed"]) for f in flips] == [("pricey", "checks[1]", "PASS→FAIL", True)] * 2
    [changed] = [c for c in d["changed_checks"] if c["scenario"] == "pricey"]
    assert changed["spec_a"] == {"type": "cost", "threshold": 0.05} and changed["spec_b"] == {"type": "cost", "threshold": 0.02}
    # the cheap scenario's cost check changed too, and its verdicts kept their status but not their score
    assert {(s["scenario"], s["check_path"]) for s in d["score_changes"]} == {("cheap", "checks[1]")}
    assert d["added"] == [] and d["removed"] == []
    because = [{"change": "checks[1] cost: PASS→FAIL (check changed)", "to_pass": 0, "from_pass": 2}]
    assert d["pass_rate"] == {"cheap": {"a": 2, "b": 2, "sessions": 2, "because": []}, "pricey": {"a": 2, "b": 0, "sessions": 2, "because": because}}
    changed = {s["session_id"]: s for s in d["sessions_changed"]}
    assert len(changed) == 2 and all(s["scenario"] == "pricey" and (s["outcome_a"], s["outcome_b"]) == ("pass", "fail") for s in changed.values())
    assert all(s["because"] == ["checks[1] cost: PASS→FAIL (check changed)"] for s in changed.values())

    text = cli("diff", live[:12], new[:12], "--db", db)
    assert text.code == 0
    assert text.stdout.count("PASS→FAIL    pricey") == 2
    assert 'old spec: {"type":"cost","threshold":0.05}' in text.stdout
    assert "pricey: 2/2 → 0/2" in text.stdout
    assert "because checks[1] cost: PASS→FAIL (check changed) (2 from pass)" in text.stdout
    assert text.stdout.count(": pass → fail · 1 flip(s)") == 2  # the per-session summary
    assert text.lines[-1].startswith("2 flip(s) · 2 score change(s) · 2 changed check(s) · 0 added · 0 removed")


def test_added_removed_and_moved_checks(recorded):
    bench, db, live = recorded
    edited = BENCH.format(threshold=0.05).replace(
        "      - {type: contains, value: done}\n      - {type: cost, threshold: 0.05}\n      - {type: session:step-count, args: {lte: 5}}",
        "      - {type: regex, value: 'd.ne'}\n      - {type: contains, value: done}\n      - {type: cost, threshold: 0.05}",
    )
    assert edited != BENCH.format(threshold=0.05)
    bench.write_text(edited)
    new = cli("regrade", "--bench", bench, "--scenario", "cheap", "--db", db).lines[-1]
    d = cli("diff", live, new, "--db", db, "--json").json()
    assert d["sessions"] == 2  # only the cheap scenario was regraded
    assert d["flips"] == [] and d["changed_checks"] == []
    assert {(a["check_path"], a["type"]) for a in d["added"]} == {("checks[0]", "regex")}
    assert {(r["check_path"], r["type"]) for r in d["removed"]} == {("checks[2]", "session:step-count")}
    assert d["unchanged_verdicts"] == 4  # contains and cost moved one place down: the same checks


def test_regrade_skips_sessions_of_scenarios_the_bench_lacks(recorded, tmp_path):
    _, db, _ = recorded
    other = write_bench(tmp_path / "other", """
        description: only one of the scenarios
        harness: mock
        scenarios:
          - name: cheap
            prompt: "say done"
            checks:
              - {type: contains, value: nope}
        """)
    out = cli("regrade", "--bench", other, "--all", "--db", db)
    assert out.code == 0
    assert "skipped 2 session(s) whose scenario the bench does not have:" in out.stdout
    assert "pricey: 2 session(s)" in out.stdout
    grading = out.lines[-1]
    assert len({v["session_id"] for v in Store(db).verdicts(grading_id=grading)}) == 2


def test_regrade_by_run_and_bad_scenario(recorded):
    bench, db, _ = recorded
    [run] = Store(db).runs()
    out = cli("regrade", "--bench", bench, "--run", run["id"][:8], "--db", db)
    assert out.code == 0 and Store(db).grading(out.lines[-1])["run_id"] == run["id"]
    bad = cli("regrade", "--bench", bench, "--scenario", "nope", "--db", db)
    assert bad.code == 2 and "is not a scenario" in bad.stderr


def test_gradings_lists_every_grading(recorded):
    bench, db, live = recorded
    new = cli("regrade", "--bench", bench, "--db", db).lines[-1]
    rows = cli("gradings", "--db", db, "--json").json()
    assert [(r["id"], r["source"], r["sessions"]) for r in rows] == [(live, "live", 4), (new, "regrade", 4)]
    assert all(r["checkset_sha256"] and r["catalog_version"] for r in rows)
    text = cli("gradings", "--db", db)
    assert live in text.stdout and "regrade" in text.stdout


def test_a_check_inserted_before_another_still_shows_the_others_flip(recorded):
    """Identity, not list position: a regex inserted first moves every check down one place;
    the cost check, edited there, still pairs with itself and its flip shows."""
    bench, db, live = recorded
    old = "      - {type: contains, value: done}\n      - {type: cost, threshold: 0.05}\n      - {type: session:step-count, args: {lte: 5}}"
    edited = BENCH.format(threshold=0.05).replace(old, "      - {type: regex, value: 'd.ne'}\n      - {type: contains, value: done}\n      - {type: cost, threshold: 0.005}")
    assert edited != BENCH.format(threshold=0.05)
    bench.write_text(edited)
    new = cli("regrade", "--bench", bench, "--scenario", "cheap", "--db", db).lines[-1]
    d = cli("diff", live, new, "--db", db, "--json").json()
    flips = [(f["check_path"], f["moved_from"], f["type"], f["label"]) for f in d["flips"]]
    assert flips == [("checks[2]", "checks[1]", "cost", "PASS→FAIL")] * 2
    assert {(a["check_path"], a["type"]) for a in d["added"]} == {("checks[0]", "regex")}
    assert {(r["check_path"], r["type"]) for r in d["removed"]} == {("checks[2]", "session:step-count")}
    assert d["pass_rate"]["cheap"]["a"] == 2 and d["pass_rate"]["cheap"]["b"] == 0
    assert [b["change"] for b in d["pass_rate"]["cheap"]["because"]] == ["checks[2] cost: PASS→FAIL (moved from checks[1]) (check changed)"]


def test_named_checks_keep_their_identity_through_an_edit_and_a_move(tmp_path):
    """Two assert-sets told apart by their metric: names, reordered and one edited: each pairs with itself."""
    text = """
        harness: mock
        scenarios:
          - name: s
            prompt: "say done"
            mock: {{steps: [{{say: "done"}}]}}
            checks:
              - {first}
              - {second}
        """
    tests = "{type: assert-set, metric: says-done, checks: [{type: contains, value: %s}]}"
    short = "{type: assert-set, metric: is-short, checks: [{type: regex, value: '^.{0,%d}$'}]}"
    bench = write_bench(tmp_path, text.format(first=tests % "done", second=short % 100))
    db = tmp_path / "d.db"
    assert cli("run", bench, "--db", db).code == 0
    [live] = Store(db).gradings()
    bench.write_text(bench.read_text().replace(tests % "done", "X").replace(short % 100, tests % "nope").replace("X", short % 100))
    new = cli("regrade", "--bench", bench, "--db", db).lines[-1]
    d = cli("diff", live["id"], new, "--db", db, "--json").json()
    assert [(f["name"], f["check_path"], f["moved_from"], f["label"]) for f in d["flips"]] == [("says-done", "checks[1]", "checks[0]", "PASS→FAIL")]
    assert d["added"] == [] and d["removed"] == [] and d["unchanged_verdicts"] == 1
    text_out = cli("diff", live["id"], "latest", "--db", db).stdout
    assert "says-done (moved from checks[0]) (check changed): PASS 1.000 → FAIL 0.000" in text_out


def test_a_regrade_that_would_grade_nothing_is_refused_and_writes_no_grading(recorded, tmp_path):
    """A bench none of whose scenarios the selected sessions belong to: a grading of no session
    would stay for good (history is never deleted) and `diff X latest` would read it."""
    bench, db, live = recorded
    other = write_bench(tmp_path / "other", BENCH.format(threshold=0.05).replace("name: cheap", "name: thrifty").replace("name: pricey", "name: lavish"))
    out = cli("regrade", "--bench", other, "--db", db)
    assert out.code == 2 and "none of the 4 selected session(s) belongs to a scenario" in out.stderr and "'cheap' (2)" in out.stderr, out.stderr
    assert [g["id"] for g in Store(db).gradings()] == [live]


def test_a_session_that_neither_passed_nor_passes_is_not_counted_from_pass() -> None:
    """A task changed between the gradings: one session went PASS→ERROR and one FAIL→ERROR. The
    pass rate fell by one, from pass; the FAIL→ERROR session moved no pass rate (it was counted
    `2 from pass`)."""
    from benchtape.replay.diff import Change, GradingDiff, SessionFlips
    from benchtape.replay.verdicts import StoredVerdict

    def verdict(status: str) -> StoredVerdict:
        return StoredVerdict.from_brief(("task:verify", "task:verify", None, "sha", "{}", status, status == "PASS", 1.0 if status == "PASS" else 0.0, "", False))

    def session(sid: str, was: str, now: str) -> SessionFlips:
        change = Change("flip", "t", sid, "task:verify", "task:verify", verdict(was.upper()), verdict(now.upper()), spec_changed=True)
        return SessionFlips(sid, "t", 1, was, now, [change])

    diff = GradingDiff(a={}, b={}, pass_rates={"t": [1, 0, 2]}, per_session=[session("s1", "pass", "error"), session("s2", "fail", "error")])
    ((why, to_pass, from_pass),) = diff.reasons("t")
    assert (to_pass, from_pass) == (0, 1) and "PASS→ERROR" in why, diff.reasons("t")
    assert diff.to_dict()["pass_rate"]["t"]["because"] == [{"change": why, "to_pass": 0, "from_pass": 1}]


def test_a_regrade_of_several_runs_names_a_diff_for_each_grading_they_showed(tmp_path) -> None:
    """Two runs graded by different gradings (the second run's live one, the first's a regrade):
    a regrade of both names a diff per grading, where it named the first session's alone and
    that diff covered the first run only."""
    bench = write_bench(tmp_path, BENCH.format(threshold=0.05))
    db = tmp_path / "d.db"
    assert cli("run", bench, "--db", db).code == 0
    [first_run] = [r["id"] for r in Store(db).runs()]
    assert cli("run", bench, "--db", db).code == 0
    live_two = Store(db).gradings()[-1]["id"]  # the second run's, graded as it ran
    one = cli("regrade", "--bench", bench, "--db", db, "--run", first_run)
    assert one.code == 0, one.stderr
    regraded_one = one.lines[-1]
    both = cli("regrade", "--bench", bench, "--db", db, "--all")
    assert both.code == 0, both.stderr
    new = both.lines[-1]
    assert f"benchtape diff {regraded_one} {new}" in both.stdout and "these sessions showed 2 gradings before" in both.stdout, both.stdout
    assert f"benchtape diff {live_two} {new}" in both.stdout, both.stdout
