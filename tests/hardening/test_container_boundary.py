"""The container boundary: what a process the agent leaves behind, a device node, a setuid file,
an engine-refused limit or a network other than none can do to the host or the run."""

from __future__ import annotations

import json
import os
import sqlite3

import pytest
from racekit import run_trials
from staging.stagekit import run_bench, write_bench

pytestmark = [pytest.mark.docker]


def _actions(db) -> list[dict]:
    con = sqlite3.connect(db)
    try:
        return [{"kind": k, **json.loads(d)} for k, d in con.execute("select kind, data from actions order by session_id, seq")]
    finally:
        con.close()


def test_a_swapper_left_in_the_container_never_gets_host_files_into_the_snapshot(tmp_path, docker_client, base_image):
    """After the agent exits, a process it left swaps workspace folders with links to /etc.
    Before: 42 host files in 8 of 30 sessions, 6 without a snapshot. `make bench` runs 100."""
    got = run_trials(tmp_path, trials=4)
    assert got["host_files"] == 0, got
    assert got["snapshots"] == got["sessions"] == 4, got


def test_the_agent_cannot_make_devices_and_leaves_no_setuid_file_on_the_host(tmp_path, docker_client, base_image):
    bench = write_bench(tmp_path, r"""
        harness: mock
        scenarios:
          - name: devices
            prompt: try
            sandbox: {level: container}
            mock:
              steps:
                - tool: Bash
                  input: {command: "python3 -c \"import os; os.mknod('disk', 0o666 | 0o60000, os.makedev(8, 0))\" 2>&1; cp /bin/sh suid-sh && chmod 4755 suid-sh && echo made; grep ' /workspace ' /proc/self/mountinfo"}
                - say: done
    """)
    ran = run_bench(bench, "--keep-sandbox")
    actions = _actions(ran.db)
    [output] = [a["output"] for a in actions if a["kind"] == "tool.result"]
    assert "Operation not permitted" in output and "made" in output
    started = next(a for a in actions if a["kind"] == "session.started")
    if os.geteuid() == 0:
        assert started["workspace_mount"] == "nosuid,nodev" and "nosuid,nodev" in output
    else:
        assert started["workspace_mount"].startswith("plain (")
    assert any("cleared the setuid/setgid bit" in a.get("what", "") for a in actions)
    kept = started["work_dir"]
    try:
        assert not os.path.lexists(os.path.join(kept, "disk"))
        assert os.stat(os.path.join(kept, "suid-sh")).st_mode & 0o6000 == 0
    finally:
        import shutil

        for c in docker_client.containers.list(all=True, filters={"label": f"benchtape.workspace={kept}"}):
            c.remove(force=True)
        shutil.rmtree(os.path.dirname(kept), ignore_errors=True)


def test_a_limit_the_engine_refuses_is_a_preflight_finding_not_a_traceback(tmp_path, docker_client, base_image):
    bench = write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: too-many-pids
            prompt: hi
            sandbox: {level: container, resources: {pids: 10000000}}
          - name: too-few-cpus
            prompt: hi
            sandbox: {level: container, resources: {cpus: 0.001}}
    """)
    ran = run_bench(bench, report=False)
    assert ran.code == 3 and "Traceback" not in ran.stderr
    assert "resources.pids 10000000 is more than the kernel allows" in ran.stderr
    assert "the engine refused resources {'cpus': 0.001}" in ran.stderr
    assert not ran.db.exists() or _actions(ran.db) == []


def test_a_sandbox_that_will_not_open_errors_its_session_and_the_run_goes_on(tmp_path, docker_client, base_image):
    """Past preflight (an engine that changed its mind): the session errors with the engine's
    reason, the other sessions run, no traceback."""
    from benchtape.recorder.bench_run import record_bench
    from benchtape.recorder.runner import RunOptions
    from benchtape.spec.bench import load_bench
    from benchtape.store.database import Store

    bench = load_bench(write_bench(tmp_path, """
        harness: mock
        scenarios:
          - name: refused
            prompt: hi
            sandbox: {level: container, resources: {pids: 10000000}}
          - name: fine
            prompt: hi
    """))
    store = Store(tmp_path / "direct.db")
    records = record_bench(store, bench, RunOptions(concurrency=1))
    assert sorted((r.scenario.name, r.status) for r in records) == [("fine", "ok"), ("refused", "error")]
    refused = next(r for r in records if r.scenario.name == "refused")
    [error] = [a.data["message"] for a in store.actions(refused.session_id) if a.kind == "error"]
    assert "the container sandbox could not be opened" in error and "10000000" in error


@pytest.mark.parametrize("network", ["host", "bridge"])
def test_a_network_other_than_none_must_be_confirmed(tmp_path, docker_client, base_image, network):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: online
            prompt: hi
            sandbox: {{level: container, network: {network}}}
    """)
    blocked = run_bench(bench, report=False)
    assert blocked.code == 3 and f"`network: {network}` gives the agent" in blocked.stderr and "--allow-network" in blocked.stderr
    assert not blocked.db.exists() or _actions(blocked.db) == []
    # confirmed: preflight only (this machine's containers stay off every network)
    from typer.testing import CliRunner

    from benchtape.cli import build

    confirmed = CliRunner().invoke(build(), ["preflight", str(bench), "--allow-network"], env={"NO_COLOR": "1"})
    assert confirmed.exit_code == 0, confirmed.stderr
    assert "confirmed by --allow-network" in confirmed.stdout + confirmed.stderr


