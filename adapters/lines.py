"""Reading native JSONL lines without ever crashing on them.

Every adapter parser gets its input one line at a time from a process that may be
killed mid-write, so a line may be cut short, may not be JSON, or may be JSON of a
shape nobody has seen. These helpers turn each of those into a value the parser can
keep as an `adapter.warning` instead of an exception.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Iterator

import orjson

from adapters.base import warning
from recorder.model import Action

NOT_JSON = "not a JSON line (a truncated last line of a killed process?)"


def split_lines(text: str) -> Iterator[str]:
    """The non-blank lines of `text`, so `feed` accepts one line or a whole chunk alike. Split
    on newlines only: U+2028, U+2029 and U+0085 may sit inside a JSON string of one line."""
    if "\n" not in text:  # one line, as every reader passes: no copies
        if text and not text.isspace():
            yield text
        return
    for line in text.split("\n"):
        if line.endswith("\r"):
            line = line[:-1]
        if line and not line.isspace():
            yield line


class LineParser:
    """A streaming parser's `feed`: one line or a whole chunk, each non-blank line to `_line`."""

    def feed(self, line: str) -> list[Action]:
        out: list[Action] = []
        for one in split_lines(line):
            out.extend(self._line(one))
        return out

    def _line(self, line: str) -> list[Action]:
        raise NotImplementedError


def decode(line: str) -> dict[str, Any] | None:
    """The JSON object on `line`, or None when the line is not a JSON object."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def epoch(timestamp: Any) -> float:
    """Epoch seconds of an ISO-8601 timestamp; 0.0 (= let the recorder stamp it) when absent or odd."""
    if not isinstance(timestamp, str) or not timestamp:
        return 0.0
    try:
        return datetime.fromisoformat(timestamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return 0.0


def guarded(handle: Callable[[dict[str, Any], str], list[Action]], event: dict[str, Any], line: str) -> list[Action]:
    """Run one event handler; a field of an unexpected shape becomes a warning, never a crash."""
    try:
        return handle(event, line)
    except (KeyError, TypeError, AttributeError, ValueError, IndexError) as exc:
        return [warning(f"unexpected shape of a {event.get('type')!r} event ({type(exc).__name__}: {exc})", line)]


def type_name(value: Any) -> str:
    """The YAML-facing name of a value's type, for config error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int):
        return "int"
    if isinstance(value, float):
        return "float"
    if isinstance(value, str):
        return "string"
    if isinstance(value, (list, tuple)):
        return "list"
    if isinstance(value, dict):
        return "map"
    return type(value).__name__
