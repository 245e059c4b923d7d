"""Claude Code's on-disk session JSONL (`~/.claude/projects/<slug>/<session>.jsonl`), as actions.

2.1.3xx also writes `attachment` entries (context Claude Code added: environment,
skill listings, prompt snapshots; and hook runs, which become `hook` actions) and a
`cost-state` entry whose `totalCostUSD` is the session's cost so far (cumulative across
`--resume`), so these files now carry cost. Before that a file carries what it carries: the
`costUSD` of each assistant entry (1.x), and a `turn_duration` system entry per turn (2.x,
`durationMs`, the turn's active time): their sums are the session's cost and duration in its
`metrics`. A file that carries neither has tokens and no cost or duration (unknown is never
zero); its timestamps still give the session's start and end (recorder/importer.py).

One parser reads the session file and then its subagent sidechain files, in that
order, as one stream of lines; that is also how the lines are stored, so `reparse`
of an import is the same call as the import. A sidechain line says which agent it
belongs to (`isSidechain`, `agentId`); the thread is the spawning Task call's id,
learned from that call's result (`toolUseResult.agentId`) or from
`agent_progress` entries, else from the subagent's first prompt, else `agent-<id>`.

Agents Claude Code starts for itself are not the user's subagents: the `/compact`
summarizer (`agent-acompact-*`) and the "Warmup" agents of 2.0.x. Their tokens were
spent and count in the metrics; their messages are not a thread of the session.
"""

from __future__ import annotations

from typing import Any

from benchtape.adapters.base import hook_action, warning
from benchtape.adapters.claude_messages import ClaudeMessages
from benchtape.adapters.lines import NOT_JSON, LineParser, epoch, guarded
from benchtape.core.jsonobjects import decode
from benchtape.core.model import MAIN, Action
from benchtape.core.payloads import Hook, Metrics

INTERNAL = ""  # thread value of an agent whose messages are not part of the session
_QUIET_TYPES = {
    "file-history-snapshot", "queue-operation", "custom-title", "tag", "agent-name", "last-prompt",
    # 2.1.3xx bookkeeping: the API requests it sent, tool lists, a latch; none is a session event
    "api-request", "api-request-shape", "api-request-blob", "tools-used", "atis-latch",
    # the interactive TUI's bookkeeping: its input mode, permission mode, file-history deltas
    "mode", "permission-mode", "file-history-delta",
}
_QUIET_SYSTEM = {"turn_duration", "local_command", "compact_boundary", "informational", "api_error", "microcompact_boundary"}
_QUIET_PROGRESS = {"bash_progress", "mcp_progress", "query_update", "search_results_received", "waiting_for_task"}


