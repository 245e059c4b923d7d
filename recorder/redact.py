"""Secrets never reach the store, a report or an error in clear."""

from __future__ import annotations

import json
import re
from typing import Any, Callable, Iterable, Mapping

REDACTED = "[REDACTED]"
SECRET_NAME = re.compile(r".*(_API_KEY|_TOKEN)$")
MIN_SECRET_LEN = 4


def secret_values(env: Mapping[str, str], extra_names: Iterable[str] = ()) -> list[str]:
    """Values of env vars named *_API_KEY, *_TOKEN, or listed by the bench as secret."""
    names = set(extra_names)
    values = {v for k, v in env.items() if (SECRET_NAME.match(k) or k in names) and v and len(v) >= MIN_SECRET_LEN}
    return sorted(values, key=len, reverse=True)


def redactor(secrets: Iterable[str]) -> Callable[[str], str]:
    """A function replacing each secret (raw or JSON-escaped) with [REDACTED]."""
    forms: list[str] = []
    for s in secrets:
        forms.append(s)
        escaped = json.dumps(s)[1:-1]
        if escaped != s:
            forms.append(escaped)
    if not forms:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(f) for f in sorted(set(forms), key=len, reverse=True)))
    return lambda text: pattern.sub(REDACTED, text)


def redact_json(doc: Any, redact: Callable[[str], str] | None) -> Any:
    """A JSON-able document with every secret redacted (its JSON text passed through `redact`).

    Reports carry what checks computed (exec output, evidence) beside what the store
    already redacted, so a report row is redacted as a whole before it is written.
    """
    if redact is None:
        return doc
    import orjson

    text = orjson.dumps(doc, default=str).decode()
    cleaned = redact(text)
    return doc if cleaned == text else orjson.loads(cleaned)
