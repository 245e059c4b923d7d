"""A harness's JSON under HOME (its launch plan's `home_json`: the first-run answers of a tool),
merged into what is there before it starts: what staging wrote stays, the keys are laid over."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Mapping

import orjson

from benchtape.core.jsonobjects import merge_json


def seed_home(home: Path, seed: Mapping[str, Mapping[str, Any]]) -> None:
    """Merge each document into its JSON file under HOME (a file that is not a JSON object is replaced)."""
    for rel, doc in seed.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        old: Any = {}
        if path.is_file():
            try:
                old = orjson.loads(path.read_bytes())
            except orjson.JSONDecodeError:
                old = {}
        # as the tools write their own (indented, a final newline): a file one only re-saves is unchanged
        path.write_bytes(orjson.dumps(merge_json(old if isinstance(old, dict) else {}, dict(doc)), option=orjson.OPT_INDENT_2) + b"\n")
