"""Which tests passed, failed, errored or were skipped, each by name, from the runner's own report.

A summary line (`1 failed, 49 passed`) says how many; a verdict per test (SWE-bench's
FAIL_TO_PASS / PASS_TO_PASS) needs which. Each runner's structured report is read here:
pytest's JUnit XML (the verifier asks for it through PYTEST_ADDOPTS, with `--color=no -p
no:cacheprovider`, so the project's own options stay and the tree gains no cache), `go test`
(`-json` events, or `-v`'s `--- PASS:` lines), cargo's libtest lines (`test a::b ... ok`),
unittest's verbose lines (`test_a (pkg.T.test_a) ... ok`; only a run that reached its
`Ran N tests` summary, as the code under test can print such lines too), jest and vitest JSON
(`--json --outputFile`, which the inferred commands ask for), and any JUnit XML a command
writes to `$BENCHTAPE_REPORTS/junit.xml` (go-junit-report, cargo nextest, xmlrunner…).
Colour codes are stripped
first: a coloured log is never "not recognised".

Pure: text and bytes in, results out. The report files are read by `read_reports`, bounded
and never through a link (a test may leave a symlink where its report should be).
"""

from __future__ import annotations

import json
import re
import secrets
import shlex
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from benchtape.sandbox.testcounts import Counts, mocha_json, tap_outcomes, tape_outcomes

PASSED, FAILED, ERROR, SKIPPED = "passed", "failed", "error", "skipped"
OUTCOMES = (PASSED, FAILED, ERROR, SKIPPED)
_RANK = {PASSED: 0, SKIPPED: 1, FAILED: 2, ERROR: 3}  # one test reported twice (a teardown error): the worse
REPORT_LIMIT = 64 * 1024 * 1024  # bytes read of one report file
REPORTS_ENV = "BENCHTAPE_REPORTS"
ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class TestResult:
    id: str
    outcome: str  # one of OUTCOMES
    message: str = ""  # why it failed or was skipped (its first line), when the report says

    __test__ = False  # not a pytest class


@dataclass(frozen=True)
class TestReport:
    """The tests one run reported, by id, and where that was read from."""

    runner: str
    source: str  # junit, go-json, go-verbose, libtest, unittest-verbose, jest-json, vitest-json
    tests: dict[str, TestResult]
    # every run of every test, when the runner ran each test file more than once under projects
    # whose report names no project (vitest's `projects`: yup's `async` and `sync`); `tests`
    # holds the worst run of each id. Empty: each id ran once, and `tests` is every run.
    runs: tuple[TestResult, ...] = ()
    projects: int = 1  # how many times the runner ran one test file at most: its projects

    __test__ = False

    def counts(self) -> Counts:
        """What the runner ran, each run counted (yup's 88 tests under two projects, not the 44
        ids they share): the runner's own summary, and a phase's counts compare like for like."""
        every = self.runs or tuple(self.tests.values())
        by = {o: sum(1 for t in every if t.outcome == o) for o in OUTCOMES}
        return Counts(self.runner, passed=by[PASSED], failed=by[FAILED], errored=by[ERROR], skipped=by[SKIPPED])

    @property
    def note(self) -> str | None:
        """What a reader of the lists must know when one id stands for several runs, else None."""
        if self.projects < 2:
            return None
        return f"the tests ran under {self.projects} {self.runner} projects (each test file {self.projects} times; the report names no project): an id's outcome is the worst of its runs"

    def outcomes(self) -> dict[str, str]:
        return {i: t.outcome for i, t in sorted(self.tests.items())}

    def with_outcome(self, *outcomes: str) -> list[str]:
        return sorted(i for i, t in self.tests.items() if t.outcome in outcomes)


def strip_colour(text: str) -> str:
    return ANSI.sub("", text)


def _merge(results: Iterable[TestResult]) -> dict[str, TestResult]:
    merged: dict[str, TestResult] = {}
    for r in results:
        old = merged.get(r.id)
        if old is None or _RANK[r.outcome] > _RANK[old.outcome]:
            merged[r.id] = r
    return merged


