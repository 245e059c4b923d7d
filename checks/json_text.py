"""JSON as the checks read and write it: strict on the way in, forgiving on the way out.

Its own module, below the registry, so what runs graders in child processes (their jobs go
out as JSON, their answers come back as JSON) can use it without importing the catalog.
"""

from __future__ import annotations

import json
from typing import Any

import orjson


def loads_json(text: str) -> Any:
    """Strict JSON (no NaN/Infinity); orjson first, the standard library for what it rejects
    but JSON allows (numbers too large for a double)."""
    try:
        return orjson.loads(text)
    except orjson.JSONDecodeError:
        return json.loads(text, parse_constant=_reject_constant)


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def dumps_json(value: Any) -> bytes:
    return orjson.dumps(value, default=str, option=orjson.OPT_NON_STR_KEYS)
