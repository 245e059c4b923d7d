"""The options that stop a test run at its first failure, taken out of a verify command.

A per-test verdict (FAIL_TO_PASS, PASS_TO_PASS) needs every test to run: under mocha's
`--bail` (negotiator's test script) the tests after the first failure never ran at the base,
were read as absent there, and a task's FAIL_TO_PASS listed 142 tests where 3 failed; a
candidate that fixed those 3 then scored 0.43. The verifier runs its command without them
(sandbox/verifier.py), and a verify command inferred from a project's test script never
copies them (tasks/infer.py).
"""

from __future__ import annotations

import re
import shlex

# runner -> the options that stop at the first failure (a name alone: a flag; `name=`: it takes a value)
FAIL_FAST: dict[str, tuple[str, ...]] = {
    "mocha": ("--bail", "-b"),
    "jest": ("--bail", "-b", "--bail="),
    "vitest": ("--bail", "--bail="),
    "pytest": ("-x", "--exitfirst", "--maxfail=", "--sw", "--stepwise", "--sw-skip", "--stepwise-skip"),
    "unittest": ("-f", "--failfast"),
    "go": ("-failfast",),
    "ava": ("--fail-fast",),
}
_OPERATORS = re.compile(r"[;&|`\n]|\$\(")


def every_test(command: str, runner: str | None) -> str:
    """`command` without its runner's fail-fast options, cut from its own text (a report
    path's `"${BENCHTAPE_REPORTS:-/tmp}"` stays unexpanded). Unchanged when it has none, or
    when it is more than one plain command (a pipeline, a script: left as the user wrote it)."""
    flags = FAIL_FAST.get(runner or "")
    if not flags or _OPERATORS.search(command):
        return command
    segments = _segments(command)
    try:
        words = [shlex.split(seg) for seg in segments]
    except ValueError:
        return command
    if any(len(w) != 1 for w in words):
        return command
    kept: list[str] = []
    drop_value = False
    for segment, (word,) in zip(segments, words):
        if drop_value:
            drop_value = False
            if word.isdigit():  # never a test file's name
                continue
        name = word.split("=", 1)[0]
        if word in flags or f"{name}=" in flags:
            drop_value = "=" not in word and f"{word}=" in flags  # `--maxfail 2`: its value is the next word
            continue
        kept.append(segment)
    return command if len(kept) == len(segments) else " ".join(kept)


def _segments(command: str) -> list[str]:
    """The command's words as written: split on whitespace outside quotes."""
    out: list[str] = []
    current: list[str] = []
    quote: str | None = None
    escaped = False
    for ch in command:
        if escaped:
            current.append(ch)
            escaped = False
        elif ch == "\\" and quote != "'":
            current.append(ch)
            escaped = True
        elif quote is None and ch in "'\"":
            quote = ch
            current.append(ch)
        elif ch == quote:
            quote = None
            current.append(ch)
        elif quote is None and ch.isspace():
            if current:
                out.append("".join(current))
                current = []
        else:
            current.append(ch)
    if current:
        out.append("".join(current))
    return out
