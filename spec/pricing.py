"""Prices, and the cost of a session when its tool did not report one (`kind: Pricing`).

Resolution order: the cost the tool reported → the rates in pricing.yaml (built-in, then
the user's, then the project's, merged per model and per rate) → unknown. Unknown is
`None`, never 0: a model without an entry, a missing rate, an all-zero entry (the way to
suppress a shipped price) or a token count the tool did not report for a rate that costs
something all make the cost unknown, never a partial figure.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Mapping

from benchtape.core.model import Metrics
from benchtape.core.payloads import METRIC_FIELDS
from benchtape.spec.documents import HEADER_KEYS, load_document
from benchtape.spec.overlays import BUILTIN_DIR, project_config_dirs, user_config_dirs

RATES = ("input", "cache_read", "cache_write", "output")
# rate → the Metrics field it multiplies (tokens, per 1M)
TOKEN_FIELD = {"input": "tokens_in", "cache_read": "cache_read_tokens", "cache_write": "cache_write_tokens", "output": "tokens_out"}
PRICING_KEYS = HEADER_KEYS | {"date", "sources", "models"}


@dataclass(frozen=True)
class Rates:
    """USD per 1M tokens of each class; None where no file gave the rate."""

    input: float | None = None
    cache_read: float | None = None
    cache_write: float | None = None
    output: float | None = None

    def complete(self) -> bool:
        values = (self.input, self.cache_read, self.cache_write, self.output)  # RATES, spelled out: asked once per priced session
        return None not in values and any(values)


@dataclass
class Pricing:
    models: dict[str, Rates] = field(default_factory=dict)
    dates: list[str] = field(default_factory=list)  # the as-of date of each file merged
    sources: list[str] = field(default_factory=list)

    def rates(self, model_id: str | None) -> Rates | None:
        """The rates for an API model id when every one is known and not all are zero; else None."""
        rates = self.models.get(model_id or "")
        return rates if rates is not None and rates.complete() else None

    def priced(self, model_id: str | None) -> bool:
        return self.rates(model_id) is not None


def pricing_files(project: Path | None = None, user: Path | None = None) -> list[Path]:
    """The pricing files in merge order (later wins, per model and per rate)."""
    files = [BUILTIN_DIR / "pricing.yaml", *(folder / "pricing.yaml" for folder in user_config_dirs(user))]
    if project is not None:
        files.extend(folder / "pricing.yaml" for folder in project_config_dirs(project))
    return [f for f in files if f.is_file()]


def load_pricing(project: Path | None = None, user: Path | None = None) -> Pricing:
    out = Pricing()
    for path in pricing_files(project, user):
        merge_file(out, path)
    return out


def merge_file(pricing: Pricing, path: Path) -> None:
    ld, doc, _ = load_document(path, ("Pricing",))
    doc = ld.strict(doc, PRICING_KEYS, "a Pricing file")
    if doc.get("date") is not None:
        pricing.dates.append(str(doc["date"]))
    pricing.sources.extend(ld.strings(doc, "sources", "`sources:`"))
    models = ld.mapping(doc.get("models"), "`models:`", doc, "models")
    for model_id, node in models.items():
        spec = ld.strict(ld.mapping(node, f"model {model_id!r}", models, model_id), set(RATES), f"the rates of {model_id!r}", extra_hint={"cached_input": "the key is `cache_read`", "cache_creation": "the key is `cache_write`"})
        given: dict[str, float] = {}
        for rate, value in spec.items():
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise ld.err(f"{model_id}.{rate} must be a number of USD per 1M tokens (0 or more), got {value!r}", spec, rate)
            given[rate] = float(value)
        pricing.models[str(model_id)] = replace(pricing.models.get(str(model_id), Rates()), **given)


def token_cost(metrics: Metrics | Mapping[str, Any], rates: Rates) -> float | None:
    """USD for the session's tokens; None when a class that costs something was not reported."""
    values = _values(metrics)
    total = 0.0
    for rate_name in RATES:
        rate = getattr(rates, rate_name)
        count = values.get(TOKEN_FIELD[rate_name])
        if rate == 0:
            continue
        if count is None:
            return None
        total += count * rate / 1_000_000
    return total


# Model ids that never reach a paid model: benchtape's mock agent, and a real binary whose
# model is benchtape's scripted server. Their cost is known: nothing was spent.
FREE_MODELS = frozenset({"mock", "mock-noop", "scripted", "oracle", "mock-solver", "mock-solver-partial", "scripted-solver", "scripted-solver-partial"})  # oracle: the positive control calls no model


def reported_cost(model_id: str | None, reported: float | None) -> float | None:
    """What a session spent as its tool reported it, except a free model's: nothing, whatever
    the tool printed (it prices a scripted model's pretend tokens as if real). Every figure of a
    session's spend (`sessions`, `compare`, the ATIF, Inspect and OTLP exports) is this one."""
    return 0.0 if model_id in FREE_MODELS else reported


def session_cost(metrics: Metrics | Mapping[str, Any], model_id: str | None, pricing: Pricing) -> tuple[float | None, str | None]:
    """(cost in USD, where it came from: `free` | `reported` | `pricing` | None when unknown),
    from a session's Metrics or the plain fields of its `metrics` actions (reported_cost, then
    the pricing table for what the tool did not price)."""
    if model_id in FREE_MODELS:
        return reported_cost(model_id, None), "free"
    values = _values(metrics)
    if values.get("cost_usd") is not None:
        return float(values["cost_usd"]), "reported"
    rates = pricing.rates(model_id)
    if rates is None:
        return None, None
    cost = token_cost(values, rates)
    return (cost, "pricing") if cost is not None else (None, None)


def _values(metrics: Metrics | Mapping[str, Any]) -> Mapping[str, Any]:
    return {f: getattr(metrics, f) for f in METRIC_FIELDS} if isinstance(metrics, Metrics) else metrics


def sum_known(costs: list[float | None]) -> float | None:
    """A workflow's cost: the sum of its steps, None if any step's is unknown."""
    if any(c is None for c in costs):
        return None
    return float(sum(c for c in costs if c is not None))

