"""Chat Completions for AI judges: scripted replies and the faults a judge must survive."""

from __future__ import annotations

import json
import socket
import time

import pytest
from modelkit import events, post, post_json

from benchtape.core.errors import BadInput
from benchtape.models.server import serve
from benchtape.spec.script import script_from


def ask(srv, text: str, **extra):
    return post(srv.openai_url + "/chat/completions", {"model": "judge-1", "messages": [{"role": "user", "content": text}], **extra})


def test_replies_in_order_with_usage_and_the_request_logged():
    script = {"chat": [{"reply": "first"}, {"reply": {"pass": True, "score": 1}, "usage": {"tokens_in": 7, "tokens_out": 3}}]}
    with serve(script) as srv:
        status, _, raw = ask(srv, "grade this")
        first = json.loads(raw)
        status2, _, raw2 = ask(srv, "and this")
        second = json.loads(raw2)
        log = srv.entries(api="chat")
    assert status == status2 == 200
    assert first["object"] == "chat.completion" and first["model"] == "judge-1"
    assert first["choices"][0]["message"] == {"role": "assistant", "content": "first", "refusal": None}
    assert json.loads(second["choices"][0]["message"]["content"]) == {"pass": True, "score": 1}
    assert second["usage"]["prompt_tokens"] == 7 and second["usage"]["completion_tokens"] == 3
    assert [e["outcome"] for e in log] == ["reply", "reply"]
    assert log[0]["body"]["messages"][0]["content"] == "grade this"


def test_match_picks_the_reply_for_the_request_whatever_the_order():
    script = {"chat": [{"reply": "A", "match": "alpha"}, {"reply": "B", "match": "beta"}, {"reply": "other"}]}
    with serve(script) as srv:
        got = [json.loads(ask(srv, t)[2])["choices"][0]["message"]["content"] for t in ("about beta", "no match", "alpha!")]
    assert got == ["B", "other", "A"]


def test_malformed_json_text_and_a_refusal_are_answered_as_scripted():
    with serve({"chat": [{"reply": '{"pass": tru'}, {"refusal": "I can't help with that."}]}) as srv:
        malformed = json.loads(ask(srv, "x")[2])["choices"][0]["message"]
        refused = json.loads(ask(srv, "y")[2])["choices"][0]["message"]
    assert malformed["content"] == '{"pass": tru'
    with pytest.raises(json.JSONDecodeError):
        json.loads(malformed["content"])
    assert refused["content"] is None and refused["refusal"] == "I can't help with that."


def test_rate_limit_with_retry_after_then_a_reply():
    with serve({"chat": [{"status": 429, "retry_after": 2}, {"reply": "ok"}]}) as srv:
        status, headers, raw = ask(srv, "x")
        retried = ask(srv, "x")
    assert status == 429 and headers["retry-after"] == "2"
    assert json.loads(raw)["error"]["type"] == "rate_limit_exceeded"
    assert retried[0] == 200 and json.loads(retried[2])["choices"][0]["message"]["content"] == "ok"


def test_server_error():
    with serve({"chat": [{"status": 503, "message": "overloaded"}]}) as srv:
        status, _, raw = ask(srv, "x")
    assert status == 503 and json.loads(raw)["error"]["message"] == "overloaded"


def test_a_hang_outlasts_the_client_timeout_and_stopping_does_not_wait_for_it():
    with serve({"chat": [{"hang": 30}]}) as srv:
        started = time.monotonic()
        with pytest.raises((socket.timeout, TimeoutError, OSError)):
            ask_timeout = post(srv.openai_url + "/chat/completions", {"messages": [{"role": "user", "content": "x"}]}, timeout=0.5)
            raise AssertionError(f"the hang answered: {ask_timeout}")
        assert srv.entries(api="chat")[0]["outcome"] == "hang"
    assert time.monotonic() - started < 10  # not the 30 s of the hang


def test_streaming_sends_chunks_then_done():
    with serve({"chat": [{"reply": "streamed"}, {"refusal": "no"}]}) as srv:
        _, headers, raw = ask(srv, "x", stream=True)
        _, _, raw2 = ask(srv, "y", stream=True)
    assert headers["content-type"] == "text/event-stream"
    chunks = events(raw)
    assert chunks[-1] == (None, "[DONE]")
    text = "".join(c["choices"][0]["delta"].get("content") or "" for _, c in chunks[:-1] if c["choices"])
    assert text == "streamed"
    assert any(c["choices"] and c["choices"][0]["delta"].get("refusal") == "no" for _, c in events(raw2)[:-1])


def test_running_out_of_replies_says_so_and_is_recorded():
    with serve({"chat": [{"reply": "only"}]}) as srv:
        ask(srv, "x")
        status, _, raw = ask(srv, "y")
        exhausted = srv.exhausted
    assert status == 200
    said = json.loads(raw)["choices"][0]["message"]["content"]
    assert "No `chat:` reply of the script is left for this judge request: the script has 1" in said and "script one reply for each" in said
    assert len(exhausted) == 1 and exhausted[0]["api"] == "chat"


def test_concurrent_judges_each_get_one_reply():
    import concurrent.futures

    n = 12
    with serve({"chat": [{"reply": str(i)} for i in range(n)]}) as srv:
        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            got = list(pool.map(lambda i: json.loads(ask(srv, f"q{i}")[2])["choices"][0]["message"]["content"], range(n)))
    assert sorted(got, key=int) == [str(i) for i in range(n)]


def test_named_slots_play_their_own_scripts():
    with serve({"chat": [{"reply": "default"}]}) as srv:
        url = srv.add("judge2", script_from({"chat": [{"reply": "second"}]}))
        _, body = post_json(url + "/v1/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
        _, default = post_json(srv.openai_url + "/chat/completions", {"messages": [{"role": "user", "content": "x"}]})
        status, missing = post_json(srv.url + "/s/nobody/v1/chat/completions", {"messages": []})
    assert body["choices"][0]["message"]["content"] == "second"
    assert default["choices"][0]["message"]["content"] == "default"
    assert status == 404 and "nobody" in missing["error"]["message"]


def test_a_port_in_use_is_bad_input_naming_it():
    with serve({}) as srv:
        with pytest.raises(BadInput) as err:
            with serve({}, port=srv.port):
                pass
    assert str(srv.port) in err.value.what and "--port" in (err.value.fix or "")


def test_malformed_chat_scripts_name_the_line(tmp_path):
    bad = tmp_path / "s.yaml"
    bad.write_text("chat:\n  - reply: ok\n  - status: 200\n")
    with pytest.raises(BadInput) as err:
        serve(bad).__enter__()
    assert err.value.file == str(bad) and err.value.line == 3 and "400-599" in err.value.what
    bad.write_text("chat:\n  - reply: ok\n    matches: x\n")
    with pytest.raises(BadInput) as err:
        serve(bad).__enter__()
    assert err.value.line == 3 and "match" in (err.value.fix or "")
