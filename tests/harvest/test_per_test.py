"""Per-test validation and verdicts on the real toolz history (issue 43): `task validate` keeps
FAIL_TO_PASS and PASS_TO_PASS from pytest's JUnit report (the ids the shared README's hand
check gives for PRs 603 and 425), runs the reference three times and the base's whole suite;
a test that flips is `flaky`, one that fails alone but passes in the suite `fails_alone`;
grading a candidate names the tests that decided it, keeps the share of FAIL_TO_PASS passed
as partial credit, and fails a candidate that fixes the bug but breaks a PASS_TO_PASS test."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from e2e.cli import benchtape
from harvestkit import FIVE, cli_env, validated_toolz, validation_report

from benchtape.spec.project import load_project
from benchtape.spec.task import load_task, task_dirs

F2P = {
    "603": ["toolz.tests.test_itertoolz::test_partition_all"],
    "425": ["toolz.tests.test_dicttoolz.TestCustomMapping::test_dissoc", "toolz.tests.test_dicttoolz.TestDefaultDict::test_dissoc"],
}


def _new_file_patch(path: str, text: str) -> bytes:
    lines = text.splitlines()
    head = f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(lines)} @@\n"
    return (head + "".join(f"+{line}\n" for line in lines)).encode()


def _variant(repo: Path, source: str, name: str, test_path: str, text: str) -> None:
    """A task like `source` whose hidden tests are one new test file (the tree and reference are
    the real PR's)."""
    folder = repo / ".benchtape" / "tasks"
    shutil.copytree(folder / source, folder / name)
    (folder / name / "tests.patch").write_bytes(_new_file_patch(test_path, text))
    yaml = folder / name / "task.yaml"
    old = load_task(folder / source).verify.command
    text = yaml.read_text().split("\nvalidation:", 1)[0] + "\n"  # the source's validation is not the variant's
    yaml.write_text(text.replace(json.dumps(old), json.dumps(f"python3 -m pytest -q {test_path}")))


@pytest.fixture(scope="module")
def validated(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("pertest")
    # 603 as the suite validated it once (harvestkit.validated_toolz: the same `task validate
    # --sandbox home`, base suite and repeat runs included); 425 and the variants validated here
    repo = validated_toolz(top / "toolz", FIVE)
    made = benchtape("task", "create", "425", cwd=repo)
    assert made.returncode == 0, made.stderr
    counter = top / "runs"
    # flips between runs: fails on odd runs (the base is run 1; the reference runs 2, 3, 4)
    _variant(repo, "603", "flaky", "toolz/tests/test_zz_flaky.py", f"from pathlib import Path\n\n\ndef test_flips():\n    counter = Path({str(counter)!r})\n    n = int(counter.read_text()) + 1 if counter.exists() else 1\n    counter.write_text(str(n))\n    assert n % 2 == 0\n")
    # passes only when another test module was collected first: the whole suite, never alone
    _variant(repo, "603", "alone", "toolz/tests/test_zz_alone.py", "import sys\n\n\ndef test_needs_the_suite():\n    assert any(m.endswith('test_dicttoolz') for m in sys.modules)\n")
    # 603's failing check, in a test parametrized with the time it is collected at (marshmallow's
    # datetime tests take the current time): its id is new in every run, nothing flips
    stamped = (
        "import time\n\nimport pytest\nfrom toolz import partition_all\n\n\nclass Longer(list):\n    def __len__(self):\n        return super().__len__() + 1\n\n\n"
        "@pytest.mark.parametrize('now', [time.time_ns()])\ndef test_stamped(now):\n    with pytest.raises(LookupError):\n        list(partition_all(5, Longer([1, 2])))\n"
    )
    _variant(repo, "603", "changing", "toolz/tests/test_zz_stamped.py", stamped)
    # 603's failing check beside a test that fails once, in the reference's first run (google/uuid
    # #150's flaky TestVersion6 made one validation in three blame the reference patch)
    once = top / "once"
    flips_once = (
        "from pathlib import Path\n\nimport pytest\nfrom toolz import partition_all\n\n\nclass Longer(list):\n    def __len__(self):\n        return super().__len__() + 1\n\n\n"
        "def test_partition():\n    with pytest.raises(LookupError):\n        list(partition_all(5, Longer([1, 2])))\n\n\n"
        f"def test_flips_once():\n    counter = Path({str(once)!r})\n    n = int(counter.read_text()) + 1 if counter.exists() else 1\n    counter.write_text(str(n))\n    assert n != 2  # the base is run 1, the reference's first run 2\n"
    )
    _variant(repo, "603", "once", "toolz/tests/test_zz_once.py", flips_once)
    # and a module no run can collect (tomlkit's cases live in a git submodule no task tree
    # holds): the whole suite at the base goes on without it, and the notes name it
    changing = repo / ".benchtape" / "tasks" / "changing" / "tests.patch"
    changing.write_bytes(changing.read_bytes() + _new_file_patch("toolz/tests/test_zz_uncollectable.py", "open('cases/missing.txt')\n\n\ndef test_never():\n    pass\n"))
    done = benchtape("task", "validate", "425", "flaky", "alone", "changing", "once", "--sandbox", "home", "--json", cwd=repo, env=cli_env(), timeout=1200)
    assert done.returncode == 1, done.stderr  # flaky, alone and changing are no tasks
    tasks = {t["id"]: t for doc in (validation_report(FIVE), json.loads(done.stdout)) for t in doc["tasks"]}
    return {"repo": repo, "tasks": tasks}


@pytest.mark.parametrize("task_id", sorted(F2P))
def test_fail_to_pass_is_the_readmes_failing_tests_and_pass_to_pass_the_rest(validated: dict[str, Any], task_id: str):
    report = validated["tasks"][task_id]
    assert report["validated"], report
    assert report["tests"]["fail_to_pass"] == F2P[task_id] and report["tests"]["flaky"] == {} and report["tests"]["fails_alone"] == []
    assert sorted(report["phases"]) == ["base", "base.suite", "reference", "reference.2", "reference.3"]  # the reference 3 times, the base's whole suite once
    suite = report["phases"]["base.suite"]
    assert suite["ran"] > report["phases"]["base"]["ran"]  # the whole suite, not the changed files
    validation = load_task(task_dirs(validated["repo"])[task_id]).validation
    assert validation is not None and list(validation.fail_to_pass) == F2P[task_id]
    assert len(validation.pass_to_pass) == report["phases"]["base"]["passed"] and not set(validation.pass_to_pass) & set(F2P[task_id])
    assert "toolz.tests.test_itertoolz::test_accumulate" in validation.pass_to_pass or task_id != "603"


def test_a_test_that_flips_between_the_reference_runs_is_named_and_the_task_is_flaky(validated: dict[str, Any]):
    report = validated["tasks"]["flaky"]
    assert not report["validated"] and report["health"]["diagnosis"] == "flaky"
    assert report["tests"]["flaky"] == {"toolz.tests.test_zz_flaky::test_flips": ["passed", "failed", "passed"]}
    assert "test_flips" in report["health"]["detail"] and "deterministic" in report["next"]
    assert load_task(task_dirs(validated["repo"])["flaky"]).validation is None  # nothing written


def test_a_reference_that_fails_once_is_run_again_and_the_flip_is_named_not_blamed_on_the_fix(validated: dict[str, Any]):
    report = validated["tasks"]["once"]
    assert report["validated"], report
    assert report["tests"]["fail_to_pass"] == ["toolz.tests.test_zz_once::test_partition"]
    assert report["tests"]["flaky"] == {"toolz.tests.test_zz_once::test_flips_once": ["failed", "passed", "passed"]}
    assert any(n.startswith("the reference failed its first run and held in run 2: toolz.tests.test_zz_once::test_flips_once") for n in report["notes"]), report["notes"]


def test_a_test_whose_id_changes_from_run_to_run_is_named_as_such_not_as_flaky(validated: dict[str, Any]):
    report = validated["tasks"]["changing"]
    assert report["phases"]["base"]["failed"] == 1 and report["phases"]["reference"]["passed"] == 1  # it does reproduce the fix
    assert not report["validated"] and report["health"]["diagnosis"] == "changing_ids", report["health"]
    assert report["tests"]["flaky"] == {} and report["tests"]["changing_ids"] == {"toolz.tests.test_zz_stamped::test_stamped": 3}
    assert "ids=" in report["next"] and any("change from run to run" in n for n in report["notes"])
    suite = report["phases"]["base.suite"]
    assert suite["passed"] > 100 and any("could not collect 1 module(s)" in n and "toolz.tests.test_zz_uncollectable" in n for n in report["notes"]), (suite, report["notes"])
    assert load_task(task_dirs(validated["repo"])["changing"]).validation is None


def test_a_test_that_fails_alone_but_passes_in_the_whole_suite_is_named(validated: dict[str, Any]):
    report = validated["tasks"]["alone"]
    ref = report["phases"]["reference"]
    assert not report["validated"] and ref["diagnosis"] == "fails_alone"  # never gold_still_fails
    assert "toolz.tests.test_zz_alone::test_needs_the_suite" in ref["detail"] and "reference.suite" in report["phases"]


@pytest.fixture(scope="module")
def graded(validated: dict[str, Any]) -> dict[str, Any]:
    os.environ["PATH"] = f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"  # the verifier's `python3 -m pytest` is this one
    repo = validated["repo"]
    return {"project": load_project(repo), "tasks": {i: load_task(task_dirs(repo)[i]) for i in F2P}}


def _candidate(repo: Path, task: Any, tmp: Path, edits: dict[str, str]) -> bytes:
    """The reference fix plus `edits` (text appended to files), as `git diff` in the agent's
    workspace gives it."""
    from benchtape.sandbox.patches import apply_patch
    from benchtape.sandbox.task_workspace import fresh_workspace

    ws = fresh_workspace(repo, task.source.base_commit, tmp / "ws")
    apply_patch(ws, task.reference())
    for path, text in edits.items():
        (ws / path).write_text((ws / path).read_text() + text)
    return subprocess.run(["git", "diff"], cwd=ws, capture_output=True, check=True).stdout


def test_the_reference_passes_naming_its_fail_to_pass_tests(graded: dict[str, Any]):
    from benchtape.replay.task_verdict import grade_candidate

    task = graded["tasks"]["603"]
    verdict = grade_candidate(graded["project"], task, task.reference())
    assert verdict.outcome == "passed" and "every FAIL_TO_PASS test passed (1)" in verdict.reason
    # what "none broke" covered, said: the changed test files' tests, not the whole suite (attrs: a
    # candidate that broke attr.filters passed, its reason read as if the suite had run)
    assert f"none of the {len(task.validation.pass_to_pass)} PASS_TO_PASS test(s) broke (the tests of the files the task's tests change; the rest of the suite is not run)" in verdict.reason, verdict.reason
    assert verdict.evidence["fail_to_pass_passed"] == F2P["603"] and verdict.evidence["fail_to_pass_share"] == 1.0


def test_a_fix_that_breaks_a_pass_to_pass_test_fails_and_names_it(graded: dict[str, Any], tmp_path: Path):
    from benchtape.replay.task_verdict import grade_candidate

    task = graded["tasks"]["603"]
    candidate = _candidate(graded["project"].root, task, tmp_path, {"toolz/itertoolz.py": "\n\ndef accumulate(binop, seq, initial=None):\n    return iter(())\n"})
    verdict = grade_candidate(graded["project"], task, candidate)
    assert verdict.outcome == "failed" and "PASS_TO_PASS test(s) broke" in verdict.reason and "test_accumulate" in verdict.reason
    assert verdict.evidence["fail_to_pass_passed"] == F2P["603"] and "toolz.tests.test_itertoolz::test_accumulate" in verdict.evidence["pass_to_pass_broken"]
    broken = len(verdict.evidence["pass_to_pass_broken"])  # each broken test is one more the fix failed: never "FAIL 1.00"
    assert verdict.evidence["fail_to_pass_share"] == round(len(F2P["603"]) / (len(F2P["603"]) + broken), 4) < 1.0


def test_code_that_ends_the_runner_with_exit_0_fails(graded: dict[str, Any], tmp_path: Path):
    """The fix plus `os._exit(0)` when the module is imported: pytest dies during collection
    with exit status 0 and writes no report. The exit status alone took that for a pass."""
    from benchtape.replay.task_verdict import grade_candidate

    task = graded["tasks"]["603"]
    candidate = _candidate(graded["project"].root, task, tmp_path, {"toolz/itertoolz.py": "\n\nimport os as _os\n_os._exit(0)\n"})
    verdict = grade_candidate(graded["project"], task, candidate)
    assert verdict.outcome == "failed", verdict.reason
    assert "ended without its per-test report (exit 0)" in verdict.reason and verdict.evidence["fail_to_pass_failed"] == F2P["603"]


def test_half_the_fail_to_pass_tests_is_partial_credit_never_a_pass(graded: dict[str, Any], tmp_path: Path):
    from benchtape.replay.task_verdict import grade_candidate

    task = graded["tasks"]["425"]
    refuse = "\n\n_dissoc = dissoc\n\n\ndef dissoc(d, *keys, **kwargs):\n    if type(d).__name__ == 'defaultdict':\n        raise TypeError('not this one')\n    return _dissoc(d, *keys, **kwargs)\n"
    verdict = grade_candidate(graded["project"], task, _candidate(graded["project"].root, task, tmp_path, {"toolz/dicttoolz.py": refuse}))
    assert verdict.outcome == "failed" and verdict.evidence["fail_to_pass_share"] == 0.5
    assert verdict.evidence["fail_to_pass_passed"] == F2P["425"][:1] and verdict.evidence["fail_to_pass_failed"] == F2P["425"][1:]
    assert "1 of 2 FAIL_TO_PASS test(s) did not pass: toolz.tests.test_dicttoolz.TestDefaultDict::test_dissoc" in verdict.reason


def test_any_test_id_survives_the_round_trip_through_task_yaml(validated: dict[str, Any], tmp_path: Path):
    """Test ids are the runner's (parametrize ids hold quotes, colons, `#`, newlines, escapes):
    each reads back exactly, and nothing in one becomes YAML structure."""
    from dataclasses import replace

    from benchtape.spec.task import with_validation

    folder = tmp_path / "603"
    shutil.copytree(task_dirs(validated["repo"])["603"], folder)
    task = load_task(folder)
    assert task.validation is not None
    ids = ("a::t[x: y # z]", 'b::"q" \\ back', "c::t[millón]", "d::line\nbreak", "e::'single'", "f::\u2028sep\x1b[31m", "g::- [1, 2]")
    (folder / "task.yaml").write_text(with_validation((folder / "task.yaml").read_text(), replace(task.validation, fail_to_pass=ids, pass_to_pass=ids[::-1], flaky=ids[:1])))
    back = load_task(folder).validation
    assert back is not None and (back.fail_to_pass, back.pass_to_pass, back.flaky) == (ids, ids[::-1], ids[:1])
