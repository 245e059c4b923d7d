"""The daily loop from a user's seat: errors that are messages (read-only places, unwritable
report paths: exit 2 before any spend), `--version`, a bench that lists before its testdata
exists, JUnit for CI, `grade REPORT` re-grading from the database the report names, and
`--report-dir` streaming as sessions finish."""

from __future__ import annotations

import json
import shutil
import sqlite3
import textwrap
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from cli import DEMO, benchtape, popen, read_only

from benchtape.core.version import VERSION


def write_bench(folder: Path, text: str) -> Path:
    p = folder / "bench.yaml"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


def _no_traceback(out) -> None:
    assert "Traceback" not in out.stderr and "Traceback" not in out.stdout, out.stderr


def test_version_flag():
    out = benchtape("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"benchtape {VERSION}"


def test_demo_in_a_read_only_folder_is_a_message_not_a_traceback(tmp_path):
    (tmp_path / "ro").mkdir()
    out = read_only(tmp_path / "ro", "demo", cwd=tmp_path / "ro")
    assert out.returncode == 2, out.stderr
    _no_traceback(out)
    assert "cannot create the database here" in out.stderr and ".benchtape/benchtape.db" in out.stderr and "--db" in out.stderr
    assert list((tmp_path / "ro").iterdir()) == []


def test_init_in_a_read_only_folder_is_a_message_and_writes_nothing(tmp_path):
    (tmp_path / "ro").mkdir()
    out = read_only(tmp_path / "ro", "init", tmp_path / "ro" / "mine")
    assert out.returncode == 2
    _no_traceback(out)
    assert "cannot write the starter bench here" in out.stderr and "fix:" in out.stderr
    assert list((tmp_path / "ro").iterdir()) == []
    ok = benchtape("init", tmp_path / "rw")
    assert ok.returncode == 0 and (tmp_path / "rw" / "madbench.yaml").is_file() and (tmp_path / "rw" / "calc" / "calc.py").is_file()
    assert [p.name for p in (tmp_path / "rw").iterdir() if p.name.startswith(".")] == []  # no staging left behind


@pytest.mark.parametrize("flag", ["--report-json", "--report-junit", "--report-dir"])
def test_an_unwritable_report_path_stops_the_run_before_any_session(tmp_path, flag):
    (tmp_path / "ro").mkdir()
    db = tmp_path / "x.db"
    target = tmp_path / "ro" / ("sub" if flag == "--report-dir" else "") / "out"  # a folder is made; a file's folder must exist
    out = read_only(tmp_path / "ro", "run", DEMO, "--db", db, flag, target)
    assert out.returncode == 2, out.stdout + out.stderr
    _no_traceback(out)
    assert f"{flag} {target} cannot be written" in out.stderr and "is not writable" in out.stderr
    if db.exists():
        assert sqlite3.connect(db).execute("SELECT COUNT(*) FROM sessions").fetchone() == (0,)


def test_a_report_path_under_a_file_or_onto_a_folder_is_refused_up_front(tmp_path):
    (tmp_path / "file").write_text("x")
    out = benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-json", tmp_path / "file" / "r.json")
    assert out.returncode == 2 and "is a file, not a folder" in out.stderr
    out = benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-junit", tmp_path)
    assert out.returncode == 2 and "it is a folder, not a file" in out.stderr
    assert not (tmp_path / "x.db").exists()  # refused before the store is opened: none left behind


@pytest.mark.parametrize("flag", ["--report-json", "--report-junit"])
def test_a_report_file_in_a_folder_that_does_not_exist_is_refused_naming_it(tmp_path, flag):
    """`report --html /nonexistent/dir/r.html` made the folders, silently; so did the run's report files."""
    db = tmp_path / "x.db"
    out = benchtape("run", DEMO, "--db", db, flag, tmp_path / "no" / "such" / "r.out")
    assert out.returncode == 2 and f"its folder {tmp_path / 'no' / 'such'} does not exist" in out.stderr, out.stderr
    assert not (tmp_path / "no").exists()
    assert benchtape("run", DEMO, "--db", db, "--scenario", "fixes-the-bug").returncode == 0
    out = benchtape("report", "latest", "--db", db, "--html", tmp_path / "nodir" / "r.html")
    assert out.returncode == 2 and f"its folder {tmp_path / 'nodir'} does not exist" in out.stderr and not (tmp_path / "nodir").exists()
    _no_traceback(out)


def test_report_html_to_an_unwritable_path(tmp_path):
    db = tmp_path / "x.db"
    assert benchtape("run", DEMO, "--db", db, "--scenario", "fixes-the-bug").returncode == 0
    (tmp_path / "ro").mkdir()
    out = read_only(tmp_path / "ro", "report", "latest", "--db", db, "--html", tmp_path / "ro" / "r.html")
    assert out.returncode == 2 and "--html" in out.stderr and "is not writable" in out.stderr
    _no_traceback(out)


def test_list_is_parse_only_and_preflight_names_a_missing_testdata(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: generated
            prompt: p
            testdata: made-by-setup
            checks: [{type: contains, value: p}]
        """)
    listed = benchtape("list", bench)
    assert listed.returncode == 0 and "generated" in listed.stdout
    for command in ("preflight", "run"):
        out = benchtape(command, bench, "--db", tmp_path / "x.db") if command == "run" else benchtape(command, bench)
        assert out.returncode == 3, (command, out.stderr)
        assert f"testdata {tmp_path / 'made-by-setup'} does not exist" in out.stderr + out.stdout


def test_junit_classname_is_the_bench_and_time_is_the_sessions(tmp_path):
    out = benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-junit", tmp_path / "j.xml", "--report-json", tmp_path / "r.json")
    assert out.returncode == 1
    suite = ET.parse(tmp_path / "j.xml").getroot()
    report = json.loads((tmp_path / "r.json").read_text())
    walls = {f"{r['scenario_id']}#{r['attempt']}": r["session"]["metrics"]["wall_ms"] for r in report["results"]}
    for case in suite.iter("testcase"):
        assert case.get("classname") == str(DEMO)
        assert float(case.get("time")) == pytest.approx(walls[case.get("name")] / 1000, abs=0.001) and float(case.get("time")) > 0
    assert float(suite.get("time")) == pytest.approx(sum(walls.values()) / 1000, abs=0.01)
    failure = next(c for c in suite.iter("testcase") if c.get("name") == "weakens-the-test#1").find("failure")
    assert failure.get("message") == "1 check(s) failed: assert-set"


def test_grade_a_report_uses_the_database_it_names_so_exec_checks_regrade(tmp_path):
    report = tmp_path / "r.json"
    assert benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-json", report, "--scenario", "fixes-the-bug").returncode == 0
    assert json.loads(report.read_text())["database"] == str((tmp_path / "x.db").resolve())
    out = benchtape("grade", report, "--json", cwd=tmp_path / ".." )
    doc = json.loads(out.stdout)
    assert out.returncode == 0 and doc["source"] == "database" and doc["counts"]["SKIPPED"] == 0
    assert doc["counts"]["REPRODUCED"] == 4  # the exec checks inside the assert-set too: the snapshot is in the database
    moved = tmp_path / "moved.json"
    shutil.copy(report, moved)
    for f in tmp_path.glob("x.db*"):
        f.unlink()
    alone = benchtape("grade", moved)
    assert alone.returncode == 0 and "is not here: re-grading from the report alone" in alone.stderr
    assert "SKIPPED" in alone.stdout


def test_report_dir_streams_json_lines_as_sessions_finish(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        defaults: {sandbox: workspace, timeout: 60s}
        scenarios:
          - name: quick
            prompt: p
            mock: {steps: [{say: "quick done"}]}
            checks: [{type: contains, value: done}]
          - name: slow
            prompt: p
            mock: {steps: [{sleep: 4}, {say: "slow done"}]}
            checks: [{type: contains, value: done}]
        """)
    reports = tmp_path / "reports"
    proc = popen("run", bench, "--db", tmp_path / "x.db", "--report-dir", reports, "--concurrency", "2", "--plain")
    deadline = time.monotonic() + 30
    lines: list[dict] = []
    while time.monotonic() < deadline and not lines:
        time.sleep(0.1)
        for f in reports.glob("*.jsonl") if reports.exists() else []:
            lines = [json.loads(line) for line in f.read_text().splitlines() if line.strip()]
    assert lines and proc.poll() is None, "a finished session's line appears while the run goes on"
    assert [(r["scenario_id"], r["status"]) for r in lines] == [("quick", "pass")]
    [stream] = reports.glob("*.jsonl")
    assert not stream.with_suffix(".json").exists()  # the report itself is written once, at the end
    mid = benchtape("grade", stream)
    assert mid.returncode == 0 and "quick #1" in mid.stdout
    assert proc.wait(60) == 0
    doc = json.loads(stream.with_suffix(".json").read_text())
    assert doc["complete"] is True and [r["scenario_id"] for r in doc["results"]] == ["quick", "slow"]
    assert doc["summary"] == {"total": 2, "passed": 2, "failed": 0, "errors": 0, "skipped": 0}
    assert len(stream.read_text().splitlines()) == 2


def test_the_stream_withholds_a_row_that_would_publish_the_answer_key(tmp_path):
    """A `generate:` value in a check spec: the row's line says it was withheld, and the report is refused, as before."""
    import sys

    gen = tmp_path / "gen.py"
    gen.write_text(f"#!{sys.executable}\nprint('ANSWER=fixed-answer-4410')\n")
    gen.chmod(0o755)
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: published
            prompt: a
            generate: gen.py
            mock: {steps: [{say: "I do not know"}]}
            checks:
              - {type: contains, value: fixed-answer-4410}
        """)
    reports = tmp_path / "reports"
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--report-dir", reports)
    assert out.returncode == 1 and "was NOT written" in out.stderr
    [stream] = reports.glob("*.jsonl")
    [line] = [json.loads(x) for x in stream.read_text().splitlines()]
    assert line["withheld"].startswith("a generated value (the answer key) would be published") and "fixed-answer-4410" not in stream.read_text()
    assert not stream.with_suffix(".json").exists()


def test_a_run_keeps_no_result_rows_in_memory(tmp_path):
    """The outcome of a run holds tallies and a spool on disk; the rows come back from disk, in scenario order."""
    from benchtape.app.api import load_benches, run_benches
    from benchtape.recorder.runner import RunOptions
    from benchtape.store.database import Store

    outcome = run_benches(load_benches([DEMO]), Store(tmp_path / "x.db"), RunOptions(concurrency=3))
    try:
        [run] = outcome.runs
        assert not any(isinstance(v, list) and v and isinstance(v[0], dict) for v in vars(run).values())  # no list of rows
        assert run.verdicts == {}  # kept only for the negative control's tally
        assert [r["scenario_id"] for r in run.results] == ["fixes-the-bug", "wrong-fix", "weakens-the-test"]
        assert outcome.tally.summary() == {"total": 3, "passed": 1, "failed": 2, "errors": 0, "skipped": 0}
        assert len(run.spool) == 3 and len(run.spool.index) == 12  # four numbers per session stay in memory
    finally:
        outcome.close()
    assert run.spool.file.closed
