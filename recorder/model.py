"""The log's model: actions, the `Session` projection, check specs and results.

Everything that reads a recorded session (grading, query, show, reports) reads the
one projection built here by `project(actions)`. Nothing else derives state from
actions, so a better projection improves every reader at once.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterable

MAIN = "main"

# Every action kind benchtape records. New kinds are added here (and in DESIGN.md) first.
ACTION_KINDS = frozenset(
    {
        "session.started",
        "environment.expected",
        "environment.reported",
        "message.user",
        "message.assistant",
        "thinking",
        "tool.call",
        "tool.result",
        "subagent.spawned",
        "subagent.finished",
        "skill.invoked",
        "metrics",
        "final_output",
        "workspace.snapshot",
        "adapter.warning",
        "error",
        "hook",
        "cell.outcome",
        "session.finished",
    }
)

# Metric fields a harness may report; absent means unknown, never zero.
METRIC_FIELDS = (
    "tokens_in",
    "tokens_out",
    "cache_read_tokens",
    "cache_write_tokens",
    "cost_usd",
    "duration_ms",
    "turns",
)


@dataclass(frozen=True)
class Action:
    """One recorded event. `seq` is assigned by the store; `at` is epoch seconds."""

    kind: str
    data: dict[str, Any] = field(default_factory=dict)
    thread: str = MAIN
    at: float = 0.0
    seq: int | None = None

    def stamped(self, seq: int | None = None, at: float | None = None) -> "Action":
        return replace(self, seq=self.seq if seq is None else seq, at=at if at is not None else (self.at or time.time()))

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "thread": self.thread, "kind": self.kind, "data": self.data}


def outcome_of(is_error: bool | None) -> str | None:
    """A result's outcome: `ok`, `error`, or None when the harness did not say."""
    if is_error is None:
        return None
    return "error" if is_error else "ok"


@dataclass
class Call:
    """A tool call paired with its result (the lossy `calls` view)."""

    seq: int | None
    thread: str
    call_id: str
    tool: str
    input: dict[str, Any]
    output: Any = None
    is_error: bool | None = None
    result_seq: int | None = None
    has_result: bool = False
    agent: str | None = None  # the subagent's type when thread != main

    @property
    def outcome(self) -> str | None:
        # outcome_of(self.is_error) when there is a result, inlined: checks read it per call
        if not self.has_result:
            return None
        is_error = self.is_error
        return None if is_error is None else ("error" if is_error else "ok")

    def to_dict(self) -> dict[str, Any]:
        is_error = self.is_error
        return {
            "seq": self.seq,
            "thread": self.thread,
            "agent": self.agent,
            "call_id": self.call_id,
            "tool": self.tool,
            "input": self.input,
            "output": self.output,
            "outcome": (None if is_error is None else ("error" if is_error else "ok")) if self.has_result else None,  # self.outcome
            "is_error": is_error,
        }


@dataclass
class Invocation:
    """Anything the agent invoked by name: a tool call, an MCP call, a skill, a subagent spawn.

    `session:tool-used` counts these (the authoritative actions), so a spawn and a skill
    count under the tool name that started them (`Task`, `Agent`, `Skill`).
    """

    kind: str  # tool | mcp | skill | subagent
    tool: str
    thread: str  # for a subagent spawn: the subagent's own thread
    call_id: str | None
    is_error: bool | None = None
    has_result: bool = False
    name: str | None = None  # skill name or subagent type
    agent: str | None = None  # agent type of `thread` when it is a subagent

    @property
    def outcome(self) -> str | None:
        # outcome_of(self.is_error) when there is a result, inlined: checks read it per invocation
        if not self.has_result:
            return None
        is_error = self.is_error
        return None if is_error is None else ("error" if is_error else "ok")


@dataclass
class Subagent:
    thread: str
    agent: str | None
    call_id: str | None
    prompt: str | None
    parent_thread: str = MAIN
    actions: list[Action] = field(default_factory=list)
    calls: list[Call] = field(default_factory=list)
    output: str | None = None
    finished: bool = False
    result_received: bool = False

    @property
    def tools(self) -> list[str]:
        seen: list[str] = []
        for c in self.calls:
            if c.tool not in seen:
                seen.append(c.tool)
        return seen

    def last_message(self) -> str | None:
        for a in reversed(self.actions):
            if a.kind == "message.assistant" and a.data.get("text"):
                return a.data["text"]
        return self.output

    def to_dict(self) -> dict[str, Any]:
        return {
            "thread": self.thread,
            "agent": self.agent,
            "call_id": self.call_id,
            "prompt": self.prompt,
            "parent_thread": self.parent_thread,
            "tools": self.tools,
            "tool_calls": len(self.calls),
            "output": self.output,
            "finished": self.finished,
        }