class ClaudeDiskParser(LineParser):
    """A stateful parser of a Claude Code session file followed by its sidechain files."""

    def __init__(self) -> None:
        self.messages = ClaudeMessages()
        self.agents: dict[str, str] = {}  # agentId -> thread, or INTERNAL
        self.seen_uuids: set[str] = set()
        self.meta: dict[str, Any] = {
            "session_id": None,
            "cwd": None,
            "model": None,
            "version": None,
            "first_prompt": None,
            "title": None,
            "format": "claude-transcript",
        }
        self._last_at = 0.0
        self.cost_usd: float | None = None  # the last cost-state's total
        self.entry_costs: dict[str, float] = {}  # 1.x: each assistant message's costUSD, by message
        self.turn_ms: float | None = None  # the main thread's turn_duration entries, summed
        self.stop_hooks = 0  # Stop hook attachments since the last stop_hook_summary
        self._handlers = {  # built once: every line is dispatched through it
            "user": self._message,
            "assistant": self._message,
            "progress": self._progress,
            "system": self._system,
            "summary": self._summary,
            "attachment": self._attachment,
            "cost-state": self._cost,
        }

    def finish(self) -> list[Action]:
        """Token totals of every message read, and the cost when a `cost-state` entry gave it."""
        self.meta["model"] = self.messages.model
        totals: Metrics = self.messages.usage.totals()
        if self.cost_usd is not None:
            totals["cost_usd"] = self.cost_usd
        elif self.entry_costs:
            totals["cost_usd"] = round(sum(self.entry_costs.values()), 10)
        if self.turn_ms is not None:
            totals["duration_ms"] = self.turn_ms
        return [Action("metrics", totals, at=self._last_at)] if totals else []

    # ------------------------------------------------------------------ dispatch

    def _line(self, line: str) -> list[Action]:
        entry = decode(line)
        if entry is None:
            return [warning(NOT_JSON, line)]
        kind = entry.get("type")
        handler = self._handlers.get(kind) if isinstance(kind, str) else None
        if handler is None:
            if kind in _QUIET_TYPES:
                return []
            return [warning(f"unknown transcript entry type {kind!r}", line)]
        return guarded(handler, entry, line)

    def _note(self, entry: dict[str, Any]) -> float:
        for key, field in (("session_id", "sessionId"), ("cwd", "cwd"), ("version", "version")):
            if self.meta[key] is None and isinstance(entry.get(field), str) and not entry.get("isSidechain"):
                self.meta[key] = entry[field]
        at = epoch(entry.get("timestamp"))
        if at:
            self._last_at = max(self._last_at, at)
        return at

    def _message(self, entry: dict[str, Any], line: str) -> list[Action]:
        at = self._note(entry)
        uuid = entry.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return []  # the same message already read from an agent_progress entry
            self.seen_uuids.add(uuid)
        thread = self._thread(entry)
        cost = entry.get("costUSD")
        if entry.get("type") == "assistant" and isinstance(cost, (int, float)) and not isinstance(cost, bool):
            given = entry.get("message")
            message: dict[str, Any] = given if isinstance(given, dict) else {}
            self.entry_costs[str(message.get("id") or uuid or len(self.entry_costs))] = float(cost)  # an internal agent's spend counts too
        if thread == INTERNAL:
            self._count_only(entry)
            return []
        return self._entry(entry, thread, line, at)

    def _entry(self, entry: dict[str, Any], thread: str, line: str, at: float) -> list[Action]:
        """One user or assistant entry, wherever it was found (top level or inside agent_progress)."""
        message = entry.get("message")
        if entry.get("type") == "assistant":
            api_error = bool(entry.get("isApiErrorMessage") or entry.get("error"))
            return self.messages.assistant(message, thread, line, at, api_error=api_error, request_id=entry.get("requestId"))
        injected = bool(entry.get("isMeta") or entry.get("isCompactSummary") or entry.get("isVisibleInTranscriptOnly"))
        actions = self.messages.user(message, thread, line, at, result=entry.get("toolUseResult"), injected=injected)
        if thread == MAIN and self.meta["first_prompt"] is None:
            for a in actions:
                if a.kind == "message.user":
                    self.meta["first_prompt"] = a.payload("message.user").get("text")
                    break
        return actions

    def _thread(self, entry: dict[str, Any]) -> str:
        if not entry.get("isSidechain"):
            return MAIN
        agent_id = str(entry.get("agentId") or "")
        known = self.agents.get(agent_id)
        if known is not None:
            return known
        thread = self._classify(agent_id, entry)
        self.agents[agent_id] = thread
        return thread

    def _classify(self, agent_id: str, first: dict[str, Any]) -> str:
        """The thread of an agent seen for the first time, from its first entry."""
        if agent_id.startswith("acompact"):
            return INTERNAL
        given = first.get("message")
        message: dict[str, Any] = given if isinstance(given, dict) else {}
        content = message.get("content") if first.get("type") == "user" else None
        if content == "Warmup" or (isinstance(content, list) and _first_text(content) == "Warmup"):
            return INTERNAL
        thread = self.messages.agent_threads.get(agent_id)
        if thread is not None:
            return thread
        prompt = content if isinstance(content, str) else _first_text(content) if isinstance(content, list) else None
        if prompt:
            linked = set(self.messages.agent_threads.values()) | set(self.agents.values())
            for spawn, spawn_prompt in self.messages.spawn_prompts.items():
                if spawn_prompt == prompt and spawn not in linked:
                    return spawn
        return f"agent-{agent_id}" if agent_id else "sidechain"

    def _count_only(self, entry: dict[str, Any]) -> None:
        """An internal agent's tokens were spent, so they count; nothing else of it is kept."""
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and message.get("model") != "<synthetic>":
            key = str(message.get("id") or "")
            if key and entry.get("requestId"):
                key = f"{key}/{entry['requestId']}"
            self.messages.usage.add(key, message.get("usage"))

    def _progress(self, entry: dict[str, Any], line: str) -> list[Action]:
        at = self._note(entry)
        data = entry.get("data") or {}
        kind = data.get("type")
        if kind == "hook_progress":
            thread = self._thread(entry)
            if thread == INTERNAL:
                return []
            hook: Hook = {"event": data.get("hookEvent"), "name": data.get("hookName"), "command": data.get("command")}
            call_id = entry.get("toolUseID")
            if isinstance(call_id, str) and call_id in self.messages.tools:
                hook["call_id"] = call_id
            return [hook_action(hook, thread, at)]
        if kind == "agent_progress":
            return self._agent_progress(entry, data, line)
        if kind in _QUIET_PROGRESS:
            return []
        return [warning(f"unknown progress entry type {kind!r}", line)]

    def _agent_progress(self, entry: dict[str, Any], data: dict[str, Any], line: str) -> list[Action]:
        """A subagent's message mirrored into the parent's file (2.1.x writes these as it runs)."""
        inner = data.get("message")
        if not isinstance(inner, dict):
            return [warning("agent_progress entry without a message", line)]
        spawn = str(entry.get("parentToolUseID") or "")
        thread = self.messages.spawns.get(spawn) or (spawn or "sidechain")
        agent_id = data.get("agentId")
        if isinstance(agent_id, str) and agent_id:
            self.messages.agent_threads.setdefault(agent_id, thread)
            self.agents.setdefault(agent_id, thread)
        uuid = inner.get("uuid")
        if isinstance(uuid, str):
            if uuid in self.seen_uuids:
                return []
            self.seen_uuids.add(uuid)
        at = epoch(inner.get("timestamp")) or epoch(entry.get("timestamp"))
        return self._entry(inner, thread, line, at)

    def _system(self, entry: dict[str, Any], line: str) -> list[Action]:
        at = self._note(entry)
        subtype = entry.get("subtype")
        if subtype == "stop_hook_summary":
            thread = self._thread(entry)
            seen, self.stop_hooks = self.stop_hooks, 0
            if thread == INTERNAL or seen:
                return []  # 2.1.3xx: the Stop hooks already came as attachments, with their output
            summary: Hook = {
                "event": "Stop",
                "hooks": entry.get("hookInfos"),
                "errors": entry.get("hookErrors"),
                "prevented_continuation": entry.get("preventedContinuation"),
            }
            return [hook_action(summary, thread, at)]
        if subtype == "turn_duration" and not entry.get("isSidechain"):
            ms = entry.get("durationMs")
            if isinstance(ms, (int, float)) and not isinstance(ms, bool) and ms >= 0:
                self.turn_ms = (self.turn_ms or 0.0) + float(ms)
            return []
        if subtype in _QUIET_SYSTEM:
            return []
        return [warning(f"unknown system entry subtype {subtype!r}", line)]

    def _attachment(self, entry: dict[str, Any], line: str) -> list[Action]:
        """A hook run (`hook_success`, `hook_*_error`, ...) is a `hook`; other attachments are context.

        2.1.328 writes such an attachment for a hook that printed something; a Stop hook
        also gets the turn's `stop_hook_summary`, which then says nothing new."""
        at = self._note(entry)
        data = entry.get("attachment") or {}
        kind = str(data.get("type") or "")
        if not kind.startswith("hook_") or not data.get("hookEvent"):
            return []
        thread = self._thread(entry)
        if thread == INTERNAL:
            return []
        hook: Hook = {
            "event": data.get("hookEvent"),
            "name": data.get("hookName"),
            "command": data.get("command"),
            "outcome": kind[len("hook_"):],
            "exit_code": data.get("exitCode"),
            "output": data.get("stdout", data.get("content")),
        }
        call_id = data.get("toolUseID")
        if isinstance(call_id, str) and call_id in self.messages.tools:
            hook["call_id"] = call_id
        if hook["event"] == "Stop":
            self.stop_hooks += 1
        return [hook_action(hook, thread, at)]

    def _cost(self, entry: dict[str, Any], line: str) -> list[Action]:
        """The session's cost so far; the last entry is the total (it is cumulative across --resume)."""
        cost = entry.get("totalCostUSD")
        if isinstance(cost, (int, float)) and not isinstance(cost, bool):
            self.cost_usd = float(cost)
        return []

    def _summary(self, entry: dict[str, Any], line: str) -> list[Action]:
        """The session's title as Claude Code last summarised it (the latest summary line wins)."""
        if isinstance(entry.get("summary"), str):
            self.meta["title"] = entry["summary"]
        return []


def _first_text(content: list[Any]) -> str | None:
    for block in content:
        if isinstance(block, dict) and block.get("type") == "text" and isinstance(block.get("text"), str):
            return block["text"]
    return None
