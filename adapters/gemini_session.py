"""Gemini CLI's own session record (`~/.gemini/tmp/<project>/chats/session-*.json[l]`), imported.

Two shapes, one reading:

    session-*.json   (before 0.6x) one document: {sessionId, projectHash, startTime, lastUpdated,
                     messages: [...]}
    session-*.jsonl  (0.61) a header line {sessionId, projectHash, startTime, kind}, then each
                     message as it is written and again each time it grows (the same id: the last
                     one read is the message), and `{"$set": {...}}` lines that replace fields of
                     the session (`messages` whole, `lastUpdated`)

A message is {id, timestamp, type: user | gemini | info | error | warning, content, and for
`gemini` thoughts [{subject, description}], toolCalls [{id, name, args, result, status}],
tokens {input, output, cached, thoughts, tool, total}, model}. A call's result is the list of
`functionResponse` parts Gemini sent back; the user message that echoes them is not a turn.
The context Gemini CLI sends first (`<session_context>`) is its own, not the user's prompt.
"""

from __future__ import annotations

from typing import Any

import orjson

from benchtape.adapters.base import warning
from benchtape.adapters.lines import epoch
from benchtape.core.canonical import annotate
from benchtape.core.model import Action
from benchtape.core.payloads import Metrics, ToolCall, ToolResult

FORMAT = "gemini-session"
HARNESS = "gemini-cli"
CONTEXT = "<session_context>"  # what Gemini CLI sends before the first prompt


def is_gemini_session_head(head: str) -> bool:
    """Whether a file's first 64 kB are Gemini CLI's session record (either shape)."""
    return head.lstrip().startswith("{") and '"projectHash"' in head and '"sessionId"' in head


class GeminiSessionParser:
    """Every line of one session file, then the session read at the end of the stream."""

    def __init__(self) -> None:
        self._lines: list[str] = []
        self.meta: dict[str, Any] = {"format": FORMAT, "harness": HARNESS, "session_id": None, "model": None, "cwd": None, "first_prompt": None, "version": None}

    def feed(self, line: str) -> list[Action]:
        self._lines.append(line)
        return []

    def finish(self) -> list[Action]:
        lines, self._lines = self._lines, []
        header, messages, odd = _session(lines)
        if header is None:
            return [warning("not a Gemini CLI session record: no line holds its sessionId and projectHash", "\n".join(lines)[:4000])]
        self.meta["session_id"] = header.get("sessionId")
        reading = _Reading(messages)
        self.meta.update(model=reading.model, first_prompt=reading.first_prompt)
        return reading.actions + [warning("a line that is no JSON object", line[:4000]) for line in odd]


def _session(lines: list[str]) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[str]]:
    """(the session's header, its messages in the order first written, the lines read as
    nothing) from either shape."""
    text = "\n".join(lines).strip()
    try:
        whole = orjson.loads(text)
    except orjson.JSONDecodeError:
        whole = None
    if isinstance(whole, dict) and isinstance(whole.get("messages"), list):
        return whole, [m for m in whole["messages"] if isinstance(m, dict)], []
    header: dict[str, Any] | None = None
    by_id: dict[str, dict[str, Any]] = {}
    odd: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            entry = None
        if not isinstance(entry, dict):
            odd.append(line)
        elif isinstance(entry.get("$set"), dict):
            change = entry["$set"]
            if isinstance(change.get("messages"), list):
                by_id = {str(m.get("id") or i): m for i, m in enumerate(change["messages"]) if isinstance(m, dict)}
        elif "type" in entry and "id" in entry:
            by_id[str(entry["id"])] = entry  # the same message again, grown: it keeps its place
        elif "sessionId" in entry and "projectHash" in entry:
            header = entry
    return header, list(by_id.values()), odd


