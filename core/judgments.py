"""The judge seam: what an AI judge check asks, and what it is told, as plain values.

Judge checks stay pure: they build a `JudgeRequest` and parse a `JudgeReply`, and the
callable in their context (`CheckContext.judge`) does the asking. That callable may send
the request to a provider, or answer it from a stored judgment; the check cannot tell
and does not need to. This module is neutral ground, like `benchtape.core.command_runner`: checks,
the models room and replay all import it, none of them imports the others for it.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping

import orjson

# How benchtape's scripted model server starts a reply that is its own word to the user (the
# script had nothing left to play), not the model's: a judge check shows such a reply as it is.
SCRIPTED_MARK = "[benchtape scripted model]"


class JudgeError(Exception):
    """The judge could not answer: no provider, a provider with no key, a transport that
    failed after its retries, a timeout. The check turns it into an ERROR verdict."""


@dataclass(frozen=True)
class JudgeRequest:
    """One question to a judge model.

    `provider` and `model` are what the check asked for (None: the bench's default judge,
    the provider's own model); the judge callable resolves them and says what it used in
    the reply. `session_id`, `check_type`, `check_sha256` and `vote` say what the
    request serves; they are not part of its identity (two sessions with the same output
    ask the same question)."""

    prompt: str
    provider: str | None = None
    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None
    effort: str | None = None
    session_id: str | None = None
    check_type: str = ""
    check_sha256: str = ""
    vote: int = 0  # 0-based: votes of one check send the same prompt, each answered once

    @property
    def prompt_sha256(self) -> str:
        return hashlib.sha256(self.prompt.encode("utf-8")).hexdigest()

    def params(self) -> dict[str, Any]:
        """The sampling parameters the check set (unset ones are the provider's)."""
        out: dict[str, Any] = {}
        if self.temperature is not None:
            out["temperature"] = self.temperature
        if self.max_tokens is not None:
            out["max_tokens"] = self.max_tokens
        if self.effort is not None:
            out["effort"] = self.effort
        return out


@dataclass(frozen=True)
class ResolvedRequest:
    """A request made concrete: the provider, transport, model and parameters it goes to.

    Its `sha256` is the request's identity: the same transport, model, parameters and
    prompt text byte for byte. A stored judgment with the same identity (and vote) answers
    it on a regrade; the endpoint and the key are deliberately left out, so moving a local
    server to another port does not throw away what it already judged."""

    request: JudgeRequest
    provider: str
    transport: str
    model: str
    params: Mapping[str, Any] = field(default_factory=dict)
    endpoint: str | None = None
    api_key_env: str | None = None

    @property
    def sha256(self) -> str:
        return request_sha256(self.transport, self.model, self.params, self.request.prompt)

    def with_request(self, request: JudgeRequest) -> ResolvedRequest:
        return replace(self, request=request)


def request_sha256(transport: str, model: str, params: Mapping[str, Any], prompt: str) -> str:
    canon = orjson.dumps({"transport": transport, "model": model, "params": dict(params), "prompt": prompt}, option=orjson.OPT_SORT_KEYS)
    return hashlib.sha256(canon).hexdigest()


@dataclass(frozen=True)
class JudgeReply:
    """What the judge said, and what saying it cost. `reused`: answered from a stored
    judgment, no request sent (its tokens and cost are the stored ones, spent once)."""

    text: str
    provider: str
    model: str
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None  # None: unknown (never read as zero)
    latency_ms: float | None = None
    reused: bool = False
    request_sha256: str = ""
    judgment_id: str | None = None
    stop_reason: str | None = None


Judge = Callable[[JudgeRequest], JudgeReply]
