"""One task, every setup's sessions of it, side by side: what `compare NAME --sessions TASK`
shows so that a user can see *why* one setup beat another on a task, not only that it did.

Built from the comparison's own matrix (the attempts that count, and the ones that measured
nothing), so it never disagrees with the ranking above it."""

from __future__ import annotations

from typing import Any

from benchtape.core.errors import BadInput, closest
from benchtape.replay.changes import NoDiff, workspace_changes
from benchtape.replay.compare import Comparison
from benchtape.replay.query import latest_verdicts
from benchtape.store.views import BrowsingStore

FINAL_OUTPUT_LIMIT = 2000  # characters of a final output shown per session (the whole one is in `show`)


def side_by_side(store: BrowsingStore, result: Comparison, task: str) -> dict[str, Any]:
    """task → every setup's attempts of it, each with its outcome, verdicts, diff stats and
    final output; an unknown task is bad input naming the closest."""
    if task not in result.matrix:
        near = closest(task, list(result.matrix))
        raise BadInput(f"--sessions {task!r}: no task of this comparison", fix=f"did you mean {near!r}?" if near else f"tasks: {', '.join(result.matrix) or '(none measured)'}")
    labels = {row.arm: row.label for row in result.rows}
    setups = []
    for arm, cells in result.matrix[task].items():
        setups.append({"setup": labels.get(arm, arm), "arm": arm, "sessions": [_session(store, cell.session_id, cell.attempt, cell.outcome, cell.measured) for cell in cells]})
    return {"task": task, "setups": setups}


def _session(store: BrowsingStore, session_id: str, attempt: int, outcome: str | None, measured: bool) -> dict[str, Any]:
    session = store.load_session(session_id)
    verdicts = [{"check": v["check_path"], "type": v["type"], "status": v["status"], "score": v["score"], "reason": v["reason"]} for v in latest_verdicts(store, session_id)]
    try:
        changes = workspace_changes(store, session)
        diff: dict[str, Any] = {"modified": len(changes.modified), "added": len(changes.added), "removed": len(changes.removed), "lines_added": _lines(changes.patch, "+"), "lines_removed": _lines(changes.patch, "-")}
    except NoDiff as exc:
        diff = {"none": str(exc)}
    text = session.final_output
    return {
        "session_id": session_id,
        "attempt": attempt,
        "outcome": outcome,
        "measured": measured,
        "verdicts": verdicts,
        "diff": diff,
        "final_output": text if text is None or len(text) <= FINAL_OUTPUT_LIMIT else text[:FINAL_OUTPUT_LIMIT] + f"… [+{len(text) - FINAL_OUTPUT_LIMIT} chars, `benchtape show {session_id} --full`]",
    }


def _lines(patch: str, sign: str) -> int:
    """Lines a unified patch adds (`+`) or removes (`-`), its file headers left out."""
    return sum(1 for line in patch.splitlines() if line.startswith(sign) and not line.startswith(sign * 3))
