"""The Anthropic Messages transport and the claude-code judge (the real Claude Code
2.1.328 in print mode) against the scripted model server.

The scripted server answers a Messages request that offers no tools as a side request
(a fixed text, "Scripted session"), and a judge offers none, so these tests check the
wire and the plumbing (headers, body, the reply read back, tokens, the model used, no
tools given to the judge), not a verdict; verdicts are tested over Chat Completions."""

from __future__ import annotations

import os

import pytest
from realagents import need

from benchtape.core.judgments import JudgeRequest
from benchtape.models.judge_service import JudgeService
from benchtape.models.server import serve
from benchtape.spec.judge_config import JudgesConfig, ProviderSpec

SIDE_TEXT = "Scripted session"


def test_anthropic_messages_wire():
    with serve({"steps": []}) as srv:
        spec = ProviderSpec("a", "anthropic", "claude-haiku-4-5", srv.url, "A_KEY", retries=0, timeout=10)
        reply = JudgeService(JudgesConfig(providers={"a": spec}, default="a"), {"A_KEY": "sk-fake"})(JudgeRequest("Grade this answer.", temperature=0.0, max_tokens=64))
        [entry] = srv.entries(api="messages")
    assert reply.text == SIDE_TEXT and reply.provider == "a" and reply.stop_reason == "end_turn"
    assert reply.input_tokens is not None and reply.output_tokens is not None
    assert entry["body"] == {"model": "claude-haiku-4-5", "max_tokens": 64, "temperature": 0.0, "messages": [{"role": "user", "content": "Grade this answer."}]}
    assert entry["path"] == "/v1/messages"


@pytest.mark.xdist_group("real-claude")
def test_claude_code_judge_runs_the_real_binary_in_print_mode(tmp_path):
    claude = need("claude-code")
    with serve({"steps": []}) as srv:
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(tmp_path),  # the binary's own login lives here; benchtape holds no key for it
            "ANTHROPIC_BASE_URL": srv.url,
            "ANTHROPIC_API_KEY": "sk-fake",
            "BENCHTAPE_CLAUDE": str(claude),
        }
        spec = ProviderSpec("cc", "claude-code", "claude-haiku-4-5", params={"effort": "low"}, retries=0, timeout=120)
        service = JudgeService(JudgesConfig(providers={"cc": spec}, default="cc"), env)
        resolved, provider = service.resolve(JudgeRequest("Is 2 + 2 = 4? Answer in JSON."))
        reply = service.send(resolved, provider)
        asked = [e for e in srv.entries(api="messages") if "Is 2 + 2 = 4?" in str(e["body"].get("messages"))]
    assert reply.text == SIDE_TEXT and reply.model == "claude-haiku-4-5" and reply.latency_ms > 0
    assert resolved.params == {"effort": "low"} and resolved.transport == "claude-code"
    assert asked and all(not e["body"].get("tools") for e in asked)  # the judge is given no tools
    assert not list(tmp_path.glob(".claude/projects/*/*.jsonl"))  # nothing saved (--no-session-persistence)


def test_claude_code_without_the_binary_names_the_install(tmp_path):
    spec = ProviderSpec("cc", "claude-code", None)
    service = JudgeService(JudgesConfig(providers={"cc": spec}, default="cc"), {"PATH": str(tmp_path), "BENCHTAPE_CLAUDE": str(tmp_path / "nope")})
    with pytest.raises(Exception, match="needs the `claude` binary"):
        service(JudgeRequest("q"))
