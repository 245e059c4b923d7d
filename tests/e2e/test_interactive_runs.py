"""Claude Code as users run it: the real 2.1.328 terminal UI, driven in tmux against the scripted
model, on the fixtures-red benches that leave `interactive:` unset.

A two-turn session with follow_ups, a skill and an MCP tool from a plugin staged as a user
installs it, all 8 `environment:*` checks on a plugin that loads, one with a broken manifest
and an MCP server that cannot start, `require: true` refusing before spend, `probe: false`,
a permission prompt nobody can answer, the same scenario interactive and in print mode,
`grade` reproducing an interactive session's verdicts, the negative control, and the real
HOME untouched after an interactive local and container run. Each real session costs a few
seconds: one run per bench, shared by the tests that read it.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import sys
from pathlib import Path

import pytest
import yaml
from cli import benchtape

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realagents import need, npm_global  # noqa: E402

pytestmark = pytest.mark.xdist_group("interactive")
ROOT = Path(__file__).resolve().parents[2]
BENCHES = ROOT / "fixtures-red" / "interactive"


def _results(report: Path) -> dict[str, dict]:
    return {r["scenario_id"]: r for r in json.loads(report.read_text())["results"]}


def _verdicts(result: dict) -> list[tuple[str, str | None, str]]:
    return [(c["type"], json.dumps(c["spec"].get("value")), c["status"]) for c in result["checks"]]


def _kinds(result: dict, kind: str) -> list[dict]:
    return [a["data"] for a in result["session"]["actions"] if a["kind"] == kind]


class Run:
    def __init__(self, out, report: Path, db: Path):
        self.out, self.report, self.db = out, report, db
        self.results = _results(report) if report.exists() else {}


def _run(bench: Path, where: Path, *args: str, env: dict[str, str] | None = None) -> Run:
    where.mkdir(parents=True, exist_ok=True)
    db, report = where / "s.db", where / "r.json"
    out = benchtape("run", bench, "--db", db, "--report-json", report, *args, cwd=where, env=env, timeout=300)
    return Run(out, report, db)


def _real_home(where: Path) -> tuple[Path, dict[str, str]]:
    """A HOME for benchtape itself holding a ~/.claude (with a Stop hook of its own) and a
    ~/.claude.json: what a user has; and the environment that makes it benchtape's HOME."""
    home = where / "real-home"
    (home / ".claude").mkdir(parents=True)
    (home / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": f"touch {home}/HOOK-RAN"}]}]}}))
    (home / ".claude.json").write_text(json.dumps({"hasCompletedOnboarding": False, "projects": {}}))
    return home, {"HOME": str(home), "BENCHTAPE_TOOLS": os.environ.get("BENCHTAPE_TOOLS") or str(ROOT / ".benchtape" / "tools")}


@pytest.fixture(scope="module")
def two_turns(tmp_path_factory) -> Run:
    """The two-turn bench at `sandbox: home`, run by a benchtape whose own HOME is a user's."""
    need("claude-code")
    where = tmp_path_factory.mktemp("two-turns")
    home, env = _real_home(where)
    before, home_before = npm_global(), _tree_digest(home)
    run = _run(BENCHES / "claude-code.yaml", where, env=env)
    run.npm_unchanged = npm_global() == before  # type: ignore[attr-defined]
    run.home_unchanged = _tree_digest(home) == home_before  # type: ignore[attr-defined]
    return run


@pytest.fixture(scope="module")
def plugins(tmp_path_factory) -> Run:
    need("claude-code")
    return _run(BENCHES / "plugins.yaml", tmp_path_factory.mktemp("plugins"))


def test_two_turns_with_follow_ups_run_in_the_terminal_ui(two_turns):
    assert two_turns.out.returncode == 0, two_turns.out.stdout + two_turns.out.stderr
    r = two_turns.results["two-turns"]
    assert r["status"] == "pass", r["checks"]
    started = r["session"]["actions"][0]["data"]
    assert started["interactive"] is True and started["format"] == "claude-transcript" and started["binary"]["version"] == "2.1.328"
    turns = _kinds(r, "turn.finished")
    assert [t["turn"] for t in turns] == [1, 2] and all(t["reason"] == "stop_hook" for t in turns)
    assert [t["last_assistant_message"] for t in turns] == ["Fixed: add() now adds.", "The tests pass."]
    assert [m["text"] for m in _kinds(r, "message.user")] == ["Fix calc.py so that python3 -m unittest passes.", "Run the tests once more\nand tell me the result."]  # a bracketed paste: one prompt
    [screen] = _kinds(r, "terminal.screen")
    assert screen["why"] == "exit" and "--resume" in screen["text"]
    assert not _kinds(r, "error") and not _kinds(r, "adapter.warning")
    assert two_turns.npm_unchanged  # type: ignore[attr-defined]  # the interactive updater installed nothing
    assert two_turns.home_unchanged  # type: ignore[attr-defined]  # the user's ~/.claude: not read (its hook never ran), not written


def test_the_agents_changes_hold_none_of_the_terminal_uis_own_files(two_turns):
    """In the terminal UI, Claude Code also keeps a prompt history, copies of each file it edits
    (for /rewind) and a URL handler under ~/.local, and benchtape's Stop hook logs each turn:
    none is the agent's change, so `show --diff` holds calc.py's fix and the bytecode cache the
    tests left, and none of the tool's files: .claude.json, which it rewrites at every start, is
    named beside the patch, not in it (settings.json is seeded in the order it writes it back)."""
    out = benchtape("show", "latest", "--diff", "--db", two_turns.db)
    assert out.returncode == 0, out.stderr
    changed = sorted(line.split(" b/", 1)[1] for line in out.stdout.splitlines() if line.startswith("diff --git "))
    assert [c for c in changed if not c.startswith("__pycache__/")] == ["calc.py"], changed
    assert "left out of the patch: .claude.json, the tool's own state" in out.stderr


def test_the_record_is_the_transcript_line_by_line(two_turns):
    """Every line of the on-disk transcript is a stored raw line, in order (appended as read)."""
    from benchtape.store.database import Store

    store = Store(two_turns.db, readonly=True)
    [row] = list(store.session_rows())
    raw = store.raw_lines(row.id)
    assert raw and all(json.loads(line).get("sessionId") or json.loads(line).get("type") for line in raw)
    assert sum('"turn_duration"' in line for line in raw) == 2
    live = store.load_session(row.id)
    store.close()
    out = benchtape("reparse", row.id, "--db", two_turns.db)  # the raw lines are the transcript: re-derived, the same session
    assert out.returncode == 0, out.stdout + out.stderr
    again = Store(two_turns.db, readonly=True).load_session(out.stdout.split()[0])
    assert [(c.tool, c.input, c.outcome) for c in again.calls] == [(c.tool, c.input, c.outcome) for c in live.calls]
    assert [t.prompt for t in again.turns] == [t.prompt for t in live.turns] and len(live.turns) == 2


def test_grade_reproduces_every_verdict_of_an_interactive_session(two_turns):
    out = benchtape("grade", "--all", "--db", two_turns.db, "--json")
    assert out.returncode == 0, out.stdout + out.stderr
    totals = json.loads(out.stdout)["counts"]
    assert totals["REPRODUCED"] == 4 and totals["DIVERGED"] == totals["COULD NOT RE-GRADE"] == totals["SKIPPED"] == 0, totals  # the exec check too, on the restored workspace


def test_the_same_scenario_interactive_and_in_print_mode_makes_the_same_calls(tmp_path):
    need("claude-code")
    bench = yaml.safe_load((ROOT / "fixtures-red" / "scripted" / "claude-code.yaml").read_text())
    bench["scenarios"] = [dict(bench["scenarios"][0], testdata=_calc(bench))]
    calls = {}
    for mode in ("print", "interactive"):
        bench["defaults"] = {k: v for k, v in bench["defaults"].items() if k != "interactive"} | ({"interactive": False} if mode == "print" else {})
        (tmp_path / f"{mode}.yaml").write_text(yaml.safe_dump(bench))
        run = _run(tmp_path / f"{mode}.yaml", tmp_path / mode)
        assert run.out.returncode == 0, run.out.stdout + run.out.stderr
        r = run.results["fixes-the-bug"]
        assert r["session"]["actions"][0]["data"].get("interactive", False) is (mode == "interactive")
        calls[mode] = [(c["tool"], c["input"], c["outcome"]) for c in r["session"]["calls"]]
        calls[mode + " verdicts"] = _verdicts(r)
    assert calls["print"] == calls["interactive"] and [t for t, _, _ in calls["print"]] == ["Read", "Edit", "Bash"]
    assert calls["print verdicts"] == calls["interactive verdicts"]


def test_a_skill_and_an_mcp_tool_from_a_staged_plugin(plugins):
    assert plugins.out.returncode == 0, plugins.out.stdout + plugins.out.stderr
    skill, mcp = plugins.results["skill-from-plugin"], plugins.results["mcp-tool"]
    assert skill["status"] == "pass" and mcp["status"] == "pass", (skill["checks"], mcp["checks"])
    env_checks = [v for v in _verdicts(skill) if v[0].startswith("environment:")]
    assert len({t for t, _, _ in env_checks}) == 8 and all(s == "PASS" for _, _, s in env_checks)
    [reported] = _kinds(skill, "environment.reported")
    assert reported["sources"] == ["plugin-cli", "system:init"]
    [demo] = [p for p in reported["plugins"] if p["id"] == "demo@fixtures"]
    assert demo["scope"] == "user" and demo["enabled"] is True and demo["skills"] == ["shout", "greet"] or demo["skills"] == ["greet", "shout"]
    [expected] = _kinds(skill, "environment.expected")
    assert expected["plugins"] == [{"id": "demo@fixtures", "path": str(BENCHES / "plugins" / "demo")}]
    assert [c["output"] for c in mcp["session"]["calls"]] == [[{"type": "text", "text": 'probe-ok {"x": "42"}'}]]


def test_a_broken_manifest_and_a_failing_mcp_server(tmp_path):
    need("claude-code")
    run = _run(BENCHES / "broken.yaml", tmp_path)
    assert run.out.returncode == 1, run.out.stdout + run.out.stderr
    r = run.results["broken-plugin"]
    assert [s for _, _, s in _verdicts(r)] == ["PASS", "FAIL", "FAIL", "FAIL", "PASS", "FAIL"], r["checks"]
    assert r["checks"][5]["result"]["score"] == 0.5
    assert "corrupt manifest" in r["checks"][1]["result"]["reason"] and "absent failed" in r["checks"][3]["result"]["reason"]


def test_require_refuses_before_any_spend_as_an_error(tmp_path):
    need("claude-code")
    run = _run(BENCHES / "require.yaml", tmp_path)
    r = run.results["refused"]
    assert r["outcome"] == "error" and r["session"]["status"] == "error"
    [err] = _kinds(r, "error")
    assert err["reason"] == "environment_require" and "broken@fixtures did not load" in err["message"]
    assert not _kinds(r, "message.assistant") and not _kinds(r, "turn.finished") and not _kinds(r, "terminal.screen")  # the agent never started


def test_probe_false_leaves_reported_absent(tmp_path):
    """Interactive and in print mode (where the init line would otherwise be the record)."""
    need("claude-code")
    bench = yaml.safe_load((BENCHES / "plugins.yaml").read_text())
    bench["harness_config"]["plugins"][0]["path"] = str(BENCHES / "plugins" / "demo")
    bench["harness_config"]["environment"] = {"probe": False}
    mcp = dict(bench["scenarios"][1], testdata=str(BENCHES / "td-empty"))
    bench["scenarios"] = [dict(mcp, name="interactive"), dict(mcp, name="print", interactive=False)]
    bench["x-benchtape-allow-outside"] = [str(BENCHES)]  # the fixture folder's testdata, from a copy of its bench in tmp
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench))
    run = _run(tmp_path / "b.yaml", tmp_path / "run")
    for name in ("interactive", "print"):
        r = run.results[name]
        assert not _kinds(r, "environment.reported")
        assert _verdicts(r) == [("session:tool-used", '"mcp__plugin_demo_probe__probe"', "PASS"), ("environment:mcp-connected", '"probe"', "ERROR")]


