"""A stored session's model side as a script, so it can be re-driven offline.

What the model said and asked for is in the session's actions: its texts, its
thinking, its tool calls with their inputs, its skills and subagents (each subagent's
own thread becomes that subagent's steps). Model turns are rebuilt from the order:
calls made before any of their results arrived were one turn (parallel calls); a new
user message after the model spoke ends the model's turn there (`end_turn`). Tool
results are not in the script: replaying runs the tools for real.

Calls Codex reports as items are turned back into the calls a script makes
(`command_execution` -> Bash, `exec_command` -> Bash, an apply_patch patch stays a
patch). A `file_change` from `codex exec --json` names the files but not the patch, so
it cannot be replayed; it is kept as a call of that name and listed in `notes`.
Per-turn usage is not in the projection: the session's token totals become the
script's `metrics:`, which the server shares over the turns, so totals replay exactly.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from typing import Any

from benchtape.core.model import MAIN, Action, Session

LC = re.compile(r"^/bin/(?:ba)?sh -lc (.+)$", re.S)
CALL_KINDS = ("tool.call", "skill.invoked", "subagent.spawned")
TOKEN_FIELDS = ("tokens_in", "tokens_out", "cache_read_tokens", "cache_write_tokens")


@dataclass
class Extracted:
    script: dict[str, Any]
    notes: list[str] = field(default_factory=list)  # what could not be turned into a replayable step


def script_of(session: Session) -> Extracted:
    notes: list[str] = []
    steps = _steps(session, MAIN, session.main, notes)
    script: dict[str, Any] = {"steps": steps} if steps else {"noop": True}
    totals = {f: getattr(session.metrics, f) for f in TOKEN_FIELDS if getattr(session.metrics, f)}
    if steps and totals:
        script["metrics"] = totals
    return Extracted(script, notes)


def _steps(session: Session, thread: str, actions: list[Action], notes: list[str]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    pending: list[dict[str, Any]] = []  # the calls of the turn being read, until a result arrives
    spoke = False  # the model said something since the last user message

    def flush() -> None:
        if pending:
            steps.append(pending[0] if len(pending) == 1 else {"parallel": list(pending)})
            pending.clear()

    for position, a in enumerate(actions):
        if a.thread != thread:
            continue
        kind = a.kind
        if kind in CALL_KINDS:
            step = _call_step(session, a, notes)
            if step is not None:
                pending.append(step)
                spoke = True
        elif kind == "tool.result":
            flush()
        elif kind == "message.assistant" or kind == "thinking":
            flush()
            text = a.payload(kind).get("text")
            if isinstance(text, str) and (text.strip() or kind == "message.assistant"):
                steps.append({"say": text} if kind == "message.assistant" else {"think": text})
                spoke = True
        elif kind == "message.user" and spoke and position > 0:
            flush()
            if steps and "say" in steps[-1]:
                steps[-1]["end_turn"] = True
            spoke = False
    flush()
    return steps


def _call_step(session: Session, a: Action, notes: list[str]) -> dict[str, Any] | None:
    if a.kind == "skill.invoked":
        return {"skill": str(a.payload("skill.invoked").get("name") or "")}
    if a.kind == "subagent.spawned":
        d = a.payload("subagent.spawned")
        sub_thread = str(d.get("thread") or d.get("call_id") or "")
        sub = session.subagents.get(sub_thread)
        spec: dict[str, Any] = {}
        if d.get("agent"):
            spec["agent"] = d["agent"]
        spec["prompt"] = str(d.get("prompt") or f"Subagent task {sub_thread}.")
        if d.get("tool") and d["tool"] not in ("Agent", "spawn_agent"):
            spec["tool"] = d["tool"]
        inner = _steps(session, sub_thread, sub.actions, notes) if sub is not None else []
        if inner:
            spec["steps"] = inner
        return {"subagent": spec}
    call = a.payload("tool.call")
    tool = str(call.get("tool") or "")
    given = call.get("input")
    args = given if isinstance(given, dict) else {}
    tool, args = _generic(tool, args)
    if tool == "file_change":
        notes.append(f"a `file_change` at action {a.seq}: codex exec's stream names the files, not the patch (import the rollout to replay it)")
    return {"tool": tool, "input": args} if args else {"tool": tool}


def _generic(tool: str, args: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """A harness-specific call as the call a script makes."""
    if tool in ("command_execution", "exec_command", "shell", "local_shell"):
        command = args.get("cmd", args.get("command", ""))
        if isinstance(command, list):
            command = " ".join(shlex.quote(str(c)) for c in command)
        return "Bash", {"command": _unwrap(str(command))}
    if tool == "apply_patch" and "input" in args:
        return "apply_patch", {"patch": args["input"]}
    return tool, dict(args)


def _unwrap(command: str) -> str:
    """`/bin/bash -lc 'cmd'` (how codex reports a command) as `cmd`."""
    found = LC.match(command)
    if not found:
        return command
    try:
        parts = shlex.split(found.group(1))
    except ValueError:
        return command
    return parts[0] if len(parts) == 1 else command
