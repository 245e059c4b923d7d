"""Comparing an evaluation's setups: the ranking (`benchtape compare`, the viewer's
evaluation page) and the side-by-side of one task's sessions, priced by the project's pricing.

`compare` is the one function both front ends call, so the CLI's `compare --json` and the
viewer's `?format=json` are one document.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from benchtape.replay.compare import Comparison, comparison
from benchtape.spec.pricing import FREE_MODELS, load_pricing
from benchtape.store.views import BrowsingStore

__all__ = ["Comparison", "FREE_MODELS", "compare", "comparison", "evaluation_plan", "load_pricing", "parse_difference", "side_by_side"]


def compare(store: BrowsingStore, targets: list[str], cwd: Path, *, after_cutoff: bool = False) -> Comparison:
    """The ranking of `targets` (an evaluation name, or run ids), priced by the pricing found
    from `cwd` (the project's, else the built-in): what `benchtape compare` prints and the
    viewer's evaluation page shows. `after_cutoff`: only tasks fixed after every setup's
    training cutoff (replay.contamination)."""
    return comparison(store, list(targets), load_pricing(cwd), cwd, after_cutoff=after_cutoff)


# The planner and the side-by-side are loaded when called: `compare` (whose start-up issue 48
# times) needs neither, and the side-by-side brings the query engine and the store's writer.


def evaluation_plan(store: BrowsingStore | None, ev: Any, tasks: Sequence[str], detect: float | None = None, pricing: Any = None, *, sequential: bool = False) -> dict[str, Any]:
    """The power plan of `ev` over these tasks (replay.compare.evaluation_plan); `sequential`:
    run in rounds (--until-decided), where the always-valid test decides."""
    from benchtape.replay.compare import evaluation_plan as plan

    return plan(store, ev, list(tasks), detect, pricing, sequential=sequential)


def parse_difference(text: str) -> float:
    """`10pp`, `10%`, `0.1` → 0.1 (replay.power.parse_difference)."""
    from benchtape.replay.power import parse_difference as parse

    return parse(text)


def side_by_side(store: BrowsingStore, result: Comparison, task: str) -> dict[str, Any]:
    """One task's attempts by every setup (replay.side_by_side.side_by_side)."""
    from benchtape.replay.side_by_side import side_by_side as one_task

    return one_task(store, result, task)
