"""kill -9 of a real `benchtape run`, at random moments (the reproduction; `make bench` runs more)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import pytest
from killkit import SETTINGS, Trial, run_trial, tagged_processes

pytestmark = pytest.mark.xdist_group("kill")  # one at a time: each is timing-sensitive


def _assert_clean(t: Trial) -> None:
    assert t.ledger > 0, f"killed before the agent made a call: {t}"
    assert t.lost == 0, t
    assert t.processes == [], t
    assert t.containers == [], t
    assert t.temp_left == [], t
    assert t.claude_restored, t
    assert t.statuses == ["interrupted"], t


@pytest.mark.parametrize("seed", [1, 2])
def test_kill_9_mid_recording_loses_no_call_and_leaves_nothing_behind(tmp_path, seed):
    """Workspace level with a fake HOME whose ~/.claude the agent changes: after `recover`,
    every call the agent printed is stored, the session is `interrupted`, no process and no
    temp folder is left, and ~/.claude is as it was."""
    # 400 calls with a 4 ms pause last 1.6 s or more: a kill within 1.2 s of the first always lands mid-session
    _assert_clean(run_trial(tmp_path, level="workspace", calls=400, kill_window=(0.0, 1.2), seed=seed))


def test_kill_9_during_a_quiet_call_leaves_no_agent_running(tmp_path):
    """An agent busy in a long tool call prints nothing when benchtape dies, so nothing breaks
    its pipe: before, it ran on orphaned; its supervisor kills it now."""
    t = run_trial(tmp_path, level="home", calls=5, final_sleep=60, kill_window=(0.5, 0.8), seed=3)
    _assert_clean(t)


def test_the_next_start_of_benchtape_recovers_what_a_killed_one_left(tmp_path):
    """No `recover` by hand: the next `benchtape run` ingests the orphan, finishes its session
    and puts ~/.claude back before it runs anything."""
    from killkit import bench_text

    home, tmp, ledger = tmp_path / "home", tmp_path / "tmp", tmp_path / "ledger"
    for d in (home / ".claude", tmp, ledger):
        d.mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(SETTINGS)
    bench = tmp_path / "bench.yaml"
    made = '        - tool: Bash\n          input: {command: "echo made > made.txt"}\n'  # the agent's work, in its workspace
    bench.write_text(bench_text("workspace", 150, str(ledger / "calls"), 0.004).replace("steps:\n", "steps:\n" + made, 1))
    env = {**os.environ, "HOME": str(home), "TMPDIR": str(tmp), "KILLTAG": "next-start", "NO_COLOR": "1"}
    db = tmp_path / "bt.db"
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    while not (ledger / "calls").exists() and time.monotonic() < deadline:
        time.sleep(0.01)
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    other = tmp_path / "other.yaml"
    other.write_text("harness: mock\nscenarios: [{name: hello, prompt: hi}]\n")
    ran = subprocess.run([sys.executable, "-m", "benchtape", "run", str(other), "--db", str(db), "--plain"], env=env, capture_output=True, text=True, timeout=120)
    assert ran.returncode == 0, ran.stderr
    assert "recovered session" in ran.stderr and "put back" in ran.stderr
    assert (home / ".claude" / "settings.json").read_text() == SETTINGS
    assert sorted(p.name for p in tmp.iterdir()) == []
    assert list(tagged_processes("next-start")) == []
    import sqlite3

    con = sqlite3.connect(db)
    statuses = sorted(row[0] for row in con.execute("select json_extract(data, '$.status') from actions where kind = 'session.finished'"))
    con.close()
    assert statuses == ["interrupted", "ok"]
    # the killed session's final workspace was snapshotted by the recovery: the agent's work is kept
    (killed,) = [r[0] for r in sqlite3.connect(db).execute("select session_id from actions where kind = 'session.finished' and json_extract(data, '$.status') = 'interrupted'")]
    out = subprocess.run([sys.executable, "-m", "benchtape", "export", killed, tmp_path / "final", "--db", str(db)], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert (tmp_path / "final" / "made.txt").read_text() == "made\n"


@pytest.mark.docker
def test_kill_9_of_a_container_run_removes_its_container(tmp_path, docker_client, base_image):
    _assert_clean(run_trial(tmp_path, level="container", calls=150, kill_window=(0.0, 1.2), seed=4))


def test_sigterm_stops_a_run_as_ctrl_c_does(tmp_path):
    """`timeout`, `docker stop` and a CI's cancel send SIGTERM: the run stops as at Ctrl-C
    (madbench's 130), its session kept as interrupted with its final workspace and graded,
    not left for `recover` (SIGTERM's default ended Python at once: 143, nothing graded)."""
    import sqlite3

    bench = tmp_path / "bench.yaml"
    bench.write_text(
        "harness: mock\nscenarios:\n  - name: slow\n    prompt: work\n    sandbox: workspace\n    mock:\n      steps:\n"
        '        - {tool: Bash, input: {command: "echo made > made.txt; echo started > ' + str(tmp_path / "started") + '"}}\n'
        '        - {tool: Bash, input: {command: "sleep 120"}}\n        - {say: done}\n'
        "    checks: [{type: session:tool-used, value: Bash}]\n"
    )
    db = tmp_path / "s.db"
    reports = ["--report-json", str(tmp_path / "r.json"), "--report-junit", str(tmp_path / "r.xml"), "--report-dir", str(tmp_path / "rep")]
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain", *reports], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 60
    while not (tmp_path / "started").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    time.sleep(0.5)
    proc.send_signal(signal.SIGTERM)
    out, _ = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted: what was recorded stays recorded" in out, out
    # every report asked for says what was recorded, and that the run was cut short (--report-dir's did; the other two were never written)
    import json

    report = json.loads((tmp_path / "r.json").read_text())
    assert report["complete"] is False and [r["scenario_id"] for r in report["results"]] == ["slow"], report
    [dir_report] = (tmp_path / "rep").glob("*.json")
    assert json.loads(dir_report.read_text())["complete"] is False
    assert 'name="slow' in (tmp_path / "r.xml").read_text()
    con = sqlite3.connect(db)
    (sid,) = [r[0] for r in con.execute("select id from sessions")]
    kinds = [r[0] for r in con.execute("select kind from actions where session_id = ? order by seq", [sid])]
    status = con.execute("select json_extract(data, '$.status') from actions where kind = 'session.finished'").fetchone()[0]
    graded = con.execute("select count(*) from verdict_sets where session_id = ?", [sid]).fetchone()[0]
    con.close()
    assert status == "interrupted" and graded == 1
    assert kinds.count("workspace.snapshot") == 2  # the staged tree, and the final one
    done = subprocess.run([sys.executable, "-m", "benchtape", "export", sid, str(tmp_path / "final"), "--db", str(db)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and (tmp_path / "final" / "made.txt").read_text() == "made\n", done.stdout + done.stderr
