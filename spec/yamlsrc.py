"""YAML that remembers where each key came from, so a bad key's error names its line.

A bench or Eval file is input benchtape did not write, so reading one is bounded: the
file is read only if it is a regular file of at most MAX_SOURCE_BYTES, nesting stops at
MAX_DEPTH levels, the document may hold at most MAX_NODES nodes (counted as they are
parsed, so a huge file stops there) and aliases may not expand it past MAX_NODES either (the
"billion laughs"). A key written twice in one mapping is an error naming both lines
(YAML would silently keep the last; madbench's Go decoder refuses it too). The cyclic garbage
collector is paused while a document is read: it found nothing to collect there, and its
passes over the growing tree made a large file's load quadratic (100,000 scenarios: 145 s
instead of 9).
"""

from __future__ import annotations

import gc
import os
import stat
from pathlib import Path
from typing import Any

import yaml

from benchtape.core.errors import BadInput

MAX_SOURCE_BYTES = 4 * 1024 * 1024
MAX_DEPTH = 100
MAX_NODES = 250_000  # a bench of 10,000 scenarios (bench.MAX_SCENARIOS) holds ~100,000
_MERGE_TAG = "tag:yaml.org,2002:merge"
_FLATTEN = "a bench is a few levels deep; flatten this value (or move the data to a file the check reads)"


class LineDict(dict[str, Any]):
    """A mapping that knows its own line and each key's line (1-based), and the text written
    for each value YAML read as a boolean or a number (`written`)."""

    line: int | None = None
    key_lines: dict[str, int | None]
    texts: dict[str, str]  # key -> the plain scalar as written, for values read as bool, int or float

    def line_of(self, key: str) -> int | None:
        return getattr(self, "key_lines", {}).get(key, self.line)


def as_line_dict(node: dict[str, Any]) -> LineDict:
    """A mapping as the loaders read one: a LineDict as it is; a plain dict (built in code,
    not parsed) as one that knows no lines."""
    if isinstance(node, LineDict):
        return node
    out = LineDict(node)
    out.key_lines, out.texts = {}, {}
    return out


class LineList(list[Any]):
    line: int | None = None
    texts: dict[int, str]  # index -> the plain scalar as written, as LineDict's


# YAML 1.1 (PyYAML's reading) and YAML 1.2 (madbench's Go decoder, yaml.v3) disagree on a few
# plain scalars: 1.1 reads y/yes/on/n/no/off (any case) as booleans and 10:30 as a base-60
# number (630); 1.2 reads all of them as strings, and only true/false (three spellings each)
# as booleans. Where a field is a boolean, Go reads yes/no as one too, as PyYAML does; where it
# is any value (a check's needle, a var), madbench reads the string written: `yaml12` gives it.
_YAML12_BOOLS = frozenset({"true", "True", "TRUE", "false", "False", "FALSE"})


def _yaml11_only(value: Any, text: str) -> bool:
    """Whether YAML 1.2 would have read this plain scalar as the string it is written as."""
    if isinstance(value, bool):
        return text not in _YAML12_BOOLS
    return isinstance(value, (int, float)) and ":" in text


def yaml12(container: Any, key: Any) -> Any:
    """`container[key]` as madbench reads a value of any type: a plain scalar YAML 1.1 alone
    reads as a boolean or a base-60 number is the string written (`value: no` is the needle
    "no", never false; `value: 10:30` is "10:30", never 630); so is such an item of a list."""
    value = container[key]
    text = getattr(container, "texts", {}).get(key)
    if text is not None and _yaml11_only(value, text):
        return text
    if isinstance(value, LineList) and getattr(value, "texts", None):
        out = LineList(yaml12(value, i) for i in range(len(value)))
        out.line, out.texts = value.line, {}
        return out
    return value


def yaml12_values(mapping: dict[str, Any]) -> dict[str, Any]:
    """A mapping of values of any type (`vars:`) with each one as `yaml12` reads it."""
    if not getattr(mapping, "texts", None):
        return mapping
    out = LineDict({key: yaml12(mapping, key) for key in mapping})
    out.line, out.key_lines, out.texts = getattr(mapping, "line", None), dict(getattr(mapping, "key_lines", {})), {}
    return out


