"""Recorded judgments: the judge a grading hands its checks (`CheckContext.judge`).

Every request a grading sends is stored with its answer (the `judgments` table), so an AI
verdict can be audited: which model, which exact prompt, what it said, what it cost. How
a grading treats what is already stored is its mode:

- `reuse` (regrade): a request byte-identical to a stored one (same transport, model,
  parameters and prompt text, same vote) is answered from the store; nothing is sent. So
  re-grading a thousand sessions with unchanged judge checks is free and gives the same
  verdicts; a changed rubric or a changed output is a new request and is asked.
- `ask` (live grading, the negative control, and `grade`, the positive control): always
  ask again. Under `grade` a verdict that flips is the judge disagreeing with itself, the
  nondeterminism that control exists to expose; `like_grading` makes it ask the same
  provider and model the original grading's judgment used.
- `rejudge` (regrade --rejudge): ask again like `ask`; the mode is recorded so a reader
  can tell a forced re-ask from a first one.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field, replace
from typing import Any, Mapping

from benchtape.core.judgments import JudgeError, JudgeReply, JudgeRequest, ResolvedRequest
from benchtape.models.judge_service import JudgeService
from benchtape.spec.judge_config import JudgesConfig, ProviderSpec
from benchtape.store.views import GradingStore

MODES = ("reuse", "ask", "rejudge")


@dataclass
class JudgingStats:
    asked: int = 0  # requests sent to a provider
    reused: int = 0  # answered from a stored judgment
    failed: int = 0

    def to_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class RecordedJudge:
    """`ctx.judge` for one grading (and `ctx.catalog` for model:current)."""

    store: GradingStore
    grading_id: str
    mode: str
    service: JudgeService
    like_grading: str | None = None
    stats: JudgingStats = field(default_factory=JudgingStats)
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def __call__(self, request: JudgeRequest) -> JudgeReply:
        resolved, spec = self._resolve(request)
        if self.mode == "reuse":
            stored = self.store.find_judgment(resolved.sha256, request.vote)
            if stored is not None:
                self._count("reused")
                return reply_from_row(stored)
        try:
            reply = self.service.send(resolved, spec)
        except JudgeError:
            self._count("failed")
            raise
        self._count("asked")
        judgment_id = self.store.add_judgment(judgment_row(self.grading_id, self.mode, resolved, spec, reply))
        return JudgeReply(**{**reply.__dict__, "judgment_id": judgment_id})

    def catalog(self, provider: str | None = None) -> list[dict[str, Any]]:
        return self.service.catalog(provider)

    def _resolve(self, request: JudgeRequest) -> tuple[ResolvedRequest, ProviderSpec]:
        if self.like_grading is not None and request.session_id is not None:
            before = self.store.judgment_for(self.like_grading, request.session_id, request.check_sha256, request.vote)
            if before is not None and before.get("provider_spec"):
                original = replace(request, provider=None, model=before["model"])
                return self.service.resolve(original, ProviderSpec.from_dict(before["provider_spec"]))
        return self.service.resolve(request)

    def _count(self, what: str) -> None:
        with self._lock:
            setattr(self.stats, what, getattr(self.stats, what) + 1)


def judgment_row(grading_id: str, mode: str, resolved: ResolvedRequest, spec: ProviderSpec, reply: JudgeReply) -> dict[str, Any]:
    req = resolved.request
    return {
        "grading_id": grading_id,
        "session_id": req.session_id,
        "check_type": req.check_type,
        "check_sha256": req.check_sha256,
        "vote": req.vote,
        "mode": mode,
        "provider": resolved.provider,
        "transport": resolved.transport,
        "model": resolved.model,
        "endpoint": resolved.endpoint,
        "provider_spec": spec.to_dict(),
        "params": dict(resolved.params),
        "request_sha256": resolved.sha256,
        "prompt_sha256": req.prompt_sha256,
        "prompt": req.prompt,
        "reply": reply.text,
        "reply_model": reply.model,
        "stop_reason": reply.stop_reason,
        "input_tokens": reply.input_tokens,
        "output_tokens": reply.output_tokens,
        "cost_usd": reply.cost_usd,
        "latency_ms": reply.latency_ms,
    }


def reply_from_row(row: Mapping[str, Any]) -> JudgeReply:
    return JudgeReply(
        text=row["reply"],
        provider=row["provider"],
        model=row.get("reply_model") or row["model"],
        input_tokens=row.get("input_tokens"),
        output_tokens=row.get("output_tokens"),
        cost_usd=row.get("cost_usd"),
        latency_ms=row.get("latency_ms"),
        reused=True,
        request_sha256=row["request_sha256"],
        judgment_id=row["id"],
        stop_reason=row.get("stop_reason"),
    )


def judge_for_grading(
    store: GradingStore,
    grading_id: str,
    *,
    mode: str,
    judges: JudgesConfig | None,
    env: Mapping[str, str] | None = None,
    like_grading: str | None = None,
    service: JudgeService | None = None,
) -> RecordedJudge:
    """The judge for one grading: `CheckContext(judge=j, catalog=j.catalog, …)`.

    `mode`: `ask` for live grading, `check` and `grade`; `reuse` for `regrade`; `rejudge`
    for `regrade --rejudge`. `judges` is the bench's block (None: the built-in providers
    by their keys). `like_grading` (for `grade`): ask each request of the provider and
    model the replayed grading's judgment used. One judge per grading: its service holds
    the per-provider concurrency limits and the catalog cache, so share it across the
    threads that grade sessions of that grading."""
    if mode not in MODES:
        raise ValueError(f"judging mode {mode!r} is not one of {', '.join(MODES)}")
    return RecordedJudge(store, grading_id, mode, service or JudgeService(judges, env), like_grading)