@dataclass
class Metrics:
    tokens_in: int | None = None
    tokens_out: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    cost_usd: float | None = None
    duration_ms: float | None = None
    turns: int | None = None
    wall_ms: float | None = None  # measured by benchtape, always known once finished
    step_count: int = 0  # main-thread tool calls

    @property
    def latency_ms(self) -> float | None:
        """The harness's own duration when it reported one, else benchtape's wall clock."""
        return self.duration_ms if self.duration_ms is not None else self.wall_ms

    @property
    def tokens(self) -> int | None:
        if self.tokens_in is None and self.tokens_out is None:
            return None
        return (self.tokens_in or 0) + (self.tokens_out or 0)

    def to_dict(self) -> dict[str, Any]:
        d = {k: getattr(self, k) for k in METRIC_FIELDS}
        d.update(wall_ms=self.wall_ms, step_count=self.step_count, latency_ms=self.latency_ms, tokens=self.tokens)
        return d


@dataclass
class Turn:
    prompt: str
    steps: int = 0


@dataclass
class Session:
    """What a check sees: the fold of one session's actions."""

    id: str | None = None
    scenario: str | None = None
    harness: str | None = None
    model: str | None = None
    prompt: str | None = None
    actions: list[Action] = field(default_factory=list)
    main: list[Action] = field(default_factory=list)
    subagents: dict[str, Subagent] = field(default_factory=dict)
    calls: list[Call] = field(default_factory=list)
    invocations: list[Invocation] = field(default_factory=list)
    skills: list[dict[str, Any]] = field(default_factory=list)
    metrics: Metrics = field(default_factory=Metrics)
    final_output: str | None = None
    environment: dict[str, Any] = field(default_factory=lambda: {"expected": None, "reported": None})
    snapshot: dict[str, Any] | None = None
    turns: list[Turn] = field(default_factory=list)
    warnings: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    work_dir: str | None = None
    finished: bool = False
    status: str | None = None  # ok | error | timeout | interrupted; None while unfinished
    exit_code: int | None = None
    timed_out: bool = False

    def thread_agent(self, thread: str) -> str | None:
        sub = self.subagents.get(thread)
        return sub.agent if sub else None

    def in_thread(self, thread: str, scope: str | None) -> bool:
        """Whether `thread` falls in the `args.thread` scope: main, a subagent's id or type."""
        if scope is None:
            return True
        if scope == MAIN:
            return thread == MAIN
        return thread != MAIN and (thread == scope or self.thread_agent(thread) == scope)

    def with_output(self, text: str | None) -> "Session":
        return replace(self, final_output=text)


# project() builds Calls and Invocations positionally (keywords cost ~40% more per call, and
# a session has a hundred); this keeps a reordered or added field from misfiling silently.
if tuple(Call.__dataclass_fields__) != ("seq", "thread", "call_id", "tool", "input", "output", "is_error", "result_seq", "has_result", "agent") or tuple(
    Invocation.__dataclass_fields__
) != ("kind", "tool", "thread", "call_id", "is_error", "has_result", "name", "agent"):
    raise TypeError("Call/Invocation fields changed: update the positional constructors in project()")