def written(container: Any, key: Any) -> str | None:
    """The text written for `container[key]` when YAML read it as a boolean or a number (a
    field that is a string in madbench's schema, `prompt: 42`, takes it as written)."""
    return getattr(container, "texts", {}).get(key)


# libyaml parses ~20x faster than PyYAML's Python parser and stops nesting at 1,000 levels
# itself; the Python parser is the fallback where libyaml is not installed.
_SafeBase: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _Loader(_SafeBase):  # type: ignore[misc]  # PyYAML has no stubs here: its loader classes are Any
    def __init__(self, stream: str):
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """Called for each untagged node as it is composed: counted, so a file of more nodes
        than any bench holds stops here, not once all of it is built."""
        self._nodes += 1
        if self._nodes > MAX_NODES:
            try:
                line = self.peek_event().start_mark.line + 1  # where composing has got to (we stop here anyway)
            except Exception:  # noqa: BLE001 - no event to name: the error still names the file
                line = None
            raise BadInput(
                f"this file holds more than {MAX_NODES:,} YAML values; no bench or Eval file is this large",
                line=line,
                fix="split it into several bench files (a folder of them runs as one), or move large data into files the checks read",
            )
        return super().resolve(kind, value, implicit)

    def compose_node(self, parent: Any, index: Any) -> Any:
        """(Python parser only) it composes recursively: stop at MAX_DEPTH, before Python's recursion limit does."""
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise BadInput(
                    f"nested more than {MAX_DEPTH} levels deep",
                    line=self.peek_event().start_mark.line + 1,
                    fix=_FLATTEN,
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def get_single_node(self) -> Any:
        node = super().get_single_node()
        if node is not None:
            _check_expanded(node)
        return node

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        """A scalar YAML resolves but Python cannot build (`2021-02-30`) is a load error at its line."""
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, OverflowError, TypeError) as exc:
            shown = node.value if isinstance(node, yaml.ScalarNode) else node.tag
            raise BadInput(f"cannot read the value {shorten(shown)!r} ({exc})", line=node.start_mark.line + 1, fix="quote it to keep it a string, or fix the value") from None


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    return list(node.value)


def _check_expanded(root: yaml.Node) -> None:
    """The size and depth of the document once every alias is expanded, without expanding it.

    Each collection node is visited once (memoized by identity) with an explicit stack, so a
    13-line alias bomb costs microseconds here instead of gigabytes in the constructor.
    """
    if isinstance(root, yaml.ScalarNode):
        return
    size: dict[int, tuple[int, int]] = {}  # id(node) -> (nodes, depth), expanded
    open_: set[int] = set()  # the collections being expanded: the current node's ancestors
    stack: list[yaml.Node] = [root]
    while stack:
        node = stack[-1]
        key = id(node)
        if key in size:
            stack.pop()
            continue
        kids = _children(node)
        if key not in open_:
            open_.add(key)
            pending = [c for c in kids if not isinstance(c, yaml.ScalarNode) and id(c) not in size]
            if any(id(c) in open_ for c in pending):
                raise BadInput("an alias (*name) refers to a value that contains it (a cycle)", line=node.start_mark.line + 1, fix="an anchor cannot be used inside its own value")
            if pending:
                stack.extend(pending)
                continue
        stack.pop()
        open_.discard(key)
        nodes, depth = 1, 0
        for c in kids:
            n, d = (1, 1) if isinstance(c, yaml.ScalarNode) else size[id(c)]
            nodes += n
            depth = max(depth, d)
        depth += 1
        if nodes > MAX_NODES:
            raise BadInput(
                f"this value expands to more than {MAX_NODES:,} YAML nodes once its aliases (*name) are expanded",
                line=node.start_mark.line + 1,
                fix="this is how an alias bomb looks; reference anchors less, or split the file",
            )
        if depth > MAX_DEPTH:
            raise BadInput(f"nested more than {MAX_DEPTH} levels deep (aliases expanded)", line=node.start_mark.line + 1, fix=_FLATTEN)
        size[key] = (nodes, depth)


