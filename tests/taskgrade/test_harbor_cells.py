"""A Harbor task cell graded from its stored candidate: the candidate applied in a FRESH
environment (its starting workspace made anew), tests/test.sh's reward decides (1 passed, else
failed, a partial reward kept as the verdict's score), at the level the session ran at."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from taskgradekit import grade_live, record_task_cell  # noqa: E402

from benchtape.replay.grading import GradingContext, StoredSnapshot, grade_session, scenario_status  # noqa: E402
from benchtape.replay.outcomes import decide  # noqa: E402
from benchtape.spec.harbor_task import load_harbor_task  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures-red" / "harbor"


def _write(files: dict[str, str]):
    def change(ws: Path) -> None:
        for name, text in files.items():
            (ws / name).write_text(text)

    return change


@pytest.mark.parametrize(
    ("files", "outcome", "status", "score"),
    [({"a.txt": "alpha\n", "b.txt": "beta\n"}, "passed", "PASS", 1.0), ({"a.txt": "alpha\n"}, "failed", "FAIL", 0.5), ({}, "no_changes", "FAIL", 0.0), ({"a.txt": "wrong\n"}, "failed", "FAIL", 0.0)],
    ids=["solved", "half", "noop", "wrong"],
)
def test_the_reward_decides_a_harbor_cell_and_a_partial_one_is_the_score(tmp_path: Path, files: dict[str, str], outcome: str, status: str, score: float):
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces: Harbor tasks at level home cannot run")
    task = load_harbor_task(shutil.copytree(FIXTURES / "two-files-partial", tmp_path / "two-files-partial"))
    store = Store(tmp_path / "s.db")
    ws = tmp_path / "ws"
    ws.mkdir()  # at level home a Harbor task's workspace starts empty
    sid = record_task_cell(store, task, ws, _write(files) if files else None)
    _, row = grade_live(store, sid)
    ev = row["evidence"]
    assert (ev["outcome"], row["status"], row["score"]) == (outcome, status, score), row["reason"]
    assert ev["task"]["kind"] == "harbor" and ev["fingerprint"] == task.fingerprint("")
    if files:
        assert ev["level"] == "home" and ev["reward"] == score and "$ bash /tests/test.sh" in ev["log"]
    session = store.load_session(sid)
    verdicts = grade_session(session, [], StoredSnapshot(store, session), GradingContext())
    assert decide(session, verdicts, None).outcome == outcome
    assert scenario_status(verdicts, session) == ("pass" if outcome == "passed" else "fail")


def test_a_container_session_is_verified_in_a_fresh_container_of_the_tasks_image(tmp_path: Path):
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        pytest.skip(f"no container engine: {why}")
    task = load_harbor_task(shutil.copytree(FIXTURES / "hello-file", tmp_path / "hello-file"))
    store = Store(tmp_path / "s.db")
    ws = tmp_path / "ws"
    ws.mkdir()
    solved = record_task_cell(store, task, ws, _write({"hello.txt": "Hello, world!\n"}), sandbox="container")
    _, row = grade_live(store, solved)
    assert (row["evidence"]["outcome"], row["status"]) == ("passed", "PASS"), row["reason"]
    assert row["evidence"]["level"] == "container" and row["evidence"]["where"].startswith("container ")
    ws2 = tmp_path / "ws2"
    ws2.mkdir()
    wrong = record_task_cell(store, task, ws2, _write({"hello.txt": "Goodbye\n"}), sandbox="container")
    _, row = grade_live(store, wrong)
    assert (row["evidence"]["outcome"], row["status"], row["evidence"]["reward"]) == ("failed", "FAIL", 0.0), row["reason"]


def test_a_harbor_verifier_that_runs_out_of_time_is_not_measured_as_harbor_says(tmp_path: Path):
    """Harbor ends a test.sh past verifier.timeout_sec with an exception and no reward, and
    Harbor validation refuses such a task: the cell is `timeout` (left out of compare), never a
    failure the agent is ranked by, whatever the verifier's script runs."""
    from benchtape.sandbox.harbor_env import can_map_paths

    if not can_map_paths():
        pytest.skip("this host refuses unprivileged mount namespaces: Harbor tasks at level home cannot run")
    folder = shutil.copytree(FIXTURES / "two-files-partial", tmp_path / "two-files-partial")
    (folder / "task.toml").write_text((folder / "task.toml").read_text().replace("[verifier]\ntimeout_sec = 60.0", "[verifier]\ntimeout_sec = 2.0"))
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\n# a hidden test that never ends\nsleep 600\n")
    task = load_harbor_task(folder)
    assert task.verify.timeout == 2.0
    store = Store(tmp_path / "s.db")
    ws = tmp_path / "ws"
    ws.mkdir()
    sid = record_task_cell(store, task, ws, _write({"a.txt": "alpha\n"}))
    _, row = grade_live(store, sid)
    assert row["evidence"]["outcome"] == "timeout" and "exceeded the verifier's 2s" in row["reason"], row["reason"]
    assert "hung" not in row["evidence"]
    session = store.load_session(sid)
    verdicts = grade_session(session, [], StoredSnapshot(store, session), GradingContext())
    assert decide(session, verdicts, None).outcome == "timeout"
