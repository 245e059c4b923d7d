"""`{{param}}` placeholders: the bench's declared interface, filled from `--param` or defaults."""

from __future__ import annotations

import re
from typing import Any, Callable

from benchtape.core.errors import BadInput
from benchtape.spec.yamlsrc import LineDict, LineList

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_.-]*)\s*\}\}")


def parse_cli_param(text: str) -> tuple[str, Any]:
    """`k=v`, split on the first `=`; v typed int/float/bool if it parses, else a string."""
    if "=" not in text:
        raise BadInput(f"--param {text!r} has no '='", fix="write --param name=value")
    key, value = text.split("=", 1)
    key = key.strip()
    if not key:
        raise BadInput(f"--param {text!r} has no name", fix="write --param name=value")
    if value == "":
        raise BadInput(f"--param {key}= has no value: empty and null params are not allowed", fix=f"write --param {key}=VALUE, or drop it to use the bench's default")
    return key, typed(value)


def typed(value: str) -> Any:
    if value in ("true", "True"):
        return True
    if value in ("false", "False"):
        return False
    for cast in (int, float):
        try:
            return cast(value)
        except ValueError:
            pass
    return value


def effective_params(declared: dict[str, Any] | None, incoming: dict[str, Any], file: str, line_of: Callable[[str], int | None]) -> dict[str, Any]:
    """Incoming values win over declared defaults; undeclared incoming and nulls are refused."""
    declared = dict(declared or {})
    for name in incoming:
        if name not in declared:
            raise BadInput(
                f"param {name!r} is not declared by this bench",
                file=file,
                fix=f"declare it under params: (e.g. `params: {{{name}: default}}`), or drop --param {name}",
            )
    values = {**declared, **incoming}
    for name, value in values.items():
        if value is None:
            raise BadInput(f'param "{name}" is null — give it a value or remove the declaration', file=file, line=line_of(name), fix=f"set a default under params:, or pass --param {name}=VALUE")
    return values


def substitute(value: Any, params: dict[str, Any], file: str, line: int | None = None) -> Any:
    """Fill placeholders recursively; a value that is exactly one placeholder keeps the param's type."""
    if isinstance(value, str):
        whole = PLACEHOLDER.fullmatch(value.strip())
        if whole:
            return _lookup(whole.group(1), params, file, line)
        if "{{" not in value:
            return value
        return PLACEHOLDER.sub(lambda m: go_text(_lookup(m.group(1), params, file, line)), value)
    if isinstance(value, LineDict):
        out = LineDict()
        out.line, out.key_lines = value.line, dict(getattr(value, "key_lines", {}))
        for k, v in value.items():
            out[k] = substitute(v, params, file, value.line_of(k))
        return out
    if isinstance(value, dict):
        return {k: substitute(v, params, file, line) for k, v in value.items()}
    if isinstance(value, list):
        items = [substitute(v, params, file, getattr(value, "line", line)) for v in value]
        if isinstance(value, LineList):
            out_list = LineList(items)
            out_list.line = value.line
            return out_list
        return items
    return value


def go_text(value: Any) -> str:
    """A param's value as an embedded placeholder renders it in madbench (Go's `%v`): `true`,
    not Python's `True`; `1` for 1.0 and `1e+06` for a million; a list `[a b]`, a map
    `map[k:v]` (keys sorted). `--flag={{strict}}` and `test {{strict}} = true` read the same
    as there."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _go_float(value)
    if value is None:
        return "<nil>"
    if isinstance(value, list):
        return "[" + " ".join(go_text(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_text(value[k])}" for k in sorted(value, key=str)) + "]"
    return str(value)


def _go_float(f: float) -> str:
    """strconv.FormatFloat(f, 'g', -1, 64): the shortest digits that read back as f, with an
    exponent (two digits at least) when it is below -4 or at least 6 (Go's %v)."""
    if f != f:
        return "NaN"
    if f in (float("inf"), float("-inf")):
        return "+Inf" if f > 0 else "-Inf"
    from decimal import Decimal

    sign, digits, exponent = Decimal(repr(f)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # where the decimal point falls in the digits
    minus = "-" if sign else ""
    if f == 0:
        return minus + "0"
    x = point - 1
    if x < -4 or x >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{minus}{mantissa}e{'-' if x < 0 else '+'}{abs(x):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{text}"
    if point >= len(text):
        return minus + text + "0" * (point - len(text))
    return f"{minus}{text[:point]}.{text[point:]}"


def _lookup(name: str, params: dict[str, Any], file: str, line: int | None) -> Any:
    if name not in params:
        raise BadInput(
            f"placeholder {{{{{name}}}}} names a param this bench does not declare",
            file=file,
            line=line,
            fix=f"declare it under params: ({name}: default), or pass --param {name}=VALUE",
        )
    return params[name]
