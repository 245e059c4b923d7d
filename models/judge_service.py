"""The judge service: turns a check's `JudgeRequest` into a concrete request (which
provider, which model, which parameters), sends it within that provider's concurrency
limit, and prices the answer.

It knows nothing of gradings or the store; benchtape.replay.grading_judges wraps it to answer from
recorded judgments and to record new ones.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Mapping

from benchtape.core.judgments import JudgeError, JudgeReply, JudgeRequest, ResolvedRequest
from benchtape.models.price_table import cost_usd
from benchtape.spec.judge_config import BUILTINS, JudgesConfig, ProviderSpec, builtin_spec, canonical_model

if TYPE_CHECKING:  # the transports (HTTP, e-mail dates, subprocesses) load when a provider is first asked
    from benchtape.models.providers import Transport

TransportFactory = Callable[[ProviderSpec, Mapping[str, str]], "Transport"]


def default_transports(spec: ProviderSpec, env: Mapping[str, str]) -> Transport:
    """The transport of `spec` (benchtape.models.providers), imported on a grading's first request,
    not by every grading: most benches have no judge check, and a regrade that reuses every
    stored judgment sends nothing."""
    from benchtape.models.providers import transport_for

    return transport_for(spec, env)


@dataclass
class ProviderStats:
    """What one provider was asked in this service's life (a grading)."""

    sent: int = 0
    failed: int = 0
    in_flight: int = 0
    max_in_flight: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float = 0.0
    cost_unknown: int = 0  # answers whose cost could not be priced

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class _Provider:
    spec: ProviderSpec
    transport: Transport
    slots: threading.BoundedSemaphore
    stats: ProviderStats = field(default_factory=ProviderStats)


class JudgeService:
    """Resolve and ask. Thread-safe: gradings may judge many sessions at once, and each
    provider admits at most `concurrency` requests in flight however many threads ask."""

    def __init__(self, config: JudgesConfig | None, env: Mapping[str, str] | None = None, transports: TransportFactory = default_transports):
        self.config = config or JudgesConfig()
        self.env = dict(os.environ if env is None else env)
        self._transports = transports
        self._providers: dict[str, _Provider] = {}
        self._lock = threading.Lock()
        self._catalog: dict[str | None, list[dict[str, Any]]] = {}

    # ------------------------------------------------------------ resolution
    def resolve(self, request: JudgeRequest, spec: ProviderSpec | None = None) -> tuple[ResolvedRequest, ProviderSpec]:
        """The provider (`args.judge`, else the model's entry in models:, else the default),
        its model (`args.model`, else the provider's) and parameters (the check's over the
        provider's). Raises JudgeError naming what is missing."""
        if spec is None:
            spec, model = self._provider_and_model(request)
        else:
            model = canonical_model(request.model) if request.model else spec.model
        if model is None and spec.transport != "claude-code":
            raise JudgeError(f"judge provider {spec.id!r} has no model: give args.model, or model: in the provider")
        params = {**dict(spec.params), **request.params()}
        if spec.transport != "claude-code":
            params.pop("effort", None)  # only the claude CLI takes an effort level
        resolved = ResolvedRequest(request=request, provider=spec.id, transport=spec.transport, model=model or "default", params=params, endpoint=spec.endpoint, api_key_env=spec.api_key_env)
        return resolved, spec

    def _provider_and_model(self, request: JudgeRequest) -> tuple[ProviderSpec, str | None]:
        if request.provider is None and request.model is not None and request.model in self.config.models:
            spec = self.config.models[request.model]
            if spec.key_missing(self.env):
                raise JudgeError(f"model {request.model!r} of models: needs {spec.api_key_env}, which is not set")
            return spec, spec.model
        spec = self.config.provider(request.provider, self.env)
        return spec, canonical_model(request.model) if request.model else spec.model

    # ------------------------------------------------------------ asking
    def provider(self, spec: ProviderSpec) -> _Provider:
        with self._lock:
            known = self._providers.get(spec.id)
            if known is None or known.spec != spec:
                known = _Provider(spec, self._transports(spec, self.env), threading.BoundedSemaphore(spec.concurrency))
                self._providers[spec.id] = known
            return known

    def send(self, resolved: ResolvedRequest, spec: ProviderSpec) -> JudgeReply:
        """Ask the provider, never more than its `concurrency` at once."""
        from benchtape.models.providers import TransportError

        p = self.provider(spec)
        with p.slots:
            with self._lock:
                p.stats.in_flight += 1
                p.stats.max_in_flight = max(p.stats.max_in_flight, p.stats.in_flight)
            try:
                done = p.transport.complete(resolved.model, resolved.request.prompt, resolved.params)
            except TransportError:
                with self._lock:
                    p.stats.failed += 1
                raise
            finally:
                with self._lock:
                    p.stats.in_flight -= 1
        cost = done.cost_usd if done.cost_usd is not None else cost_usd(done.model or resolved.model, done.input_tokens, done.output_tokens, spec.price)
        with self._lock:
            s = p.stats
            s.sent += 1
            s.input_tokens += done.input_tokens or 0
            s.output_tokens += done.output_tokens or 0
            if cost is None:
                s.cost_unknown += 1
            else:
                s.cost_usd += cost
        return JudgeReply(
            text=done.text,
            provider=spec.id,
            model=done.model or resolved.model,
            input_tokens=done.input_tokens,
            output_tokens=done.output_tokens,
            cost_usd=cost,
            latency_ms=done.latency_ms,
            request_sha256=resolved.sha256,
            stop_reason=done.stop_reason,
        )

    def __call__(self, request: JudgeRequest) -> JudgeReply:
        """Resolve and send, no store involved (a judge for callers that record nothing)."""
        resolved, spec = self.resolve(request)
        return self.send(resolved, spec)

    def stats(self) -> dict[str, dict[str, Any]]:
        with self._lock:
            return {pid: p.stats.to_dict() for pid, p in self._providers.items()}

    # ------------------------------------------------------------ the live catalog
    def catalog(self, provider: str | None = None) -> list[dict[str, Any]]:
        """The models each provider lists now (`model:current`'s source, replacing the
        `claudish` CLI madbench shells out to): one listing per provider per service, the
        union over every provider whose key is set when none is named."""
        with self._lock:
            if provider in self._catalog:
                return self._catalog[provider]
        if provider is not None:
            specs = [self.config.provider(provider, self.env)]
        else:
            declared = list(self.config.providers.values())
            if not declared:
                declared = [builtin_spec(b) for b in BUILTINS if b not in ("claude-code", "ollama")]
            specs = [s for s in declared if s.transport != "claude-code" and not s.key_missing(self.env)]
            if not specs:
                raise JudgeError("no provider to list models from: declare judges: (or models:) providers, or set ANTHROPIC_API_KEY / OPENAI_API_KEY")
        listed: list[dict[str, Any]] = []
        errors: list[str] = []
        for spec in specs:
            try:
                listed.extend(self.provider(spec).transport.list_models())
            except JudgeError as exc:
                errors.append(str(exc))
        if errors and not listed:
            raise JudgeError("the model catalog is unreachable: " + "; ".join(errors))
        with self._lock:
            self._catalog[provider] = listed
        return listed

