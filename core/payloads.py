"""Every action kind benchtape records, each with its typed payload: the log's vocabulary.

One TypedDict per kind, named in `KINDS`; `Kind` is the Literal of their names. An action is
built with its kind's payload (`Action("tool.call", {"call_id": ..., ...})`: mypy checks the
fields against `ToolCall` through Action's overloads) and read through it
(`action.payload("tool.call")`, or a projection handler whose `d` is annotated `ToolCall`), so
a field renamed here is a type error where it is written and where it is read. DESIGN.md
(docs/architecture.md) lists the kinds and their fields; tests/recorder/test_payloads.py holds
the two lists to each other.

At run time a payload is the plain dict it always was (nothing is converted, the stored
JSON is unchanged), and the store's writer checks it: `check_payloads` refuses an unknown
kind, a payload that is not a dict, or a declared field whose value has the wrong JSON type.
A field not declared here is allowed (adapters keep what the harness said beside what
benchtape reads) but nothing benchtape reads may depend on it: declare it first.

A field typed `Any` is one an adapter copies from the harness as the harness wrote it
(a hook's name, a plugin error): the writer takes any JSON value there. Everything benchtape
reads is typed, and every adapter writes it in that type whatever the harness printed.
"""

from __future__ import annotations

import types
from collections.abc import Iterable
from typing import (
    Any,
    Literal,
    Protocol,
    TypedDict,
    Union,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
)

from benchtape.core.errors import closest, type_name


class SessionStarted(TypedDict, total=False):
    """The session's facts, first in its stream: what ran, where, with what."""

    scenario: str
    harness: str
    model: str | None
    prompt: str | None  # None: an import whose transcript held no user prompt
    attempt: int
    work_dir: str | None
    sandbox: str  # the level: none, workspace, home, container
    container: dict[str, Any]  # image, user, env, resources (container level)
    workspace_mount: str  # how the container mounts the workspace: "nosuid,nodev", or "plain (why)"
    model_endpoint: dict[str, Any]  # a scripted model's endpoint and script hash
    binary: dict[str, Any]  # the harness binary's path and version
    cell: dict[str, Any]  # an evaluation's cell: id, label, task, attempt, versions, params, baseline, pre, handover
    interactive: bool  # driven through its terminal UI (recorder/interactive.py)
    follow_ups: list[str]  # an interactive session's later turns
    format: str  # the native format its actions are derived from (imports, interactive sessions): what `reparse` reads
    imported_from: list[str]  # the transcript files an import read
    meta: dict[str, Any]  # an import's facts from the transcript (its session id, cwd, version, title)
    reparsed_from: str  # the session a `reparse` re-derived this one from
    provider: str  # the `providers:` label this session ran as (a multi-provider scenario's fan-out)
    task: dict[str, Any]  # a task cell's task (not a bench scenario): kind ("history" | "harbor"), id, folder (absolute), fingerprint as recorded
    validates: str  # a task validation's session (harness `verifier`): the task id whose phase it ran
    process_fence: dict[str, Any]  # whether the agent ran in a PID namespace of its own, or why not (sandbox/pidfence.py)
    phase: str  # a task validation's phase: base or reference (tasks/validation_record.py)
    where: str | None  # where a task validation's verifier ran (the sandbox's own words)
    records_calls: bool  # False: the harness could not see the agent's tool calls (a `command` harness without a transcript); checks of calls do not apply


class EnvironmentExpected(TypedDict, total=False):
    """What benchtape staged: its own claim, never the evidence (checks/environment.py)."""

    sandbox: str
    testdata: str | None
    repo: dict[str, Any] | None  # the scenario's `repo:` (url, ref)
    cwd: str | None
    plugins: list[dict[str, Any]]  # {id, path, via?}
    agent_env: Any  # harness_config.agent_env as the bench wrote it
    system_prompt: Any  # harness_config.system_prompt as the bench wrote it
    project_environment: dict[str, Any]  # a history task's cell: the project environment its agent had (given, language, manager, key, folder, variables), or why none (envs/agent_env.py)


class EnvironmentReported(TypedDict, total=False):
    """What the tool said it loaded: the evidence every `environment:*` check reads (the
    shape is spelled out in checks/environment.py's docstring)."""

    source: str  # "system:init" or "plugin-cli": the surface this record came from
    sources: list[str]  # every surface folded into the record
    tools: list[Any]
    mcp_servers: list[dict[str, Any]]  # {name, status?}
    plugins: list[dict[str, Any]]  # {id or name, path, version, enabled, errors, the `plugin details` breakdown}
    skills: list[Any]
    agents: list[Any]
    commands: list[Any]  # init.slash_commands, renamed
    model: Any  # init.model, as the tool said it
    permission_mode: Any  # init.permissionMode
    version: Any  # init.claude_code_version
    cwd: Any
    plugin_errors: Any  # init.plugin_errors, as the tool said it


