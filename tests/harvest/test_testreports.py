"""Each test's outcome from the runner's own report, on runs nobody here wrote: pytest on the
real toolz tree with colour forced on (JUnit XML; a coloured log is never "runner not
recognised"), CPython's own unittest suite in verbose mode, and cargo's libtest on a crate
with a failing and an ignored test. A report left as a symlink is never followed."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from harvestkit import clone_toolz

from benchtape.sandbox.testcounts import Counts, parse_counts, runner_of
from benchtape.sandbox.testreports import _read_bounded, read_reports, read_unittest_verbose, suite_command
from benchtape.sandbox.verifier import verify
from benchtape.sandbox.verifier_box import home_box
from benchtape.spec.task import Verify


@pytest.fixture(scope="module", autouse=True)
def this_python() -> None:
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"


def test_coloured_pytest_on_toolz_is_read_test_by_test_from_its_junit_report(tmp_path: Path):
    tree = clone_toolz(tmp_path / "toolz")
    shutil.rmtree(tree / ".git")
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command="python3 -m pytest --color=yes -q toolz/tests/test_itertoolz.py"), box.run)
    assert ev.tests is not None and ev.tests.source == "junit" and ev.counts.runner == "pytest"
    assert ev.counts.passed == len(ev.tests.tests) > 40 and ev.counts.failed == 0
    assert "toolz.tests.test_itertoolz::test_partition_all" in ev.tests.tests
    assert "\x1b[" in ev.log  # the command's own --color=yes wins over PYTEST_ADDOPTS (a config's addopts does not): the report is read all the same
    assert not list(tree.glob(".benchtape-reports-*")) and not (tree / ".pytest_cache").exists()  # nothing left in the tree
    coloured = subprocess.run([sys.executable, "-m", "pytest", "--color=yes", "-p", "no:cacheprovider", "-q", "toolz/tests/test_itertoolz.py"], cwd=tree, capture_output=True, text=True)
    assert "\x1b[" in coloured.stdout and parse_counts(coloured.stdout).runner == "pytest"  # a coloured summary is still recognised
    assert parse_counts(coloured.stdout).passed == ev.counts.passed


LINT_PLUGIN = """import pytest


class Lint(pytest.Item):
    def runtest(self):
        raise AssertionError("style says no")


class LintFile(pytest.File):
    def collect(self):
        yield Lint.from_parent(self, name="FLAKE8")


def pytest_collect_file(file_path, parent):
    if file_path.suffix == ".py":
        return LintFile.from_parent(parent, path=file_path)
