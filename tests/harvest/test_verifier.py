"""The hidden verifier's pure parts: runner summaries, patches on a tree without .git, the
diagnoses; and the home box, whose network is really gone."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from benchtape.sandbox.patches import PatchFailed, apply_patch, changed_paths, under
from benchtape.sandbox.testcounts import Counts, parse_counts, runner_of
from benchtape.sandbox.testreports import FAILED, PASSED
from benchtape.sandbox.verifier import Evidence, judge_base, judge_reference, problem, verify
from benchtape.sandbox.verifier_box import can_unshare_network, home_box
from benchtape.spec.task import Verify


@pytest.mark.parametrize(
    ("output", "runner", "expected"),
    [
        ("....F\n1 failed, 49 passed in 0.12s\n", "pytest", Counts("pytest", passed=49, failed=1)),
        ("===== 2 failed, 43 passed, 3 warnings in 1.20s =====\n", "pytest", Counts("pytest", passed=43, failed=2)),
        ("ERROR toolz/tests/test_x.py\n!!! Interrupted: 1 error during collection !!!\n1 error in 0.31s\n", "pytest", Counts("pytest", errored=1)),
        ("1 passed, 2 skipped, 1 xfailed in 0.05s (0:00:01)\n", "pytest", Counts("pytest", passed=1, skipped=3)),
        ("no tests ran in 0.01s\n", "pytest", Counts("pytest")),
        ("..F.\n------\nRan 4 tests in 0.002s\n\nFAILED (failures=1, errors=1)\n", "unittest", Counts("unittest", passed=2, failed=1, errored=1)),
        ("Ran 3 tests in 0.001s\n\nOK (skipped=1)\n", "unittest", Counts("unittest", passed=2, skipped=1)),
        ("=== RUN   TestA\n--- PASS: TestA (0.00s)\n=== RUN   TestB\n--- FAIL: TestB (0.00s)\nFAIL\nFAIL\tex/pkg\t0.01s\n", "go", Counts("go", passed=1, failed=1)),
        ("# ex/pkg\n./a.go:3:1: syntax error\nFAIL\tex/pkg [build failed]\n", "go", Counts("go", errored=1)),
        ("test result: FAILED. 3 passed; 1 failed; 2 ignored; 0 measured\ntest result: ok. 4 passed; 0 failed; 0 ignored;\n", "cargo", Counts("cargo", passed=7, failed=1, skipped=2)),
        ("Test Suites: 1 failed, 1 passed, 2 total\nTests:       1 failed, 5 passed, 6 total\n", "jest", Counts("jest", passed=5, failed=1)),
        (" \x1b[2m Test Files \x1b[22m 1 failed (1)\n      Tests  2 failed | 3 passed (5)\n", "vitest", Counts("vitest", passed=3, failed=2)),
        ("all good\n", None, Counts(None)),
    ],
)
def test_each_runners_summary_gives_its_counts(output: str, runner: str | None, expected: Counts):
    assert parse_counts(output, runner) == expected


def test_the_runner_is_read_from_the_command():
    assert runner_of("python3 -m pytest -q a.py") == runner_of("pytest a.py") == "pytest"
    assert runner_of("python3 -m unittest -v a.b") == "unittest"
    assert runner_of("go test -v ./pkg -run '^(TestA)$'") == "go"
    assert runner_of("cargo test --test it") == "cargo"
    assert runner_of("npx vitest run a.test.ts") == "vitest" and runner_of("npx jest a.test.js") == "jest"
    assert runner_of("make check") is None


def _tree(tmp_path: Path) -> tuple[Path, bytes]:
    """A tree and a patch made against it (git diff of a real edit), the tree then reset."""
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run(["git", "-C", str(repo), "add", "."], check=True)
    subprocess.run(["git", "-C", str(repo), "-c", "user.email=t@x", "-c", "user.name=t", "commit", "-qm", "a"], check=True)
    (repo / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (repo / "test_calc.py").write_text("from calc import add\n\ndef test_add():\n    assert add(2, 2) == 4\n")
    subprocess.run(["git", "-C", str(repo), "add", "-N", "."], check=True)
    patch = subprocess.run(["git", "-C", str(repo), "diff", "--binary"], check=True, capture_output=True).stdout
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return tree, patch


def test_a_patch_applies_to_a_tree_without_git_even_inside_a_repository(tmp_path: Path):
    tree, patch = _tree(tmp_path)
    assert changed_paths(patch) == ["calc.py", "test_calc.py"] and under(changed_paths(patch), ["test_calc.py"]) == ["test_calc.py"]
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)  # the tree now lies inside another repository
    apply_patch(tree, patch)
    assert "a + b" in (tree / "calc.py").read_text() and (tree / "test_calc.py").is_file()
    with pytest.raises(PatchFailed):
        apply_patch(tree, patch)  # applied already: every hunk conflicts, nothing changes
    assert "a + b" in (tree / "calc.py").read_text()


def test_verify_runs_setup_then_the_command_and_counts(tmp_path: Path):
    tree, patch = _tree(tmp_path)
    calls: list[str] = []

    def run(command: str, timeout: float):
        from benchtape.core.command_runner import run_local

        calls.append(command)
        return run_local(["/bin/sh", "-c", command], tree, timeout)

    spec = Verify(command="printf '1 passed in 0.01s\\n'", setup=("touch ready",))
    ev = verify(tree, [("tests.patch", patch)], spec, run)
    assert calls[0] == "touch ready" and calls[1].endswith("; " + spec.command) and (tree / "ready").is_file()  # the command asks for the runner's report
    assert ev.status == "passed" and ev.counts == Counts("pytest", passed=1) and [s["command"] for s in ev.steps] == ["touch ready", spec.command]
    conflict = verify(tree, [("tests.patch", patch)], spec, run)
    assert conflict.status == "patch_apply_failed" and conflict.patch == "tests.patch" and len(calls) == 2  # nothing ran
    assert judge_base(conflict).diagnosis == "patch_conflict" and judge_reference(conflict).diagnosis == "patch_conflict"
    from benchtape.render_tasks import _phase_counts

    assert _phase_counts(conflict.to_dict(), judge_base(conflict)) == "tests.patch does not apply: nothing ran"  # the summary's row names the patch
    errored = Evidence("failed", 1, Counts("unittest", passed=1, errored=1), "", 0.1)  # unittest's "Ran 2 tests": one errored
    assert _phase_counts(errored.to_dict(), judge_base(errored)) == "passed 1, failed 0, errors 1"  # never "ran 1"
    slow = verify(tree, [], Verify(command="sleep 5", timeout=0.5), run)
    assert slow.status == "timeout" and judge_base(slow).diagnosis == "timeout"
    # a test that hangs at the base (tomlkit #470 fixed a parser hang): pytest stopped at the
    # deadline fails the base as a whole; a setup step that ran out of time proves nothing
    (tree / "test_hang.py").write_text("def test_hangs():\n    while True:\n        pass\n")
    hung = verify(tree, [], Verify(command=f"{sys.executable} -m pytest -q test_hang.py", timeout=3), run)
    assert hung.status == "timeout" and judge_base(hung).held and "pytest was stopped at verify.timeout" in judge_base(hung).detail
    assert judge_reference(hung).diagnosis == "timeout"  # the reference must finish
    setup_slow = verify(tree, [], Verify(command=f"{sys.executable} -m pytest -q test_hang.py", setup=("sleep 5",), timeout=0.5), run)
    assert setup_slow.status == "timeout" and judge_base(setup_slow).diagnosis == "timeout"
    # nor does the command's own first step: stopped in a `sleep` before pytest started, the
    # command names pytest, yet pytest never ran (a slow first run made every test FAIL_TO_PASS)
    late = verify(tree, [], Verify(command=f"sleep 5; {sys.executable} -m pytest -q test_hang.py", timeout=1), run)
    assert late.status == "timeout" and late.steps[-1]["running"] and not judge_base(late).held and judge_base(late).diagnosis == "timeout", late.steps
    assert ["sleep", "5"] in late.steps[-1]["running"]
    assert any("pytest" in " ".join(p) for p in hung.steps[-1]["running"])  # the hang above: pytest was running when stopped
    broken = verify(tree, [], Verify(command="true", setup=("exit 3",)), run)
    assert broken.status == "setup_failed" and "exit 3" in broken.detail


def _ev(status: str, exit_: int | None, counts: Counts, log: str = "") -> Evidence:
    return Evidence(status, exit_, counts, log, 0.1)


def test_one_tests_network_failure_is_that_tests_not_the_tasks():
    """dunamai: a test that clones from GitHub fails at the base and with the fix alike, beside
    the fix's own test; the log says `unable to access 'https://…'`, but the runner counted the
    tests, so the per-test comparison decides: the phases hold and that test is in neither list.
    Where no test was counted, or a new failure came with the fix, it is still network_denied."""
    from benchtape.sandbox.testreports import TestReport, TestResult

    clone = "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com"
    shallow = TestResult("tests/test_git.py::test_shallow", FAILED, "RuntimeError: git clone failed")

    def run(status: str, outcome: str) -> Evidence:
        tests = {t.id: t for t in (shallow, TestResult("tests/test_git.py::test_broken_ref", outcome), TestResult("tests/test_git.py::test_other", PASSED))}
        failed = sum(t.outcome == FAILED for t in tests.values())
        return Evidence(status, 1, Counts("pytest", passed=3 - failed, failed=failed), f"{clone}\n", 0.1, tests=TestReport("pytest", "junit", tests))

    base, reference = run("failed", FAILED), run("failed", PASSED)
    assert judge_base(base).held
    held = judge_reference(reference, base)
    assert held.held and "test_shallow" in held.detail
    worse = run("failed", FAILED)  # the fix's test still fails: nothing was fixed
    assert judge_reference(worse, base).diagnosis == "network_denied"
    nothing_counted = _ev("failed", 1, Counts(None), f"{clone}\n")
    assert judge_base(nothing_counted).diagnosis == "network_denied"


BROKEN_RUNNER = """$ python3 -m pytest -q tests/test_markupsafe.py
Traceback (most recent call last):
  File "<frozen runpy>", line 189, in _run_module_as_main
  File "/env/venv/lib/python3.11/site-packages/_pytest/_code/code.py", line 81, in Code
    def path(self) -> Union[py.path.local, str]:
  File "/env/venv/lib/python3.11/site-packages/py/_vendored_packages/apipkg/__init__.py", line 150, in __makeattr
    raise AttributeError(name)
