"""The session document: the one JSON shape of a stored session that query, show and
reports read, built from the `Session` projection grading uses."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from benchtape.store.database import SessionRow

if TYPE_CHECKING:  # types only: a session list (render's labels) starts without the domain model
    from benchtape.core.model import Call, Session


def check_name(metric: str | None, type_: str) -> str:
    """What a verdict is called wherever it is shown: the check's `metric:`, else its type,
    so two checks of one type (two assert-sets) can be told apart."""
    return metric or type_


def check_label(metric: str | None, type_: str) -> str:
    """A check as a line or a table names it: its name, with its type beside a `metric:` name."""
    name = check_name(metric, type_)
    return name if name == type_ else f"{name} [{type_}]"


def placed(check_path: str, name: str) -> str:
    """A check with its place: `checks[1] cost`; a check whose place is its name (a task
    cell's `task:verify`) is named once, not `task:verify task:verify`."""
    return check_path if check_path == name else f"{check_path} {name}"


def session_json(session: Session, metadata: dict[str, Any] | None = None, provider: str | None = None) -> dict[str, Any]:
    """The projection as JSON: what a report's `results[].session` carries, in madbench's
    shape (its keys `final_output`, `actions`, `calls`, `files_changed`, `metrics`, `work_dir`,
    `subagents`, `metadata`, `provider`, `environment`, `turns`, with madbench's names for each
    call and metric), benchtape's richer fields beside them."""
    return {
        "final_output": session.final_output,
        "actions": [a.to_dict() for a in session.actions],
        "calls": [madbench_call(c) for c in session.calls],
        "files_changed": None,  # madbench fills it only under its demo harness; the change is `benchtape show --diff`
        "subagents": {t: s.to_dict() for t, s in session.subagents.items()},
        "skills": session.skills,
        "metrics": session.metrics.madbench(),
        "work_dir": session.work_dir,
        "metadata": metadata or {},
        "provider": provider if provider is not None else session.provider,
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


def madbench_call(call: Call) -> dict[str, Any]:
    """One call as madbench's report has it (`Call.madbench`, as a grader's envelope: `name`, `args`,
    `tool_call_id`, `thread` "" for the main thread, `agent_id`, `result_ok` absent when
    unknown), with benchtape's fields beside (`tool`, `input`, `call_id`, `outcome`, `output`,
    `is_error`, `seq`, `agent`), its thread id as `thread_id` (madbench's `thread` is a name)."""
    d = call.to_dict()
    d["thread_id"] = d.pop("thread")
    return {**call.madbench(), **d}


def row_outcome(row: Mapping[str, Any]) -> str:
    """A report row's outcome: pass, fail or error (`outcome`; a report written before it had
    one carries it in `status`). madbench's `status` is pass or fail only."""
    return str(row.get("outcome") or row.get("status"))


def madbench_status(outcome: str) -> str:
    """madbench's `results[].status`: the string pass or fail (an error is a fail there, and is
    counted in the summary's `errors`)."""
    return "pass" if outcome == "pass" else "fail"


DOCUMENT_KEYS = frozenset({"session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts", "outcome", "bench_metrics"})

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
    # declared metrics are the grading's (none needed); the built-in schema reads the metrics and the turns
    "bench_metrics": frozenset({"metrics", "tool.call", "session.finished", "message.user", "session.started"}),
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
    meta: dict[str, Any] = {
        "id": session.id,
        "scenario": session.scenario,
        "provider": session.provider,
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
    from benchtape.spec.agent_kind import agent_kind

    control = ((row.params if row is not None else None) or {}).get("control")
    meta["agent_kind"] = agent_kind(session.harness or (row.harness if row is not None else None), session.model or (row.model if row is not None else None), noop=control == "noop")  # scripted / no-op / oracle; None: a model decided
    return meta


# The parts a query may only count (`length(calls)`): their length without their elements' dictionaries.
_COUNTS: dict[str, Callable[[Session], int]] = {
    "actions": lambda s: len(s.actions),
    "calls": lambda s: len(s.calls),
}

_PARTS: dict[str, Callable[[Session], Any]] = {
    "actions": lambda s: [a.to_dict() for a in s.actions],
    "calls": lambda s: [c.to_dict() for c in s.calls],
    "subagents": lambda s: {t: sub.to_dict() for t, sub in s.subagents.items()},
    "metrics": lambda s: s.metrics.to_dict(),
    "environment": lambda s: s.environment,
    "final_output": lambda s: s.final_output,
}


def document(
    row: SessionRow | None,
    session: Session,
    verdicts: list[dict[str, Any]],
    keys: frozenset[str] | None = None,
    outcome: dict[str, Any] | None = None,
    bench_metrics: dict[str, Any] | None = None,
    counted: frozenset[str] = frozenset(),
) -> dict[str, Any]:
    """{session, actions, calls, subagents, metrics, environment, final_output, verdicts, outcome, bench_metrics}.

    The log's parts come from the session's actions alone; `verdicts` (its latest grading's),
    `outcome` (the cell outcome its latest grading decided, None outside an evaluation) and
    `bench_metrics` (the bench's declared `metrics:`/`derivedMetrics:` as a grading measured
    them, name → value, else the built-in cost, duration, tokens, turns) are the grading's, so
    a regrade changes those and nothing else. `keys` limits the document to those top-level
    keys (a query that reads only `metrics` need not serialize every action); None builds all of it.
    `counted`: keys the caller only takes the length of (replay/query.py counted_keys): a list
    of that many placeholders, not of dictionaries nobody reads."""
    doc: dict[str, Any] = {}
    for key in ("session", "actions", "calls", "subagents", "metrics", "environment", "final_output", "verdicts", "outcome", "bench_metrics"):
        if keys is not None and key not in keys:
            continue
        if key == "session":
            doc[key] = _meta(row, session)
        elif key == "verdicts":
            doc[key] = verdicts
        elif key == "outcome":
            doc[key] = outcome
        elif key == "bench_metrics":
            doc[key] = (bench_metrics or {}).get("values")
        elif key in counted and key in _COUNTS:
            doc[key] = [None] * _COUNTS[key](session)
        else:
            doc[key] = _PARTS[key](session)
    return doc
