"""An output transform as a bench writes it: JavaScript, as in madbench; Python behind a marker.

`transform:` (on a scenario, in its `options:`, or on a check) rewrites the output before the
checks read it. A string is JavaScript, the language madbench benches are written in: an
expression over `output` and `context` (`output.toUpperCase()`), a function body that
`return`s, or `file://path.js` (optionally `:function`). Python is benchtape's extension and
says so: `transform: {python: "output.upper()"}`, or `file://path.py` (optionally
`:function`). A string that reads as Python (it calls `.upper()`, uses `len(...)`, `and`,
`None`, a slice…) is refused when the bench loads, with the fix, rather than run as
JavaScript, where it would fail on every session or, worse, mean something else.

Only parsing and validation live here (loading a bench must not need a JavaScript runtime);
running a transform is the grading's (`benchtape.checks.output_transforms`).
"""

from __future__ import annotations

import ast
import io
import json
import re
import textwrap
import tokenize
from dataclasses import dataclass, replace
from typing import Any, Mapping

from benchtape.spec.yamlsrc import shorten

MARKER = "python"  # `transform: {python: ...}`
JS_FILES = (".js", ".mjs", ".cjs")
PY_FILES = (".py",)
PY_FILE_FUNCTION = "get_transform"  # a Python file's function when none is named (promptfoo's)
_FUNCTION = re.compile(r"^(?P<path>.+?\.(?:js|mjs|cjs|py)):(?P<fn>[A-Za-z_$][\w$]*)$")
_PY_BODY = "def __benchtape_transform(output, context):\n"

TransformValue = Any  # what a bench wrote, canonical: a JavaScript string, `file://…`, or {python: source}


class TransformRefused(ValueError):
    """A `transform:` that cannot be run as written, with the fix."""

    def __init__(self, what: str, fix: str):
        super().__init__(what)
        self.fix = fix


@dataclass(frozen=True)
class Transform:
    """One transform, parsed: its language and either its inline source or its file."""

    language: str  # "js" | "python"
    source: str | None = None  # inline source
    path: str | None = None  # a file:// transform's file (absolute once the bench has loaded)
    function: str | None = None  # the function that file exports (None: its default)

    @property
    def key(self) -> tuple[str, str | None, str | None, str | None]:
        """Two transforms with the same key compute the same output (run once per session)."""
        return (self.language, self.source, self.path, self.function)

    def value(self) -> TransformValue:
        """The canonical written form (what a check spec and a grading store)."""
        if self.path is not None:
            return "file://" + self.path + (f":{self.function}" if self.function else "")
        return self.source if self.language == "js" else {MARKER: self.source}

    def at(self, path: str) -> Transform:
        """The same transform with its file at `path` (resolved against the bench's folder)."""
        return replace(self, path=path)

    def __str__(self) -> str:
        return shorten(self.source or "") if self.path is None else f"file://{self.path}" + (f":{self.function}" if self.function else "")


def transform_of(value: TransformValue) -> Transform:
    """Parse a written transform; raises TransformRefused (naming the fix) when it cannot run."""
    if isinstance(value, str):
        if value.startswith("file://"):
            return _file(value, None)
        if not value.strip():
            raise TransformRefused("`transform:` is empty", "remove it, or write a JavaScript expression over `output`, e.g. `output.trim()`")
        evidence = python_evidence(value)
        if evidence is not None:
            raise TransformRefused(
                f"`transform: {shorten(value)}` reads as Python ({evidence}), but a transform written as a string is JavaScript, as madbench reads it",
                f"write it in JavaScript (e.g. `output.toUpperCase()`), or mark it as Python: `transform: {{python: {json.dumps(value)}}}`",
            )
        return Transform("js", source=value)
    if isinstance(value, Mapping):
        if set(value) != {MARKER}:
            keys = ", ".join(f"`{k}`" for k in value) or "no key"
            raise TransformRefused(f"`transform:` as a mapping takes one key, `python:`; this one has {keys}", 'write JavaScript as a string (`transform: "output.trim()"`), or Python as `transform: {python: "output.strip()"}`')
        source = value[MARKER]
        if not isinstance(source, str) or not source.strip():
            raise TransformRefused("`transform: {python: ...}` needs the Python source (or file://path.py) as a string", 'e.g. `transform: {python: "output.strip()"}`')
        if source.startswith("file://"):
            return _file(source, "python")
        problem = python_problem(source)
        if problem is not None:
            raise TransformRefused(f"the Python transform does not compile: {problem}", "fix the expression (or function body that returns the new output)")
        return Transform("python", source=source)
    kind = {list: "a list", bool: "a boolean", int: "a number", float: "a number"}.get(type(value), type(value).__name__)
    raise TransformRefused(f"`transform:` must be a string (JavaScript) or {{python: ...}}, got {kind}", 'e.g. `transform: "output.trim()"`, or `transform: {python: "output.strip()"}`')


def _file(value: str, marked: str | None) -> Transform:
    rest = value[len("file://") :]
    named = _FUNCTION.match(rest)
    path, function = (named.group("path"), named.group("fn")) if named else (rest, None)
    if not path:
        raise TransformRefused("`transform: file://` names no file", "e.g. `transform: file://transforms/answer.js`")
    lower = path.lower()
    language = "python" if lower.endswith(PY_FILES) else "js" if lower.endswith(JS_FILES) else None
    if language is None:
        raise TransformRefused(f"`transform: {shorten(value)}`: a transform file is JavaScript ({', '.join(JS_FILES)}) or Python (.py), and this one is neither", "rename it with its language's extension")
    if marked is not None and language != marked:
        raise TransformRefused(f"`transform: {{python: {shorten(value)}}}` names a JavaScript file", f"drop the marker: `transform: {value}`")
    return Transform(language, path=path, function=function)