def project(actions: Iterable[Action]) -> Session:
    """Fold a session's actions, in order, into a `Session`.

    Every reader pays for this fold once per session, so the loop is written for speed: the
    common kinds (tool calls and results, messages, thinking) are tested first, the session's
    lists are bound to locals, and the per-action bookkeeping (main-thread step count, the
    current turn, the last main-thread action) is kept in locals and written back once.
    """
    s = Session()
    all_actions, main, subagents = s.actions, s.main, s.subagents
    calls, invocations, turns = s.calls, s.invocations, s.turns
    pending: dict[str, Call] = {}
    spawns: dict[str, Subagent] = {}  # call_id -> subagent
    skills_by_call: dict[str, dict[str, Any]] = {}
    invocation_by_call: dict[str, Invocation] = {}
    explicit_final: str | None = None
    last_main_text: str | None = None
    # The subagent a main-thread spawn started, while that spawn is the main thread's last
    # message, call or spawn (None otherwise): the parent may have delegated its answer.
    main_last_spawn: Subagent | None = None
    metric_values: dict[str, Any] = {}
    steps = 0  # main-thread tool calls
    turn: Turn | None = None  # the last of `turns`

    for a in actions:
        all_actions.append(a)
        thread, k, d = a.thread, a.kind, a.data
        if thread == MAIN:
            main.append(a)
            sub = None
            on_main = True
        else:
            on_main = False
            sub = subagents.get(thread)
            if k != "subagent.spawned":
                if sub is None:
                    # A thread we never saw spawned (e.g. an imported sidecar): make it known.
                    sub = subagents[thread] = Subagent(thread=thread, agent=d.get("agent"), call_id=None, prompt=None)
                sub.actions.append(a)

        if k == "tool.call":
            tool = d.get("tool") or ""
            call_id = str(d.get("call_id") or f"seq-{a.seq}")
            value = d.get("input")
            if sub is not None:
                agent = sub.agent
            elif subagents:
                owner = subagents.get(thread)
                agent = owner.agent if owner else None
            else:
                agent = None
            # positional: Call(seq, thread, call_id, tool, input, output, is_error, result_seq, has_result, agent)
            call = Call(a.seq, thread, call_id, tool, value if isinstance(value, dict) else {"value": value}, None, None, None, False, agent)
            calls.append(call)
            pending[call_id] = call
            # positional: Invocation(kind, tool, thread, call_id, is_error, has_result, name, agent)
            inv = Invocation("mcp" if tool.startswith("mcp__") else "tool", tool, thread, call_id, None, False, None, agent)
            invocations.append(inv)
            invocation_by_call[call_id] = inv
            if sub is not None:
                sub.calls.append(call)
            if on_main:
                steps += 1
                if turn is None:
                    turn = Turn(prompt=s.prompt or "")
                    turns.append(turn)
                turn.steps += 1
                main_last_spawn = None
        elif k == "tool.result":
            cid = str(d.get("call_id"))
            is_error = d.get("is_error")
            is_error = None if is_error is None else bool(is_error)
            call = pending.get(cid)
            if call is not None:
                call.output, call.is_error, call.result_seq, call.has_result = d.get("output"), is_error, a.seq, True
            inv = invocation_by_call.get(cid)
            if inv is not None:
                inv.is_error, inv.has_result = is_error, True
            if spawns and cid in spawns:
                spawned = spawns[cid]
                spawned.result_received = True
                if spawned.output is None:
                    spawned.output = _text_of(d.get("output"))
            if skills_by_call and cid in skills_by_call:
                skills_by_call[cid]["result_ok"] = None if is_error is None else not is_error
        elif k == "message.assistant":
            if on_main:
                if d.get("text"):
                    last_main_text = d["text"]
                main_last_spawn = None
        elif k == "thinking":
            pass
        elif k == "message.user":
            if on_main:
                turn = Turn(prompt=d.get("text") or "")
                turns.append(turn)
        elif k == "session.started":
            s.scenario, s.harness, s.model = d.get("scenario"), d.get("harness"), d.get("model")
            s.prompt = d.get("prompt")
            s.work_dir = d.get("work_dir", s.work_dir)
        elif k == "subagent.spawned":
            spawned_thread = str(d.get("thread") or d.get("call_id") or f"agent-{a.seq}")
            spawned = subagents.get(spawned_thread) or Subagent(thread=spawned_thread, agent=None, call_id=None, prompt=None)
            spawned.agent = d.get("agent") or spawned.agent
            spawned.call_id = d.get("call_id") or spawned.call_id
            spawned.prompt = d.get("prompt") if d.get("prompt") is not None else spawned.prompt
            spawned.parent_thread = thread
            subagents[spawned_thread] = spawned
            for c in calls:  # calls recorded before the spawn row (imports) learn their agent
                if c.thread == spawned_thread and c.agent is None:
                    c.agent = spawned.agent
            if spawned.call_id:
                spawns[str(spawned.call_id)] = spawned
            inv = Invocation(
                kind="subagent",
                tool=d.get("tool") or "Task",
                thread=spawned_thread,
                call_id=spawned.call_id,
                name=spawned.agent,
                agent=spawned.agent,
            )
            invocations.append(inv)
            if spawned.call_id:
                invocation_by_call[str(spawned.call_id)] = inv
            if on_main:
                main_last_spawn = subagents.get(str(d.get("thread") or d.get("call_id")))
        elif k == "subagent.finished":
            target = subagents.get(str(d.get("thread") or thread))
            if target is not None:
                target.finished = True
                if d.get("output") is not None:
                    target.output = _text_of(d.get("output"))
        elif k == "skill.invoked":
            row = {"name": d.get("name"), "thread": thread, "call_id": d.get("call_id"), "result_ok": None}
            s.skills.append(row)
            inv = Invocation(
                kind="skill",
                tool=d.get("tool") or "Skill",
                thread=thread,
                call_id=d.get("call_id"),
                name=d.get("name"),
                agent=s.thread_agent(thread),
            )
            invocations.append(inv)
            if d.get("call_id"):
                skills_by_call[str(d["call_id"])] = row
                invocation_by_call[str(d["call_id"])] = inv
        elif k == "metrics":
            for f in METRIC_FIELDS:
                if d.get(f) is not None:
                    metric_values[f] = d[f]
        elif k == "final_output":
            explicit_final = d.get("text")
        elif k == "environment.expected":
            s.environment["expected"] = _merge(s.environment["expected"], d)
        elif k == "environment.reported":
            s.environment["reported"] = _merge(s.environment["reported"], d)
        elif k == "workspace.snapshot":
            s.snapshot = dict(d)
        elif k == "adapter.warning":
            s.warnings.append(dict(d))
        elif k == "error":
            s.errors.append(str(d.get("message")))
        elif k == "session.finished":
            s.finished = True
            s.status = d.get("status")
            s.exit_code = d.get("exit_code")
            s.timed_out = bool(d.get("timed_out"))
            if d.get("wall_ms") is not None:
                s.metrics.wall_ms = d["wall_ms"]

    for f, v in metric_values.items():
        setattr(s.metrics, f, v)
    s.metrics.step_count += steps
    if not turns and s.prompt is not None:
        turns.append(Turn(prompt=s.prompt))
    s.final_output = explicit_final if explicit_final is not None else last_main_text
    # Follow a delegation: the parent ended on a spawn whose result it never received.
    if main_last_spawn is not None and not main_last_spawn.result_received:
        answer = main_last_spawn.last_message()
        if answer:
            s.final_output = answer
    return s


