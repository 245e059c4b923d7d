"""typer's value coercion, built when a value needs it: pydantic is imported by a command that
is given a value to convert, not by every command.

typer (0.2x) coerces each parameter's value through a pydantic TypeAdapter, which it builds
(importing pydantic, ~60 ms, half of a bare `benchtape sessions`) the first time the parameter
is processed, even when the value is None (the option was not given) and typer's own answer
never reads the adapter, or the value is a default already of the parameter's type, or a path
(whose adapter only makes `Path(value)` before typer's own checks), or a list of strings or
paths (`benchtape run BENCH…`: ~50 ms of every run). `install` wraps typer's
builder so that those answers are given as typer gives them, and every other value goes to
typer's own coercion, built then: same values, same errors.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


class DeferredCoercion:
    """One parameter's coercion: typer's, built on the first value that needs it."""

    __slots__ = ("built", "descriptor")

    def __init__(self, descriptor: Any) -> None:
        self.descriptor = descriptor
        self.built: Any = None

    def unchanged(self, value: Any) -> bool:
        """True when typer's adapter would give `value` back as it is: a str for a str, or an
        int (a float) for an int (a float) within the parameter's bounds (a default, mostly)."""
        info = self.descriptor.parameter_info
        kind = self.descriptor.annotation
        if kind not in (str, int, float) or type(value) is not kind or info.parser is not None or self.descriptor.file_annotation is not None:
            return False
        if kind is str:
            return True
        return (info.min is None or value >= info.min) and (info.max is None or value <= info.max)

    def plain_path(self, value: Any) -> bool:
        """A `Path` option (no parser, no path_type of its own) given a str or a Path."""
        info = self.descriptor.parameter_info
        return self.descriptor.annotation is Path and info.parser is None and info.path_type is None and self.descriptor.file_annotation is None and isinstance(value, (str, Path))

    def plain_items(self, value: Any, param: Any, ctx: Any) -> list[Any] | None:
        """A `list[str]` or `list[Path]` parameter's values (`run`'s benches), as typer's list
        adapter makes them: each item as one value of the item's type is made above, in a list;
        None where any item needs typer's own coercion (its error then names the value)."""
        kind = self.descriptor.annotation
        info = self.descriptor.parameter_info
        if getattr(kind, "__origin__", None) is not list or not isinstance(value, (list, tuple)) or info.parser is not None or self.descriptor.file_annotation is not None:
            return None
        item = kind.__args__[0] if len(kind.__args__) == 1 else None
        if item is str:
            return list(value) if all(type(v) is str for v in value) else None
        if item is not Path or info.path_type is not None:
            return None
        out: list[Any] = []
        for v in value:
            done = _path_as_typer_makes_it(v, info, param, ctx) if isinstance(v, (str, Path)) else None
            if done is None:
                return None
            out.append(done)
        return out

    def coerce(self, value: Any, param: Any, ctx: Any) -> Any:
        multi = param.multiple or param.nargs == -1
        if value is None:  # typer's RuntimeParam.coerce: no value is None, or () for a multi-value
            return () if multi else None
        if multi:
            items = self.plain_items(value, param, ctx)
            if items is not None:
                return items
        if not multi and self.unchanged(value):
            return value
        if not multi and self.plain_path(value):
            done = _path_as_typer_makes_it(value, self.descriptor.parameter_info, param, ctx)
            if done is not None:
                return done
        if self.built is None:
            from typer._coercion import build_runtime_param

            self.built = build_runtime_param(self.descriptor)
        return self.built.coerce(value, param=param, ctx=ctx)


def _path_as_typer_makes_it(value: str | Path, info: Any, param: Any, ctx: Any) -> Path | None:
    """typer's own path coercion (its checks: exists, file_okay, readable, resolve_path, …),
    given the Path its pydantic adapter would make of a str (`Path(value)`, in pydantic's lax
    mode) so that pydantic is not imported for it; None where typer refuses the value, so that
    typer's own coercion words the error with the value as it was typed."""
    try:
        from typer._click.exceptions import BadParameter
        from typer._param_types import coerce_cli_path
    except ImportError:  # another typer: its own coercion, always
        return None
    try:
        done = coerce_cli_path(value if isinstance(value, Path) else Path(value), info, path_type=Path, param=param, ctx=ctx)
    except BadParameter:
        return None
    return done if isinstance(done, Path) else None


def install() -> None:
    """Route typer's per-parameter builder through DeferredCoercion; a typer without that
    builder (before 0.2x, click's own types) is left as it is."""
    import typer.core

    if hasattr(typer.core, "build_runtime_param") and typer.core.build_runtime_param is not DeferredCoercion:
        typer.core.build_runtime_param = DeferredCoercion  # type: ignore[assignment]
