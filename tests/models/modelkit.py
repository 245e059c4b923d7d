"""Test helpers: plain HTTP calls to a scripted model server (stdlib only, like any client)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any


def post(url: str, body: dict[str, Any], timeout: float = 10) -> tuple[int, dict[str, str], bytes]:
    """(status, headers, body) of a JSON POST; HTTP errors are returned, not raised."""
    request = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}, method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, {k.lower(): v for k, v in response.headers.items()}, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, {k.lower(): v for k, v in exc.headers.items()}, exc.read()


def post_json(url: str, body: dict[str, Any], timeout: float = 10) -> tuple[int, Any]:
    status, _, raw = post(url, body, timeout)
    return status, json.loads(raw)


def events(raw: bytes) -> list[tuple[str | None, Any]]:
    """Server-sent events as (event name or None, decoded data) pairs."""
    out = []
    for chunk in raw.decode().split("\n\n"):
        if not chunk.strip():
            continue
        name, data = None, []
        for line in chunk.splitlines():
            if line.startswith("event: "):
                name = line[7:]
            elif line.startswith("data: "):
                data.append(line[6:])
        text = "\n".join(data)
        out.append((name, text if text == "[DONE]" else json.loads(text)))
    return out