AttributeError: __spec__
"""


def test_a_runner_that_cannot_start_is_named_with_its_pinned_versions():
    """markupsafe's requirements of 2021 pin pytest 6.2.4, whose `py` does not import on
    Python 3.11: the runner never started, which read as an unrecognised summary."""
    ev = _ev("failed", 1, Counts(None), BROKEN_RUNNER)
    ev.environment = {"python": "3.11", "installed": ["MarkupSafe==2.0.0", "py==1.10.0", "pytest==6.2.4"]}
    judged = judge_base(ev)
    assert not judged.held and judged.diagnosis == "runner_broken" and "env.python" in judged.remedy
    assert "AttributeError: __spec__" in judged.detail and "py==1.10.0, pytest==6.2.4 on Python 3.11" in judged.detail
    # the override it offers starts: pytest's alone left the pinned `py` raising as before
    assert '`env.overrides: ["pytest==7.3.1", "py>=1.11"]`' in judged.remedy, judged.remedy
    ev.environment = {"python": "3.11", "installed": ["pytest==6.2.4"]}
    assert '`env.overrides: ["pytest==7.3.1"]`' in judge_base(ev).remedy  # no `py` installed: none named
    own = BROKEN_RUNNER + '  File "/tree/tests/conftest.py", line 3, in <module>\n    import missing_thing\nRuntimeError: the project\'s own conftest\n'
    assert judge_base(_ev("failed", 4, Counts(None), own)).diagnosis != "runner_broken"  # its last frame is the project's


# backoff #65's environment with the advised override (pytest 7.3.1) and its own pin of
# pytest-asyncio 0.9, as the real pair printed it (the tail of the run; frames above cut)
BROKEN_PLUGIN = """$ python3 -m pytest -q tests
Traceback (most recent call last):
  File "/env/venv/lib/python3.11/site-packages/_pytest/config/__init__.py", line 1237, in _preparse
    self.pluginmanager.load_setuptools_entrypoints("pytest11")
  File "/env/venv/lib/python3.11/site-packages/pluggy/_manager.py", line 521, in load_setuptools_entrypoints
    plugin = ep.load()
  File "/usr/lib/python3.11/importlib/metadata/__init__.py", line 202, in load
    module = import_module(match.group('module'))
  File "<frozen importlib._bootstrap>", line 690, in _load_unlocked
  File "/env/venv/lib/python3.11/site-packages/_pytest/assertion/rewrite.py", line 172, in exec_module
    exec(co, module.__dict__)
  File "/env/venv/lib/python3.11/site-packages/pytest_asyncio/plugin.py", line 8, in <module>
    from _pytest.python import transfer_markers