"""


def test_a_linter_plugin_adds_no_test_items(tmp_path: Path):
    """pytest-flake8 (and black, mypy, ruff… through pytest-enabler) add a style verdict per
    file as a test item: inflect #164's `FLAKE8` items failed at the base and with the reference
    alike, and the task read gold_still_fails. The verifier blocks them by their plugin names."""
    site, tree = tmp_path / "site", tmp_path / "tree"
    (site / "fake_flake8-1.0.dist-info").mkdir(parents=True)
    (site / "fake_flake8-1.0.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: fake-flake8\nVersion: 1.0\n")
    (site / "fake_flake8-1.0.dist-info" / "entry_points.txt").write_text("[pytest11]\nflake8 = fake_flake8\n")
    (site / "fake_flake8.py").write_text(LINT_PLUGIN)
    tree.mkdir()
    (tree / "test_one.py").write_text("def test_one():\n    assert True\n")
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_DISABLE_PLUGIN_AUTOLOAD"}, "PYTHONPATH": str(site)}
    bare = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_one.py"], cwd=tree, env=env, capture_output=True, text=True, timeout=120)
    assert "1 failed, 1 passed" in bare.stdout, bare.stdout  # the plugin is real: its item fails

    def run(command: str, timeout: float):
        from benchtape.core.command_runner import run_local

        return run_local(["/bin/sh", "-c", command], tree, timeout, env=env)

    ev = verify(tree, [], Verify(command=f"{sys.executable} -m pytest -q test_one.py"), run)
    assert ev.status == "passed" and ev.tests is not None and list(ev.tests.tests) == ["test_one::test_one"], ev.log


def test_cpythons_own_unittest_suite_is_read_from_its_verbose_lines(tmp_path: Path):
    if importlib.util.find_spec("test.test_tempfile") is None:  # Debian's python3.11 has test.support alone (libpython3.11-testsuite has the rest; .ci/run installs it)
        pytest.skip("this Python ships without its test suite")
    done = subprocess.run([sys.executable, "-m", "unittest", "-v", "test.test_tempfile"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    report = read_unittest_verbose(done.stderr)
    counts = parse_counts(done.stderr, "unittest")
    assert report is not None and len(report.tests) == counts.passed + counts.failed + counts.errored + counts.skipped
    assert report.counts().skipped == counts.skipped > 0 and all(report.tests[i].message for i in report.with_outcome("skipped"))
    assert any(i.startswith("test.test_tempfile.TestMkstemp") for i in report.tests)


@pytest.mark.skipif(shutil.which("cargo") is None, reason="no cargo on this host")
def test_cargos_libtest_lines_name_each_test(tmp_path: Path):
    subprocess.run(["cargo", "new", "--lib", "--quiet", "--vcs", "none", "adder"], cwd=tmp_path, check=True, env={**os.environ, "CARGO_NET_OFFLINE": "true"})
    crate = tmp_path / "adder"
    (crate / "src" / "lib.rs").write_text("#[cfg(test)]\nmod tests {\n    #[test]\n    fn good() {}\n    #[test]\n    fn bad() { assert_eq!(1, 2); }\n    #[test]\n    #[ignore]\n    fn later() {}\n}\n")
    with home_box(crate, network=True) as box:
        # the box's HOME is fresh: rustup's toolchains are named where this host keeps them
        homes = f"RUSTUP_HOME={Path(os.environ.get('RUSTUP_HOME', Path.home() / '.rustup'))} CARGO_HOME={Path(os.environ.get('CARGO_HOME', Path.home() / '.cargo'))}"
        ev = verify(crate, [], Verify(command=f"{homes} cargo test --offline"), box.run)
    assert ev.tests is not None and ev.tests.source == "libtest", ev.log[-2000:]
    assert ev.tests.outcomes() == {"tests::bad": "failed", "tests::good": "passed", "tests::later": "skipped"}


def test_a_report_left_as_a_symlink_is_never_followed(tmp_path: Path):
    secret = tmp_path / "host.xml"
    secret.write_text('<testsuites><testcase classname="x" name="planted"/></testsuites>')
    folder = tmp_path / "reports"
    folder.mkdir()
    (folder / "pytest.xml").symlink_to(secret)
    assert _read_bounded(folder / "pytest.xml") is None and read_reports(folder, "", "pytest") is None
    (folder / "pytest.xml").unlink()
    linked = tmp_path / "linked"
    linked.symlink_to(tmp_path)  # the report folder itself a link (a test knows $BENCHTAPE_REPORTS)
    assert _read_bounded(linked / "host.xml") is None


def test_the_whole_suite_drops_the_selection_and_keeps_the_options(tmp_path: Path):
    # a module that cannot be collected (tomlkit's cases in a git submodule) must not stop the whole suite
    assert suite_command("python3 -m pytest -q -k 'not slow' tests/test_a.py::test_x src/", "pytest", tmp_path) == "python3 -m pytest -q -k 'not slow' --continue-on-collection-errors"
    assert suite_command("python3 -m pytest -q", "pytest", tmp_path) == "python3 -m pytest -q"  # nothing selected: the same run, not run twice
    assert suite_command("python3 -m unittest -v pkg.tests.test_a", "unittest", tmp_path) == "python3 -m unittest discover -v"
    assert suite_command("go test -v ./pkg -run '^(TestA)$'", "go", tmp_path) == "go test -v ./..."
    # the `|` of the regex task create writes for two Go tests is quoted: no pipeline (google/uuid #150's suite never ran)
    assert suite_command("go test -v . -run '^(TestVersion7|TestVersion7Monotonicity)$'", "go", tmp_path) == "go test -v ./..."
    assert suite_command("cd sub && pytest", "pytest", tmp_path) is None  # a shell line: not guessed at
    assert suite_command("pytest tests | tee out.txt", "pytest", tmp_path) is None and suite_command("pytest tests; echo", "pytest", tmp_path) is None
    # a JavaScript runner's inferred command loses its test files, its report path kept as written
    vitest = 'npx vitest run --reporter=default --reporter=json --outputFile.json="${BENCHTAPE_REPORTS:-/tmp}/vitest.json"'
    assert suite_command(f"{vitest} test/a.test.ts 'test/b c.test.ts'", "vitest", tmp_path) == vitest
    assert suite_command("node --test --test-reporter=junit test/total.test.js", "node", tmp_path) == "node --test --test-reporter=junit"
    assert suite_command("npx jest --json", "jest", tmp_path) is None  # nothing selected: nothing to widen
    # a path that may be an option's value is never cut with the files after it: not widened at all
    assert suite_command("npx vitest run --config ./vitest.config.ts test/a.test.ts", "vitest", tmp_path) is None
    assert suite_command("node --test --import ./setup.mjs t/a.test.mjs", "node", tmp_path) is None


@pytest.fixture(scope="module")
def node_runners(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder with real jest, vitest and mocha installed from npm."""
    if shutil.which("npm") is None:
        pytest.skip("no npm on this host")
    folder = tmp_path_factory.mktemp("node")
    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "jest@29", "vitest@1", "mocha@10"], cwd=folder, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return folder


