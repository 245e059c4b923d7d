"""Two readings of JSON every room needs: the object on one line (a harness's stream, a
session folder's manifest) and one document laid over another (first-run answers merged
into a tool's settings file). Here so the sandbox, the recorder and every adapter share one."""

from __future__ import annotations

from typing import Any

import orjson


def decode(line: str | bytes) -> dict[str, Any] | None:
    """The JSON object on `line`, or None when the line is not a JSON object."""
    try:
        value = orjson.loads(line)
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def merge_json(old: Any, new: Any) -> Any:
    """`new` laid over `old`: maps merged key by key, lists extended with what they lack
    (benchtape's Stop hook joins the staged hooks, it does not replace them)."""
    if isinstance(old, dict) and isinstance(new, dict):
        out = dict(old)
        for k, v in new.items():
            out[k] = merge_json(old.get(k), v) if k in old else v
        return out
    if isinstance(old, list) and isinstance(new, list):
        return old + [v for v in new if v not in old]
    return new
