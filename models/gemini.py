"""Gemini API (`POST …/v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`),
as Gemini CLI 0.61.0 calls it with `GOOGLE_GEMINI_BASE_URL`.

Every turn of the CLI is one `streamGenerateContent?alt=sse` request whose body holds
`contents` (the conversation: user text, the model's `functionCall` parts, the CLI's
`functionResponse` parts), `systemInstruction`, and `tools[0].functionDeclarations`. The answer
is one SSE event holding the whole candidate (the CLI accepts it whole), with `usageMetadata`
carrying the script's tokens. A request that offers no tools (a side call: a JSON-schema
question such as the `auto` model router's) never takes a script turn: it gets an object that
fits the schema asked for, or a short text.

A script names Claude Code's tools; Gemini gets its own (models/tools.py for_gemini):
Read→read_file, Write→write_file, Edit→replace, Bash→run_shell_command, Glob→glob,
Grep→grep_search; any other name is sent as it is (the CLI then answers "tool not found").
"""

from __future__ import annotations

import time
from typing import Any

from benchtape.models.playback import Playback
from benchtape.models.tools import for_gemini
from benchtape.models.wire import Reply, exhausted_text, json_reply, sse_reply
from benchtape.spec.script import SIDE_USAGE, Turn, Usage

DEFAULT_MODEL = "gemini-2.5-flash"
SIDE_TEXT = "Scripted session"


def offered(body: dict[str, Any]) -> set[str]:
    names: set[str] = set()
    for group in body.get("tools") or []:
        if isinstance(group, dict):
            names.update(str(d.get("name")) for d in group.get("functionDeclarations") or [] if isinstance(d, dict))
    return names


def _texts(content: Any) -> list[str]:
    parts = content.get("parts") if isinstance(content, dict) else None
    return [str(p["text"]) for p in parts or [] if isinstance(p, dict) and isinstance(p.get("text"), str) and not p.get("thought")]


def prompt_of(contents: list[Any]) -> str:
    """The user's words: the last text of the last user content that has text and is not the
    CLI's own session context (it opens with "<session_context>" or "This is the Gemini CLI")."""
    for content in reversed(contents):
        if isinstance(content, dict) and content.get("role") == "user":
            texts = [t for t in _texts(content) if not t.lstrip().startswith(("<session_context>", "This is the Gemini CLI"))]
            if texts:
                return texts[-1]
    return ""


def answer(playback: Playback, body: dict[str, Any], stream: bool) -> Reply:
    model = playback.script.model or DEFAULT_MODEL
    contents = [c for c in body.get("contents") or [] if isinstance(c, dict)]
    tools = offered(body)
    if not tools:
        return _side(model, body, stream)
    if playback.script.noop:
        return _reply(model, [{"text": prompt_of(contents)}], Usage(), stream, role="main", outcome="noop")
    conv = playback.main
    index, turn = playback.take(conv, len(contents))
    note = {"role": "main", "conversation": conv.tag, "turn": index}
    if turn is None:
        return _reply(model, [{"text": exhausted_text(len(conv.script.turns), index + 1)}], Usage(), stream, outcome="exhausted", **note)
    reply = _reply(model, _parts(turn, conv.tag, index, tools), turn.usage, stream, outcome="turn", line=turn.line, **note)
    reply.delay = turn.delay
    return reply


def _parts(turn: Turn, tag: str, index: int, tools: set[str]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for k, block in enumerate(turn.blocks):
        if block.kind == "call":
            for j, (name, args) in enumerate(for_gemini(block, tools)):
                out.append({"functionCall": {"name": name, "args": args, "id": f"{tag}_{index:03d}_{k}_{j}"}})
        elif block.kind == "thinking":
            out.append({"text": block.text, "thought": True})
        elif block.text:
            out.append({"text": block.text})
    return out or [{"text": ""}]


def _side(model: str, body: dict[str, Any], stream: bool) -> Reply:
    given = body.get("generationConfig")
    config: dict[str, Any] = given if isinstance(given, dict) else {}
    schema = config.get("responseJsonSchema") or config.get("responseSchema")
    if isinstance(schema, dict):
        import orjson

        text = orjson.dumps(fitting(schema)).decode()
    else:
        text = SIDE_TEXT
    return _reply(model, [{"text": text}], SIDE_USAGE, stream, role="side", outcome="side")


def fitting(schema: dict[str, Any]) -> Any:
    """The smallest value of a JSON schema's shape: each required property filled, numbers at
    their minimum (the router's `complexity_score >= 1`), the first of an enum."""
    if "enum" in schema and schema["enum"]:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) and kind else kind
    kind = kind.lower() if isinstance(kind, str) else kind
    if kind == "object":
        props = schema.get("properties") or {}
        return {name: fitting(props.get(name) or {}) for name in schema.get("required") or list(props)}
    if kind == "array":
        return []
    if kind in ("integer", "number"):
        low = schema.get("minimum", 0)
        return int(low) if kind == "integer" else low
    if kind == "boolean":
        return False
    return ""


def _usage(usage: Usage) -> dict[str, Any]:
    given = usage.tokens_in + usage.cache_read_tokens
    counts = {"promptTokenCount": given, "candidatesTokenCount": usage.tokens_out, "totalTokenCount": given + usage.tokens_out}
    if usage.cache_read_tokens:
        counts["cachedContentTokenCount"] = usage.cache_read_tokens
    return counts


def _reply(model: str, parts: list[dict[str, Any]], usage: Usage, stream: bool, **note: Any) -> Reply:
    answer = {
        "candidates": [{"content": {"role": "model", "parts": parts}, "finishReason": "STOP", "index": 0}],
        "usageMetadata": _usage(usage),
        "modelVersion": model,
        "responseId": f"bt{time.time_ns()}",
    }
    if not stream:
        return json_reply(answer, **note)
    return sse_reply([(None, answer)], **note)
