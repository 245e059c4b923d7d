"""Transports to judge models: the Anthropic Messages API, OpenAI Chat Completions (and so
every OpenAI-compatible server: Ollama, vLLM, llama.cpp, OpenRouter, DeepSeek, …), and
the local `claude` binary in print mode.

Plain HTTP (urllib3, already installed as the Docker SDK's own dependency), not the
official SDKs: a judge call is one POST and one JSON reply, and the SDKs would add two
dependency trees (httpx, pydantic, anyio, …) to read two fields. Doing it ourselves also
puts the parts that matter for recorded judgments in our hands: the exact body sent, the
retry policy (429/5xx/timeouts with exponential backoff, honouring `retry-after`), the
timeout, and a connection pool shared by every thread, so 3,000 judge calls reuse their
connections instead of paying a TCP handshake each.
"""

from __future__ import annotations

import email.utils
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Mapping, Protocol

import orjson

from benchtape.core.judgments import JudgeError
from benchtape.spec.judge_config import ProviderSpec

if TYPE_CHECKING:  # imported by the first request: a grading with no judge call never loads it
    import urllib3

RETRY_STATUSES = {408, 409, 425, 429, 500, 502, 503, 504, 529}
BACKOFF_BASE = 0.5  # seconds, doubled per attempt
BACKOFF_CAP = 30.0
RETRY_AFTER_CAP = 120.0
DEFAULT_MAX_TOKENS = 2048  # the Messages API requires one; room for reasoning before the verdict
ANTHROPIC_VERSION = "2023-06-01"
ERROR_EXCERPT = 300


class TransportError(JudgeError):
    """The provider did not give an answer (after retries, where retrying could help)."""


@dataclass(frozen=True)
class Completion:
    text: str
    input_tokens: int | None
    output_tokens: int | None
    stop_reason: str | None
    model: str | None  # the model the provider says answered
    latency_ms: float
    cost_usd: float | None = None  # when the transport reports its own (claude-code)
    attempts: int = 1


class Transport(Protocol):
    spec: ProviderSpec

    def complete(self, model: str, prompt: str, params: Mapping[str, Any]) -> Completion: ...

    def list_models(self) -> list[dict[str, Any]]: ...


# ---------------------------------------------------------------- HTTP


_POOL_LOCK = threading.Lock()
_POOL: urllib3.PoolManager | None = None


def pool() -> urllib3.PoolManager:
    """One connection pool for every provider and thread (keep-alive per host)."""
    global _POOL
    import urllib3

    with _POOL_LOCK:
        if _POOL is None:
            _POOL = urllib3.PoolManager(num_pools=16, maxsize=32, block=False, retries=False)
        return _POOL


def retry_after(headers: Mapping[str, str], now: float | None = None) -> float | None:
    """Seconds to wait from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value).timestamp()
    except (TypeError, ValueError):
        return None
    return max(0.0, when - (time.time() if now is None else now))


def backoff(attempt: int) -> float:
    """Full-jitter exponential backoff: many graders hitting one 429 do not retry in step."""
    return random.uniform(0, min(BACKOFF_CAP, BACKOFF_BASE * (2**attempt)))


class HttpTransport:
    """POST JSON, retry what retrying can fix, and say plainly what could not be fixed."""

    name = "http"

    def __init__(self, spec: ProviderSpec, env: Mapping[str, str], sleep: Callable[[float], None] = time.sleep):
        self.spec = spec
        self.key = env.get(spec.api_key_env) if spec.api_key_env else None
        if spec.api_key_env and not self.key:
            raise TransportError(f"provider {spec.id!r} needs {spec.api_key_env}, which is not set")
        self.sleep = sleep
        self.endpoint = (spec.endpoint or "").rstrip("/")

    def headers(self) -> dict[str, str]:
        raise NotImplementedError

    def request(self, method: str, path: str, body: Any = None) -> tuple[Any, float, int]:
        """(decoded JSON, latency of the answering attempt in ms, attempts)."""
        import urllib3

        url = self.endpoint + path
        data = orjson.dumps(body, option=orjson.OPT_SORT_KEYS) if body is not None else None
        headers = {"content-type": "application/json", "user-agent": "benchtape", **self.headers()}
        timeout = urllib3.Timeout(connect=min(10.0, self.spec.timeout), read=self.spec.timeout)
        last = ""
        for attempt in range(self.spec.retries + 1):
            started = time.monotonic()
            try:
                resp = pool().request(method, url, body=data, headers=headers, timeout=timeout, redirect=False, preload_content=True)
            except urllib3.exceptions.NewConnectionError as exc:  # (a TimeoutError subclass in urllib3, but nothing listens)
                last = f"cannot reach {url}: {_reason(exc)}"
                wait = backoff(attempt)
            except urllib3.exceptions.TimeoutError as exc:
                last = f"no answer within {self.spec.timeout:g}s ({type(exc).__name__})"
                wait = backoff(attempt)
            except urllib3.exceptions.HTTPError as exc:
                last = f"cannot reach {url}: {_reason(exc)}"
                wait = backoff(attempt)
            else:
                latency = (time.monotonic() - started) * 1000
                status = resp.status
                if 200 <= status < 300:
                    try:
                        return orjson.loads(resp.data), latency, attempt + 1
                    except orjson.JSONDecodeError:
                        raise TransportError(f"{self.spec.id}: {url} answered {status} with a body that is not JSON: {_excerpt(resp.data)}") from None
                message = f"HTTP {status}: {_api_error(resp.data)}"
                if status not in RETRY_STATUSES:
                    raise TransportError(f"{self.spec.id}: {url} refused the request: {message}")
                last = message
                hinted = retry_after({k.lower(): v for k, v in resp.headers.items()})
                wait = min(RETRY_AFTER_CAP, hinted) if hinted is not None else backoff(attempt)
            if attempt < self.spec.retries:
                self.sleep(wait)
        tries = self.spec.retries + 1
        raise TransportError(f"{self.spec.id}: {url}: {last} (gave up after {tries} attempt{'s' if tries > 1 else ''})")


def _reason(exc: Exception) -> str:
    reason = getattr(exc, "reason", None)
    return str(reason or exc)


def _excerpt(data: bytes) -> str:
    text = data.decode("utf-8", "replace").strip()
    return text if len(text) <= ERROR_EXCERPT else text[: ERROR_EXCERPT - 1] + "…"


def _api_error(data: bytes) -> str:
    """The API's own message (`{"error": {"message": …}}` in both dialects), else the body."""
    try:
        doc = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _excerpt(data)
    err = doc.get("error") if isinstance(doc, dict) else None
    message = err.get("message") if isinstance(err, dict) else None
    if isinstance(message, str):
        return message
    if isinstance(err, str):
        return err
    return _excerpt(data)