class UserMessage(TypedDict, total=False):
    text: str
    attachments: list[Any]  # [{media_type, name, bytes, sha256}] of the images sent with it (recorder/runner.py): read by session:image-sent


class AssistantMessage(TypedDict, total=False):
    text: str
    plan: bool  # codex exec: a plan item, not an answer
    synthetic: bool  # claude: a message Claude Code wrote itself (model <synthetic>), not the model
    phase: Any  # codex rollout: the message's phase, as the rollout wrote it


class Thinking(TypedDict, total=False):
    text: str
    redacted: bool  # claude: a redacted_thinking block (no text)
    encrypted: bool  # codex: reasoning carried only encrypted (no text)


class FinalOutput(TypedDict, total=False):
    text: str


class ToolCall(TypedDict, total=False):
    call_id: str
    tool: str
    input: Any  # an object, but as the harness wrote it: the projection reads any other value as {"value": it}
    server: bool  # claude: a server-side tool (server_tool_use: web search, run by the API)
    action: str  # the canonical action (core/canonical.py): read, write, edit, shell, search, web, subagent, plan, mcp:<server>/<tool>, other
    files: list[dict[str, Any]]  # the files it touched: [{path, action}] (read, write, edit, search), in call order
    command: str  # the shell command it ran, as the harness wrote it


class ToolResult(TypedDict, total=False):
    call_id: str
    output: Any
    is_error: bool | None  # None: the harness did not say (unknown, never "ok")
    exit_code: Any  # a command's exit code, as the harness reported it (codex)
    denied: bool  # claude: the permission system refused the call
    from_transcript: bool  # a later result of the same call, read from the harness's own record where its stream showed less (gemini-cli)


class SubagentSpawned(TypedDict, total=False):
    thread: str
    call_id: str
    agent: str | None  # the subagent's type
    prompt: str | None
    tool: str  # the tool that spawned it (Task, Agent, spawn_agent)
    description: Any  # claude: the Task's description, as the model wrote it


class SubagentFinished(TypedDict, total=False):
    thread: str
    output: Any  # text or content blocks (the projection reads it through text_of)
    status: Any  # how the harness said it ended (completed, errored, …), as it said it
    agent_id: str  # claude: the subagent's agentId
    task_id: Any  # claude stream: the task notification's ids and summary, as it wrote them
    summary: Any


class SkillInvoked(TypedDict, total=False):
    name: str | None  # None: the Skill call named no skill
    call_id: str
    tool: str
    input: Any  # the Skill call's input, as the model wrote it


class Metrics(TypedDict, total=False):
    """Cumulative session totals; a field nobody reported is left out (unknown, never zero)."""

    tokens_in: int
    tokens_out: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    duration_ms: float
    turns: int


STAGED = "staged"  # WorkspaceSnapshot.stage of the tree before the agent ran (what its changes are diffed against)


class TreeFacts(TypedDict, total=False):
    """What `benchtape.sandbox.snapshot.snapshot` says of a tree it stored."""

    files: int
    bytes: int
    links_out: list[str]  # symlinks pointing out of the tree, left out (the first 100)
    links_out_count: int
    skipped: int  # devices, FIFOs, sockets, and files swapped for something else while being read
    redacted: list[str]  # files stored with a known secret replaced by [REDACTED] (the first 100)
    redacted_count: int
    left_out: dict[str, Any]  # the harness's bookkeeping left out: {patterns, entries}


class WorkspaceSnapshot(TreeFacts, total=False):
    sha256: str  # the blob
    stage: str  # "staged": the tree as staged, before the agent ran (absent: the final workspace)
    own_state: list[str]  # the tool's own state files in the tree, which the diff names


class HandoverSnapshot(TreeFacts, total=False):
    """A workflow step's handover folder (notes for the next step, outside the graded tree) after the step."""

    step: str
    sha256: str


class AdapterWarning(TypedDict, total=False):
    what: str
    line: str
    source: str  # who noticed when it is not the adapter: recorder, sandbox, setup, terminal


# The `source`s of an `error` that is the tool's own word that the whole session ended in error
# (Claude's `result` with is_error, Codex's `turn.failed`): such a session's status is `error`.
ENDED_IN_ERROR = frozenset({"result", "turn.failed"})


