"""Parser rules on small hand-made lines: robustness, outcomes, pairing, threads, totals.

Real files cover the common paths (test_realdata.py); these pin the rules those files
happen not to exercise, each on the smallest input that shows it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from adapterkit import feed_lines, session_of

from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.codex_exec import CodexExecParser
from benchtape.adapters.codex_rollout import CodexRolloutParser
from benchtape.adapters.transcripts import detect_format, read_claude_transcript, read_codex_rollout, read_transcript
from benchtape.core.errors import BadInput

PARSERS = [ClaudeStreamParser, ClaudeDiskParser, CodexExecParser, CodexRolloutParser]


def j(**kw) -> str:
    return json.dumps(kw)


def kinds(actions) -> list[str]:
    return [a.kind for a in actions]


# ---------------------------------------------------------------- never a crash


@pytest.mark.parametrize("make", PARSERS)
def test_unknown_event_is_a_warning_with_the_line(make) -> None:
    line = j(type="brand_new_event", payload={"x": 1})
    (w,) = make().feed(line)
    assert w.kind == "adapter.warning" and w.data["line"] == line and "brand_new_event" in w.data["what"]


@pytest.mark.parametrize("make", PARSERS)
def test_truncated_last_line_is_a_warning(make) -> None:
    line = '{"type":"assistant","message":{"content":[{"type":"te'
    (w,) = make().feed(line)
    assert w.kind == "adapter.warning" and "truncated" in w.data["what"] and w.data["line"] == line


@pytest.mark.parametrize(
    ("make", "line"),
    [
        (ClaudeStreamParser, j(type="assistant", message={"content": 5})),
        (ClaudeStreamParser, j(type="user", message="nope")),
        (ClaudeStreamParser, j(type="assistant", message={"content": [{"type": "hologram"}]})),
        (ClaudeStreamParser, j(type="system", subtype="init", mcp_servers="x")),
        (ClaudeStreamParser, j(type="result", modelUsage=[1], usage="x", total_cost_usd="free")),
        (ClaudeDiskParser, j(type="progress", data=None)),
        (ClaudeDiskParser, j(type="user", message={"content": [{"type": "tool_result"}, 7]})),
        (ClaudeDiskParser, j(type="system", subtype="brand_new")),
        (CodexExecParser, j(type="item.completed", item=None)),
        (CodexExecParser, j(type="item.completed", item={"id": "i", "type": "quantum"})),
        (CodexExecParser, j(type="turn.completed", usage=None)),
        (CodexRolloutParser, j(type="event_msg", payload=None)),
        (CodexRolloutParser, j(type="event_msg", payload={"type": "token_count", "info": {"total_token_usage": "many"}})),
        (CodexRolloutParser, "[1, 2, 3]"),
    ],
)
def test_odd_shapes_never_crash(make, line: str) -> None:
    parser = make()
    actions = parser.feed(line) + parser.finish()
    assert all(a.kind in ("adapter.warning", "tool.result", "environment.reported", "metrics", "final_output") for a in actions)
    for a in actions:
        if a.kind == "metrics":
            assert all(isinstance(v, int) for v in a.data.values())  # nothing odd reaches the totals


def test_odd_shapes_warn_with_the_line() -> None:
    for make, line in [
        (ClaudeStreamParser, j(type="assistant", message={"content": 5})),
        (ClaudeStreamParser, j(type="system", subtype="init", mcp_servers="x")),
        (ClaudeDiskParser, j(type="progress", data=None)),
        (CodexExecParser, j(type="item.completed", item=None)),
        (CodexRolloutParser, j(type="event_msg", payload=None)),
    ]:
        warnings = [a for a in make().feed(line) if a.kind == "adapter.warning"]
        assert warnings and warnings[0].data["line"] == line


def test_a_call_with_unreadable_arguments_keeps_them_raw() -> None:
    line = j(type="response_item", payload={"type": "function_call", "name": "shell", "call_id": "c", "arguments": "{not json"})
    (call,) = CodexRolloutParser().feed(line)
    assert call.data["input"] == {"raw": "{not json"}


# ---------------------------------------------------------------- Claude rules


def _tool_use(call_id: str, name: str, tool_input: dict, parent: str | None = None, msg: str = "m1") -> str:
    message = {"id": msg, "model": "claude-x", "content": [{"type": "tool_use", "id": call_id, "name": name, "input": tool_input}]}
    return j(type="assistant", message=message, parent_tool_use_id=parent)


def _result(call_id: str, content="out", parent: str | None = None, result=None, **block) -> str:
    message = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": content, **block}]}
    return j(type="user", message=message, parent_tool_use_id=parent, tool_use_result=result)


@pytest.mark.parametrize(
    ("tool", "block", "result", "outcome"),
    [
        ("Read", {}, {"type": "text", "file": {}}, None),  # success says nothing
        ("Read", {"is_error": True}, "Error: no such file", "error"),
        ("Read", {"is_error": False}, None, "ok"),  # a result carrying is_error says (madbench §3.5)
        ("Bash", {"is_error": False}, {"stdout": "ok", "stderr": "", "interrupted": False}, "ok"),
        ("Bash", {}, {"stdout": "", "stderr": "boom", "interrupted": False}, "error"),
        ("Bash", {"is_error": False}, {"stdout": "", "stderr": "warning: x", "interrupted": False}, "ok"),
        ("Bash", {}, {"stdout": "", "stderr": "", "interrupted": True}, "error"),
        ("Bash", {}, {"stdout": "", "stderr": "", "exitCode": 2}, "error"),
        ("Bash", {}, None, None),
        ("Edit", {}, {"filePath": "a", "structuredPatch": []}, "ok"),
        ("Write", {}, {"type": "create", "structuredPatch": [{"lines": []}]}, "ok"),
        ("Edit", {}, {"filePath": "a"}, None),
        ("Glob", {}, {"filenames": []}, None),
    ],
)
def test_claude_outcome_is_known_only_where_the_cli_says(tool: str, block: dict, result, outcome) -> None:
    actions = feed_lines(ClaudeStreamParser(), [_tool_use("t1", tool, {}), _result("t1", result=result, **block)])
    (call,) = session_of(actions).calls
    assert call.outcome == outcome


def test_claude_skill_and_spawn_are_not_plain_calls() -> None:
    lines = [
        _tool_use("s1", "Skill", {"skill": "pdf"}),
        _result("s1", "loaded"),
        _tool_use("a1", "Task", {"subagent_type": "Explore", "prompt": "look", "description": "d"}, msg="m2"),
        _tool_use("r1", "Read", {"file_path": "x"}, parent="a1", msg="m3"),
        _result("r1", parent="a1"),
        j(type="system", subtype="task_notification", tool_use_id="a1", task_id="ag1", status="completed"),
        _result("a1", [{"type": "text", "text": "found it"}], result={"status": "completed", "agentId": "ag1"}),
        j(type="system", subtype="task_notification", tool_use_id="bash-bg", status="completed"),
    ]
    actions = feed_lines(ClaudeStreamParser(), lines)
    session = session_of(actions)
    assert [c.tool for c in session.calls] == ["Read"] and session.calls[0].thread == "a1"
    assert session.skills == [{"name": "pdf", "thread": "main", "call_id": "s1", "result_ok": None}]
    sub = session.subagents["a1"]
    assert (sub.agent, sub.prompt, sub.finished, sub.output) == ("Explore", "look", True, "found it")
    assert kinds(actions).count("subagent.finished") == 1  # notification and result say it once
    assert sorted(i.tool for i in session.invocations) == ["Read", "Skill", "Task"]


def test_claude_usage_counts_once_per_message_and_the_result_wins() -> None:
    usage = {"input_tokens": 5, "output_tokens": 2, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 7}
    block = lambda i: {"type": "text", "text": f"part {i}"}  # noqa: E731
    lines = [j(type="assistant", message={"id": "m1", "model": "c", "content": [block(i)], "usage": usage}) for i in range(3)]
    partial = session_of(feed_lines(ClaudeStreamParser(), lines))
    assert (partial.metrics.tokens_in, partial.metrics.tokens_out, partial.metrics.cache_read_tokens) == (5, 2, 100)
    assert partial.metrics.cost_usd is None and partial.metrics.turns is None
    result = j(type="result", subtype="success", is_error=False, result="done", total_cost_usd=0.01, num_turns=1,
               duration_ms=900, usage={"input_tokens": 5, "output_tokens": 40})  # fmt: skip
    full = session_of(feed_lines(ClaudeStreamParser(), lines + [result]))
    assert (full.metrics.tokens_out, full.metrics.cost_usd, full.metrics.duration_ms) == (40, 0.01, 900)
    assert full.final_output == "done" and full.errors == []


def test_claude_result_errors_and_synthetic_api_errors() -> None:
    synthetic = j(type="assistant", error="unknown",
                  message={"id": "x", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 529"}]})  # fmt: skip
    failed = j(type="result", subtype="error_max_turns", is_error=True, num_turns=3)
    session = session_of(feed_lines(ClaudeStreamParser(), [synthetic, failed]))
    assert session.errors == ["API Error: 529", "claude ended with error_max_turns"]
    assert session.metrics.turns == 3 and session.final_output is None


def test_an_ending_that_repeats_the_error_just_said_is_one_error() -> None:
    """Claude's stream-json says an API error twice (its synthetic message, then the result
    with the same text), Codex likewise (the stream's error, then turn.failed): one error each,
    and the session still ended in error. A different ending, or the same text said again
    later by the agent's API, is counted."""
    synthetic = j(type="assistant", error="unknown",
                  message={"id": "x", "model": "<synthetic>", "content": [{"type": "text", "text": "API Error: 529"}]})  # fmt: skip
    result = j(type="result", subtype="success", is_error=True, result="API Error: 529", num_turns=1)
    claude = session_of(feed_lines(ClaudeStreamParser(), [synthetic, result]))
    assert claude.errors == ["API Error: 529"]
    twice = session_of(feed_lines(ClaudeStreamParser(), [synthetic, synthetic, result]))
    assert twice.errors == ["API Error: 529", "API Error: 529"]
    codex_lines = [j(type="thread.started", thread_id="t"), j(type="turn.started"),
                   j(type="error", message="stream disconnected"), j(type="turn.failed", error={"message": "stream disconnected"})]  # fmt: skip
    codex = session_of(feed_lines(CodexExecParser(), codex_lines))
    assert codex.errors == ["stream disconnected"]
    other = session_of(feed_lines(CodexExecParser(), codex_lines[:3] + [j(type="turn.failed", error={"message": "quota"})]))
    assert other.errors == ["stream disconnected", "quota"]


def test_claude_interrupts_meta_and_blank_text_are_not_user_turns() -> None:
    base = {"sessionId": "s", "timestamp": "2026-01-01T00:00:00Z"}
    lines = [
        j(type="user", uuid="u1", message={"role": "user", "content": "do it"}, **base),
        j(type="user", uuid="u2", isMeta=True, message={"role": "user", "content": "<caveat>"}, **base),
        j(type="assistant", uuid="u3", message={"id": "m", "model": "c", "content": [{"type": "text", "text": "\n\n"}]}, **base),
        j(type="user", uuid="u4", message={"role": "user", "content": [{"type": "text", "text": "[Request interrupted by user]"}]}, **base),
        j(type="user", uuid="u5", message={"role": "user", "content": "<local-command-stdout>ok</local-command-stdout>"}, **base),
        j(type="user", uuid="u1", message={"role": "user", "content": "do it"}, **base),  # a repeated line
    ]
    actions = feed_lines(ClaudeDiskParser(), lines)
    assert kinds(actions) == ["message.user", "error"]
    assert actions[1].data["interrupted"] is True
    assert actions[0].at == 1767225600.0  # the entry's own time is kept


def test_claude_stream_injected_text_is_no_turn_but_its_tool_results_count() -> None:
    injected = {"role": "user", "content": [{"type": "text", "text": "Base directory for this skill: ..."}]}
    with_result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "x", "is_error": True}]}
    lines = [
        _tool_use("t1", "Grep", {}),
        j(type="user", isSynthetic=True, message=injected),
        j(type="user", isSynthetic=True, message=with_result),
    ]
    actions = feed_lines(ClaudeStreamParser(), lines)
    assert kinds(actions) == ["tool.call", "tool.result"] and session_of(actions).calls[0].outcome == "error"


