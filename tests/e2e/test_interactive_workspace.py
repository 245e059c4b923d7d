"""A bench that leaves `interactive:` unset (so the terminal UI) at `sandbox: workspace`, run as
madbench runs it (madbench-reference §1.8, §2.3): the first-run answers for this run's workdir
pre-seeded into the user's own `~/.claude.json` and `~/.claude/settings.json`, and every one of
the user's files put back byte for byte afterwards -- after a run, and after a kill -9 of
benchtape mid-session, through `benchtape recover`. The real Claude Code 2.1.328 against the
scripted model; HOME is a fake user's HOME in tmp, never the real one.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from cli import benchtape

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realagents import need  # noqa: E402

pytestmark = pytest.mark.xdist_group("interactive")
ROOT = Path(__file__).resolve().parents[2]


def _users_home(where: Path) -> Path:
    """What a Claude Code user has: a login's ~/.claude.json, settings with a hook of their own,
    a prompt history, an agent, an old project's transcript, a symlinked CLAUDE.md (a dotfile
    manager), a desktop's mime defaults."""
    home = where / "home"
    claude = home / ".claude"
    for d in ("agents", "projects/-old-project", "todos"):
        (claude / d).mkdir(parents=True)
    (home / ".claude.json").write_text(json.dumps({"numStartups": 41, "oauthAccount": {"emailAddress": "u@example.com"}, "projects": {"/src/mine": {"allowedTools": ["Bash"]}}}, indent=2) + "\n")
    (claude / "settings.json").write_text(json.dumps({"model": "opus", "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "true"}]}]}}) + "\n")
    (claude / "history.jsonl").write_text('{"display": "my own prompt", "project": "/src/mine"}\n')
    (claude / "agents" / "reviewer.md").write_text("reviewer\n")
    (claude / "projects" / "-old-project" / "s.jsonl").write_text("{}\n")
    (where / "dotfiles").mkdir()
    (where / "dotfiles" / "CLAUDE.md").write_text("my rules\n")
    (claude / "CLAUDE.md").symlink_to(where / "dotfiles" / "CLAUDE.md")
    (home / ".config").mkdir()
    (home / ".config" / "mimeapps.list").write_text("[Default Applications]\ntext/html=firefox.desktop\n")
    os.utime(home / ".claude.json", (1_600_000_000, 1_600_000_000))
    return home


def _every_file(home: Path) -> dict[str, tuple]:
    """Each path under HOME: its type, mode, and bytes or link target (plugins/ is reported, not undone)."""
    out: dict[str, tuple] = {}
    for dirpath, dirnames, filenames in os.walk(home):
        for name in dirnames + filenames:
            p = Path(dirpath) / name
            rel = str(p.relative_to(home))
            if rel.startswith(".claude/plugins"):
                continue
            st = os.lstat(p)
            if stat.S_ISLNK(st.st_mode):
                out[rel] = ("link", os.readlink(p))
            elif stat.S_ISDIR(st.st_mode):
                out[rel] = ("dir", stat.S_IMODE(st.st_mode))
            else:
                out[rel] = ("file", stat.S_IMODE(st.st_mode), p.read_bytes(), st.st_mtime_ns if rel == ".claude.json" else None)
    return out


def _bench(where: Path, steps: str) -> Path:
    bench = where / "bench.yaml"
    bench.write_text(textwrap.dedent("""\
        harness: claude-code
        harness_config:
          model: scripted
          args: [--permission-mode, bypassPermissions]
        scenarios:
          - name: at-workspace
            prompt: "Write hello.txt."
            sandbox: workspace
            timeout: 120s
            checks:
              - {type: "session:tool-used", value: [Bash]}
            mock:
              steps:
        """) + textwrap.indent(steps, " " * 8))
    return bench


def _env(home: Path, tmp: Path) -> dict[str, str]:
    tmp.mkdir(exist_ok=True)
    return {"HOME": str(home), "TMPDIR": str(tmp), "BENCHTAPE_TOOLS": os.environ.get("BENCHTAPE_TOOLS") or str(ROOT / ".benchtape" / "tools")}


def test_an_interactive_bench_at_workspace_runs_and_puts_every_file_back(tmp_path):
    need("claude-code")
    home = _users_home(tmp_path)
    before = _every_file(home)
    bench = _bench(tmp_path, '- {tool: Bash, input: {command: "echo hello > hello.txt"}}\n- {say: "Wrote it."}\n')
    env = _env(home, tmp_path / "tmp")
    assert benchtape("preflight", bench, env=env).returncode == 0
    db, report = tmp_path / "s.db", tmp_path / "r.json"
    out = benchtape("run", bench, "--db", db, "--report-json", report, cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    [result] = json.loads(report.read_text())["results"]
    assert result["status"] == "pass", result["checks"]
    started = result["session"]["actions"][0]["data"]
    assert started["interactive"] is True and started["sandbox"] == "workspace"
    assert [a["data"]["reason"] for a in result["session"]["actions"] if a["kind"] == "turn.finished"] == ["stop_hook"]
    assert _every_file(home) == before  # byte for byte; nothing the session made is left
    assert (tmp_path / "dotfiles" / "CLAUDE.md").read_text() == "my rules\n"


def test_a_kill_9_mid_session_and_recover_put_every_file_back(tmp_path):
    need("claude-code")
    home = _users_home(tmp_path)
    before = _every_file(home)
    bench = _bench(tmp_path, '- {tool: Bash, input: {command: "echo started > started.txt; sleep 60"}}\n- {say: "Done."}\n')
    env = {**os.environ, "NO_COLOR": "1", **_env(home, tmp_path / "tmp")}
    db = tmp_path / "s.db"
    proc = subprocess.Popen([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(db), "--plain"], cwd=tmp_path, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 120
    while not list((tmp_path / "tmp").glob("benchtape-*/work/started.txt")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)  # the agent is in its long call: the first-run answers are in the user's files
    assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
    seeded = json.loads((home / ".claude.json").read_text())
    assert any(p.get("hasTrustDialogAccepted") for p in seeded["projects"].values())  # the run did write into the user's own
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert _every_file(home) != before
    out = benchtape("recover", "--db", db, cwd=tmp_path, env=env, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "put back" in out.stdout + out.stderr
    assert "process(es) it left running" in out.stdout + out.stderr  # the terminal's tmux server and the agent in it
    assert not _tmux_servers_in(tmp_path), "a killed run's terminal outlived recover"
    assert _every_file(home) == before
    with sqlite3.connect(db) as con:
        [(finished,)] = con.execute("select data from actions where kind = 'session.finished'").fetchall()
    assert json.loads(finished)["status"] == "interrupted"


def test_a_scripted_run_at_workspace_is_refused_when_your_settings_send_the_model_elsewhere(tmp_path):
    need("claude-code")
    home = _users_home(tmp_path)
    (home / ".claude" / "settings.json").write_text(json.dumps({"env": {"ANTHROPIC_BASE_URL": "https://proxy.example"}}))
    bench = _bench(tmp_path, '- {say: "hi"}\n')
    out = benchtape("preflight", bench, env=_env(home, tmp_path / "tmp"))
    assert out.returncode == 3, out.stdout + out.stderr
    assert "settings.json sets ANTHROPIC_BASE_URL" in out.stderr


def _tmux_servers_in(folder: Path) -> list[int]:
    """The tmux servers hosting an agent under this test's folder (their -c names the workspace)."""
    found = []
    for proc in Path("/proc").iterdir():
        if proc.name.isdigit():
            try:
                argv = (proc / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if argv and argv[0].endswith(b"tmux") and any(str(folder).encode() in a for a in argv):
                found.append(int(proc.name))
    return found
