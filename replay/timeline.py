"""What `benchtape sessions` and `benchtape show` print: runs with their sessions, and one
session's actions as a timeline with its latest verdicts.

Both read the store without loading whole sessions where they do not need to: the
session list reads only each session's `session.finished` row and verdict counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

from recorder.model import Action, Session
from recorder.store import SessionRow, Store
from replay.query import latest_verdicts
from replay.select import Selection, resolve, rows

SHORT = 80


@dataclass
class SessionLine:
    id: str
    run_id: str
    scenario: str
    attempt: int
    harness: str | None
    model: str | None
    status: str  # ok | error | timeout | interrupted | incomplete (no session.finished)
    grading_id: str | None
    verdicts: dict[str, int] = field(default_factory=dict)  # status → count in the latest grading
    started_at: float = 0.0

    @property
    def summary(self) -> str:
        if not self.grading_id:
            return "not graded"
        order = ("PASS", "FAIL", "ERROR", "NA")
        return " ".join(f"{self.verdicts[s]} {s}" for s in order if self.verdicts.get(s))

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "verdict_summary": self.summary}


def session_lines(store: Store, run: str | None = None) -> Iterator[tuple[dict[str, Any], list[SessionLine]]]:
    """Each run (oldest first) with its sessions; only runs that have sessions are listed."""
    run_id = resolve(store, "runs", run) if run else None
    runs = [store.run(run_id)] if run_id else store.runs()
    for r in runs:
        lines = [_line(store, row) for row in rows(store, Selection(run=r["id"]))]
        if lines or run_id:
            yield r, lines


def _line(store: Store, row: SessionRow) -> SessionLine:
    grading = store.latest_grading_for(row.id)
    counts: dict[str, int] = {}
    if grading:
        counts = dict(store.db.execute("SELECT status, COUNT(*) FROM verdicts WHERE grading_id = ? AND session_id = ? GROUP BY status", [grading, row.id]).fetchall())
    return SessionLine(row.id, row.run_id, row.scenario, row.attempt, row.harness, row.model, store.finish_status(row.id) or "incomplete", grading, counts, row.started_at)


@dataclass(frozen=True)
class Step:
    """One row of a session's timeline."""

    seq: int | None
    at: float
    thread: str
    kind: str
    tool: str | None
    outcome: str | None
    tokens: int | None
    text: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def steps(session: Session) -> list[Step]:
    """The timeline: every action, with a tool call's outcome taken from its paired result."""
    outcome_by_seq = {c.seq: c.outcome for c in session.calls}
    tool_by_result = {c.result_seq: c.tool for c in session.calls if c.result_seq is not None}
    labels = {t: thread_label(t, sub.agent) for t, sub in session.subagents.items()}
    return [_step(a, outcome_by_seq, tool_by_result, labels) for a in session.actions]


def thread_label(thread: str, agent: str | None) -> str:
    """A subagent thread as a person reads it: its type and the tail of its id (`Explore·mq3U5S`)."""
    tail = thread[-6:] if len(thread) > 6 else thread
    return f"{agent}·{tail}" if agent else thread


def _step(a: Action, outcome_by_seq: dict[Any, str | None], tool_by_result: dict[Any, str], labels: dict[str, str]) -> Step:
    d = a.data
    tool = outcome = None
    tokens = None
    if a.kind == "tool.call":
        tool, outcome, text = d.get("tool"), outcome_by_seq.get(a.seq), _short(d.get("input"))
    elif a.kind == "tool.result":
        tool = tool_by_result.get(a.seq)
        err = d.get("is_error")
        outcome = None if err is None else ("error" if err else "ok")
        text = _short(d.get("output"))
    elif a.kind == "metrics":
        ins, outs = d.get("tokens_in"), d.get("tokens_out")
        tokens = None if ins is None and outs is None else (ins or 0) + (outs or 0)
        text = ", ".join(f"{k}={v}" for k, v in d.items() if v is not None)
    elif a.kind == "subagent.spawned":
        tool, text = d.get("tool") or "Task", f"{d.get('agent') or ''} → {d.get('thread')}: {_short(d.get('prompt'))}"
    elif a.kind == "skill.invoked":
        tool, text = d.get("tool") or "Skill", str(d.get("name"))
    elif a.kind == "session.finished":
        text = f"status={d.get('status')} exit={d.get('exit_code')}" + (" timed out" if d.get("timed_out") else "") + (f" {d.get('wall_ms'):.0f} ms" if isinstance(d.get("wall_ms"), (int, float)) else "")
    elif a.kind == "workspace.snapshot":
        text = f"{d.get('files')} files, {d.get('bytes')} bytes, {str(d.get('sha256'))[:12]}"
    elif a.kind == "session.started":
        text = f"{d.get('scenario')} · {d.get('harness')}" + (f" · {d.get('model')}" if d.get("model") else "")
    else:
        text = _short(d.get("text") if "text" in d else d.get("message") if "message" in d else d)
    return Step(a.seq, a.at, labels.get(a.thread, a.thread), a.kind, tool, outcome, tokens, text)


def _short(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, dict):
        for key in ("command", "file_path", "pattern", "path", "url", "query"):
            if key in value:
                return _clip(str(value[key]))
        from recorder.store import dumps

        return _clip(dumps(value))
    if isinstance(value, list):  # content blocks
        return _clip(" ".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in value))
    return _clip(str(value))


def _clip(text: str) -> str:
    one = " ".join(text.split())
    return one if len(one) <= SHORT else one[: SHORT - 1] + "…"


def judge_note(evidence: Any) -> str | None:
    """What an AI verdict's judge said and what it cost, for `show` and the HTML report:
    the reasoning sits next to the verdict it produced. None for a verdict no judge gave."""
    if not isinstance(evidence, dict) or "judge_model" not in evidence:
        return None
    reasoning = evidence.get("judge_reasoning")
    if isinstance(reasoning, list):
        reasoning = " | ".join(f"vote {i}: {r}" for i, r in enumerate(reasoning, 1))
    facts = [f"judge {evidence.get('judge_provider')}/{evidence.get('judge_model')}"]
    if evidence.get("judge_reused"):
        facts.append("answered from a stored judgment")
    tin, tout = evidence.get("judge_input_tokens"), evidence.get("judge_output_tokens")
    if tin is not None or tout is not None:
        facts.append(f"{tin if tin is not None else '?'} in / {tout if tout is not None else '?'} out tokens")
    cost = evidence.get("judge_cost_usd")
    facts.append(f"${cost:.4f}" if isinstance(cost, (int, float)) else "cost unknown")
    return " · ".join(facts) + (f"\n{reasoning}" if reasoning else "")


@dataclass
class Shown:
    row: SessionRow
    session: Session
    steps: list[Step]
    verdicts: list[dict[str, Any]]


def show(store: Store, session: str) -> Shown:
    sid = resolve(store, "sessions", session)
    row = store.session_row(sid)
    s = store.load_session(sid, row)
    return Shown(row, s, steps(s), latest_verdicts(store, sid))
