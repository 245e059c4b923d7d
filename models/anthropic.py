"""Anthropic Messages API (`POST /v1/messages`), as Claude Code 2.1.x calls it.

A request is one of three things. A side request (no tools: a title, a summary) gets a
short text and never uses a script turn. A subagent's request opens with the prompt of
a `subagent:` step and plays that step's own turns. Any other request with tools is
the main agent's and plays the script's next turn. Claude Code 2.1.328 puts
`role: "system"` messages (environment info) into `messages`: they are skipped when
reading the conversation. Streaming answers are SSE exactly as the API sends them:
message_start, per block content_block_start/delta/stop, message_delta with the stop
reason and output tokens, message_stop.
"""

from __future__ import annotations

import time
from typing import Any

import orjson

from benchtape.models.playback import Conversation, Playback
from benchtape.models.tools import for_claude
from benchtape.models.wire import Reply, exhausted_text, json_reply, sse_reply
from benchtape.spec.script import SIDE_USAGE, Block, Turn, Usage

DEFAULT_MODEL = "claude-scripted"
SIDE_TEXT = "Scripted session"
SIGNATURE = "benchtape-scripted"


def _texts(message: dict[str, Any]) -> list[str]:
    content = message.get("content")
    if isinstance(content, str):
        return [content]
    if not isinstance(content, list):
        return []
    return [str(b.get("text")) for b in content if isinstance(b, dict) and b.get("type") == "text" and isinstance(b.get("text"), str)]


def conversation_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The user/assistant messages (2.1.328's system-role messages left out)."""
    return [m for m in body.get("messages") or [] if isinstance(m, dict) and m.get("role") in ("user", "assistant")]


def prompt_of(messages: list[dict[str, Any]]) -> str:
    """The user's words: the last text block of the last user message that has text
    (earlier blocks are Claude Code's <system-reminder>s)."""
    for message in reversed(messages):
        if message.get("role") == "user":
            texts = [t for t in _texts(message) if not t.lstrip().startswith("<system-reminder>")]
            if texts:
                return texts[-1]
    return ""


def answer(playback: Playback, body: dict[str, Any]) -> Reply:
    model = playback.script.model or str(body.get("model") or DEFAULT_MODEL)
    stream = body.get("stream") is True
    messages = conversation_messages(body)
    offered = {str(t.get("name")) for t in body.get("tools") or [] if isinstance(t, dict)}
    if not offered:
        return _message(model, stream, [Block("text", text=SIDE_TEXT)], SIDE_USAGE, role="side", outcome="side")
    if playback.script.noop:
        return _message(model, stream, [Block("text", text=prompt_of(messages))], Usage(), role="main", outcome="noop")
    opening = "\n".join(_texts(messages[0])) if messages else ""
    conv = playback.conversation(opening)
    role = "main" if conv is playback.main else "subagent"
    index, turn = playback.take(conv, len(messages))
    note = {"role": role, "conversation": conv.tag, "turn": index}
    if turn is None:
        text = exhausted_text(len(conv.script.turns), index + 1)
        return _message(model, stream, [Block("text", text=text)], Usage(), outcome="exhausted", **note)
    blocks = _blocks(turn, conv, index, offered)
    reply = _message(model, stream, blocks, turn.usage, outcome="turn", line=turn.line, **note)
    reply.delay = turn.delay
    return reply


def _blocks(turn: Turn, conv: Conversation, index: int, offered: set[str]) -> list[Block]:
    out = []
    for k, block in enumerate(turn.blocks):
        if block.kind == "call":
            name, args = for_claude(block, offered)
            block = Block("call", text=f"toolu_bt_{conv.tag}_{index:03d}_{k}", tool=name, input=args)
        out.append(block)
    return out


def _content(block: Block) -> dict[str, Any]:
    if block.kind == "thinking":
        return {"type": "thinking", "thinking": block.text, "signature": SIGNATURE}
    if block.kind == "call":
        return {"type": "tool_use", "id": block.text, "name": block.tool, "input": block.input}
    return {"type": "text", "text": block.text}


def _usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": usage.tokens_in,
        "output_tokens": usage.tokens_out,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
    }


def _message(model: str, stream: bool, blocks: list[Block], usage: Usage, **note: Any) -> Reply:
    ident = f"msg_bt{time.time_ns()}"
    stop = "tool_use" if any(b.kind == "call" for b in blocks) else "end_turn"
    content = [_content(b) for b in blocks]
    message = {"id": ident, "type": "message", "role": "assistant", "model": model, "content": content, "stop_reason": stop, "stop_sequence": None, "usage": _usage(usage)}
    if not stream:
        return json_reply(message, **note)
    start = {**message, "content": [], "stop_reason": None, "usage": {**_usage(usage), "output_tokens": 0}}
    events: list[tuple[str | None, Any]] = [("message_start", {"type": "message_start", "message": start})]
    for i, block in enumerate(content):
        events += _block_events(i, block)
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None}, "usage": {"output_tokens": usage.tokens_out}}))
    events.append(("message_stop", {"type": "message_stop"}))
    return sse_reply(events, **note)


def _block_events(i: int, block: dict[str, Any]) -> list[tuple[str, Any]]:
    kind = block["type"]
    opening: dict[str, Any]
    deltas: list[dict[str, Any]]
    if kind == "thinking":
        opening = {"type": "thinking", "thinking": ""}
        deltas = [{"type": "thinking_delta", "thinking": block["thinking"]}, {"type": "signature_delta", "signature": block["signature"]}]
    elif kind == "tool_use":
        opening = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
        deltas = [{"type": "input_json_delta", "partial_json": orjson.dumps(block["input"]).decode()}]
    else:
        opening = {"type": "text", "text": ""}
        deltas = [{"type": "text_delta", "text": block["text"]}] if block["text"] else []
    return [
        ("content_block_start", {"type": "content_block_start", "index": i, "content_block": opening}),
        *(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}) for d in deltas),
        ("content_block_stop", {"type": "content_block_stop", "index": i}),
    ]
