"""The verify command of a new task: the project's test runner, naming only the changed tests.

Read from the base tree and the hidden tests' patch, never run: pytest (or unittest, when the
repository shows no sign of pytest and its tests are unittest's), `go test` on the changed
packages with `-run` naming the changed test functions, `cargo test --test NAME` for an
integration test file (else `cargo test`), jest or vitest on the changed files (whichever
package.json names). Nothing recognised: the placeholder `false`, and the caller says so.
Every path, module and selector is shell-quoted: the command runs through `/bin/sh -c`, and
a test file's name (`tests/test_a;echo X;.py`) is the repository's to choose, not a command.
"""

from __future__ import annotations

import json
import re
import shlex
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any, Callable

from benchtape.sandbox.fail_fast import FAIL_FAST
from benchtape.spec.task import PLACEHOLDER_COMMAND

ReadFile = Callable[[str], str | None]  # a path in the base tree → its text (None: absent)
Importers = Callable[[str], list[str]]  # a path in the base tree → the files there that import it


@dataclass(frozen=True)
class Inferred:
    command: str
    runner: str | None  # None: nothing recognised (the placeholder)
    note: str


def infer_command(test_files: dict[str, bytes], read: ReadFile, importers: Importers | None = None) -> Inferred:
    """`test_files`: changed test path → its patch block (deleted files already left out);
    `importers`: the base's files that import a path (none known when not given)."""
    paths = sorted(test_files)
    py = [p for p in paths if p.endswith(".py")]
    go = [p for p in paths if p.endswith("_test.go")]
    rs = [p for p in paths if p.endswith(".rs")]
    js = [p for p in paths if _js_test(p)]
    if py:
        return _python(py, test_files, read)
    if go:
        return _go(go, test_files)
    if rs:
        return _cargo(rs)
    if js:
        return _javascript(js, read, test_files, importers or (lambda _: []))
    return Inferred(PLACEHOLDER_COMMAND, None, "no test runner recognised for the changed tests: `verify.command` is the placeholder `false`; write the command that runs them")


_JS_TEST = re.compile(r"\.(?:test|spec)\.[cm]?[jt]sx?$|(?:^|/)test\.[cm]?[jt]s$")  # `test.js` beside the code: ava's convention
_JS_UNDER_TESTS = re.compile(r"(?:^|/)(?:__tests__|tests?)/.*\.[cm]?[jt]sx?$")
_JS_HELPER = re.compile(r"(?:^|/)(?:__fixtures__|__mocks__|fixtures?|helpers?|utils?|support)/|(?:^|/)(?:helpers?|utils?|setup|fixtures?)[^/]*$", re.IGNORECASE)


def _js_test(path: str) -> bool:
    """A JavaScript test file: `*.test.*` / `*.spec.*`, a `test.js` (sindresorhus's packages), or a file under `__tests__/` (jest's
    default match, immer's `__tests__/regressions.js`) or `test/` (mocha's default folder,
    express's `test/req.fresh.js`) unless it reads as a helper or fixture there
    (`__tests__/helpers.js`, `test/support/env.js`: named to a runner, it fails as a suite with
    no test)."""
    if _JS_TEST.search(path):
        return True
    found = _JS_UNDER_TESTS.search(path)
    return bool(found and not _JS_HELPER.search(found.group(0).lstrip("/").split("/", 1)[1]))


