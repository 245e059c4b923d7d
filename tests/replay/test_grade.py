"""`benchtape grade`, the positive control: stored sessions re-graded with the exact checks
they were graded with, from the database or from a report alone."""

from __future__ import annotations

import shutil
from pathlib import Path

import orjson
from replaykit import cli, write_bench

from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.store.database import Store


def test_grade_reproduces_the_whole_demo_run(demo_db):
    store = Store(demo_db)
    [run] = [r for r in store.runs() if r["kind"] == "demo"]
    stored = store.verdicts(grading_id=store.gradings()[0]["id"])
    out = cli("grade", run["id"][:10], "--db", demo_db)
    assert out.code == 0, out.stdout + out.stderr
    assert out.lines[-1] == f"{len(stored)}/{len(stored)} verdicts reproduced · 0 diverged · 0 could not re-grade · 3 session(s)"
    # exec checks were re-run against the restored workspace, not skipped
    assert out.stdout.count("REPRODUCED         checks[0]  assert-set") == 3  # holds the two exec checks
    assert "REPRODUCED         checks[1]  any-of: PASS" in out.stdout
    # the pass is a new grading, source control, with the same check set
    graded = [g for g in Store(demo_db).gradings() if g["source"] == "control"]
    assert graded and graded[-1]["checkset_sha256"] == store.gradings()[0]["checkset_sha256"]
    assert len(Store(demo_db).verdicts(grading_id=graded[-1]["id"])) == len(stored)


def test_grade_twice_still_reproduces_the_first_grading(demo_db):
    out = cli("grade", "--all", "--db", demo_db, "--json")
    assert out.code == 0
    doc = out.json()
    assert doc["counts"] == {"REPRODUCED": 8, "DIVERGED": 0, "COULD NOT RE-GRADE": 0, "SKIPPED": 0}
    assert len(doc["reproduces"]) == 1  # each session's first grading, not the control passes


NONDET = """
description: a check that reads a file outside the workspace
harness: mock
defaults: {{sandbox: home, timeout: 30s}}
scenarios:
  - name: outside
    prompt: "say done"
    mock:
      steps: [{{say: "done"}}]
    checks:
      - {{type: contains, value: done}}
      - type: exec
        args: {{cmd: [test, -f, "{flag}"]}}
"""


def test_a_nondeterministic_check_diverges(tmp_path):
    flag = tmp_path / "outside" / "flag"
    flag.parent.mkdir()
    flag.write_text("on")
    bench = write_bench(tmp_path, NONDET.format(flag=flag))
    db = tmp_path / "g.db"
    assert cli("run", bench, "--db", db).code == 0
    assert cli("grade", "--all", "--db", db).code == 0  # nothing changed yet: it reproduces
    flag.unlink()
    out = cli("grade", "--all", "--db", db)
    assert out.code == 1
    assert "REPRODUCED         checks[0]  contains: PASS 1.00" in out.stdout
    assert "DIVERGED           checks[1]  exec" in out.stdout
    assert "stored : PASS 1.00" in out.stdout and "now    : FAIL 0.00" in out.stdout
    assert out.lines[-1] == "1/2 verdicts reproduced · 1 diverged · 0 could not re-grade · 1 session(s)"


REPORTED = """
description: exec and string checks, graded from a report
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: writes
    prompt: "write ok.txt"
    transform: {python: "output.upper()"}
    mock:
      steps:
        - tool: Write
          input: {file_path: ok.txt, content: "ok"}
        - say: "wrote it"
      metrics: {cost_usd: 0.01}
    checks:
      - {type: contains, value: "WROTE"}
      - type: exec
        args: {cmd: [test, -f, ok.txt]}
      - {type: cost, threshold: 0.05}
"""


def _run_with_reports(tmp_path: Path) -> tuple[Path, Path, Path]:
    bench = write_bench(tmp_path / "bench", REPORTED)
    db, report, folder = tmp_path / "r.db", tmp_path / "out.json", tmp_path / "reports"
    out = cli("run", bench, "--db", db, "--report-json", report, "--report-dir", folder)
    assert out.code == 0, out.stdout + out.stderr
    return db, report, folder


def test_grade_from_a_report_json_alone(tmp_path):
    db, report, _ = _run_with_reports(tmp_path)
    for f in tmp_path.glob("r.db*"):
        f.unlink()  # no database: the report is the only input
    out = cli("grade", report)
    assert out.code == 0  # the spec: what the report cannot re-grade is SKIPPED; everything re-graded reproduced
    assert "REPRODUCED         checks[0]  contains: PASS" in out.stdout  # the scenario transform was applied again
    assert "REPRODUCED         checks[2]  cost: PASS" in out.stdout
    assert "SKIPPED            checks[1]  exec" in out.stdout  # it reads a workspace this report does not carry
    assert "--report-dir" in out.stdout and "database" in out.stdout
    assert out.lines[-1] == "2/2 verdicts reproduced · 0 diverged · 0 could not re-grade · 1 skipped (what they read is not in the input) · 1 session(s)"
    assert not db.exists()