def _first_line(text: str | None) -> str:
    return (text or "").strip().splitlines()[0][:300] if (text or "").strip() else ""


# ---------------------------------------------------------------- asking the runner for a report


def report_folder_name() -> str:
    """A fresh, unguessable folder name in the tree for one run's reports: a candidate patch
    cannot plant a report there in advance."""
    return f".benchtape-reports-{secrets.token_hex(8)}"


# pytest plugins that add a linter's verdict on each file as a test item (pytest-enabler turns
# them on wherever they are installed): a style check is no test of a fix, and its items failed
# at the base and with the reference alike (inflect #164: pytest-flake8 1.1 against flake8 6
# raised in every `FLAKE8` item, and the task read gold_still_fails). Blocked in every run.
LINT_PLUGINS = ("flake8", "flakes", "black", "mypy", "ruff", "isort", "pylint", "pycodestyle", "codestyle", "checkdocs")


def instrumented(command: str, folder: str) -> str:
    """`command` with the runner asked for its structured report in `$PWD/folder`: the
    variables are set in front of it, so any command line (setup steps, `cd sub && pytest`,
    a script that runs pytest) keeps its meaning. pytest's linter plugins are blocked (LINT_PLUGINS)."""
    reports = f'"$PWD"/{shlex.quote(folder)}'
    blocked = " ".join(f"-p no:{name}" for name in LINT_PLUGINS)
    addopts = f"--color=no -p no:cacheprovider {blocked} --junitxml='${REPORTS_ENV}/pytest.xml'"
    return f'{REPORTS_ENV}={reports}; export {REPORTS_ENV}; mkdir -p "${REPORTS_ENV}"; PYTEST_ADDOPTS="{addopts}${{PYTEST_ADDOPTS:+ $PYTEST_ADDOPTS}}"; export PYTEST_ADDOPTS; {command}'


def read_reports(folder: Path, output: str, runner: str | None, roots: Iterable[str] = ()) -> TestReport | None:
    """The per-test report of one run: the report files in `folder` first (JUnit XML, jest or
    vitest JSON), else what the output itself lists test by test (go, cargo, unittest).
    None when neither names a test."""
    for name, reader in (("pytest.xml", _junit_file), ("junit.xml", _nested_junit_file), ("jest.json", _jest_file), ("vitest.json", _vitest_file), ("mocha.json", _mocha_file)):
        data = _read_bounded(folder / name)
        if data is not None:
            found = reader(data, list(roots))
            if found is not None:
                return found if name != "junit.xml" else TestReport(runner or "junit", "junit", found.tests)
    plain = strip_colour(output)
    text_readers = TEXT_READERS.get(runner, ()) if runner is not None else tuple(r for rs in TEXT_READERS.values() for r in rs)
    for text_reader in text_readers:
        found = text_reader(plain)
        if found is not None:
            return found
    return None


def _read_bounded(path: Path) -> bytes | None:
    """A report file's bytes, read without following a link at any step below the tree (the
    report folder itself included: the tests know its name), at most REPORT_LIMIT; None when
    absent, or when what is there is a link, a FIFO, a folder or too large."""
    from benchtape.sandbox.nofollow import read_inside

    try:
        return read_inside(path.parent.parent, f"{path.parent.name}/{path.name}", REPORT_LIMIT)
    except (OSError, ValueError):
        return None


# ---------------------------------------------------------------- the readers


