"""The real Claude Code 2.1.328 (print mode, stream-json) against the scripted model server.

One server for the module; each session plays its own script under its own slot. The
big session does what a coding agent does (read, edit, write, run, fail, a skill, a
foreground subagent, hooks) and its stream and its on-disk transcript are parsed by
the adapters and cross-checked call by call.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from realagents import need, npm_global, parse, run_claude, session_of

from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.models.server import serve
from benchtape.spec.script import load_script, script_from

pytestmark = pytest.mark.xdist_group("real-claude")

CALC = "def add(a, b):\n    return a - b\n"
SKILL = "---\nname: demo\ndescription: A demo skill for tests.\n---\n# Demo skill\nSay demo.\n"
HOOKS = {
    "hooks": {
        "PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo pre-hook-ran"}]}],
        "PostToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "echo post-hook-ran"}]}],
        "Stop": [{"hooks": [{"type": "command", "command": "echo stop-hook-ran"}]}],
    }
}
WORK_SCRIPT = {
    "steps": [
        {"think": "Look at the code first."},
        {"tool": "Read", "input": {"file_path": "calc.py"}},
        {"say": "The operator is wrong."},
        {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "usage": {"tokens_in": 1500, "tokens_out": 120, "cache_read_tokens": 300}},
        {"parallel": [
            {"tool": "Write", "input": {"file_path": "NOTES.md", "content": "fixed add\n"}},
            {"tool": "Bash", "input": {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}},
        ]},
        {"parallel": [
            {"tool": "Read", "input": {"file_path": "missing.txt"}},
            {"tool": "Bash", "input": {"command": "echo failing >&2; exit 3"}},
        ]},
        {"skill": "demo"},
        {"subagent": {"agent": "general-purpose", "prompt": "List the Python files here.", "steps": [
            {"tool": "Bash", "input": {"command": "ls *.py"}},
            {"say": "calc.py"},
        ]}},
        {"say": "Fixed add: 2 + 3 = 5."},
    ]
}


@pytest.fixture(scope="module")
def claude() -> Path:
    return need("claude-code")


@pytest.fixture(scope="module")
def server():
    with serve(None) as srv:
        yield srv


def workspace(base: Path) -> tuple[Path, Path]:
    """The red-state workspace and a HOME with a skill and hooks."""
    work, home = base / "work", base / "home"
    work.mkdir(parents=True)
    (work / "calc.py").write_text(CALC)
    (home / ".claude" / "skills" / "demo").mkdir(parents=True)
    (home / ".claude" / "skills" / "demo" / "SKILL.md").write_text(SKILL)
    (home / ".claude" / "settings.json").write_text(json.dumps(HOOKS))
    return work, home


@pytest.fixture(scope="module")
def work_run(claude, server, tmp_path_factory):
    work, home = workspace(tmp_path_factory.mktemp("claude-work"))
    url = server.add("work", script_from(WORK_SCRIPT))
    run = run_claude(claude, url, work, "Fix add in calc.py.", "--include-hook-events", home=home)
    run.log = server.entries(slot="work")
    assert run.rc == 0, run.stderr
    return run


def stream_session(run):
    return session_of(parse(ClaudeStreamParser(), run.lines))


def disk_session(run):
    files = run.transcript()
    assert files, f"no transcript for session {run.session_id} under {run.home}/.claude/projects"
    lines = [line for f in files for line in f.read_text().splitlines()]
    return session_of(parse(ClaudeDiskParser(), lines))


def calls(session):
    return [(c.thread, c.tool, c.input.get("file_path") or c.input.get("command"), c.outcome) for c in session.calls]


# ---------------------------------------------------------------- the work session


def test_the_tools_really_ran_in_the_workspace(work_run):
    assert (work_run.work / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (work_run.work / "NOTES.md").read_text() == "fixed add\n"
    assert work_run.results()[-1]["result"] == "Fixed add: 2 + 3 = 5."


def test_stream_calls_and_outcomes(work_run):
    s = stream_session(work_run)
    assert [w["what"] for w in s.warnings] == []
    main = [(tool, target, outcome) for thread, tool, target, outcome in calls(s) if thread == "main"]
    assert main == [
        ("Read", "calc.py", None),  # a successful Read says nothing about success (madbench §5)
        ("Edit", "calc.py", "ok"),
        ("Write", "NOTES.md", "ok"),
        ("Bash", "python3 -c 'import calc; print(calc.add(2, 3))'", "ok"),
        ("Read", "missing.txt", "error"),
        ("Bash", "echo failing >&2; exit 3", "error"),
    ]
    bash = next(c for c in s.calls if c.tool == "Bash")
    assert "5" in json.dumps(bash.output)
    assert [m.data["text"] for m in s.main if m.kind == "thinking"] == ["Look at the code first."]
    assert s.final_output == "Fixed add: 2 + 3 = 5."


def test_skill_and_foreground_subagent(work_run):
    s = stream_session(work_run)
    assert [(k["name"], k["result_ok"]) for k in s.skills] == [("demo", True)]
    (thread, sub), = s.subagents.items()
    assert sub.agent == "general-purpose" and sub.finished and sub.result_received
    assert [(c.tool, c.input["command"], c.outcome) for c in sub.calls] == [("Bash", "ls *.py", "ok")]
    assert sub.last_message() == "calc.py"
    assert [e["role"] for e in work_run.log].count("subagent") == 2  # its own two model turns


def test_hooks_reported_in_the_stream_and_on_disk(work_run):
    stream_hooks = [a.data for a in stream_session(work_run).actions if a.kind == "hook"]
    disk_hooks = [a.data for a in disk_session(work_run).actions if a.kind == "hook"]
    assert {h["event"] for h in stream_hooks} == {"PreToolUse", "PostToolUse", "Stop"}
    assert any(h.get("output") == "pre-hook-ran\n" for h in stream_hooks)
    assert sorted(h["event"] for h in stream_hooks) == sorted(h["event"] for h in disk_hooks)


def test_usage_from_the_script_is_what_the_harness_reports(work_run):
    s = stream_session(work_run)
    turns = [e for e in work_run.log if e.get("outcome") == "turn"]
    assert len(turns) == 9  # 7 main turns + 2 subagent turns
    # every turn 100/20 except the Edit turn's scripted usage
    assert s.metrics.tokens_in == 8 * 100 + 1500 and s.metrics.tokens_out == 8 * 20 + 120
    assert s.metrics.cache_read_tokens == 300
    assert s.metrics.cost_usd and s.metrics.cost_usd > 0


def test_disk_transcript_found_by_session_id_matches_the_stream(work_run):
    stream, disk = stream_session(work_run), disk_session(work_run)
    assert [w["what"] for w in disk.warnings] == []
    assert calls(disk) == calls(stream)
    assert disk.final_output == stream.final_output
    assert [(k["name"], k["result_ok"]) for k in disk.skills] == [(k["name"], k["result_ok"]) for k in stream.skills]
    assert set(disk.subagents) == set(stream.subagents)
    assert disk.metrics.cost_usd == pytest.approx(stream.metrics.cost_usd)
    assert (disk.metrics.tokens_in, disk.metrics.tokens_out) == (stream.metrics.tokens_in, stream.metrics.tokens_out)


def test_a_recorded_session_re_drives_the_real_tool_offline(claude, server, work_run, tmp_path):
    """Import the recorded transcript, `benchtape script` it, replay the script: the same calls, outcomes, answer."""

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "benchtape", *args, "--db", str(tmp_path / "bt.db")], capture_output=True, text=True, timeout=60)
        assert done.returncode == 0, done.stderr
        return done.stdout

    session_id = cli("import", "claude-code", str(work_run.transcript()[0])).split()[0]
    cli("script", session_id, "-o", str(tmp_path / "replay.yaml"))
    work, home = workspace(tmp_path / "again")
    replay = run_claude(claude, server.add("replay", load_script(tmp_path / "replay.yaml")), work, "Fix add in calc.py.", home=home)
    assert replay.rc == 0, replay.stderr
    original, again = disk_session(work_run), stream_session(replay)
    assert calls(again) == calls(original)
    assert again.final_output == original.final_output
    assert (work / "calc.py").read_text() == (work_run.work / "calc.py").read_text()
    assert again.metrics.tokens_in == original.metrics.tokens_in  # the totals became the script's metrics


# ---------------------------------------------------------------- other sessions


def test_glob_and_grep(claude, server, tmp_path):
    """2.1.328 offers no Glob/Grep by default: the model asks Bash instead; with --tools they are real tools."""
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "a.py").write_text("def f():\n    return 1\n")
    script = {"steps": [{"parallel": [{"tool": "Glob", "input": {"pattern": "**/*.py"}}, {"tool": "Grep", "input": {"pattern": "return"}}]}, {"say": "found"}]}
    default = run_claude(claude, server.add("glob1", script_from(script)), work, "find")
    listed = run_claude(claude, server.add("glob2", script_from(script)), work, "find", "--tools", "Bash,Read,Edit,Write,Glob,Grep")
    by_default, with_tools = stream_session(default), stream_session(listed)
    assert [(c.tool, c.outcome) for c in by_default.calls] == [("Bash", "ok"), ("Bash", "ok")]
    assert "pkg/a.py" in json.dumps(by_default.calls[0].output)
    assert [c.tool for c in with_tools.calls] == ["Glob", "Grep"]
    assert "pkg/a.py" in json.dumps(with_tools.calls[0].output) and "a.py" in json.dumps(with_tools.calls[1].output)


def test_permission_denial(claude, server, tmp_path):
    script = {"steps": [{"tool": "Write", "input": {"file_path": "secret.txt", "content": "x\n"}}, {"say": "could not write"}]}
    run = run_claude(claude, server.add("deny", script_from(script)), tmp_path / "work", "write it", "--permission-mode", "dontAsk")
    s = stream_session(run)
    (call,) = s.calls
    assert (call.tool, call.outcome) == ("Write", "error")
    assert next(a for a in s.actions if a.kind == "tool.result").data.get("denied") is True
    assert run.results()[-1]["permission_denials"][0]["tool_name"] == "Write"
    assert not (tmp_path / "work" / "secret.txt").exists()


def test_multi_turn_over_stream_json_and_a_script_that_runs_out(claude, server, tmp_path):
    script = {"steps": [
        {"tool": "Bash", "input": {"command": "echo one > one.txt"}},
        {"say": "first answer", "end_turn": True},
        {"tool": "Bash", "input": {"command": "echo two > two.txt"}},
        {"say": "second answer"},
    ]}
    run = run_claude(claude, server.add("multi", script_from(script)), tmp_path / "work", None, turns=["first", "second", "third"])
    assert run.rc == 0, run.stderr
    results = [r["result"] for r in run.results()]
    assert results[:2] == ["first answer", "second answer"]
    assert "script has no more turns" in results[2]
    assert (tmp_path / "work" / "two.txt").read_text() == "two\n"
    (ran_out,) = server.entries(slot="multi", outcome="exhausted")
    assert ran_out["turn"] == 4  # the fifth request of a four-turn script
    assert len(run.transcript()) == 1


def test_the_noop_script_says_the_prompt_back(claude, server, tmp_path):
    run = run_claude(claude, server.add("noop", script_from({"noop": True})), tmp_path / "work", "Fix the bug please.")
    s = stream_session(run)
    assert s.calls == [] and s.final_output == "Fix the bug please."
    assert {e["outcome"] for e in server.entries(slot="noop")} == {"noop"}


def test_nothing_is_installed_outside_the_sandbox(claude, server, tmp_path):
    """A run may not install or update anything: the global npm prefix is unchanged, and an
    npm pointed at a scratch prefix (the safety net, should anything call `npm -g`) stays unused."""
    before = npm_global()
    scratch = tmp_path / "npm-global"
    script = {"steps": [{"tool": "Bash", "input": {"command": "echo hi"}}, {"say": "hi"}]}
    run = run_claude(claude, server.add("hermetic", script_from(script)), tmp_path / "work", "hi", extra_env={"npm_config_prefix": str(scratch)})
    assert run.rc == 0
    assert not scratch.exists()
    assert npm_global() == before
    written = sorted(str(p.relative_to(run.home)) for p in run.home.rglob("*") if p.is_file())
    assert all(p.startswith(".claude") for p in written), written  # everything it wrote is in its private HOME