@pytest.mark.parametrize("runner", ["jest", "vitest"])
def test_jest_and_vitest_json_reports_name_each_test_through_the_inferred_command(node_runners: Path, runner: str):
    import json

    from benchtape.tasks.infer import infer_command

    head = "import { test, expect } from 'vitest';\n" if runner == "vitest" else ""
    (node_runners / f"sum_{runner}.test.js").write_text(head + "test('adds', () => { expect(1 + 2).toBe(3); });\ntest('breaks', () => { expect(1 + 2).toBe(4); });\ntest.skip('later', () => {});\n")
    package = json.dumps({"devDependencies": {runner: "*"}})
    command = infer_command({f"sum_{runner}.test.js": b""}, lambda name: package if name == "package.json" else None).command
    with home_box(node_runners, network=True) as box:
        ev = verify(node_runners, [], Verify(command=command, timeout=300), box.run)
    assert ev.tests is not None and ev.tests.source == f"{runner}-json", ev.log[-2000:]
    file = f"sum_{runner}.test.js"
    assert ev.tests.outcomes() == {f"{file}::adds": "passed", f"{file}::breaks": "failed", f"{file}::later": "skipped"}


def _vitest_run(file: str, *outcomes: tuple[str, str]) -> dict:
    """One `testResults` entry as vitest 3.2 writes it: the file, its tests, and no project."""
    return {"name": file, "status": "failed", "message": "", "assertionResults": [{"ancestorTitles": ["Array types"], "fullName": f"Array types {name}", "title": name, "status": status, "failureMessages": ["expected 1 to be 2"] if status == "failed" else []} for name, status in outcomes]}


def test_vitest_projects_keep_the_files_ids_and_count_every_run(tmp_path: Path):
    """yup's vitest.config.ts runs each file under two projects (`async`, `sync`): vitest said
    `Tests 4 failed | 84 passed (88)` and benchtape `ran 44, failed 2`. Its JSON report names no
    project (vitest 3.2.4: no field, the entries in the workers' order), so an id stays the
    file's, the worst of its runs, every run is counted, and a note says so. A report of one
    project is read as before."""
    import json

    folder = tmp_path / "reports"
    folder.mkdir()
    array, tuple_ = str(tmp_path / "test/array.ts"), str(tmp_path / "test/tuple.ts")
    runs = [
        _vitest_run(array, ("casts", "failed"), ("compacts", "passed")),
        _vitest_run(tuple_, ("casts", "failed")),
        _vitest_run(array, ("casts", "passed"), ("compacts", "passed")),  # the other project: `casts` passes there
        _vitest_run(tuple_, ("casts", "failed")),
    ]
    (folder / "vitest.json").write_text(json.dumps({"numTotalTests": 6, "testResults": runs}))
    report = read_reports(folder, "", "vitest", roots=[str(tmp_path)])
    assert report is not None and report.outcomes() == {"test/array.ts::Array types casts": "failed", "test/array.ts::Array types compacts": "passed", "test/tuple.ts::Array types casts": "failed"}
    assert report.counts() == Counts("vitest", passed=3, failed=3) and report.projects == 2
    assert report.note is not None and "2 vitest projects" in report.note and "worst of its runs" in report.note
    (folder / "vitest.json").write_text(json.dumps({"testResults": runs[:2]}))
    alone = read_reports(folder, "", "vitest", roots=[str(tmp_path)])
    assert alone is not None and alone.projects == 1 and alone.note is None and alone.runs == ()
    assert alone.counts() == Counts("vitest", passed=1, failed=2) and "test/array.ts::Array types casts" in alone.tests