ImportError: cannot import name 'transfer_markers' from '_pytest.python' (/env/venv/lib/python3.11/site-packages/_pytest/python.py)
"""


def test_a_pytest_plugin_that_cannot_load_is_a_broken_runner_and_its_override_is_named():
    """With the advised `pytest==7.3.1`, backoff's pinned pytest-asyncio 0.9 no longer loaded;
    its last frame was the plugin's, so the run read as "runner not recognised: use pytest" on a
    pytest command. The plugin is the runner's part, and the override names it (unpinned: the
    resolver picks a release that loads with that pytest: 0.21 did, by hand)."""
    ev = _ev("failed", 1, Counts(None), BROKEN_PLUGIN)
    ev.environment = {"python": "3.11", "installed": ["pytest==7.3.1", "pytest-asyncio==0.9.0"]}
    judged = judge_base(ev)
    assert not judged.held and judged.diagnosis == "runner_broken", judged
    assert "pytest_asyncio raised while the runner started (ImportError: cannot import name 'transfer_markers'" in judged.detail, judged.detail
    assert '`env.overrides: ["pytest==7.3.1", "pytest-asyncio"]`' in judged.remedy, judged.remedy


# marko #261's base, as pytest left it: the test's loop took the memory, then pytest's own
# capture raised MemoryError on the way out, with no summary and only pytest's frames
OUT_OF_MEMORY = """$ python3 -m pytest -q tests/test_basic.py
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "/env/venv/lib/python3.11/site-packages/_pytest/config/__init__.py", line 1177, in _ensure_unconfigure
  File "/env/venv/lib/python3.11/site-packages/_pytest/capture.py", line 592, in snap
MemoryError
MemoryErrorException ignored in sys.unraisablehookMemoryError:
MemoryError:
"""


def test_a_base_that_ran_out_of_memory_reproduced_and_never_reads_as_a_broken_runner():
    from benchtape.sandbox.testreports import read_junit

    ev = Evidence("failed", 1, Counts(None), OUT_OF_MEMORY, 0.1, steps=[{"command": "python3 -m pytest -q tests/test_basic.py", "exit": 1}])
    judged = judge_base(ev)
    assert judged.held and "ran out of memory" in judged.detail and "the base fails as a whole" in judged.detail, judged
    assert not judge_reference(ev).held
    # a report holding pytest's record of its own internal error names no test's outcome
    internal = b'<testsuites><testsuite name="pytest" tests="0"><testcase time="0.000" /><testcase classname="pytest" name="internal" time="0.000" /></testsuite></testsuites>'
    assert read_junit(internal) is None
    # a kill (137) is still no proof: the host's OOM killer may have sent it
    assert not judge_base(Evidence("failed", 137, Counts(None), "Killed\n", 0.1, steps=ev.steps)).held


# spf13/pflag #409 on go1.19.8: a test file neither patch touches uses Go 1.21's flag.BoolFunc
PFLAG = """$ go test -v . -run '^(TestNoArgument|TestUsage)$'
# github.com/spf13/pflag [github.com/spf13/pflag.test]
./bool_func_test.go:86:29: cannot use stdFSet (variable of type *flag.FlagSet) as type BoolFuncFlagSet in argument to runCase:
\t*flag.FlagSet does not implement BoolFuncFlagSet (missing BoolFunc method)
FAIL\tgithub.com/spf13/pflag [build failed]
FAIL
"""


def test_a_reference_that_fails_to_compile_as_the_base_did_names_the_toolchain():
    base = _ev("failed", 2, Counts("go", errored=1), PFLAG)
    judged = judge_reference(_ev("failed", 2, Counts("go", errored=1), PFLAG), base)
    assert judged.diagnosis == "gold_still_fails" and "does not compile with or without the fix" in judged.detail and "bool_func_test.go:86:29" in judged.detail
    assert "toolchain" in judged.remedy and "go version" in judged.remedy
    own = PFLAG.replace("./bool_func_test.go:86:29", "./flag.go:12:3")  # the reference's own error, not the base's: the fix is at fault
    assert "toolchain" not in judge_reference(_ev("failed", 2, Counts("go", errored=1), own), base).remedy


# jd/tenacity #179 (2019) on Python 3.11: its code decorates with asyncio.coroutine, gone since 3.11
TENACITY = """$ python -m pytest -rA tenacity/tests/test_tenacity.py
==================================== ERRORS ====================================
_______________ ERROR collecting tenacity/tests/test_tenacity.py _______________
tenacity/__init__.py:48: in <module>
    from tenacity._asyncio import AsyncRetrying
