"""How many tests ran, passed and failed, by the test runner's own summary.

A verify command's exit code says pass or fail; it does not say that any test ran. A hidden
test that was never collected (a wrong path, an import error before collection) fails at the
base just as a real reproduction does, so validation goes by the runner's counts: pytest's
`1 failed, 49 passed in 0.12s`, unittest's `Ran 5 tests` + `FAILED (failures=1)`, go test's
`--- FAIL:` lines, cargo's `test result:` lines, jest's `Tests: … total`, vitest's
`Tests  1 failed | 3 passed (4)`, mocha's `5 passing (12ms)` / `1 failing` / `2 pending`, ava's
TAP (`ok 1 - test › adds`, its `1..N` plan) or its own reporter's `1 test failed`. Output no
parser recognises has no counts (`runner` None).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Callable

RUNNERS = ("pytest", "unittest", "go", "cargo", "jest", "vitest", "mocha", "ava", "tape", "uvu")


@dataclass(frozen=True)
class Counts:
    runner: str | None  # None: no summary recognised
    passed: int = 0
    failed: int = 0
    errored: int = 0  # collection or setup errors: the runner counted a problem, not a test outcome
    skipped: int = 0

    @property
    def ran(self) -> int:
        """Tests that executed (passed or failed)."""
        return self.passed + self.failed

    @property
    def counted(self) -> int:
        """Everything the runner counted as a test outcome or error."""
        return self.passed + self.failed + self.errored

    def to_dict(self) -> dict[str, int]:
        return {"ran": self.ran, "passed": self.passed, "failed": self.failed, "errored": self.errored, "skipped": self.skipped}


def runner_of(command: str) -> str | None:
    """The runner a verify command names, when it names one."""
    text = f" {command} "
    for runner, pattern in (
        ("pytest", r"[\s/]py\.?test\b|-m\s+pytest\b"),
        ("unittest", r"-m\s+unittest\b"),
        ("go", r"\bgo\s+test\b"),
        ("cargo", r"\bcargo\s+(?:\+\S+\s+)?test\b|\bcargo\s+nextest\b"),
        ("vitest", r"\bvitest\b"),
        ("jest", r"\bjest\b"),
        ("mocha", r"\bmocha\b"),
        ("ava", r"\bava\b"),
        ("tape", r"\btape\b"),
        ("uvu", r"\buvu\b"),
        ("node", r"\bnode\s+--test\b"),
    ):
        if re.search(pattern, text):
            return runner
    return None


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def parse_counts(output: str, runner: str | None = None) -> Counts:
    """The counts of the runner `runner` (or of the first runner whose summary is in `output`)."""
    output = _ANSI.sub("", output)  # coloured output (`--color=yes` in a project's addopts) reads the same
    order = [runner] if runner in PARSERS else []
    order += [r for r in RUNNERS if r not in order]
    for name in order:
        counts = PARSERS[name](output)
        if counts is not None:
            return counts
    return Counts(None)


_PYTEST_LINE = re.compile(r"^=*\s*((?:\d+ [a-z]+(?:, )?)+)\s+in\s+[\d.]+s(?:\s*\([^)]*\))?\s*=*\s*$", re.MULTILINE)
_PYTEST_NONE = re.compile(r"^=*\s*no tests ran\b.*$", re.MULTILINE)


def _pytest(output: str) -> Counts | None:
    found = list(_PYTEST_LINE.finditer(output))
    if not found:
        return Counts("pytest") if _PYTEST_NONE.search(output) else None
    words = dict.fromkeys(("passed", "failed", "error", "skipped", "xfailed", "xpassed"), 0)
    for n, word in re.findall(r"(\d+) ([a-z]+)", found[-1].group(1)):
        word = "error" if word == "errors" else word
        if word in words:
            words[word] += int(n)
    return Counts("pytest", passed=words["passed"] + words["xpassed"], failed=words["failed"], errored=words["error"], skipped=words["skipped"] + words["xfailed"])


def _unittest(output: str) -> Counts | None:
    ran = re.findall(r"^Ran (\d+) tests? in ", output, re.MULTILINE)
    if not ran:
        return None
    total = int(ran[-1])
    tail = output[output.rfind("Ran ") :]
    m = re.search(r"^(OK|FAILED)(?: \(([^)]*)\))?\s*$", tail, re.MULTILINE)
    fields = {k.strip(): int(v) for k, v in re.findall(r"([a-z ]+)=(\d+)", m.group(2) or "")} if m else {}
    failed, errored, skipped = fields.get("failures", 0), fields.get("errors", 0), fields.get("skipped", 0) + fields.get("expected failures", 0)
    return Counts("unittest", passed=max(total - failed - errored - skipped, 0), failed=failed, errored=errored, skipped=skipped)


def _go(output: str) -> Counts | None:
    outcomes = re.findall(r"^\s*--- (PASS|FAIL|SKIP): ", output, re.MULTILINE)
    build = len(re.findall(r"^FAIL\s+\S+\s+\[(?:build failed|setup failed)\]", output, re.MULTILINE))
    # a package's line ends in its time, `(cached)` or `[no test files]`: TAP's `ok 1 - …` is not one
    if not outcomes and not build and not re.search(r"^(?:ok|FAIL|\?)\s+\S+\s+(?:[\d.]+s|\(cached\)|\[no test files\])", output, re.MULTILINE):
        return None
    return Counts("go", passed=outcomes.count("PASS"), failed=outcomes.count("FAIL"), errored=build, skipped=outcomes.count("SKIP"))


def _cargo(output: str) -> Counts | None:
    results = re.findall(r"^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored", output, re.MULTILINE)
    compile_errors = len(re.findall(r"^error(?:\[E\d+\])?: ", output, re.MULTILINE)) if re.search(r"could not compile", output) else 0
    if not results and not compile_errors:
        return None
    return Counts("cargo", passed=sum(int(r[0]) for r in results), failed=sum(int(r[1]) for r in results), errored=min(compile_errors, 1), skipped=sum(int(r[2]) for r in results))


def _jest(output: str) -> Counts | None:
    m = list(re.finditer(r"^Tests:\s+(.*?)(\d+) total", output, re.MULTILINE))
    if not m:
        return None
    words = {w: int(n) for n, w in re.findall(r"(\d+) (failed|passed|skipped|todo|pending)", m[-1].group(1))}
    suites = re.search(r"^Test Suites:\s+(\d+) failed", output, re.MULTILINE)
    errored = int(suites.group(1)) if suites and not words.get("failed") else 0
    return Counts("jest", passed=words.get("passed", 0), failed=words.get("failed", 0), errored=errored, skipped=words.get("skipped", 0) + words.get("todo", 0) + words.get("pending", 0))


def _vitest(output: str) -> Counts | None:
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    m = list(re.finditer(r"^\s*Tests\s+(.*?)\((\d+)\)\s*$", plain, re.MULTILINE))
    if not m:
        return None
    words = {w: int(n) for n, w in re.findall(r"(\d+) (failed|passed|skipped|todo)", m[-1].group(1))}
    files = re.search(r"^\s*Test Files\s+(\d+) failed", plain, re.MULTILINE)
    errored = int(files.group(1)) if files and not words.get("failed") else 0
    return Counts("vitest", passed=words.get("passed", 0), failed=words.get("failed", 0), errored=errored, skipped=words.get("skipped", 0) + words.get("todo", 0))


_MOCHA_JSON_START = re.compile(r'^\{\s*\n\s*"stats": \{', re.MULTILINE)


def mocha_json(output: str) -> dict | None:
    """The document mocha's JSON reporter printed on stdout: the report file's, where the
    mocha has no `--reporter-option output=` (before mocha 9: wooorm's 2014 packages' mocha 2)."""
    starts = list(_MOCHA_JSON_START.finditer(output))
    if not starts:
        return None
    try:
        doc, _ = json.JSONDecoder().raw_decode(output, starts[-1].start())
    except ValueError:
        return None
    return doc if isinstance(doc, dict) else None


def _mocha(output: str) -> Counts | None:
    """mocha's spec (and dot, list…) reporters' closing lines: `N passing (Tms)`, then `N failing`
    and `N pending` when there are any; else the stats of its JSON reporter's document on stdout."""
    passing = list(re.finditer(r"^\s*(\d+) passing \(", output, re.MULTILINE))
    if not passing:
        stats = (mocha_json(output) or {}).get("stats")
        if not isinstance(stats, dict) or not all(isinstance(stats.get(k), int) for k in ("passes", "failures", "pending")):
            return None
        return Counts("mocha", passed=stats["passes"], failed=stats["failures"], skipped=stats["pending"])
    rest = output[passing[-1].start() :]
    failing = re.search(r"^\s*(\d+) failing\b", rest, re.MULTILINE)
    pending = re.search(r"^\s*(\d+) pending\b", rest, re.MULTILINE)
    return Counts("mocha", passed=int(passing[-1].group(1)), failed=int(failing.group(1)) if failing else 0, skipped=int(pending.group(1)) if pending else 0)


