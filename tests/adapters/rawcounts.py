"""Counts taken straight from the native files, written apart from the adapters.

Each function reads raw JSON with plain dict access and knows nothing of actions, so a
test that compares these numbers with `project(actions)` checks the adapter against
the file, not against itself. Where the two must agree on a rule (which tools are
spawns, which results are errors), the rule is restated here from the format's
documentation, not imported.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Counts:
    calls: Counter = field(default_factory=Counter)  # thread -> tool calls (spawns and skills excluded)
    errors: int = 0  # results of those calls that say they failed
    subagents: set = field(default_factory=set)  # threads of user subagents
    skills: int = 0
    cost: float | None = None
    tokens: dict[str, int] = field(default_factory=dict)
    turns: int | None = None
    final: str | None = None


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _max_usage(per_message: dict[str, dict[str, int]], key: str, usage: dict[str, Any]) -> None:
    names = {
        "tokens_in": "input_tokens",
        "tokens_out": "output_tokens",
        "cache_read_tokens": "cache_read_input_tokens",
        "cache_write_tokens": "cache_creation_input_tokens",
    }
    seen = per_message.setdefault(key, {})
    for mine, theirs in names.items():
        if isinstance(usage.get(theirs), int):
            seen[mine] = max(seen.get(mine, 0), usage[theirs])


def _sum(per_message: dict[str, dict[str, int]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for seen in per_message.values():
        for k, v in seen.items():
            out[k] = out.get(k, 0) + v
    return out


# ---------------------------------------------------------------- Claude


def _claude_blocks(c: Counts, kinds: dict[str, str], message: dict[str, Any], thread: str, seen: set) -> None:
    content = message.get("content")
    if not isinstance(content, list):
        return
    for b in content:
        if b.get("type") == "tool_use" and b["id"] not in seen:
            seen.add(b["id"])
            if b["name"] in ("Task", "Agent"):
                c.subagents.add(b["id"])
                kinds[b["id"]] = "spawn"
            elif b["name"] == "Skill":
                c.skills += 1
                kinds[b["id"]] = "skill"
            else:
                c.calls[thread] += 1
                kinds[b["id"]] = "call"
        if b.get("type") == "tool_result" and b.get("is_error") is True and kinds.get(b["tool_use_id"]) == "call":
            if ("r", b["tool_use_id"]) not in seen:
                seen.add(("r", b["tool_use_id"]))
                c.errors += 1


def claude_stream(path: Path, *, with_result: bool = True) -> Counts:
    c = Counts()
    kinds: dict[str, str] = {}
    seen: set = set()
    per_message: dict[str, dict[str, int]] = {}
    for row in _rows(path):
        if row["type"] in ("assistant", "user"):
            thread = row.get("parent_tool_use_id") or "main"
            _claude_blocks(c, kinds, row["message"], thread, seen)
            m = row["message"]
            if row["type"] == "assistant" and m.get("model") != "<synthetic>":
                _max_usage(per_message, m["id"], m.get("usage") or {})
        if row["type"] == "result" and with_result:
            c.cost = row.get("total_cost_usd")
            c.turns = row.get("num_turns")
            c.final = row.get("result")
            tokens: dict[str, int] = {}
            for usage in row["modelUsage"].values():
                for mine, theirs in (
                    ("tokens_in", "inputTokens"),
                    ("tokens_out", "outputTokens"),
                    ("cache_read_tokens", "cacheReadInputTokens"),
                    ("cache_write_tokens", "cacheCreationInputTokens"),
                ):
                    tokens[mine] = tokens.get(mine, 0) + usage[theirs]
            c.tokens = tokens
    if not with_result:
        c.tokens = _sum(per_message)
    return c


def claude_transcript(files: list[Path]) -> Counts:
    """The session file first, then sidechains; Warmup and acompact agents spend tokens but are no thread."""
    c = Counts()
    kinds: dict[str, str] = {}
    seen: set = set()
    per_message: dict[str, dict[str, int]] = {}
    agent_of_spawn: dict[str, str] = {}

    def usage(entry: dict[str, Any]) -> None:
        m = entry["message"]
        if m.get("model") != "<synthetic>":
            key = m["id"] + ("/" + entry["requestId"] if entry.get("requestId") else "")
            _max_usage(per_message, key, m.get("usage") or {})

    for i, path in enumerate(files):
        rows = _rows(path)
        internal = path.name.startswith("agent-acompact") or (
            i > 0 and rows and rows[0].get("type") == "user" and rows[0]["message"].get("content") == "Warmup"
        )
        thread = "main"
        if i > 0:
            agent_id = path.stem[len("agent-"):]
            thread = agent_of_spawn.get(agent_id, f"agent-{agent_id}")
        for row in rows:
            entries = []
            if row.get("type") in ("user", "assistant"):
                entries.append((row, thread))
            if row.get("type") == "progress" and row["data"].get("type") == "agent_progress":
                entries.append((row["data"]["message"], row["parentToolUseID"]))
                agent_of_spawn[row["data"]["agentId"]] = row["parentToolUseID"]
            for entry, where in entries:
                if entry["type"] == "assistant":
                    usage(entry)
                if internal:
                    continue
                _claude_blocks(c, kinds, entry["message"], where, seen)
                result = entry.get("toolUseResult")
                if isinstance(result, dict) and result.get("agentId"):
                    for b in entry["message"]["content"]:
                        if b.get("type") == "tool_result" and kinds.get(b["tool_use_id"]) == "spawn":
                            agent_of_spawn[result["agentId"]] = b["tool_use_id"]
    c.tokens = _sum(per_message)
    return c


# ---------------------------------------------------------------- Codex


def codex_exec(path: Path) -> Counts:
    c = Counts()
    tool_items = {"command_execution", "file_change", "mcp_tool_call", "web_search", "todo_list"}
    ids: set[str] = set()
    tokens = {"tokens_in": 0, "tokens_out": 0, "cache_read_tokens": 0}
    turns = 0
    for row in _rows(path):
        if row["type"].startswith("item.") and row["item"]["type"] in tool_items:
            ids.add(row["item"]["id"])
            if row["type"] == "item.completed" and row["item"]["type"] == "command_execution":
                c.errors += row["item"].get("exit_code") not in (0, None)
        if row["type"] == "item.completed" and row["item"]["type"] == "agent_message":
            c.final = row["item"]["text"]
        if row["type"] == "turn.completed":
            turns += 1
            u = row["usage"]
            tokens["tokens_in"] += u["input_tokens"] - u["cached_input_tokens"]
            tokens["cache_read_tokens"] += u["cached_input_tokens"]
            tokens["tokens_out"] += u["output_tokens"]
    c.calls["main"] = len(ids)
    c.tokens, c.turns = tokens, turns
    return c


def codex_rollout(path: Path) -> Counts:
    c = Counts()
    names: dict[str, str] = {}
    last_total: dict[str, Any] | None = None
    turns = 0
    for row in _rows(path):
        p = row.get("payload") or {}
        if row["type"] == "response_item" and p["type"] in ("function_call", "custom_tool_call", "local_shell_call"):
            names[p["call_id"]] = p.get("name", "local_shell")
            if p.get("name") != "spawn_agent":
                c.calls["main"] += 1
        if row["type"] == "response_item" and p["type"] == "web_search_call":
            c.calls["main"] += 1
        if row["type"] == "event_msg" and p["type"] == "exec_command_end" and names.get(p["call_id"]) == "exec_command":
            c.errors += p["exit_code"] != 0
        if row["type"] == "event_msg" and p["type"] == "patch_apply_end":
            c.errors += p["success"] is False
        if row["type"] == "event_msg" and p["type"] == "collab_agent_spawn_end":
            c.subagents.add(p["new_thread_id"])
        if row["type"] == "event_msg" and p["type"] == "token_count" and p.get("info"):
            last_total = p["info"]["total_token_usage"]
        if row["type"] == "event_msg" and p["type"] == "task_complete":
            turns += 1
    if last_total is not None:
        c.tokens = {
            "tokens_in": last_total["input_tokens"] - last_total["cached_input_tokens"],
            "cache_read_tokens": last_total["cached_input_tokens"],
            "tokens_out": last_total["output_tokens"],
        }
    c.turns = turns or None
    return c
