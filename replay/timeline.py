"""What `benchtape sessions` and `benchtape show` print: runs with their sessions, and one
session's actions as a timeline with its latest verdicts.

Both read the store without loading whole sessions where they do not need to: the
session list reads only each session's `session.finished` row and verdict counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from benchtape.core.run_kinds import CONTROL
from benchtape.replay.select import resolve, rows_by_ids, short_handles
from benchtape.store.database import SessionRow
from benchtape.store.views import BrowsingStore

if TYPE_CHECKING:  # types only: the session list starts without the domain model (issue 48's start-up)
    from benchtape.core.model import Action, Session


@dataclass
class SessionLine:
    """One session as `benchtape sessions` lists it: what happened, what it cost, how it graded."""

    id: str
    handle: str  # the shortest unambiguous prefix of the id
    run_id: str
    run_handle: str
    run_kind: str
    scenario: str
    attempt: int
    harness: str | None
    model: str | None
    status: str  # ok | error | timeout | interrupted | incomplete (no session.finished)
    outcome: str  # pass | fail | error | not graded (the scenario rule over the latest grading)
    score: float | None  # mean score of the counting checks of the latest grading
    cost_usd: float | None  # as the harness reported it (0 for a model that is no model: spec.pricing.FREE_MODELS); None = unknown, never zero
    duration_ms: float | None  # the harness's own duration, else benchtape's wall clock
    grading_id: str | None
    verdicts: dict[str, int] = field(default_factory=dict)  # status → count in the latest grading
    started_at: float = 0.0

    @property
    def control(self) -> bool:
        return self.run_kind == CONTROL

    @property
    def agent_kind(self) -> str | None:
        """`scripted`, `no-op`, `oracle` (spec.agent_kind), or None when a model decided."""
        from benchtape.spec.agent_kind import NOOP, agent_kind

        return NOOP if self.control else agent_kind(self.harness, self.model)

    @property
    def summary(self) -> str:
        if not self.grading_id:
            return "not graded"
        order = ("PASS", "FAIL", "ERROR", "NA")
        return " ".join(f"{self.verdicts[s]} {s}" for s in order if self.verdicts.get(s))

    def to_dict(self) -> dict[str, Any]:
        return {**self.__dict__, "control": self.control, "agent_kind": self.agent_kind, "verdict_summary": self.summary}


_LISTED_KINDS = ("session.started", "metrics", "session.finished")


def session_lines(store: BrowsingStore, *, run: str | None = None, scenario: str | None = None, limit: int | None = None, controls: bool = False) -> list[SessionLine]:
    """Stored sessions newest first; negative-control sessions only when asked for (or their run named)."""
    run_id = resolve(store, "runs", run) if run else None
    picked = store.newest_sessions(run_id=run_id, scenario=scenario, not_kind=None if run_id or controls else CONTROL, limit=limit)
    return lines_of(store, picked)


def lines_of(store: BrowsingStore, picked: list[tuple[str, str]]) -> list[SessionLine]:
    """The list's lines of these (session id, its run's kind), in the order given: what a
    reader that picks sessions its own way (the viewer's filters) lists them as."""
    ids = [sid for sid, _ in picked]
    handles = short_handles(store, "sessions", ids)
    selected = {r.id: r for r in rows_by_ids(store, ids)}
    run_handles = short_handles(store, "runs", {r.run_id for r in selected.values()})
    return [_line(store, selected[sid], kind, handles[sid], run_handles[selected[sid].run_id]) for sid, kind in picked]


def count_sessions(store: BrowsingStore, *, controls: bool = False) -> int:
    return store.count_sessions(not_kind=None if controls else CONTROL)


def _line(store: BrowsingStore, row: SessionRow, run_kind: str, handle: str, run_handle: str) -> SessionLine:
    from benchtape.replay.query import latest_verdicts  # here, not at import: an empty list needs none of these
    from benchtape.spec.pricing import reported_cost

    session = store.load_session(row.id, row, _LISTED_KINDS)
    verdicts = latest_verdicts(store, row.id)
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v["status"]] = counts.get(v["status"], 0) + 1
    counting = [v["score"] for v in verdicts if not v["readout"] and v["status"] != "NA"]  # not applicable: out of the verdict, and out of the score
    return SessionLine(
        id=row.id,
        handle=handle,
        run_id=row.run_id,
        run_handle=run_handle,
        run_kind=run_kind,
        scenario=row.scenario,
        attempt=row.attempt,
        harness=row.harness or session.harness,
        model=row.model or session.model,
        status=session.status or "incomplete",
        outcome=session_status(session, verdicts) if session.finished else "incomplete",
        score=sum(counting) / len(counting) if counting else None,
        cost_usd=reported_cost(row.model or session.model, session.metrics.cost_usd),  # as compare prices it: a scripted, no-op or oracle session spent nothing (known), never "unknown" here and $0 there
        duration_ms=session.metrics.latency_ms,
        grading_id=verdicts[0]["grading_id"] if verdicts else None,
        verdicts=counts,
        started_at=_started_at(session, row),
    )


