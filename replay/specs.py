"""Check specs as stored in verdict rows, back into `CheckSpec`s, and what they depend on.

A verdict row keeps the canonical spec it was graded with (`CheckSpec.to_dict()`), so a
re-grading months later can rebuild exactly that check rather than whatever the bench
file says today. Knowing what a spec depends on outside the session (a workspace, a
script file) is what lets `grade` say COULD NOT RE-GRADE instead of a silent verdict.
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any, Iterator

from benchtape.checks.registry import CheckConfigError, lookup
from benchtape.core.results import CheckSpec


def spec_from_dict(d: dict[str, Any]) -> CheckSpec:
    """The inverse of `CheckSpec.to_dict()`: `spec_from_dict(s.to_dict()).to_dict() == s.to_dict()`."""
    if not isinstance(d, dict) or not isinstance(d.get("type"), str):
        raise ValueError(f"not a stored check spec: {d!r}")
    return CheckSpec(
        type=d["type"],
        value=d.get("value"),
        args=dict(d.get("args") or {}),
        config=dict(d.get("config") or {}),
        weight=float(d.get("weight", 1.0)),
        threshold=d.get("threshold"),
        metric=d.get("metric"),
        readout=bool(d.get("readout", False)),
        checks=tuple(spec_from_dict(c) for c in d.get("checks") or ()),
        inline=d.get("inline"),
        transform=d.get("transform"),
    )


def walk(spec: CheckSpec) -> Iterator[CheckSpec]:
    """The spec and every descendant, depth first."""
    yield spec
    for child in spec.checks:
        yield from walk(child)


def reads_workspace(spec: CheckSpec) -> bool:
    """Whether the check (or any child of a composite) reads the session's final workspace."""
    for s in walk(spec):
        try:
            if lookup(s.type).reads_workspace:
                return True
        except CheckConfigError:
            continue
    return False


def script_files(spec: CheckSpec, bench_dir: Path | None) -> list[Path]:
    """Every `file://` script the check (or a child) loads, resolved against the bench's folder."""
    out: list[Path] = []
    for s in walk(spec):
        if isinstance(s.value, str) and s.value.startswith("file://"):
            p = Path(s.value[len("file://") :])
            if not p.is_absolute() and bench_dir is not None:
                p = bench_dir / p
            out.append(p)
    return out


def missing_scripts(spec: CheckSpec, bench_dir: Path | None) -> list[Path]:
    return [p for p in script_files(spec, bench_dir) if not p.is_file()]


@lru_cache(maxsize=4096)
def check_index(path: str) -> int:
    """`checks[3]` → 3 (the order checks run in); unknown shapes sort last. Cached: a pass
    sorts every session's verdicts by it, and they name the same few paths."""
    try:
        return int(path[path.index("[") + 1 : path.index("]")])
    except ValueError:
        return 1 << 30
