"""OpenAI Responses API (`POST <base>/responses`), as Codex 0.169 calls it with `wire_api = "responses"`.

Codex builds its items from the `response.output_item.done` events, so an answer is:
response.created, then per output item `output_item.added` (+ `output_text.delta` for a
message) and `output_item.done`, then response.completed with the turn's usage. A tool
call is a `function_call` whose `arguments` are a JSON string, or apply_patch's
`custom_tool_call` (the patch text as input). An MCP tool is deferred behind Codex's
client-side tool search: the model first asks `tool_search_call`, Codex answers with
`tool_search_output` listing namespaces, and only then can the model call
`function_call` with `namespace: mcp__<server>` -- so that search answer gives its
script turn back and the call comes on the next request.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from benchtape.models.playback import Playback
from benchtape.models.tools import CODEX_UNMAPPED, CodexCall, for_codex, poll_call
from benchtape.models.wire import Reply, exhausted_text, sse_reply
from benchtape.spec.script import SIDE_USAGE, Block, Usage

DEFAULT_MODEL = "gpt-5.5"
SIDE_TEXT = "Scripted session"
CWD = re.compile(r"<cwd>(.*?)</cwd>", re.S)


def _message_text(item: dict[str, Any]) -> str:
    content = item.get("content")
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return ""
    return "\n".join(str(c.get("text")) for c in content if isinstance(c, dict) and isinstance(c.get("text"), str))


def user_texts(items: list[Any]) -> list[str]:
    return [_message_text(i) for i in items if isinstance(i, dict) and i.get("type", "message") == "message" and i.get("role") == "user"]


def prompt_of(items: list[Any]) -> str:
    """The user's words: the last user message that is not Codex's own <environment_context> etc."""
    for text in reversed(user_texts(items)):
        if text.strip() and not text.lstrip().startswith("<"):
            return text
    return ""


def cwd_of(items: list[Any]) -> Path | None:
    for text in user_texts(items):
        found = CWD.search(text)
        if found:
            return Path(found.group(1).strip())
    return None


def found_namespaces(items: list[Any]) -> dict[str, set[str]]:
    """MCP tools Codex already returned from a tool search in this conversation."""
    out: dict[str, set[str]] = {}
    for item in items:
        if isinstance(item, dict) and item.get("type") == "tool_search_output":
            for ns in item.get("tools") or []:
                if isinstance(ns, dict) and ns.get("type") == "namespace":
                    names = {str(t.get("name")) for t in ns.get("tools") or [] if isinstance(t, dict)}
                    out.setdefault(str(ns.get("name")), set()).update(names)
    return out


def answer(playback: Playback, body: dict[str, Any]) -> Reply:
    model = playback.script.model or str(body.get("model") or DEFAULT_MODEL)
    given = body.get("input")
    items = given if isinstance(given, list) else []
    offered = [t for t in body.get("tools") or [] if isinstance(t, dict)]
    if not offered:
        return _response(model, [_message(SIDE_TEXT, "side_0")], SIDE_USAGE, role="side", outcome="side")
    if playback.script.noop:
        return _response(model, [_message(prompt_of(items), "noop_0")], Usage(), role="main", outcome="noop")
    running = _still_running(items)
    if running is not None:  # the script's command has not ended: wait for it, using no turn
        return _response(model, [_item(poll_call(running), f"poll_{len(items):03d}")], Usage(), role="main", outcome="poll")
    conv = playback.main
    index, turn = playback.take(conv, len(items))
    note = {"role": "main", "conversation": conv.tag, "turn": index}
    if turn is None:
        text = exhausted_text(len(conv.script.turns), index + 1)
        return _response(model, [_message(text, f"x_{index}")], Usage(), outcome="exhausted", **note)
    unmapped = [b for b in turn.calls if b.tool in CODEX_UNMAPPED]
    if unmapped:
        what = ", ".join(f"`{b.tool}` ({CODEX_UNMAPPED[b.tool]}, script line {b.line})" for b in unmapped)
        text = f"[benchtape scripted model] Codex has no tool for {what}; the script cannot be played under codex."
        return _response(model, [_message(text, f"u_{index}")], Usage(), outcome="unmapped", **note)
    calls = [(k, for_codex(b, playback.local(cwd_of(items)), found_namespaces(items))) for k, b in enumerate(turn.blocks) if b.kind == "call"]
    searches = [(k, c) for k, c in calls if c.kind == "tool_search_call"]
    if searches:
        playback.give_back(conv, len(items))  # the scripted call comes after Codex has found the tool
        output = [_item(c, f"{conv.tag}_{index:03d}_{k}") for k, c in searches]
        return _response(model, output, Usage(), outcome="tool_search", **note)
    output = []
    mapped = dict(calls)
    for k, block in enumerate(turn.blocks):
        ident = f"{conv.tag}_{index:03d}_{k}"
        output.append(_item(mapped[k], ident) if k in mapped else _text_item(block, ident))
    reply = _response(model, output, turn.usage, outcome="turn", line=turn.line, **note)
    reply.delay = turn.delay
    return reply


_RUNNING = re.compile(r"Process running with session ID (\d+)")


def _still_running(items: list[Any]) -> int | None:
    """The session of a command Codex left running, when the request's last item is the output
    saying so (the script's exec_command, or a poll of it)."""
    last = items[-1] if items else None
    if not isinstance(last, dict) or last.get("type") != "function_call_output":
        return None
    output = last.get("output")
    text = output if isinstance(output, str) else " ".join(str(p.get("text", "")) for p in output if isinstance(p, dict)) if isinstance(output, list) else ""
    found = _RUNNING.search(text)
    return int(found.group(1)) if found else None


def _text_item(block: Block, ident: str) -> dict[str, Any]:
    if block.kind == "thinking":
        return {"type": "reasoning", "id": f"rs_{ident}", "summary": [{"type": "summary_text", "text": block.text}], "content": None, "encrypted_content": None}
    return _message(block.text, ident)


def _message(text: str, ident: str) -> dict[str, Any]:
    return {"type": "message", "id": f"msg_{ident}", "role": "assistant", "status": "completed", "content": [{"type": "output_text", "text": text, "annotations": []}]}


def _item(call: CodexCall, ident: str) -> dict[str, Any]:
    if call.kind == "tool_search_call":
        return {"type": "tool_search_call", "id": f"ts_{ident}", "call_id": f"ts_{ident}", "status": "completed", "execution": "client", "arguments": call.arguments}
    if call.kind == "custom_tool_call":
        return {"type": "custom_tool_call", "id": f"ctc_{ident}", "call_id": f"call_{ident}", "name": call.name, "input": call.arguments, "status": "completed"}
    item = {"type": "function_call", "id": f"fc_{ident}", "call_id": f"call_{ident}", "name": call.name, "arguments": call.arguments, "status": "completed"}
    if call.namespace:
        item["namespace"] = call.namespace
    return item


def _usage(usage: Usage) -> dict[str, Any]:
    given = usage.tokens_in + usage.cache_read_tokens  # OpenAI input tokens include the cached ones
    return {
        "input_tokens": given,
        "input_tokens_details": {"cached_tokens": usage.cache_read_tokens},
        "output_tokens": usage.tokens_out,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": given + usage.tokens_out,
    }


def _response(model: str, output: list[dict[str, Any]], usage: Usage, **note: Any) -> Reply:
    ident = f"resp_bt{time.time_ns()}"
    created = int(time.time())
    base = {"id": ident, "object": "response", "created_at": created, "model": model, "status": "in_progress", "output": []}
    events: list[tuple[str | None, Any]] = [("response.created", {"type": "response.created", "response": base})]
    for i, item in enumerate(output):
        events.append(("response.output_item.added", {"type": "response.output_item.added", "output_index": i, "item": _opening(item)}))
        if item["type"] == "message":
            text = item["content"][0]["text"]
            events.append(("response.output_text.delta", {"type": "response.output_text.delta", "item_id": item["id"], "output_index": i, "content_index": 0, "delta": text}))
        events.append(("response.output_item.done", {"type": "response.output_item.done", "output_index": i, "item": item}))
    done = {**base, "status": "completed", "output": output, "usage": _usage(usage)}
    events.append(("response.completed", {"type": "response.completed", "response": done}))
    return sse_reply(events, **note)


def _opening(item: dict[str, Any]) -> dict[str, Any]:
    """An item as first announced: no text yet, still in progress."""
    if item["type"] == "message":
        return {**item, "status": "in_progress", "content": []}
    return {**item, "status": "in_progress"}
