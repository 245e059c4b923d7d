"""The session document: the one JSON shape of a stored session that query, show and
reports read, built from the `Session` projection grading uses."""

from __future__ import annotations

from typing import Any

from recorder.model import Session
from recorder.store import SessionRow


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


def document(row: SessionRow | None, session: Session, verdicts: list[dict[str, Any]]) -> dict[str, Any]:
    """{session, actions, calls, subagents, metrics, environment, final_output, verdicts}."""
    body = session_json(session)
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
        "turns": body["turns"],
        "skills": session.skills,
        "warnings": session.warnings,
        "errors": session.errors,
    }
    if row is not None:
        meta.update(run_id=row.run_id, attempt=row.attempt, cell_id=row.cell_id, started_at=row.started_at, params=row.params, source=row.source, parent_session=row.parent_session)
    return {
        "session": meta,
        "actions": body["actions"],
        "calls": body["calls"],
        "subagents": body["subagents"],
        "metrics": body["metrics"],
        "environment": body["environment"],
        "final_output": body["final_output"],
        "verdicts": verdicts,
    }