def _python(paths: list[str], blocks: dict[str, bytes], read: ReadFile) -> Inferred:
    # test modules by name: pytest's (test_*.py, *_test.py) and a module named tests.py or
    # test.py (itsdangerous, Django apps), which pytest collects only when named: its folder
    # (`pytest -q .`) collected nothing and every such task was tests_not_collected
    modules = [p for p in paths if re.search(r"(?:^|/)(?:test_[^/]*|[^/]*_test|tests?)\.py$", p)]
    targets = modules or sorted({str(PurePosixPath(p).parent) for p in paths})
    if _uses_pytest(read) or not _all_unittest(modules, blocks):
        said = f"pytest on the changed test {'files' if modules else 'folders'}"
        # arrow's `addopts = --cov=arrow --cov-fail-under=99`: the changed files alone cover 55%,
        # so every run failed with every test passing (its reference "gold_still_fails")
        no_cov = _measures_coverage(read)
        command = "python3 -m pytest -q " + ("--no-cov " if no_cov else "") + " ".join(shlex.quote(t) for t in targets)
        return Inferred(command, "pytest", f"{said}; --no-cov: the project's pytest options measure coverage, whose threshold a few test files never meet" if no_cov else said)
    dotted = [m[:-3].replace("/", ".") for m in modules]
    return Inferred("python3 -m unittest -v " + " ".join(shlex.quote(d) for d in dotted), "unittest", "unittest on the changed test modules (the repository shows no sign of pytest)")


def _uses_pytest(read: ReadFile) -> bool:
    for name in ("pytest.ini", "conftest.py", "pyproject.toml", "setup.cfg", "tox.ini", "requirements-dev.txt", "requirements_dev.txt", "requirements-test.txt", "dev-requirements.txt", "test-requirements.txt", ".github/workflows/test.yml"):
        text = read(name)
        if text is not None and (name in ("pytest.ini", "conftest.py") or "pytest" in text):
            return True
    return False


_ADDOPTS = re.compile(r"^[ \t]*addopts[ \t]*=[ \t]*(\[[^\]]*\]|.*(?:\n[ \t]+\S.*)*)", re.MULTILINE)


def _measures_coverage(read: ReadFile) -> bool:
    """Whether the project's pytest options (`addopts` in pytest.ini, tox.ini, setup.cfg or
    pyproject.toml) turn pytest-cov on: with it, a run of a few test files fails on the
    project's coverage threshold however its tests do, and `--no-cov` is known to pytest."""
    for name in ("pytest.ini", "tox.ini", "setup.cfg", "pyproject.toml"):
        text = read(name)
        if text is not None and any(re.search(r"(?:^|[\s\"'])--cov(?:[=\s\"']|$)", m.group(1)) for m in _ADDOPTS.finditer(text)):
            return True
    return False


def _all_unittest(modules: list[str], blocks: dict[str, bytes]) -> bool:
    return bool(modules) and all(b"unittest" in blocks[m] or b"TestCase" in blocks[m] for m in modules)


_GO_HUNK_HEADER = re.compile(rb"^@@[^@]*@@ ?(.*)$")
_GO_DECLARED = re.compile(rb"^func\s+(\([^)]*\)\s*)?(\w+)\s*\(")  # a function's or method's first line (a method's: a suite's, run by its suite's name)


def _go(paths: list[str], blocks: dict[str, bytes]) -> Inferred:
    packages = sorted({"./" + str(PurePosixPath(p).parent) if str(PurePosixPath(p).parent) != "." else "." for p in paths})
    names: list[str] = []
    whole = False
    for p in paths:
        changed, outside = _go_changed_tests(blocks[p])
        names += [n for n in changed if n not in names]
        whole = whole or outside
    run = f" -run {shlex.quote('^(' + '|'.join(names) + ')$')}" if names and not whole else ""
    note = "go test on the changed packages" + (", naming the changed test functions" if run else ", all of their tests (a change outside a test function: a table or helper they may share)" if names else "")
    return Inferred(f"go test -v {' '.join(shlex.quote(p) for p in packages)}{run}", "go", note)


