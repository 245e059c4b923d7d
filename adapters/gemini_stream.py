"""Gemini CLI's `--output-format stream-json` stdout (0.61.0), one event per line.

    init         {session_id, model}                       the session's id (its transcript's name)
    message      {role: user|assistant, content, delta}    assistant text arrives in deltas
    tool_use     {tool_name, tool_id, parameters}          a call, with its native name and arguments
    tool_result  {tool_id, status, output?, error?}        success | error
    error        {severity, message}                       a warning or error the CLI reported
    result       {status, stats{input_tokens, output_tokens, cached, input, duration_ms, tool_calls}, error?}

The user's prompt is recorded by benchtape itself (message.user) and is not repeated. Assistant
deltas are joined into one message until the next other event. Tokens come from `result.stats`
(input without the cached part, output, cached); Gemini reports no cost, so cost stays unknown.
"""

from __future__ import annotations

from typing import Any, cast

from benchtape.adapters.base import warning
from benchtape.adapters.lines import LineParser, epoch, guarded
from benchtape.core.canonical import annotate
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action
from benchtape.core.payloads import Metrics, ToolCall, ToolResult

HARNESS = "gemini-cli"


class GeminiStreamParser(LineParser):
    def __init__(self) -> None:
        self.thread_id: str | None = None  # the session id from `init` (the on-disk transcript's name holds it)
        self.model: str | None = None
        self._text: list[str] = []
        self._at = 0.0
        self.last_text: str | None = None
        self._finished = False
        self._shown_empty: dict[str, bool] = {}  # call id → is_error, for results the stream showed with no output

    def _line(self, line: str) -> list[Action]:
        event = decode(line)
        if event is None:
            return [warning("not a JSON line", line)]
        kind = event.get("type")
        handler = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if handler is None:
            return [*self._flush(), warning(f"unknown gemini-cli event type {kind!r}", line)]
        return guarded(lambda e, raw: handler(self, e, raw), event, line)

    def _flush(self) -> list[Action]:
        if not self._text:
            return []
        text = "".join(self._text)
        self._text = []
        self.last_text = text
        return [Action("message.assistant", {"text": text}, at=self._at)]

    def _init(self, e: dict[str, Any], line: str) -> list[Action]:
        self.thread_id = str(e.get("session_id") or "") or None
        self.model = e.get("model") if isinstance(e.get("model"), str) else None
        return []

    def _message(self, e: dict[str, Any], line: str) -> list[Action]:
        if e.get("role") == "user":
            return self._flush()
        if e.get("role") != "assistant":
            return [warning(f"a message of role {e.get('role')!r}", line)]
        content = e.get("content")
        if not isinstance(content, str):
            return [warning("an assistant message whose content is not text", line)]
        if not e.get("delta"):
            out = self._flush()
            self._text = [content]
            self._at = epoch(e.get("timestamp"))
            return out + self._flush()
        if not self._text:
            self._at = epoch(e.get("timestamp"))
        self._text.append(content)
        return []

    def _tool_use(self, e: dict[str, Any], line: str) -> list[Action]:
        params = e.get("parameters")
        call: ToolCall = {"call_id": str(e["tool_id"]), "tool": str(e["tool_name"]), "input": params if isinstance(params, dict) else {"value": params}}
        return [*self._flush(), Action("tool.call", annotate(call, HARNESS), at=epoch(e.get("timestamp")))]

    def _tool_result(self, e: dict[str, Any], line: str) -> list[Action]:
        failed = e.get("status") != "success"
        output: Any = e.get("output")
        error = e.get("error")
        if failed and isinstance(error, dict):
            output = error.get("message") if output is None else output
        data: dict[str, Any] = {"call_id": str(e["tool_id"]), "output": output if output is not None else "", "is_error": failed}
        if not data["output"]:
            self._shown_empty[data["call_id"]] = failed
        return [*self._flush(), Action("tool.result", cast(ToolResult, data), at=epoch(e.get("timestamp")))]

    def _error(self, e: dict[str, Any], line: str) -> list[Action]:
        message = str(e.get("message") or "")
        if e.get("severity") == "warning":
            return [*self._flush(), Action("adapter.warning", {"what": f"gemini-cli: {message}", "line": line[:4000], "source": "harness"})]
        return [*self._flush(), Action("error", {"message": f"gemini-cli: {message}"})]

    def _result(self, e: dict[str, Any], line: str) -> list[Action]:
        out = self._flush()
        self._finished = True
        stats: dict[str, Any] = e["stats"] if isinstance(e.get("stats"), dict) else {}
        metrics: Metrics = {}
        cached = stats.get("cached")
        given = stats.get("input") if isinstance(stats.get("input"), int) else (stats["input_tokens"] - (cached or 0) if isinstance(stats.get("input_tokens"), int) else None)
        if isinstance(given, int):
            metrics["tokens_in"] = given
        if isinstance(stats.get("output_tokens"), int):
            metrics["tokens_out"] = stats["output_tokens"]
        if isinstance(cached, int):
            metrics["cache_read_tokens"] = cached
        if isinstance(stats.get("duration_ms"), (int, float)):
            metrics["duration_ms"] = float(stats["duration_ms"])
        if metrics:
            out.append(Action("metrics", metrics))
        if e.get("status") != "success":
            error = e.get("error")
            message = error.get("message") if isinstance(error, dict) else error
            out.append(Action("error", {"message": f"gemini-cli ended with status {e.get('status')!r}: {message or 'no reason given'}"}))
        elif self.last_text is not None:
            out.append(Action("final_output", {"text": self.last_text}))
        return out

    def finish(self) -> list[Action]:
        return self._flush()

    def from_transcript(self, data: bytes) -> list[Action]:
        """The results the stream showed empty, as Gemini's own session file says the model got
        them: stream-json's `output` is the call's display text, empty for a read_file or a
        replace, so a check or a reader of the outputs saw nothing the model saw. Appended as
        later results of the same calls (a call's newest result is its result), never in place."""
        if not self._shown_empty:
            return []
        from benchtape.adapters.gemini_session import call_outputs

        full = call_outputs(data)
        return [
            Action("tool.result", cast(ToolResult, {"call_id": cid, "output": full[cid], "is_error": failed, "from_transcript": True}))
            for cid, failed in self._shown_empty.items()
            if full.get(cid)
        ]


_HANDLERS = {
    "init": GeminiStreamParser._init,
    "message": GeminiStreamParser._message,
    "tool_use": GeminiStreamParser._tool_use,
    "tool_result": GeminiStreamParser._tool_result,
    "error": GeminiStreamParser._error,
    "result": GeminiStreamParser._result,
}
