"""What the interchange formats carry of a session's grading: the verdicts of its latest grading,
the cell outcome that grading decided, and a task cell's task.

Both writers (ATIF, Inspect) read this one summary, so the two formats say the same about a
session's grade. A verdict travels by its name (its `metric:`, else its type: `task:verify` for a
task cell's hidden verifier, like any check's), its status, score and reason, plus the few facts
of its evidence a reader of another tool needs to trust it (`FACTS`: the task's outcome and
reward, the fingerprint of the task it was graded against, the candidate patch's hash). The rest
of the evidence (a verifier's output, an exec check's stdout) stays in the store: it is the
grading's working, and may hold what a report would not publish.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchtape.core.model import Session
from benchtape.replay.document import check_name
from benchtape.replay.query import latest_verdicts
from benchtape.store.views import BrowsingStore

# Evidence fields a format carries with a verdict (a task cell's `task:verify` holds them all).
FACTS = ("outcome", "reward", "task", "fingerprint", "recorded_fingerprint", "candidate", "level")
TASK_REF = ("kind", "id", "folder", "fingerprint")  # session.started.task, as the record side writes it


@dataclass
class Grading:
    """A session's latest grading as the formats carry it ({} verdicts: never graded)."""

    verdicts: list[dict[str, Any]] = field(default_factory=list)
    outcome: dict[str, Any] | None = None  # {outcome, reason} the grading decided for the cell, when it decided one

    @property
    def grading_id(self) -> str | None:
        return self.verdicts[0].get("grading_id") if self.verdicts else None


def stored_grading(store: BrowsingStore, session_id: str) -> Grading:
    """The session's latest grading (store.latest_grading_for) and the cell outcome it decided:
    that grading's, else an execution failure decided before any check ran (no grading)."""
    verdicts = latest_verdicts(store, session_id)
    grading_id = verdicts[0].get("grading_id") if verdicts else None
    records = store.outcomes([session_id]).get(session_id, [])
    mine = [r for r in records if grading_id is not None and r.get("grading_id") == grading_id] or [r for r in records if r.get("grading_id") is None]
    outcome = {"outcome": mine[-1]["outcome"], "reason": mine[-1].get("reason")} if mine else None
    return Grading(verdicts, outcome)


def verdict_name(verdict: dict[str, Any]) -> str:
    return check_name(verdict.get("metric"), verdict["type"])


def unique_names(verdicts: list[dict[str, Any]], taken: frozenset[str] = frozenset()) -> list[str]:
    """Each verdict's name, told apart by its check path when two share one (two checks of one type)."""
    seen = set(taken)
    out = []
    for v in verdicts:
        name = verdict_name(v)
        name = name if name not in seen else f"{name} ({v['check_path']})"
        seen.add(name)
        out.append(name)
    return out


def facts(verdict: dict[str, Any]) -> dict[str, Any]:
    """The evidence fields a format carries (FACTS), the candidate named by its hash and size only."""
    evidence = verdict.get("evidence")
    if not isinstance(evidence, dict):
        return {}
    out = {k: evidence[k] for k in FACTS if evidence.get(k) is not None}
    if isinstance(out.get("candidate"), dict):
        out["candidate"] = {k: v for k, v in out["candidate"].items() if k in ("sha256", "bytes")}
    return out


def verdict_record(verdict: dict[str, Any]) -> dict[str, Any]:
    """One verdict as a format's private data holds it (ATIF's `extra.benchtape.grading`)."""
    record = {
        "name": verdict_name(verdict),
        "check_path": verdict["check_path"],
        "type": verdict["type"],
        "status": verdict["status"],
        "pass": bool(verdict["pass"]),
        "score": float(verdict["score"]),
        "reason": verdict.get("reason"),
        "readout": bool(verdict.get("readout")),
    }
    found = facts(verdict)
    if found:
        record["facts"] = found
    return record


def task_ref(session: Session) -> dict[str, Any] | None:
    """A task cell's task as its session.started recorded it (kind, id, folder, fingerprint); None for a bench scenario."""
    task = session.started.get("task")
    if not isinstance(task, dict) or not task:
        return None
    return {k: task.get(k) for k in TASK_REF if task.get(k) is not None}


def scenario_said(outcome: str) -> str:
    """A session's scenario verdict in words, as the Inspect and OTLP exports explain it: it
    passes when every counting check is PASS or NA (a failed one read "failed (every counting
    check PASS or NA)", as though they all had)."""
    if outcome == "pass":
        return "the scenario passed: every counting check PASS or NA"
    if outcome == "error":
        return "the scenario errored: a counting check (or the harness) ended in ERROR"
    return "the scenario failed: not every counting check PASS or NA"
