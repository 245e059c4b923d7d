"""`codex exec --json` stdout, line by line, as actions.

Codex reports each piece of work as an item that may be `item.started`, then
`item.updated`, then `item.completed` under one `item.id`. A tool-like item becomes
exactly one `tool.call` (when first seen) and one `tool.result` (when completed),
however many events describe it. Tool names are the item types (`command_execution`,
`file_change`, `web_search`, `todo_list`), an MCP call is `mcp__<server>__<tool>` as
in Claude Code, a collab call is its tool (`spawn_agent`, `wait`, ...). Codex reports
no cost, so `cost_usd` is never written.
"""

from __future__ import annotations

from typing import Any

from benchtape.adapters.base import warning
from benchtape.adapters.lines import NOT_JSON, LineParser, guarded
from benchtape.adapters.usage import TurnUsage
from benchtape.core.canonical import annotate
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action, text_of
from benchtape.core.payloads import SubagentSpawned, ToolCall

HARNESS = "codex"
TERMINAL_AGENT = {"completed", "errored", "shutdown", "not_found"}
_QUIET_EVENTS = {"item.plan.delta"}
UNFINISHED = "[no result: Codex ended before this call did]"


def agent_status(state: Any) -> str | None:
    """A collab agent's status, whether serialised as "completed" or {"status": ...} or {"completed": msg}."""
    if isinstance(state, str):
        return state
    if isinstance(state, dict):
        if isinstance(state.get("status"), str):
            return state["status"]
        if len(state) == 1:
            return str(next(iter(state)))
    return None


class CodexExecParser(LineParser):
    """A stateful parser of one `codex exec --json` stdout."""

    def __init__(self) -> None:
        self.thread_id: str | None = None
        self.called: set[str] = set()  # item ids whose tool.call was emitted
        self.done: set[str] = set()  # item ids whose terminal actions were emitted
        self.spawned: set[str] = set()  # collab receiver threads already announced
        self.usage = TurnUsage()
        self.turns = 0

    def finish(self) -> list[Action]:
        """Every total is emitted as it changes; what is left is a call Codex started and never
        completed (it exited, or was stopped, with the command still running: its rollout says
        `failed`, exit -1). It gets its one result, a failed one, so no call of the record is
        left without an outcome, as one cut off on attrs was."""
        unfinished = [i for i in self.called if i not in self.done]
        self.done.update(unfinished)
        return [Action("tool.result", {"call_id": i, "output": UNFINISHED, "is_error": True}) for i in sorted(unfinished)]

    def _line(self, line: str) -> list[Action]:
        event = decode(line)
        if event is None:
            return [warning(NOT_JSON, line)]
        kind = event.get("type")
        handler = {
            "thread.started": self._thread_started,
            "turn.started": self._turn_started,
            "turn.completed": self._turn_completed,
            "turn.failed": self._turn_failed,
            "item.started": self._item,
            "item.updated": self._item,
            "item.completed": self._item,
            "error": self._error,
            "request_user_input": self._request_input,
        }.get(kind)  # type: ignore[arg-type]
        if handler is None:
            if kind in _QUIET_EVENTS:
                return []
            return [warning(f"unknown codex exec event type {kind!r}", line)]
        return guarded(handler, event, line)

    # ------------------------------------------------------------------ top level

    def _thread_started(self, event: dict[str, Any], line: str) -> list[Action]:
        self.thread_id = event.get("thread_id")
        return []

    def _turn_started(self, event: dict[str, Any], line: str) -> list[Action]:
        """Item ids are unique within one run; should a CLI restart them per turn, a new turn starts afresh."""
        self.called.clear()
        self.done.clear()
        return []

    def _metrics(self) -> Action:
        return Action("metrics", {**self.usage.totals, "turns": self.turns})

    def _turn_completed(self, event: dict[str, Any], line: str) -> list[Action]:
        self.turns += 1
        self.usage.add(event.get("usage"))
        return [self._metrics()]

    def _turn_failed(self, event: dict[str, Any], line: str) -> list[Action]:
        self.turns += 1
        error = event.get("error") or {}
        message = error.get("message") if isinstance(error, dict) else str(error)
        return [Action("error", {"message": text_of(message) or "turn failed", "source": "turn.failed"}), self._metrics()]

    def _error(self, event: dict[str, Any], line: str) -> list[Action]:
        return [Action("error", {"message": text_of(event.get("message")) or "codex error", "source": "stream"})]

    def _request_input(self, event: dict[str, Any], line: str) -> list[Action]:
        call_id = str(event.get("call_id") or event.get("id") or "")
        call: ToolCall = {"call_id": call_id, "tool": "request_user_input", "input": {"questions": event.get("questions")}}
        return [Action("tool.call", annotate(call, HARNESS))]

    # ------------------------------------------------------------------ items

    def _item(self, event: dict[str, Any], line: str) -> list[Action]:
        item = event["item"]
        item_id = str(item["id"])
        kind = item.get("type") or item.get("item_type")
        completed = event["type"] == "item.completed"
        if item_id in self.done:
            return []
        if kind == "agent_message":
            return self._once(item_id, completed, lambda: [Action("message.assistant", {"text": text_of(item.get("text")) or ""})])
        if kind == "plan":
            return self._once(item_id, completed, lambda: [Action("message.assistant", {"text": text_of(item.get("text")) or "", "plan": True})])
        if kind == "reasoning":
            return self._once(item_id, completed, lambda: [Action("thinking", {"text": text_of(item.get("text")) or ""})])
        if kind == "error":
            return self._once(item_id, completed, lambda: [Action("error", {"message": text_of(item.get("message")) or "", "source": "item"})])
        if kind == "collab_tool_call":
            return self._collab(item_id, item, completed)
        call = _TOOL_ITEMS.get(kind)  # type: ignore[arg-type]
        if call is None:
            return [warning(f"unknown codex item type {kind!r}", line)]
        tool, tool_input, result = call
        out: list[Action] = []
        if item_id not in self.called:
            self.called.add(item_id)
            made: ToolCall = {"call_id": item_id, "tool": tool(item), "input": tool_input(item)}
            out.append(Action("tool.call", annotate(made, HARNESS)))
        if completed:
            self.done.add(item_id)
            out.append(Action("tool.result", {"call_id": item_id, **result(item)}))
        return out

    def _once(self, item_id: str, completed: bool, make: Any) -> list[Action]:
        """Text items are recorded once, when complete (started/updated carry partial text)."""
        if not completed:
            return []
        self.done.add(item_id)
        return make()

    def _collab(self, item_id: str, item: dict[str, Any], completed: bool) -> list[Action]:
        """Codex's multi-agent tools: a spawn opens a subagent thread, a wait can finish one."""
        tool = str(item.get("tool") or "collab")
        receivers = [str(r) for r in item.get("receiver_thread_ids") or []]
        states = item.get("agents_states") or {}
        status = item.get("status")
        sender = str(item.get("sender_thread_id") or "")
        sender = sender if sender in self.spawned else "main"  # a nested spawn sits on its parent's thread
        out: list[Action] = []
        if tool == "spawn_agent":
            if item_id not in self.called and (receivers or completed):
                self.called.add(item_id)
                for thread in receivers or [item_id]:
                    self.spawned.add(thread)
                    spawn: SubagentSpawned = {"thread": thread, "call_id": item_id, "agent": None, "prompt": text_of(item.get("prompt")), "tool": tool}
                    out.append(Action("subagent.spawned", spawn, thread=sender))
        elif item_id not in self.called:
            self.called.add(item_id)
            call: ToolCall = {"call_id": item_id, "tool": tool, "input": {"receiver_thread_ids": receivers, "prompt": item.get("prompt")}}
            out.append(Action("tool.call", annotate(call, HARNESS), thread=sender))
        if completed and item_id in self.called:
            self.done.add(item_id)
            is_error = None if status not in ("completed", "failed") else status == "failed"
            out.append(Action("tool.result", {"call_id": item_id, "output": states or None, "is_error": is_error}, thread=sender))
            if tool != "spawn_agent":
                for thread, state in states.items():
                    if agent_status(state) in TERMINAL_AGENT and str(thread) in self.spawned:
                        message = state.get("message") if isinstance(state, dict) else None
                        out.append(
                            Action("subagent.finished", {"thread": str(thread), "output": message, "status": agent_status(state)}, thread=str(thread))
                        )
        return out


