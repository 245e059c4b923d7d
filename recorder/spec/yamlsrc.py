"""YAML that remembers where each key came from, so a bad key's error names its line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from recorder.errors import BadInput


class LineDict(dict):
    """A mapping that knows its own line and each key's line (1-based)."""

    line: int | None = None
    key_lines: dict[str, int]

    def line_of(self, key: str) -> int | None:
        return getattr(self, "key_lines", {}).get(key, self.line)


class LineList(list):
    line: int | None = None


class _Loader(getattr(yaml, "CSafeLoader", yaml.SafeLoader)):  # libyaml when present: ~5x faster on big benches
    pass


def _refuse_duplicates(node: yaml.MappingNode) -> None:
    """A key written twice in one mapping is an error (YAML would keep the last one, silently).
    Keys a `<<:` merge brings in may be overridden; only the mapping's own keys are checked."""
    seen: dict[str, int] = {}
    for key_node, _ in node.value:
        if not isinstance(key_node, yaml.ScalarNode) or key_node.tag == "tag:yaml.org,2002:merge":
            continue
        line = key_node.start_mark.line + 1
        if key_node.value in seen:
            raise BadInput(f"duplicate key `{key_node.value}` (first set at line {seen[key_node.value]})", line=line, fix="keep one of them: YAML would silently keep only the last")
        seen[key_node.value] = line


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    _refuse_duplicates(node)
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (list, dict)):
            raise BadInput("a mapping key must be a scalar", line=key_node.start_mark.line + 1)
        key = str(key) if not isinstance(key, str) else key
        out[key] = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    return out


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)


def load_yaml_text(text: str, file: str) -> Any:
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except BadInput as exc:
        raise BadInput(exc.what, file=file, line=exc.line, fix=exc.fix) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        what = f"YAML syntax error: {exc.problem or exc}" + (f" ({exc.context})" if exc.context else "")
        raise BadInput(what, file=file, line=line, fix="fix the YAML syntax at that line (indentation, quoting, a missing ':')") from None
    except yaml.YAMLError as exc:
        raise BadInput(f"YAML error: {exc}", file=file, fix="fix the YAML syntax") from None


def load_yaml_file(path: Path) -> Any:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise BadInput("no such file", file=str(path), fix="check the path") from None
    except IsADirectoryError:
        raise BadInput("is a directory, not a YAML file", file=str(path)) from None
    except UnicodeDecodeError:
        raise BadInput("not UTF-8 text", file=str(path), fix="save the file as UTF-8") from None
    return load_yaml_text(text, str(path))


def line_of(node: Any, key: str | None = None) -> int | None:
    if isinstance(node, LineDict):
        return node.line_of(key) if key is not None else node.line
    return getattr(node, "line", None)


def plain(value: Any) -> Any:
    """Deep copy into plain dicts and lists (for JSON and hashing)."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value