def read_junit(data: bytes, *, nested: bool = False) -> TestReport | None:
    """pytest's (or any xunit2) JUnit XML: one `testcase` per test; id `classname::name`.

    `nested` (a `junit.xml`, which node's test runner writes): node names every test's class
    `test` and nests a `describe` block's tests in a `testsuite` of its name; there the id is
    `test::` and the enclosing suites' names, then the test's, joined by ` > ` (`test::parse >
    rejects -1`), so two blocks' `it("works")` are two tests, not one (a top-level test keeps
    `test::name`). pytest's report is never read so: a root `test.py` is its class `test` too."""
    if b"<!DOCTYPE" in data[:4096] or b"<!ENTITY" in data:
        return None  # no report a runner writes declares entities
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError:
        return None
    cases = list(_cases(root, ()))
    if any(case.get("classname") == "pytest" and case.get("name") == "internal" for case, _ in cases):
        return None  # pytest's record of its own internal error (marko #261: MemoryError): no test's outcome
    results = [_junit_case(case, suites if nested else ()) for case, suites in cases if case.get("name")]
    return TestReport("pytest", "junit", _merge(results))


def _cases(element: ElementTree.Element, suites: tuple[str, ...]) -> Iterator[tuple[ElementTree.Element, tuple[str, ...]]]:
    """Each testcase in document order with the names of the testsuites it is nested in."""
    for child in element:
        if child.tag == "testcase":
            yield child, suites
        elif child.tag == "testsuite":
            yield from _cases(child, (*suites, child.get("name") or ""))
        else:
            yield from _cases(child, suites)


def _junit_case(case: ElementTree.Element, suites: tuple[str, ...]) -> TestResult:
    name = case.get("name") or ""
    cls = case.get("classname") or ""
    if cls == "test" and suites:  # node's: the describe blocks it is in
        name = " > ".join([*suites, name])
    test_id = f"{cls}::{name}" if cls else name
    outcome, message = PASSED, ""
    for child in case:
        if child.tag in ("failure", "error", "skipped"):
            outcome = {"failure": FAILED, "error": ERROR, "skipped": SKIPPED}[child.tag]
            message = _first_line(child.get("message") or child.text)
            if child.tag == "error" and (message.startswith("failed on setup") or message.startswith("collection failure")):
                outcome = ERROR
            break
    return TestResult(test_id, outcome, message)


def _junit_file(data: bytes, roots: list[str]) -> TestReport | None:
    return read_junit(data)


def _nested_junit_file(data: bytes, roots: list[str]) -> TestReport | None:
    return read_junit(data, nested=True)


def read_go_json(output: str) -> TestReport | None:
    """`go test -json` events: a test's final pass / fail / skip; id `package::Test`."""
    results = []
    for line in output.splitlines():
        if not line.startswith("{") or '"Action"' not in line:
            continue
        try:
            event = json.loads(line)
        except ValueError:
            continue
        if isinstance(event, dict) and event.get("Test") and event.get("Action") in ("pass", "fail", "skip"):
            outcome = {"pass": PASSED, "fail": FAILED, "skip": SKIPPED}[event["Action"]]
            results.append(TestResult(f"{event.get('Package', '')}::{event['Test']}", outcome))
    return TestReport("go", "go-json", _merge(results)) if results else None


# A test's `--- PASS:` line, wherever the line's text before it ends: a test that printed to stdout
# without a newline (`fmt.Print("progress...")`) has its output and the line glued together
# (`progress...--- PASS: TestA (0.00s)`), and the test was read as not run.
_GO_RESULT = re.compile(r"--- (PASS|FAIL|SKIP): (\S+) \(")
_GO_RUN = re.compile(r"^=== (?:RUN|CONT|PAUSE|NAME)\s")
_GO_LOG = re.compile(r"^\s+\S+\.go:\d+: (.+)$")  # t.Log / t.Skip's line: `    x_test.go:4: needs a database`
# the line that ends a package's output: `ok  \tpkg\t0.01s`, `FAIL\tpkg [build failed]`, `?   \tpkg\t[no test files]`
_GO_PACKAGE = re.compile(r"^(?:ok|FAIL|\?)\s+(\S+)(?:\s|$)")