class AnthropicTransport(HttpTransport):
    """POST /v1/messages; GET /v1/models."""

    name = "anthropic"

    def headers(self) -> dict[str, str]:
        out = {"anthropic-version": ANTHROPIC_VERSION}
        if self.key:
            out["x-api-key"] = self.key
        return out

    def complete(self, model: str, prompt: str, params: Mapping[str, Any]) -> Completion:
        body: dict[str, Any] = {"model": model, "max_tokens": int(params.get("max_tokens") or DEFAULT_MAX_TOKENS), "messages": [{"role": "user", "content": prompt}]}
        if params.get("temperature") is not None:
            body["temperature"] = params["temperature"]
        doc, latency, attempts = self.request("POST", "/v1/messages", body)
        if not isinstance(doc, dict) or not isinstance(doc.get("content"), list):
            raise TransportError(f"{self.spec.id}: the Messages API answered without content: {_excerpt(orjson.dumps(doc))}")
        text = "".join(b.get("text", "") for b in doc["content"] if isinstance(b, dict) and b.get("type") == "text")
        given = doc.get("usage")
        usage = given if isinstance(given, dict) else {}
        return Completion(text, _int(usage.get("input_tokens")), _int(usage.get("output_tokens")), doc.get("stop_reason"), doc.get("model") or model, latency, attempts=attempts)

    def list_models(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        after = None
        while True:
            doc, _, _ = self.request("GET", "/v1/models?limit=1000" + (f"&after_id={after}" if after else ""))
            for m in doc.get("data") or []:
                out.append({"id": m.get("id"), "created": m.get("created_at"), "provider": self.spec.id})
            if not doc.get("has_more") or not doc.get("last_id"):
                return out
            after = doc["last_id"]


class OpenAITransport(HttpTransport):
    """POST {endpoint}/chat/completions; GET {endpoint}/models. The endpoint is the base
    URL (…/v1), so any OpenAI-compatible server works by its URL alone."""

    name = "openai"

    def headers(self) -> dict[str, str]:
        return {"authorization": f"Bearer {self.key}"} if self.key else {}

    def complete(self, model: str, prompt: str, params: Mapping[str, Any]) -> Completion:
        body: dict[str, Any] = {"model": model, "messages": [{"role": "user", "content": prompt}]}
        if params.get("temperature") is not None:
            body["temperature"] = params["temperature"]
        if params.get("max_tokens") is not None:
            # OpenAI's own API renamed it for its reasoning models; compatible servers keep the old name
            key = "max_completion_tokens" if "api.openai.com" in self.endpoint else "max_tokens"
            body[key] = int(params["max_tokens"])
        doc, latency, attempts = self.request("POST", "/chat/completions", body)
        choices = doc.get("choices") if isinstance(doc, dict) else None
        if not choices or not isinstance(choices[0], dict):
            raise TransportError(f"{self.spec.id}: the Chat Completions API answered without choices: {_excerpt(orjson.dumps(doc))}")
        message = choices[0].get("message") or {}
        finish = choices[0].get("finish_reason")
        text = message.get("content")
        if isinstance(text, list):  # content parts
            text = "".join(p.get("text", "") for p in text if isinstance(p, dict))
        refusal = message.get("refusal")
        if isinstance(refusal, str) and refusal and not text:
            text, finish = refusal, "refusal"
        given = doc.get("usage")
        usage = given if isinstance(given, dict) else {}
        return Completion(text or "", _int(usage.get("prompt_tokens")), _int(usage.get("completion_tokens")), finish, doc.get("model") or model, latency, attempts=attempts)

    def list_models(self) -> list[dict[str, Any]]:
        doc, _, _ = self.request("GET", "/models")
        return [{"id": m.get("id"), "created": m.get("created"), "provider": self.spec.id} for m in (doc.get("data") or []) if isinstance(m, dict)]


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


# ---------------------------------------------------------------- claude-code


def claude_binary(env: Mapping[str, str]) -> str | None:
    """`BENCHTAPE_CLAUDE`, else the pinned Claude Code benchtape installs (`make agents`),
    else `claude` on PATH."""
    explicit = env.get("BENCHTAPE_CLAUDE")
    if explicit:
        return explicit if Path(explicit).exists() else None
    from benchtape.core.errors import BadInput
    from benchtape.tools.binaries import resolve

    try:
        return str(resolve("claude-code").path)
    except BadInput:
        return shutil.which("claude", path=env.get("PATH"))


class ClaudeCodeTransport:
    """The local `claude` binary in print mode: its own login, no key in benchtape's hands.

    The prompt goes on stdin (no argv length limit) to `claude -p --output-format json`
    with no tools (`--tools ""`), no customizations (`--safe-mode`: no CLAUDE.md, hooks,
    plugins or MCP servers of the user's steer the grading), nothing saved, run in an
    empty scratch folder: the judge reads and answers and can touch nothing."""

    name = "claude-code"

    def __init__(self, spec: ProviderSpec, env: Mapping[str, str]):
        self.spec = spec
        self.env = dict(env)
        binary = claude_binary(self.env)
        if binary is None:
            raise TransportError(f"provider {spec.id!r} (claude-code) needs the `claude` binary: install it (npm install @anthropic-ai/claude-code) and put it on PATH, or set BENCHTAPE_CLAUDE")
        self.binary = binary

    def command(self, model: str | None, params: Mapping[str, Any]) -> list[str]:
        argv = [self.binary, "-p", "--output-format", "json", "--tools", "", "--safe-mode", "--no-session-persistence"]
        if model and model != "default":
            argv += ["--model", model]
        if params.get("effort"):
            argv += ["--effort", str(params["effort"])]
        return argv

    def complete(self, model: str, prompt: str, params: Mapping[str, Any]) -> Completion:
        env = {**self.env, "DISABLE_AUTOUPDATER": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}
        if params.get("max_tokens"):
            env["CLAUDE_CODE_MAX_OUTPUT_TOKENS"] = str(params["max_tokens"])
        last = ""
        for attempt in range(self.spec.retries + 1):
            with tempfile.TemporaryDirectory(prefix="benchtape-judge-") as scratch:
                started = time.monotonic()
                try:
                    done = subprocess.run(self.command(model, params), input=prompt.encode("utf-8"), cwd=scratch, env=env, capture_output=True, timeout=self.spec.timeout)
                except subprocess.TimeoutExpired:
                    last = f"claude did not answer within {self.spec.timeout:g}s"
                    continue
                except OSError as exc:
                    raise TransportError(f"{self.spec.id}: cannot start {self.binary}: {exc}") from None
                latency = (time.monotonic() - started) * 1000
            try:
                doc = orjson.loads(done.stdout)
            except orjson.JSONDecodeError:
                doc = None
            if not isinstance(doc, dict):
                last = f"claude exited {done.returncode} without a JSON result: {_excerpt(done.stderr or done.stdout)}"
                continue
            if doc.get("is_error"):
                last = f"claude reported an error: {_excerpt(str(doc.get('result') or doc.get('subtype')).encode())}"
                continue
            given = doc.get("usage")
            usage = given if isinstance(given, dict) else {}
            used = list((doc.get("modelUsage") or {}).keys())
            cost = doc.get("total_cost_usd")
            return Completion(
                str(doc.get("result") or ""),
                _int(usage.get("input_tokens")),
                _int(usage.get("output_tokens")),
                doc.get("stop_reason") or doc.get("subtype"),
                used[0] if used else model,
                latency,
                cost_usd=float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) else None,
                attempts=attempt + 1,
            )
        raise TransportError(f"{self.spec.id}: {last} (gave up after {self.spec.retries + 1} attempts)")

    def list_models(self) -> list[dict[str, Any]]:
        raise TransportError(f"{self.spec.id}: the claude-code transport has no model listing; use an anthropic provider for model:current")


def transport_for(spec: ProviderSpec, env: Mapping[str, str] | None = None) -> Transport:
    env = os.environ if env is None else env
    if spec.transport == "anthropic":
        return AnthropicTransport(spec, env)
    if spec.transport == "openai":
        return OpenAITransport(spec, env)
    if spec.transport == "claude-code":
        return ClaudeCodeTransport(spec, env)
    raise TransportError(f"provider {spec.id!r}: unknown transport {spec.transport!r}")
