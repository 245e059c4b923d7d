"""What Claude Code 2.1.328 and Codex 0.169.0 write that older versions did not, line by line.

The lines are trimmed copies of what the real binaries printed against the scripted
model (tests/adapters/test_real_*.py run the binaries themselves when installed).
"""

from __future__ import annotations

import json

from realagents import parse, session_of

from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.claude_messages import handed_back
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.codex_rollout import CodexRolloutParser


def lines(*events):
    return [json.dumps(e) for e in events]


def assistant(*blocks, parent=None):
    return {"type": "assistant", "message": {"id": "m1", "model": "claude-opus-5-5", "content": list(blocks)}, "parent_tool_use_id": parent}


def result_line(call_id, content, result, parent=None, is_error=None):
    block = {"tool_use_id": call_id, "type": "tool_result", "content": content}
    if is_error is not None:
        block["is_error"] = is_error
    return {"type": "user", "message": {"role": "user", "content": [block]}, "parent_tool_use_id": parent, "tool_use_result": result}


HAND_BACK = (
    "  <tools-used-before-summary>Bash</tools-used-before-summary>\n  \n[Subagent hand-back] The text below is the final report "
    "of a subagent. The report follows:\n  There are 2 files.\n  Second line.\nagentId: a1 (use SendMessage ...)\n<usage>subagent_tokens: 120</usage>"
)


def test_stream_2_1_328():
    s = session_of(parse(ClaudeStreamParser(), lines(
        {"type": "system", "subtype": "thinking_tokens", "estimated_tokens": 5},
        assistant({"type": "tool_use", "id": "w1", "name": "Write", "input": {"file_path": "y.txt", "content": "y"}}),
        {"type": "system", "subtype": "permission_denied", "tool_name": "Write", "tool_use_id": "w1", "message": "denied"},
        result_line("w1", "Permission to use Write has been denied", "Error: Permission to use Write has been denied", is_error=True),
        assistant({"type": "tool_use", "id": "s1", "name": "Skill", "input": {"skill": "demo"}}),
        result_line("s1", "Launching skill: demo", {"success": True, "commandName": "demo"}),
        {"type": "system", "subtype": "hook_started", "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse"},
        {"type": "system", "subtype": "hook_response", "hook_name": "PreToolUse:Bash", "hook_event": "PreToolUse", "output": "pre\n", "exit_code": 0, "outcome": "success"},
        assistant({"type": "tool_use", "id": "a1", "name": "Agent", "input": {"prompt": "count", "subagent_type": "general-purpose", "run_in_background": False}}),
        {"type": "system", "subtype": "task_updated", "task_id": "t1", "patch": {"status": "completed"}},
        {"type": "system", "subtype": "task_notification", "tool_use_id": "a1", "status": "completed", "summary": "count"},
        result_line("a1", [{"type": "text", "text": HAND_BACK}], {"status": "completed", "agentId": "x1"}),
    )))
    assert s.warnings == []
    denied = next(a for a in s.actions if a.kind == "tool.result" and a.data["call_id"] == "w1")
    assert denied.data["is_error"] is True and denied.data["denied"] is True
    assert [(k["name"], k["result_ok"]) for k in s.skills] == [("demo", True)]
    assert [a.data for a in s.actions if a.kind == "hook"] == [{"event": "PreToolUse", "name": "PreToolUse:Bash", "phase": "hook_response", "outcome": "success", "exit_code": 0, "output": "pre\n"}]
    finished = [a.data for a in s.actions if a.kind == "subagent.finished"]
    assert len(finished) == 1 and finished[0]["output"] == "There are 2 files.\nSecond line."


def test_the_hand_back_frame_only_is_removed():
    assert handed_back("plain report") == "plain report"
    assert handed_back(HAND_BACK) == "There are 2 files.\nSecond line."


