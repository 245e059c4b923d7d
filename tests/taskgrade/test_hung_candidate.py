"""A candidate that leaves a hang in place is graded `failed`, as validation counts the base that
hangs (tomlkit #470, tried unprepared: "fix a parser hang"). Before, grading called the same
hang a verifier `timeout`, an execution failure `compare` leaves out as "not measured", so an
agent that never fixed the hang was never ranked below one that did. A setup step that runs out
of time is still a timeout: the tests never ran."""

from __future__ import annotations

import dataclasses
import subprocess
from pathlib import Path

import pytest
from repokit import commit, git, init_repo

BUGGY = 'def squeeze(text):\n    """Collapse each run of blank lines to one."""\n    while "\\n\\n\\n" in text.replace("\\r", ""):\n        text = text.replace("\\n\\n\\n", "\\n\\n")\n    return text\n'
FIXED = 'def squeeze(text):\n    """Collapse each run of blank lines to one."""\n    text = text.replace("\\r\\n", "\\n")\n    while "\\n\\n\\n" in text:\n        text = text.replace("\\n\\n\\n", "\\n\\n")\n    return text\n'
TEST = "from squeeze import squeeze\n\n\ndef test_plain():\n    assert squeeze('a\\n\\n\\nb') == 'a\\n\\nb'\n"
TEST_FIX = TEST + "\n\ndef test_crlf():\n    assert squeeze('a\\r\\n\\r\\n\\r\\nb') == 'a\\n\\nb'\n"


def test_a_candidate_whose_hidden_tests_hang_fails_and_a_slow_setup_is_still_a_timeout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task

    root = init_repo(tmp_path / "squeeze")
    commit(root, {"squeeze.py": BUGGY, "tests/test_squeeze.py": TEST, "pytest.ini": "[pytest]\n"}, "squeeze blank lines")
    commit(root, {"squeeze.py": FIXED, "tests/test_squeeze.py": TEST_FIX}, "Fix a hang on CRLF blank lines (#7)\n\nsqueeze() never returned on Windows line ends.")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    from benchtape.store.database import Store
    from benchtape.tasks.create import create_task
    from benchtape.tasks.validate import validate

    project = load_project(root)
    task_id = create_task(project, "7").id
    yaml = find_task(root, task_id) / "task.yaml"
    yaml.write_text(yaml.read_text().replace("  network: false\n", "  network: false\n  timeout: \"6s\"\n"))
    store = Store(root / ".benchtape" / "benchtape.db")
    try:
        [report] = validate(project, [task_id], store=store, level="home", logs=root / ".benchtape" / "validate").tasks
    finally:
        store.close()
    assert report.validated and "hang" in report.phases["base"].judgement.detail, report.to_dict()
    assert not any("waits verify.timeout" in n for n in report.notes)  # 6 s is already less than ten times the reference's run
    task = load_task(find_task(root, task_id))

    # a candidate that only documents the function: the new test still hangs
    git(root, "checkout", "-q", task.source.base_commit)
    (root / "squeeze.py").write_text("# squeeze: blank lines\n" + BUGGY)
    candidate = subprocess.run(["git", "diff"], cwd=root, capture_output=True, check=True).stdout
    git(root, "checkout", "-q", "--", "squeeze.py")
    hung = grade_candidate(project, task, candidate)
    assert hung.outcome == "failed" and "hung" in hung.reason and hung.evidence.get("hung") is True, hung
    assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"

    # a setup step that ran out of time never ran the tests: not measured, as before. Written
    # into the validated task, the edit makes it stale, which is not measured either, and says
    # so before any verifier runs; the slow setup itself is tried on the task unvalidated
    yaml.write_text(yaml.read_text().replace("  setup: []\n", "  setup: [\"sleep 30\"]\n"))
    edited = load_task(find_task(root, task_id))
    stale = grade_candidate(project, edited, task.reference() or b"")
    assert stale.outcome == "infrastructure_error" and stale.evidence["diagnosis"] == "task_stale" and "benchtape task validate 7" in stale.reason, stale
    slow = grade_candidate(project, dataclasses.replace(edited, validation=None), task.reference() or b"")
    assert slow.outcome == "timeout", slow


def test_a_hung_bases_task_is_told_a_timeout_a_few_times_its_reference():
    from benchtape.tasks.validate import hang_timeout

    assert hang_timeout(10.4, 900) == 120  # loguru #1237: 15 minutes a cell where the reference ran in 10 s
    assert hang_timeout(1.0, 900) == 60  # never under a minute
    assert hang_timeout(95, 900) is None  # ten times 95 s is no less than 15 minutes: nothing to gain
    assert hang_timeout(10, 6) is None
