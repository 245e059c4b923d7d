"""Search over what the agents were told and did: prompts, messages, final outputs, tool inputs
and outputs, newest session first.

The viewer never writes, so there is no full-text index to keep (SQLite's FTS5 would be a
table written beside the history): each search scans the actions of a batch of sessions at a
time with `LIKE` (on the primary key's prefix: one batch costs what its sessions' actions
weigh, not the store's), keeps the sessions with a hit, and stops when a page is full or
its time budget is spent, handing back where to go on. `benchmarks/view.py` measures it on a
1 GB store.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchtape.app.sessions import BrowsingStore, actions_like, dumps, older_session_ids

# kind → (the field searched, what a reader calls it)
SEARCHED: dict[str, tuple[str, str]] = {
    "session.started": ("prompt", "prompt"),
    "message.user": ("text", "user message"),
    "message.assistant": ("text", "assistant message"),
    "final_output": ("text", "final output"),
    "tool.call": ("input", "tool input"),
    "tool.result": ("output", "tool output"),
    "subagent.spawned": ("prompt", "subagent prompt"),
}
BATCH = 200  # sessions scanned per query
PER_SESSION = 3  # hits shown per session (the rest counted)
CONTEXT = 70  # characters of a snippet on each side of the match


@dataclass(frozen=True)
class Hit:
    seq: int
    kind: str
    where: str  # "tool output", "prompt", …
    tool: str | None
    before: str
    match: str
    after: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class SessionHits:
    session_id: str
    hits: list[Hit] = field(default_factory=list)
    count: int = 0  # every hit in the session, shown or not

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "count": self.count, "hits": [h.to_dict() for h in self.hits]}


@dataclass
class Found:
    query: str
    sessions: list[SessionHits]
    scanned: int  # sessions looked at
    seconds: float
    next_before: str | None  # where the next page starts (None: nothing older left to search)

    def to_dict(self) -> dict[str, Any]:
        return {"query": self.query, "sessions": [s.to_dict() for s in self.sessions], "scanned_sessions": self.scanned, "seconds": round(self.seconds, 4), "next_before": self.next_before}


def like_pattern(query: str) -> str:
    """The query as the stored JSON spells it (quotes and backslashes escaped, other text as
    is: orjson writes UTF-8), with LIKE's wildcards escaped by `^`."""
    spelled = orjson.dumps(query).decode()[1:-1]
    return "%" + spelled.replace("^", "^^").replace("%", "^%").replace("_", "^_") + "%"


def search(store: BrowsingStore, query: str, *, before: str | None = None, limit: int = 20, budget_s: float = 1.0, controls: bool = False) -> Found:
    """Sessions older than `before` (newest first) whose searched fields hold `query` (case
    folded), up to `limit` of them, scanning for at most about `budget_s` seconds."""
    started = time.perf_counter()
    pattern, folded = like_pattern(query), query.casefold()
    kinds = sorted(SEARCHED)
    found: list[SessionHits] = []
    scanned = 0
    cursor = before
    while True:
        ids = older_session_ids(store, cursor, controls=controls, limit=BATCH)
        if not ids:
            return Found(query, found, scanned, time.perf_counter() - started, None)
        by_session: dict[str, SessionHits] = {}
        for session_id, seq, kind, data in actions_like(store, ids, kinds, pattern):
            hit = _hit(seq, kind, orjson.loads(data), folded)
            if hit is None:
                continue
            got = by_session.setdefault(session_id, SessionHits(session_id))
            got.count += 1
            if len(got.hits) < PER_SESSION:
                got.hits.append(hit)
        for sid in ids:  # newest first, each session's hits in seq order
            scanned += 1
            cursor = sid
            if sid in by_session:
                hits = by_session[sid]
                hits.hits.sort(key=lambda h: h.seq)
                found.append(hits)
                if len(found) >= limit:
                    return Found(query, found, scanned, time.perf_counter() - started, sid)
        if time.perf_counter() - started > budget_s:
            return Found(query, found, scanned, time.perf_counter() - started, cursor)


def _hit(seq: int, kind: str, data: dict[str, Any], folded: str) -> Hit | None:
    """The match in the action's searched field (the LIKE may have matched a key or another
    field); None when the field does not hold it."""
    key, where = SEARCHED[kind]
    value = data.get(key)
    if value is None:
        return None
    text = value if isinstance(value, str) else dumps(value)
    at = text.casefold().find(folded)
    if at < 0:
        return None
    end = at + len(folded)
    before = text[max(0, at - CONTEXT) : at]
    after = text[end : end + CONTEXT]
    return Hit(seq, kind, where, data.get("tool") if kind == "tool.call" else None, ("…" if at > CONTEXT else "") + before, text[at:end], after + ("…" if end + CONTEXT < len(text) else ""))
