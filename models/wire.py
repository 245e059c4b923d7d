"""What every API answer is made of: a status, a body, headers, and a note for the request log."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

import orjson

from benchtape.core.judgments import SCRIPTED_MARK

EXHAUSTED = (
    SCRIPTED_MARK + " The script has no more turns: it had {turns} and the agent asked "
    "for turn {asked}. Add steps to the script (or end the session on a `say:`)."
)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b"{}"
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait (interruptibly) before answering
    note: dict[str, Any] = field(default_factory=dict)  # role, turn, outcome: for the request log


def json_reply(value: Any, status: int = 200, **note: Any) -> Reply:
    return Reply(status=status, body=orjson.dumps(value), note=note)


def sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """Server-sent events: `event: <name>` (when named) and `data: <json>` per event."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        payload = data if isinstance(data, str) else orjson.dumps(data).decode()
        out.append(f"{head}data: {payload}\n\n")
    return "".join(out).encode()


def sse_reply(events: Iterable[tuple[str | None, Any]], **note: Any) -> Reply:
    return Reply(body=sse(events), content_type="text/event-stream", headers={"Cache-Control": "no-cache"}, note=note)


def exhausted_text(turns: int, asked: int) -> str:
    return EXHAUSTED.format(turns=turns, asked=asked)