class _Reading:
    """The messages walked into actions: a user turn, the model's thoughts, its text and its
    calls each with its result, the tokens summed, the last text as the final output."""

    def __init__(self, messages: list[dict[str, Any]]):
        self.actions: list[Action] = []
        self.model: str | None = None
        self.first_prompt: str | None = None
        self.tokens: dict[str, int] = {}
        last_text: str | None = None
        for m in messages:
            at = epoch(m.get("timestamp"))
            kind = m.get("type")
            if kind == "user":
                self._user(m, at)
            elif kind == "gemini":
                said = self._gemini(m, at)
                last_text = said or last_text
            elif kind == "error":
                self.actions.append(Action("error", {"message": f"gemini-cli: {_text(m.get('content'))}"}, at=at))
            elif kind in ("info", "warning"):
                self.actions.append(Action("adapter.warning", {"what": f"gemini-cli {kind}: {_text(m.get('content'))}", "line": "", "source": "harness"}, at=at))
        metrics: Metrics = {}
        if "input" in self.tokens:
            metrics["tokens_in"] = self.tokens["input"] - self.tokens.get("cached", 0)  # Gemini's input counts the cached tokens too
        if "output" in self.tokens:
            metrics["tokens_out"] = self.tokens["output"] + self.tokens.get("thoughts", 0)  # thinking is billed as output
        if self.tokens.get("cached"):
            metrics["cache_read_tokens"] = self.tokens["cached"]
        if metrics:
            self.actions.append(Action("metrics", metrics))
        if last_text:
            self.actions.append(Action("final_output", {"text": last_text}))

    def _user(self, m: dict[str, Any], at: float) -> None:
        content = m.get("content")
        parts = content if isinstance(content, list) else [{"text": content}]
        if any(isinstance(p, dict) and "functionResponse" in p for p in parts):
            return  # the calls' results sent back: read with the calls
        text = _text(content)
        if not text or text.lstrip().startswith(CONTEXT):
            return
        self.first_prompt = self.first_prompt or text
        self.actions.append(Action("message.user", {"text": text}, at=at))

    def _gemini(self, m: dict[str, Any], at: float) -> str | None:
        self.model = m.get("model") if isinstance(m.get("model"), str) else self.model
        for thought in m.get("thoughts") or []:
            if isinstance(thought, dict):
                text = "\n".join(str(thought[k]) for k in ("subject", "description") if thought.get(k))
                if text:
                    self.actions.append(Action("thinking", {"text": text}, at=epoch(thought.get("timestamp")) or at))
        said = _text(m.get("content"))
        if said:
            self.actions.append(Action("message.assistant", {"text": said}, at=at))
        for call in m.get("toolCalls") or []:
            if isinstance(call, dict) and call.get("id") is not None:
                self._call(call, at)
        for key, value in (m.get("tokens") or {}).items():
            if isinstance(value, int):
                self.tokens[key] = self.tokens.get(key, 0) + value
        return said or None

    def _call(self, call: dict[str, Any], at: float) -> None:
        args = call.get("args")
        data: ToolCall = {"call_id": str(call["id"]), "tool": str(call.get("name") or ""), "input": args if isinstance(args, dict) else {"value": args}}
        self.actions.append(Action("tool.call", annotate(data, HARNESS), at=epoch(call.get("timestamp")) or at))
        if call.get("result") is None and call.get("status") is None:
            return  # never answered (the session stopped first)
        failed = call.get("status") not in (None, "success")
        result: ToolResult = {"call_id": str(call["id"]), "output": _response(call.get("result")) or _text(call.get("resultDisplay")), "is_error": failed}
        self.actions.append(Action("tool.result", result, at=at))


def call_outputs(data: bytes) -> dict[str, str]:
    """Each call's result as the session file says Gemini sent it back to the model (call id →
    its functionResponse output): what a live run's stream-json shows only as its display text,
    which for a read_file or a replace is empty."""
    _, messages, _ = _session(data.decode("utf-8", "replace").splitlines())
    out: dict[str, str] = {}
    for m in messages:
        for call in m.get("toolCalls") or [] if m.get("type") == "gemini" else []:
            if isinstance(call, dict) and call.get("id") is not None and call.get("result") is not None:
                out[str(call["id"])] = _response(call.get("result"))
    return out


def _response(result: Any) -> str:
    """A call's result as Gemini sent it back: each functionResponse's output (or error)."""
    out = []
    for part in result if isinstance(result, list) else [result]:
        response = part.get("functionResponse", {}).get("response") if isinstance(part, dict) else None
        if isinstance(response, dict):
            value = response.get("output", response.get("error", response))
            out.append(value if isinstance(value, str) else orjson.dumps(value).decode())
    return "\n".join(out)


def _text(content: Any) -> str:
    """A message's text: a string, or the `text` of its parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p["text"]) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""
