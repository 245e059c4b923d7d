"""A JSON object with a key twice: every JSON parser here keeps the last value silently, so
which one the author meant is unknown. Documents someone else wrote (an ATIF trajectory, a
verifier's reward.json) are refused when they hold one."""

from __future__ import annotations

import json
import re

_TOKENS = re.compile(r'"(?:[^"\\]|\\.)*"\s*:?|[{}\[\]]')


def duplicate_key(text: str | bytes) -> tuple[str, int] | None:
    """The first key that appears twice in one object, and its line; None when none does.
    (A scan of strings and brackets only: what is not valid JSON is the parser's to refuse.)"""
    if isinstance(text, bytes):
        text = text.decode("utf-8", "replace")
    stack: list[set[str] | None] = []  # a set of keys per open object, None per open array
    for m in _TOKENS.finditer(text):
        token = m.group(0)
        if token == "{":
            stack.append(set())
        elif token == "[":
            stack.append(None)
        elif token in "}]":
            if stack:
                stack.pop()
        elif token.endswith(":") and stack and stack[-1] is not None:
            try:
                key = json.loads(token[:-1].rstrip())
            except ValueError:
                continue
            if key in stack[-1]:
                return str(key), text.count("\n", 0, m.start()) + 1
            stack[-1].add(key)
    return None