def _started_at(session: Session, row: SessionRow) -> float:
    """When the session began: its `session.started` action's time (an import's is the
    transcript's own first timestamp), else when its row was written."""
    return next((a.at for a in session.actions if a.kind == "session.started" and a.at), row.started_at)


def spent(session: Session) -> float | None:
    """What the session spent, as `sessions` and `compare` say it (spec/pricing.reported_cost:
    nothing for a scripted, no-op or oracle session, whatever its tool printed): the exports'."""
    from benchtape.spec.pricing import reported_cost

    return reported_cost(session.model, session.metrics.cost_usd)


def session_status(session: Session, verdicts: list[dict[str, Any]]) -> str:
    """pass / fail / error by the scenario rule over stored verdicts; `not graded` without any."""
    from benchtape.replay.grading import harness_ok, scenario_outcome

    if harness_ok(session) and not verdicts:
        return "not graded"
    return scenario_outcome(harness_ok(session), ((v["status"], bool(v.get("readout"))) for v in verdicts))


@dataclass(frozen=True)
class Step:
    """One row of a session's timeline. `text` is never cut here: a renderer shortens it
    for a terminal (with a marker) and shows it whole on request; `detail` is the whole
    payload when `text` picks one field of it (a tool call's command or file path)."""

    seq: int | None
    at: float
    thread: str
    kind: str
    tool: str | None
    outcome: str | None
    tokens: int | None
    text: str
    detail: str | None = None

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
    tool: str | None = None
    outcome = None
    tokens = None
    detail = None
    if a.kind == "tool.call":
        call = a.payload("tool.call")
        tool, outcome = call.get("tool"), outcome_by_seq.get(a.seq)
        text, detail = _text(call.get("input"))
    elif a.kind == "tool.result":
        result = a.payload("tool.result")
        tool = tool_by_result.get(a.seq)
        err = result.get("is_error")
        outcome = None if err is None else ("error" if err else "ok")
        text, detail = _text(result.get("output"))
    elif a.kind == "metrics":
        metrics = a.payload("metrics")
        ins, outs = metrics.get("tokens_in"), metrics.get("tokens_out")
        tokens = None if ins is None and outs is None else (ins or 0) + (outs or 0)
        # a harness's own float sums (claude's cost: 0.009600000000000001) read at six decimals
        text = ", ".join(f"{k}={round(v, 6) if isinstance(v, float) else v}" for k, v in metrics.items() if v is not None)
    elif a.kind == "subagent.spawned":
        spawn = a.payload("subagent.spawned")
        tool, text = spawn.get("tool") or "Task", f"{spawn.get('agent') or ''} → {spawn.get('thread')}: {_text(spawn.get('prompt'))[0]}"
    elif a.kind == "skill.invoked":
        skill = a.payload("skill.invoked")
        tool, text = skill.get("tool") or "Skill", str(skill.get("name"))
    elif a.kind == "session.finished":
        fin = a.payload("session.finished")
        wall = fin.get("wall_ms")
        text = f"status={fin.get('status')} exit={fin.get('exit_code')}" + (" timed out" if fin.get("timed_out") else "") + (f" {wall:.0f} ms" if isinstance(wall, (int, float)) else "")
    elif a.kind == "workspace.snapshot":
        snap = a.payload("workspace.snapshot")
        from benchtape.core.payloads import STAGED

        text = f"{snap.get('files')} files, {snap.get('bytes')} bytes, {str(snap.get('sha256'))[:12]}" + (" (the staged tree, before the agent)" if snap.get("stage") == STAGED else "")
    elif a.kind == "session.started":
        started = a.payload("session.started")
        text = f"{started.get('scenario')} · {started.get('harness')}" + (f" · {started.get('model')}" if started.get("model") else "")
    elif a.kind == "error" and isinstance(a.data.get("stderr_tail"), str) and a.data["stderr_tail"].strip():
        # "harness exited with code 1" says nothing of why: the agent's own last words (a
        # traceback's last line) on the row, the whole stderr tail under it with --full
        from benchtape.core.command_runner import telling_line  # here: the timeline's import stays light (`show` starts fast)

        tail, message = a.data["stderr_tail"].strip(), str(a.data.get("message"))
        why = telling_line(tail) or ""
        text, detail = (message if why in message else f"{message} · stderr: {why}"), tail
    else:  # any other kind: its text, or its message (an error), or the whole payload
        d = a.data
        text, detail = _text(d.get("text") if "text" in d else d.get("message") if "message" in d else d)
    return Step(a.seq, a.at, labels.get(a.thread, a.thread), a.kind, tool, outcome, tokens, text, detail)