# A TAP test line at the top level (ava's `--tap`: `not ok 5 - test › fails here`, `ok 2 - test ›
# skipped one # SKIP`); an indented one is a subtest's or a diagnostic's, never a test of its own.
_TAP_LINE = re.compile(r"^(not ok|ok)\b(?: +\d+)?(?: +-)?(?: +(.*?))?(?: +# *(SKIP|TODO)\b[^\n]*)?[ \t]*$", re.MULTILINE | re.IGNORECASE)
_TAP_PLAN = re.compile(r"^1\.\.\d+", re.MULTILINE)


_TAP_VERSION = re.compile(r"^TAP version \d+", re.MULTILINE)


def one_tap_stream(output: str) -> bool:
    """Whether the output is one TAP stream: a plan line, and no second plan or version header.
    A runner prints one; a second is another writer's (code under test that printed `ok` lines
    for the tests and ended its worker: slugify, newcomer pass), and whose lines are whose cannot
    be told, so no test's outcome is read from it."""
    return len(_TAP_PLAN.findall(output)) == 1 and len(_TAP_VERSION.findall(output)) <= 1


def tap_outcomes(output: str) -> list[tuple[str, str]] | None:
    """Each top-level TAP test as (its description, passed | failed | skipped), in order, when
    the output is one TAP stream (`one_tap_stream`); a skipped test and a TODO (ava prints
    `not ok … # TODO`) are skipped, never failed."""
    if not one_tap_stream(output):
        return None
    out = []
    for m in _TAP_LINE.finditer(output):
        ok, description, directive = m.group(1).lower() == "ok", (m.group(2) or "").strip(), m.group(3)
        out.append((description, "skipped" if directive else "passed" if ok else "failed"))
    return out or None