def test_claude_disk_internal_agents_count_tokens_only(tmp_path: Path) -> None:
    session_id = "11111111-2222-3333-4444-555555555555"
    main = tmp_path / f"{session_id}.jsonl"
    usage = {"input_tokens": 10, "output_tokens": 1}
    main.write_text(
        "\n".join(
            [
                j(type="user", uuid="a", sessionId=session_id, message={"role": "user", "content": "go"}),
                j(type="assistant", uuid="b", sessionId=session_id,
                  message={"id": "m1", "model": "c", "content": [{"type": "text", "text": "done"}], "usage": usage}),  # fmt: skip
            ]
        )
    )
    subagents = tmp_path / session_id / "subagents"
    subagents.mkdir(parents=True)
    (subagents / "agent-acompact-1.jsonl").write_text(
        "\n".join(
            [
                j(type="user", uuid="c", isSidechain=True, agentId="acompact-1", sessionId=session_id,
                  message={"role": "user", "content": "summarise"}),  # fmt: skip
                j(type="assistant", uuid="d", isSidechain=True, agentId="acompact-1", sessionId=session_id,
                  message={"id": "m2", "model": "c", "content": [{"type": "text", "text": "summary"}], "usage": usage}),  # fmt: skip
            ]
        )
    )
    imported = read_claude_transcript(main)
    session = session_of(imported.actions)
    assert len(imported.source_files) == 2 and len(imported.raw) == 4
    assert session.subagents == {} and session.final_output == "done"
    assert session.metrics.tokens_in == 20  # the summarizer's tokens were spent
    assert imported.meta["session_id"] == session_id and imported.meta["first_prompt"] == "go"