UNSPAWNED = "subagent"  # the kind of the row standing for a subagent thread whose spawn was never recorded (no action)


@dataclass
class Node:
    """One row of the nested timeline: a step, a tool call's paired result folded into it, and
    for a subagent's spawn the subagent's own rows (its thread), nested under it."""

    step: Step
    thread: str  # the action's own thread id (`step.thread` is its label)
    result: Step | None = None
    children: list[Node] | None = None  # a subagent's rows (None: not a spawn)
    sub_thread: str | None = None  # the subagent's thread id, for a spawn
    agent: str | None = None  # the subagent's type, for a spawn

    @property
    def actions(self) -> int:
        """How many actions this row stands for, its subagent's included."""
        own = (self.step.kind != UNSPAWNED) + (self.result is not None)
        return own + sum(n.actions for n in self.children or ())


def tree(session: Session) -> list[Node]:
    """The timeline as a reader follows it: the main thread's rows in order, each tool call
    with its result, each subagent's rows nested under its spawn (in their own order, however
    they interleaved with the parent's). A subagent thread whose spawn was never recorded is
    nested at the end of its parent thread. The same `steps`, grouped: nothing is left out."""
    from benchtape.core.model import MAIN

    flat = steps(session)
    result_of: dict[Any, Any] = {c.result_seq: c.seq for c in session.calls if c.result_seq is not None}
    by_call: dict[Any, Node] = {}
    threads: dict[str, list[Node]] = {}
    spawned: set[str] = set()
    by_call_id: dict[Any, str] = {sub.call_id: t for t, sub in session.subagents.items() if sub.call_id}
    call_ids = {c.call_id for c in session.calls}  # a spawn started by a tool call (Task): that call gets the result
    by_spawn_call: dict[str, Node] = {}  # a spawn's call id → its row: the subagent's answer is that call's result
    for action, step in zip(session.actions, flat):
        rows = threads.setdefault(action.thread, [])
        if action.kind == "tool.result":
            call_seq = result_of.get(action.seq)
            owner = by_call.get(call_seq) if call_seq is not None else by_spawn_call.get(str(action.data.get("call_id")))
            if owner is not None and (owner.result is None or action.data.get("from_transcript")):
                owner.result = step  # a later result read from the harness's own record stands for the call (as in the projection)
                continue
        node = Node(step, action.thread)
        if action.kind == "tool.call":
            by_call[action.seq] = node
        elif action.kind == "subagent.spawned":
            d = action.data
            sub_thread = str(d.get("thread")) if d.get("thread") in session.subagents else by_call_id.get(d.get("call_id"))
            if sub_thread is not None and sub_thread not in spawned:
                spawned.add(sub_thread)
                node.children, node.sub_thread = threads.setdefault(sub_thread, []), sub_thread
                node.agent = session.subagents[sub_thread].agent
                if d.get("call_id") and d.get("call_id") not in call_ids:
                    by_spawn_call[str(d["call_id"])] = node
        rows.append(node)
    for thread, sub in session.subagents.items():  # threads whose spawn is not in the log
        if thread in spawned or thread not in threads:
            continue
        label = thread_label(thread, sub.agent)
        orphan = Step(None, 0.0, label, UNSPAWNED, None, None, None, f"{label}: its spawn was not recorded")
        parent = sub.parent_thread if sub.parent_thread in threads else MAIN
        threads.setdefault(parent, []).append(Node(orphan, parent, children=threads[thread], sub_thread=thread, agent=sub.agent))
    return threads.get(MAIN, [])