def _go_changed_tests(block: bytes) -> tuple[list[str], bool]:
    """The Test (Example, Fuzz) functions a Go test file's patch changes lines of, and whether it
    changes code some test may share that existed before (a helper, a top-level table: the
    tests using it are not known by name).

    Each changed line belongs to the function whose `func` line is the last one above it, in the
    hunk or, before the hunk's first, in its header: git's header is the last `func` line
    *before* the hunk's context, so a hunk whose context starts at `func TestVersion7` is headed
    `func TestVersion6` (google/uuid #150 ran TestVersion6 and never TestVersion7). Blank lines,
    comments, the package clause, imports, benchmarks and code the patch adds whole (a new
    helper: the tests calling it changed too) name no test."""
    names: list[str] = []
    outside = False
    new_file = b"\n--- /dev/null" in b"\n" + block
    scope: str | None = None  # the name of the test the lines belong to; "" = none to name; None = shared code that was there
    for line in block.splitlines():
        header = _GO_HUNK_HEADER.match(line)
        if header:
            text = header.group(1).strip()
            scope = _go_scope(_GO_DECLARED.match(text), added=False) if text.startswith(b"func") else None
            continue
        mark, code = line[:1], line[1:]
        if mark not in (b" ", b"+", b"-") or line.startswith((b"+++ ", b"--- ")):
            continue
        declared = _GO_DECLARED.match(code)
        if declared and mark != b"-":
            scope = _go_scope(declared, added=mark == b"+")
        elif code[:1] not in (b" ", b"\t", b"}", b")", b"") and not _GO_IMPORT.match(code):
            scope = "" if mark == b"+" else None  # a top-level declaration: one added whole, or one that was there
        if mark == b" " or not code.strip() or code.strip().startswith(b"//") or _GO_IMPORT.match(code):
            continue
        if scope:
            if scope not in names:
                names.append(scope)
        elif scope is None and not new_file:
            outside = True
    return names, outside


_GO_TEST = re.compile(r"^(?:Test|Example|Fuzz)(?![a-z])")  # what `go test -run` runs
_GO_IMPORT = re.compile(rb'^\s*(?:package\s+\w+|import\b.*|\(|\)|(?:[\w.]+\s+)?"[^"]*")\s*$')  # the package clause, an import line, a bare paren of a block


def _go_scope(declared: re.Match[bytes] | None, *, added: bool) -> str | None:
    """What a `func` line opens: the name of a test `-run` can name; "" for a benchmark or a
    function the patch adds whole; None for a helper or method that was there (a suite's
    method runs under its suite's name, which is not known here)."""
    if declared is None:
        return None
    name = declared.group(2).decode()
    if not declared.group(1) and _GO_TEST.match(name):
        return name
    return "" if added or name.startswith("Benchmark") else None


def _cargo(paths: list[str]) -> Inferred:
    integration = [PurePosixPath(p).stem for p in paths if re.match(r"^(?:.*/)?tests/[^/]+\.rs$", p) and not re.match(r"^(?:.*/)?src/", p)]
    if integration:
        # --no-fail-fast: cargo stops at the first test binary that fails, and the next one's
        # tests, passing at the base, read as absent there and became FAIL_TO_PASS
        return Inferred("cargo test --no-fail-fast " + " ".join(f"--test {shlex.quote(t)}" for t in integration), "cargo", "cargo test on the changed integration tests")
    return Inferred("cargo test --no-fail-fast", "cargo", "cargo test (the changed tests are unit tests inside the crate)")