tenacity/_asyncio.py:28: in <module>
    class AsyncRetrying(BaseRetrying):
tenacity/_asyncio.py:35: in AsyncRetrying
    @asyncio.coroutine
E   AttributeError: module 'asyncio' has no attribute 'coroutine'
=========================== short test summary info ============================
ERROR tenacity/tests/test_tenacity.py - AttributeError: module 'asyncio' has ...
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.14s
"""


def test_tests_that_import_with_neither_the_base_nor_the_fix_name_the_python():
    """The same import error at the base and with the fix, no test run: this Python, not the
    fix, is at fault, and the remedy says `env.python` (it said "check the environment")."""
    base = _ev("failed", 2, Counts("pytest", errored=1), TENACITY)
    reference = _ev("failed", 2, Counts("pytest", errored=1), TENACITY)
    reference.environment = {"python": "3.11"}
    judged = judge_reference(reference, base)
    assert judged.diagnosis == "gold_still_fails" and "cannot be imported with or without the fix" in judged.detail and "on Python 3.11" in judged.detail, judged
    assert "AttributeError: module 'asyncio' has no attribute 'coroutine'" in judged.detail and "env.python" in judged.remedy
    own = TENACITY.replace("module 'asyncio' has no attribute 'coroutine'", "name 'retry_if' is not defined")  # the fix's own import error: the fix is at fault
    assert "env.python" not in judge_reference(_ev("failed", 2, Counts("pytest", errored=1), own), base).remedy


# pillarjs/path-to-regexp #261 (2022): jest, which @borderless/ts-scripts' test script runs with ts-jest, run as `npx jest` on a .ts file
UNTRANSFORMED = """FAIL src/index.spec.ts
  ● Test suite failed to run

    Jest encountered an unexpected token

    Details:

    SyntaxError: /tmp/work/src/index.spec.ts: Missing semicolon. (5:4)

      3 | import semver from "semver";
    > 5 | type Test = [
"""


def test_a_runner_that_loads_the_tests_nowhere_names_the_projects_own_script():
    base = _ev("failed", 1, Counts("jest", errored=1), UNTRANSFORMED)
    judged = judge_reference(_ev("failed", 1, Counts("jest", errored=1), UNTRANSFORMED), base)
    assert judged.diagnosis == "gold_still_fails" and "cannot load the test files with or without the fix" in judged.detail and "Missing semicolon" in judged.detail
    assert "transform" in judged.remedy and "npm test -- <files>" in judged.remedy
    loaded = _ev("failed", 1, Counts("jest", failed=1), "FAIL src/index.spec.ts\n  ● parse › works\n")  # the base loaded its tests: the fix is at fault
    assert "transform" not in judge_reference(_ev("failed", 1, Counts("jest", errored=1), UNTRANSFORMED), loaded).remedy


def test_the_diagnoses_of_each_phase(tmp_path: Path):
    reproduced = _ev("failed", 1, Counts("pytest", passed=49, failed=1))
    assert judge_base(reproduced).held
    assert judge_base(_ev("failed", 2, Counts("pytest", errored=1))).held  # a test importing the missing API: a reproduction
    assert judge_base(_ev("passed", 0, Counts("pytest", passed=17))).diagnosis == "base_already_passes"
    assert judge_base(_ev("failed", 5, Counts("pytest"))).diagnosis == "tests_not_collected"
    assert judge_base(_ev("failed", 1, Counts(None))).diagnosis == ""  # no runner recognised: no proof
    # the runner the command names died before its summary (a test exited jest: commander.js at
    # its base): the base fails as a whole; the reference must still pass with a summary
    died = Evidence("failed", 1, Counts(None), "error: unknown option '-10'\n  ●  process.exit called with \"1\"\n", 0.1, steps=[{"command": "npx jest --json tests/negatives.test.js", "exit": 1}])
    assert judge_base(died).held and "jest stopped before its summary" in judge_base(died).detail
    assert judge_reference(Evidence("failed", 1, Counts(None), "", 0.1, steps=died.steps)).held is False
    assert not judge_base(Evidence("failed", 1, Counts(None), "", 0.1, steps=[{"command": "./run-checks.sh", "exit": 1}])).held  # no runner named: still no proof
    nothing = judge_base(Evidence("failed", 1, Counts(None), "No tests found, exiting with code 1\nRun with `--passWithNoTests` to exit with code 0\n", 0.1, steps=died.steps))
    assert not nothing.held and nothing.diagnosis == "tests_not_collected"  # jest matched no file: nothing died
    # a signal's death (137: killed, out of memory) or a runner that prints no summary by design is no such proof
    assert not judge_base(Evidence("failed", 137, Counts(None), "", 0.1, steps=died.steps)).held
    assert not judge_base(Evidence("failed", 4, Counts(None), "", 0.1, steps=[{"command": "python3 -m pytest tests/test_a.py", "exit": 4}])).held
    (tmp_path / "toolz").mkdir()
    missing = _ev("failed", 2, Counts("pytest", errored=1), "E   ModuleNotFoundError: No module named 'hypothesis'\n")
    assert judge_base(missing, tmp_path).diagnosis == "missing_dependency"
    # the fix is where the project environment reads it from, never the wheelhouse (unused at level home: issue 44)
    remedy = judge_base(missing, tmp_path).remedy
    assert "wheelhouse" not in remedy and "env.install" in remedy and "test extra" in remedy
    own = _ev("failed", 2, Counts("pytest", errored=1), "E   ModuleNotFoundError: No module named 'toolz.newthing'\n")
    assert judge_base(own, tmp_path).held  # the project's own module: the change adds it
    # prettytable's old flat layout: the module under test is src/prettytable.py, and a command run
    # from the top cannot import it; naming it in `env.install` (the remedy it got) tests PyPI's copy
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "prettytable.py").write_text("")
    flat = judge_base(_ev("failed", 1, Counts(None), "ModuleNotFoundError: No module named 'prettytable'\n"), tmp_path)
    assert flat.diagnosis == "project_not_installed" and "src/prettytable.py" in flat.detail and "env.install" not in flat.detail, flat
    assert judge_base(_ev("failed", 127, Counts(None), "sh: 1: pytest: not found\n")).diagnosis == "missing_dependency"
    # the program each shell names, never the shell or bash's line number (`line 144: gcc` once read `144`)
    for said, name in (("sh: 1: pytest: not found", "pytest"), ("/solution/solve.sh: line 144: gcc: command not found", "gcc"), ("bash: tox: command not found", "tox"), ("zsh: command not found: go", "go")):
        assert problem(_ev("failed", 127, Counts(None), said + "\n")) == ("missing_dependency", f"{name}: command not found"), said
    assert problem(_ev("failed", 127, Counts(None), "curl: (22) HTTP 404: not found\n")) == ("missing_dependency", "the verify command: command not found")  # no program named 404
    assert problem(_ev("failed", 1, Counts(None), "/usr/bin/python3: No module named pytest\n")) == ("missing_dependency", "no module named 'pytest'")
    assert problem(_ev("failed", 1, Counts(None), "socket.gaierror: [Errno -3] Temporary failure in name resolution\n")) == ("network_denied", "socket.gaierror: [Errno -3] Temporary failure in name resolution")
    said = "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com"
    assert problem(_ev("failed", 128, Counts(None), f"Cloning into 'r'...\n{said}\n")) == ("network_denied", said)  # the whole line, never cut at the URL
    # a phase that had the network and could not resolve a host: this machine is offline, the
    # task is not at fault (harbor-cookbook's verifiers fetch uv; validation told their author
    # to give the verifier a network it had)
    online = _ev("failed", 128, Counts(None), f"{said}\n")
    online.network = True
    assert problem(online) == ("network_unreachable", said)
    from benchtape.sandbox.harbor_env import REMEDIES as HARBOR_REMEDIES
    from benchtape.sandbox.harbor_env import judge_oracle

    online.reward, online.detail = 0.0, "reward 0"
    judged = judge_oracle(online)
    assert judged.diagnosis == "network_unreachable" and judged.remedy == HARBOR_REMEDIES["network_unreachable"] and "not at fault" in judged.remedy and "network_mode" not in judged.remedy
    assert judge_reference(_ev("passed", 0, Counts("pytest", passed=50)), reproduced).held
    assert judge_reference(_ev("failed", 1, Counts("pytest", failed=1)), reproduced).diagnosis == "gold_still_fails"
    assert judge_reference(_ev("passed", 0, Counts("pytest", passed=10)), reproduced).diagnosis == "gold_ran_fewer"
    assert judge_reference(_ev("passed", 0, Counts("pytest", passed=38)), _ev("failed", 2, Counts("pytest", errored=1))).held
    assert judge_reference(_ev("passed", 0, Counts("pytest")), reproduced).diagnosis == "tests_not_collected"


def test_a_runner_that_printed_nothing_is_no_base_failing_as_a_whole(tmp_path: Path):
    """mime-types in 2015 on Node 20: `npx mocha` (mocha 1.21, whose bin/mocha loses its child's
    output) printed not a line, exit 2 at the base and 0 with the fix. That read as "mocha stopped
    before its summary: the base fails as a whole", then "runner not recognised, use mocha"; it is
    a runner that printed nothing, to be run by hand. A real run of a silent command says so."""
    command = 'npx mocha --reporter json --reporter-option=output="${BENCHTAPE_REPORTS:-/tmp}/mocha.json" test/test.js'
    steps = [{"command": command, "exit": 2}]
    probe = "(the import check printed nothing it could read: )\n"  # before the command's own line: not its output
    npx = "npm notice New minor version of npm available! 11.19.1 -> 11.21.3\nnpm notice\n"  # npx's own words, none mocha's
    base = Evidence("failed", 2, Counts(None), f"{probe}$ {command}\n{npx}\n", 0.1, steps=steps)
    judged = judge_base(base)
    assert not judged.held and judged.diagnosis == "runner_broken" and "mocha printed nothing at all (exit 2)" in judged.detail
    assert "by hand" in judged.remedy and "_mocha" in judged.remedy
    reference = Evidence("passed", 0, Counts(None), f"$ {command}\n\n", 0.1, steps=[{"command": command, "exit": 0}])
    assert judge_reference(reference, base).diagnosis == "runner_broken" and "(exit 0)" in judge_reference(reference, base).detail
    # a line of its own, a signal's death, a command naming no runner: judged as before
    said = Evidence("failed", 2, Counts(None), f"$ {command}\nTypeError: boom\n", 0.1, steps=steps)
    assert judge_base(said).held and "stopped before its summary" in judge_base(said).detail
    assert judge_base(Evidence("failed", 137, Counts(None), f"$ {command}\n", 0.1, steps=steps)).diagnosis == "runner_crashed"
    assert judge_base(Evidence("failed", 2, Counts(None), "$ ./run-checks.sh\n", 0.1, steps=[{"command": "./run-checks.sh", "exit": 2}])).diagnosis == ""
    with home_box(tmp_path, network=False) as box:
        ran = verify(tmp_path, [], Verify(command="exit 2 # npx mocha test/test.js"), box.run)
    assert ran.status == "failed" and judge_base(ran).diagnosis == "runner_broken", ran.log


def test_the_home_box_takes_the_network_away(tmp_path: Path):
    if not can_unshare_network():
        pytest.skip("this host gives no unprivileged network namespace (unshare -rn)")
    work = tmp_path / "phase" / "work"
    work.mkdir(parents=True)
    probe = "python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=3)\""
    with home_box(work) as box:
        done = box.run(probe, 30)
        env = box.run("echo $HOME; echo ${ANTHROPIC_API_KEY:-unset}", 30)
    assert done.exit_code != 0 and "Network is unreachable" in done.output
    assert env.output.split() == [str(tmp_path / "phase" / "home"), "unset"]


def test_the_home_box_keeps_its_loopback_so_a_tests_own_server_answers(tmp_path: Path):
    """A new network namespace starts with its loopback down: express's tests (supertest serves
    the app on 127.0.0.1) all failed on ENETUNREACH, base and reference alike."""
    if not can_unshare_network():
        pytest.skip("this host gives no unprivileged network namespace (unshare -rn)")
    work = tmp_path / "phase" / "work"
    work.mkdir(parents=True)
    serve = "python3 -c \"import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); s.listen(); c = socket.create_connection(s.getsockname(), timeout=3); a, _ = s.accept(); c.sendall(b'hi'); print(a.recv(2).decode())\""
    with home_box(work) as box:
        done = box.run(serve, 30)
        outside = box.run("python3 -c \"import socket; socket.create_connection(('192.0.2.1', 80), timeout=3)\"", 30)
    assert done.exit_code == 0 and done.output.strip() == "hi", done.output
    assert outside.exit_code != 0 and "Network is unreachable" in outside.output


def test_a_base_that_passed_on_skips_asking_for_a_newer_python_says_how_to_give_it(tmp_path: Path):
    """attrs' #1606: its new tests skip with `requires Python 3.13+`, and the environment was
    this host's 3.11: the next step names `env.python` first (a real pytest run, its report read)."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "test_new.py").write_text("import sys\n\nimport pytest\n\n\n@pytest.mark.skipif(sys.version_info < (3, 99), reason='requires Python 3.99+')\ndef test_replace():\n    assert False\n\n\ndef test_old():\n    pass\n")
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command="python3 -m pytest -q test_new.py"), box.run)
    judged = judge_base(ev)
    assert judged.diagnosis == "tests_skipped" and "requires Python 3.99+" in judged.detail, (judged, ev.log[-1500:])
    assert judged.remedy.startswith('the tests skip below Python 3.99: set `env.python: "3.99"` in .benchtape/config.yaml')
    assert judged.remedy.endswith("when they skip by design, this change is no task")  # the general remedy follows
    # the patch's own test is the skipped one (a new file, or its `+def`): the skip explains the pass
    new_file = b"diff --git a/test_new.py b/test_new.py\nnew file mode 100644\n--- /dev/null\n+++ b/test_new.py\n@@ -0,0 +1,2 @@\n+def test_replace():\n+    assert False\n"
    assert judge_base(ev, tree, new_file).diagnosis == "tests_skipped"
    decorated = b"diff --git a/test_new.py b/test_new.py\n--- a/test_new.py\n+++ b/test_new.py\n@@ -5,2 +5,3 @@ import pytest\n \n+@pytest.mark.skipif(sys.version_info < (3, 99), reason='requires Python 3.99+')\n def test_replace():\n"
    assert judge_base(ev, tree, decorated).diagnosis == "tests_skipped"


