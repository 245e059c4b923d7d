"""Every action kind benchtape records, each with its typed payload: the log's vocabulary.

An adapter writes these payloads, the store keeps them as JSON, the projection folds them
(`benchtape.core.model.project`, one handler per kind) and DESIGN.md lists them. A new kind is
added here first; a payload field not listed here is allowed (adapters keep what the
harness said, e.g. `raw_ref`, `source`) but nothing benchtape reads may depend on it.
"""

from __future__ import annotations

from typing import Any, TypedDict


class SessionStarted(TypedDict, total=False):
    scenario: str
    harness: str
    model: str | None
    prompt: str
    attempt: int
    work_dir: str
    sandbox: str  # the level: none, workspace, home, container
    container: dict[str, Any]  # image, user, env, resources (container level)
    model_endpoint: dict[str, Any]  # a scripted model's endpoint and script hash
    binary: dict[str, Any]  # the harness binary's path and version


class EnvironmentPayload(TypedDict, total=False):
    """`environment.expected` (what benchtape staged) and `environment.reported` (what the tool said it loaded)."""

    sandbox: str
    plugins: list[dict[str, Any]]
    skills: list[Any]
    slash_commands: list[Any]
    agents: list[Any]
    mcp_servers: list[dict[str, Any]]
    plugin_errors: list[dict[str, Any]]


class Text(TypedDict, total=False):
    """`message.user`, `message.assistant`, `thinking`, `final_output`."""

    text: str


class ToolCall(TypedDict, total=False):
    call_id: str
    tool: str
    input: dict[str, Any]


class ToolResult(TypedDict, total=False):
    call_id: str
    output: Any
    is_error: bool | None  # None: the harness did not say (unknown, never "ok")


class SubagentSpawned(TypedDict, total=False):
    thread: str
    call_id: str
    agent: str | None
    prompt: str | None
    tool: str  # the tool that spawned it (Task, Agent)


class SubagentFinished(TypedDict, total=False):
    thread: str
    output: Any


class SkillInvoked(TypedDict, total=False):
    name: str
    call_id: str
    tool: str


class Metrics(TypedDict, total=False):
    tokens_in: int
    tokens_out: int
    cache_read_tokens: int
    cache_write_tokens: int
    cost_usd: float
    duration_ms: float
    turns: int


STAGED = "staged"  # WorkspaceSnapshot.stage of the tree before the agent ran (what its changes are diffed against)


class WorkspaceSnapshot(TypedDict, total=False):
    sha256: str
    files: int
    bytes: int
    links_out: list[str]
    stage: str  # "staged": the tree as staged, before the agent ran (absent: the final workspace)
    links_out_count: int
    skipped: int  # devices, FIFOs, sockets, and files swapped for something else while being read
    redacted: list[str]  # files stored with a known secret replaced by [REDACTED]
    redacted_count: int


class AdapterWarning(TypedDict, total=False):
    what: str
    line: str
    source: str


class Error(TypedDict, total=False):
    message: str
    stderr_tail: str
    cause: str  # set when it is not the agent's doing: infrastructure, sandbox, engine, staging (benchtape.replay.outcomes)


class Hook(TypedDict, total=False):
    event: str
    name: str
    output: Any


class TurnFinished(TypedDict, total=False):
    turn: int
    reason: str  # stop_hook, turn_duration, screen, permission_prompt, …


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


class HandoverSnapshot(TypedDict, total=False):
    """A workflow step's handover folder (notes for the next step, outside the graded tree) after the step."""

    step: str
    sha256: str
    files: int
    bytes: int


class CellOutcome(TypedDict, total=False):
    """Read only: stores from before migration 16 appended a grading's outcome to the session's
    stream; outcomes now live with their grading (the store's `outcomes`), never written here."""

    outcome: str  # passed, failed, no_changes, guard_violation, patch_apply_failed, timeout, adapter_error, infrastructure_error
    reason: str


class SessionFinished(TypedDict, total=False):
    status: str  # ok, error, timeout, interrupted, truncated
    exit_code: int | None
    timed_out: bool
    wall_ms: float | None  # None when a recovery cannot tell
    truncated: bool  # some output was over the limits (core/limits.py)
    recovered: bool  # finished by `benchtape recover` after benchtape was killed


KINDS: dict[str, type] = {
    "session.started": SessionStarted,
    "environment.expected": EnvironmentPayload,
    "environment.reported": EnvironmentPayload,
    "message.user": Text,
    "message.assistant": Text,
    "thinking": Text,
    "tool.call": ToolCall,
    "tool.result": ToolResult,
    "subagent.spawned": SubagentSpawned,
    "subagent.finished": SubagentFinished,
    "skill.invoked": SkillInvoked,
    "metrics": Metrics,
    "final_output": Text,
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

# Metric fields a harness may report; absent means unknown, never zero.
METRIC_FIELDS = tuple(Metrics.__annotations__)
