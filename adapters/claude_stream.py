"""Claude Code's `--output-format stream-json` stdout, line by line, as actions.

The stream is the print-mode session record: `system/init` (what the CLI loaded),
one `assistant`/`user` line per content block (subagent lines carry
`parent_tool_use_id`), `system/task_*` for subagent lifecycle, and one `result` with
the session's cost and token totals. Nothing is buffered: each line's actions are
returned as it arrives, so a killed run keeps everything up to the kill.
"""

from __future__ import annotations

from typing import Any

from benchtape.adapters.base import hook_action, warning
from benchtape.adapters.claude_messages import ClaudeMessages
from benchtape.adapters.lines import NOT_JSON, LineParser, guarded
from benchtape.adapters.usage import anthropic_totals, model_usage_totals
from benchtape.core.jsonobjects import decode
from benchtape.core.model import MAIN, Action
from benchtape.core.payloads import EnvironmentReported, Error, Hook, Metrics

# Known events that add nothing the stream does not already say elsewhere; the raw
# table keeps them. task_started/task_progress restate the Agent tool_use and the
# subagent's own (parent_tool_use_id) lines; stream_event is the partial-message
# mirror of the complete assistant lines.
_QUIET_EVENTS = {"stream_event", "keep_alive"}
# 2.1.3xx adds task_updated (a status patch the task_notification restates), thinking_tokens
# (an estimate; the message usage is the count) and hook_started (its hook_response follows).
_QUIET_SYSTEM = {"task_started", "task_progress", "task_updated", "compact_boundary", "status", "api_retry", "thinking_tokens", "hook_started"}


class ClaudeStreamParser(LineParser):
    """A stateful parser of one `claude -p --output-format stream-json --verbose` stdout."""

    def __init__(self) -> None:
        self.messages = ClaudeMessages()
        self.result_seen = False
        self.session_id: str | None = None
        self.environment_base: EnvironmentReported | None = None  # the probe's record, folded into each init's
        self.report_environment = True

    def fold_environment(self, base: EnvironmentReported | None, probe: bool) -> None:
        """What the environment probe found before launch, joined with each `system/init`
        into one record (the projection merges records key by key, so two would clash);
        `probe: false` (harness_config.environment) records none."""
        self.environment_base, self.report_environment = base, probe

    def finish(self) -> list[Action]:
        """Token totals counted from the messages, when no `result` brought the CLI's own."""
        if self.result_seen:
            return []
        totals = self.messages.usage.totals()
        return [Action("metrics", totals.copy())] if totals else []

    # ------------------------------------------------------------------ dispatch

    def _line(self, line: str) -> list[Action]:
        event = decode(line)
        if event is None:
            return [warning(NOT_JSON, line)]
        if isinstance(event.get("session_id"), str):
            self.session_id = event["session_id"]
        handler = {
            "system": self._system,
            "assistant": self._assistant,
            "user": self._user,
            "result": self._result,
            "rate_limit_event": self._rate_limit,
        }.get(event.get("type"))  # type: ignore[arg-type]
        if handler is None:
            if event.get("type") in _QUIET_EVENTS:
                return []
            return [warning(f"unknown stream-json event type {event.get('type')!r}", line)]
        return guarded(handler, event, line)

    def _thread(self, event: dict[str, Any]) -> str:
        parent = event.get("parent_tool_use_id")
        return str(parent) if parent else MAIN

    def _assistant(self, event: dict[str, Any], line: str) -> list[Action]:
        return self.messages.assistant(event.get("message"), self._thread(event), line, api_error=bool(event.get("error")))

    def _user(self, event: dict[str, Any], line: str) -> list[Action]:
        # Synthetic/meta text is Claude Code's own; a replay echoes the stdin prompt the recorder already has.
        injected = bool(event.get("isSynthetic") or event.get("isMeta") or event.get("isReplay"))
        return self.messages.user(
            event.get("message"), self._thread(event), line, result=event.get("tool_use_result"), injected=injected
        )

    def _system(self, event: dict[str, Any], line: str) -> list[Action]:
        subtype = event.get("subtype")
        if subtype == "init":
            if not self.report_environment:
                return []
            from benchtape.adapters.claude_env import LIST_KEYS, environment_of, fold

            reported = fold(self.environment_base, environment_of(event), event.get("plugin_errors"))
            out = [Action("environment.reported", reported)]
            odd = [k for k in LIST_KEYS if k in event and not isinstance(event[k], list)]
            if odd:
                out.append(warning(f"system/init fields that are not lists were left out: {', '.join(odd)}", line))
            return out
        if subtype == "task_notification":
            call_id = str(event.get("tool_use_id"))
            thread = self.messages.spawns.get(call_id)
            if thread is None:
                return []  # a background command's notification, not a subagent's
            if call_id in self.messages.foreground and call_id not in self.messages.results:
                return []  # a foreground agent's result follows, with its report
            return self.messages.subagent_finished(thread, None, status=event.get("status"), task_id=event.get("task_id"), summary=event.get("summary"))
        if subtype == "permission_denied":
            # The tool_result that follows says only "denied" in prose; remember it was a denial.
            self.messages.denied.add(str(event.get("tool_use_id")))
            return []
        if subtype in _QUIET_SYSTEM:
            return []
        if isinstance(subtype, str) and subtype.startswith("hook"):
            data: Hook = {
                "event": event.get("hook_event") or event.get("hookEvent"),
                "name": event.get("hook_name") or event.get("hookName"),
                "phase": subtype,
                "outcome": event.get("outcome"),
                "exit_code": event.get("exit_code"),
                "output": event.get("output"),
            }
            return [hook_action(data)]
        return [warning(f"unknown system event subtype {subtype!r}", line)]

    def _rate_limit(self, event: dict[str, Any], line: str) -> list[Action]:
        """A rejection stopped the agent; an allowance (even with a warning) changed nothing."""
        info = event.get("rate_limit_info") or {}
        status = info.get("status")
        if isinstance(status, str) and status.startswith("allowed"):
            return []
        return [Action("error", {"message": f"rate limit: {status}", "source": "rate_limit", "rate_limit": info})]

    def _result(self, event: dict[str, Any], line: str) -> list[Action]:
        self.result_seen = True
        metrics: Metrics = model_usage_totals(event.get("modelUsage")) or anthropic_totals(event.get("usage"))
        for field, key in (("cost_usd", "total_cost_usd"), ("duration_ms", "duration_ms"), ("turns", "num_turns")):
            value = event.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                metrics[field] = value  # type: ignore[literal-required] # a Metrics field, from the tuple above
        out = [Action("metrics", metrics)] if metrics else []
        text = event.get("result")
        if isinstance(text, str):
            out.append(Action("final_output", {"text": text}))
        if event.get("is_error") is True or str(event.get("subtype", "")).startswith("error"):
            errors = event.get("errors")
            message = text if isinstance(text, str) and text else f"claude ended with {event.get('subtype')}"
            data: Error = {"message": message, "source": "result", "subtype": event.get("subtype")}
            if errors:
                data["errors"] = errors
            out.append(Action("error", data))
        return out