def _key_text(key: Any) -> str:
    return key if isinstance(key, str) else str(key)


def _refuse_duplicate_keys(loader: _Loader, node: yaml.MappingNode) -> None:
    """Two spellings of one key in one mapping (`a:` twice, or `1:` and `"1":`) name both lines.

    Keys brought in by a merge (`<<: *base`) are overridden on purpose and are not compared.
    """
    first: dict[str, int] = {}
    for key_node, _ in node.value:
        if key_node.tag == _MERGE_TAG or not isinstance(key_node, yaml.ScalarNode):
            continue
        key = _key_text(loader.construct_object(key_node))
        line = key_node.start_mark.line + 1
        if key in first:
            raise BadInput(
                f"key `{shorten(key)}` is set twice in one mapping: at line {first[key]} and at line {line}",
                line=line,
                fix=f"keep one of them (YAML would silently use line {line} and drop line {first[key]})",
            )
        first[key] = line


def _construct_mapping(loader: _Loader, node: yaml.MappingNode) -> LineDict:
    _refuse_duplicate_keys(loader, node)
    loader.flatten_mapping(node)
    out = LineDict()
    out.line = node.start_mark.line + 1
    out.key_lines = {}
    out.texts = {}
    for key_node, value_node in node.value:
        key = loader.construct_object(key_node, deep=True)
        if isinstance(key, (list, dict)):
            raise BadInput("a mapping key must be a scalar", line=key_node.start_mark.line + 1)
        key = _key_text(key)
        out[key] = value = loader.construct_object(value_node, deep=True)
        out.key_lines[key] = key_node.start_mark.line + 1
        if _typed_plain(value_node, value):
            out.texts[key] = value_node.value
    return out


def _construct_sequence(loader: _Loader, node: yaml.SequenceNode) -> LineList:
    out = LineList(loader.construct_object(child, deep=True) for child in node.value)
    out.line = node.start_mark.line + 1
    out.texts = {i: child.value for i, (child, value) in enumerate(zip(node.value, out)) if _typed_plain(child, value)}
    return out


def _typed_plain(node: yaml.Node, value: Any) -> bool:
    """A plain (unquoted, untagged) scalar YAML read as a boolean or a number."""
    return isinstance(node, yaml.ScalarNode) and not node.style and isinstance(value, (bool, int, float))  # libyaml says "" for plain, PyYAML None


_INT64 = (-(1 << 63), (1 << 64) - 1)


def _construct_int(loader: _Loader, node: yaml.ScalarNode) -> int | float:
    """An integer, or, past 64 bits, the float madbench's Go decoder reads it as: a value no
    JSON encoder here can write (`ticket: 123456789012345678901234567890` stopped a run with a
    traceback after preflight passed)."""
    value: int = loader.construct_yaml_int(node)
    return value if _INT64[0] <= value <= _INT64[1] else float(value)


_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)
_Loader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_SEQUENCE_TAG, _construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:int", _construct_int)