class Error(TypedDict, total=False):
    message: str
    stderr_tail: str
    cause: str  # set when it is not the agent's doing: infrastructure, sandbox, engine, staging (benchtape.replay.outcomes)
    source: str  # where the harness said it: api, result, rate_limit, stream, item, event, turn.failed, turn_aborted, scripted-model
    reason: str  # why benchtape ended the session: environment_require, permission_prompt
    text: str  # claude: the interrupt notice as the user turn carried it
    interrupted: bool  # the user (or a Ctrl-C) interrupted the turn
    subtype: Any  # claude's result subtype (error_max_turns, …), as it wrote it
    errors: Any  # claude's result errors, as it wrote them
    rate_limit: dict[str, Any]  # claude's rate_limit_info
    screen: str  # the terminal's screen when the UI would not exit


class Hook(TypedDict, total=False):
    """A hook the harness ran (as it reported it: every field but `event` may be absent), or a
    workflow step's `post` command (event "post", its CommandRun as output)."""

    event: Any
    name: Any
    command: Any
    phase: Any  # claude stream: the system event's subtype (hook_response, …)
    outcome: Any
    exit_code: Any
    output: Any
    call_id: str  # the tool call it ran for
    hooks: Any  # claude's stop_hook_summary: hookInfos, hookErrors, preventedContinuation
    errors: Any
    prevented_continuation: Any


class TurnFinished(TypedDict, total=False):
    turn: int
    reason: str  # stop_hook, turn_duration, screen, permission_prompt, …
    duration_ms: float
    last_assistant_message: Any  # what the Stop hook said the turn ended on, as it said it


class TerminalScreen(TypedDict, total=False):
    """The screen of an interactive session's terminal, as text: evidence of how it ended."""

    why: str  # exit, permission prompt, exited, timeout, interrupted, never ready
    text: str
    columns: int
    rows: int


class Transcript(TypedDict, total=False):
    """The harness's own on-disk record (Claude's transcript, Codex's rollout), stored as a blob."""

    path: str  # relative to the agent's HOME
    sha256: str
    bytes: int
    lines: int


class CellOutcome(TypedDict, total=False):
    """Read only: stores from before migration 16 appended a grading's outcome to the session's
    stream; outcomes now live with their grading (the store's `outcomes`), never written here."""

    outcome: str  # passed, failed, no_changes, guard_violation, patch_apply_failed, timeout, adapter_error, infrastructure_error
    reason: str
    cell_id: str | None
    grading_id: str | None  # None: the attempt did not execute, so nothing was graded
    source: str  # the grading's source (live, regrade, control, …)
    diff: dict[str, Any] | None  # the agent's change, summarised
    cost_usd: float | None  # None unless every step's cost is known
    steps: list[Any]  # one entry per workflow step (its session, cost, outcome)


class SessionFinished(TypedDict, total=False):
    status: str  # ok, error, timeout, interrupted
    exit_code: int | None
    timed_out: bool
    wall_ms: float | None  # None when a recovery or an import cannot tell
    truncated: bool  # some output was over the limits (core/limits.py)
    recovered: bool  # finished by `benchtape recover` after benchtape was killed
    imported: bool  # an import's closing bookend (the transcript said nothing of an exit)


Kind = Literal[
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
    "turn.finished",
    "transcript",
    "handover.snapshot",
    "terminal.screen",
    "cell.outcome",
    "session.finished",
]

KINDS: dict[str, type] = {
    "session.started": SessionStarted,
    "environment.expected": EnvironmentExpected,
    "environment.reported": EnvironmentReported,
    "message.user": UserMessage,
    "message.assistant": AssistantMessage,
    "thinking": Thinking,
    "tool.call": ToolCall,
    "tool.result": ToolResult,
    "subagent.spawned": SubagentSpawned,
    "subagent.finished": SubagentFinished,
    "skill.invoked": SkillInvoked,
    "metrics": Metrics,
    "final_output": FinalOutput,
    "workspace.snapshot": WorkspaceSnapshot,
    "adapter.warning": AdapterWarning,
    "error": Error,
    "hook": Hook,
    "turn.finished": TurnFinished,
    "transcript": Transcript,
    "handover.snapshot": HandoverSnapshot,
    "terminal.screen": TerminalScreen,
    "cell.outcome": CellOutcome,
    "session.finished": SessionFinished,
}

ACTION_KINDS = frozenset(KINDS)

if ACTION_KINDS != frozenset(get_args(Kind)):
    raise TypeError(f"Kind and KINDS disagree: {sorted(ACTION_KINDS ^ frozenset(get_args(Kind)))}")

# Metric fields a harness may report; absent means unknown, never zero.
METRIC_FIELDS = tuple(Metrics.__annotations__)


# ---------------------------------------------------------------- the writer's check


class PayloadError(TypeError):
    """An action whose payload does not match its kind: a bug in whatever built it (the
    store's writer refuses it, and writes nothing of its batch)."""


