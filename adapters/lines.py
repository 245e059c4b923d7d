"""Reading native JSONL lines without ever crashing on them.

Every adapter parser gets its input one line at a time from a process that may be
killed mid-write, so a line may be cut short, may not be JSON, or may be JSON of a
shape nobody has seen. These helpers turn each of those into a value the parser can
keep as an `adapter.warning` instead of an exception.

Lines are split on "\n" only: JSONL escapes nothing else, so a U+2028, U+2029 or U+0085
inside a JSON string belongs to its line (str.splitlines would cut the line there). A
line longer than MAX_LINE_BYTES is not parsed: `read_lines` keeps its first CUT_HEAD
bytes with a marker, and `feed` turns either form into a warning.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, BinaryIO, Callable, Iterator

from benchtape.adapters.base import warning
from benchtape.core.errors import type_name
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action

NOT_JSON = "not a JSON line (a truncated last line of a killed process?)"
MAX_LINE_BYTES = 16 * 1024 * 1024
CUT_HEAD = 64 * 1024
_CUT = re.compile(r"…\[benchtape: a line of (\d+) bytes, cut to its first \d+\]$")


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


def read_lines(stream: BinaryIO, digest: Any = None) -> Iterator[str]:
    """The non-blank lines of a binary stream, split on b"\\n" only, none longer than MAX_LINE_BYTES.

    A longer line is never held whole: its first CUT_HEAD bytes are kept with a marker that
    `feed` recognises, and the rest is read through in chunks (hashed, when a digest is given).
    """
    while True:
        chunk = stream.readline(MAX_LINE_BYTES + 1)
        if not chunk:
            return
        if digest is not None:
            digest.update(chunk)
        if len(chunk) > MAX_LINE_BYTES and not chunk.endswith(b"\n"):
            total, head = len(chunk), chunk[:CUT_HEAD]
            del chunk
            while True:
                more = stream.readline(1 << 20)
                if not more:
                    break
                if digest is not None:
                    digest.update(more)
                total += len(more)
                if more.endswith(b"\n"):
                    total -= 1
                    break
            yield head.decode("utf-8", "replace") + f"…[benchtape: a line of {total} bytes, cut to its first {CUT_HEAD}]"
            continue
        line = chunk.decode("utf-8", "replace").rstrip("\n").rstrip("\r")
        if line.strip():
            yield line


class LineParser:
    """A streaming parser's `feed`: one line or a whole chunk, each non-blank line to `_line`.

    Whatever a line holds, `feed` returns actions: a line too long to parse, or one the
    parser fails on (a `type` that is a list, say), is kept as an `adapter.warning` with
    its raw text, and the lines after it are read as usual.
    """

    def feed(self, line: str) -> list[Action]:
        if "\n" not in line:  # one line, as every reader passes (split_lines' own fast path, without its generator)
            return self._read(line) if line and not line.isspace() else []
        out: list[Action] = []
        for one in split_lines(line):
            out.extend(self._read(one))
        return out

    def _read(self, line: str) -> list[Action]:
        if len(line) > MAX_LINE_BYTES:
            return [warning(f"a line of {len(line):,} characters is longer than the {MAX_LINE_BYTES:,} a line is parsed up to; kept raw, not parsed", line)]
        cut = _CUT.search(line, max(0, len(line) - 120)) if line.endswith("]") else None  # the marker's last char: a JSON line ends with "}"
        if cut is not None:
            return [warning(f"a line of {int(cut.group(1)):,} bytes is longer than the {MAX_LINE_BYTES:,} a line is read up to; its first {CUT_HEAD:,} bytes are kept, not parsed", line)]
        try:
            return self._line(line)
        except Exception as exc:  # noqa: BLE001 - one odd line must never lose the session
            kind = (decode(line) or {}).get("type")
            why = f"its `type` is a {type_name(kind)}, not a string" if kind is not None and not isinstance(kind, str) else f"{type(exc).__name__}: {exc}"
            return [warning(f"{type(self).__name__} could not read this line ({why}); kept raw", line)]

    def _line(self, line: str) -> list[Action]:
        raise NotImplementedError


def finish_safely(parser: Any) -> list[Action]:
    """A parser's end-of-stream actions; should it fail, a warning instead of the exception."""
    try:
        actions: list[Action] = parser.finish()
        return actions
    except Exception as exc:  # noqa: BLE001
        return [warning(f"{type(parser).__name__} failed at the end of the stream ({type(exc).__name__}: {exc})", "")]



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