def load_yaml_text(text: str, file: str) -> Any:
    paused = gc.isenabled()
    gc.disable()
    try:
        return yaml.load(text, Loader=_Loader)  # noqa: S506 - a SafeLoader subclass
    except BadInput as exc:
        raise BadInput(exc.what, file=file, line=exc.line, fix=exc.fix) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = mark.line + 1 if mark else None
        if "nesting depth" in str(exc.problem):  # libyaml's own limit (1,000), far past ours
            raise BadInput(f"nested more than {MAX_DEPTH} levels deep", file=file, line=line, fix=_FLATTEN) from None
        unclosed = _unclosed(exc)
        if unclosed is not None:
            raise BadInput(unclosed[1], file=file, line=unclosed[0], fix=unclosed[2]) from None
        what = f"YAML syntax error: {exc.problem or exc}" + (f" ({exc.context})" if exc.context else "")
        raise BadInput(what, file=file, line=line, fix="fix the YAML syntax at that line (indentation, quoting, a missing ':')") from None
    except yaml.reader.ReaderError as exc:  # a character YAML does not allow: it knows the offset, not the line
        line = text.count("\n", 0, exc.position) + 1 if isinstance(exc.position, int) else None
        code = exc.character if isinstance(exc.character, int) else ord(str(exc.character)[:1] or "\0")
        raise BadInput(f"YAML does not allow the control character U+{code:04X} in a file", file=file, line=line, fix=f'remove it, or write it escaped inside double quotes ("\\u{code:04x}")') from None
    except yaml.YAMLError as exc:
        raise BadInput(f"YAML error: {exc}", file=file, fix="fix the YAML syntax") from None
    finally:
        if paused:
            gc.enable()


_OPENED = {"while parsing a flow mapping": ("`{`", "}"), "while parsing a flow sequence": ("`[`", "]"), "while scanning a quoted scalar": ("quote", None)}


def _unclosed(exc: yaml.MarkedYAMLError) -> tuple[int, str, str] | None:
    """(line, what, fix) for a `{`, `[` or quote left open: YAML notices it where the next
    thing fails to parse, lines later (a check written `- {type: contains, value: x` was
    reported at the line after it), so the line that opened it is named, and the one noticed."""
    opened = _OPENED.get(str(exc.context or ""))
    start, found = exc.context_mark, exc.problem_mark
    if opened is None or start is None or found is None or start.line >= found.line:
        return None
    what, closer = opened
    fix = f"close it with `{closer}` on this line, or quote a value in it that holds , [ ] {{ }} or #" if closer else "end the value with the quote that opened it"
    return start.line + 1, f"YAML syntax error: the {what} opened on this line is never closed ({exc.problem} on line {found.line + 1})", fix


def read_source(path: Path, limit: int = MAX_SOURCE_BYTES) -> bytes:
    """The bytes of a file benchtape is told to read, when it is a regular file of at most `limit`.

    Opened before it is judged (non-blocking, so a FIFO cannot hang the open), then judged by
    fstat: a device (`/dev/zero`), FIFO or socket is refused, and so is a file past the limit,
    which is never read past limit + 1 bytes.
    """
    where = shorten(str(path), 300)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        raise BadInput("no such file", file=where, fix="check the path") from None
    except PermissionError:
        raise BadInput("cannot be read (permission denied)", file=where, fix="check the file's permissions") from None
    except OSError as exc:
        raise BadInput(f"cannot be opened: {exc.strerror or exc}", file=where, fix="check the path") from None
    with os.fdopen(fd, "rb") as f:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise BadInput("is a directory, not a YAML file", file=where, fix="name the YAML file inside it")
        if not stat.S_ISREG(mode):
            raise BadInput("is not a regular file (a device, FIFO or socket); refusing to read it", file=where, fix="name a YAML file")
        try:
            data = f.read(limit + 1)
        except OSError as exc:  # a "regular file" the kernel cannot read (/proc/self/mem: EIO), a failing disk
            raise BadInput(f"cannot be read: {exc.strerror or exc}", file=where, fix="name a YAML file that can be read") from None
    if len(data) > limit:
        raise BadInput(f"is larger than {limit:,} bytes; a bench or Eval file this large is refused", file=where, fix="split it, or move large data into files the checks read")
    return data


def decode_source(data: bytes, file: Path | str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise BadInput("not UTF-8 text", file=shorten(str(file), 300), fix="save the file as UTF-8") from None


def load_yaml_file(path: Path) -> Any:
    return load_yaml_text(decode_source(read_source(path), path), str(path))


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


def shorten(text: Any, limit: int = 80) -> str:
    """A value as shown in an error: long ones cut in the middle, so the message stays readable."""
    text = str(text)
    return text if len(text) <= limit else f"{text[: limit // 2]}…{text[-(limit // 2) :]} ({len(text):,} characters)"
