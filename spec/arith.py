"""derivedMetrics expressions: the arithmetic part of JavaScript, parsed here and evaluated
in Python with JavaScript's meaning.

madbench v0.23.0 evaluates `derivedMetrics` values (`"Consistency * 2"`) in an embedded
JavaScript engine, over the scenario's named check scores. What such an expression can say
about numbers is small: numbers, names, `+ - * / % **`, comparisons, `&& || !`, `? :`,
parentheses, `Math.*`. That subset is parsed at load (a typo is a load error naming the
column, never a surprise after the spend) and evaluated with JavaScript's rules where they
differ from Python's: `%` keeps the dividend's sign, `/ 0` is Infinity (so the value is
missing), `Math.round` rounds half up, `&&`/`||` yield an operand. Anything outside the
subset (strings, calls other than `Math.*`, assignment, `function`) is refused at load with
the fix, rather than run in a second language.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any, Callable, Mapping

_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)|(?P<name>[A-Za-z_$][A-Za-z0-9_$]*)|(?P<op>\*\*|===|!==|==|!=|<=|>=|&&|\|\||[-+*/%<>!?:(),.]))")

_BINARY = [  # loosest first; `**` is right-associative and handled with unary
    ("||",),
    ("&&",),
    ("==", "!=", "===", "!=="),
    ("<", "<=", ">", ">="),
    ("+", "-"),
    ("*", "/", "%"),
]
MATH_FUNCTIONS: dict[str, Callable[..., float]] = {
    "abs": abs,
    "min": lambda *a: min(a) if a else math.inf,
    "max": lambda *a: max(a) if a else -math.inf,
    "round": lambda x: math.floor(x + 0.5),
    "floor": math.floor,
    "ceil": math.ceil,
    "trunc": math.trunc,
    "sqrt": lambda x: math.sqrt(x) if x >= 0 else math.nan,
    "pow": lambda x, y: _power(x, y),
    "log": lambda x: math.log(x) if x > 0 else (-math.inf if x == 0 else math.nan),
    "exp": math.exp,
    "sign": lambda x: (x > 0) - (x < 0),
}
MATH_CONSTANTS = {"PI": math.pi, "E": math.e}
LITERALS = {"true": True, "false": False, "null": None, "NaN": math.nan, "Infinity": math.inf, "undefined": None}


class ExpressionError(ValueError):
    """An expression outside the subset, or malformed; `at` is the column (1-based)."""

    def __init__(self, what: str, at: int):
        super().__init__(f"{what} (column {at})")
        self.what, self.at = what, at


@dataclass(frozen=True)
class Expression:
    source: str
    tree: tuple[Any, ...]

    @property
    def names(self) -> set[str]:
        """The names it reads (the check scores it needs)."""
        out: set[str] = set()
        _names(self.tree, out)
        return out

    def evaluate(self, scope: Mapping[str, Any]) -> float | None:
        """Its value over `scope` (name → number); None where JavaScript would give null,
        undefined, NaN or ±Infinity: the value is missing. A name not in scope raises
        KeyError, as a ReferenceError would."""
        value = _eval(self.tree, scope)
        if isinstance(value, bool):
            return float(value)
        if value is None or not isinstance(value, (int, float)) or not math.isfinite(value):
            return None
        return float(value)


def parse(source: str) -> Expression:
    """The expression, or ExpressionError naming what is not in the subset and where."""
    tokens = _tokens(source)
    parser = _Parser(tokens, len(source))
    tree = parser.ternary()
    if parser.i < len(tokens):
        kind, text, at = tokens[parser.i]
        raise ExpressionError(f"unexpected {text!r}", at)
    return Expression(source, tree)


def _tokens(source: str) -> list[tuple[str, str, int]]:
    out: list[tuple[str, str, int]] = []
    i = 0
    while i < len(source):
        if source[i:].strip() == "":
            break
        m = _TOKEN.match(source, i)
        if m is None or m.end() == i:
            at = i + len(source[i:]) - len(source[i:].lstrip()) + 1
            char = source[at - 1]
            why = "strings are not numbers" if char in "\"'`" else f"{char!r} is not part of the arithmetic a derived metric may use"
            raise ExpressionError(why, at)
        kind = m.lastgroup or "op"
        out.append((kind, m.group(kind), m.start(kind) + 1))
        i = m.end()
    return out


class _Parser:
    def __init__(self, tokens: list[tuple[str, str, int]], end: int):
        self.tokens, self.i, self.end = tokens, 0, end

    def peek(self) -> str | None:
        return self.tokens[self.i][1] if self.i < len(self.tokens) else None

    def at(self) -> int:
        return self.tokens[self.i][2] if self.i < len(self.tokens) else self.end + 1

    def take(self, want: str | None = None) -> tuple[str, str, int]:
        if self.i >= len(self.tokens):
            raise ExpressionError("the expression ends too soon" + (f" (expected {want!r})" if want else ""), self.end + 1)
        tok = self.tokens[self.i]
        if want is not None and tok[1] != want:
            raise ExpressionError(f"expected {want!r}, found {tok[1]!r}", tok[2])
        self.i += 1
        return tok

    def ternary(self) -> tuple[Any, ...]:
        cond = self.binary(0)
        if self.peek() == "?":
            self.take("?")
            yes = self.ternary()
            self.take(":")
            no = self.ternary()
            return ("?", cond, yes, no)
        return cond

    def binary(self, level: int) -> tuple[Any, ...]:
        if level == len(_BINARY):
            return self.power()
        left = self.binary(level + 1)
        while self.peek() in _BINARY[level]:
            op = self.take()[1]
            left = (op, left, self.binary(level + 1))
        return left

    def power(self) -> tuple[Any, ...]:
        base = self.unary()
        if self.peek() == "**":
            self.take()
            return ("**", base, self.power())
        return base

    def unary(self) -> tuple[Any, ...]:
        if self.peek() in ("-", "+", "!"):
            op = self.take()[1]
            return ("u" + op, self.unary())
        return self.primary()

    def primary(self) -> tuple[Any, ...]:
        kind, text, at = self.take()
        if kind == "num":
            return ("num", float(text))
        if text == "(":
            inner = self.ternary()
            self.take(")")
            return inner
        if kind == "name":
            if text == "Math":
                return self.math(at)
            if text in LITERALS:
                return ("lit", LITERALS[text])
            if text in ("function", "return", "var", "let", "const", "new", "this", "typeof"):
                raise ExpressionError(f"`{text}` is JavaScript beyond the arithmetic a derived metric may use", at)
            if self.peek() in ("(", "."):
                raise ExpressionError(f"`{text}{self.peek()}…`: only Math.* may be called or read from", self.at())
            return ("name", text)
        raise ExpressionError(f"unexpected {text!r}", at)

    def math(self, at: int) -> tuple[Any, ...]:
        self.take(".")
        _, member, member_at = self.take()
        if member in MATH_CONSTANTS:
            return ("num", MATH_CONSTANTS[member])
        if member not in MATH_FUNCTIONS:
            raise ExpressionError(f"Math.{member} is not one of {', '.join(sorted([*MATH_FUNCTIONS, *MATH_CONSTANTS]))}", member_at)
        self.take("(")
        args: list[tuple[Any, ...]] = []
        if self.peek() != ")":
            args.append(self.ternary())
            while self.peek() == ",":
                self.take(",")
                args.append(self.ternary())
        self.take(")")
        return ("math", member, tuple(args))


def _names(node: tuple[Any, ...], out: set[str]) -> None:
    if node[0] == "name":
        out.add(node[1])
    for part in node[1:]:
        if isinstance(part, tuple) and part and isinstance(part[0], str):
            _names(part, out)
        elif isinstance(part, tuple):
            for inner in part:
                _names(inner, out)


def _number(v: Any) -> float:
    """JavaScript's ToNumber for the values an expression can hold; a missing value (None:
    a score that was not measured) is NaN, as undefined is, so it stays missing."""
    if v is None:
        return math.nan
    return float(v)


def _truthy(v: Any) -> bool:
    if v is None:
        return False
    if isinstance(v, float) and math.isnan(v):
        return False
    return bool(v)


def _power(x: float, y: float) -> float:
    try:
        out = x**y
    except ZeroDivisionError:
        return math.inf
    except OverflowError:
        return math.inf
    return out if isinstance(out, float) else math.nan


def _eval(node: tuple[Any, ...], scope: Mapping[str, Any]) -> Any:
    op = node[0]
    if op == "num" or op == "lit":
        return node[1]
    if op == "name":
        return scope[node[1]]
    if op == "?":
        return _eval(node[2] if _truthy(_eval(node[1], scope)) else node[3], scope)
    if op == "&&":
        left = _eval(node[1], scope)
        return _eval(node[2], scope) if _truthy(left) else left
    if op == "||":
        left = _eval(node[1], scope)
        return left if _truthy(left) else _eval(node[2], scope)
    if op == "u-":
        return -_number(_eval(node[1], scope))
    if op == "u+":
        return _number(_eval(node[1], scope))
    if op == "u!":
        return not _truthy(_eval(node[1], scope))
    if op == "math":
        return MATH_FUNCTIONS[node[1]](*(_number(_eval(a, scope)) for a in node[2]))
    a, b = _number(_eval(node[1], scope)), _number(_eval(node[2], scope))
    if op == "+":
        return a + b
    if op == "-":
        return a - b
    if op == "*":
        return a * b
    if op == "/":
        if b == 0:
            return math.nan if a == 0 or math.isnan(a) else math.copysign(math.inf, a) * math.copysign(1, b)
        return a / b
    if op == "%":
        return math.fmod(a, b) if b != 0 else math.nan
    if op == "**":
        return _power(a, b)
    if op in ("==", "==="):
        return a == b
    if op in ("!=", "!=="):
        return a != b
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]
