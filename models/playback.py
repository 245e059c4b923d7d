"""Where a script is while it is being played: which turn each conversation is at.

A harness talks to the model in several conversations: the main agent's, one per
subagent it spawns, and side requests (titles, summaries) that are no conversation at
all. Each conversation plays its own list of turns. A turn is handed out per distinct
history length, so a retried request gets the same turn again instead of skipping one,
and a request the model answers without speaking from the script (Codex's tool search
before an MCP call) can give its turn back.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from benchtape.spec.script import ChatReply, Script, Turn


class Conversation:
    def __init__(self, script: Script, tag: str) -> None:
        self.script = script
        self.tag = tag  # "main", "sub1", ...: stable call ids, readable logs
        self._by_key: dict[Any, int] = {}
        self._next = 0

    def take(self, key: Any) -> tuple[int, Turn | None]:
        """The turn index for a request with this history key, and its turn (None: the script ran out)."""
        index = self._by_key.get(key)
        if index is None:
            index = self._by_key[key] = self._next
            self._next += 1
        turns = self.script.turns
        return index, (turns[index] if index < len(turns) else None)

    def give_back(self, key: Any) -> None:
        """Undo the latest `take` (the request was answered without using its turn)."""
        index = self._by_key.pop(key, None)
        if index is not None and index == self._next - 1:
            self._next -= 1

    @property
    def served(self) -> int:
        return min(self._next, len(self.script.turns))


class Playback:
    """One script being played by one server slot; every method is safe to call from any thread."""

    def __init__(self, script: Script, paths: dict[str, str] | None = None) -> None:
        self.script = script
        self.paths = dict(paths or {})  # a folder as the agent sees it -> the same folder here (a container's /workspace)
        self._lock = threading.Lock()
        self.main = Conversation(script, "main")
        self.subagents = {s.prompt or "": Conversation(s, f"sub{i + 1}") for i, s in enumerate(script.subagents())}
        self._chat_used: set[int] = set()

    def conversation(self, opening: str) -> Conversation:
        """The subagent whose prompt the conversation opened with, else the main agent."""
        for prompt, conv in self.subagents.items():
            if prompt and prompt in opening:
                return conv
        return self.main

    def local(self, path: Path | None) -> Path | None:
        """A path the agent named (its cwd) as this server can read it: an agent in a container
        names /workspace, whose files are in a host folder the script's edits are computed from."""
        if path is None:
            return None
        for inside, here in self.paths.items():
            if path == Path(inside) or Path(inside) in path.parents:
                return Path(here) / path.relative_to(inside)
        return path

    def take(self, conv: Conversation, key: Any) -> tuple[int, Turn | None]:
        with self._lock:
            return conv.take(key)

    def give_back(self, conv: Conversation, key: Any) -> None:
        with self._lock:
            conv.give_back(key)

    def take_chat(self, text: str) -> tuple[int, ChatReply] | None:
        """The first unused reply whose `match:` occurs in the request, else the first unused one without `match:`."""
        with self._lock:
            replies = self.script.chat
            free = [i for i in range(len(replies)) if i not in self._chat_used]
            chosen = next((i for i in free if (match := replies[i].match) is not None and match in text), None)
            if chosen is None:
                chosen = next((i for i in free if replies[i].match is None), None)
            if chosen is None:
                return None
            self._chat_used.add(chosen)
            return chosen, replies[chosen]