_JSON_NAMES = {str: "a string", int: "a number", float: "a number", bool: "true or false", type(None): "null", list: "a list", tuple: "a list", dict: "an object"}


def _json_types(hint: Any, where: str) -> frozenset[type] | None:
    """The Python types a field's JSON value may have (orjson's decoding: str, int, float,
    bool, None, list, dict; a tuple is written as a list), or None for any value."""
    if hint is Any or hint is object:
        return None
    origin = get_origin(hint)
    if origin is Union or origin is types.UnionType:
        parts = [_json_types(arg, where) for arg in get_args(hint)]
        if any(part is None for part in parts):
            return None
        return frozenset().union(*parts)  # type: ignore[arg-type]
    if origin is Literal:
        return frozenset().union(*(_json_types(type(v), where) or () for v in get_args(hint)))
    if hint is type(None):
        return frozenset({type(None)})
    if hint is bool:
        return frozenset({bool})
    if hint is int or hint is float:  # one JSON number: 3 and 3.0 are the same value to a reader
        return frozenset({int, float})
    if hint is str:
        return frozenset({str})
    if hint in (list, tuple) or origin in (list, tuple):
        return frozenset({list, tuple})
    if hint is dict or origin is dict or is_typeddict(hint):
        return frozenset({dict})
    raise TypeError(f"{where}: {hint!r} has no JSON type; use str, int, float, bool, list, dict, a TypedDict, None or Any")


def _table() -> dict[str, dict[str, frozenset[type]]]:
    """kind -> {declared field -> the types its value may have}; a field typed Any is left out."""
    out: dict[str, dict[str, frozenset[type]]] = {}
    for kind, payload in KINDS.items():
        fields: dict[str, frozenset[type]] = {}
        for name, hint in get_type_hints(payload).items():
            allowed = _json_types(hint, f"{payload.__name__}.{name}")
            if allowed is not None:
                fields[name] = allowed
        out[kind] = fields
    return out


_FIELDS = _table()  # derived once, at import: the check below is a dict lookup and a set probe per field


class _Action(Protocol):
    @property
    def kind(self) -> str: ...
    @property
    def data(self) -> Any: ...


def check_payloads(actions: Iterable[_Action]) -> None:
    """Refuse (PayloadError) the first action of `actions` whose kind is unknown, whose data is
    not a dict, or one of whose declared fields holds a value of the wrong JSON type.

    The store's writer calls it on every batch it encodes, so it is on recording's hot path:
    a field's exact type is probed in a frozenset (int for an int, str for a str), and only a
    miss (a subclass, a bool where a number is declared, a wrong type) takes the slow path."""
    table = _FIELDS
    for action in actions:
        data = action.data
        fields = table.get(action.kind)
        if fields is None or type(data) is not dict:
            _refuse_action(action.kind, data)
            continue
        for key, value in data.items():
            allowed = fields.get(key)
            if allowed is not None and type(value) not in allowed:
                _refuse_field(action.kind, key, value, allowed)


def check_payload(kind: str, data: Any) -> None:
    """One action's payload, as `check_payloads` checks each (e.g. a mock script's event, so
    the mock adapter can turn a bad one into a warning instead of a refused write)."""
    fields = _FIELDS.get(kind)
    if fields is None or type(data) is not dict:
        _refuse_action(kind, data)
        return
    for key, value in data.items():
        allowed = fields.get(key)
        if allowed is not None and type(value) not in allowed:
            _refuse_field(kind, key, value, allowed)


def _refuse_action(kind: str, data: Any) -> None:
    if kind not in _FIELDS:
        near = closest(str(kind), _FIELDS)
        hint = f" (did you mean {near!r}?)" if near else ""
        raise PayloadError(f"unknown action kind {kind!r}{hint}: every kind is declared in benchtape.core.payloads.KINDS")
    if not isinstance(data, dict):
        raise PayloadError(f"a {kind} action's data is {type_name(data)}, not an object: a payload is a dict ({KINDS[kind].__name__})")


def _refuse_field(kind: str, key: str, value: Any, allowed: frozenset[type]) -> None:
    """The slow path of a field whose exact type missed: a subclass of an allowed type passes
    (a StrEnum for a str, an OrderedDict for an object), a bool never passes for a number."""
    if isinstance(value, bool):
        if bool in allowed:
            return
    elif isinstance(value, tuple(allowed)):
        return
    wanted = " or ".join(dict.fromkeys(_JSON_NAMES[t] for t in sorted(allowed, key=lambda t: t.__name__)))
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:57] + "..."
    raise PayloadError(f"a {kind} action's {key!r} is {type_name(value)} ({shown}), but {KINDS[kind].__name__} declares it {wanted} (benchtape.core.payloads)")