def test_a_vitest_workspace_of_two_projects_through_the_inferred_command(node_runners: Path):
    """Real vitest (1.x's workspace file, as 3.2's `projects`): one file, two projects, a test
    that fails under one of them; the verifier counts four runs and says why the ids are two."""
    import json

    from benchtape.tasks.infer import infer_command

    tree = node_runners / "projects"  # its own root: the other tests' vitest runs never see the workspace
    tree.mkdir(exist_ok=True)
    (tree / "vitest.workspace.js").write_text(
        "export default [\n  { test: { name: 'async', include: ['*.test.js'] }, define: { 'globalThis.SYNC': false } },\n"
        "  { test: { name: 'sync', include: ['*.test.js'] }, define: { 'globalThis.SYNC': true } },\n]\n"
    )
    (tree / "mode.test.js").write_text("import { test, expect } from 'vitest';\ntest('adds', () => { expect(1 + 2).toBe(3); });\ntest('is async', () => { expect(globalThis.SYNC).toBe(false); });\n")
    package = json.dumps({"devDependencies": {"vitest": "*"}})
    command = infer_command({"mode.test.js": b""}, lambda name: package if name == "package.json" else None).command
    with home_box(tree, network=True) as box:
        ev = verify(tree, [], Verify(command=command, timeout=300), box.run)
    assert ev.tests is not None and ev.tests.outcomes() == {"mode.test.js::adds": "passed", "mode.test.js::is async": "failed"}, ev.log[-2000:]
    assert ev.counts == Counts("vitest", passed=3, failed=1) and "Tests  1 failed | 3 passed (4)" in ev.log
    assert "2 vitest projects" in ev.detail and f"[benchtape] {ev.detail}" in ev.log


def test_mocha_1_is_run_as_its_own_mocha_with_its_json_on_stdout(tmp_path: Path):
    """mime-types in 2015 (mocha ~1.21.5) on Node 20: `npx mocha` printed nothing (its
    bin/mocha spawns _mocha with the removed `customFds`: the output is lost), and mocha 1.x
    rejects `--reporter-option` where no file is named (the whole suite). The installed mocha's
    version wins over the declared range; a range of no one major keeps `npx mocha`."""
    import json

    from benchtape.tasks.infer import infer_command

    def reading(declared: str, installed: str | None = None):
        package = json.dumps({"scripts": {"test": "mocha --reporter spec test/test.js"}, "devDependencies": {"mocha": declared}})
        files = {"package.json": package, "node_modules/mocha/package.json": json.dumps({"version": installed}) if installed else None}
        return lambda name: files.get(name)

    old = infer_command({"test/test.js": b""}, reading("~1.21.5"))
    assert old.command == "node node_modules/mocha/bin/_mocha --reporter json test/test.js" and old.runner == "mocha" and "mocha 1.x" in old.note
    assert runner_of(old.command) == "mocha" and suite_command(old.command, "mocha", tmp_path) == "node node_modules/mocha/bin/_mocha --reporter json"
    for declared, installed in (("^10", None), ("*", None), (">=1.0.0 <3", None), ("~1.21.5", "2.5.3")):
        assert infer_command({"test/test.js": b""}, reading(declared, installed)).command.startswith("npx mocha --reporter json --reporter-option=output="), declared
    assert infer_command({"test/test.js": b""}, reading("^10", "1.21.5")).command.startswith("node node_modules/mocha/bin/_mocha ")