HOSTILE = r"""
harness: mock
scenarios:
  - name: hostile
    prompt: misbehave
    timeout: 10s
    sandbox: {level: container}
    mock:
      steps:
        - tool: Bash
          input: {command: "python3 -c 'import socket; s = socket.socket(); s.settimeout(2); s.connect((\"1.1.1.1\", 80))' 2>&1 | tail -1; echo planted > /tmp/outside.txt; echo planted > /outside.txt; echo wrote-outside"}
        - tool: Bash
          input: {command: "(nohup sleep 600 >/dev/null 2>&1 &); (setsid sh -c 'sleep 600' >/dev/null 2>&1 &); python3 -c 'b = bytearray(4 * 1024**3); print(len(b))' 2>&1 | tail -1; echo allocated"}
        - tool: Bash
          input: {command: "setsid sh -c 'f() { f | f & }; f' >/dev/null 2>&1 & touch /workspace/last-step; sleep 600"}
        - say: done
"""


def test_a_hostile_agent_cannot_hold_its_session_past_the_timeout(tmp_path, docker_client, base_image):
    """Network probes, writes outside /workspace, background processes, a 4 GB allocation and a
    fork bomb, and then nothing in the container answers any more (it is frozen here: what a
    container starved of memory or pids does to a kill run inside it): the session still ends
    within its 10 s timeout and a small grace, and the container is gone. Before, a kill
    inside that never ran left the session running until the agent stopped by itself (a
    150 s timeout was still running at 400 s)."""
    import subprocess
    import sys
    import time

    bench = write_bench(tmp_path, HOSTILE)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp), "NO_COLOR": "1"}
    db = tmp_path / "s.db"
    started = time.monotonic()
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    marker = None
    while marker is None and proc.poll() is None and time.monotonic() - started < 120:
        marker = next(iter(tmp.glob("benchtape-*/work/last-step")), None)
        time.sleep(0.1)
    assert marker is not None, proc.stderr.read() if proc.poll() is not None and proc.stderr else "the last step never began"
    session_dir = str(marker.parent.parent)
    [container] = docker_client.containers.list(filters={"label": f"benchtape.session_dir={session_dir}"})
    in_last_step = time.monotonic()
    for _ in range(20):  # freezing a cgroup mid-fork-bomb can be refused for a moment ("device or resource busy")
        try:
            container.pause()
            break
        except Exception:  # noqa: BLE001 - docker.errors.APIError: try again
            time.sleep(0.2)
    try:
        proc.wait(timeout=90)
    finally:
        if proc.poll() is None:  # it held on: kill it, and have `recover` take down what it left (its container, its mount)
            proc.kill()
            proc.wait()
            container.unpause()
            subprocess.run([sys.executable, "-m", "benchtape", "recover", "--db", str(db)], env=env, capture_output=True, timeout=120)
    ended = time.monotonic() - in_last_step
    assert ended < 10 + 25, f"benchtape ran {ended:.0f}s after the agent's last step began (timeout 10s)"
    actions = _actions(db)
    finished = actions[-1]
    assert finished["kind"] == "session.finished" and finished["status"] == "timeout" and finished["wall_ms"] < (10 + 10) * 1000, finished
    results = [a["output"] for a in actions if a["kind"] == "tool.result"]
    assert "Network is unreachable" in results[0] and "wrote-outside" in results[0]
    assert "allocated" in results[1] and "4294967296" not in results[1]  # the allocation was refused or killed (memory 1g)
    assert any("the engine killed the whole container" in a.get("what", "") for a in actions)
    assert docker_client.containers.list(all=True, filters={"label": f"benchtape.session_dir={session_dir}"}) == []
    assert not os.path.exists("/outside.txt") or open("/outside.txt").read() != "planted\n"
