"""Token bookkeeping that turns per-message or per-turn usage into cumulative session totals.

A `metrics` action holds cumulative totals (the projection keeps the latest value of
each field), and a field nobody reported is left out rather than written as 0. The two
ledgers here are the only places adapters add tokens up, so double counting has one
place to be wrong in.

Token fields mean the same for every harness: `tokens_in` are input tokens NOT served
from a prompt cache, `cache_read_tokens` those that were, `cache_write_tokens` those
written to a cache, `tokens_out` the generated ones (reasoning included). Anthropic
reports exactly these; OpenAI's `input_tokens` include the cached ones, so Codex input
is split (input - cached, cached).
"""

from __future__ import annotations

from typing import Any, cast

from benchtape.core.payloads import Metrics

# metric field -> Anthropic usage key
ANTHROPIC_FIELDS = {
    "tokens_in": "input_tokens",
    "tokens_out": "output_tokens",
    "cache_read_tokens": "cache_read_input_tokens",
    "cache_write_tokens": "cache_creation_input_tokens",
}


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class MessageUsage:
    """Anthropic usage, counted once per message.

    Claude Code writes one line per content block and repeats the message's usage on
    each; later blocks may carry a larger (final) output count. So a message counts
    once, with the largest value seen for each field.
    """

    def __init__(self) -> None:
        self._by_message: dict[str, dict[str, int]] = {}

    def add(self, key: str, usage: Any) -> None:
        if not key or not isinstance(usage, dict):
            return
        seen = self._by_message.setdefault(key, {})
        for field, native in ANTHROPIC_FIELDS.items():
            value = _int(usage.get(native))
            if value is not None:
                seen[field] = max(seen.get(field, 0), value)

    def totals(self) -> Metrics:
        """Session totals of the fields some message reported; {} when none did."""
        out: dict[str, int] = {}
        for seen in self._by_message.values():
            for field, value in seen.items():
                out[field] = out.get(field, 0) + value
        return cast(Metrics, out)  # ANTHROPIC_FIELDS' keys: token fields of Metrics


def anthropic_totals(usage: Any) -> Metrics:
    """Metric fields of one Anthropic usage object (already a total)."""
    if not isinstance(usage, dict):
        return {}
    return cast(Metrics, {f: v for f, native in ANTHROPIC_FIELDS.items() if (v := _int(usage.get(native))) is not None})


def model_usage_totals(model_usage: Any) -> Metrics:
    """Session totals summed over Claude Code's per-model `modelUsage` (main model and subagents' models)."""
    if not isinstance(model_usage, dict) or not model_usage:
        return {}
    names = {
        "tokens_in": "inputTokens",
        "tokens_out": "outputTokens",
        "cache_read_tokens": "cacheReadInputTokens",
        "cache_write_tokens": "cacheCreationInputTokens",
    }
    out: dict[str, int] = {}
    for per_model in model_usage.values():
        if not isinstance(per_model, dict):
            continue
        for field, native in names.items():
            value = _int(per_model.get(native))
            if value is not None:
                out[field] = out.get(field, 0) + value
    return cast(Metrics, out)  # names' keys: token fields of Metrics


def openai_totals(usage: Any) -> Metrics:
    """Metric fields of one OpenAI-style usage object (`input_tokens` include `cached_input_tokens`)."""
    if not isinstance(usage, dict):
        return {}
    out: Metrics = {}
    given = _int(usage.get("input_tokens"))
    cached = _int(usage.get("cached_input_tokens"))
    if given is not None:
        out["tokens_in"] = given - (cached or 0)
    if cached is not None:
        out["cache_read_tokens"] = cached
    produced = _int(usage.get("output_tokens"))
    if produced is not None:
        out["tokens_out"] = produced
    return out


class TurnUsage:
    """OpenAI per-turn usage (codex exec's `turn.completed`) summed into session totals."""

    def __init__(self) -> None:
        self.totals: Metrics = {}

    def add(self, usage: Any) -> Metrics:
        totals, turn = cast(dict[str, int], self.totals), cast(dict[str, int], openai_totals(usage))  # token fields, each an int
        for field, value in turn.items():
            totals[field] = totals.get(field, 0) + value
        return self.totals.copy()
