"""OpenAI Chat Completions (`POST <base>/chat/completions`), for AI judges and for agents.

A request that offers `tools` is an agent's turn (Qwen Code, opencode, mini-swe-agent call the
model so): it plays the script's next main turn as `tool_calls` (the harness's own tools,
models/tools.py for_chat), streamed as chunks when `stream: true` (one chunk per call with its
whole arguments, then `finish_reason`, then a usage chunk when `stream_options.include_usage`),
else one `chat.completion`. The turn is keyed by the number of messages, so a retried request
gets the same turn. Anything else is a judge's request:

Each request takes the next `chat:` entry of the script (the first unused one whose
`match:` text occurs in the request, else the first unused one without `match:`), so a
test can script exactly the answer a judge gets -- including the ways a judge's model
fails: text that is not the JSON asked for, a refusal, HTTP 429 with `retry-after`, a
5xx, and a hang longer than the client's timeout (answered 504 afterwards, if the
client is still there). When no entry is left the answer says so in its text and the
request log records `exhausted`.
"""

from __future__ import annotations

import re
import shlex
import time
from typing import Any

import orjson

from benchtape.core.judgments import SCRIPTED_MARK
from benchtape.models.playback import Playback
from benchtape.models.wire import Reply, json_reply, sse_reply
from benchtape.spec.script import Usage

NO_REPLY = (
    SCRIPTED_MARK + " No `chat:` reply of the script is left for this judge request: the script has {count}, "
    "and each answers one request (in order; one with `match:` only a request containing its text). "
    "A run asks once per AI check per session (times its `votes:`), so script one reply for each."
)
HANG_STATUS = 504