def read_go_verbose(output: str) -> TestReport | None:
    """`go test -v`: each test's `--- PASS: TestX (0.00s)` line; id the test's name, or
    `package::TestX` (as `-json`'s) for a name two packages of the run both have (TestLRU of
    hashicorp/golang-lru's root and simplelru/ was one test, its outcome the worse of the two). A
    skipped test's reason is the log line its t.Skip printed before its SKIP line."""
    found: list[tuple[str | None, str, str, str]] = []  # (package, name, outcome, message)
    pending: list[tuple[str, str, str]] = []
    said = ""
    for line in output.splitlines():
        m = _GO_RESULT.search(line)
        if m is not None:
            outcome = {"PASS": PASSED, "FAIL": FAILED, "SKIP": SKIPPED}[m.group(1)]
            pending.append((m.group(2), outcome, said if outcome == SKIPPED else ""))
            said = ""
            continue
        if _GO_RUN.match(line):
            said = ""
            continue
        log = _GO_LOG.match(line)
        if log is not None:
            said = log.group(1).strip()[:300]
            continue
        ended = _GO_PACKAGE.match(line)
        if ended is not None:
            found += [(ended.group(1), *r) for r in pending]
            pending = []
    found += [(None, *r) for r in pending]
    if not found:
        return None
    packages: dict[str, set[str | None]] = {}
    for package, name, _, _ in found:
        packages.setdefault(name, set()).add(package)
    shared = {name for name, where in packages.items() if len(where) > 1}
    results = [TestResult(f"{package or ''}::{name}" if name in shared else name, outcome, message) for package, name, outcome, message in found]
    return TestReport("go", "go-verbose", _merge(results))


# libtest names a test's mode between its name and the dots (library/test/src/types.rs,
# `TestDesc::test_mode`): `test div_by_zero - should panic ... ok`; such a test was read as no
# test at all, and a task whose new test is `#[should_panic]` read tests_not_collected
_LIBTEST = re.compile(r"^test (\S+)(?: - (?:should panic|compile fail|compile))? \.\.\. (ok|FAILED|ignored)", re.MULTILINE)


def read_libtest(output: str) -> TestReport | None:
    """cargo test (libtest): `test a::b ... ok | FAILED | ignored`."""
    results = [TestResult(m.group(1), {"ok": PASSED, "FAILED": FAILED, "ignored": SKIPPED}[m.group(2)]) for m in _LIBTEST.finditer(output)]
    return TestReport("cargo", "libtest", _merge(results)) if results else None


# unittest's verbose report (TextTestRunner, `-v`), every Python from 3.8 to 3.13 (CPython's
# Lib/unittest/runner.py):
# - a test's description, `test_a (pkg.mod.T.test_a)` (3.11+; before, `test_a (pkg.mod.T)`),
#   with its docstring's first line on a line of its own when it has one, then ` ... `; its
#   outcome word follows, at once or after what the test itself printed;
# - a failed subtest: 3.11+ print it on a line of its own, indented, the description followed by
#   its parameters (`  test_a (pkg.mod.T.test_a) (i=1) ... FAIL`), and no word for the test
#   itself; before 3.11 nothing at all is printed for it, and the next test's description
#   follows on the same line; every failed subtest has its section after the tests, `FAIL:
#   test_a (pkg.mod.T.test_a) (i=1)`, which names it in every version;
# - a class or module fixture that raised: `setUpClass (pkg.mod.T) ... ERROR` (3.11+; before,
#   a bare `ERROR`) and its section `ERROR: setUpClass (pkg.mod.T)`;
# - the summary, last: `Ran N tests in Xs`, a blank line, `OK` / `FAILED (…)` / `NO TESTS RAN`.
_UT_WORD = r"(?:ok|FAIL|ERROR|skipped(?: [^\n]*)?|expected failure|unexpected success)"
_UT_LOOSE = r"(?:ok|FAIL|ERROR|skipped(?: '[^\n]*'| \"[^\n]*\")?|expected failure|unexpected success)"  # after what a test printed: a skip's reason is its repr
_UT_TOKEN = re.compile(
    r"(?P<start>(?:^|(?<=\.\.\. ))(?:  )?(?P<name>\w+) \((?P<where>[\w.]+)\)(?P<sub> [\[(][^\n]*?)?(?:\n[^\n]*?)?? \.\.\. (?:(?P<word>" + _UT_WORD + r")[ \t]*$)?)"
    r"|(?P<section>^(?P<kind>FAIL|ERROR|UNEXPECTED SUCCESS): (?P<sname>\w+) \((?P<swhere>[\w.]+)\)(?P<ssub> [^\n]*)?$)"
    r"|(?P<summary>^Ran (?P<ran>\d+) tests? in [\d.]+s[ \t]*\n(?:[ \t]*\n)?(?:OK|FAILED|NO TESTS RAN)\b[^\n]*$)"
    r"|(?:^|(?<=\s))(?P<loose>" + _UT_LOOSE + r")[ \t]*$",
    re.MULTILINE,
)
_UT_OUTCOME = {"ok": PASSED, "FAIL": FAILED, "ERROR": ERROR, "expected failure": SKIPPED, "unexpected success": FAILED, "UNEXPECTED SUCCESS": FAILED}
_UT_FIXTURES = ("setUpClass", "tearDownClass", "setUpModule", "tearDownModule")  # no test: never in `Ran N`