def _javascript(paths: list[str], read: ReadFile, blocks: dict[str, bytes] | None = None, importers: Importers = lambda _: []) -> Inferred:
    text = read("package.json") or "{}"
    try:
        pkg = json.loads(text)
    except ValueError:
        pkg = {}
    deps = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})}
    files = " ".join(shlex.quote(p) for p in paths)
    # each asks for its JSON report where the verifier reads it ($BENCHTAPE_REPORTS; run by hand, /tmp)
    if "vitest" in deps or any(d.startswith("@vitest/") for d in deps) or _has_config(read, "vitest"):  # vitest through a scripts package (pillarjs/path-to-regexp's @borderless/ts-scripts), seen by its config file
        suites, note = _suites(paths, read, blocks or {}, importers, "vitest")
        off = " --coverage.enabled=false" if _coverage_on(read, pkg, "vitest") else ""
        return Inferred(f'npx vitest run{off} --reporter=default --reporter=json --outputFile.json="${{BENCHTAPE_REPORTS:-/tmp}}/vitest.json"{suites}', "vitest", note + _COVERAGE_OFF if off else note)
    if "jest" in deps or "jest" in json.dumps(pkg.get("scripts") or {}) or "jest" in pkg or _has_config(read, "jest") or any(d in ("@types/jest", "ts-jest", "babel-jest") or d.startswith("@jest/") for d in deps):
        suites, note = _suites(paths, read, blocks or {}, importers, "jest")
        off = " --coverage=false" if _coverage_on(read, pkg, "jest") else ""
        return Inferred(f'npx jest{off} --json --outputFile="${{BENCHTAPE_REPORTS:-/tmp}}/jest.json"{suites}', "jest", note + _COVERAGE_OFF if off else note)
    if "mocha" in deps or re.search(r"\bmocha\b", json.dumps(pkg.get("scripts") or {})):  # one reporter at a time: its JSON to the report file, the output the tests' own
        return _mocha(pkg, read, files)
    if "ava" in deps or re.search(r"\bava\b", json.dumps(pkg.get("scripts") or {})):  # its TAP: a line per test, the file in each id
        return Inferred(f"npx ava --tap {files}", "ava", "ava on the changed test files (TAP: one line per test)")
    scripts = json.dumps(pkg.get("scripts") or {})
    if "node --test" in scripts or any(_NODE_TEST_IMPORT.search((read(p) or "") + (blocks or {}).get(p, b"").decode(errors="replace")) for p in paths):  # node's own runner (node 20): its JUnit report beside the usual output
        # a file importing node:test run as a plain script (`node --conditions development test.js`: wooorm's ~400 packages) is run by the runner, with the script's node options
        options = "".join(f"{shlex.join(o.split())} " for o in _node_options(scripts))  # quoted, as every path the command names: a value is never a command
        return Inferred(f'node --test {options}--test-reporter=spec --test-reporter-destination=stdout --test-reporter=junit --test-reporter-destination="${{BENCHTAPE_REPORTS:-/tmp}}/junit.xml" {files}', "node", "node's test runner on the changed test files")
    if "tape" in deps or re.search(r"\btape\b", scripts):  # TAP, one `# name` line per test, its assertions under it
        return Inferred(f"npx tape {files}", "tape", "tape on the changed test files (TAP: each `# name` a test, its assertions' `ok` lines under it)")
    if "uvu" in deps or re.search(r"\buvu\b", scripts):  # lukeed's packages: `uvu -r esm test`
        return _uvu(pkg, paths)
    return Inferred(PLACEHOLDER_COMMAND, None, "package.json names neither jest, vitest, mocha, ava, tape, uvu nor node's test runner: `verify.command` is the placeholder `false`; write the command that runs the changed tests")


def _uvu(pkg: dict[str, Any], paths: list[str]) -> Inferred:
    """uvu takes a folder and a pattern of the paths under it, not files: the changed test files
    as one anchored pattern from the top, with the modules the project's own test script
    preloads (`-r esm`, `-r tsm`). uvu reports no test by name but the failing ones: its
    tasks are judged by exit status, with its Total/Passed counts."""
    script = next((str(v) for v in (pkg.get("scripts") or {}).values() if re.search(r"\buvu\b", str(v))), "")
    preload = "".join(f"-r {shlex.quote(m)} " for m in re.findall(r"(?:^|\s)(?:-r|--require)\s+(\S+)", script))
    pattern = "^(?:" + "|".join(re.escape(p) for p in paths) + ")$"
    return Inferred(f"npx uvu {preload}. {shlex.quote(pattern)}", "uvu", "uvu on the changed test files (a pattern of their paths; uvu names no passing test, so the verdict is its exit status)")


_DEFINES_TESTS = re.compile(r"\b(?:describe|it|test|suite|bench)(?:\.\w+)*\s*\(")


