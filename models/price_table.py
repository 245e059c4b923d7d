"""What a judge's tokens cost, in USD, so the judge's spend is recorded with the grading.

Prices are per million tokens (input, output), list prices as published by each provider
when this table was written; a provider block can state its own with
`price: {input: …, output: …}` (a local server: `price: {input: 0, output: 0}`). A model
the table does not know has an unknown cost (None), never zero: an unknown spend that
reads as free would make the cheapest judge look like the one nobody priced.
"""

from __future__ import annotations

from typing import Mapping

# Longest matching prefix wins (`gpt-4.1-mini` before `gpt-4.1`).
PER_MTOK: dict[str, tuple[float, float]] = {
    "claude-opus-4-5": (5.0, 25.0),
    "claude-opus-4-1": (15.0, 75.0),
    "claude-opus-4": (15.0, 75.0),
    "claude-sonnet-4": (3.0, 15.0),
    "claude-3-7-sonnet": (3.0, 15.0),
    "claude-3-5-sonnet": (3.0, 15.0),
    "claude-haiku-4-5": (1.0, 5.0),
    "claude-3-5-haiku": (0.8, 4.0),
    "claude-3-haiku": (0.25, 1.25),
    "gpt-5-nano": (0.05, 0.4),
    "gpt-5-mini": (0.25, 2.0),
    "gpt-5": (1.25, 10.0),
    "gpt-4.1-nano": (0.1, 0.4),
    "gpt-4.1-mini": (0.4, 1.6),
    "gpt-4.1": (2.0, 8.0),
    "gpt-4o-mini": (0.15, 0.6),
    "gpt-4o": (2.5, 10.0),
    "o4-mini": (1.1, 4.4),
    "o3": (2.0, 8.0),
    "gemini-2.5-flash": (0.3, 2.5),
    "gemini-2.5-pro": (1.25, 10.0),
    "deepseek-chat": (0.27, 1.1),
    "deepseek-reasoner": (0.55, 2.19),
    "mistral-small": (0.1, 0.3),
    "mistral-large": (2.0, 6.0),
}


def price_of(model: str, override: Mapping[str, float] | None = None) -> tuple[float, float] | None:
    """(input, output) USD per million tokens, or None when unknown."""
    if override:
        return float(override.get("input", 0.0)), float(override.get("output", 0.0))
    name = model.lower()
    if "/" in name:  # a gateway's `vendor/model` id
        name = name.rsplit("/", 1)[1]
    best = max((p for p in PER_MTOK if name.startswith(p)), key=len, default=None)
    return PER_MTOK[best] if best else None


def cost_usd(model: str, input_tokens: int | None, output_tokens: int | None, override: Mapping[str, float] | None = None) -> float | None:
    price = price_of(model, override)
    if price is None or input_tokens is None or output_tokens is None:
        return None
    return (input_tokens * price[0] + output_tokens * price[1]) / 1_000_000
