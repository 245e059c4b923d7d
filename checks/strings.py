"""String checks: a needle against the agent's final message, pass or fail.

They grade ONLY `session.final_output` (None reads as ""), never files on disk: grade
files with `exec`. Needles and regexes are validated when the check is built, so a
typo is refused before any run is spent on it.
"""

from __future__ import annotations

from typing import Any, Callable

from benchtape.checks.common import as_list, as_text, output_of, short
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

FAMILY = "String"
READS = "final_output"
_NEEDLE = {"value": "the needle (required; a number is read as its text)"}
_NEEDLES = {"value": "a list of needles, or one comma-separated string (required)"}
_ERR_NEEDLE = ("'value' is required", "'value' must be a string (not a list or mapping)")
_ERR_EMPTY = ("an empty needle (it would match every output)",)


def _evidence(output: str, **extra: object) -> dict[str, object]:
    return {"output_chars": len(output), **extra}


def _needle(spec: CheckSpec, *, allow_empty: bool = False) -> str:
    needle = as_text(spec.value, type=spec.type)
    if needle == "" and not allow_empty:
        raise CheckConfigError(f"{spec.type}: 'value' is empty, and an empty needle matches every output")
    return needle


# ---------------------------------------------------------------- exact and substring


def _equality(negate: bool) -> Callable[[CheckSpec], Evaluator]:
    def build(spec: CheckSpec) -> Evaluator:
        expected = _needle(spec, allow_empty=True)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            out = output_of(session)
            same = out == expected
            ev = _evidence(out, expected=short(expected), equal=same)
            if negate:
                return Result.of(not same, "output equals the forbidden value" if same else "output differs from the value", ev)
            return Result.of(same, "output equals the value" if same else f"output {short(out, 80)!r} is not {short(expected, 80)!r}", ev)

        return evaluate

    return build


_PHRASES = {
    "contains": ("contains", "does not contain"),
    "starts": ("starts with", "does not start with"),
    "ends": ("ends with", "does not end with"),
}


def _substring(how: str, negate: bool = False, fold: bool = False) -> Callable[[CheckSpec], Evaluator]:
    """contains / starts-with / ends-with, optionally negated or case-folded."""

    def build(spec: CheckSpec) -> Evaluator:
        needle = _needle(spec)
        probe = needle.casefold() if fold else needle

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            out = output_of(session)
            hay = out.casefold() if fold else out
            if how == "contains":
                at = hay.find(probe)
                found = at >= 0
            elif how == "starts":
                found, at = hay.startswith(probe), 0
            else:
                found, at = hay.endswith(probe), len(hay) - len(probe)
            if len(hay) != len(out):
                at = -1  # case folding changed lengths ("ß" -> "ss"): no offset in the original
            ev = _evidence(out, needle=short(needle), found=found, position=at if found and at >= 0 else None)
            yes, no = _PHRASES[how]
            said = f"output {yes if found else no} {short(needle, 80)!r}"
            return Result.of(found != negate, said, ev)

        return evaluate

    return build


def _many(every: bool, fold: bool) -> Callable[[CheckSpec], Evaluator]:
    """contains-any / contains-all and their case-insensitive forms."""

    def build(spec: CheckSpec) -> Evaluator:
        needles = as_list(spec.value, type=spec.type)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            out = output_of(session)
            hay = out.casefold() if fold else out
            matched = [n for n in needles if (n.casefold() if fold else n) in hay]
            missing = [n for n in needles if n not in matched]
            ok = not missing if every else bool(matched)
            ev = _evidence(out, needles=needles, matched=matched, missing=missing)
            if every:
                reason = f"all {len(needles)} needles found" if ok else f"missing {len(missing)} of {len(needles)}: {', '.join(map(repr, missing[:5]))}"
            else:
                reason = f"found {', '.join(map(repr, matched[:5]))}" if ok else f"none of {len(needles)} needles found"
            return Result.of(ok, reason, ev)

        return evaluate

    return build


# ---------------------------------------------------------------- regex