def _suites(paths: list[str], read: ReadFile, blocks: dict[str, bytes], importers: Importers, runner: str) -> tuple[str, str]:
    """The test files to name to vitest or jest (each after a space), and what the command runs.
    A changed `*.spec.*` file that defines no test is a table of cases the suites import
    (pillarjs/path-to-regexp's src/cases.spec.ts): named, the runner fails it as "No test suite
    found", so the test files that import it are named in its place; the whole suite runs only
    when none is found (and then the runner may still fail on the table)."""

    def defines_tests(path: str) -> bool:
        text = (read(path) or "") + blocks.get(path, b"").decode(errors="replace")
        return not text.strip() or bool(_DEFINES_TESTS.search(text))  # nothing to read: taken as a suite

    suites = [p for p in paths if defines_tests(p)]
    if suites == paths:
        return "".join(f" {shlex.quote(p)}" for p in paths), f"{runner} on the changed test files"
    tables = [p for p in paths if p not in suites]
    users = [u for t in tables for u in sorted(importers(t)) if _js_test(u) and u not in suites and defines_tests(u)]
    suites += list(dict.fromkeys(users))
    define = "defines" if len(tables) == 1 else "define"
    if not suites:
        return "", f"{runner} on the whole suite: the changed {', '.join(tables)} {define} no test and no test file imports {'it' if len(tables) == 1 else 'them'}"
    said = f"{runner} on the changed test files" if not users else f"{runner} on the test files that run the changed cases"
    return "".join(f" {shlex.quote(p)}" for p in suites), f"{said} ({', '.join(tables)} {define} no test: {'the suites that import it are named' if users else 'left out'})"


_COVERAGE_OFF = "; coverage off: the project's config collects it, and its thresholds fail a run of a few test files however the tests do"
_COLLECTS = {"jest": re.compile(r"""["']?collectCoverage["']?\s*:\s*true\b"""), "vitest": re.compile(r"""\bcoverage\s*:\s*\{[^{}]*?\benabled\s*:\s*true\b""", re.DOTALL)}


def _coverage_on(read: ReadFile, pkg: dict[str, Any], runner: str) -> bool:
    """Whether the runner's config (its config file, or package.json's `jest` key) turns
    coverage on for every run: the JavaScript side of a pytest `--cov` in addopts."""
    texts = _config_texts(read, runner)
    if runner == "jest" and isinstance(pkg.get("jest"), dict):
        texts.append(json.dumps(pkg["jest"]))
    return any(_COLLECTS[runner].search(text) for text in texts)


def _has_config(read: ReadFile, runner: str) -> bool:
    """Whether the tree has the runner's own config file at its top (`vitest.config.mts`, `jest.config.js`)."""
    return bool(_config_texts(read, runner))


def _config_texts(read: ReadFile, runner: str) -> list[str]:
    """The runner's own config files at the tree's top, each one's text."""
    found = (read(f"{runner}.config.{ext}") for ext in ("ts", "mts", "cts", "js", "mjs", "cjs", "json"))
    return [text for text in found if text is not None]


_NODE_TEST_IMPORT = re.compile(r"""(?:from\s+|require\(\s*|import\(\s*)['"]node:test['"]""")
_NODE_OPTION = re.compile(r"(?:^|\s)((?:--conditions|-C|--import|--require|-r|--loader|--experimental-loader)(?:=|\s+)[^\s\"'-][^\s\"']*|--experimental-[\w-]+|--no-warnings|--enable-source-maps)(?=\s|$)")


def _node_options(scripts: str) -> list[str]:
    """The options a package's scripts give node when they run its tests as plain scripts
    (`node --conditions development test.js`): the export conditions, preloads and experimental
    flags the tests may need to import the package as its tests do."""
    found: list[str] = []
    for m in re.finditer(r"\bnode((?:\s+-[^\s\"]+(?:\s+[^\s\"-][^\s\"]*)?)+)\s+[^\s\"-]", scripts):
        for option in _NODE_OPTION.finditer(m.group(1)):
            text = " ".join(option.group(1).split())
            if text not in found:
                found.append(text)
    return found