def _ut_id(name: str, where: str) -> str:
    return where if where.endswith("." + name) else f"{where}.{name}"


def _ut_result(test_id: str, word: str, sub: str = "") -> TestResult:
    if word.startswith("skipped"):
        return TestResult(test_id, SKIPPED, word[len("skipped") :].strip().strip("'\""))
    return TestResult(test_id, _UT_OUTCOME[word], f"subtest {sub.strip()}: {word}" if sub else "")


def read_unittest_verbose(output: str) -> TestReport | None:
    """`python -m unittest -v`: `test_a (pkg.mod.T.test_a) ... ok` (3.11+; before, the
    parenthesis held the class alone); id the dotted path to the test.

    Only a run that reached its summary is read: a run that ended before it (the code under
    test printed the lines of tests passing, then `os._exit(0)`) is no report, None. So is one
    that names more tests than its `Ran N tests` says it ran (skipped ones aside: 3.12.1 left
    them out of N), and a test's line after the last summary: lines no runner wrote. A test
    with a failed subtest is one test, failed (or in error); with every subtest passed, passed.
    None when no run named a test."""
    results: list[TestResult] = []
    run: list[TestResult] = []  # the results of the run whose summary is still to come
    started: list[str] = []  # this run's tests, in order, by id
    pending: str | None = None  # a test started whose outcome is still to come
    sections = False  # past this run's first failure section: its tests have all been listed
    for m in _UT_TOKEN.finditer(output):
        if m.group("summary"):
            if started:  # a run that listed no test (no -v) is not read: its sections alone would name only the failures
                told = {r.id for r in run}
                merged = _merge([*run, *(TestResult(i, ERROR, "no outcome in the report") for i in dict.fromkeys(started) if i not in told)])
                ran = [i for i, r in merged.items() if r.outcome != SKIPPED and i.rsplit(".", 1)[-1] not in _UT_FIXTURES]
                if len(ran) > int(m.group("ran")):
                    return None  # more tests than the run says it ran (3.12.1 left skipped ones out of N): lines no runner wrote
                results += merged.values()
            run, started, pending, sections = [], [], None, False
        elif m.group("section"):
            sections, pending = True, None
            test_id = _ut_id(m.group("sname"), m.group("swhere"))
            kind = m.group("kind")
            run.append(TestResult(test_id, _UT_OUTCOME[kind], f"subtest {m.group('ssub').strip()}: {kind}" if m.group("ssub") else ""))
        elif sections:
            continue  # a traceback's lines, which may hold anything
        elif m.group("start"):
            test_id = _ut_id(m.group("name"), m.group("where"))
            sub, word = m.group("sub"), m.group("word")
            if sub:  # a subtest's own line (3.11+): the outcome of one part of its test
                if word:
                    run.append(_ut_result(test_id, word, sub))
                continue
            started.append(test_id)
            pending = None
            if word:
                run.append(_ut_result(test_id, word))
            else:
                pending = test_id
        elif pending is not None:  # the outcome after what the test printed
            run.append(_ut_result(pending, m.group("loose")))
            pending = None
    if started or pending is not None:
        return None  # a test listed after the last summary: the run never finished (or the lines are not the runner's)
    return TestReport("unittest", "unittest-verbose", _merge(results)) if results else None


