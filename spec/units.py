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
