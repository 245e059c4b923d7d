"""The Anthropic Messages API as Claude Code calls it, spoken by the scripted server (no binary needed)."""

from __future__ import annotations

import json

import pytest
from modelkit import events, post, post_json

from benchtape.models.server import serve

TOOLS = [{"name": n, "input_schema": {"type": "object"}} for n in ("Agent", "Bash", "Edit", "Read", "Skill", "Write")]
ENV = {"role": "system", "content": [{"type": "text", "text": "# Environment\nPrimary working directory: /w"}]}


def user(*texts):
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def request(messages, tools=TOOLS, stream=True):
    return {"model": "claude-opus-5-5", "max_tokens": 100, "stream": stream, "tools": tools, "messages": messages}


def ask(srv, messages, **kw):
    status, headers, raw = post(srv.url + "/v1/messages?beta=true", request(messages, **kw))
    assert status == 200, raw
    return events(raw) if kw.get("stream", True) else json.loads(raw)


def test_one_turn_streams_exactly_as_the_api():
    script = {"steps": [{"think": "plan"}, {"say": "running"}, {"tool": "Bash", "input": {"command": "ls"}, "usage": {"tokens_in": 11, "tokens_out": 5}}, {"say": "done"}]}
    with serve(script) as srv:
        got = ask(srv, [user("<system-reminder>x</system-reminder>", "do it"), ENV])
    names = [n for n, _ in got]
    assert names == [
        "message_start",
        "content_block_start", "content_block_delta", "content_block_delta", "content_block_stop",  # thinking + signature
        "content_block_start", "content_block_delta", "content_block_stop",  # text
        "content_block_start", "content_block_delta", "content_block_stop",  # tool_use
        "message_delta", "message_stop",
    ]
    start = got[0][1]["message"]
    assert start["usage"]["input_tokens"] == 11 and start["content"] == []
    tool = got[8][1]["content_block"]
    assert tool["type"] == "tool_use" and tool["name"] == "Bash" and tool["id"].startswith("toolu_")
    assert json.loads(got[9][1]["delta"]["partial_json"]) == {"command": "ls"}
    assert got[11][1]["delta"]["stop_reason"] == "tool_use" and got[11][1]["usage"]["output_tokens"] == 5


def test_non_streaming_json_and_the_closing_turn():
    with serve({"steps": [{"tool": "Read", "input": {"file_path": "a"}}, {"say": "bye"}]}) as srv:
        first = ask(srv, [user("go")], stream=False)
        history = [user("go"), {"role": "assistant", "content": first["content"]}, {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first["content"][0]["id"], "content": "x"}]}]
        last = ask(srv, history, stream=False)
    assert first["stop_reason"] == "tool_use" and first["content"][0]["input"] == {"file_path": "a"}
    assert last["stop_reason"] == "end_turn" and last["content"] == [{"type": "text", "text": "bye"}]


def test_side_requests_never_use_a_turn_and_a_retry_gets_the_same_turn():
    with serve({"steps": [{"tool": "Bash", "input": {"command": "ls"}}, {"say": "ok"}]}) as srv:
        side = ask(srv, [user("write a title")], tools=[], stream=False)
        one = ask(srv, [user("go")], stream=False)
        again = ask(srv, [user("go")], stream=False)  # the client retried
        log = srv.log
    assert side["content"][0]["text"] == "Scripted session" and side["usage"]["input_tokens"] == 0
    assert one["content"][0]["name"] == "Bash" and again["content"][0]["name"] == "Bash"
    assert [(e["role"], e.get("turn")) for e in log] == [("side", None), ("main", 0), ("main", 0)]


def test_a_subagent_plays_its_own_turns():
    script = {"steps": [{"subagent": {"prompt": "Count files.", "steps": [{"tool": "Bash", "input": {"command": "ls"}}, {"say": "3"}]}}, {"say": "main done"}]}
    with serve(script) as srv:
        spawn = ask(srv, [user("go")], stream=False)["content"][0]
        sub1 = ask(srv, [user("<system-reminder>ctx</system-reminder>", "Count files.")], stream=False)
        sub2 = ask(srv, [user("Count files."), {"role": "assistant", "content": sub1["content"]}, user("r")], stream=False)
        log = srv.log
    assert spawn["name"] == "Agent" and spawn["input"]["run_in_background"] is False
    assert sub1["content"][0]["input"] == {"command": "ls"} and sub2["content"][0]["text"] == "3"
    assert [(e["role"], e["conversation"], e["turn"]) for e in log] == [("main", "main", 0), ("subagent", "sub1", 0), ("subagent", "sub1", 1)]


def test_task_and_agent_and_glob_map_to_what_is_offered():
    script = {"steps": [{"parallel": [{"subagent": {"prompt": "p", "tool": "Task"}}, {"tool": "Glob", "input": {"pattern": "*.py"}}]}]}
    with serve(script) as srv:
        content = ask(srv, [user("go")], stream=False)["content"]
    assert content[0]["name"] == "Agent"  # 2.1.x offers Agent, not Task
    assert content[1]["name"] == "Bash" and "*.py" in content[1]["input"]["command"]


def test_noop_says_the_prompt_back_and_running_out_is_recorded():
    with serve({"noop": True}) as srv:
        noop = ask(srv, [user("<system-reminder>r</system-reminder>", "Fix it."), ENV], stream=False)
    assert noop["content"] == [{"type": "text", "text": "Fix it."}] and noop["stop_reason"] == "end_turn"
    with serve({"steps": [{"say": "only"}]}) as srv:
        ask(srv, [user("a")], stream=False)
        more = ask(srv, [user("a"), {"role": "assistant", "content": "only"}, user("b")], stream=False)
        assert len(srv.exhausted) == 1 and srv.exhausted[0]["turn"] == 1
    assert "no more turns: it had 1 and the agent asked for turn 2" in more["content"][0]["text"]


def test_probe_count_tokens_and_other_gets():
    with serve(None) as srv:
        status, _, _ = post(srv.url + "/v1/messages/count_tokens", {"messages": []})
        _, counted = post_json(srv.url + "/v1/messages/count_tokens", {"messages": []})
        import urllib.request

        head = urllib.request.urlopen(urllib.request.Request(srv.url + "/api/hello", method="HEAD"), timeout=5)
        got = json.loads(urllib.request.urlopen(srv.url + "/anything", timeout=5).read())
        status_404, _, _ = post(srv.url + "/v2/nothing", {})
    assert status == 200 and counted == {"input_tokens": 10}
    assert head.status == 200 and got == {} and status_404 == 404


@pytest.mark.parametrize("raw", [b"not json", b"[1, 2]"])
def test_a_body_that_is_not_a_json_object_is_a_400(raw):
    import urllib.error
    import urllib.request

    with serve(None) as srv:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(urllib.request.Request(srv.url + "/v1/messages", data=raw, method="POST"), timeout=5)
    assert err.value.code == 400