def read_tap(output: str) -> TestReport | None:
    """ava's `--tap`: each top-level `ok`/`not ok` line; id its description (`test › adds`: the
    test file's path without its extension, then the title, joined by ` › `)."""
    found = tap_outcomes(output)
    if not found:
        return None
    by = {"passed": PASSED, "failed": FAILED, "skipped": SKIPPED}
    return TestReport("ava", "tap", _merge(TestResult(description, by[outcome]) for description, outcome in found))


def read_mocha_stdout(output: str) -> TestReport | None:
    """mocha's JSON reporter's document on stdout, where its mocha wrote no report file (before
    mocha 9, `--reporter-option output=` is unknown): read as the file is."""
    doc = mocha_json(output)
    return _mocha_file(json.dumps(doc).encode(), []) if doc is not None else None


def read_tape(output: str) -> TestReport | None:
    """tape's TAP: each `# name` a test, failed when any assertion under it failed; id its name
    (tape prints no file: the same name in two files is one id, failed when either failed)."""
    found = tape_outcomes(output)
    if not found:
        return None
    by = {"passed": PASSED, "failed": FAILED, "skipped": SKIPPED}
    return TestReport("tape", "tap", _merge(TestResult(name, by[outcome]) for name, outcome in found))


TEXT_READERS: dict[str, tuple[Callable[[str], TestReport | None], ...]] = {"go": (read_go_json, read_go_verbose), "cargo": (read_libtest,), "unittest": (read_unittest_verbose,), "ava": (read_tap,), "tape": (read_tape,), "mocha": (read_mocha_stdout,)}


def _relative(path: str, roots: list[str]) -> str:
    for root in [*roots, "/workspace"]:
        root = root.rstrip("/") + "/"
        if path.startswith(root):
            return path[len(root) :]
    return path


def _js_report(data: bytes, roots: list[str], runner: str) -> TestReport | None:
    """jest's or vitest's JSON report: one `testResults` entry per test file run; id
    `file::fullName`. Under projects (vitest's `projects`, jest's) one file runs once per
    project, and the report names none of them (vitest 3.2: no field of an entry or a test
    tells yup's `async` run from its `sync` one, and their order is the workers'): the ids stay
    the file's, each the worst of its runs, and every run is counted (TestReport.runs)."""
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("testResults"), list):
        return None
    results: list[TestResult] = []
    files: dict[str, int] = {}
    for suite in doc["testResults"]:
        if not isinstance(suite, dict):
            continue
        file = _relative(str(suite.get("name") or suite.get("testFilePath") or ""), roots)
        files[file] = files.get(file, 0) + 1
        results += _js_suite(suite, file)
    projects = max(files.values(), default=1)
    return TestReport(runner, f"{runner}-json", _merge(results), runs=tuple(results) if projects > 1 else (), projects=projects)


def _js_suite(suite: dict, file: str) -> list[TestResult]:
    """One test file's run in a jest or vitest report: each test, or the file as an error when
    it did not load (no test ran, so none can be named)."""
    cases = suite.get("assertionResults") or []
    if not cases and suite.get("status") == "failed":
        return [TestResult(file, ERROR, _first_line(suite.get("message")))]
    results = []
    for case in cases:
        if not isinstance(case, dict):
            continue
        status = case.get("status")
        outcome = PASSED if status == "passed" else FAILED if status == "failed" else SKIPPED
        results.append(TestResult(f"{file}::{str(case.get('fullName') or case.get('title')).strip()}", outcome, _first_line("\n".join(map(str, case.get("failureMessages") or [])))))
    return results


