"""The OpenAI Responses API as Codex 0.169 calls it, spoken by the scripted server (no binary needed)."""

from __future__ import annotations

import json

from modelkit import events, post

from benchtape.models.server import serve

TOOLS = [{"type": "function", "name": "exec_command"}, {"type": "custom", "name": "apply_patch"}, {"type": "tool_search"}]


def env(cwd):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": f"<environment_context>\n  <cwd>{cwd}</cwd>\n</environment_context>"}]}


def user(text):
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}


def ask(srv, items, tools=TOOLS):
    status, _, raw = post(srv.openai_url + "/responses", {"model": "gpt-5.5", "stream": True, "input": items, "tools": tools})
    assert status == 200, raw
    got = events(raw)
    assert got[0][0] == "response.created" and got[-1][0] == "response.completed"
    return got, got[-1][1]["response"]


def test_items_are_announced_then_done_and_usage_completes_the_response():
    script = {"steps": [{"think": "plan"}, {"tool": "Bash", "input": {"command": "ls -la"}, "usage": {"tokens_in": 9, "tokens_out": 4, "cache_read_tokens": 2}}, {"say": "x"}]}
    with serve(script) as srv:
        got, response = ask(srv, [env("/w"), user("go")])
    assert [n for n, _ in got] == ["response.created", "response.output_item.added", "response.output_item.done", "response.output_item.added", "response.output_item.done", "response.completed"]
    reasoning, call = response["output"]
    assert reasoning["type"] == "reasoning" and reasoning["summary"][0]["text"] == "plan"
    assert call["type"] == "function_call" and call["name"] == "exec_command" and json.loads(call["arguments"]) == {"cmd": "ls -la", "yield_time_ms": 30000}
    assert response["usage"]["input_tokens"] == 11 and response["usage"]["input_tokens_details"]["cached_tokens"] == 2


def test_a_message_streams_its_text():
    with serve({"steps": [{"say": "hello"}]}) as srv:
        got, response = ask(srv, [user("go")])
    assert ("response.output_text.delta" in [n for n, _ in got]) and response["output"][0]["content"][0]["text"] == "hello"


def test_edit_and_write_become_apply_patch_read_from_the_cwd(tmp_path):
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    script = {"steps": [{"parallel": [
        {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
        {"tool": "Write", "input": {"file_path": "new.txt", "content": "one\ntwo\n"}},
    ]}]}
    with serve(script) as srv:
        _, response = ask(srv, [env(tmp_path), user("go")])
    edit, write = response["output"]
    assert edit["type"] == "custom_tool_call" and edit["name"] == "apply_patch"
    assert edit["input"] == "*** Begin Patch\n*** Update File: calc.py\n@@\n-    return a - b\n+    return a + b\n*** End Patch\n"
    assert write["input"] == "*** Begin Patch\n*** Add File: new.txt\n+one\n+two\n*** End Patch\n"


def test_an_mcp_call_is_searched_first_and_keeps_its_turn():
    with serve({"steps": [{"tool": "mcp__mini__probe", "input": {"x": "1"}}, {"say": "ok"}]}) as srv:
        _, first = ask(srv, [user("go")])
        search = first["output"][0]
        found = {"type": "tool_search_output", "call_id": search["call_id"], "tools": [{"type": "namespace", "name": "mcp__mini", "tools": [{"type": "function", "name": "probe"}]}]}
        _, second = ask(srv, [user("go"), search, found])
        log = srv.log
    assert search["type"] == "tool_search_call" and search["arguments"] == {"query": "probe"} and search["execution"] == "client"
    call = second["output"][0]
    assert (call["type"], call["namespace"], call["name"], json.loads(call["arguments"])) == ("function_call", "mcp__mini", "probe", {"x": "1"})
    assert [(e["outcome"], e["turn"]) for e in log] == [("tool_search", 0), ("turn", 0)]


def test_side_noop_exhausted_and_unmapped():
    with serve({"steps": [{"say": "only"}]}) as srv:
        _, side = ask(srv, [user("title?")], tools=[])
        ask(srv, [user("go")])
        _, out = ask(srv, [user("go"), user("again")])
        assert srv.exhausted and srv.exhausted[0]["turn"] == 1
    assert side["output"][0]["content"][0]["text"] == "Scripted session"
    assert "no more turns" in out["output"][0]["content"][0]["text"]
    with serve({"noop": True}) as srv:
        _, noop = ask(srv, [env("/w"), user("Fix it.")])
    assert noop["output"][0]["content"][0]["text"] == "Fix it."
    with serve({"steps": [{"skill": "review"}]}) as srv:
        _, unmapped = ask(srv, [user("go")])
        assert srv.entries(outcome="unmapped")
    assert "no tool for `Skill`" in unmapped["output"][0]["content"][0]["text"]