def test_an_old_skip_beside_new_tests_that_pass_is_no_explanation(tmp_path: Path):
    """loguru #905: its two new tests pass without the fix, beside an old `@pytest.mark.skip`
    test in the same module; the base was diagnosed `tests_skipped` ("provide what they skip
    for") where it is `base_already_passes` (a real pytest run, its report read)."""
    tree = tmp_path / "tree"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "__init__.py").write_text("")
    (tree / "tests" / "test_enqueue.py").write_text("import pytest\n\n\n@pytest.mark.skip(reason='No way to safely deserialize exception yet')\ndef test_old_unpicklable():\n    assert False\n\n\nclass TestQueue:\n    def test_new_typeerror(self):\n        pass\n")
    patch = b"diff --git a/tests/test_enqueue.py b/tests/test_enqueue.py\n--- a/tests/test_enqueue.py\n+++ b/tests/test_enqueue.py\n@@ -8,0 +9,4 @@ def test_old_unpicklable():\n+class TestQueue:\n+    def test_new_typeerror(self):\n+        pass\n"
    with home_box(tree) as box:
        ev = verify(tree, [], Verify(command="python3 -m pytest -q tests/test_enqueue.py"), box.run)
    assert ev.status == "passed" and ev.tests is not None and ev.tests.with_outcome("skipped"), ev.log[-1500:]
    judged = judge_base(ev, tree, patch)
    assert judged.diagnosis == "base_already_passes" and "test_old_unpicklable" in judged.detail, judged
    assert judge_base(ev, tree).diagnosis == "tests_skipped"  # no patch known: the skip may explain it, as before
    go = b"diff --git a/x_test.go b/x_test.go\n--- a/x_test.go\n+++ b/x_test.go\n@@ -1 +1,2 @@\n+func TestX(t *testing.T) {}\n"
    assert judge_base(ev, tree, go).diagnosis == "tests_skipped"  # no Python file in the patch: nothing to tell by