def python_problem(source: str) -> str | None:
    """Why a Python transform does not compile (None: it does): an expression, or a function
    body over `output` and `context` that returns the new output. Compiled, never run."""
    try:
        compile(source.strip(), "<transform>", "eval")
        return None
    except SyntaxError as exc:
        first = exc
    try:
        compile(_PY_BODY + textwrap.indent(source, "    "), "<transform>", "exec")
        return None
    except SyntaxError as exc:
        if "\n" not in source.strip():  # one line: it was meant as an expression
            return f"line {first.lineno}: {first.msg}"
        return f"line {(exc.lineno or 2) - 1}: {exc.msg}"


# ---------------------------------------------------------------- reads as Python

_PY_NAMES = frozenset(
    "len str int float bool list dict set tuple min max sum sorted reversed any all abs round enumerate zip range "
    "re json os sys print repr isinstance ord chr map filter type hasattr getattr open next iter".split()
)
_PY_METHODS = frozenset(
    "upper lower strip lstrip rstrip startswith endswith splitlines casefold capitalize title swapcase isdigit isalpha "
    "isalnum isspace isupper islower isnumeric isdecimal format encode decode removeprefix removesuffix partition "
    "rpartition rsplit rfind rindex zfill center ljust rjust expandtabs items append extend count index findall fullmatch "
    "loads dumps group groups".split()
)
_PY_SYNTAX: dict[type, str] = {
    ast.BoolOp: "`and`/`or`",
    ast.IfExp: "`x if c else y`",
    ast.ListComp: "a comprehension",
    ast.SetComp: "a comprehension",
    ast.DictComp: "a comprehension",
    ast.GeneratorExp: "a comprehension",
    ast.Lambda: "`lambda`",
    ast.JoinedStr: "an f-string",
    ast.Slice: "a slice `[a:b]`",
    ast.Tuple: "a tuple",
    ast.Starred: "`*` unpacking",
    ast.NamedExpr: "`:=`",
    ast.Set: "a set",
}


def python_evidence(source: str) -> str | None:
    """What makes an unmarked transform read as Python, or None when nothing does.

    Only a source that parses as Python (an expression, or a function body) is looked at,
    and then only for what JavaScript has not got or means otherwise: Python's names and
    str methods (`len`, `.upper()`), its keywords and spellings (`and`, `not`, `in`, `None`,
    `True`), its syntax (a slice, a comprehension, an f-string, `r"…"`, a `#` comment), and
    what JavaScript reads differently (`s[-1]` is undefined, `.split()` returns the whole
    string, `a < b < c` compares a boolean). A source valid in both with none of these
    (`output.split("\\n")[0]`, `output.trim()`, `"k" in JSON.parse(output)`, `x // note`) is
    JavaScript; `file://x.js` always is."""
    tree = _python_tree(source)
    if tree is None:
        return None  # not Python: JavaScript (or neither, which the runtime will say)
    for node in ast.walk(tree):
        found = _node_evidence(node)
        if found is not None:
            return found
    return _token_evidence(source)


def _python_tree(source: str) -> ast.AST | None:
    try:
        return ast.parse(source.strip(), mode="eval")
    except SyntaxError:
        pass
    try:
        return ast.parse(_PY_BODY + textwrap.indent(source, "    "))
    except SyntaxError:
        return None


def _node_evidence(node: ast.AST) -> str | None:
    syntax = _PY_SYNTAX.get(type(node))
    if syntax is not None:
        return syntax
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        return "`not`"
    if isinstance(node, ast.Constant) and (node.value is None or isinstance(node.value, bool)):
        return f"`{node.value}` (JavaScript spells it `{ {None: 'null', True: 'true', False: 'false'}[node.value] }`)"
    if isinstance(node, ast.Compare):
        if any(isinstance(op, (ast.NotIn, ast.Is, ast.IsNot)) for op in node.ops):
            return "`not in`/`is`"
        if len(node.ops) > 1:
            return "a chained comparison (JavaScript compares the first result, a boolean)"
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.UnaryOp) and isinstance(node.slice.op, ast.USub):
        return "a negative index (JavaScript reads `s[-1]` as undefined)"
    if isinstance(node, ast.Name) and node.id in _PY_NAMES:
        return f"`{node.id}`, which JavaScript has not got"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr in _PY_METHODS:
            return f"`.{attr}()`, a Python method"
        if attr == "split" and not node.args:
            return "`.split()` with no separator (JavaScript returns the whole string)"
        if attr == "join" and isinstance(node.func.value, ast.Constant) and isinstance(node.func.value.value, str):
            return "`str.join`"
    return None


def _token_evidence(source: str) -> str | None:
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError):
        return None
    for tok in tokens:
        if tok.type == tokenize.COMMENT:
            return "a `#` comment"
        if tok.type == tokenize.STRING:
            if tok.string[0] not in "'\"":
                return f"a prefixed string (`{shorten(tok.string, 20)}`)"
            if tok.string[:3] in ('"""', "'''"):
                return "a triple-quoted string"
    return None
