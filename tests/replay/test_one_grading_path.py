"""A verdict depends only on the stored session and the check, never on the command.

One stored session is graded through each path a user can take — live grading (what `run`
does as a session finishes), the negative control's grading (`check`), `regrade` and the
positive control `grade` — in each situation where something is missing: a healthy
session, a corrupt snapshot, a snapshot the store lost, a grading container whose engine
is down (with and without a scenario transform, which runs in that container, never on the
host instead), and a scenario transform that raises. Every path must store the same verdicts.
"""

from __future__ import annotations

import io
import tarfile
import textwrap
from pathlib import Path

import pytest

from benchtape.core.model import Action
from benchtape.replay.grading import GradingContext, build_checks, grade_stored, new_grading
from benchtape.replay.regrade import regrade
from benchtape.replay.reproduce import reproduce_store
from benchtape.replay.select import Selection
from benchtape.sandbox.snapshot import snapshot
from benchtape.spec.bench import load_bench
from benchtape.store.database import Store

BENCH = """
harness: mock
scenarios:
  - name: sc
    prompt: fix it
    {transform}
    checks:
      - {{type: contains, value: fixed}}
      - type: exec
        args: {{cmd: [sh, -c, 'test -f calc.py']}}
      - type: python
        value: |
          def evaluate(output, context):
              return "fixed" in output
      - {{type: "session:tool-used", value: Edit}}
"""

CASES = ["healthy", "corrupt_snapshot", "missing_snapshot", "engine_down", "engine_down_transform", "transform_raises"]


def _workspace_blob(tmp: Path) -> bytes:
    root = tmp / "ws"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    data, _ = snapshot(root)
    return data


def _corrupt_blob() -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        evil = tarfile.TarInfo("../escape.txt")
        evil.size = 2
        tar.addfile(evil, io.BytesIO(b"no"))
    return buf.getvalue()


def _record(store: Store, case: str, tmp: Path) -> str:
    """A finished session as a run records it, with the case's defect."""
    run = store.new_run("run", bench_path=str(tmp / "bench.yaml"))
    sid = store.new_session(run, "sc")
    if case == "corrupt_snapshot":
        sha = store.put_blob(_corrupt_blob())
    elif case == "missing_snapshot":
        sha = "0" * 64  # recorded, never stored
    else:
        sha = store.put_blob(_workspace_blob(tmp))
    started = {"scenario": "sc", "prompt": "fix it", "harness": "mock", "sandbox": "home"}
    if case.startswith("engine_down"):
        started.update(sandbox="container", container={"image": "benchtape-base:none", "user": None, "env": {}, "resources": None})
    store.append(
        sid,
        [
            Action("session.started", started),
            Action("message.user", {"text": "fix it"}),
            Action("tool.call", {"call_id": "c1", "tool": "Edit", "input": {"file_path": "calc.py"}}),
            Action("tool.result", {"call_id": "c1", "output": "ok", "is_error": False}),
            Action("message.assistant", {"text": "fixed it"}),
            Action("final_output", {"text": "fixed it"}),
            Action("workspace.snapshot", {"sha256": sha, "files": 1, "bytes": 10}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 5.0}),
        ],
    )
    return sid


def _verdicts(store: Store, grading_id: str, sid: str) -> list[tuple]:
    return [(v["check_path"], v["status"], v["pass"], round(v["score"], 9), v["reason"]) for v in sorted(store.verdicts(grading_id=grading_id, session_id=sid), key=lambda v: v["check_path"])]


@pytest.mark.parametrize("case", CASES)
def test_every_path_stores_the_same_verdicts(case, tmp_path, monkeypatch):
    if case.startswith("engine_down"):
        monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/no-engine.sock")
    transform = {"transform_raises": "transform: 'output.foo.bar'", "engine_down_transform": "transform: 'output.trim()'"}.get(case, "")
    bench_file = tmp_path / "bench.yaml"
    bench_file.write_text(textwrap.dedent(BENCH.format(transform=transform)))
    bench = load_bench(bench_file)
    sc = bench.scenarios[0]
    store = Store(tmp_path / "s.db")
    sid = _record(store, case, tmp_path)
    checks = build_checks(sc.checks)
    specs = {sc.name: sc.checks}

    gradings = {}
    for path, control in (("live", False), ("check", True)):
        context = GradingContext(bench.dir, dict(sc.vars), sc.transform, control)
        gid = new_grading(store, "control" if control else "live", specs, bench_path=str(bench.path), contexts={sc.name: context})
        grade_stored(store, gid, sid, checks, context)
        gradings[path] = gid
    gradings["regrade"] = regrade(store, bench, Selection(session=sid)).grading_id
    rep = reproduce_store(store, Selection(session=sid), grading=gradings["live"])
    gradings["grade"] = rep.grading_id

    stored = {path: _verdicts(store, gid, sid) for path, gid in gradings.items()}
    assert stored["live"] == stored["check"] == stored["regrade"] == stored["grade"], stored
    assert rep.counts["DIVERGED"] == 0

    statuses = [s for _, s, *_ in stored["live"]]
    reasons = [r for *_, r in stored["live"]]
    expected = {
        "healthy": ["PASS", "PASS", "PASS", "PASS"],
        "corrupt_snapshot": ["PASS", "ERROR", "ERROR", "PASS"],  # only the workspace readers
        "missing_snapshot": ["PASS", "ERROR", "ERROR", "PASS"],
        "engine_down": ["PASS", "ERROR", "ERROR", "PASS"],
        "engine_down_transform": ["ERROR", "ERROR", "ERROR", "PASS"],  # the output readers too: their output is computed in there
        "transform_raises": ["ERROR", "PASS", "ERROR", "PASS"],  # only the output readers
    }[case]
    assert statuses == expected, stored["live"]
    wording = {
        "corrupt_snapshot": "the session's workspace snapshot could not be restored",
        "missing_snapshot": "is missing from the store",
        "engine_down": "the grading container could not start",
        "engine_down_transform": "the grading container could not start",
        "transform_raises": "the scenario's output transform failed",
    }.get(case)
    if wording:
        assert all(wording in r for r, s in zip(reasons, statuses) if s == "ERROR")
