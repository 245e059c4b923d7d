"""Whether an ATIF document is one Harbor accepts: the `atif` package's validator, plus the
rules Harbor's own models enforce and the `atif` package does not.

Harbor (the reference implementation of ATIF) needs Python 3.12, so its validator cannot run
here; the differences were established by running both on the same documents (see
docs/formats.md): Harbor takes `schema_version` only as one of the published versions, wants
at least one step, refuses a `source_call_id` naming no tool call of its step even on a step
with no tool calls, and a negative `total_steps`. Each rule applies to every embedded
subagent trajectory as well.
"""

from __future__ import annotations

from typing import Any

from benchtape.adapters.atif_trajectory import Invalid, load
from benchtape.core.errors import BenchtapeError

VERSIONS = tuple(f"ATIF-v1.{n}" for n in range(9))  # what Harbor 0.26 takes, v1.0 to v1.8


class InvalidExport(BenchtapeError):
    """benchtape built a document the formats' rules refuse: nothing is written."""


def problems(doc: dict[str, Any]) -> list[str]:
    """Every reason Harbor would refuse `doc` ([] when it would take it)."""
    import orjson

    try:
        load(orjson.dumps(doc))
    except Invalid as exc:
        return [f"atif: {exc}"]
    out: list[str] = []
    _harbor(doc, "trajectory", out)
    return out


def check(doc: dict[str, Any], what: str) -> None:
    found = problems(doc)
    if found:
        raise InvalidExport(f"{what} is not a valid ATIF trajectory, so nothing was written: " + "; ".join(found[:5]))


def _harbor(doc: dict[str, Any], where: str, out: list[str]) -> None:
    if doc.get("schema_version") not in VERSIONS:
        out.append(f"{where}.schema_version: {doc.get('schema_version')!r} is not one of {VERSIONS[0]} … {VERSIONS[-1]}")
    steps = doc.get("steps") or []
    if not steps:
        out.append(f"{where}.steps: at least one step is required")
    for step in steps:
        ids = {c.get("tool_call_id") for c in step.get("tool_calls") or []}
        for result in (step.get("observation") or {}).get("results") or []:
            source = result.get("source_call_id")
            if source is not None and source not in ids:
                out.append(f"{where}.steps[{step.get('step_id')}]: source_call_id {source!r} names no tool call of its step")
    total = (doc.get("final_metrics") or {}).get("total_steps")
    if isinstance(total, int) and total < 0:
        out.append(f"{where}.final_metrics.total_steps: {total} is negative")
    for i, sub in enumerate(doc.get("subagent_trajectories") or []):
        _harbor(sub, f"{where}.subagent_trajectories[{i}]", out)
