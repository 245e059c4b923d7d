"""A scripted, no-op or oracle model spends nothing: `sessions` and `compare` count $0 for its
sessions (replay/timeline.py), and `show` says why beside the harness's own figure (its made-up
tokens priced at some real model's list price: Claude Code's 0.0032 for scripted-solver-partial),
so one session never reads as two costs unexplained."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from benchtape.replay.timeline import free_cost_note


@pytest.mark.parametrize(
    ("model", "value", "said"),
    [
        ("scripted-solver-partial", 0.0032, True),
        ("oracle", 0.01, True),
        ("scripted", 0.0, False),  # $0 reported: nothing to explain
        ("scripted", None, True),  # no figure (a harness plugin's scripted session): `show`'s n/a beside `sessions`' $0.0000 is explained
        ("claude-sonnet-4-5", 0.0032, False),  # a real model's cost is what it cost
        (None, 0.0032, False),
    ],
)
def test_show_says_why_a_free_models_reported_cost_is_counted_as_zero(model: str | None, value: float, said: bool) -> None:
    note = free_cost_note(SimpleNamespace(model=model), value)
    assert (note is not None) == said
    if note:
        assert model in note and "nothing was spent, and sessions and compare count $0" in note