@pytest.mark.skipif(shutil.which("npm") is None, reason="no npm on this host")
def test_a_real_mocha_1_prints_nothing_through_npx_and_its_report_through_the_inferred_command(tmp_path: Path):
    """mocha 1.21.5 really installed: `npx mocha` prints nothing on this Node (judged a runner
    that printed nothing, never the base failing as a whole); the inferred `_mocha` command
    names each test, and so does its whole suite (no `--reporter-option`, which 1.21 rejects)."""
    import json

    from benchtape.sandbox.verifier import judge_base
    from benchtape.tasks.infer import infer_command

    done = subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "mocha@1.21.5"], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test.js").write_text("var assert = require('assert');\ndescribe('charset', function () { it('knows json', function () { assert.equal(1, 1); }); it('knows text', function () { assert.equal(1, 2); }); });\n")
    package = json.dumps({"scripts": {"test": "mocha --reporter spec test/test.js"}, "devDependencies": {"mocha": "~1.21.5"}})
    inferred = infer_command({"test/test.js": b""}, lambda name: package if name == "package.json" else None)
    with home_box(tmp_path, network=True) as box:
        silent = verify(tmp_path, [], Verify(command='npx mocha --reporter json --reporter-option=output="${BENCHTAPE_REPORTS:-/tmp}/mocha.json" test/test.js', timeout=300), box.run)
        ev = verify(tmp_path, [], Verify(command=inferred.command, timeout=300), box.run)
        wide = suite_command(inferred.command, "mocha", tmp_path)
        assert wide is not None
        suite = verify(tmp_path, [], Verify(command=wide, timeout=300), box.run)
    assert silent.tests is None and judge_base(silent).diagnosis == "runner_broken", silent.log[-1500:]
    expected = {"charset knows json": "passed", "charset knows text": "failed"}  # mocha before 8 names no file
    assert ev.tests is not None and ev.tests.outcomes() == expected and judge_base(ev).held, ev.log[-1500:]
    assert suite.tests is not None and suite.tests.outcomes() == expected, suite.log[-1500:]


def test_mochas_json_report_names_each_test_and_a_failed_hook_through_the_inferred_command(node_runners: Path):
    """mocha (express's runner, and many a library's): the inferred command writes its JSON
    report; a nested describe's test, a pending one, a failure and a hook that failed (the
    tests it kept from running never ran) are each named; the whole suite drops the files."""
    import json

    from benchtape.tasks.infer import infer_command

    spec = node_runners / "test" / "sum.spec.js"
    spec.parent.mkdir(exist_ok=True)
    spec.write_text(
        "const assert = require('assert');\n"
        "describe('sum', () => { it('adds', () => assert.strictEqual(1 + 2, 3)); it('breaks', () => assert.strictEqual(1 + 2, 4)); it.skip('later', () => {});\n"
        "  describe('of none', () => { it('is zero', () => assert.strictEqual(0, 0)); }); });\n"
        "describe('setup', () => { before(() => { throw new Error('no database'); }); it('never runs', () => {}); });\n"
    )
    package = json.dumps({"scripts": {"test": "mocha"}, "devDependencies": {"mocha": "^10"}})
    inferred = infer_command({"test/sum.spec.js": b""}, lambda name: package if name == "package.json" else None)
    assert inferred.runner == "mocha" and runner_of(inferred.command) == "mocha"
    with home_box(node_runners, network=True) as box:
        ev = verify(node_runners, [], Verify(command=inferred.command, timeout=300), box.run)
    assert ev.tests is not None and ev.tests.source == "mocha-json", ev.log[-2000:]
    file = "test/sum.spec.js"
    assert ev.tests.outcomes() == {f"{file}::sum adds": "passed", f"{file}::sum breaks": "failed", f"{file}::sum later": "skipped", f"{file}::sum of none is zero": "passed", f'{file}::setup "before all" hook for "never runs"': "error"}
    assert ev.tests.tests[f"{file}::sum breaks"].message.startswith("Expected values to be strictly equal")
    assert ev.counts == Counts("mocha", passed=2, failed=1, errored=1, skipped=1) and ev.status == "failed"
    # mocha prints nothing but its report: the log says from it what failed and why
    assert f"FAILED {file}::sum breaks: Expected values to be strictly equal" in ev.log and "ERROR" in ev.log and "no database" in ev.log, ev.log[-1500:]
    assert suite_command(inferred.command, "mocha", node_runners) == inferred.command.rsplit(" ", 1)[0]