# ---------------------------------------------------------------- Codex rules


def _item(event: str, **item) -> str:
    return j(type=f"item.{event}", item=item)


def test_codex_exec_started_and_completed_items_are_one_call_and_one_result() -> None:
    lines = [
        j(type="thread.started", thread_id="th"),
        j(type="turn.started"),
        _item("started", id="i1", type="command_execution", command="ls", aggregated_output="", status="in_progress"),
        _item("updated", id="i1", type="command_execution", command="ls", aggregated_output="a", status="in_progress"),
        _item("completed", id="i1", type="command_execution", command="ls", aggregated_output="a\n", exit_code=1, status="failed"),
        _item("started", id="i2", type="mcp_tool_call", server="gh", tool="search", arguments={"q": 1}, status="in_progress"),
        _item("completed", id="i2", type="mcp_tool_call", server="gh", tool="search", arguments={"q": 1}, status="completed",
              result={"content": []}),  # fmt: skip
        _item("started", id="i3", type="todo_list", items=[{"text": "a", "completed": False}]),
        _item("updated", id="i3", type="todo_list", items=[{"text": "a", "completed": True}]),
        _item("completed", id="i3", type="todo_list", items=[{"text": "a", "completed": True}]),
        _item("completed", id="i4", type="agent_message", text="done"),
        j(type="turn.completed", usage={"input_tokens": 100, "cached_input_tokens": 40, "output_tokens": 9}),
        j(type="turn.started"),
        j(type="turn.failed", error={"message": "stream disconnected"}),
        j(type="turn.completed", usage={"input_tokens": 50, "cached_input_tokens": 50, "output_tokens": 1}),
    ]
    actions = feed_lines(CodexExecParser(), lines)
    session = session_of(actions)
    assert [(c.tool, c.outcome) for c in session.calls] == [
        ("command_execution", "error"), ("mcp__gh__search", "ok"), ("todo_list", None),
    ]  # fmt: skip
    assert kinds(actions).count("tool.call") == 3 and kinds(actions).count("tool.result") == 3
    assert session.invocations[1].kind == "mcp"
    m = session.metrics
    assert (m.tokens_in, m.cache_read_tokens, m.tokens_out, m.turns, m.cost_usd) == (60, 90, 10, 3, None)
    assert session.errors == ["stream disconnected"] and session.final_output == "done"