def test_a_permission_prompt_nobody_can_answer_ends_the_session_named(tmp_path):
    need("claude-code")
    run = _run(BENCHES / "permission.yaml", tmp_path)
    r = run.results["hangs-on-permission"]
    assert r["outcome"] == "error" and r["session"]["status"] == "error" and r["session"]["timed_out"] is False
    [err] = _kinds(r, "error")
    assert err["reason"] == "permission_prompt" and "Do you want to proceed?" in err["message"] and "python3 -m unittest -q" in err["message"]
    [screen] = _kinds(r, "terminal.screen")
    assert screen["why"] == "permission prompt" and "1. Yes" in screen["text"]


def test_the_negative_control_runs_on_an_interactive_bench(tmp_path):
    out = benchtape("check", BENCHES / "claude-code.yaml", "--db", tmp_path / "c.db", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    doc = json.loads(out.stdout)
    assert doc["totals"]["WRONGLY PASSED"] == 0
    assert {h for (h,) in sqlite3.connect(tmp_path / "c.db").execute("SELECT harness FROM sessions")} == {"mock"}


def _own_tmp() -> Path:
    """A temp folder for one benchtape process (TMPDIR): its terminal folders are found there and
    nowhere else, so killing what a killed run left never touches another test's terminal.
    Short, under /tmp: a tmux socket path must stay under 108 bytes."""
    import tempfile

    return Path(tempfile.mkdtemp(prefix="bt-", dir="/tmp"))


def _kill_terminals(tmp: Path) -> None:
    """What a killed (or stopped) benchtape left of its terminals: their tmux servers, then the folder."""
    import subprocess

    for folder in tmp.glob("benchtape-tty-*"):
        subprocess.run(["tmux", "-S", str(folder / "tmux.sock"), "kill-server"], check=False, capture_output=True)
    shutil.rmtree(tmp, ignore_errors=True)


def _calc(bench: dict) -> str:
    """The fixture's testdata, for a copy of its bench written outside its folder (named allowed)."""
    path = str(ROOT / "fixtures-red" / "demo" / "calc")
    bench["x-benchtape-allow-outside"] = [path]
    return path


def _tree_digest(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir" for p in sorted(root.rglob("*"))}


def test_an_interactive_container_run_leaves_the_real_home_untouched(tmp_path):
    """The pane on the host, the agent in the container (network none, the endpoint forwarded):
    the user's ~/.claude is neither read nor written (the local run: the two_turns fixture)."""
    need("claude-code")
    from benchtape.sandbox.container import available

    if not available()[0]:
        if os.environ.get("CI") == "true":
            pytest.fail("no Docker engine in CI")
        pytest.skip("no Docker engine")
    home, env = _real_home(tmp_path)
    before = _tree_digest(home)
    level = "container"
    bench = yaml.safe_load((BENCHES / "claude-code.yaml").read_text())
    bench["scenarios"][0]["testdata"] = _calc(bench)
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench))
    run = _run(tmp_path / "b.yaml", tmp_path / "run", "--sandbox", level, env=env)
    assert run.out.returncode == 0, run.out.stdout + run.out.stderr
    assert run.results["two-turns"]["status"] == "pass"
    assert _tree_digest(home) == before  # nothing read into the session's settings (the hook never ran), nothing written
    shutil.rmtree(home)


