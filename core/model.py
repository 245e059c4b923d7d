"""The log's model: actions, the `Session` projection, check specs and results.

Everything that reads a recorded session (grading, query, show, reports) reads the
one projection built here by `project(actions)` (`project_rows` when the rows come from the
store: the same fold, with Actions made only if a reader asks for them). Nothing else derives
state from actions, so a better projection improves every reader at once.
"""

from __future__ import annotations

import heapq
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, TypedDict, overload

MAIN = "main"

from benchtape.core import payloads  # the payload types, one per kind
from benchtape.core.canonical import OTHER, SUBAGENT, Canonical, of_call
from benchtape.core.payloads import ACTION_KINDS, METRIC_FIELDS, STAGED  # noqa: E402,F401 - the one registry of kinds, re-exported


@dataclass(slots=True, init=False)
class Action:
    """One recorded event. `seq` is assigned by the store; `at` is epoch seconds.

    `data` is its kind's payload (benchtape.core.payloads), a plain dict at run time. The
    constructor is overloaded per kind, so mypy checks the payload a build site writes against
    its kind's TypedDict; `payload(kind)` reads it back as that type. `Action.untyped` builds
    one whose kind is only known at run time (a stored row, a mock script's event): the store's
    writer still checks those (payloads.check_payloads).

    Treat it as immutable (history is never updated). It is a plain slots dataclass, not a
    frozen one: every reader builds a hundred per session, and a frozen class's __init__
    pays a setattr per field (measured 3× slower), while slots keep attribute reads fast.
    """

    kind: payloads.Kind
    data: dict[str, Any]
    thread: str
    at: float
    seq: int | None

    @overload
    def __init__(self, kind: Literal["session.started"], data: payloads.SessionStarted, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["environment.expected"], data: payloads.EnvironmentExpected, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["environment.reported"], data: payloads.EnvironmentReported, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["message.user"], data: payloads.UserMessage, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["message.assistant"], data: payloads.AssistantMessage, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["thinking"], data: payloads.Thinking, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["tool.call"], data: payloads.ToolCall, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["tool.result"], data: payloads.ToolResult, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["subagent.spawned"], data: payloads.SubagentSpawned, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["subagent.finished"], data: payloads.SubagentFinished, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["skill.invoked"], data: payloads.SkillInvoked, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["metrics"], data: payloads.Metrics, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["final_output"], data: payloads.FinalOutput, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["workspace.snapshot"], data: payloads.WorkspaceSnapshot, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["adapter.warning"], data: payloads.AdapterWarning, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["error"], data: payloads.Error, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["hook"], data: payloads.Hook, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["turn.finished"], data: payloads.TurnFinished, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["transcript"], data: payloads.Transcript, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["handover.snapshot"], data: payloads.HandoverSnapshot, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["terminal.screen"], data: payloads.TerminalScreen, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["cell.outcome"], data: payloads.CellOutcome, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    @overload
    def __init__(self, kind: Literal["session.finished"], data: payloads.SessionFinished, thread: str = ..., at: float = ..., seq: int | None = ...) -> None: ...
    def __init__(self, kind: Any, data: Any, thread: str = MAIN, at: float = 0.0, seq: int | None = None) -> None:
        self.kind = kind
        self.data = data
        self.thread = thread
        self.at = at
        self.seq = seq

    @staticmethod
    def untyped(kind: str, data: dict[str, Any], thread: str = MAIN, at: float = 0.0, seq: int | None = None) -> Action:
        """An action whose kind is a run-time value (a stored row, a copy, a mock script's
        event): unchecked by mypy, checked by the store's writer like any other."""
        action: Action = _UNTYPED(kind, data, thread, at, seq)
        return action

    @overload
    def payload(self, kind: Literal["session.started"]) -> payloads.SessionStarted: ...
    @overload
    def payload(self, kind: Literal["environment.expected"]) -> payloads.EnvironmentExpected: ...
    @overload
    def payload(self, kind: Literal["environment.reported"]) -> payloads.EnvironmentReported: ...
    @overload
    def payload(self, kind: Literal["message.user"]) -> payloads.UserMessage: ...
    @overload
    def payload(self, kind: Literal["message.assistant"]) -> payloads.AssistantMessage: ...
    @overload
    def payload(self, kind: Literal["thinking"]) -> payloads.Thinking: ...
    @overload
    def payload(self, kind: Literal["tool.call"]) -> payloads.ToolCall: ...
    @overload
    def payload(self, kind: Literal["tool.result"]) -> payloads.ToolResult: ...
    @overload
    def payload(self, kind: Literal["subagent.spawned"]) -> payloads.SubagentSpawned: ...
    @overload
    def payload(self, kind: Literal["subagent.finished"]) -> payloads.SubagentFinished: ...
    @overload
    def payload(self, kind: Literal["skill.invoked"]) -> payloads.SkillInvoked: ...
    @overload
    def payload(self, kind: Literal["metrics"]) -> payloads.Metrics: ...
    @overload
    def payload(self, kind: Literal["final_output"]) -> payloads.FinalOutput: ...
    @overload
    def payload(self, kind: Literal["workspace.snapshot"]) -> payloads.WorkspaceSnapshot: ...
    @overload
    def payload(self, kind: Literal["adapter.warning"]) -> payloads.AdapterWarning: ...
    @overload
    def payload(self, kind: Literal["error"]) -> payloads.Error: ...
    @overload
    def payload(self, kind: Literal["hook"]) -> payloads.Hook: ...
    @overload
    def payload(self, kind: Literal["turn.finished"]) -> payloads.TurnFinished: ...
    @overload
    def payload(self, kind: Literal["transcript"]) -> payloads.Transcript: ...
    @overload
    def payload(self, kind: Literal["handover.snapshot"]) -> payloads.HandoverSnapshot: ...
    @overload
    def payload(self, kind: Literal["terminal.screen"]) -> payloads.TerminalScreen: ...
    @overload
    def payload(self, kind: Literal["cell.outcome"]) -> payloads.CellOutcome: ...
    @overload
    def payload(self, kind: Literal["session.finished"]) -> payloads.SessionFinished: ...
    def payload(self, kind: str) -> Any:
        """The payload read as its kind's TypedDict; `kind` must be this action's kind (it says
        which type the reader expects, so mypy checks every field read against it)."""
        if kind != self.kind:
            raise payloads.PayloadError(f"a {self.kind} action read as a {kind} payload")
        return self.data

    def stamped(self, seq: int | None = None, at: float | None = None) -> Action:
        return replace(self, seq=self.seq if seq is None else seq, at=at if at is not None else (self.at or time.time()))

    def to_dict(self) -> dict[str, Any]:
        return {"seq": self.seq, "at": self.at, "thread": self.thread, "kind": self.kind, "data": self.data}


_UNTYPED: Any = Action  # the constructor without its overloads (a run-time kind)


def outcome_of(is_error: bool | None) -> str | None:
    """A result's outcome: `ok`, `error`, or None when the harness did not say."""
    if is_error is None:
        return None
    return "error" if is_error else "ok"


# An action as the store reads it: (seq, at, thread, kind, data), data decoded. `project_rows`
# folds these; `actions_of` makes them Actions. `data` is Any here: a fold reads it as its
# kind's payload type (a handler's `d: payloads.ToolCall`, a branch's typed local).
ActionRow = tuple[Any, float, str, str, Any]


def _canonical(self: Call | Invocation) -> Canonical:
    """A call's canonical name, made from (tool, input) the first time it is read and kept:
    most sessions are read without their canonical names ever being asked for."""
    source = self.canonical_of
    if source.__class__ is Canonical:
        return source
    self.canonical_of = found = of_call(*source)
    return found


@dataclass(slots=True, eq=False)
class Call:
    """A tool call paired with its result (the lossy `calls` view).

    `canonical` (what it did, in every harness's words: core/canonical.py) is read from its
    stored call when first asked (`canonical_of`: a Canonical, or that call's (payload,
    harness)): most checks never ask (tool-used by native name, step counts), and reading it
    for every call of every session (deriving it, for a call recorded before calls carried
    one) was over half of a regrade's projection: ~50 µs of a hundred-action session
    (benchmarks/regrade_query.py)."""

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
    canonical_of: Any = OTHER

    @property
    def canonical(self) -> Canonical:
        return _canonical(self)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Call:
            return NotImplemented
        o: Call = other
        return (self.seq, self.thread, self.call_id, self.tool, self.input, self.output, self.is_error, self.result_seq, self.has_result, self.agent, self.canonical) == (
            o.seq, o.thread, o.call_id, o.tool, o.input, o.output, o.is_error, o.result_seq, o.has_result, o.agent, o.canonical
        )

    @property
    def outcome(self) -> str | None:
        return outcome_of(self.is_error) if self.has_result else None

    @property
    def action(self) -> str:
        return self.canonical.action

    @property
    def paths(self) -> list[str]:
        return self.canonical.paths

    @property
    def command(self) -> str | None:
        return self.canonical.command

    def madbench(self) -> dict[str, Any]:
        """The call as madbench's `calls[]` has it (a grader's envelope, a report): `thread` ""
        for the main thread, else the subagent's name (its type), `agent_id` the subagent's
        own id; `result_ok` absent when the outcome is unknown (absent means unknown, never
        failure)."""
        main = self.thread == MAIN
        doc: dict[str, Any] = {"name": self.tool, "args": self.input, "tool_call_id": self.call_id, "thread": "" if main else (self.agent or self.thread)}
        if not main:
            doc["agent_id"] = self.thread
        if self.outcome is not None:
            doc["result_ok"] = self.outcome == "ok"
        return doc

    def to_dict(self) -> dict[str, Any]:
        is_error = self.is_error
        canonical = self.canonical
        action, files, command = canonical
        return {
            "seq": self.seq,
            "thread": self.thread,
            "agent": self.agent,
            "call_id": self.call_id,
            "tool": self.tool,
            "action": action,
            "paths": canonical.paths if files else [],
            "files": [{"path": p, "action": a} for p, a in files] if files else [],
            "command": command,
            "input": self.input,
            "output": self.output,
            "outcome": ("error" if is_error else "ok") if self.has_result and is_error is not None else None,  # self.outcome, inlined: a query builds thousands
            "is_error": is_error,
        }


@dataclass(slots=True, eq=False)
class Invocation:
    """Anything the agent invoked by name: a tool call, an MCP call, a skill, a subagent spawn.

    `session:tool-used` counts these (the authoritative actions), so a spawn and a skill
    count under the tool name that started them (`Task`, `Agent`, `Skill`). `canonical`: a
    tool or MCP call's canonical action (read when first asked, as Call's), a spawn's
    subagent, a skill's other.
    """

    kind: str  # tool | mcp | skill | subagent
    tool: str
    thread: str  # for a subagent spawn: the subagent's own thread
    call_id: str | None
    is_error: bool | None = None
    has_result: bool = False
    name: str | None = None  # skill name or subagent type
    agent: str | None = None  # agent type of `thread` when it is a subagent
    canonical_of: Any = OTHER  # as Call's

    @property
    def canonical(self) -> Canonical:
        return _canonical(self)

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not Invocation:
            return NotImplemented
        o: Invocation = other
        return (self.kind, self.tool, self.thread, self.call_id, self.is_error, self.has_result, self.name, self.agent, self.canonical) == (
            o.kind, o.tool, o.thread, o.call_id, o.is_error, o.has_result, o.name, o.agent, o.canonical
        )

    @property
    def outcome(self) -> str | None:
        return outcome_of(self.is_error) if self.has_result else None


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
            if a.kind == "message.assistant":
                text = a.payload("message.assistant").get("text")
                if text:
                    return text
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

    def madbench(self) -> dict[str, Any]:
        """The metrics under madbench's names (`latency` ms, `cost` USD, `prompt_tokens`,
        `output_tokens`; None where the harness reported none, never 0) beside benchtape's own,
        as a report and a grader's envelope carry them (a grader written for madbench reads
        `metrics.cost`)."""
        d = self.to_dict()
        return {"latency": d["latency_ms"], "cost": self.cost_usd, "prompt_tokens": self.tokens_in, "output_tokens": self.tokens_out, **d}


@dataclass
class Turn:
    prompt: str
    steps: int = 0


class Environment(TypedDict):
    """`Session.environment`: each half the merge of its kind's payloads, None when none was recorded."""

    expected: payloads.EnvironmentExpected | None
    reported: payloads.EnvironmentReported | None


def _no_environment() -> Environment:
    return {"expected": None, "reported": None}



VERIFIER_HARNESS = "verifier"  # a validation's recorded verifier run (tasks/validation_record.py): a log and evidence, never a workspace


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
    environment: Environment = field(default_factory=_no_environment)
    snapshot: payloads.WorkspaceSnapshot | None = None
    staged_snapshot: payloads.WorkspaceSnapshot | None = None  # the tree as staged, before the agent ran
    turns: list[Turn] = field(default_factory=list)
    warnings: list[payloads.AdapterWarning] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    work_dir: str | None = None
    finished: bool = False
    status: str | None = None  # ok | error | timeout | interrupted; None while unfinished
    exit_code: int | None = None
    timed_out: bool = False
    provider: str | None = None  # the `providers:` label this session ran as (None: the scenario has none)
    task: dict[str, Any] | None = None  # a task cell's task (session.started.task: kind, id, folder, fingerprint), folded so grading need not build the actions
    records_calls: bool = True  # False: the harness could not see the agent's tool calls (session.started.records_calls): checks of calls do not apply

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

    def with_output(self, text: str | None) -> Session:
        return replace(self, final_output=text)

    @property
    def started(self) -> payloads.SessionStarted:
        """The `session.started` payload (the first action's), {} for a session without one."""
        first = self.actions[0] if self.actions else None
        return first.payload("session.started") if first is not None and first.kind == "session.started" else {}

    @property
    def imported_from(self) -> list[str] | None:
        """The transcript files an imported session (or a reparse of one: both keep them) was
        read from; None for a session benchtape ran. An imported session never had a workspace
        benchtape saw, which is what its diff, export and exec checks have to say."""
        started = next((a for a in self.actions if a.kind == "session.started"), None)
        files = started.payload("session.started").get("imported_from") if started is not None else None
        return [str(f) for f in files] if isinstance(files, list) else None


# project() builds Calls and Invocations positionally (keywords cost ~40% more per call, and
# a session has a hundred); this keeps a reordered or added field from misfiling silently.
if tuple(Call.__dataclass_fields__) != ("seq", "thread", "call_id", "tool", "input", "output", "is_error", "result_seq", "has_result", "agent", "canonical_of") or tuple(
    Invocation.__dataclass_fields__
) != ("kind", "tool", "thread", "call_id", "is_error", "has_result", "name", "agent", "canonical_of"):
    raise TypeError("Call/Invocation fields changed: update the positional constructors in project()")


class _Fold:
    """The state of one projection while it folds a session's actions; one method per kind.

    Every reader pays for this fold once per session, so it keeps only what is cheap to know
    (the main-thread step count, the last main-thread text or spawn, the scalars) as plain
    attributes. The Calls, Invocations and Turns are folded by `_Structure` when a reader
    first asks for one of them: most checks and queries never do.
    """

    __slots__ = ("s", "spawns", "skills_by_call", "explicit_final", "last_main_text", "main_last_spawn", "metric_values", "steps")

    def __init__(self) -> None:
        self.s = Session()
        self.spawns: dict[str, Subagent] = {}  # call_id -> subagent
        self.skills_by_call: dict[str, dict[str, Any]] = {}
        self.explicit_final: str | None = None
        self.last_main_text: str | None = None
        # The subagent a main-thread spawn started, while that spawn is the main thread's last
        # message, call or spawn (None otherwise): the parent may have delegated its answer.
        self.main_last_spawn: Subagent | None = None
        self.metric_values: dict[str, Any] = {}
        self.steps = 0  # main-thread tool calls

    # ------------------------------------------------------------ one handler per kind
    def tool_result(self, seq: Any, thread: str, d: payloads.ToolResult, sub: Subagent | None) -> None:
        if not self.spawns and not self.skills_by_call:
            return
        cid = str(d.get("call_id"))
        is_error = d.get("is_error")
        is_error = None if is_error is None else bool(is_error)
        if self.spawns and cid in self.spawns:
            spawned = self.spawns[cid]
            spawned.result_received = True
            if spawned.output is None:
                spawned.output = text_of(d.get("output"))
        if self.skills_by_call and cid in self.skills_by_call:
            self.skills_by_call[cid]["result_ok"] = None if is_error is None else not is_error

    def message_assistant(self, seq: Any, thread: str, d: payloads.AssistantMessage, sub: Subagent | None) -> None:
        if thread == MAIN:
            if d.get("text"):
                self.last_main_text = d["text"]
            self.main_last_spawn = None

    def session_started(self, seq: Any, thread: str, d: payloads.SessionStarted, sub: Subagent | None) -> None:
        s = self.s
        s.scenario, s.harness, s.model = d.get("scenario"), d.get("harness"), d.get("model")
        s.prompt = d.get("prompt")
        s.work_dir = d.get("work_dir", s.work_dir)
        s.provider = d.get("provider")
        task = d.get("task")
        s.task = task if isinstance(task, dict) else None
        s.records_calls = d.get("records_calls") is not False

    def subagent_spawned(self, seq: Any, thread: str, d: payloads.SubagentSpawned, sub: Subagent | None) -> None:
        s = self.s
        subagents = s.subagents
        spawned_thread = str(d.get("thread") or d.get("call_id") or f"agent-{seq}")
        spawned = subagents.get(spawned_thread) or Subagent(thread=spawned_thread, agent=None, call_id=None, prompt=None)
        spawned.agent = d.get("agent") or spawned.agent
        spawned.call_id = d.get("call_id") or spawned.call_id
        spawned.prompt = d.get("prompt") if d.get("prompt") is not None else spawned.prompt
        spawned.parent_thread = thread
        subagents[spawned_thread] = spawned
        if spawned.call_id:
            self.spawns[str(spawned.call_id)] = spawned
        if thread == MAIN:
            self.main_last_spawn = subagents.get(str(d.get("thread") or d.get("call_id")))

    def subagent_finished(self, seq: Any, thread: str, d: payloads.SubagentFinished, sub: Subagent | None) -> None:
        target = self.s.subagents.get(str(d.get("thread") or thread))
        if target is not None:
            target.finished = True
            if d.get("output") is not None:
                target.output = text_of(d.get("output"))

    def skill_invoked(self, seq: Any, thread: str, d: payloads.SkillInvoked, sub: Subagent | None) -> None:
        row = {"name": d.get("name"), "thread": thread, "call_id": d.get("call_id"), "result_ok": None}
        self.s.skills.append(row)
        if d.get("call_id"):
            self.skills_by_call[str(d["call_id"])] = row

    def metrics(self, seq: Any, thread: str, d: payloads.Metrics, sub: Subagent | None) -> None:
        for f in METRIC_FIELDS:
            value = d.get(f)
            if value is not None:
                self.metric_values[f] = value

    def final_output(self, seq: Any, thread: str, d: payloads.FinalOutput, sub: Subagent | None) -> None:
        self.explicit_final = d.get("text")

    # A later record replaces an earlier one key by key (checks/environment.py: an adapter that
    # reads two surfaces writes one record carrying both).
    def environment_expected(self, seq: Any, thread: str, d: payloads.EnvironmentExpected, sub: Subagent | None) -> None:
        env = self.s.environment
        old = env["expected"]
        env["expected"] = d.copy() if old is None else {**old, **d}

    def environment_reported(self, seq: Any, thread: str, d: payloads.EnvironmentReported, sub: Subagent | None) -> None:
        env = self.s.environment
        old = env["reported"]
        env["reported"] = d.copy() if old is None else {**old, **d}

    def workspace_snapshot(self, seq: Any, thread: str, d: payloads.WorkspaceSnapshot, sub: Subagent | None) -> None:
        if d.get("stage") == STAGED:  # the tree before the agent ran: never graded as its work
            self.s.staged_snapshot = d.copy()
        else:
            self.s.snapshot = d.copy()

    def adapter_warning(self, seq: Any, thread: str, d: payloads.AdapterWarning, sub: Subagent | None) -> None:
        self.s.warnings.append(d.copy())

    def error(self, seq: Any, thread: str, d: payloads.Error, sub: Subagent | None) -> None:
        """An ending that repeats the error just said is one error, said twice by the tool:
        Claude's stream-json writes its synthetic "API Error" message and then a result
        carrying the same text, Codex its stream `error` and then `turn.failed`. Both stay in
        the history (the ending is what makes the session errored); the session counts one."""
        message = str(d.get("message"))
        errors = self.s.errors
        if d.get("source") in payloads.ENDED_IN_ERROR and errors and errors[-1] == message:
            return
        errors.append(message)

    def session_finished(self, seq: Any, thread: str, d: payloads.SessionFinished, sub: Subagent | None) -> None:
        s = self.s
        s.finished = True
        s.status = d.get("status")
        s.exit_code = d.get("exit_code")
        s.timed_out = bool(d.get("timed_out"))
        if d.get("wall_ms") is not None:
            s.metrics.wall_ms = d["wall_ms"]

    # ------------------------------------------------------------ the end of the stream
    def finish(self) -> Session:
        s = self.s
        for f, v in self.metric_values.items():
            setattr(s.metrics, f, v)
        s.metrics.step_count += self.steps
        s.final_output = self.explicit_final if self.explicit_final is not None else self.last_main_text
        # Follow a delegation: the parent ended on a spawn whose result it never received.
        spawn = self.main_last_spawn
        if spawn is not None and not spawn.result_received:
            answer = spawn.last_message()
            if answer:
                s.final_output = answer
        return s


# kind -> its handler; kinds that change no state (thinking, hook, turn.finished, cell.outcome, transcript, handover.snapshot)
# have none. A kind in the registry must be listed here, in _Structure.KINDS or in _NO_STATE.
# `tool.call` has none: all it changes eagerly is a main-thread call's step, which
# project_rows counts itself (the commonest kind, folded without a call).
_Handler = Callable[[_Fold, Any, str, Any, Subagent | None], None]  # (fold, seq, thread, its kind's payload, the thread's subagent)
_HANDLERS: dict[str, _Handler] = {
    "tool.result": _Fold.tool_result,
    "message.assistant": _Fold.message_assistant,
    "session.started": _Fold.session_started,
    "subagent.spawned": _Fold.subagent_spawned,
    "subagent.finished": _Fold.subagent_finished,
    "skill.invoked": _Fold.skill_invoked,
    "metrics": _Fold.metrics,
    "final_output": _Fold.final_output,
    "environment.expected": _Fold.environment_expected,
    "environment.reported": _Fold.environment_reported,
    "workspace.snapshot": _Fold.workspace_snapshot,
    "adapter.warning": _Fold.adapter_warning,
    "error": _Fold.error,
    "session.finished": _Fold.session_finished,
}
_NO_STATE = frozenset({"thinking", "hook", "turn.finished", "cell.outcome", "transcript", "handover.snapshot", "terminal.screen"})


class _Structure:
    """The lazy half of the projection: the main thread's actions, Calls (the session's and
    each subagent's), Invocations and Turns, each folded from the session's actions, in
    order, the first time a reader asks for it (most checks read one of them, many none),
    and shared by every copy of the Session.
    What the eager fold knew at each point (a thread's agent, a spawn's call id, the prompt)
    each fold tracks itself, so the result is what one eager fold built."""

    __slots__ = ("rows", "subagents", "_actions", "_calls", "_invocations", "_turns")

    KINDS = frozenset({"tool.call", "tool.result", "subagent.spawned", "skill.invoked", "message.user", "session.started"})

    def __init__(self, rows: list[ActionRow], subagents: dict[str, Subagent], actions: list[Action] | None) -> None:
        self.rows, self.subagents, self._actions = rows, subagents, actions
        self._calls: list[Call] | None = None
        self._invocations: list[Invocation] | None = None
        self._turns: list[Turn] | None = None

    def actions(self) -> list[Action]:
        """The session's Actions, built from its rows the first time a reader asks (a regrade
        whose checks read the folds never does: ~25 µs a session of a hundred actions)."""
        if self._actions is None:
            self._actions = actions_of(self.rows)
        return self._actions

    def main(self) -> list[Action]:
        """The main thread's actions (no reader of a regrade or query asks for them: a list
        the eager fold built of every session's actions for nobody). Session caches it."""
        return [a for a in self.actions() if a.thread == MAIN]

    def thread_actions(self, thread: str) -> list[Action]:
        """A subagent's actions: those on its thread but the spawn rows (as the fold files them;
        it files none under the main thread, whatever a spawn row calls its thread)."""
        if thread == MAIN:
            return []
        return [a for a in self.actions() if a.thread == thread and a.kind != "subagent.spawned"]

    def calls(self) -> list[Call]:
        if self._calls is None:
            self._calls = self._fold_calls()
        return self._calls

    def invocations(self) -> list[Invocation]:
        if self._invocations is None:
            self._invocations = self._fold_invocations()
        return self._invocations

    def turns(self) -> list[Turn]:
        if self._turns is None:
            self._turns = self._fold_turns()
        return self._turns

    def _fold_calls(self) -> list[Call]:
        calls: list[Call] = []
        pending: dict[str, Call] = {}
        by_thread: dict[str, list[Call]] = {}
        agents: dict[str, str | None] = {}  # thread -> its agent as known at this point (a subagent's)
        append = calls.append
        harness: str | None = None  # whose vocabulary the calls are in: a call recorded before calls carried their action is read in it
        for seq, _at, thread, kind, d in self.rows:
            if thread != MAIN and thread not in agents and kind != "subagent.spawned":
                agents[thread] = d.get("agent")  # a thread never seen spawned, as project() makes it known
            if kind == "tool.call":
                tc: payloads.ToolCall = d
                call_id = tc.get("call_id") or f"seq-{seq}"
                if call_id.__class__ is not str:
                    call_id = str(call_id)
                value = tc.get("input")
                # positional: Call(seq, thread, call_id, tool, input, output, is_error, result_seq, has_result, agent, canonical)
                call = Call(seq, thread, call_id, tc.get("tool") or "", value if isinstance(value, dict) else {"value": value}, None, None, None, False, agents.get(thread) if agents else None, (tc, harness))
                append(call)
                pending[call_id] = call
                if thread != MAIN:
                    by_thread.setdefault(thread, []).append(call)
            elif kind == "tool.result":
                tr: payloads.ToolResult = d
                cid = tr.get("call_id")
                found = pending.get(cid if cid.__class__ is str else str(cid))  # a str but for odd imports
                if found is not None:
                    is_error = tr.get("is_error")
                    found.output, found.is_error, found.result_seq, found.has_result = tr.get("output"), None if is_error is None else bool(is_error), seq, True
            elif kind == "session.started" and harness is None:
                harness = d.get("harness")
            elif kind == "subagent.spawned":
                sp: payloads.SubagentSpawned = d
                spawned_thread = str(sp.get("thread") or sp.get("call_id") or f"agent-{seq}")
                agent = agents[spawned_thread] = sp.get("agent") or agents.get(spawned_thread)
                for c in calls:  # calls recorded before the spawn row (imports) learn their agent
                    if c.thread == spawned_thread and c.agent is None:
                        c.agent = agent
        for thread, sub in self.subagents.items():
            if sub.__dict__.get("_calls") is _UNBUILT:
                sub.__dict__["_calls"] = by_thread.get(thread, [])
        return _in_time_order(calls, self.rows, ("tool.call",)) if agents else calls

    def _fold_invocations(self) -> list[Invocation]:
        invocations: list[Invocation] = []
        by_call: dict[str, Invocation] = {}
        agents: dict[str, str | None] = {}  # as in _fold_calls
        spawn_calls: dict[str, Any] = {}  # subagent thread -> its spawn's call id as known at this point
        append = invocations.append
        harness: str | None = None  # as in _fold_calls
        for seq, _at, thread, kind, d in self.rows:
            if thread != MAIN and thread not in agents and kind != "subagent.spawned":
                agents[thread] = d.get("agent")
            if kind == "tool.call":
                tc: payloads.ToolCall = d
                tool = tc.get("tool") or ""
                call_id = tc.get("call_id")
                if call_id.__class__ is not str or not call_id:  # an id is a non-empty string but for odd imports
                    call_id = str(call_id or f"seq-{seq}")
                # positional: Invocation(kind, tool, thread, call_id, is_error, has_result, name, agent)
                inv = Invocation("mcp" if tool[:5] == "mcp__" else "tool", tool, thread, call_id, None, False, None, agents.get(thread) if agents else None, (tc, harness))
                append(inv)
                by_call[call_id] = inv
            elif kind == "tool.result":
                tr: payloads.ToolResult = d
                cid = tr.get("call_id")
                found = by_call.get(cid if cid.__class__ is str else str(cid))  # a str but for odd imports
                if found is not None:
                    is_error = tr.get("is_error")
                    found.is_error, found.has_result = None if is_error is None else bool(is_error), True
            elif kind == "session.started" and harness is None:
                harness = d.get("harness")
            elif kind == "subagent.spawned":
                sp: payloads.SubagentSpawned = d
                spawned_thread = str(sp.get("thread") or sp.get("call_id") or f"agent-{seq}")
                agent = agents[spawned_thread] = sp.get("agent") or agents.get(spawned_thread)
                spawn_call = spawn_calls[spawned_thread] = sp.get("call_id") or spawn_calls.get(spawned_thread)
                inv = Invocation(kind="subagent", tool=sp.get("tool") or "Task", thread=spawned_thread, call_id=spawn_call, name=agent, agent=agent, canonical_of=SUBAGENT)
                invocations.append(inv)
                if spawn_call:
                    by_call[str(spawn_call)] = inv
            elif kind == "skill.invoked":
                sk: payloads.SkillInvoked = d
                inv = Invocation(kind="skill", tool=sk.get("tool") or "Skill", thread=thread, call_id=sk.get("call_id"), name=sk.get("name"), agent=agents.get(thread))
                invocations.append(inv)
                if sk.get("call_id"):
                    by_call[str(sk["call_id"])] = inv
        return _in_time_order(invocations, self.rows, INVOKING) if agents else invocations

    def _fold_turns(self) -> list[Turn]:
        turns: list[Turn] = []
        prompt: str | None = None
        turn: Turn | None = None
        for _seq, _at, thread, kind, d in self.rows:
            if kind == "session.started":  # on any thread, as the eager fold reads it
                started: payloads.SessionStarted = d
                prompt = started.get("prompt")
            elif thread != MAIN:
                continue
            elif kind == "tool.call":
                if turn is None:
                    turn = Turn(prompt=prompt or "")
                    turns.append(turn)
                turn.steps += 1
            elif kind == "message.user":
                said: payloads.UserMessage = d
                turn = Turn(prompt=said.get("text") or "")
                turns.append(turn)
        if not turns and prompt is not None:
            turns.append(Turn(prompt=prompt))
        return turns


if set(_HANDLERS) | _Structure.KINDS | _NO_STATE != ACTION_KINDS:
    raise TypeError(f"project(): kinds without a handler: {sorted(ACTION_KINDS - set(_HANDLERS) - _Structure.KINDS - _NO_STATE)}")

_UNBUILT: Any = object()  # a lazy part of a projected Session not folded yet

INVOKING = ("tool.call", "subagent.spawned", "skill.invoked")  # the kinds of row that each fold one invocation


def _in_time_order(items: list[Any], rows: list[ActionRow], kinds: tuple[str, ...]) -> list[Any]:
    """Items folded one per row of `kinds` (calls, invocations), merged across threads by when
    they happened: each thread keeps its own order, and the threads interleave by time.

    A Claude Code transcript of before 2.1 keeps a subagent's messages in a file of their own,
    which the import stores after the session file: its calls, made while the spawning call
    ran, came after every call of the main thread in seq order, and `tool-sequence` read
    `[Grep, Write]` as Write then Grep. A session recorded live (or with one thread) is already
    in time order and comes back as it is; so does one whose rows lack a time."""
    made = [(at, seq, thread) for seq, at, thread, kind, _ in rows if kind in kinds]
    if len(made) != len(items) or not all(at for at, _, _ in made):
        return items
    lanes: dict[str, list[tuple[float, int, int]]] = {}
    for i, (at, seq, thread) in enumerate(made):
        lanes.setdefault(thread, []).append((at, seq, i))
    if len(lanes) < 2:
        return items
    return [items[i] for _, _, i in heapq.merge(*lanes.values())]


def _lazy(name: str) -> property:
    """`Session.actions`/`.main`/`.calls`/`.invocations`/`.turns`: built on first read."""
    key = "_" + name

    def get(self: Session) -> Any:
        d = self.__dict__
        value = d[key]
        if value is _UNBUILT:
            value = d[key] = getattr(d["_structure"], name)()
        return value

    def set_(self: Session, value: Any) -> None:
        self.__dict__[key] = value

    return property(get, set_, doc=f"The session's {name} (folded on first read).")


def _subagent_actions(self: Subagent) -> list[Action]:
    d = self.__dict__
    if d["_actions"] is _UNBUILT:
        d["_actions"] = d["_structure"].thread_actions(self.thread)
    actions: list[Action] = d["_actions"]
    return actions


def _set_subagent_actions(self: Subagent, value: list[Action]) -> None:
    self.__dict__["_actions"] = value


def _subagent_calls(self: Subagent) -> list[Call]:
    d = self.__dict__
    if d["_calls"] is _UNBUILT:
        d["_structure"].calls()  # gives every subagent still unbuilt its `_calls`
    calls: list[Call] = d["_calls"]
    return calls


def _set_subagent_calls(self: Subagent, value: list[Call]) -> None:
    self.__dict__["_calls"] = value


Session.actions = _lazy("actions")  # type: ignore[assignment]
Session.main = _lazy("main")  # type: ignore[assignment]
Session.calls = _lazy("calls")  # type: ignore[assignment]
Session.invocations = _lazy("invocations")  # type: ignore[assignment]
Session.turns = _lazy("turns")  # type: ignore[assignment]
Subagent.actions = property(_subagent_actions, _set_subagent_actions, doc="The subagent's actions (built on first read).")  # type: ignore[assignment]
Subagent.calls = property(_subagent_calls, _set_subagent_calls, doc="The subagent's tool calls (folded on first read).")  # type: ignore[assignment]


def project(actions: Iterable[Action]) -> Session:
    """Fold a session's actions, in order, into a `Session` (event sourcing's `apply`)."""
    listed = list(actions)
    return project_rows([(a.seq, a.at, a.thread, a.kind, a.data) for a in listed], listed)


def actions_of(rows: Iterable[ActionRow]) -> list[Action]:
    """Rows as Actions: the one place a stored row becomes an Action."""
    return [_UNTYPED(kind, data, thread, at, seq) for seq, at, thread, kind, data in rows]


def project_rows(rows: list[ActionRow], actions: list[Action] | None = None) -> Session:
    """`project` over the rows as the store reads them, (seq, at, thread, kind, data): the one
    fold. A reader of thousands of sessions builds no Action unless something reads
    `Session.actions` (or a subagent's): most checks and queries read only the folds.
    `actions`, when the caller has them, are the rows' Actions, kept as they are."""
    fold = _Fold()
    s = fold.s
    subagents = s.subagents
    handlers = _HANDLERS
    steps = 0
    for seq, _at, thread, kind, d in rows:
        if thread == MAIN:
            if kind == "tool.call":  # the commonest kind, and all a call changes eagerly (it has no handler)
                steps += 1
                fold.main_last_spawn = None
                continue
            if kind == "tool.result":  # the next commonest: it changes something only once a spawn or skill is known
                if fold.spawns or fold.skills_by_call:
                    fold.tool_result(seq, thread, d, None)
                continue
            sub = None
        else:
            sub = subagents.get(thread)
            if sub is None and kind != "subagent.spawned":
                # A thread we never saw spawned (e.g. an imported sidecar): make it known.
                sub = subagents[thread] = Subagent(thread=thread, agent=d.get("agent"), call_id=None, prompt=None)
        handler = handlers.get(kind)
        if handler is not None:
            handler(fold, seq, thread, d, sub)
    fold.steps += steps
    structure = _Structure(rows, subagents, actions)
    d = s.__dict__
    d["_structure"], d["_actions"], d["_main"], d["_calls"], d["_invocations"], d["_turns"] = structure, _UNBUILT, _UNBUILT, _UNBUILT, _UNBUILT, _UNBUILT
    for sub in subagents.values():
        sub.__dict__["_structure"], sub.__dict__["_actions"], sub.__dict__["_calls"] = structure, _UNBUILT, _UNBUILT
    return fold.finish()


# The kinds that are most of a session's rows: its calls, their results, its thinking. The eager
# fold reads them only to count steps and to follow a delegation to a subagent, so a session
# projected without them (`Store.load_session(skip=BULK_KINDS)`) has its prompt, status, task,
# environment, snapshot and every other eagerly folded part as the whole session has them, and
# its final output too unless `output_complete` says otherwise; never its calls, invocations,
# turns, actions, skills' results or step count. A reader of the output alone (an output
# check's regrade) skips ~nine rows in ten.
BULK_KINDS: tuple[str, ...] = ("tool.call", "tool.result", "thinking")


def output_complete(partial: Session) -> bool:
    """Whether a session projected without BULK_KINDS has the final output the whole session
    has: yes unless a subagent was spawned (the parent may have ended on a spawn whose answer is
    read through the calls' results; `_Fold.finish`)."""
    return not partial.subagents


def text_of(value: Any) -> str | None:
    """The text of a message or tool output that may be a string, a content block, or a list of
    content blocks (text blocks and bare strings; images and other blocks carry no text).
    The one definition: adapters, the projection and reports all read text through it."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, list):
        parts = []
        for block in value:
            if isinstance(block, dict):
                if isinstance(block.get("text"), str):
                    parts.append(block["text"])
            elif isinstance(block, str):
                parts.append(block)
        return "\n".join(p for p in parts if p)
    if isinstance(value, dict) and isinstance(value.get("text"), str):
        text: str = value["text"]
        return text
    return str(value)


# ---------------------------------------------------------------- check specs and results