def _exit_error(item: dict[str, Any]) -> bool | None:
    code = item.get("exit_code")
    if isinstance(code, int) and not isinstance(code, bool):
        return code != 0
    status = item.get("status")
    if status in ("failed", "declined"):
        return True
    return None


def _status_error(item: dict[str, Any]) -> bool | None:
    status = item.get("status")
    if item.get("error"):
        return True
    if status in ("completed", "failed"):
        return status == "failed"
    return None


# item type -> (tool name, call input, result fields)
_TOOL_ITEMS: dict[str, tuple[Any, Any, Any]] = {
    "command_execution": (
        lambda i: "command_execution",
        lambda i: {"command": i.get("command")},
        lambda i: {"output": i.get("aggregated_output"), "is_error": _exit_error(i), "exit_code": i.get("exit_code")},
    ),
    "file_change": (
        lambda i: "file_change",
        lambda i: {"changes": i.get("changes")},
        lambda i: {"output": i.get("changes"), "is_error": _status_error(i)},
    ),
    "mcp_tool_call": (
        lambda i: f"mcp__{i.get('server')}__{i.get('tool')}",
        lambda i: i.get("arguments") if isinstance(i.get("arguments"), dict) else {"value": i.get("arguments")},
        lambda i: {"output": i.get("error") or i.get("result"), "is_error": _status_error(i)},
    ),
    "web_search": (
        lambda i: "web_search",
        lambda i: {"query": i.get("query"), "action": i.get("action")},
        lambda i: {"output": i.get("action"), "is_error": None},
    ),
    "todo_list": (
        lambda i: "todo_list",
        lambda i: {"items": i.get("items")},
        lambda i: {"output": i.get("items"), "is_error": None},
    ),
}
