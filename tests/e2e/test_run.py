"""`benchtape run` and `benchtape demo` end to end: real subprocesses, a real SQLite file."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli import DEMO, benchtape, popen

from benchtape.store.database import Store


def write_bench(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "bench.yaml"
    p.write_text(textwrap.dedent(text).lstrip())
    return p


@pytest.fixture(scope="module")
def demo_run(tmp_path_factory):
    d = tmp_path_factory.mktemp("demo")
    out = benchtape("demo", "--db", d / "demo.db", "--report-json", d / "report.json", cwd=d)
    return d, out


def test_demo_three_verdicts_and_exit_zero(demo_run):
    d, out = demo_run
    assert out.returncode == 0, out.stderr
    report = json.loads((d / "report.json").read_text())
    status = {r["scenario_id"]: r["status"] for r in report["results"]}
    assert status == {"fixes-the-bug": "pass", "wrong-fix": "fail", "weakens-the-test": "fail"}
    cheat = next(r for r in report["results"] if r["scenario_id"] == "weakens-the-test")
    tests_and_guard = cheat["checks"][0]
    assert tests_and_guard["type"] == "assert-set" and tests_and_guard["status"] == "FAIL"
    # the tests "pass" (the agent deleted the failing ones) but the anti-cheat guard fails
    assert [c["status"] for c in tests_and_guard["result"]["evidence"]["children"]] == ["PASS", "FAIL"]
    assert "└ exec" in out.stdout
    assert "2 failed — scenario outcomes, not a harness crash" in out.stdout
    assert f"database: {d / 'demo.db'}" in out.stdout and "benchtape query" in out.stdout


def test_report_shape(demo_run):
    d, _ = demo_run
    report = json.loads((d / "report.json").read_text())
    assert report["summary"] == {"total": 3, "passed": 1, "failed": 2, "errors": 0, "skipped": 0}
    r = report["results"][0]
    assert {"scenario_id", "status", "session_id", "checks", "session", "metadata", "description"} <= r.keys()
    assert {"type", "spec", "result", "error"} <= r["checks"][0].keys()
    assert {"pass", "score", "reason", "evidence"} <= r["checks"][0]["result"].keys()
    assert {"final_output", "actions", "calls", "subagents", "metrics", "work_dir", "environment"} <= r["session"].keys()


def test_mock_edit_really_changes_the_file_exec_then_tests(demo_run, tmp_path):
    d, _ = demo_run
    store = Store(d / "demo.db")
    sid = next(s.id for s in store.session_rows() if s.scenario == "fixes-the-bug")
    session = store.load_session(sid)
    edit = next(c for c in session.calls if c.tool == "Edit")
    assert edit.outcome == "ok"
    bash = next(c for c in session.calls if c.tool == "Bash")
    assert bash.outcome == "ok"  # the agent's own test run after the edit passed
    from benchtape.replay.grading import StoredSnapshot

    assert StoredSnapshot(store, session).restore(tmp_path / "final")
    assert "return a + b" in (tmp_path / "final" / "calc.py").read_text()


def test_every_action_is_in_the_store_with_a_lifecycle(demo_run):
    d, _ = demo_run
    con = sqlite3.connect(d / "demo.db")
    kinds = [k for (k,) in con.execute("SELECT kind FROM actions a JOIN sessions s ON s.id = a.session_id WHERE s.scenario = 'fixes-the-bug' ORDER BY seq")]
    assert kinds[0] == "session.started" and kinds[-1] == "session.finished"
    assert {"tool.call", "tool.result", "thinking", "message.assistant", "metrics", "workspace.snapshot"} <= set(kinds)
    assert con.execute("SELECT COUNT(*) FROM raw").fetchone()[0] > 0
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


MOCK_SLOW = """
description: slow
harness: mock
defaults: {interactive: false}
scenarios:
  - name: slow
    prompt: p
    timeout: {timeout}
    testdata: td
    mock:
      steps:
        - tool: Read
          input: {file_path: a.txt}
        - tool: Bash
          input: {command: "sleep {sleep}; echo late > {marker}"}
        - say: done
    checks:
      - {type: contains, value: done}
