"""The grader protocol shared by `python`, `custom:exec` and `custom:http`: the envelope
a grader receives, the environment it runs with, and how its reply becomes a Result.

One module so the three transports cannot drift apart: a grader written against one
reads the same document through the others.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from benchtape.checks.common import loads_json, short
from benchtape.checks.registry import CheckContext
from benchtape.core.model import Call, Session
from benchtape.core.results import CheckSpec, Result

# madbench's envelope version, so a grader written for madbench v0.23.0 reads ours unchanged;
# `producer` says who wrote it.
VERSION = "madbench/v1"
PRODUCER = "benchtape"


def call_doc(call: Call) -> dict[str, Any]:
    """One `calls[]` entry, madbench-shaped (`Call.madbench`: the report's calls are the same)."""
    return call.madbench()


def session_doc(session: Session, work_dir: Path | None) -> dict[str, Any]:
    metrics = {k: v for k, v in session.metrics.madbench().items() if v is not None}  # madbench's names beside benchtape's
    doc: dict[str, Any] = {
        "final_output": session.final_output,
        "prompt": session.prompt,
        "actions": [a.to_dict() for a in session.actions],
        "calls": [call_doc(c) for c in session.calls],
        "metrics": metrics,
    }
    if work_dir is not None:
        doc["work_dir"] = str(work_dir)
    return doc


def envelope(session: Session, spec: CheckSpec, ctx: CheckContext) -> dict[str, Any]:
    """The document a grader reads on stdin (exec) or as the POST body (http)."""
    return {
        "version": VERSION,
        "producer": PRODUCER,
        "session": session_doc(session, ctx.work_dir),
        "assertion": {"type": spec.type, "value": spec.value, "args": dict(spec.args or {})},
        "vars": dict(ctx.vars),
    }


def score_passes(score: float, threshold: float | None) -> bool:
    """A bare score passes at the declared bar, else when it is above 0."""
    return score >= threshold if threshold is not None else score > 0


def result_from_reply(reply: Any, type: str, threshold: float | None) -> Result:
    """A grader's reply `{pass, score, reason, evidence}` as a Result, or an ERROR saying
    what is wrong with it. `pass` alone gives score 1/0. `score` alone passes at a declared
    `threshold`; with none it fails, as madbench's Go decoder reads an absent `pass` (false):
    a reply `{"score": 0.3}` passed here where it fails there, and the reason says why."""
    if not isinstance(reply, dict):
        return Result.error(f"{type}: the grader replied {short(repr(reply), 80)}, not an object {{pass, score, reason, evidence}}")
    has_pass, has_score = "pass" in reply, "score" in reply
    if not (has_pass or has_score):
        return Result.error(f"{type}: the grader's reply has neither 'pass' nor 'score'")
    passed = reply.get("pass")
    if has_pass and not isinstance(passed, bool):
        return Result.error(f"{type}: the grader's 'pass' must be true or false, got {passed!r}")
    score = reply.get("score")
    if has_score:
        if isinstance(score, bool) or not isinstance(score, (int, float)) or not math.isfinite(score) or not 0 <= score <= 1:
            return Result.error(f"{type}: the grader's 'score' must be a number in [0, 1], got {score!r}")
        if not has_pass:
            passed = threshold is not None and score_passes(float(score), threshold)
    reason = reply.get("reason")
    if not has_pass and threshold is None:
        reason = f"{'' if reason is None else str(reason) + ' '}(the reply has no 'pass': read as false, as madbench reads it; declare `threshold:` to pass by the score)".lstrip()
    evidence = reply.get("evidence")
    if evidence is not None and not isinstance(evidence, dict):
        evidence = {"value": evidence}
    return Result.of(bool(passed), "" if reason is None else str(reason), evidence or {}, score=None if score is None else float(score))


def last_json_object(text: str) -> Any:
    """The last line of `text` that is a JSON object (a grader may log before replying),
    else the whole text as JSON, else None."""
    for line in reversed(text.splitlines()):
        line = line.strip()
        if line.startswith("{") and line.endswith("}"):
            try:
                return loads_json(line)
            except ValueError:
                continue
    try:
        return loads_json(text.strip())
    except ValueError:
        return None
