"""`benchtape model serve` and `benchtape script` as a person runs them."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

from cli import ROOT, benchtape

from benchtape.store.database import Store

SCRIPT = "steps:\n  - tool: Bash\n    input: {command: ls}\n  - say: done\n"


def start(script: Path, *args: str) -> tuple[subprocess.Popen, str, str]:
    """The server started, its URL, and what it printed after the first line that the first
    read already took: the first line is read from the pipe's bytes by hand, because a text
    readline buffers whatever follows it, which communicate() (reading the pipe itself) never
    sees (the setup lines went missing whenever they reached the pipe with the first line)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "benchtape", "model", "serve", str(script), *args],
        env={**os.environ, "NO_COLOR": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None
    got = b""
    while b"\n" not in got:
        chunk = os.read(proc.stdout.fileno(), 4096)
        if not chunk:
            break
        got += chunk
    first, _, rest = got.decode().partition("\n")
    found = re.search(r"on (http://127\.0\.0\.1:\d+)", first)
    assert found, first + (proc.stderr.read().decode() if proc.stderr else "")
    return proc, found.group(1), rest


def test_serve_prints_the_setup_answers_and_stops_on_ctrl_c(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    proc, url, early = start(script, "--harness", "claude-code")
    try:
        body = {"model": "m", "stream": False, "tools": [{"name": "Bash"}], "messages": [{"role": "user", "content": "go"}]}
        request = urllib.request.Request(url + "/v1/messages", data=json.dumps(body).encode(), method="POST")
        answer = json.loads(urllib.request.urlopen(request, timeout=10).read())
        assert answer["content"][0]["input"] == {"command": "ls"}
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            raw_out, raw_err = proc.communicate(timeout=15)  # reading stops at the deadline: a server that ignores Ctrl-C fails, never hangs
        except subprocess.TimeoutExpired:
            proc.kill()
            raw_out, raw_err = proc.communicate(timeout=15)
    out, err = early + raw_out.decode(), raw_err.decode()
    assert proc.returncode == 0, err
    assert f"export ANTHROPIC_BASE_URL={url}" in out and "DISABLE_AUTOUPDATER=1" in out and "config.toml" not in out
    assert "main turn 1/2" in err and "stopped: 1 scripted turn(s) and 0 chat reply(ies) served" in err


def test_a_port_in_use_is_exit_2_naming_it(tmp_path):
    script = tmp_path / "s.yaml"
    script.write_text(SCRIPT)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        done = benchtape("model", "serve", str(script), "--port", str(port), timeout=30)
    assert done.returncode == 2
    assert f"port {port} on 127.0.0.1 is already in use" in done.stderr and "--port 0" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_script_is_exit_2_with_file_line_and_fix(tmp_path):
    script = tmp_path / "bad.yaml"
    script.write_text("steps:\n  - tool: Read\n    inputs: {file_path: a}\n")
    done = benchtape("model", "serve", str(script), timeout=30)
    assert done.returncode == 2 and f"{script}:3: unknown key `inputs`" in done.stderr and "did you mean `input:`" in done.stderr


def test_codex_refuses_a_step_it_has_no_tool_for(tmp_path):
    script = tmp_path / "skill.yaml"
    script.write_text("steps:\n  - say: hi\n  - skill: review\n")
    done = benchtape("model", "serve", str(script), "--harness", "codex", timeout=30)
    assert done.returncode == 2 and f"{script}:3:" in done.stderr and "no Codex tool" in done.stderr


def test_script_writes_a_stored_sessions_model_side(tmp_path):
    db = tmp_path / "bt.db"
    ran = benchtape("run", str(ROOT / "fixtures-red" / "demo" / "bench.yaml"), "--db", str(db), "--scenario", "fixes-the-bug", timeout=120)
    assert ran.returncode in (0, 1), ran.stderr
    (session_id,) = [row[0] for row in Store(db).db.execute("SELECT id FROM sessions")]
    out = tmp_path / "replay.yaml"
    done = benchtape("script", session_id[:10], "-o", str(out), "--db", str(db))
    assert done.returncode == 0, done.stderr
    from benchtape.spec.script import load_script

    script = load_script(out)
    assert script.turns and any(c.tool == "Edit" for t in script.turns for c in t.calls)
    assert out.read_text().startswith(f"# The model side of session {session_id}")
    missing = benchtape("script", "ZZZZ", "--db", str(db))
    assert missing.returncode == 2 and "no session with id 'ZZZZ'" in missing.stderr
    assert not list(tmp_path.glob(".*.partial"))
