"""How much of a harness's output a session stores.

An agent that prints a gigabyte, or one gigabyte-long line, must not fill the store, take
the recorder's memory, or (past SQLite's 1 GB value limit) make recording fail silently.
So stored output is capped per line and per session; what is over is dropped with a marker
that says how much, the session keeps its last lines (where a harness prints its result
and totals), and it finishes `truncated`, never `ok`.

Configured by environment variables (sizes like `64m`, `1g`, or bytes):
  BENCHTAPE_MAX_OUTPUT   stored output per session (default 64m)
  BENCHTAPE_MAX_LINE     one output line (default 8m); a longer line keeps its head and tail
  BENCHTAPE_MAX_BOX_FILE one file a task's verifier or script writes (default 1g)
  BENCHTAPE_MAX_BOX_MEMORY the memory one process of a verifier at level home takes (default 4g)
"""

from __future__ import annotations

import os
import re
from collections import deque
from dataclasses import dataclass
from typing import Any, Mapping

from benchtape.core.errors import BadInput

MiB = 1 << 20
DEFAULT_MAX_OUTPUT = 64 * MiB  # a real session is a few MB; every reader (grading, show, query) loads it whole
DEFAULT_MAX_LINE = 8 * MiB
MIN_LIMIT = 4096
SQLITE_VALUE_LIMIT = 1_000_000_000  # SQLITE_MAX_LENGTH's default: no line may come near it


def parse_size(value: object, what: str) -> int:
    """`1g`, `512m`, `64k`, `1048576` -> bytes."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmg]?)(?:i?b)?\s*", str(value).lower())
    if not m:
        raise BadInput(f"{what} {value!r} is not a size", fix="write a size like 64m, 1g or a number of bytes")
    return int(float(m.group(1)) * {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30}[m.group(2)])


@dataclass(frozen=True)
class OutputLimits:
    session: int = DEFAULT_MAX_OUTPUT  # bytes of output lines stored per session
    line: int = DEFAULT_MAX_LINE  # bytes of one stored line

    @property
    def tail(self) -> int:
        """Bytes of the last lines kept once a session is over its limit."""
        return max(MIN_LIMIT, min(self.session // 8, 4 * MiB))


DEFAULT_MAX_BOX_FILE = 1 << 30  # one file a verifier (or a task's script) writes; a box's own /tmp holds as much
DEFAULT_MAX_BOX_MEMORY = 4 << 30  # the memory one process of a verifier at level home may take (RLIMIT_DATA)


def box_file_limit(env: Mapping[str, str] | None = None) -> int:
    """The largest file a task's verifier or script may write on this host's disk, in bytes
    (BENCHTAPE_MAX_BOX_FILE, default 1g): a test writing without end must not fill the disk."""
    env = os.environ if env is None else env
    value = parse_size(env.get("BENCHTAPE_MAX_BOX_FILE", DEFAULT_MAX_BOX_FILE), "BENCHTAPE_MAX_BOX_FILE")
    if value < MIN_LIMIT:
        raise BadInput(f"BENCHTAPE_MAX_BOX_FILE={value} is out of range", fix=f"give at least {MIN_LIMIT} bytes")
    return value


def box_memory_limit(env: Mapping[str, str] | None = None) -> int:
    """The memory one process of a task's verifier may take on this host, in bytes
    (BENCHTAPE_MAX_BOX_MEMORY, default 4g; RLIMIT_DATA: what it writes to, not what it only
    reserves, so node's and Go's address-space reservations still start). A test recursing
    without end at structlog's base took 23 GB and the kernel's OOM killer, which picks from
    the whole host; past the limit its allocations fail instead, in that process alone."""
    env = os.environ if env is None else env
    value = parse_size(env.get("BENCHTAPE_MAX_BOX_MEMORY", DEFAULT_MAX_BOX_MEMORY), "BENCHTAPE_MAX_BOX_MEMORY")
    if value < 64 * MiB:
        raise BadInput(f"BENCHTAPE_MAX_BOX_MEMORY={value} is out of range", fix="give at least 64m")
    return value


def output_limits(env: Mapping[str, str] | None = None) -> OutputLimits:
    """The limits in effect (BENCHTAPE_MAX_OUTPUT, BENCHTAPE_MAX_LINE); bad values are BadInput."""
    env = os.environ if env is None else env
    session = parse_size(env.get("BENCHTAPE_MAX_OUTPUT", DEFAULT_MAX_OUTPUT), "BENCHTAPE_MAX_OUTPUT")
    line = parse_size(env.get("BENCHTAPE_MAX_LINE", DEFAULT_MAX_LINE), "BENCHTAPE_MAX_LINE")
    for name, v in (("BENCHTAPE_MAX_OUTPUT", session), ("BENCHTAPE_MAX_LINE", line)):
        if not MIN_LIMIT <= v <= SQLITE_VALUE_LIMIT // 2:
            raise BadInput(f"{name}={v} is out of range", fix=f"give between {MIN_LIMIT} bytes and {SQLITE_VALUE_LIMIT // 2 // MiB}m")
    return OutputLimits(session=session, line=min(line, session))


class OutputBudget:
    """What of a session's output is stored: every line until the session's limit, then only
    the last `limits.tail` bytes of lines (a harness prints its result and totals last)."""

    def __init__(self, limits: OutputLimits):
        self.limits = limits
        self.stored = 0
        self.first_over: int | None = None  # the first line not stored in order
        self.dropped_lines = 0
        self.dropped_bytes = 0
        self.tail: deque[tuple[int, Any]] = deque()
        self._tail_bytes = 0
        self.cut_lines = 0  # lines stored cut to the per-line limit

    @property
    def truncated(self) -> bool:
        return self.first_over is not None or self.cut_lines > 0

    def admit(self, line_no: int, line: Any) -> bool:
        """True: store this line now. False: over the limit; it is held in the tail, and the
        oldest held line is dropped when the tail is full."""
        size = len(line.text)
        if line.cut:
            self.cut_lines += 1
        if self.first_over is None and self.stored + size <= self.limits.session:
            self.stored += size
            return True
        if self.first_over is None:
            self.first_over = line_no
        self.tail.append((line_no, line))
        self._tail_bytes += size
        while self._tail_bytes > self.limits.tail and len(self.tail) > 1:
            _, old = self.tail.popleft()
            self._tail_bytes -= len(old.text)
            self.dropped_lines += 1
            self.dropped_bytes += old.size
        return False

    def note(self) -> str | None:
        """The marker stored where the dropped lines were."""
        if self.first_over is None:
            return None
        kept = f"; its last {len(self.tail)} line(s) follow" if self.tail else ""
        return (
            f"output over the limit of {self.limits.session:,} bytes per session (BENCHTAPE_MAX_OUTPUT): "
            f"{self.dropped_lines:,} line(s), {self.dropped_bytes:,} bytes, from line {self.first_over} on were not stored{kept}"
        )
