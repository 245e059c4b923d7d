"""A task cell's grade in the formats: sessions whose session.started names a `task` (as the
record side writes it) and whose stored grading holds a `task:verify` verdict (as the grade side
stores it) export their score and outcome to Inspect (a score per verdict, the cell outcome on
the scenario score) and to ATIF (`extra.benchtape.grading`), with the task's kind, id and
fingerprint in each format's metadata. Built through the Store API: the formats read what is
stored, whoever stored it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from formatskit import cli

from benchtape.core.model import Action
from benchtape.core.results import FAIL, PASS, Result
from benchtape.formats.harbor_rules import problems
from benchtape.store.database import Store

inspect_log = pytest.importorskip("inspect_ai.log", reason="the inspect extra is not installed: pip install 'benchtape[inspect]'")

TASK_VERIFY = "task:verify"  # the contract's verdict name (type and check path) of a task cell's hidden verifier


def _task(folder: Path) -> dict:
    return {"kind": "harbor", "id": "hello-file", "folder": str(folder), "fingerprint": "f" * 64}


def _session(store: Store, run: str, scenario: str, harness: str, started: dict, said: str) -> str:
    sid = store.new_session(run, scenario, harness=harness)
    store.append(
        sid,
        [
            Action("session.started", {"scenario": scenario, "harness": harness, "prompt": "write hello.txt", "attempt": 1, **started}, at=1000.0),
            Action("message.user", {"text": "write hello.txt"}, at=1000.0),
            Action("message.assistant", {"text": said}, at=1001.0),
            Action("final_output", {"text": said}, at=1001.0),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1000.0}, at=1002.0),
        ],
    )
    return sid


def _verify(status, score: float, outcome: str, reason: str, task: dict, reward: float | None) -> dict:
    evidence = {"outcome": outcome, "task": task, "fingerprint": task["fingerprint"], "recorded_fingerprint": task["fingerprint"], "candidate": {"sha256": "c" * 64, "bytes": 42, "added": ["hello.txt"], "modified": [], "removed": []}, "log": "the verifier's whole output stays in the store"}
    if reward is not None:
        evidence["reward"] = reward
    spec = {"type": TASK_VERIFY, "args": {"kind": task["kind"], "task": task["id"], "fingerprint": task["fingerprint"]}}
    return {"check_path": TASK_VERIFY, "type": TASK_VERIFY, "metric": None, "spec": spec, "spec_sha256": "s", "result": Result(status, score, reason, evidence)}


@pytest.fixture(scope="module")
def store_db(tmp_path_factory) -> tuple[Path, dict[str, str], dict]:
    folder = tmp_path_factory.mktemp("taskcells")
    task = _task(folder / "tasks" / "hello-file")
    store = Store(folder / "t.db")
    run = store.new_run("evaluate", harness="mixed")
    ids = {
        "oracle": _session(store, run, "hello-file", "oracle", {"task": task}, "solve.sh ran"),
        "partial": _session(store, run, "hello-file#2", "mock", {"task": task}, "half of it"),
        "noop": _session(store, run, "hello-file#3", "mock", {"task": task}, "I did nothing"),
        "bench": _session(store, run, "plain", "mock", {}, "hello"),
    }
    gid = store.new_grading("live", checkset_sha256="x", catalog_version="1", run_id=run)
    store.add_verdicts(gid, ids["oracle"], [_verify(PASS, 1.0, "passed", "the verifier's reward 1", task, 1.0)])
    store.add_verdicts(gid, ids["partial"], [_verify(FAIL, 0.4, "failed", "the verifier's reward 0.4", task, 0.4)])
    store.add_verdicts(gid, ids["noop"], [_verify(FAIL, 0.0, "no_changes", "the agent changed nothing in the environment's workspace", task, None)])
    contains = {"check_path": "checks[0]", "type": "contains", "metric": None, "spec": {"type": "contains", "value": "hello"}, "spec_sha256": "h", "result": Result.of(True, "found 'hello'")}
    store.add_verdicts(gid, ids["bench"], [contains])
    store.add_outcome(gid, ids["oracle"], "passed", f"{TASK_VERIFY}: the verifier's reward 1")
    store.add_outcome(gid, ids["partial"], "failed", f"{TASK_VERIFY}: the verifier's reward 0.4")
    store.add_outcome(gid, ids["noop"], "no_changes", f"{TASK_VERIFY}: the agent changed nothing in the environment's workspace")
    store.close()
    return folder / "t.db", ids, task


def test_an_inspect_log_scores_each_task_verdict_and_names_the_task(store_db, tmp_path: Path) -> None:
    db, ids, task = store_db
    refused = cli("export", "--format", "inspect", "--run", "latest", "-o", tmp_path / "run.eval", "--db", db)
    assert refused.code == 2 and "2 setups" in refused.stderr and not (tmp_path / "run.eval").exists()  # the oracle and the mock: a log each
    out = cli("export", "--format", "inspect", "--run", "latest", "-o", tmp_path / "logs", "--db", db)
    assert out.code == 0, out.stderr
    logs = {log.eval.model: log for log in (inspect_log.read_eval_log(str(p)) for p in (tmp_path / "logs").glob("*.eval"))}
    assert set(logs) == {"oracle/default", "mockllm/default"}
    samples = {s.metadata["session_id"]: s for log in logs.values() for s in log.samples}
    oracle, partial, noop, bench = (samples[ids[k]] for k in ("oracle", "partial", "noop", "bench"))
    assert oracle.scores[TASK_VERIFY].value == 1.0 and oracle.scores[TASK_VERIFY].answer == "passed"
    assert partial.scores[TASK_VERIFY].value == 0.4 and partial.scores[TASK_VERIFY].metadata["reward"] == 0.4  # a partial reward kept as the score
    assert noop.scores[TASK_VERIFY].value == 0.0 and noop.scores[TASK_VERIFY].answer == "no_changes" and noop.scores[TASK_VERIFY].explanation.startswith("FAIL: the agent changed nothing")
    verify = oracle.scores[TASK_VERIFY].metadata
    assert verify["fingerprint"] == task["fingerprint"] and verify["task"] == task and verify["candidate"] == {"sha256": "c" * 64, "bytes": 42}
    assert "log" not in verify  # the verifier's output stays in the store
    assert [s.scores["scenario"].value for s in (oracle, partial, noop)] == [1.0, 0.0, 0.0]
    assert [s.scores["scenario"].answer for s in (oracle, partial, noop)] == ["passed", "failed", "no_changes"]  # the cell outcome
    assert noop.scores["scenario"].metadata["cell_outcome"] == "no_changes" and noop.metadata["outcome"]["outcome"] == "no_changes"
    for s in (oracle, partial, noop):
        assert s.metadata["task"] == {"kind": "harbor", "id": "hello-file", "folder": task["folder"], "fingerprint": task["fingerprint"]}
    assert "task" not in bench.metadata and set(bench.scores) == {"scenario", "contains"}
    means = {s.name: s.metrics for s in logs["mockllm/default"].results.scores}
    assert means[TASK_VERIFY]["mean"].value == pytest.approx((0.4 + 0.0) / 2)  # the mock's tries only: the oracle is a setup of its own


def test_an_atif_trajectory_carries_the_grading_and_the_task(store_db, tmp_path: Path) -> None:
    db, ids, task = store_db
    out = cli("export", "--format", "atif", "--run", "latest", "-o", tmp_path / "atif", "--db", db)
    assert out.code == 0, out.stderr
    docs = {p.stem: json.loads(p.read_text()) for p in (tmp_path / "atif").glob("*.json")}
    assert set(docs) == set(ids.values())
    for doc in docs.values():
        assert problems(doc) == []  # valid by the atif package and Harbor's rules
    partial = docs[ids["partial"]]["extra"]["benchtape"]
    assert partial["task"] == task
    grading = partial["grading"]
    assert grading["outcome"] == {"outcome": "failed", "reason": f"{TASK_VERIFY}: the verifier's reward 0.4"}
    assert grading["scores"] == {TASK_VERIFY: 0.4}
    (verdict,) = grading["verdicts"]
    assert verdict["name"] == TASK_VERIFY and verdict["status"] == "FAIL" and verdict["facts"]["reward"] == 0.4 and verdict["facts"]["outcome"] == "failed"
    assert verdict["facts"]["fingerprint"] == task["fingerprint"] and "log" not in verdict["facts"]
    assert docs[ids["noop"]]["extra"]["benchtape"]["grading"]["outcome"]["outcome"] == "no_changes"
    bench = docs[ids["bench"]]["extra"]["benchtape"]
    assert "task" not in bench and bench["grading"]["scores"] == {"contains": 1.0} and "outcome" not in bench["grading"]
    # and an exported task cell still imports as a session (its grading is the store's, not the log's)
    back = cli("import", "atif", tmp_path / "atif" / f"{ids['oracle']}.json", "--db", tmp_path / "back.db")
    assert back.code == 0, back.stderr
    (row,) = list(Store(tmp_path / "back.db").session_rows())
    back_session = Store(tmp_path / "back.db").load_session(row.id)
    assert back_session.final_output == "solve.sh ran"
    said = [a.data["what"] for a in back_session.actions if a.kind == "adapter.warning"]
    assert any("extra.benchtape.grading" in m and "graded anew" in m for m in said), said  # kept as warnings, never dropped
    assert any("extra.benchtape.task" in m for m in said), said