def request_text(body: dict[str, Any]) -> str:
    """All message text of a request, for `match:`."""
    parts: list[str] = []
    for message in body.get("messages") or []:
        if not isinstance(message, dict):
            continue
        content = message.get("content")
        if isinstance(content, str):
            parts.append(content)
        elif isinstance(content, list):
            parts.extend(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return "\n".join(parts)


def answer(playback: Playback, body: dict[str, Any], harness: str | None = None) -> Reply:
    model = playback.script.model or str(body.get("model") or "scripted")
    stream = body.get("stream") is True
    offered = {str((t.get("function") or {}).get("name")) for t in body.get("tools") or [] if isinstance(t, dict)}
    if offered:
        return _agent_turn(playback, body, model, stream, offered, harness)
    if is_aider(body):
        return _aider_turn(playback, body, model, stream)
    taken = playback.take_chat(request_text(body))
    if taken is None:
        text = NO_REPLY.format(count=len(playback.script.chat))
        return _completion(model, stream, text, None, Usage(), role="judge", outcome="exhausted")
    index, reply = taken
    note = {"role": "judge", "reply": index, "line": reply.line}
    if reply.kind == "status":
        headers = {"retry-after": f"{reply.retry_after:g}"} if reply.retry_after is not None else {}
        kind = "rate_limit_exceeded" if reply.status == 429 else "server_error" if reply.status >= 500 else "invalid_request_error"
        error = {"error": {"message": reply.text, "type": kind, "code": reply.status}}
        out = json_reply(error, status=reply.status, outcome="fault", **note)
        out.headers.update(headers)
        return out
    if reply.kind == "hang":
        error = {"error": {"message": f"scripted hang of {reply.seconds:g}s ended", "type": "timeout", "code": HANG_STATUS}}
        out = json_reply(error, status=HANG_STATUS, outcome="hang", **note)
        out.delay = reply.seconds
        return out
    if reply.kind == "refusal":
        return _completion(model, stream, None, reply.text, reply.usage, outcome="refusal", **note)
    return _completion(model, stream, reply.text, None, reply.usage, outcome="reply", **note)


def _completion(model: str, stream: bool, text: str | None, refusal: str | None, usage: Usage, **note: Any) -> Reply:
    ident = f"chatcmpl-bt{time.time_ns()}"
    created = int(time.time())
    counts = {
        "prompt_tokens": usage.tokens_in + usage.cache_read_tokens,
        "completion_tokens": usage.tokens_out,
        "total_tokens": usage.tokens_in + usage.cache_read_tokens + usage.tokens_out,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }
    if not stream:
        message = {"role": "assistant", "content": text, "refusal": refusal}
        return json_reply(
            {
                "id": ident,
                "object": "chat.completion",
                "created": created,
                "model": model,
                "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
                "usage": counts,
            },
            **note,
        )

    def chunk(delta: dict[str, Any], finish: str | None = None, **extra: Any) -> tuple[None, dict[str, Any]]:
        choice = {"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}
        return None, {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [choice], **extra}

    events: list[tuple[None, Any]] = [chunk({"role": "assistant", "content": ""})]
    if refusal is not None:
        events.append(chunk({"refusal": refusal}))
    elif text:
        events.append(chunk({"content": text}))
    events.append(chunk({}, "stop"))
    events.append((None, {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": counts}))
    events.append((None, "[DONE]"))
    return sse_reply(events, **note)


def prompt_of(messages: list[Any]) -> str:
    """The user's words: the text of the last user message."""
    for message in reversed(messages):
        if isinstance(message, dict) and message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            if isinstance(content, list):
                return "\n".join(str(p.get("text")) for p in content if isinstance(p, dict) and isinstance(p.get("text"), str))
    return ""


SUBMIT = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's end of a run: a command whose output starts with this line
CWD = re.compile(r"(?:I'm currently working in the directory:|<cwd>|Working directory:)\s*([^\s<]+)")


def cwd_of(messages: list[Any]) -> str | None:
    """Where the agent works, as its own context message says (Qwen Code: "I'm currently working
    in the directory: /path"): its file tools take absolute paths only."""
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        text = content if isinstance(content, str) else " ".join(str(p.get("text")) for p in content if isinstance(p, dict)) if isinstance(content, list) else ""
        found = CWD.search(text)
        if found:
            return found.group(1)
    return None


def _agent_turn(playback: Playback, body: dict[str, Any], model: str, stream: bool, offered: set[str], harness: str | None) -> Reply:
    from benchtape.models.tools import for_chat
    from benchtape.models.wire import exhausted_text

    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    include_usage = bool((body.get("stream_options") or {}).get("include_usage")) if isinstance(body.get("stream_options"), dict) else False
    if playback.script.noop:
        return _turn(model, stream, prompt_of(messages), [], Usage(), include_usage, role="main", outcome="noop")
    conv = playback.main
    key = sum(1 for m in messages if m.get("role") != "system")
    index, turn = playback.take(conv, key)
    note = {"role": "main", "conversation": conv.tag, "turn": index}
    if turn is None:
        return _turn(model, stream, exhausted_text(len(conv.script.turns), index + 1), [], Usage(), include_usage, outcome="exhausted", **note)
    texts = [b.text for b in turn.blocks if b.kind == "text" and b.text]
    calls = []
    cwd = cwd_of(messages)
    for k, block in enumerate(turn.blocks):
        if block.kind == "call":
            for j, (name, args) in enumerate(for_chat(block, offered, cwd)):
                calls.append({"id": f"call_{conv.tag}_{index:03d}_{k}_{j}", "type": "function", "function": {"name": name, "arguments": orjson.dumps(args).decode()}})
    if not calls and offered == {"bash"}:
        # an agent whose only tool is `bash` (mini-swe-agent) ends only on its submit command: a
        # scripted answer is submitted as the command's output
        said = "\n\n".join(texts)
        calls.append({"id": f"call_{conv.tag}_{index:03d}_submit", "type": "function", "function": {"name": "bash", "arguments": orjson.dumps({"command": f"echo {SUBMIT} && printf '%s\\n' {shlex.quote(said)}"}).decode()}})
    reply = _turn(model, stream, "\n\n".join(texts) or None, calls, turn.usage, include_usage, outcome="turn", line=turn.line, **note)
    reply.delay = turn.delay
    return reply


def _turn(model: str, stream: bool, text: str | None, calls: list[dict[str, Any]], usage: Usage, include_usage: bool, **note: Any) -> Reply:
    ident = f"chatcmpl-bt{time.time_ns()}"
    created = int(time.time())
    counts = {
        "prompt_tokens": usage.tokens_in + usage.cache_read_tokens,
        "completion_tokens": usage.tokens_out,
        "total_tokens": usage.tokens_in + usage.cache_read_tokens + usage.tokens_out,
        "prompt_tokens_details": {"cached_tokens": usage.cache_read_tokens},
    }
    finish = "tool_calls" if calls else "stop"
    if not stream:
        message: dict[str, Any] = {"role": "assistant", "content": text}
        if calls:
            message["tool_calls"] = calls
        return json_reply({"id": ident, "object": "chat.completion", "created": created, "model": model, "choices": [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}], "usage": counts}, **note)

    def chunk(delta: dict[str, Any], finish_reason: str | None = None) -> tuple[None, dict[str, Any]]:
        return None, {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [{"index": 0, "delta": delta, "finish_reason": finish_reason, "logprobs": None}]}

    events: list[tuple[None, Any]] = [chunk({"role": "assistant", "content": ""})]
    if text:
        events.append(chunk({"content": text}))
    for i, call in enumerate(calls):
        events.append(chunk({"tool_calls": [{"index": i, **call}]}))
    events.append(chunk({}, finish))
    if include_usage:
        events.append((None, {"id": ident, "object": "chat.completion.chunk", "created": created, "model": model, "choices": [], "usage": counts}))
    events.append((None, "[DONE]"))
    return sse_reply(events, **note)


def is_aider(body: dict[str, Any]) -> bool:
    """aider's main request: no tools, and a system prompt teaching its SEARCH/REPLACE blocks."""
    for message in body.get("messages") or []:
        if isinstance(message, dict) and message.get("role") == "system" and "<<<<<<< SEARCH" in str(message.get("content") or ""):
            return True
    return False


def _aider_retry(conv: Any, messages: list[dict[str, Any]]) -> str | None:
    """aider's reflection after a SEARCH block that matched no lines: the script's edits that
    failed, sent again widened to the whole lines their old text sits in. aider matches whole
    lines and its first request holds no file; the file it then added to the chat comes with the
    reflection (models/tools.aider_files). An Edit of part of a line (`a - b` -> `a + b`) failed
    under aider alone, where every other harness applied it. A block already whole lines is not
    sent again (aider's own cap on reflections ends a block that still fails)."""
    from benchtape.models.tools import aider_block_groups, aider_files

    said = next((m.get("content") for m in reversed(messages) if m.get("role") == "user"), None)
    if not isinstance(said, str) or "failed to match" not in said:
        return None
    files = aider_files(messages)
    if not files:
        return None
    parts: list[str] = []
    for t in conv.script.turns:
        for block in t.blocks:
            if block.kind == "call" and block.tool in ("Edit", "MultiEdit"):
                # edit by edit: widened, a replace_all is a block for each line it changes (all of them, not the first)
                for plain, widened in zip(aider_block_groups(block), aider_block_groups(block, files)):
                    if _search_of(plain[0]) in said and widened != plain:
                        parts.extend(widened)
    return "\n\n".join(parts) or None


def _search_of(block: str) -> str:
    """The SEARCH section of one aider block (what aider quotes back when it matched nothing)."""
    return block.split("<<<<<<< SEARCH\n", 1)[-1].split("=======\n", 1)[0]


def _aider_turn(playback: Playback, body: dict[str, Any], model: str, stream: bool) -> Reply:
    """aider calls no tools: it applies the edit blocks written in the answer. Its first request
    gets the whole script in one answer (each Edit a SEARCH/REPLACE block, each Write a block with
    an empty SEARCH, every `say:`/think text as prose; Read and Bash steps have nothing to become
    and are left out); a later request (aider's reflection after a block that did not apply) is
    told the script has no more turns."""
    from benchtape.models.tools import aider_blocks
    from benchtape.models.wire import exhausted_text

    messages = [m for m in body.get("messages") or [] if isinstance(m, dict)]
    if playback.script.noop:
        return _turn(model, stream, prompt_of(messages), [], Usage(), False, role="main", outcome="noop")
    conv = playback.main
    retry = _aider_retry(conv, messages)
    if retry:  # not a turn of the script: the edits it already made, in the lines aider can match
        return _turn(model, stream, retry, [], Usage(), False, outcome="turn", role="main", conversation=conv.tag)
    index, turn = playback.take(conv, "aider")
    note = {"role": "main", "conversation": conv.tag, "turn": index}
    if turn is None or index:
        return _turn(model, stream, exhausted_text(len(conv.script.turns), 2), [], Usage(), False, outcome="exhausted", **note)
    parts: list[str] = []
    tokens_in = tokens_out = 0
    for t in conv.script.turns:
        tokens_in, tokens_out = tokens_in + t.usage.tokens_in, tokens_out + t.usage.tokens_out
        for block in t.blocks:
            if block.kind == "call":
                parts.extend(aider_blocks(block))
            elif block.text:
                parts.append(block.text)
    for k in range(1, len(conv.script.turns)):  # the whole script was played in this one answer
        playback.take(conv, ("aider", k))
    return _turn(model, stream, "\n\n".join(parts), [], Usage(tokens_in=tokens_in, tokens_out=tokens_out), False, outcome="turn", line=turn.line, **note)