def _jest_file(data: bytes, roots: list[str]) -> TestReport | None:
    return _js_report(data, roots, "jest")


def _vitest_file(data: bytes, roots: list[str]) -> TestReport | None:
    return _js_report(data, roots, "vitest")


def _mocha_file(data: bytes, roots: list[str]) -> TestReport | None:
    """mocha's JSON reporter (`--reporter json --reporter-option output=FILE`): each test with its
    file and full title (its describe blocks' titles and its own, joined by spaces); a pending
    test is skipped; a hook that failed (`"before all" hook for "x"`) is no test of its own and
    stands for the tests it kept from running: an error."""
    try:
        doc = json.loads(data)
    except ValueError:
        return None
    if not isinstance(doc, dict) or not isinstance(doc.get("tests"), list) or not isinstance(doc.get("stats"), dict):
        return None

    def key(t: dict) -> str:  # mocha before 8 names no file: the title alone
        file, title = _relative(str(t.get("file") or ""), roots), str(t.get("fullTitle") or t.get("title") or "").strip()
        return f"{file}::{title}" if file else title

    def message(t: dict) -> str:
        err = t.get("err")
        return _first_line(str(err.get("message") or "") if isinstance(err, dict) else str(err or ""))

    pending = {key(t) for t in doc.get("pending") or [] if isinstance(t, dict)}
    results = []
    for t in doc["tests"]:
        if isinstance(t, dict):
            failed = isinstance(t.get("err"), dict) and bool(t["err"])
            results.append(TestResult(key(t), SKIPPED if key(t) in pending else FAILED if failed else PASSED, message(t)))
    listed = {r.id for r in results}
    results += [TestResult(key(t), ERROR, message(t)) for t in doc.get("failures") or [] if isinstance(t, dict) and key(t) not in listed]
    return TestReport("mocha", "mocha-json", _merge(results))


_PYTEST_VALUE_OPTIONS = {"-k", "-m", "-p", "-c", "-o", "-W", "--rootdir", "--deselect", "--ignore", "--ignore-glob", "--confcutdir", "--basetemp", "--override-ini", "--maxfail", "--tb", "-n", "--durations", "--import-mode", "--log-level", "--timeout"}


_OPERATORS = frozenset({";", ";;", "&&", "|", "||", "|&"})  # a lone "&" is also `2>&1`'s


def _shell_syntax(command: str) -> bool:
    """Whether `command` is more than one program's words: a list, a pipeline, a substitution.
    Read as the shell splits it, so a quoted `|` is a word's: `go test -run '^(TestA|TestB)$'`
    (what task create infers for two Go tests) was taken for a pipeline, and its suite never ran."""
    if any(op in command for op in ("`", "$(", "\n")):
        return True
    lexer = shlex.shlex(command, posix=True, punctuation_chars=";&|")
    lexer.whitespace_split = True
    try:
        return any(token in _OPERATORS for token in lexer)
    except ValueError:
        return True