def test_grade_from_a_report_dir_restores_the_snapshot(tmp_path):
    _, _, folder = _run_with_reports(tmp_path)
    for f in tmp_path.glob("r.db*"):
        f.unlink()
    moved = tmp_path / "elsewhere"
    shutil.move(str(folder), str(moved))  # the folder is self-contained
    [report] = moved.glob("*.json")
    assert list((moved / report.stem / "snapshots").glob("*.tar"))
    out = cli("grade", report)
    assert out.code == 0, out.stdout
    assert "REPRODUCED         checks[1]  exec: PASS" in out.stdout
    assert out.lines[-1] == "3/3 verdicts reproduced · 0 diverged · 0 could not re-grade · 1 session(s)"


def test_grade_from_the_stream_of_a_report_dir_restores_the_snapshot_too(tmp_path):
    """RUN_ID.jsonl (streamed as sessions finish) is a report too: once the run has ended its
    snapshots are beside it, so an exec check re-grades from them (it was SKIPPED, and told the
    user to write the report with --report-dir, which they had). Before the end, the reason says
    the snapshot is not there yet."""
    _, _, folder = _run_with_reports(tmp_path)
    for f in tmp_path.glob("r.db*"):
        f.unlink()
    [stream] = folder.glob("*.jsonl")
    out = cli("grade", stream)
    assert out.code == 0, out.stdout
    assert "REPRODUCED         checks[1]  exec: PASS" in out.stdout
    shutil.rmtree(folder / stream.stem / "snapshots")  # as mid-run: the stream is there, the snapshots not yet
    out = cli("grade", stream, "--db", tmp_path / "gone.db")
    assert "SKIPPED            checks[1]  exec" in out.stdout and "not beside the report yet" in out.stdout and "--report-dir writes them when the run ends" in out.stdout
    assert "the database --db names" in out.stderr


def test_grade_a_missing_report_is_bad_input(tmp_path):
    out = cli("grade", tmp_path / "nope.json")
    assert out.code == 2 and "no such report" in out.stderr


SCRIPTED = """
description: a python grader loaded from a file
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: scripted
    prompt: "say yes"
    mock: {steps: [{say: "yes"}]}
    checks:
      - {type: python, value: "file://graders/yes.py"}
      - {type: contains, value: "yes"}
"""


def test_a_gone_script_and_a_refused_type_cannot_be_regraded(tmp_path):
    bench = write_bench(tmp_path, SCRIPTED)
    grader = tmp_path / "graders" / "yes.py"
    grader.parent.mkdir()
    grader.write_text("def evaluate(output, context):\n    return 'yes' in output\n")
    db = tmp_path / "s.db"
    assert cli("run", bench, "--db", db).code == 0
    grader.unlink()
    # a verdict whose check type this benchtape refuses (as if graded by another version)
    store = Store(db)
    sid = next(store.session_rows()).id
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="0")
    store.add_verdicts(gid, sid, [{"check_path": "checks[0]", "type": "no-such-check", "spec": {"type": "no-such-check"}, "spec_sha256": "h", "result": Result.of(True)}])
    out = cli("grade", "--all", "--db", db)
    assert out.code == 1
    assert "COULD NOT RE-GRADE checks[0]  python: its script file is gone" in out.stdout
    assert "REPRODUCED         checks[1]  contains: PASS" in out.stdout
    out = cli("grade", "--all", "--grading", gid, "--db", db)
    assert out.code == 1
    assert 'COULD NOT RE-GRADE checks[0]  no-such-check: the check is refused now: unknown check type "no-such-check"' in out.stdout


def test_nothing_to_regrade_exits_3(tmp_path):
    store = Store(tmp_path / "n.db")
    run = store.new_run("import")
    sid = store.new_session(run, "imported")
    store.append(sid, [Action("session.started", {"scenario": "imported"}), Action("final_output", {"text": "hi"})])
    out = cli("grade", "--all", "--db", tmp_path / "n.db")
    assert out.code == 3
    assert "nothing to re-grade" in out.stdout


def test_grade_needs_something_named(tmp_path):
    Store(tmp_path / "e.db").close()
    out = cli("grade", "--db", tmp_path / "e.db")
    assert out.code == 2 and "nothing named to re-grade" in out.stderr


def test_the_report_carries_what_grade_needs(tmp_path):
    _, report, _ = _run_with_reports(tmp_path)
    doc = orjson.loads(report.read_bytes())
    row = doc["results"][0]
    assert row["grading_context"] == {"vars": {}, "transform": {"python": "output.upper()"}, "control": False, "runtimes": {}}
    assert row["run_id"] == doc["run_id"]
    assert all({"spec", "spec_sha256", "path", "status"} <= c.keys() for c in row["checks"])