def test_a_codex_call_started_and_never_completed_still_gets_its_one_result() -> None:
    """Codex exited with the solver's test run still going (attrs, newcomer pass): the call had
    `item.started` and no `item.completed`, and was stored with no outcome; its rollout says
    failed, exit -1. It is closed as failed when the stream ends, once."""
    from benchtape.adapters.codex_exec import UNFINISHED

    lines = [
        _item("started", id="i8", type="command_execution", command="/bin/bash -c 'python3 -m pytest -q'", aggregated_output="", status="in_progress"),
        _item("completed", id="i9", type="agent_message", text="done"),
    ]
    actions = feed_lines(CodexExecParser(), lines)
    [call] = session_of(actions).calls
    assert (call.outcome, call.is_error, call.output) == ("error", True, UNFINISHED) and kinds(actions).count("tool.result") == 1


def test_codex_exec_collab_spawn_opens_a_thread_and_wait_finishes_it() -> None:
    spawn = {"type": "collab_tool_call", "tool": "spawn_agent", "sender_thread_id": "root", "prompt": "review"}
    wait = {"type": "collab_tool_call", "tool": "wait", "sender_thread_id": "root", "receiver_thread_ids": ["kid"]}
    lines = [
        _item("started", id="c1", receiver_thread_ids=[], agents_states={}, status="in_progress", **spawn),
        _item("completed", id="c1", receiver_thread_ids=["kid"], agents_states={"kid": {"status": "pending_init"}},
              status="completed", **spawn),  # fmt: skip
        _item("started", id="c2", agents_states={}, status="in_progress", **wait),
        _item("completed", id="c2", agents_states={"kid": {"status": "completed", "message": "LGTM"}}, status="completed", **wait),
    ]
    session = session_of(feed_lines(CodexExecParser(), lines))
    sub = session.subagents["kid"]
    assert (sub.prompt, sub.call_id, sub.finished, sub.output) == ("review", "c1", True, "LGTM")
    assert [c.tool for c in session.calls] == ["wait"]


