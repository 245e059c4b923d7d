"""Helpers for check tests: specs from YAML-shaped data, and real mock sessions per output.

`Outputs(root)("text")` runs the real mock agent once per distinct final output and
keeps the session, so a parametrized table of outputs costs one subprocess each.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from mocksession import mock_session

from benchtape.checks.registry import CheckContext, build
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result


def spec(obj: Any) -> CheckSpec:
    """A CheckSpec from a mapping or a YAML snippet (children under checks: or assert:)."""
    if isinstance(obj, str):
        obj = yaml.safe_load(obj)
    if isinstance(obj, list):
        obj = obj[0]
    d = dict(obj)
    children = d.pop("checks", None) or d.pop("assert", None) or []
    return CheckSpec(
        type=d.pop("type"),
        value=d.pop("value", None),
        args=d.pop("args", None) or {},
        config=d.pop("config", None) or {},
        weight=float(d.pop("weight", 1.0)),
        threshold=d.pop("threshold", None),
        metric=d.pop("metric", None),
        readout=bool(d.pop("readout", False)),
        checks=tuple(spec(c) for c in children),
        inline=d.pop("inline", None),
        transform=d.pop("transform", None),
    )


def grade(obj: Any, session: Session, ctx: CheckContext | None = None) -> Result:
    s = obj if isinstance(obj, CheckSpec) else spec(obj)
    return build(s).evaluate(session, ctx or CheckContext())


class Outputs:
    """Real mock sessions whose final output is the given text, one agent run per text."""

    def __init__(self, root: Path):
        self.root = root
        self.cache: dict[tuple[str, str], Session] = {}

    def __call__(self, text: str, prompt: str = "fix it") -> Session:
        key = (text, prompt)
        if key not in self.cache:
            self.cache[key] = mock_session(self.root / f"s{len(self.cache)}", [{"say": text}], prompt=prompt)
            assert self.cache[key].final_output == text
        return self.cache[key]