def _merge(old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
    merged = dict(old or {})
    merged.update(new)
    return merged


def _text_of(value: Any) -> str | None:
    """Text of a tool output that may be a string or a list of content blocks."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = [b.get("text", "") if isinstance(b, dict) else str(b) for b in value]
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict) and "text" in value:
        return str(value["text"])
    return str(value)


# ---------------------------------------------------------------- check specs and results

STATUSES = ("PASS", "FAIL", "ERROR", "NA")


@dataclass(frozen=True)
class Where:
    """Where a piece of input came from, so an error can name the file and line."""

    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "<input>"


@dataclass(frozen=True)
class CheckSpec:
    """The YAML form of a check, as loaded (aliases already canonical)."""

    type: str
    value: Any = None
    args: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    threshold: float | None = None
    metric: str | None = None
    readout: bool = False
    checks: tuple["CheckSpec", ...] = ()
    inline: str | None = None
    transform: str | None = None
    where: Where = field(default_factory=Where, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Canonical form: only what was set, children recursively; its hash is the check's identity."""
        d: dict[str, Any] = {"type": self.type}
        if self.value is not None:
            d["value"] = self.value
        if self.args:
            d["args"] = self.args
        if self.config:
            d["config"] = self.config
        if self.weight != 1.0:
            d["weight"] = self.weight
        if self.threshold is not None:
            d["threshold"] = self.threshold
        if self.metric is not None:
            d["metric"] = self.metric
        if self.readout:
            d["readout"] = True
        if self.checks:
            d["checks"] = [c.to_dict() for c in self.checks]
        if self.inline is not None:
            d["inline"] = self.inline
        if self.transform is not None:
            d["transform"] = self.transform
        return d


_NO_EVIDENCE: Any = object()  # Result's evidence default: a new {} each time


@dataclass(frozen=True, init=False)
class Result:
    """A check's verdict on one session. `score` in [0, 1], higher is better."""

    passed: bool
    score: float
    reason: str = ""
    evidence: dict[str, Any] = field(default_factory=dict)
    status: str = ""

    def __init__(self, passed: bool, score: float, reason: str = "", evidence: dict[str, Any] = _NO_EVIDENCE, status: str = "") -> None:
        # The dataclass __init__ plus its normalization (score a float clamped to [0, 1], NaN
        # 0; status PASS/FAIL unless given), in one write of the instance dict instead of
        # seven frozen setattr calls: every check builds one per session.
        score = float(score)
        if score != score:  # NaN
            score = 0.0
        object.__setattr__(
            self,
            "__dict__",
            {
                "passed": passed,
                "score": 1.0 if score > 1.0 else (score if score > 0.0 else 0.0),
                "reason": reason,
                "evidence": {} if evidence is _NO_EVIDENCE else evidence,
                "status": status or ("PASS" if passed else "FAIL"),
            },
        )

    @classmethod
    def of(cls, passed: bool, reason: str = "", evidence: dict[str, Any] | None = None, score: float | None = None) -> "Result":
        return cls(bool(passed), (1.0 if passed else 0.0) if score is None else score, reason, evidence or {})

    @classmethod
    def error(cls, reason: str, evidence: dict[str, Any] | None = None) -> "Result":
        return cls(False, 0.0, reason, evidence or {}, "ERROR")

    @classmethod
    def not_applicable(cls, reason: str) -> "Result":
        return cls(False, 0.0, reason, {}, "NA")

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.passed, "score": self.score, "reason": self.reason, "evidence": self.evidence, "status": self.status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Result":
        return cls(bool(d.get("pass")), float(d.get("score") or 0.0), d.get("reason") or "", d.get("evidence") or {}, d.get("status") or "")