_PICKED = ("command", "cmd", "file_path", "pattern", "path", "url", "query", "input")  # cmd, input: codex's exec_command, apply_patch


def _text(value: Any) -> tuple[str, str | None]:
    """(what a row shows, the whole payload when the row shows only a part of it)."""
    from benchtape.store.database import dumps

    if value is None:
        return "", None
    if isinstance(value, dict):
        for key in _PICKED:
            if key in value:
                whole = dumps(value)
                return str(value[key]), (whole if len(value) > 1 else None)
        return dumps(value), None
    if isinstance(value, list):  # content blocks
        return " ".join(str(b.get("text", "")) if isinstance(b, dict) else str(b) for b in value), None
    return str(value), None


def one_line(text: str) -> str:
    """Whitespace (newlines included) folded to single spaces: one timeline row per step."""
    return " ".join(text.split())


def shorten(text: str, width: int) -> str:
    """`text` cut to `width` characters with a marker that says how much was left out and how to see it."""
    if len(text) <= width:
        return text
    keep = width
    while keep > 1:
        marker = f"… [+{len(text) - keep} chars, --full]"
        if keep + len(marker) <= width:
            break
        keep -= 1
    return text[:keep] + f"… [+{len(text) - keep} chars, --full]"


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
    control: bool = False  # a negative-control session (the no-op agent)
    metrics: dict[str, Any] | None = None  # the bench's metrics (replay.metrics.stored_or_built_in)
    reproduction: dict[str, Any] | None = None  # the newest `grade` of it: REPRODUCED or DIVERGED (replay.query.reproduction_marker)


def show_document(store: BrowsingStore, shown: Shown) -> dict[str, Any]:
    """`benchtape show --json`: the session document (what query reads) with its outcome and the
    bench's metrics, and the newest positive control's finding beside it when there is one. The
    viewer's JSON twins are this same document."""
    from benchtape.replay.document import document

    sid = shown.row.id
    doc = document(shown.row, shown.session, shown.verdicts, outcome=store.latest_outcomes([sid]).get(sid), bench_metrics=shown.metrics)
    if "session" in doc:
        doc["session"]["agent_kind"] = shown_kind(shown)  # a negative-control run's session is the no-op, whatever its harness
    return {**doc, "reproduction": shown.reproduction} if shown.reproduction else doc


def shown_kind(shown: Shown) -> str | None:
    """What decided the shown session's actions (spec.agent_kind): None when a model did."""
    from benchtape.spec.agent_kind import NOOP, agent_kind

    s, row = shown.session, shown.row
    return NOOP if shown.control else agent_kind(s.harness or row.harness, s.model or row.model, noop=bool((s.started.get("cell") or {}).get("control") == "noop"))


def show(store: BrowsingStore, session: str) -> Shown:
    """One session (any handle `resolve` takes) with its timeline and latest verdicts."""
    sid = resolve(store, "sessions", session)
    row = store.session_row(sid)
    assert row is not None  # resolve named a stored session, and history is never deleted
    s = store.load_session(sid, row)
    run = store.run(row.run_id) or {}
    from benchtape.replay.metrics import stored_or_built_in
    from benchtape.replay.query import latest_verdicts, reproduction_marker

    verdicts = latest_verdicts(store, sid)
    return Shown(row, s, steps(s), verdicts, run.get("kind") == CONTROL, stored_or_built_in(store, sid, s), reproduction_marker(store, sid, verdicts))


def free_cost_note(session: Session, value: Any) -> str | None:
    """Why `show` prints a cost that `sessions` and `compare` count as $0: a scripted (or no-op,
    oracle) model spends nothing, while the harness priced its made-up tokens at some real
    model's list price (Claude Code's 0.0032 for scripted-solver-partial). None otherwise."""
    from benchtape.spec.pricing import FREE_MODELS

    if session.model not in FREE_MODELS or value == 0:
        return None
    if value is None:  # n/a here, $0.0000 in `sessions`: the same fact, said once
        return f"the harness reported no cost; model {session.model} is no model: nothing was spent, and sessions and compare count $0"
    return f"the harness's own figure for model {session.model}, which is no model: nothing was spent, and sessions and compare count $0"