def test_a_patch_is_split_by_file_as_git_reads_its_names():
    """One splitter (sandbox/patches.file_blocks) for every reader: a quoted name and a spaced
    one stay whole, and a test file whose text holds a patch (`+diff --git ...` in a hunk) is one
    block, never two; the candidate's `.git/` blocks go, whatever the text around them."""
    from benchtape.replay.task_verdict import candidate_without_state
    from benchtape.sandbox.patches import file_blocks

    quoted = b'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n--- "a/t\\303\\251st.py"\n+++ "b/t\\303\\251st.py"\n@@ -1 +1 @@\n-a\n+b\n'
    spaced = b"diff --git a/my tests/x.py b/my tests/x.py\n--- a/my tests/x.py\n+++ b/my tests/x.py\n@@ -1 +1 @@\n-a\n+b\n"
    holds = b"diff --git a/tests/test_p.py b/tests/test_p.py\nnew file mode 100644\n--- /dev/null\n+++ b/tests/test_p.py\n@@ -0,0 +1,2 @@\n+PATCH = '''\n+diff --git a/.git/config b/.git/config'''\n"
    own = b"diff --git a/.git/HEAD b/.git/HEAD\n--- a/.git/HEAD\n+++ b/.git/HEAD\n@@ -1 +1 @@\n-ref: refs/heads/main\n+ref: refs/heads/x\n"
    blocks = file_blocks(b"preamble\n" + quoted + spaced + holds + own)
    assert [names for names, _ in blocks] == [["t\u00e9st.py", "t\u00e9st.py"], ["my tests/x.py"], ["tests/test_p.py"], [".git/HEAD"]]
    assert b"".join(block for _, block in blocks) == quoted + spaced + holds + own
    assert candidate_without_state(b"preamble\n" + quoted + own + holds) == b"preamble\n" + quoted + holds
    assert candidate_without_state(b"") == b"" and candidate_without_state(own) == b""


