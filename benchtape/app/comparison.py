"""Comparing an evaluation's setups: the ranking (`benchtape compare`, the viewer's
evaluation page) and the side-by-side of one task's sessions, priced by the project's pricing.

`compare` is the one function both front ends call, so the CLI's `compare --json` and the
viewer's `?format=json` are one document.
"""

from __future__ import annotations

from pathlib import Path

from benchtape.replay.compare import Comparison, comparison
from benchtape.replay.power import evaluation_plan, parse_difference
from benchtape.replay.side_by_side import side_by_side
from benchtape.spec.pricing import FREE_MODELS, load_pricing
from benchtape.store.views import BrowsingStore

__all__ = ["Comparison", "FREE_MODELS", "compare", "comparison", "evaluation_plan", "load_pricing", "parse_difference", "side_by_side"]


def compare(store: BrowsingStore, targets: list[str], cwd: Path, *, after_cutoff: bool = False) -> Comparison:
    """The ranking of `targets` (an evaluation name, or run ids), priced by the pricing found
    from `cwd` (the project's, else the built-in): what `benchtape compare` prints and the
    viewer's evaluation page shows. `after_cutoff`: only tasks fixed after every setup's
    training cutoff (replay.contamination)."""
    return comparison(store, list(targets), load_pricing(cwd), cwd, after_cutoff=after_cutoff)