def suite_command(command: str, runner: str | None, tree: Path) -> str | None:
    """The verify command widened to the project's whole suite (its selection of changed test
    files dropped), for the base's baseline; None when it cannot be derived (a shell pipeline,
    a runner without a known way to run everything)."""
    if _shell_syntax(command):
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if runner == "pytest":
        at = next((i for i, w in enumerate(words) if w in ("pytest", "py.test") or w.endswith(("/pytest", "/py.test"))), None)
        if at is None:
            return None
        kept, value = words[: at + 1], False
        for w in words[at + 1 :]:
            if value or w.startswith("-"):
                kept.append(w)
                value = not value and w in _PYTEST_VALUE_OPTIONS
            # else a path or node id: the selection the suite drops
        if len(kept) < len(words) and "--continue-on-collection-errors" not in kept:
            # one module that cannot be collected (tomlkit's toml-test cases live in a git
            # submodule a task's tree lacks) would stop the whole suite before any test ran
            kept.append("--continue-on-collection-errors")
        return shlex.join(kept)
    if runner == "unittest" and "unittest" in words:
        at = words.index("unittest")
        return shlex.join([*words[: at + 1], "discover", "-v"])
    if runner == "go":
        kept, skip = [], False
        for w in words:
            if skip:
                skip = False
                continue
            if w == "-run":
                skip = True
                continue
            if w.startswith("-run=") or (w.startswith(".") and w not in ("./...",)):
                continue
            kept.append(w)
        return shlex.join([*kept, "./..."])
    if runner == "cargo":
        return _cargo_suite(words)
    if runner in ("vitest", "jest", "node", "mocha", "ava"):
        return _without_test_files(command, words)
    return None


_CARGO_SELECTION = {"--test", "--bin", "--example", "--bench"}  # each takes the target's name
_CARGO_SELECTION_FLAGS = {"--lib", "--bins", "--tests", "--examples", "--benches", "--doc", "--all-targets"}
_CARGO_VALUE_OPTIONS = {"-p", "--package", "--exclude", "-F", "--features", "--target", "--target-dir", "--manifest-path", "--profile", "-j", "--jobs", "--color", "--message-format", "-Z", "--config", "--lockfile-path"}


def _cargo_suite(words: list[str]) -> str | None:
    """`cargo test` with the command's own options (`--features`, `-p`, `--manifest-path`, an
    environment prefix) and without its selection of targets, test-name filter and libtest
    arguments; `--no-fail-fast`, so a failing test binary does not keep the others from giving
    the baseline (they had read as absent, and their tests as FAIL_TO_PASS)."""
    at = next((i for i in range(len(words) - 1) if (words[i] == "cargo" or words[i].endswith("/cargo")) and words[i + 1] == "test"), None)
    if at is None:
        return None
    kept, skip, value = words[: at + 2], False, False
    for w in words[at + 2 :]:
        if w == "--":
            break
        if skip:
            skip = False
            continue
        if value:
            kept.append(w)
            value = False
            continue
        if w in _CARGO_SELECTION:
            skip = True
        elif w in _CARGO_SELECTION_FLAGS or any(w.startswith(o + "=") for o in _CARGO_SELECTION):
            continue
        elif w in _CARGO_VALUE_OPTIONS:
            kept.append(w)
            value = True
        elif w.startswith("-") or w.startswith("+"):
            kept.append(w)
        # else the test-name filter: the selection the suite drops
    if "--no-fail-fast" not in kept:
        kept.append("--no-fail-fast")
    return shlex.join(kept)


_JS_TEST_PATH = re.compile(r"/|\.[cm]?[jt]sx?$")
_NO_VALUE = ("--tap", "--json", "--serial", "--fail-fast", "--verbose")  # flags that take no value: a file after one is a file


def _without_test_files(command: str, words: list[str]) -> str | None:
    """A JavaScript runner's command with the test files it ends with dropped, cut from the
    command's own text: its report path (`"${BENCHTAPE_REPORTS:-/tmp}/vitest.json"`) must stay
    as written, which re-quoting the words would stop the shell expanding."""
    files = 0
    while files < len(words) and not words[-1 - files].startswith("-") and _JS_TEST_PATH.search(words[-1 - files]):
        files += 1
    before = words[-1 - files] if files < len(words) else ""
    if files == 0 or (before.startswith("-") and "=" not in before and before not in _NO_VALUE):
        return None  # nothing selected, or the first "file" may be an option's value (`--config ./vitest.config.ts`)
    text = command.rstrip()
    for word in reversed(words[-files:]):
        form = next((f for f in (shlex.quote(word), word) if text.endswith(" " + f)), None)
        if form is None:
            return None
        text = text[: -len(form) - 1].rstrip()
    return text