def test_mochas_spec_summary_is_counted():
    output = "\n  sum\n    ✔ adds\n    1) breaks\n\n  1 passing (4ms)\n  1 failing\n  2 pending\n\n  1) sum\n       breaks:\n     AssertionError\n"
    assert parse_counts(output, "mocha") == Counts("mocha", passed=1, failed=1, skipped=2)
    assert parse_counts("\n  3 passing (1s)\n") == Counts("mocha", passed=3)


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this host (apt-get install golang-go)")
def test_go_tests_are_read_from_v_lines_and_json_events_through_the_inferred_command(tmp_path: Path):
    from benchtape.tasks.infer import infer_command

    tree = tmp_path / "mod"
    (tree / "calc").mkdir(parents=True)
    (tree / "go.mod").write_text("module example.com/mod\n\ngo 1.19\n")
    (tree / "calc" / "calc.go").write_text("package calc\n\nfunc Add(a, b int) int { return a + b }\n")
    test = "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestBroken(t *testing.T) {\n\tt.Run(\"half\", func(t *testing.T) { t.Fatal(\"no\") })\n}\n\nfunc TestLater(t *testing.T) { t.Skip(\"not yet\") }\n"
    (tree / "calc" / "calc_test.go").write_text(test)
    block = ("+" + test.replace("\n", "\n+")).encode()
    command = infer_command({"calc/calc_test.go": block}, lambda name: None).command
    assert command == "go test -v ./calc -run '^(TestAdd|TestBroken|TestLater)$'"
    with home_box(tree) as box:
        verbose = verify(tree, [], Verify(command=command, timeout=300), box.run)
        events = verify(tree, [], Verify(command=command.replace("go test -v", "go test -json"), timeout=300), box.run)
    assert verbose.tests is not None and verbose.tests.source == "go-verbose", verbose.log[-2000:]
    assert verbose.tests.outcomes() == {"TestAdd": "passed", "TestBroken": "failed", "TestBroken/half": "failed", "TestLater": "skipped"}
    assert events.tests is not None and events.tests.source == "go-json", events.log[-2000:]
    assert events.tests.outcomes() == {f"example.com/mod/calc::{k}": v for k, v in verbose.tests.outcomes().items()}


def test_any_runners_junit_xml_at_benchtape_reports_is_read(tmp_path: Path):
    """A hand-written command hands in JUnit XML from another runner: here pytest itself, asked
    by the command (not by the verifier) to write `$BENCHTAPE_REPORTS/junit.xml`."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "test_a.py").write_text("import pytest\n\n\ndef test_ok():\n    pass\n\n\ndef test_no():\n    assert 0\n\n\n@pytest.mark.skip(reason='later')\ndef test_later():\n    pass\n")
    command = 'PYTEST_ADDOPTS= python3 -m pytest -q -p no:cacheprovider --junitxml="$BENCHTAPE_REPORTS/junit.xml" test_a.py'
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command=command), box.run)
    assert ev.tests is not None and ev.tests.source == "junit", ev.log[-1500:]
    assert ev.tests.outcomes() == {"test_a::test_ok": "passed", "test_a::test_no": "failed", "test_a::test_later": "skipped"}
    assert ev.tests.tests["test_a::test_later"].message == "later"


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_nodes_describe_blocks_name_their_tests_so_two_blocks_its_are_two_tests(tmp_path: Path):
    """node's JUnit report names every test's class `test`: two `describe` blocks' `it("works")`
    were one id, `test::works`, the passing one hidden behind the failing one."""
    from benchtape.tasks.infer import infer_command, tree_reader  # the command task create writes for `node --test`

    tree = tmp_path / "tree"
    (tree / "test").mkdir(parents=True)
    (tree / "package.json").write_text('{"name": "blocks", "scripts": {"test": "node --test"}}\n')
    (tree / "test" / "blocks.test.js").write_text(
        'const { describe, it, test } = require("node:test");\nconst assert = require("node:assert");\n'
        'describe("parse", () => { it("works", () => assert.ok(true)); describe("numbers", () => { it("works", () => assert.ok(false)); }); });\n'
        'describe("render", () => { it("works", () => assert.ok(true)); });\n'
        'test("works", () => assert.ok(true));\n'
    )
    inferred = infer_command({"test/blocks.test.js": (tree / "test" / "blocks.test.js").read_bytes()}, tree_reader(tree))
    assert inferred.runner == "node", inferred
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command=inferred.command), box.run)
    assert ev.tests is not None, ev.log[-1500:]
    assert ev.tests.outcomes() == {"test::parse > works": "passed", "test::parse > numbers > works": "failed", "test::render > works": "passed", "test::works": "passed"}


def test_go_v_lines_glued_to_output_shared_names_and_skip_reasons():
    """Real `go test -v` (go 1.19) output. A test that printed without a newline has its
    `--- PASS:` glued to that output and was read as not run; TestLRU of hashicorp/golang-lru's
    root package and of simplelru/ was one id (5 tests counted of 6, the outcome the worse of
    the two): a name two packages share is `package::name`, as `-json` names it, and a name
    only one has stays as it was; a skip's reason is the line its t.Skip printed."""
    from benchtape.sandbox.testreports import read_go_verbose

    glued = "=== RUN   TestA\nprogress...--- PASS: TestA (0.00s)\n=== RUN   TestB\n    x_test.go:4: needs a database\n--- SKIP: TestB (0.00s)\n=== RUN   TestC\n=== RUN   TestC/with_space\n--- PASS: TestC (0.00s)\n    --- PASS: TestC/with_space (0.00s)\nPASS\nok  \tx\t0.003s\n"
    report = read_go_verbose(glued)
    assert report is not None and report.outcomes() == {"TestA": "passed", "TestB": "skipped", "TestC": "passed", "TestC/with_space": "passed"}
    assert report.tests["TestB"].message == "needs a database"
    two = (
        "=== RUN   Test2Q\n--- PASS: Test2Q (0.00s)\n=== RUN   TestLRU\n--- PASS: TestLRU (0.00s)\nPASS\nok  \tgithub.com/hashicorp/golang-lru/v2\t0.003s\n"
        "=== RUN   TestLRU\n    lru_test.go:9: bad\n--- FAIL: TestLRU (0.00s)\nFAIL\nFAIL\tgithub.com/hashicorp/golang-lru/v2/simplelru\t0.002s\nFAIL\n"
    )
    report = read_go_verbose(two)
    assert report is not None and report.outcomes() == {"Test2Q": "passed", "github.com/hashicorp/golang-lru/v2::TestLRU": "passed", "github.com/hashicorp/golang-lru/v2/simplelru::TestLRU": "failed"}
    assert report.counts().passed == 2 and report.counts().failed == 1


