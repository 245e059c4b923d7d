"""What a scripted session's model could not answer, as the session's errors (recorder/scripted.py).

An agent that asks its model for something besides its turns (gptme names each conversation
with a request offering no tools) gets that request read as a judge's: the script's `chat:`
replies answer it. With none left the session's error said "the scripted model ran out of
turns: the agent asked for more than the scenario's mock: steps script", pointing at the steps
(which were all played) instead of the missing `chat:` reply.
"""

from __future__ import annotations

import json
import urllib.request

from benchtape.recorder.scripted import ScriptedModels


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.loads(resp.read())


def test_a_request_without_tools_and_no_chat_reply_names_chat_not_the_steps() -> None:
    models = ScriptedModels()
    try:
        mock = {"steps": [{"tool": "Bash", "input": {"command": "true"}}, {"say": "done"}]}
        endpoint = models.endpoint("s1", mock, noop=False, source="bench.yaml")
        post(f"{endpoint.url}/v1/chat/completions", {"model": "m", "messages": [{"role": "user", "content": "Name this conversation"}]})
        errors = [a.data["message"] for a in models.findings("s1")]
        assert len(errors) == 1, errors
        assert "offering no tools at request 1" in errors[0] and "`chat:`" in errors[0], errors
        assert "ran out of turns" not in errors[0]
    finally:
        models.close()


def test_an_agent_asking_past_its_steps_still_says_the_steps_ran_out() -> None:
    models = ScriptedModels()
    try:
        endpoint = models.endpoint("s2", {"steps": [{"say": "done"}]}, noop=False, source="bench.yaml")
        tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object", "properties": {}}}}]
        said = [{"role": "user", "content": "go"}]
        post(f"{endpoint.url}/v1/chat/completions", {"model": "m", "tools": tools, "messages": said})
        said += [{"role": "assistant", "content": "done"}, {"role": "user", "content": "and then?"}]
        post(f"{endpoint.url}/v1/chat/completions", {"model": "m", "tools": tools, "messages": said})
        errors = [a.data["message"] for a in models.findings("s2")]
        assert any("ran out of turns" in e for e in errors), errors
    finally:
        models.close()


def test_a_scenario_mock_takes_chat_replies_for_the_scripted_model(tmp_path) -> None:
    """The error above names `chat:`; a scenario's `mock:` refused it (valid keys: metrics,
    steps), so an agent's title request could never be answered in a `--model scripted` run."""
    from benchtape.spec.bench import load_bench
    from benchtape.spec.script import script_from

    (tmp_path / "bench.yaml").write_text(
        "harness: mock\nscenarios:\n  - name: one\n    prompt: hi\n"
        "    mock:\n      steps: [{say: hello}]\n      chat: [{reply: fix calc}]\n"
    )
    bench = load_bench(tmp_path / "bench.yaml")
    mock = bench.scenarios[0].mock
    assert mock["chat"] == [{"reply": "fix calc"}]
    assert len(script_from(mock, "bench.yaml").chat) == 1
