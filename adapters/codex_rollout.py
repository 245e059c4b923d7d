"""Codex rollout files (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), line by line, as actions.

A rollout holds two views of one session: `response_item` lines (what went to and
came from the model: messages, reasoning, `function_call`/`custom_tool_call` and
their `*_output`, paired by `call_id`) and `event_msg` lines (what the UI showed:
user prompts, `exec_command_end` with the exit code, `token_count` totals). Each fact
is taken from one view only, so nothing is counted twice: the user's prompt from
`user_message`, the model's words and tool calls from `response_item`, outcomes from
the exit code wherever it first appears.

A unified-exec command that outlives its first poll answers "Process running with
session ID ..."; its result waits for `exec_command_end` (the exit code), so the call
still gets exactly one `tool.result`. Old rollouts (`shell`, output wrapped as
`{"output", "metadata": {"exit_code"}}`) and pre-wrapper lines (a response item as the
whole line) read the same way. No cost is ever written: rollouts carry none.

0.169 writes no `user_message`, `exec_command_end`, `patch_apply_end` or
`mcp_tool_call_end` events; its `item_completed` events carry the same facts (the
user's message, a command's exit code, a patch's and an MCP call's status), so they are
read instead -- the user's words from whichever of the two kinds comes first, never
both. An MCP call is a `function_call` with `namespace: mcp__<server>`, named
`mcp__<server>__<tool>` as everywhere else; the client-side `tool_search` that finds it
is a call of its own.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

from benchtape.adapters.base import warning
from benchtape.adapters.codex_exec import TERMINAL_AGENT, agent_status
from benchtape.adapters.lines import NOT_JSON, LineParser, epoch, guarded
from benchtape.adapters.usage import openai_totals
from benchtape.core.canonical import annotate
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action, text_of
from benchtape.core.payloads import AssistantMessage, Error, Metrics, SubagentSpawned, Thinking

EXITED = re.compile(r"Process exited with code (-?\d+)")
RUNNING = "Process running with session ID"
EXEC_TOOLS = ("exec_command",)
SPAWN_TOOL = "spawn_agent"

# Mirrors of facts taken from the other view, and UI-only notices: known, not actions.
_QUIET_EVENTS = {
    "agent_message", "agent_message_delta", "agent_reasoning", "agent_reasoning_delta",
    "agent_reasoning_raw_content", "agent_reasoning_raw_content_delta", "agent_reasoning_section_break",
    "exec_command_begin", "exec_command_output_delta", "patch_apply_begin", "mcp_tool_call_begin",
    "web_search_begin", "web_search_end", "task_started", "turn_diff", "plan_update", "background_event",
    "terminal_interaction", "view_image_tool_call", "collab_agent_spawn_begin", "collab_waiting_begin",
    "collab_agent_interaction_begin", "collab_agent_interaction_end", "collab_close_begin",
    "collab_resume_begin", "collab_resume_end", "context_compacted", "item_started", "thread_settings_applied",
    "entered_review_mode", "exited_review_mode", "stream_error", "warning", "user_message_delta",
    "get_history_entry_response", "mcp_list_tools_response", "list_custom_prompts_response",
    "session_configured", "shutdown_complete", "raw_response_item", "undo_started", "undo_completed",
    "thread_rolled_back", "deprecation_notice", "mcp_startup_update", "mcp_startup_complete",
}
_QUIET_ITEMS = {"ghost_snapshot", "compaction", "compaction_summary", "other"}
_RESPONSE_TYPES = {
    "message", "reasoning", "function_call", "function_call_output", "custom_tool_call",
    "custom_tool_call_output", "local_shell_call", "web_search_call",
}
# Line types that restate what other lines say (per-request usage, the settings snapshot).
_QUIET_LINES = {"world_state", "token_usage_record"}
SEARCH_TOOL = "tool_search"


class CodexRolloutParser(LineParser):
    """A stateful parser of one Codex rollout file."""

    def __init__(self) -> None:
        self.meta: dict[str, Any] = {
            "session_id": None,
            "cwd": None,
            "model": None,
            "version": None,
            "first_prompt": None,
            "originator": None,
            "format": "codex-rollout",
        }
        self.tools: dict[str, str] = {}  # call_id -> tool name
        self.waiting: dict[str, tuple[Any, float]] = {}  # exec call_id -> (first output, at) until its exit code
        self.exit_codes: dict[str, int] = {}  # from exec_command_end seen before the output
        self.patch_ok: dict[str, bool] = {}  # from patch_apply_end
        self.mcp_ok: dict[str, bool] = {}  # from mcp_tool_call_end
        self.spawn_args: dict[str, dict[str, Any]] = {}  # spawn_agent call_id -> its arguments, until a thread id
        self.spawned: dict[str, str] = {}  # spawn call_id -> subagent thread
        self.finished: set[str] = set()
        self.searches = 0
        self.totals: Metrics = {}
        self.turns = 0
        self.duration_ms: int | None = 0  # None once a turn did not say how long it took
        self._last_metrics: Metrics = {}
        self.user_from: str | None = None  # the event kind the user's words are read from

    def finish(self) -> list[Action]:
        """Results still waiting for an exit code (outcome unknown), spawns never given a thread."""
        out: list[Action] = []
        for call_id, (output, at) in list(self.waiting.items()):
            out.append(Action("tool.result", {"call_id": call_id, "output": output, "is_error": None}, at=at))
        self.waiting.clear()
        for call_id in list(self.spawn_args):
            out.extend(self._spawn(call_id, None, None, 0.0))
        return out

    # ------------------------------------------------------------------ dispatch

    def _line(self, line: str) -> list[Action]:
        entry = decode(line)
        if entry is None:
            return [warning(NOT_JSON, line)]
        kind = entry.get("type")
        if "payload" in entry:
            handler = {
                "session_meta": self._session_meta,
                "turn_context": self._turn_context,
                "response_item": self._response_item,
                "event_msg": self._event,
                "compacted": lambda entry, line: [],
            }.get(kind)  # type: ignore[arg-type]
            if handler is None and kind in _QUIET_LINES:
                return []
            if handler is None:
                return [warning(f"unknown rollout line type {kind!r}", line)]
            return guarded(handler, entry, line)
        # Rollouts before the {timestamp, type, payload} wrapper: the item is the line.
        if kind in _RESPONSE_TYPES:
            return guarded(self._response_item, {"payload": entry, "timestamp": entry.get("timestamp"), "legacy": True}, line)
        if "record_type" in entry:
            return []
        if kind is None and "id" in entry and "timestamp" in entry:
            return guarded(self._session_meta, {"payload": entry}, line)
        return [warning(f"unknown rollout line type {kind!r}", line)]

    def _session_meta(self, entry: dict[str, Any], line: str) -> list[Action]:
        payload = entry["payload"]
        meta = payload.get("meta") if isinstance(payload.get("meta"), dict) else payload
        for key, field in (("session_id", "id"), ("cwd", "cwd"), ("version", "cli_version"), ("originator", "originator")):
            if self.meta[key] is None and isinstance(meta.get(field), str):  # a string, as claude_disk reads them
                self.meta[key] = meta[field]
        return []

    def _turn_context(self, entry: dict[str, Any], line: str) -> list[Action]:
        payload = entry["payload"]
        if self.meta["model"] is None and isinstance(payload.get("model"), str):
            self.meta["model"] = payload["model"]
        if self.meta["cwd"] is None and isinstance(payload.get("cwd"), str):
            self.meta["cwd"] = payload["cwd"]
        return []

    # ------------------------------------------------------------------ response items

    def _response_item(self, entry: dict[str, Any], line: str) -> list[Action]:
        p = entry["payload"]
        at = epoch(entry.get("timestamp"))
        kind = p.get("type")
        if kind == "message":
            return self._message(p, at, legacy=bool(entry.get("legacy")))
        if kind == "reasoning":
            return [self._reasoning(p, at)]
        if kind in ("function_call", "custom_tool_call", "local_shell_call"):
            return self._call(p, at)
        if kind in ("function_call_output", "custom_tool_call_output"):
            return self._output(p, at)
        if kind == "tool_search_call":
            call_id = str(p.get("call_id") or p.get("id") or "")
            self.tools[call_id] = SEARCH_TOOL
            args = p.get("arguments")
            return [Action("tool.call", annotate({"call_id": call_id, "tool": SEARCH_TOOL, "input": args if isinstance(args, dict) else _arguments(args)}, "codex"), at=at)]
        if kind == "tool_search_output":
            found = [ns.get("name") for ns in p.get("tools") or [] if isinstance(ns, dict)]
            status = p.get("status")
            is_error = None if status not in ("completed", "failed") else status == "failed"
            return [Action("tool.result", {"call_id": str(p.get("call_id") or ""), "output": found, "is_error": is_error}, at=at)]
        if kind == "web_search_call":
            self.searches += 1
            call_id = str(p.get("id") or f"web_search-{self.searches}")
            action = p.get("action")
            return [
                Action("tool.call", annotate({"call_id": call_id, "tool": "web_search", "input": action if isinstance(action, dict) else {}}, "codex"), at=at),
                Action("tool.result", {"call_id": call_id, "output": p.get("status"), "is_error": None}, at=at),
            ]
        if kind in _QUIET_ITEMS:
            return []
        return [warning(f"unknown rollout response item {kind!r}", line)]

    def _message(self, p: dict[str, Any], at: float, legacy: bool) -> list[Action]:
        role = p.get("role")
        text = "\n".join(
            b.get("text", "") for b in p.get("content") or [] if isinstance(b, dict) and isinstance(b.get("text"), str)
        )
        if role == "assistant":
            data: AssistantMessage = {"text": text}
            if p.get("phase"):
                data["phase"] = p["phase"]
            return [Action("message.assistant", data, at=at)] if text.strip() else []
        # The user's own words come from event_msg user_message; these are injected
        # context (permissions, AGENTS.md, environment) -- except in pre-event rollouts.
        if legacy and role == "user" and text.strip() and not text.lstrip().startswith("<"):
            return self._user_text(text, at)
        return []

    def _reasoning(self, p: dict[str, Any], at: float) -> Action:
        parts = [s.get("text", "") for s in p.get("summary") or [] if isinstance(s, dict)]
        if not any(parts):
            parts = [c.get("text", "") for c in p.get("content") or [] if isinstance(c, dict)]
        text = "\n".join(x for x in parts if x)
        data: Thinking = {"text": text}
        if not text and p.get("encrypted_content"):
            data["encrypted"] = True
        return Action("thinking", data, at=at)

    def _call(self, p: dict[str, Any], at: float) -> list[Action]:
        call_id = str(p.get("call_id") or p.get("id") or "")
        if p.get("type") == "local_shell_call":
            action = p.get("action")
            name, tool_input = "local_shell", action if isinstance(action, dict) else {}
        elif p.get("type") == "custom_tool_call":
            name, tool_input = str(p.get("name") or ""), {"input": p.get("input")}
        else:
            name, tool_input = str(p.get("name") or ""), _arguments(p.get("arguments"))
            namespace = p.get("namespace")
            if isinstance(namespace, str) and namespace.startswith("mcp__"):
                name = f"{namespace}__{name}"
        self.tools[call_id] = name
        if name == SPAWN_TOOL:
            self.spawn_args[call_id] = tool_input
            return []  # announced when Codex names the new thread
        return [Action("tool.call", annotate({"call_id": call_id, "tool": name, "input": tool_input}, "codex"), at=at)]

    def _output(self, p: dict[str, Any], at: float) -> list[Action]:
        call_id = str(p.get("call_id") or "")
        name = self.tools.get(call_id)
        out: list[Action] = []
        if call_id in self.spawn_args:
            thread = _spawned_thread(p.get("output"))
            out += self._spawn(call_id, thread, None, at)
        output, is_error, wait = self._outcome(call_id, name, p.get("output"))
        if wait:
            self.waiting[call_id] = (output, at)
            return out
        out.append(Action("tool.result", {"call_id": call_id, "output": output, "is_error": is_error}, at=at))
        return out

    def _outcome(self, call_id: str, name: str | None, raw: Any) -> tuple[Any, bool | None, bool]:
        """(output, is_error, wait for the exit code) of one tool output."""
        if isinstance(raw, dict) and isinstance(raw.get("success"), bool):
            return raw.get("content", raw), not raw["success"], False
        text = raw if isinstance(raw, str) else (text_of(raw) or "")
        wrapped = decode(text) if isinstance(text, str) and text.startswith("{") else None
        if wrapped is not None and isinstance(wrapped.get("metadata"), dict) and "output" in wrapped:
            code = wrapped["metadata"].get("exit_code")
            if isinstance(code, int) and not isinstance(code, bool):
                return wrapped["output"], code != 0, False
        if name in EXEC_TOOLS:
            match = EXITED.search(text or "")
            if match:
                return raw, int(match.group(1)) != 0, False
            if call_id in self.exit_codes:
                return raw, self.exit_codes[call_id] != 0, False
            if RUNNING in (text or ""):
                return raw, None, True
        if call_id in self.patch_ok:
            return raw, not self.patch_ok[call_id], False
        if call_id in self.mcp_ok:
            return raw, not self.mcp_ok[call_id], False
        if call_id in self.exit_codes:
            return raw, self.exit_codes[call_id] != 0, False
        return raw, None, False

    def _spawn(self, call_id: str, thread: str | None, role: str | None, at: float) -> list[Action]:
        args = self.spawn_args.pop(call_id, None)
        if args is None:
            return []
        thread = thread or call_id
        self.spawned[call_id] = thread
        data: SubagentSpawned = {
            "thread": thread,
            "call_id": call_id,
            "agent": text_of(role or args.get("agent_type") or args.get("role")),
            "prompt": text_of(args.get("message") or args.get("prompt")),
            "tool": SPAWN_TOOL,
        }
        return [Action("subagent.spawned", data, at=at)]

    # ------------------------------------------------------------------ events

    def _event(self, entry: dict[str, Any], line: str) -> list[Action]:
        p = entry["payload"]
        at = epoch(entry.get("timestamp"))
        kind = p.get("type")
        call_id = str(p.get("call_id") or "")
        if kind == "user_message":
            text = p.get("message")
            return self._user_text(text, at, "user_message") if isinstance(text, str) and text.strip() else []
        if kind == "item_completed":
            return self._item_completed(p.get("item") or {}, at)
        if kind == "exec_command_end":
            return self._exec_end(call_id, p, at)
        if kind == "patch_apply_end":
            if isinstance(p.get("success"), bool):
                self.patch_ok[call_id] = p["success"]
            return []
        if kind == "mcp_tool_call_end":
            result = p.get("result")
            if isinstance(result, dict) and ("Ok" in result or "Err" in result):
                self.mcp_ok[call_id] = "Ok" in result and not (isinstance(result["Ok"], dict) and result["Ok"].get("isError"))
            return []
        if kind == "token_count":
            info = p.get("info")
            if isinstance(info, dict):
                self.totals = openai_totals(info.get("total_token_usage"))  # cumulative: replaces, never adds
            return self._metrics(at)
        if kind == "task_complete":
            self.turns += 1
            took = p.get("duration_ms")
            if isinstance(took, int) and not isinstance(took, bool) and self.duration_ms is not None:
                self.duration_ms += took
            else:
                self.duration_ms = None
            return self._metrics(at)
        if kind == "turn_aborted":
            reason = p.get("reason")
            data: Error = {"message": f"turn aborted: {reason}", "source": "turn_aborted", "interrupted": reason == "interrupted"}
            return [Action("error", data, at=at)]
        if kind in ("error", "stream_error_fatal"):
            return [Action("error", {"message": text_of(p.get("message")) or "codex error", "source": "event"}, at=at)]
        if kind == "collab_agent_spawn_end":
            thread = p.get("new_thread_id")
            return self._spawn(call_id, str(thread) if thread else None, text_of(p.get("new_agent_role")), at)
        if kind in ("collab_waiting_end", "collab_close_end"):
            return self._agents_done(p, at)
        if kind in _QUIET_EVENTS:
            return []
        return [warning(f"unknown rollout event {kind!r}", line)]

    def _item_completed(self, item: dict[str, Any], at: float) -> list[Action]:
        """0.169's record of a finished item: the user's message, or a tool's outcome."""
        kind, call_id = item.get("type"), str(item.get("id") or "")
        if kind == "UserMessage":
            text = "\n".join(c.get("text", "") for c in item.get("content") or [] if isinstance(c, dict) and isinstance(c.get("text"), str))
            return self._user_text(text, at, "item_completed") if text.strip() else []
        if kind == "CommandExecution":
            return self._exec_end(call_id, item, at)
        if kind == "FileChange" and item.get("status") in ("completed", "failed", "declined"):
            self.patch_ok[call_id] = item["status"] == "completed"
        elif kind == "McpToolCall" and item.get("status") in ("completed", "failed"):
            result = item.get("result")
            self.mcp_ok[call_id] = item["status"] == "completed" and not (isinstance(result, dict) and result.get("isError"))
        return []

    def _user_text(self, text: str, at: float, source: str | None = None) -> list[Action]:
        if source is not None:
            if self.user_from not in (None, source):
                return []  # the same words, already read from the other kind of event
            self.user_from = source
        if self.meta["first_prompt"] is None:
            self.meta["first_prompt"] = text
        return [Action("message.user", {"text": text}, at=at)]

    def _exec_end(self, call_id: str, p: dict[str, Any], at: float) -> list[Action]:
        code = p.get("exit_code")
        if not isinstance(code, int) or isinstance(code, bool):
            return []
        self.exit_codes[call_id] = code
        if call_id not in self.waiting:
            return []
        first, _ = self.waiting.pop(call_id)
        output = p.get("aggregated_output") or first
        return [Action("tool.result", {"call_id": call_id, "output": output, "is_error": code != 0, "exit_code": code}, at=at)]

    def _agents_done(self, p: dict[str, Any], at: float) -> list[Action]:
        """Subagents a wait (or close) reported in a terminal state."""
        states: dict[str, Any] = {}
        if isinstance(p.get("statuses"), dict):
            states.update({str(k): v for k, v in p["statuses"].items()})
        for key, status_key in (("agent_statuses", "status"), ("agent_lifecycles", "lifecycle_status")):
            for row in p.get(key) or []:
                if isinstance(row, dict) and row.get("thread_id"):
                    states[str(row["thread_id"])] = row.get(status_key, row.get("status"))
        if p.get("receiver_thread_id") and p.get("type") == "collab_close_end":
            states.setdefault(str(p["receiver_thread_id"]), p.get("status") or "shutdown")
        threads = set(self.spawned.values())
        out = []
        for thread, state in states.items():
            status = agent_status(state)
            if thread in threads and status in TERMINAL_AGENT and thread not in self.finished:
                self.finished.add(thread)
                message = state.get("message") if isinstance(state, dict) else None
                out.append(Action("subagent.finished", {"thread": thread, "output": message, "status": status}, thread=thread, at=at))
        return out

    def _metrics(self, at: float) -> list[Action]:
        """Cumulative totals, written only when they changed."""
        data = self.totals.copy()
        if self.turns:
            data["turns"] = self.turns
            if self.duration_ms is not None:
                data["duration_ms"] = self.duration_ms
        if not data or data == self._last_metrics:
            return []
        self._last_metrics = data
        return [Action("metrics", data.copy(), at=at)]


def _arguments(raw: Any) -> dict[str, Any]:
    if isinstance(raw, dict):
        return raw
    if isinstance(raw, str):
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return {"raw": raw}
        return value if isinstance(value, dict) else {"value": value}
    return {}


def _spawned_thread(output: Any) -> str | None:
    """The new agent's thread id when spawn_agent's output names it."""
    value = decode(output) if isinstance(output, str) else output if isinstance(output, dict) else None
    if isinstance(value, dict):
        for key in ("agent_id", "thread_id", "new_thread_id", "id"):
            if isinstance(value.get(key), str) and value[key]:
                return value[key]
    return None