ARROW_COVERAGE = """$ python3 -m pytest -q tests/test_locales.py
tests/test_locales.py .................................................. [ 22%]
........................................................................ [ 86%]
.............................../venv/lib/python3.11/site-packages/pytest_cov/plugin.py:355: CovFailUnderWarning: Coverage failure: total of 55 is less than fail-under=99
  warnings.warn(CovFailUnderWarning(message), stacklevel=1)

ERROR: Coverage failure: total of 55 is less than fail-under=99
                                                                         [100%]
TOTAL                 2324    834    690     10    55%
Coverage XML written to file coverage.xml

FAIL Required test coverage of 99% not reached. Total coverage: 55.47%
============================= 225 passed in 4.61s ==============================
"""


def test_a_reference_failed_by_the_coverage_threshold_alone_says_so():
    """arrow's reference passed all 225 tests and pytest-cov failed the run on its
    `--cov-fail-under=99` (pytest-cov 5's words, from that run): `gold_still_fails` with the
    remedy that fixes it (`--no-cov`), never "check the environment"; a run with a failing test
    is the tests' failure, whatever coverage says."""
    judged = judge_reference(_ev("failed", 1, Counts("pytest", passed=225), ARROW_COVERAGE))
    assert (judged.held, judged.diagnosis) == (False, "gold_still_fails") and "--no-cov" in judged.remedy, judged
    assert judged.detail == "ERROR: Coverage failure: total of 55 is less than fail-under=99"
    failing = judge_reference(_ev("failed", 1, Counts("pytest", passed=224, failed=1), ARROW_COVERAGE))
    assert "--no-cov" not in failing.remedy


def test_a_test_that_commits_finds_a_git_identity_in_the_box(tmp_path: Path):
    """dunamai's tests make commits in a fresh repository; a fresh HOME has no identity, and all
    eight failed with "Author identity unknown" in every phase."""
    work = tmp_path / "work"
    work.mkdir()
    with home_box(work) as box:
        done = box.run("git init -q repo && cd repo && git commit -q --allow-empty -m first && git log --format=%an", 60)
    assert done.exit_code == 0 and done.output.strip().endswith("benchtape"), done.output


def test_a_reason_the_runs_again_give_again_is_printed_once(capsys: pytest.CaptureFixture[str]):
    """cattrs #708: gold_still_fails, with the reference run again twice, printed the same
    "why:" three times; the later ones say it is the same."""
    from types import SimpleNamespace

    from benchtape.render_tasks import validated_lines
    from benchtape.sandbox.verifier import Judgement
    from benchtape.tasks.validate import PhaseReport, TaskReport

    why = "ImportError: cannot import name 'CodecOptions' from 'bson'"
    failed = Judgement(False, "gold_still_fails", "check the environment", why)
    report = TaskReport("708", level="home", where="home")
    report.phases = {
        "base": PhaseReport("base", _ev("failed", 1, Counts("pytest", failed=1)), Judgement(True, "", ""), Path("base.log")),
        **{name: PhaseReport(name, _ev("failed", 1, Counts("pytest", failed=1)), failed, Path(f"{name}.log")) for name in ("reference", "reference.2", "reference.3")},
    }
    validated_lines(SimpleNamespace(level="home", run_id="r1", why="", tasks=[report]))
    out = capsys.readouterr().out
    assert out.count(why) == 1 and out.count("why: the same as above") == 2, out