def _re2_pattern(pattern: str, type: str) -> Any:
    """A pattern compiled as madbench compiles it (Go's regexp: RE2 syntax and semantics), so a
    bench's regex means here what it means there: `$` is the end of the output, not before a
    last newline; `\\w` and `\\d` are ASCII; `[[:alpha:]]`, `\\p{Lu}`, `\\Q…\\E`, `\\z` and a
    flag group mid-pattern work; backreferences and lookaround are refused, as Go refuses them.
    Python's `re` disagreed on each (an output ending in a newline failed `not-regex: done$`)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # its error is this CheckConfigError, not a line on stderr
    try:
        return re2.compile(pattern, options)
    except re2.error as exc:
        why = exc.args[0].decode(errors="replace") if exc.args and isinstance(exc.args[0], bytes) else str(exc)
        raise CheckConfigError(f"{type}: bad regex {pattern!r}: {why} (RE2 syntax, as madbench's: no backreferences or lookaround)") from None


def _regex(negate: bool) -> Callable[[CheckSpec], Evaluator]:
    def build(spec: CheckSpec) -> Evaluator:
        pattern = _needle(spec)
        rx = _re2_pattern(pattern, spec.type)

        def evaluate(session: Session, ctx: CheckContext) -> Result:
            out = output_of(session)
            m = rx.search(out)
            ev = _evidence(out, pattern=pattern, matched=m is not None, match=short(m.group(0)) if m else None, span=list(m.span()) if m else None)
            if negate:
                return Result.of(m is None, f"output matches /{pattern}/ at {m.start()}" if m else f"output does not match /{pattern}/", ev)
            return Result.of(m is not None, f"output matches /{pattern}/" if m else f"output does not match /{pattern}/", ev)

        return evaluate

    return build


# ---------------------------------------------------------------- registration

_SINGLE = [
    ("equals", "output is exactly `value`", _equality(False), ("'value' is required",), 'type: equals\nvalue: "42"'),
    ("not-equals", "output is anything but `value`", _equality(True), ("'value' is required",), 'type: not-equals\nvalue: "I could not do it"'),
    ("contains", "`value` occurs in the output", _substring("contains"), _ERR_NEEDLE + _ERR_EMPTY, "type: contains\nvalue: All tests pass"),
    ("not-contains", "`value` does not occur in the output", _substring("contains", negate=True), _ERR_NEEDLE + _ERR_EMPTY, "type: not-contains\nvalue: TODO"),
    ("icontains", "`value` occurs in the output, ignoring case", _substring("contains", fold=True), _ERR_NEEDLE + _ERR_EMPTY, "type: icontains\nvalue: all tests pass"),
    ("starts-with", "output begins with `value`", _substring("starts"), _ERR_NEEDLE + _ERR_EMPTY, "type: starts-with\nvalue: Done"),
    ("ends-with", "output ends with `value`", _substring("ends"), _ERR_NEEDLE + _ERR_EMPTY, "type: ends-with\nvalue: ."),
    ("regex", "the regex `value` matches somewhere in the output (RE2 syntax and meaning, as madbench's Go regexp: searched anywhere; `$` is the end of the output; no backreferences or lookaround)", _regex(False), ("'value' is required", "a regex that does not compile"), 'type: regex\nvalue: "\\\\d+ passed"'),
    ("not-regex", "the regex `value` matches nowhere in the output", _regex(True), ("'value' is required", "a regex that does not compile"), 'type: not-regex\nvalue: "(?i)error"'),
]

_MULTI = [
    ("contains-any", "at least one needle occurs in the output", _many(False, False), "type: contains-any\nvalue: [fixed, resolved]"),
    ("contains-all", "every needle occurs in the output", _many(True, False), "type: contains-all\nvalue: [fizz, buzz]"),
    ("icontains-any", "at least one needle occurs, ignoring case", _many(False, True), 'type: icontains-any\nvalue: "fixed, resolved"'),
    ("icontains-all", "every needle occurs, ignoring case", _many(True, True), "type: icontains-all\nvalue: [fizz, buzz]"),
]

for _type, _summary, _builder, _errors, _example in _SINGLE:
    register(_type, family=FAMILY, summary=_summary, reads=READS, args=_NEEDLE, example=_example, errors=_errors)(_builder)

for _type, _summary, _builder, _example in _MULTI:
    register(
        _type,
        family=FAMILY,
        summary=_summary,
        reads=READS,
        args=_NEEDLES,
        example=_example,
        errors=("'value' is required", "a list naming nothing", "a needle that is not a string"),
    )(_builder)
