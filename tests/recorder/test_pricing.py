"""Pricing: the shipped rates reproduce what real tools reported, files merge per model and per
rate, and unknown cost is None — never zero, never a partial figure."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from evalkit import write

from benchtape.core.errors import BadInput
from benchtape.core.model import Metrics
from benchtape.spec.pricing import Rates, load_pricing, session_cost, sum_known, token_cost

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "adapters"))
from adapterkit import REALDATA  # noqa: E402


def pricing(tmp_path: Path):
    return load_pricing(tmp_path / "project", tmp_path / "user")


def real_model_usage() -> list[tuple[str, dict]]:
    """(model id, modelUsage entry with costUSD) from every real Claude Code stream capture."""
    if REALDATA is None:
        pytest.skip("realdata not found")
    out = []
    for path in sorted((REALDATA / "claude-stream-json").glob("*.jsonl")):
        for line in path.read_text().splitlines():
            if '"modelUsage"' in line:
                event = json.loads(line)
                out.extend((model, usage) for model, usage in (event.get("modelUsage") or {}).items())
    return out


def test_shipped_rates_reproduce_the_cost_claude_code_reported(tmp_path):
    prices = pricing(tmp_path)
    usages = real_model_usage()
    assert len(usages) >= 3
    for model, u in usages:
        metrics = Metrics(tokens_in=u["inputTokens"], tokens_out=u["outputTokens"], cache_read_tokens=u["cacheReadInputTokens"], cache_write_tokens=u["cacheCreationInputTokens"])
        rates = prices.rates(model)
        assert rates is not None, f"{model} is in a real capture but unpriced"
        assert token_cost(metrics, rates) == pytest.approx(u["costUSD"], rel=1e-9, abs=1e-12), model


def test_the_shipped_file_is_dated_and_sourced(tmp_path):
    prices = pricing(tmp_path)
    assert prices.dates == ["2026-06-04"] and len(prices.sources) == 2
    for model in ("claude-opus-4-6", "claude-sonnet-4-6", "gpt-5.5", "gpt-5.4-mini"):
        assert prices.priced(model)


def test_reported_cost_wins_then_pricing_then_unknown(tmp_path):
    prices = pricing(tmp_path)
    reported = Metrics(cost_usd=0.5, tokens_in=1_000_000, tokens_out=0, cache_read_tokens=0, cache_write_tokens=0)
    assert session_cost(reported, "claude-sonnet-4-6", prices) == (0.5, "reported")
    tokens = Metrics(tokens_in=1_000_000, tokens_out=1_000_000, cache_read_tokens=0, cache_write_tokens=0)
    assert session_cost(tokens, "claude-sonnet-4-6", prices) == (pytest.approx(18.0), "pricing")
    assert session_cost(tokens, "claude-sonnet-5", prices) == (None, None)
    assert session_cost(Metrics(), "claude-sonnet-4-6", prices) == (None, None)  # no token counts: unknown, not $0


def test_a_class_that_costs_nothing_need_not_be_reported(tmp_path):
    """OpenAI does not bill cache writes and Codex reports none: the cost is still known."""
    prices = pricing(tmp_path)
    codex = Metrics(tokens_in=900_000, cache_read_tokens=100_000, tokens_out=10_000)
    cost, source = session_cost(codex, "gpt-5.5", prices)
    assert source == "pricing" and cost == pytest.approx(0.9 * 5 + 0.1 * 0.5 + 0.01 * 30)
    claude = Metrics(tokens_in=10, tokens_out=10)  # cache classes cost something and are unknown
    assert session_cost(claude, "claude-sonnet-4-6", prices) == (None, None)


def test_user_and_project_files_merge_per_model_and_per_rate(tmp_path):
    head = "apiVersion: benchtape/v1alpha1\nkind: Pricing\n"
    write(tmp_path / "user" / "pricing.yaml", head + "date: '2026-07-01'\nmodels:\n  claude-sonnet-4-6: {output: 20}\n  new-model: {input: 1, cache_read: 0.1, cache_write: 1.25}\n")
    write(tmp_path / "project" / ".benchtape" / "pricing.yaml", head + "models:\n  new-model: {output: 4}\n  gpt-5.5: {input: 0, cache_read: 0, cache_write: 0, output: 0}\n")
    prices = pricing(tmp_path)
    assert prices.rates("claude-sonnet-4-6") == Rates(3.0, 0.3, 3.75, 20.0)
    assert prices.rates("new-model") == Rates(1.0, 0.1, 1.25, 4.0)
    assert prices.rates("gpt-5.5") is None  # all zeros: the shipped price is suppressed
    assert prices.dates == ["2026-06-04", "2026-07-01"]


def test_a_missing_rate_makes_the_model_unpriced(tmp_path):
    write(tmp_path / "user" / "pricing.yaml", "apiVersion: benchtape/v1alpha1\nkind: Pricing\nmodels:\n  half: {input: 1, output: 2}\n")
    assert pricing(tmp_path).rates("half") is None


@pytest.mark.parametrize(
    ("models", "what"),
    [("m: {input: -1}", "must be a number of USD per 1M tokens"), ("m: {cached_input: 1}", "unknown key `cached_input`"), ("m: {input: cheap}", "must be a number")],
)
def test_bad_pricing_is_refused_with_its_line(tmp_path, models, what):
    path = write(tmp_path / "user" / "pricing.yaml", f"apiVersion: benchtape/v1alpha1\nkind: Pricing\nmodels:\n  {models}\n")
    with pytest.raises(BadInput) as info:
        pricing(tmp_path)
    assert what in info.value.what and info.value.file == str(path) and info.value.line == 4


def test_a_workflow_cost_is_unknown_if_any_step_is():
    assert sum_known([0.25, 0.5]) == 0.75
    assert sum_known([0.25, None]) is None