def test_a_go_tree_without_go_mod_says_so_and_names_go_mod_init():
    """hashicorp/golang-lru's 2015 commits have no go.mod: Go 1.16+ stops with `go: go.mod file
    not found`, which read as "the runner's summary was not recognised: use … go test, …" for a
    command that was go test. The diagnosis names the missing go.mod and the setup step that
    validates the task (`go mod init`, tried: task 10 then VALID)."""
    from benchtape.sandbox.verifier import judge_base, judge_reference

    log = "$ go test -v . -run '^(TestLRUContains|TestLRUPeek)$'\ngo: go.mod file not found in current directory or any parent directory; see 'go help modules'\n"
    for judged in (judge_base(_ev("failed", 1, Counts(None), log)), judge_reference(_ev("failed", 1, Counts(None), log))):
        assert not judged.held and judged.diagnosis == "no_go_module", judged
        assert "go mod init" in judged.remedy and "verify.setup" in judged.remedy


def test_a_go_module_fetch_without_network_names_the_module_cache():
    """A Go module with one dependency, whose tests pass on this host offline: the verifier's
    fresh HOME has an empty module cache, so `go test` fetched it and the remedy spoke of images
    and vendoring only. It names the host's module cache and how to hand it in."""
    from benchtape.sandbox.verifier import judge_base, judge_reference

    log = ("$ go test -v . -run '^(TestQuadThree)$'\ncalc.go:3:8: example.com/dep@v1.0.0: Get \"https://proxy.golang.org/example.com/dep/@v/v1.0.0.zip\": "
           "dial tcp: lookup proxy.golang.org on 10.255.255.53:53: dial udp 10.255.255.53:53: connect: network is unreachable\n")
    for judged in (judge_base(_ev("failed", 1, Counts(None), log)), judge_reference(_ev("failed", 1, Counts(None), log))):
        assert judged.diagnosis == "network_denied" and "GOMODCACHE" in judged.remedy and "go env GOMODCACHE" in judged.remedy, judged
    other = judge_base(_ev("failed", 1, Counts(None), "fatal: unable to access 'https://github.com/o/r.git/': Could not resolve host: github.com\n"))
    assert other.diagnosis == "network_denied" and "GOMODCACHE" not in other.remedy


def test_a_toolchain_missing_in_the_image_is_not_a_python_dependency():
    """A Go task validated with `--sandbox container` in benchtape's base image: `go: command
    not found`, and the remedy said to declare it with the project's test dependencies or
    `env.install` (Python packages). It names the toolchain, level home, and Dockerfile.benchtape."""
    from benchtape.sandbox.verifier import judge_base

    judged = judge_base(_ev("failed", 127, Counts(None), "$ go test -v . -run '^(TestLRUPeekOrAdd)$'\nbash: line 1: go: command not found\n"))
    assert judged.diagnosis == "missing_dependency" and "`go` is not installed" in judged.remedy and "Dockerfile.benchtape" in judged.remedy and "env.install` installs Python" in judged.remedy, judged
    pytest_missing = judge_base(_ev("failed", 127, Counts(None), "sh: 1: pytest: not found\n"))
    assert pytest_missing.diagnosis == "missing_dependency" and "not installed where" not in pytest_missing.remedy


# dateutil/dateutil #859 (2019-02): its setup.cfg has `filterwarnings = error` and its tests use
# marks it never registered, which pytest 7 (the oldest that runs on Python 3.11) warns of
DATEUTIL_MARKS = """$ python3 -m pytest -q dateutil/test/test_rrule.py

==================================== ERRORS ====================================
_________________ ERROR collecting dateutil/test/test_rrule.py _________________
dateutil/test/test_rrule.py:22: in <module>
    @pytest.mark.rrule
venv/lib/python3.11/site-packages/_pytest/mark/structures.py:547: in __getattr__
    warnings.warn(
E   pytest.PytestUnknownMarkWarning: Unknown pytest.mark.rrule - is this a typo?  You can register custom marks to avoid this warning - for details, see https://docs.pytest.org/en/stable/how-to/mark.html
=========================== short test summary info ============================
ERROR dateutil/test/test_rrule.py - pytest.PytestUnknownMarkWarning: Unknown ...
!!!!!!!!!!!!!!!!!!!! Interrupted: 1 error during collection !!!!!!!!!!!!!!!!!!!!
1 error in 0.26s
"""


def test_a_warning_the_projects_filterwarnings_makes_an_error_at_collection_is_named_with_its_way_out():
    """Collected neither at the base nor with the fix because of a warning turned error: named,
    with the PYTEST_ADDOPTS way out (it said "the reference patch does not make the tests pass")."""
    base = _ev("failed", 2, Counts("pytest", errored=1), DATEUTIL_MARKS)
    reference = _ev("failed", 2, Counts("pytest", errored=1), DATEUTIL_MARKS)
    reference.environment = {"python": "3.11"}
    judged = judge_reference(reference, base)
    assert judged.diagnosis == "gold_still_fails" and "cannot be imported with or without the fix" in judged.detail, judged
    assert "pytest.PytestUnknownMarkWarning" in judged.detail
    assert "filterwarnings" in judged.remedy and "-W ignore::pytest.PytestUnknownMarkWarning" in judged.remedy, judged.remedy