def test_a_go_validation_holding_a_bare_shared_name_is_judged_by_the_worst_of_its_packages():
    """A task validated before a Go name two packages share was read as `package::name` holds
    the bare name in FAIL_TO_PASS: it stands for every package's test of that name."""
    from benchtape.sandbox.testreports import read_go_verbose
    from benchtape.sandbox.testverdicts import judge_tests

    def run(second: str) -> object:
        return read_go_verbose(f"--- PASS: TestLRU (0.00s)\nok  \tm\t0.1s\n--- {second}: TestLRU (0.00s)\nok  \tm/simplelru\t0.1s\n")

    assert judge_tests(run("PASS"), ["TestLRU"], []).passed
    assert not judge_tests(run("FAIL"), ["TestLRU"], []).passed
    assert judge_tests(run("PASS"), ["m/simplelru::TestLRU"], []).passed


@pytest.mark.skipif(shutil.which("go") is None, reason="no go toolchain on this host (apt-get install golang-go)")
def test_a_go_work_in_the_verifiers_parents_is_not_read(tmp_path: Path):
    """Go reads the nearest go.work of the tree's parents: a `/tmp/go.work` (an agent at level
    home wrote one; anyone may) made every Go verifier on the host fail, the oracle's cells
    graded FAIL. The verifier reads only the tree's own."""
    (tmp_path / "evil").mkdir()
    (tmp_path / "evil" / "go.mod").write_text("module evil.example/x\n\ngo 1.19\n")
    (tmp_path / "go.work").write_text(f"go 1.19\n\nuse {tmp_path / 'evil'}\n")
    tree = tmp_path / "scratch" / "work"
    tree.mkdir(parents=True)
    (tree / "go.mod").write_text("module example.com/mod\n\ngo 1.19\n")
    (tree / "calc_test.go").write_text('package calc\n\nimport "testing"\n\nfunc TestOne(t *testing.T) {}\n')
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command="go test -v . -run '^(TestOne)$'", timeout=300), box.run)
    assert ev.tests is not None and ev.tests.outcomes() == {"TestOne": "passed"}, ev.log[-2000:]
    (tree / "go.work").write_text("go 1.19\n\nuse .\n")  # the tree's own go.work is still the one read
    with home_box(tree) as box:
        own = box.run("go env GOWORK", 60)
    assert own.output.strip().splitlines()[-1] == str(tree / "go.work"), own
