"""Where a `generate:` value could be found by someone who should not have it.

A generated value is the answer key. If the agent can find it in its staged tree (a
file's bytes, a file or folder name, a symlink's target) or in its prompt, the bench
measures lookup, not work: the run is refused before any session. If benchtape itself
would print it in a report (a check spec, a reason, evidence), the answer key is
published: the report is refused. The agent deriving the value and saying it is the
point of the bench, so what a session recorded does not count as a report leak.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from benchtape.core.errors import BenchtapeError, ExitCode

CHUNK = 1 << 20


class ReportLeak(BenchtapeError):
    """A generated value would be written into a report; it was not written."""

    exit_code = ExitCode.FAILED

    def render(self) -> str:
        return f"error: {self}"


def find_in_tree(root: Path, values: Mapping[str, str]) -> list[str]:
    """Every place under root a value is findable: `NAME in <where>` (never the value itself)."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            full = os.path.join(dirpath, name)
            rel = os.path.relpath(full, root)
            for var, value in values.items():
                if value in rel:
                    found.append(f"{var} in the path name {rel!r}")
            if os.path.islink(full):
                target = os.readlink(full)
                found.extend(f"{var} in the target of the symlink {rel!r}" for var, value in values.items() if value in target)
            elif name in filenames and os.path.isfile(full):
                found.extend(f"{var} in the content of {rel!r}" for var in _in_file(full, values))
    return found


def find_in_text(text: str, values: Mapping[str, str], where: str) -> list[str]:
    return [f"{var} in {where}" for var, value in values.items() if value and value in text]


def report_leaks(doc: Any, values: Mapping[str, str]) -> list[str]:
    """JSON paths of the report holding a value, except inside what a session recorded."""
    if not values:
        return []
    found: list[str] = []
    if isinstance(doc, dict):
        for key, item in doc.items():
            if key == "results" and isinstance(item, list):
                for i, row in enumerate(item):
                    found.extend(_row_leaks(row, values, f"results[{i}]"))
            else:
                found.extend(_walk(item, values, key))
    else:
        found.extend(_walk(doc, values, "$"))
    return found


def _row_leaks(row: Any, values: Mapping[str, str], path: str) -> list[str]:
    if not isinstance(row, dict):
        return _walk(row, values, path)
    produced = _strings(row.get("session"))
    own = {var: v for var, v in values.items() if not any(v in s for s in produced)}
    return [hit for key, item in row.items() if key != "session" for hit in _walk(item, own, f"{path}.{key}")]


def _walk(node: Any, values: Mapping[str, str], path: str) -> list[str]:
    if isinstance(node, dict):
        return [hit for k, v in node.items() for hit in _walk(v, values, f"{path}.{k}") + _walk(str(k), values, f"{path} (a key)")]
    if isinstance(node, (list, tuple)):
        return [hit for i, v in enumerate(node) for hit in _walk(v, values, f"{path}[{i}]")]
    if node is None or isinstance(node, bool):
        return []
    text = str(node)
    return [f"{var} at {path}" for var, value in values.items() if value and value in text]


def _strings(node: Any) -> Iterable[str]:
    if isinstance(node, dict):
        for k, v in node.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(node, (list, tuple)):
        for v in node:
            yield from _strings(v)
    elif node is not None:
        yield str(node)


def _in_file(path: str, values: Mapping[str, str]) -> list[str]:
    """Names whose value occurs in the file's bytes, read in chunks that overlap by the longest value."""
    needles = {var: v.encode() for var, v in values.items() if v}
    if not needles:
        return []
    keep = max(len(n) for n in needles.values()) - 1
    hits: set[str] = set()
    tail = b""
    try:
        with open(path, "rb") as f:
            while len(hits) < len(needles):
                chunk = f.read(CHUNK)
                if not chunk:
                    break
                window = tail + chunk
                hits.update(var for var, n in needles.items() if var not in hits and n in window)
                tail = window[-keep:] if keep else b""
    except OSError:
        return []
    return sorted(hits)
