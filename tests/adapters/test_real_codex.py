"""The real Codex 0.169.0 (`codex exec --json`) against the scripted model server.

One server for the module. The work session runs commands (one failing), patches files
through apply_patch (an Edit and two Writes), calls an MCP tool found by tool_search
(a tiny stdio MCP server), and its rollout -- found by the thread id exec reports -- is
parsed and cross-checked against the exec stream.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from realagents import mcp_config, need, npm_global, parse, run_codex, session_of

from benchtape.adapters.codex_exec import CodexExecParser
from benchtape.adapters.codex_rollout import CodexRolloutParser
from benchtape.models.server import serve
from benchtape.spec.script import script_from

pytestmark = pytest.mark.xdist_group("real-codex")

CALC = "def add(a, b):\n    return a - b\n"
WORK_SCRIPT = {
    "steps": [
        {"think": "Read it first."},
        {"tool": "Read", "input": {"file_path": "calc.py"}},
        {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}, "usage": {"tokens_in": 1500, "tokens_out": 120, "cache_read_tokens": 300}},
        {"parallel": [
            {"tool": "Write", "input": {"file_path": "NOTES.md", "content": "fixed add\n"}},
            {"tool": "Bash", "input": {"command": "python3 -c 'import calc; print(calc.add(2, 3))'"}},
        ]},
        {"tool": "Bash", "input": {"command": "echo failing >&2; exit 3"}},
        {"tool": "mcp__mini__probe", "input": {"x": "cx"}},
        {"say": "Fixed add: 2 + 3 = 5."},
    ]
}
# exec item type -> the rollout's tool name for the same call
SAME_CALL = {"command_execution": "exec_command", "file_change": "apply_patch", "mcp__mini__probe": "mcp__mini__probe"}


@pytest.fixture(scope="module")
def codex() -> Path:
    return need("codex")


@pytest.fixture(scope="module")
def server():
    with serve(None) as srv:
        yield srv


@pytest.fixture(scope="module")
def work_run(codex, server, tmp_path_factory):
    work = tmp_path_factory.mktemp("codex-work") / "work"
    work.mkdir()
    (work / "calc.py").write_text(CALC)
    url = server.add("work", script_from(WORK_SCRIPT)) + "/v1"
    run = run_codex(codex, url, work, "Fix add in calc.py.", config_extra=mcp_config())
    assert run.rc == 0, run.stderr
    return run


def exec_session(run):
    return session_of(parse(CodexExecParser(), run.lines))


def rollout_session(run):
    path = run.rollout()
    assert path is not None, f"no rollout for thread {run.thread_id} under {run.codex_home}/sessions"
    parser = CodexRolloutParser()
    return session_of(parse(parser, path.read_text().splitlines())), parser.meta


def test_the_tools_really_ran_in_the_workspace(work_run):
    assert (work_run.work / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert (work_run.work / "NOTES.md").read_text() == "fixed add\n"


def test_exec_stream_calls_and_outcomes(work_run):
    s = exec_session(work_run)
    assert [w["what"] for w in s.warnings] == []
    assert [(c.tool, c.outcome) for c in s.calls] == [
        ("command_execution", "ok"),  # Read -> cat
        ("file_change", "ok"),  # Edit -> apply_patch
        ("file_change", "ok"),  # Write -> apply_patch (parallel with the next)
        ("command_execution", "ok"),
        ("command_execution", "error"),  # exit 3
        ("mcp__mini__probe", "ok"),
    ]
    assert "5" in s.calls[3].output
    assert "probe-ok" in json.dumps(s.calls[5].output)
    assert [a.data["text"] for a in s.actions if a.kind == "thinking"] == ["Read it first."]
    assert s.final_output == "Fixed add: 2 + 3 = 5."


def test_usage_from_the_script(work_run, server):
    s = exec_session(work_run)
    turns = server.entries(slot="work", outcome="turn")
    assert len(turns) == 6
    # OpenAI input tokens include the cached ones; benchtape's tokens_in are the uncached
    assert s.metrics.tokens_in == 5 * 100 + 1500 and s.metrics.cache_read_tokens == 300
    assert s.metrics.tokens_out == 5 * 20 + 120


def test_mcp_call_went_through_tool_search(work_run, server):
    outcomes = [e["outcome"] for e in server.entries(slot="work") if e.get("api") == "responses"]
    assert outcomes == ["turn", "turn", "turn", "turn", "tool_search", "turn", "turn"]
    last = server.entries(slot="work")[-1]["body"]["input"]
    assert any(i.get("type") == "tool_search_output" for i in last)


def test_rollout_found_by_thread_id_matches_the_exec_stream(work_run):
    stream = exec_session(work_run)
    rollout, meta = rollout_session(work_run)
    assert [w["what"] for w in rollout.warnings] == []
    assert meta["version"] == "0.169.0" and meta["first_prompt"] == "Fix add in calc.py."
    searched = [c for c in rollout.calls if c.tool == "tool_search"]
    assert [(c.input, c.outcome) for c in searched] == [({"query": "probe"}, "ok")]
    # the same calls with the same outcomes (the tool search is Codex-internal: exec does not show it)
    same = [(SAME_CALL[c.tool], c.outcome) for c in stream.calls]
    assert [(c.tool, c.outcome) for c in rollout.calls if c.tool != "tool_search"] == same
    assert rollout.final_output == stream.final_output
    assert (rollout.metrics.tokens_in, rollout.metrics.tokens_out) == (stream.metrics.tokens_in, stream.metrics.tokens_out)


def test_resume_continues_the_thread_and_a_script_that_runs_out_says_so(codex, server, tmp_path):
    script = {"steps": [{"tool": "Bash", "input": {"command": "echo one"}}, {"say": "first"}]}
    url = server.add("resume", script_from(script)) + "/v1"
    first = run_codex(codex, url, tmp_path / "work", "first prompt")
    again = run_codex(codex, url, tmp_path / "work", "second prompt", resume=first.thread_id, codex_home=first.codex_home)
    assert first.rc == 0 and again.rc == 0, again.stderr
    assert again.thread_id == first.thread_id
    assert "script has no more turns" in exec_session(again).final_output
    (ran_out,) = server.entries(slot="resume", outcome="exhausted")
    assert ran_out["turn"] == 2
    rollout, _ = rollout_session(again)
    assert [t.prompt for t in rollout.turns] == ["first prompt", "second prompt"]


def test_the_noop_script_says_the_prompt_back(codex, server, tmp_path):
    run = run_codex(codex, server.add("noop", script_from({"noop": True})) + "/v1", tmp_path / "work", "Fix the bug please.")
    s = exec_session(run)
    assert s.calls == [] and s.final_output == "Fix the bug please."


def test_a_script_step_codex_has_no_tool_for_is_named(codex, server, tmp_path):
    run = run_codex(codex, server.add("skill", script_from({"steps": [{"skill": "demo"}]})) + "/v1", tmp_path / "work", "go")
    text = exec_session(run).final_output
    assert "Codex has no tool for `Skill`" in text and "script line" in text
    assert server.entries(slot="skill", outcome="unmapped")


def test_nothing_is_written_outside_its_codex_home(codex, server, tmp_path):
    """No update check, nothing in HOME, nothing installed: everything Codex keeps is in its CODEX_HOME."""
    before = npm_global()
    script = {"steps": [{"tool": "Bash", "input": {"command": "echo hi > out.txt"}}, {"say": "ok"}]}
    run = run_codex(codex, server.add("hermetic", script_from(script)) + "/v1", tmp_path / "work", "go")
    assert run.rc == 0
    assert list((tmp_path / "work-home").rglob("*")) == []
    assert sorted(p.name for p in run.work.iterdir()) == ["out.txt"]
    assert (run.codex_home / "sessions").is_dir() and npm_global() == before


def test_a_command_that_outlives_codexs_wait_is_polled_to_its_end(codex, server, tmp_path):
    """Codex answers a command still running after its wait (10 s by default, 30 s at most)
    with "Process running with session ID N". The solver's test run on attrs was cut off that
    way when Codex exited (no result, its cell the fastest of seven harnesses): the scripted
    model now polls it with write_stdin, using no turn of the script, until it ends."""
    script = {"steps": [{"tool": "Bash", "input": {"command": "sleep 32; echo slow-done"}}, {"say": "ok"}]}
    run = run_codex(codex, server.add("slow", script_from(script)) + "/v1", tmp_path / "work", "go", timeout=180)
    assert run.rc == 0, run.stderr
    [call] = exec_session(run).calls
    assert call.has_result and call.is_error is False and "slow-done" in str(call.output), call
    assert server.entries(slot="slow", outcome="poll"), server.log  # it had to poll: the wait is at most 30 s
