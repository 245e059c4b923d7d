"""Judge transports against the scripted model server: what a judge's model can do wrong
(429 with retry-after, 5xx, a hang past the timeout, a refusal), the per-provider
concurrency limit, pricing, and a local OpenAI-compatible endpoint reached by its base
URL alone."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from judgekit import local, verdict

from benchtape.core.judgments import JudgeError, JudgeRequest
from benchtape.models.judge_service import JudgeService
from benchtape.models.price_table import cost_usd, price_of
from benchtape.models.providers import OpenAITransport, TransportError, retry_after, transport_for
from benchtape.models.server import serve
from benchtape.spec.bench import load_bench
from benchtape.spec.judge_config import JudgesConfig, ProviderSpec


def ask(url: str, prompt: str = "grade this", **kw):
    return JudgeService(local(url, **kw), {})(JudgeRequest(prompt))


def test_a_reply_with_usage_and_the_exact_body_sent():
    with serve({"chat": [{"reply": verdict(True, 1), "usage": {"tokens_in": 11, "tokens_out": 4}}]}) as srv:
        reply = JudgeService(local(srv.openai_url), {})(JudgeRequest("grade this", temperature=0.2, max_tokens=50))
        body = srv.entries(api="chat")[0]["body"]
    assert reply.text == verdict(True, 1) and reply.input_tokens == 11 and reply.output_tokens == 4
    assert reply.provider == "local" and reply.model == "judge-1" and reply.stop_reason == "stop"
    assert body == {"model": "judge-1", "messages": [{"role": "user", "content": "grade this"}], "temperature": 0.2, "max_tokens": 50}
    assert len(reply.request_sha256) == 64


def test_429_is_retried_after_the_time_the_server_asks():
    with serve({"chat": [{"status": 429, "retry_after": 0.4}, {"reply": "ok"}]}) as srv:
        started = time.monotonic()
        reply = ask(srv.openai_url, retries=2)
        elapsed = time.monotonic() - started
        outcomes = [e["status"] for e in srv.entries(api="chat")]
    assert reply.text == "ok" and outcomes == [429, 200]
    assert elapsed >= 0.4


def test_5xx_is_retried_then_given_up_on_with_the_reason():
    with serve({"chat": [{"status": 503}, {"status": 502}, {"reply": "late"}]}) as srv:
        assert ask(srv.openai_url, retries=2).text == "late"
    with serve({"chat": [{"status": 503, "message": "overloaded"}] * 3}) as srv:
        with pytest.raises(TransportError, match=r"HTTP 503: overloaded \(gave up after 2 attempts\)"):
            ask(srv.openai_url, retries=1)
        assert len(srv.entries(api="chat")) == 2


def test_a_4xx_other_than_429_is_not_retried():
    with serve({"chat": [{"status": 401, "message": "bad key"}, {"reply": "never"}]}) as srv:
        with pytest.raises(TransportError, match="refused the request: HTTP 401: bad key"):
            ask(srv.openai_url, retries=3)
        assert len(srv.entries(api="chat")) == 1


def test_a_hang_past_the_timeout_is_an_error_not_a_wait():
    with serve({"chat": [{"hang": 20}]}) as srv:
        started = time.monotonic()
        with pytest.raises(TransportError, match=r"no answer within 0.5s"):
            ask(srv.openai_url, timeout=0.5, retries=0)
        assert time.monotonic() - started < 5


def test_a_refusal_comes_back_marked():
    with serve({"chat": [{"refusal": "I can't help with that."}]}) as srv:
        reply = ask(srv.openai_url)
    assert reply.stop_reason == "refusal" and reply.text == "I can't help with that."


def test_nothing_listens():
    with pytest.raises(TransportError, match="cannot reach"):
        ask("http://127.0.0.1:9/v1", retries=0, timeout=2)


def test_retry_after_forms():
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "250"}) == 0.25
    assert retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert retry_after({}) is None


def test_a_local_openai_compatible_endpoint_works_by_its_base_url_alone(tmp_path: Path):
    with serve({"chat": [{"reply": verdict(True, 1, "fine")}]}) as srv:
        bench = tmp_path / "bench.yaml"
        bench.write_text(
            "harness: mock\n"
            "judges:\n"
            "  providers:\n"
            f"    mine: {{endpoint: '{srv.openai_url}', model: qwen2.5-coder}}\n"
            "scenarios:\n  - {name: a, prompt: hi, checks: [{type: llm-rubric, value: says hi}]}\n"
        )
        config = load_bench(bench).judges
        spec = config.providers["mine"]
        assert (spec.transport, spec.api_key_env, spec.endpoint) == ("openai", None, srv.openai_url)
        reply = JudgeService(config, {})(JudgeRequest("hi?"))  # no key in the environment at all
        entry = srv.entries(api="chat")[0]
    assert reply.text.endswith('"pass": true}') and reply.provider == "mine"
    assert entry["body"]["model"] == "qwen2.5-coder"


def test_the_key_goes_in_the_header_and_nowhere_else():
    seen = {}

    class Peek(OpenAITransport):
        def headers(self):
            seen.update(super().headers())
            return super().headers()

    with serve({"chat": [{"reply": "ok"}]}) as srv:
        spec = ProviderSpec("p", "openai", "m", srv.openai_url, "MY_JUDGE_KEY")
        JudgeService(JudgesConfig(providers={"p": spec}, default="p"), {"MY_JUDGE_KEY": "sk-test-123"}, transports=lambda s, env: Peek(s, env))(JudgeRequest("q"))
        body = srv.entries(api="chat")[0]["body"]
    assert seen["authorization"] == "Bearer sk-test-123" and "sk-test-123" not in str(body)


def test_an_unset_key_is_an_error_naming_the_variable():
    spec = ProviderSpec("p", "openai", "m", "http://127.0.0.1:9/v1", "MY_JUDGE_KEY")
    with pytest.raises(JudgeError, match="MY_JUDGE_KEY"):
        JudgeService(JudgesConfig(providers={"p": spec}, default="p", explicit_default=True), {})(JudgeRequest("q"))


def test_concurrency_per_provider_is_a_ceiling(tmp_path):
    """16 threads ask at once; the provider admits 3. Counted where the request is sent,
    outside the limiter, with a pause per request so excess would overlap."""
    state = {"now": 0, "max": 0}
    lock = threading.Lock()

    class Counting(OpenAITransport):
        def complete(self, model, prompt, params):
            with lock:
                state["now"] += 1
                state["max"] = max(state["max"], state["now"])
            try:
                time.sleep(0.03)
                return super().complete(model, prompt, params)
            finally:
                with lock:
                    state["now"] -= 1

    with serve({"chat": [{"reply": verdict(True, 1)}] * 48}) as srv:
        service = JudgeService(local(srv.openai_url, concurrency=3), {}, transports=lambda s, env: Counting(s, env))
        threads = [threading.Thread(target=lambda: [service(JudgeRequest(f"q{i}")) for i in range(3)]) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        served = len(srv.entries(api="chat"))
    assert served == 48 and state["max"] == 3
    assert service.stats()["local"]["sent"] == 48 and service.stats()["local"]["max_in_flight"] == 3


def test_pricing_known_unknown_and_stated():
    assert price_of("claude-haiku-4-5-20251001") == (1.0, 5.0)
    assert price_of("openrouter-ish/gpt-4.1-mini") == (0.4, 1.6)  # longest prefix, gateway id
    assert cost_usd("claude-haiku-4-5", 1_000_000, 1_000_000) == pytest.approx(6.0)
    assert cost_usd("llama3", 100, 10) is None  # unknown, never 0
    assert cost_usd("llama3", 100, 10, {"input": 0, "output": 0}) == 0.0
    with serve({"chat": [{"reply": "ok", "usage": {"tokens_in": 1000, "tokens_out": 500}}]}) as srv:
        reply = ask(srv.openai_url, price={"input": 2.0, "output": 4.0})
    assert reply.cost_usd == pytest.approx((1000 * 2 + 500 * 4) / 1e6)


def test_transport_for_refuses_an_unknown_wire():
    with pytest.raises(TransportError, match="unknown transport"):
        transport_for(ProviderSpec("x", "smoke-signals", "m"), {})