def _mocha(pkg: dict[str, Any], read: ReadFile, files: str) -> Inferred:
    """mocha on the changed files, with the test script's options, its JSON reporter on. mocha
    1.x is called through its `_mocha`, with no `--reporter-option`: its `bin/mocha` spawns
    `_mocha` with `customFds`, which Node dropped, so the child's output is lost (mime-types in
    2015: exit 2 and not a line), and its CLI knows no `--reporter-option` (it says so and stops
    where no file is named: the whole suite's command); its JSON reporter writes to stdout,
    where the verifier reads it."""
    kept = _mocha_options(str((pkg.get("scripts") or {}).get("test") or ""))
    said = "mocha on the changed test files, with the options of package.json's test script (a .mocharc `spec` adds its own files to them)"
    major = _mocha_major(pkg, read)
    if major is not None and major < 2:
        return Inferred(f"node node_modules/mocha/bin/_mocha {kept}--reporter json {files}", "mocha", f"{said}; mocha {major}.x: run as its `_mocha` (its `mocha` loses the tests' output on this Node), its JSON report on stdout")
    return Inferred(f'npx mocha {kept}--reporter json --reporter-option=output="${{BENCHTAPE_REPORTS:-/tmp}}/mocha.json" {files}', "mocha", said)


_EXACT_OR_CARET = re.compile(r"^\s*[~^=v]*\s*(\d+)(?:\.(?:\d+|[xX*]))*\s*$")  # `~1.21.5`, `^1.2`, `1.x`, `1.21.5`: one major


def _mocha_major(pkg: dict[str, Any], read: ReadFile) -> int | None:
    """The major version of the project's mocha: the installed one's package.json where the tree
    has it (the truth), else the one major its declared range allows (`~1.21.5`); None when
    neither says (`*`, `>=1 <3`, a tag, a git URL)."""
    installed = read("node_modules/mocha/package.json")
    if installed is not None:
        try:
            version = json.loads(installed).get("version")
        except (ValueError, AttributeError):
            version = None
        found = _EXACT_OR_CARET.match(str(version or "").split("-", 1)[0])
        if found:
            return int(found.group(1))
    declared = {**(pkg.get("dependencies") or {}), **(pkg.get("devDependencies") or {})}.get("mocha")
    found = _EXACT_OR_CARET.match(str(declared or ""))
    return int(found.group(1)) if found else None


_MOCHA_VALUE_OPTIONS = {"--require", "-r", "--ui", "-u", "--timeout", "-t", "--slow", "-s", "--file", "--extension", "--config", "--package", "--node-option", "-n", "--retries", "--import"}
_MOCHA_DROPPED = {"--reporter", "-R", "--reporter-option", "--reporter-options", "-O", "--grep", "-g", "--fgrep", "-f", "--spec"}  # the report's and the selection's: benchtape sets those


def _mocha_options(script: str) -> str:
    """The options of a `mocha …` test script that the tests need (`--require test/support/env`,
    `--check-leaks`, `--ui tdd`, `--timeout`: express's), each with its value, shell-quoted and
    followed by a space; never its reporter, its selection or its folders (the changed files are
    the selection). '' when the script is not a plain mocha command."""
    try:
        words = shlex.split(script)
    except ValueError:
        return ""
    at = next((i for i, w in enumerate(words) if PurePosixPath(w).name in ("mocha", "_mocha")), None)  # `node_modules/.bin/_mocha`: mocha 2's scripts
    if at is None or any(w in ("&&", "||", ";", "|") for w in words):
        return ""
    kept: list[str] = []
    rest = iter(words[at + 1 :])
    for word in rest:
        name = word.split("=", 1)[0]
        if name in _MOCHA_DROPPED:
            if "=" not in word:
                next(rest, None)
        elif word in FAIL_FAST["mocha"]:
            continue  # `--bail`: a per-test verdict needs every test run (sandbox/fail_fast.py)
        elif name in _MOCHA_VALUE_OPTIONS:
            kept.append(word)
            if "=" not in word:
                value = next(rest, None)
                if value is not None:
                    kept.append(value)
        elif word.startswith("-"):
            kept.append(word)
        # else a folder or a file of the whole suite: the changed files replace them
    return "".join(shlex.quote(w) + " " for w in kept)


def tree_reader(root: Path) -> ReadFile:
    """A ReadFile over a folder."""

    def read(name: str) -> str | None:
        path = root / name
        try:
            return path.read_text(encoding="utf-8", errors="replace") if path.is_file() else None
        except OSError:
            return None

    return read