def _rollout(kind: str, **payload) -> str:
    return j(timestamp="2025-09-01T10:00:00Z", type=kind, payload=payload)


def test_codex_rollout_old_shell_output_carries_the_exit_code() -> None:
    lines = [
        _rollout("session_meta", id="sess", cwd="/w", cli_version="0.36.0"),
        _rollout("event_msg", type="user_message", message="run tests"),
        _rollout("response_item", type="function_call", name="shell", arguments=json.dumps({"command": ["bash", "-lc", "pytest"]}),
                 call_id="c1"),  # fmt: skip
        _rollout("response_item", type="function_call_output", call_id="c1",
                 output=json.dumps({"output": "1 failed", "metadata": {"exit_code": 1, "duration_seconds": 0.5}})),  # fmt: skip
        _rollout("event_msg", type="token_count", info={"total_token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 3}}),
        _rollout("event_msg", type="token_count", info={"total_token_usage": {"input_tokens": 10, "cached_input_tokens": 0, "output_tokens": 3}}),
        _rollout("event_msg", type="token_count", info=None, rate_limits={}),
        _rollout("event_msg", type="turn_aborted", reason="interrupted"),
    ]
    actions = feed_lines(CodexRolloutParser(), lines)
    session = session_of(actions)
    (call,) = session.calls
    assert (call.tool, call.input, call.output, call.outcome) == ("shell", {"command": ["bash", "-lc", "pytest"]}, "1 failed", "error")
    assert kinds(actions).count("metrics") == 1  # cumulative totals, written once when unchanged
    assert (session.metrics.tokens_in, session.metrics.tokens_out) == (10, 3)
    assert session.errors == ["turn aborted: interrupted"] and session.turns[0].prompt == "run tests"


def test_codex_rollout_waits_for_the_exit_code_of_a_running_command() -> None:
    lines = [
        _rollout("response_item", type="function_call", name="exec_command", arguments='{"cmd": "make"}', call_id="c1"),
        _rollout("response_item", type="function_call_output", call_id="c1", output="Process running with session ID 7\nOutput:\n"),
        _rollout("response_item", type="function_call", name="write_stdin", arguments='{"session_id": 7}', call_id="c2"),
        _rollout("response_item", type="function_call_output", call_id="c2", output="Process exited with code 2\nOutput:\nerr"),
        _rollout("event_msg", type="exec_command_end", call_id="c1", exit_code=2, aggregated_output="err"),
        _rollout("response_item", type="function_call", name="exec_command", arguments='{"cmd": "sleep"}', call_id="c3"),
        _rollout("response_item", type="function_call_output", call_id="c3", output="Process running with session ID 8\n"),
    ]
    actions = feed_lines(CodexRolloutParser(), lines)
    session = session_of(actions)
    assert [(c.call_id, c.outcome) for c in session.calls] == [("c1", "error"), ("c2", None), ("c3", None)]
    assert all(c.has_result for c in session.calls)  # the killed one is closed at finish, outcome unknown
    assert kinds(actions).count("tool.result") == 3


def test_legacy_rollout_lines_without_a_wrapper() -> None:
    lines = [
        j(id="old", timestamp="2025-05-01T00:00:00Z", instructions=None),
        j(type="message", role="user", content=[{"type": "input_text", "text": "hello"}]),
        j(record_type="state"),
        j(type="message", role="assistant", content=[{"type": "output_text", "text": "hi"}]),
    ]
    parser = CodexRolloutParser()
    session = session_of(feed_lines(parser, lines))
    assert session.final_output == "hi" and session.turns[0].prompt == "hello" and session.warnings == []
    assert parser.meta["session_id"] == "old"


# ---------------------------------------------------------------- formats


def test_detect_format_and_refusals(tmp_path: Path) -> None:
    gemini = tmp_path / "session.json"
    gemini.write_text(json.dumps({"sessionId": "s", "projectHash": "h", "messages": []}))
    assert detect_format(gemini) == "gemini-session" and read_transcript(gemini).actions == []  # Gemini CLI's own record: read, not refused
    live = tmp_path / "session-live.jsonl"  # 0.61's shape: a header, each message again as it grows, `$set` lines
    live.write_text("\n".join(json.dumps(x) for x in [
        {"sessionId": "s", "projectHash": "h", "startTime": "2026-12-07T06:28:14.113Z", "kind": "main"},
        {"id": "u1", "timestamp": "2026-12-07T06:28:14.132Z", "type": "user", "content": [{"text": "Set y to 5."}]},
        {"$set": {"lastUpdated": "2026-12-07T06:28:14.133Z"}},
        {"id": "g1", "timestamp": "2026-12-07T06:28:14.266Z", "type": "gemini", "content": "", "thoughts": [{"subject": "", "description": "look first"}], "tokens": {"input": 25, "output": 5}, "model": "gemini-2.5-flash"},
        {"id": "g1", "timestamp": "2026-12-07T06:28:14.266Z", "type": "gemini", "content": "", "thoughts": [{"subject": "", "description": "look first"}], "tokens": {"input": 25, "output": 5}, "model": "gemini-2.5-flash",
         "toolCalls": [{"id": "r1", "name": "read_file", "args": {"file_path": "settings.py"}, "status": "success", "result": [{"functionResponse": {"id": "r1", "name": "read_file", "response": {"output": "y = 2"}}}]}]},
        {"id": "u2", "timestamp": "2026-12-07T06:28:14.295Z", "type": "user", "content": [{"functionResponse": {"id": "r1", "name": "read_file", "response": {"output": "y = 2"}}}]},
    ]) + "\n")
    assert detect_format(live) == "gemini-session"  # not Claude's, though its first line holds a sessionId
    actions = read_transcript(live).actions
    assert [(a.kind, a.data.get("text") or a.data.get("tool") or a.data.get("output")) for a in actions if a.kind != "metrics"] == [("message.user", "Set y to 5."), ("thinking", "look first"), ("tool.call", "read_file"), ("tool.result", "y = 2")]  # g1 once, as it last grew; u2 echoes the result
    junk = tmp_path / "junk.jsonl"
    junk.write_text("hello\n")
    with pytest.raises(BadInput, match="not a transcript"):
        detect_format(junk)
    with pytest.raises(BadInput, match="no transcript file"):
        read_codex_rollout(tmp_path / "missing.jsonl")
    stream = tmp_path / "s.jsonl"
    stream.write_text(j(type="system", subtype="init", session_id="x") + "\n")
    assert detect_format(stream) == "claude-stream-json"
