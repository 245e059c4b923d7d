"""Units a user writes: Go-style durations (`300s`, `1m30s`, `1500ms`)."""

from __future__ import annotations

import re
from typing import Any

_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|us|µs|ns|s|m|h)")


def parse_duration(value: Any) -> float | None:
    """Go-style durations (`300s`, `1m30s`, `1500ms`) in seconds; None when it has no unit."""
    if isinstance(value, bool) or not isinstance(value, str):
        return None
    text = value.strip()
    if not text or not _DURATION.fullmatch(text) and not re.fullmatch(r"(?:\d+(?:\.\d+)?(?:ms|us|µs|ns|s|m|h))+", text):
        return None
    scale = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
    return sum(float(n) * scale[u] for n, u in _DURATION.findall(text))


_NUMBER = re.compile(r"\s*\d+(?:\.\d+)?\s*")
_WORDS = re.compile(r"\s*(\d+(?:\.\d+)?)\s*(milliseconds?|msecs?|seconds?|secs?|minutes?|mins?|hours?|hrs?)\s*", re.IGNORECASE)
_UNIT_OF = {"ms": "ms", "mi": "m", "se": "s", "ho": "h", "hr": "h"}


def unitless(value: Any) -> bool:
    """A bare number (`15`, `"2.5"`): a duration written without its unit."""
    return not isinstance(value, bool) and (isinstance(value, (int, float)) or (isinstance(value, str) and _NUMBER.fullmatch(value) is not None))


def duration_example(value: Any) -> str:
    """How `value` is written as a duration: `"15m"` for `15 minutes`, `"15s"` for a bare 15, else
    `"300s"`. What an error's fix suggests: never the value with an `s` stuck on (`15 minutess`)."""
    if unitless(value):
        return f'"{str(value).strip()}s"'
    words = _WORDS.fullmatch(str(value))
    if words:
        number, unit = words.groups()
        return f'"{number}{_UNIT_OF[unit.lower()[:2]]}"'
    return '"300s"'