_TAP_COMMENT = re.compile(r"^# (.+?)\s*$")
_TAPE_TOTALS = re.compile(r"^(?:tests|pass|fail|ok|todo|skip)(?: +\d+)?$")  # the closing `# tests 3`, `# pass  2`


def tape_outcomes(output: str) -> list[tuple[str, str]] | None:
    """Each tape test as (its name, passed | failed | skipped), in order, when the output is TAP:
    tape prints a test's name as a `# name` comment and its assertions as top-level `ok` lines
    under it (`ok 1 should be equal`), so a test failed when any of its assertions failed, and
    was skipped when every one was (`# SKIP name`, `# TODO name`: tape's skipped and todo tests).
    Assertions before any name are the unnamed test's (`(anonymous)`)."""
    if not one_tap_stream(output):
        return None
    tests: dict[str, list[str]] = {}
    current, todo = "(anonymous)", False
    for line in output.splitlines():
        comment = _TAP_COMMENT.match(line)
        if comment:
            if not _TAPE_TOTALS.match(comment.group(1)):
                directive, _, name = comment.group(1).partition(" ")
                todo = directive in ("SKIP", "TODO") and bool(name)  # `# SKIP name`: a skipped test; `# TODO name`: one whose failures are expected
                current = name if todo else comment.group(1)
                tests.setdefault(current, ["skipped"] if directive == "SKIP" and name else [])
            continue
        m = _TAP_LINE.match(line)
        if m:
            ok, directive = m.group(1).lower() == "ok", m.group(3)
            tests.setdefault(current, []).append("skipped" if directive or todo else "passed" if ok else "failed")
    out = [(name, "failed" if "failed" in seen else "skipped" if seen and all(o == "skipped" for o in seen) else "passed") for name, seen in tests.items()]
    return out or None


def _tape(output: str) -> Counts | None:
    found = tape_outcomes(output)
    if found is None:
        return None
    return Counts("tape", passed=sum(o == "passed" for _, o in found), failed=sum(o == "failed" for _, o in found), skipped=sum(o == "skipped" for _, o in found))


_AVA_SUMMARY = re.compile(r"^\s*(\d+) (?:tests? (passed|failed|skipped|todo)|(known failures?|uncaught exceptions?|unhandled rejections?))\s*$", re.MULTILINE)


def _ava(output: str) -> Counts | None:
    """ava's TAP (`--tap`, which benchtape's inferred command asks for), else its own reporter's
    closing lines: `1 test failed`, `2 tests skipped`, `3 tests passed` (printed only when none
    failed: otherwise the `✔` lines are the passed tests)."""
    tap = tap_outcomes(output)
    if tap is not None:
        return Counts("ava", passed=sum(o == "passed" for _, o in tap), failed=sum(o == "failed" for _, o in tap), skipped=sum(o == "skipped" for _, o in tap))
    found = _AVA_SUMMARY.findall(output)
    if not any(word in ("passed", "failed") for _, word, _ in found):
        return None
    words = {word or other.split()[0]: int(n) for n, word, other in found}
    passed = words.get("passed", len(re.findall(r"^\s*✔ ", output, re.MULTILINE)))
    # a known failure (`test.failing` failing as declared) is no failure of the code under test
    return Counts("ava", passed=passed, failed=words.get("failed", 0), errored=words.get("uncaught", 0) + words.get("unhandled", 0), skipped=words.get("skipped", 0) + words.get("todo", 0))


_UVU_SUMMARY = re.compile(r"^\s*(Total|Passed|Skipped):\s+(\d+)\s*$", re.MULTILINE)


def _uvu(output: str) -> Counts | None:
    """uvu's closing lines (`Total: 2`, `Passed: 1`, `Skipped: 1`), summed over its suites: its
    Total leaves the skipped tests out, so the failed are Total − Passed. uvu writes no report a
    test at a time (it names only the failing ones), so its tasks are judged by exit status."""
    found: dict[str, int] = {}
    for key, n in _UVU_SUMMARY.findall(output):
        found[key] = found.get(key, 0) + int(n)
    if "Total" not in found or "Passed" not in found:
        return None
    return Counts("uvu", passed=found["Passed"], failed=max(0, found["Total"] - found["Passed"]), skipped=found.get("Skipped", 0))


PARSERS: dict[str, Callable[[str], Counts | None]] = {"pytest": _pytest, "unittest": _unittest, "go": _go, "cargo": _cargo, "jest": _jest, "vitest": _vitest, "mocha": _mocha, "ava": _ava, "tape": _tape, "uvu": _uvu}
