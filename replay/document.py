"""The session document: the one JSON shape of a stored session that query, show and
reports read, built from the `Session` projection grading uses."""

from __future__ import annotations

from typing import Any

from benchtape.core.model import Session
from benchtape.store.database import SessionRow


def check_name(metric: str | None, type_: str) -> str:
    """What a verdict is called wherever it is shown: the check's `metric:`, else its type,
    so two checks of one type (two assert-sets) can be told apart."""
    return metric or type_


def check_label(metric: str | None, type_: str) -> str:
    """A check as a line or a table names it: its name, with its type beside a `metric:` name."""
    name = check_name(metric, type_)
    return name if name == type_ else f"{name} [{type_}]"


def session_json(session: Session) -> dict[str, Any]:
    """The projection as JSON: what a report's `results[].session` carries."""
    return {
        "final_output": session.final_output,
        "actions": [a.to_dict() for a in session.actions],
        "calls": [c.to_dict() for c in session.calls],
        "subagents": {t: s.to_dict() for t, s in session.subagents.items()},
        "skills": session.skills,
        "metrics": session.metrics.to_dict(),
        "work_dir": session.work_dir,
        "environment": session.environment,
        "snapshot": session.snapshot,
        "status": session.status,
        "finished": session.finished,
        "exit_code": session.exit_code,
        "timed_out": session.timed_out,
        "turns": [{"prompt": t.prompt, "steps": t.steps} for t in session.turns],
        "warnings": session.warnings,
        "errors": session.errors,
    }


DOCUMENT_KEYS = frozenset({"session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts", "outcome"})

# The action kinds each part of the document is folded from, for the parts that depend on
# few kinds: metrics are the `metrics` actions, main-thread tool calls (step_count) and the
# wall clock in `session.finished`; environment is its two kinds; verdicts and the outcome
# are the grading's, not actions.
# Any other part needs every action (None).
KINDS_FOR: dict[str, frozenset[str] | None] = {
    "metrics": frozenset({"metrics", "tool.call", "session.finished"}),
    # a call is its tool.call and tool.result; its `agent` is its subagent's, named by the spawn
    "calls": frozenset({"tool.call", "tool.result", "subagent.spawned"}),
    "environment": frozenset({"environment.expected", "environment.reported"}),
    "verdicts": frozenset(),
    "outcome": frozenset(),
}


def kinds_needed(keys: frozenset[str] | None) -> frozenset[str] | None:
    """The action kinds a document limited to `keys` is built from; None means all of them."""
    if keys is None:
        return None
    out: set[str] = set()
    for key in keys:
        kinds = KINDS_FOR.get(key)
        if kinds is None:
            return None
        out |= kinds
    return frozenset(out)


def _meta(row: SessionRow | None, session: Session) -> dict[str, Any]:
    meta = {
        "id": session.id,
        "scenario": session.scenario,
        "harness": session.harness,
        "model": session.model,
        "prompt": session.prompt,
        "status": session.status,
        "finished": session.finished,
        "exit_code": session.exit_code,
        "timed_out": session.timed_out,
        "work_dir": session.work_dir,
        "snapshot": session.snapshot,
        "staged_snapshot": session.staged_snapshot,
        "turns": [{"prompt": t.prompt, "steps": t.steps} for t in session.turns],
        "skills": session.skills,
        "warnings": session.warnings,
        "errors": session.errors,
    }
    if row is not None:
        meta.update(run_id=row.run_id, attempt=row.attempt, cell_id=row.cell_id, started_at=row.started_at, params=row.params, source=row.source, parent_session=row.parent_session)
    return meta


_PARTS = {
    "actions": lambda s: [a.to_dict() for a in s.actions],
    "calls": lambda s: [c.to_dict() for c in s.calls],
    "subagents": lambda s: {t: sub.to_dict() for t, sub in s.subagents.items()},
    "metrics": lambda s: s.metrics.to_dict(),
    "environment": lambda s: s.environment,
    "final_output": lambda s: s.final_output,
}


def document(row: SessionRow | None, session: Session, verdicts: list[dict[str, Any]], keys: frozenset[str] | None = None, outcome: dict[str, Any] | None = None) -> dict[str, Any]:
    """{session, actions, calls, subagents, metrics, environment, final_output, verdicts, outcome}.

    The log's parts come from the session's actions alone; `verdicts` (its latest grading's)
    and `outcome` (the cell outcome its latest grading decided, None outside an evaluation)
    are the grading's, so a regrade changes those two and nothing else. `keys` limits the
    document to those top-level keys (a query that reads only `metrics` need not serialize
    every action); None builds all of it."""
    doc: dict[str, Any] = {}
    for key in ("session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts", "outcome"):
        if keys is not None and key not in keys:
            continue
        if key == "session":
            doc[key] = _meta(row, session)
        elif key == "verdicts":
            doc[key] = verdicts
        elif key == "outcome":
            doc[key] = outcome
        else:
            doc[key] = _PARTS[key](session)
    return doc