def test_an_agent_env_runs_alone(tmp_path):
    """v0.23.0's argv: the folder's plugin loads as <name>@inline and its skill registers; --bare
    runs no hooks (the turn end comes from the transcript) and offers no Skill tool."""
    need("claude-code")
    run = _run(BENCHES / "agent-env.yaml", tmp_path)
    r = run.results["agent-env-alone"]
    assert [s for _, _, s in _verdicts(r)] == ["PASS", "PASS", "PASS", "PASS", "FAIL"], r["checks"]
    assert [t["reason"] for t in _kinds(r, "turn.finished")] == ["turn_duration"]
    assert r["session"]["status"] == "ok"


def test_kill_minus_nine_keeps_every_transcript_line_read(tmp_path):
    """benchtape killed mid-session: the lines it had read are stored, each with its actions."""
    import signal
    import subprocess
    import time

    from cli import popen

    from benchtape.store.database import Store

    need("claude-code")
    bench = yaml.safe_load((BENCHES / "claude-code.yaml").read_text())
    sc = bench["scenarios"][0]
    sc["testdata"] = _calc(bench)
    marker = f"benchtape-kill-{os.getpid()}-{tmp_path.name}"
    sc["mock"]["steps"].insert(2, {"tool": "Bash", "input": {"command": f"exec -a {marker} sleep 60"}})
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench))
    own = _own_tmp()
    proc = popen("run", tmp_path / "b.yaml", "--db", tmp_path / "k.db", cwd=tmp_path, env={"TMPDIR": str(own)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # until the Edit's result is in the store
            time.sleep(0.5)
            try:
                if '"Edit"' in str(sqlite3.connect(tmp_path / "k.db").execute("SELECT group_concat(data) FROM actions WHERE kind = 'tool.result' OR kind = 'tool.call'").fetchone()[0]):
                    break
            except sqlite3.OperationalError:
                continue  # the store is not created yet
        time.sleep(1.0)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:  # what the killed benchtape left running: its tmux server (with claude) and the marked sleep
        _kill_terminals(own)
        subprocess.run(["pkill", "-9", "-f", marker], check=False)
    store = Store(tmp_path / "k.db", readonly=True)
    [row] = list(store.session_rows())
    session = store.load_session(row.id)
    assert [c.tool for c in session.calls][:2] == ["Read", "Edit"] and session.calls[1].outcome == "ok"
    assert store.raw_lines(row.id) and not [a for a in session.actions if a.kind == "session.finished"]


def test_a_terminal_killed_under_the_session_is_its_error_not_a_crash(tmp_path):
    """The tmux server hosting the agent dies mid-session: the session records why and ends as
    an error; benchtape itself does not fail with a traceback."""
    import subprocess
    import time

    from cli import popen

    from benchtape.store.database import Store

    need("claude-code")
    bench = yaml.safe_load((BENCHES / "claude-code.yaml").read_text())
    sc = bench["scenarios"][0]
    sc["testdata"] = _calc(bench)
    marker = f"benchtape-lost-{os.getpid()}-{tmp_path.name}"
    sc["mock"]["steps"].insert(2, {"tool": "Bash", "input": {"command": f"exec -a {marker} sleep 60"}})
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench))
    own = _own_tmp()
    proc = popen("run", tmp_path / "b.yaml", "--db", tmp_path / "t.db", cwd=tmp_path, env={"TMPDIR": str(own)})
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode != 0:
            time.sleep(0.3)  # until the agent is inside its long Bash call
        mine = list(own.glob("benchtape-tty-*"))
        assert mine, "no terminal folder appeared"
        for folder in mine:
            subprocess.run(["tmux", "-S", str(folder / "tmux.sock"), "kill-server"], check=False, capture_output=True)
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
        _kill_terminals(own)
        subprocess.run(["pkill", "-9", "-f", marker], check=False)
    assert proc.returncode == 1, out + err
    assert "Traceback" not in out + err
    store = Store(tmp_path / "t.db", readonly=True)
    [row] = list(store.session_rows())
    session = store.load_session(row.id)
    assert session.status == "error"
    # seen between two looks at the pane (it exited) or while typing into it (the terminal went away)
    assert any("the terminal UI exited during turn 1" in e or "the terminal hosting the agent went away" in e for e in session.errors), session.errors