def test_disk_2_1_328_bookkeeping_hooks_and_cost():
    entry = {"isSidechain": False, "sessionId": "S", "timestamp": "2026-12-01T02:54:57.000Z"}
    s = session_of(parse(ClaudeDiskParser(), lines(
        {**entry, "type": "attachment", "attachment": {"type": "skill_listing", "content": "- demo"}},
        {"type": "api-request-shape", "sessionId": "S"}, {"type": "api-request-blob", "sessionId": "S"},
        {"type": "api-request", "sessionId": "S"}, {"type": "tools-used", "tools": ["Bash"]}, {"type": "atis-latch", "atis": ""},
        {**entry, "type": "assistant", "uuid": "u1", "message": {"id": "m1", "model": "claude-opus-5-5", "content": [{"type": "tool_use", "id": "b1", "name": "Bash", "input": {"command": "ls"}}], "usage": {"input_tokens": 100, "output_tokens": 20}}},
        {**entry, "type": "attachment", "attachment": {"type": "hook_success", "hookName": "PreToolUse:Bash", "toolUseID": "b1", "hookEvent": "PreToolUse", "stdout": "pre\n", "exitCode": 0, "command": "echo pre"}},
        {**entry, "type": "attachment", "attachment": {"type": "hook_success", "hookName": "Stop", "hookEvent": "Stop", "stdout": "stop\n", "exitCode": 0, "command": "echo stop"}},
        {**entry, "type": "system", "subtype": "stop_hook_summary", "hookCount": 1, "hookInfos": [{"command": "echo stop"}], "hookErrors": [], "preventedContinuation": False},
        {"type": "cost-state", "sessionId": "S", "totalCostUSD": 0.0016},
        {"type": "cost-state", "sessionId": "S", "totalCostUSD": 0.004},
    )))
    assert s.warnings == []
    hooks = [a.data for a in s.actions if a.kind == "hook"]
    assert [(h["event"], h.get("call_id"), h["output"]) for h in hooks] == [("PreToolUse", "b1", "pre\n"), ("Stop", None, "stop\n")]
    assert s.metrics.cost_usd == 0.004 and s.metrics.tokens_in == 100


def test_rollout_0_169_item_completed_tool_search_and_namespaced_mcp():
    def line(kind, payload):
        return {"timestamp": "2026-12-01T02:56:35.000Z", "type": kind, "payload": payload}

    def done(item):
        return line("event_msg", {"type": "item_completed", "item": item})

    s = session_of(parse(CodexRolloutParser(), lines(
        line("session_meta", {"id": "T", "cwd": "/w", "cli_version": "0.169.0", "originator": "codex_exec"}),
        line("world_state", {"full": True, "state": {}}),
        line("event_msg", {"type": "thread_settings_applied", "thread_id": "T"}),
        line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix it"}]}),
        done({"type": "UserMessage", "id": "u", "content": [{"type": "text", "text": "fix it"}]}),
        line("response_item", {"type": "custom_tool_call", "call_id": "p1", "name": "apply_patch", "input": "*** Begin Patch\n*** End Patch\n"}),
        line("token_usage_record", {"usage": {"input_tokens": 100}}),
        done({"type": "FileChange", "id": "p1", "status": "completed"}),
        line("response_item", {"type": "custom_tool_call_output", "call_id": "p1", "output": "Exit code: 0\nOutput:\nSuccess."}),
        line("response_item", {"type": "function_call", "name": "exec_command", "arguments": "{\"cmd\":\"exit 3\"}", "call_id": "c1"}),
        done({"type": "CommandExecution", "id": "c1", "status": "failed", "exit_code": 3, "aggregated_output": ""}),
        line("response_item", {"type": "function_call_output", "call_id": "c1", "output": "Chunk ID: x\nOutput:\n"}),
        line("response_item", {"type": "tool_search_call", "call_id": "ts1", "status": "completed", "execution": "client", "arguments": {"query": "probe"}}),
        line("response_item", {"type": "tool_search_output", "call_id": "ts1", "status": "completed", "tools": [{"type": "namespace", "name": "mcp__mini", "tools": []}]}),
        line("response_item", {"type": "function_call", "name": "probe", "namespace": "mcp__mini", "arguments": "{\"x\":\"1\"}", "call_id": "m1"}),
        done({"type": "McpToolCall", "id": "m1", "status": "completed", "result": {"content": [], "isError": False}}),
        line("response_item", {"type": "function_call_output", "call_id": "m1", "output": [{"type": "input_text", "text": "probe-ok"}]}),
    )))
    assert s.warnings == []
    assert [t.prompt for t in s.turns] == ["fix it"]  # once, though two lines carry it
    assert [(c.tool, c.input, c.outcome) for c in s.calls] == [
        ("apply_patch", {"input": "*** Begin Patch\n*** End Patch\n"}, "ok"),
        ("exec_command", {"cmd": "exit 3"}, "error"),
        ("tool_search", {"query": "probe"}, "ok"),
        ("mcp__mini__probe", {"x": "1"}, "ok"),
    ]