"""


def _slow_bench(tmp_path: Path, timeout: str, sleep: float) -> tuple[Path, Path]:
    (tmp_path / "td").mkdir()
    (tmp_path / "td" / "a.txt").write_text("hello\n")
    marker = tmp_path / "late.txt"
    text = MOCK_SLOW.replace("{timeout}", timeout).replace("{sleep}", str(sleep)).replace("{marker}", str(marker))
    return write_bench(tmp_path, text), marker


def test_timeout_kills_the_process_group_and_is_recorded(tmp_path):
    bench, marker = _slow_bench(tmp_path, "1s", 2)
    out = benchtape("run", bench, "--db", tmp_path / "t.db", "--report-json", tmp_path / "r.json")
    assert out.returncode == 1
    report = json.loads((tmp_path / "r.json").read_text())
    r = report["results"][0]
    assert r["outcome"] == "error" and r["session"]["timed_out"] is True and r["session"]["status"] == "timeout"
    assert report["summary"]["errors"] == 1
    time.sleep(2.5)
    assert not marker.exists(), "the harness's child survived the timeout"
    store = Store(tmp_path / "t.db")
    last = store.actions(r["session_id"])[-1]
    assert last.kind == "session.finished" and last.data["timed_out"] is True


def test_kill_minus_nine_keeps_every_action_received(tmp_path):
    bench, _ = _slow_bench(tmp_path, "60s", 3)
    db = tmp_path / "k.db"
    own_tmp = tmp_path / "tmp"  # its session folder stays here: no other test's run recovers it meanwhile
    own_tmp.mkdir()
    env = {**os.environ, "NO_COLOR": "1", "TMPDIR": str(own_tmp)}
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    seen = False
    while time.monotonic() < deadline and not seen:
        time.sleep(0.1)
        if db.exists():
            try:
                con = sqlite3.connect(db)
                seen = con.execute("SELECT COUNT(*) FROM actions WHERE kind = 'tool.call' AND data LIKE '%sleep%'").fetchone()[0] > 0
                con.close()
            except sqlite3.OperationalError:
                pass
    assert seen, "the Bash call was never recorded before it ran"
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    con = sqlite3.connect(db)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    kinds = [k for (k,) in con.execute("SELECT kind FROM actions ORDER BY seq")]
    assert kinds[:3] == ["session.started", "environment.expected", "message.user"]
    assert "tool.result" in kinds and kinds[-1] == "tool.call"  # the Read's result, then the Bash call
    assert "session.finished" not in kinds
    con.close()
    listed = benchtape("sessions", "--db", db)
    if listed.returncode == 0:  # `sessions` lists the session as incomplete
        assert "incomplete" in listed.stdout
    # what the harness printed after the kill is in its capture file: `recover` finishes the session
    recovered = benchtape("recover", "--db", db, env={"TMPDIR": str(own_tmp)})
    assert recovered.returncode == 0 and "recovered session" in recovered.stdout, recovered.stdout + recovered.stderr
    con = sqlite3.connect(db)
    finished = con.execute("SELECT json_extract(data, '$.status'), json_extract(data, '$.recovered') FROM actions WHERE kind = 'session.finished'").fetchall()
    con.close()
    assert finished == [("interrupted", 1)] and list(own_tmp.iterdir()) == []


def test_bad_input_exits_2_and_writes_nothing(tmp_path):
    bench = write_bench(tmp_path, "name: oops\nscenarios: [{prompt: p}]\n")
    out = benchtape("run", bench, "--db", tmp_path / "x.db")
    assert out.returncode == 2
    assert "bench.yaml:1" in out.stderr and "description" in out.stderr and "Traceback" not in out.stderr
    assert not (tmp_path / "x.db").exists()


def test_unknown_check_type_blocks_preflight_exit_3(tmp_path):
    bench = write_bench(tmp_path, "harness: mock\nscenarios: [{prompt: p, checks: [{type: contans, value: x}]}]\n")
    out = benchtape("run", bench, "--db", tmp_path / "x.db")
    assert out.returncode == 3
    assert 'unknown check type "contans"' in out.stderr and "contains" in out.stderr
    assert "nothing was run" in out.stderr
    out = benchtape("preflight", bench)
    assert out.returncode == 3
    assert benchtape("list", bench).returncode == 0  # list parses only


def test_sandbox_none_needs_both_gates(tmp_path):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: here
            prompt: p
            sandbox: {{level: none, workdir: {tmp_path}}}
            mock: {{steps: [{{tool: Write, input: {{file_path: made.txt, content: x}}}}, {{say: ok}}]}}
            checks: [{{type: contains, value: ok}}]
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db")
    assert out.returncode == 3 and "--allow-host-writes" in out.stderr
    assert not (tmp_path / "made.txt").exists()
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--allow-host-writes")
    assert out.returncode == 0, out.stderr
    assert (tmp_path / "made.txt").read_text() == "x"


def test_mock_without_script_echoes_prompt_and_error_marker(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: echo, prompt: "say hi", checks: [{type: equals, value: "say hi"}]}
          - {name: boom, prompt: "!ERROR! now", checks: [{type: contains, value: now}]}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--report-json", tmp_path / "r.json")
    report = {r["scenario_id"]: r for r in json.loads((tmp_path / "r.json").read_text())["results"]}
    assert report["echo"]["status"] == "pass" and report["echo"]["session"]["calls"] == []
    assert report["boom"]["outcome"] == "error" and report["boom"]["status"] == "fail" and report["boom"]["session"]["status"] == "error"
    assert out.returncode == 1


def test_repeat_and_params(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        params: {word: alpha}
        scenarios:
          - {name: p, prompt: "{{word}}", checks: [{type: equals, value: beta}]}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--repeat", "2", "--param", "word=beta", "--report-json", tmp_path / "r.json")
    assert out.returncode == 0, out.stderr
    results = json.loads((tmp_path / "r.json").read_text())["results"]
    assert [r["attempt"] for r in results] == [1, 2]


def test_no_metrics_means_unknown_not_zero(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - {name: p, prompt: x, mock: {steps: [{say: hi}]}, checks: [{type: cost, threshold: 1}]}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--report-json", tmp_path / "r.json")
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert r["session"]["metrics"]["cost_usd"] is None and r["session"]["metrics"]["wall_ms"] > 0
    assert r["checks"][0]["status"] == "ERROR" and out.returncode == 1


def test_report_dir_is_versioned_per_invocation(tmp_path):
    for _ in range(2):
        assert benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-dir", tmp_path / "reports", "--scenario", "fixes-the-bug").returncode == 0
    reports = sorted((tmp_path / "reports").glob("*.json"))
    assert len(reports) == 2
    doc = json.loads(reports[0].read_text())
    assert doc["complete"] is True and doc["results"][0]["session"]["snapshot"]["sha256"]
    assert list((tmp_path / "reports").glob("*/snapshots/*.tar"))


def test_ctrl_c_exits_130_and_keeps_what_was_recorded(tmp_path):
    bench, marker = _slow_bench(tmp_path, "60s", 20)
    db = tmp_path / "i.db"
    proc = popen("run", bench, "--db", db, "--plain")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        time.sleep(0.1)
        try:
            con = sqlite3.connect(db)
            if con.execute("SELECT COUNT(*) FROM actions WHERE kind = 'tool.call' AND data LIKE '%sleep%'").fetchone()[0]:
                break
        except sqlite3.OperationalError:
            pass
    proc.send_signal(signal.SIGINT)
    assert proc.wait(30) == 130
    con = sqlite3.connect(db)
    last = con.execute("SELECT kind, data FROM actions ORDER BY seq DESC LIMIT 1").fetchone()
    assert last[0] == "session.finished" and json.loads(last[1])["status"] == "interrupted"
    assert "interrupted" in proc.stderr.read()
    time.sleep(0.5)
    assert not marker.exists()


def test_keep_sandbox_says_where_and_how_to_remove_it(tmp_path):
    out = benchtape("run", DEMO, "--db", tmp_path / "x.db", "--scenario", "wrong-fix", "--keep-sandbox", "--plain")
    line = next(ln for ln in out.stderr.splitlines() if ln.startswith("kept sandbox of wrong-fix #1: "))
    kept = Path(line.split(": ", 1)[1].split()[0])
    assert "a - b" not in (kept / "work" / "calc.py").read_text()  # the agent's final tree, left for debugging
    import shutil

    shutil.rmtree(kept)


def test_bare_command_finds_madbench_yaml_here(tmp_path):
    out = benchtape("run", "--db", tmp_path / "x.db", cwd=tmp_path)
    assert out.returncode == 2 and f"no madbench.yaml or madbench.yml in {tmp_path}" in out.stderr
    (tmp_path / "madbench.yml").write_text("harness: mock\nscenarios: [{name: a, prompt: hi, checks: [{type: equals, value: hi}]}]\n")
    assert benchtape("run", "--db", tmp_path / "x.db", cwd=tmp_path).returncode == 0
    assert benchtape("list", cwd=tmp_path).returncode == 0
    assert benchtape("preflight", cwd=tmp_path).returncode == 0


def test_report_junit(tmp_path):
    import xml.etree.ElementTree as ET

    out = benchtape("run", DEMO, "--db", tmp_path / "x.db", "--report-junit", tmp_path / "j.xml")
    assert out.returncode == 1
    suite = ET.parse(tmp_path / "j.xml").getroot()
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "2", "0")
    cases = {c.get("name"): c for c in suite.iter("testcase")}
    assert cases["fixes-the-bug#1"].find("failure") is None
    assert "assert-set: FAIL" in cases["weakens-the-test#1"].find("failure").text


def test_repeat_reports_pass_rate_and_flags_flaky(tmp_path):
    counter = tmp_path / "n"
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: coin
            prompt: p
            checks:
              - type: exec
                args: {{cmd: [sh, -c, 'n=$(cat {counter} 2>/dev/null || echo 0); echo $((n+1)) > {counter}; test $((n % 2)) = 0']}}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--repeat", "2", "--concurrency", "1")
    assert out.returncode == 1
    assert "coin: 1/2 passed  FLAKY" in out.stdout


def test_concurrency_runs_scenarios_at_once(tmp_path):
    steps = '{steps: [{tool: Bash, input: {command: "sleep 1"}}, {say: ok}]}'
    scenarios = "\n".join(f"  - {{name: s{i}, prompt: p, mock: {steps}, checks: [{{type: equals, value: ok}}]}}" for i in range(4))
    bench = write_bench(tmp_path, "harness: mock\nscenarios:\n" + scenarios + "\n")
    assert benchtape("run", bench, "--db", tmp_path / "a.db", "--concurrency", "4").returncode == 0
    con = sqlite3.connect(tmp_path / "a.db")
    spans = con.execute("SELECT MIN(at), MAX(at) FROM actions GROUP BY session_id").fetchall()
    # every session had started before any of them finished: they ran at once (recorded times, not a wall-clock bound)
    assert len(spans) == 4 and max(start for start, _ in spans) < min(end for _, end in spans), spans


def test_budget_and_token_estimate_are_shown_never_enforced(tmp_path):
    bench = write_bench(tmp_path, """
        harness: mock
        budget: 0.01
        token_estimate: 10
        scenarios:
          - {name: a, prompt: p, mock: {steps: [{say: p}], metrics: {cost_usd: 0.02, tokens_in: 100, tokens_out: 20}}, checks: [{type: equals, value: p}]}
          - {name: b, prompt: p, checks: [{type: equals, value: p}]}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db")
    assert out.returncode == 0  # over budget, still a pass: the gauge is informational
    assert "budget $0.01 (informational, not enforced): $0.0200 reported by 1 of 2 session(s)" in out.stdout
    assert "token estimate 10 (informational, not enforced): 120 tokens reported by 1 of 2 session(s)" in out.stdout


def test_cwd_moves_only_the_agent_and_a_missing_one_blocks(tmp_path):
    (tmp_path / "td" / "pkg").mkdir(parents=True)
    (tmp_path / "td" / "pkg" / "x.txt").write_text("x")
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: sub
            prompt: p
            testdata: td
            cwd: pkg
            mock: {steps: [{tool: Bash, input: {command: "pwd"}}, {say: ok}]}
            checks:
              - {type: exec, args: {cmd: [test, -f, pkg/x.txt]}}   # checks resolve against the root
              - {type: session:tool-used, value: Bash, args: {outcome: ok}}
        """)
    out = benchtape("run", bench, "--db", tmp_path / "x.db", "--report-json", tmp_path / "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    session = json.loads((tmp_path / "r.json").read_text())["results"][0]["session"]
    assert session["calls"][0]["output"].strip().endswith("/work/pkg")  # the agent started in cwd
    assert session["work_dir"].endswith("/work")  # Session.WorkDir stays the root
    bad = write_bench(tmp_path, "harness: mock\nscenarios: [{name: a, prompt: p, testdata: td, cwd: nope}]\n", )
    out = benchtape("preflight", bad)
    assert out.returncode == 3 and "`cwd: nope` does not exist in the testdata" in out.stderr
