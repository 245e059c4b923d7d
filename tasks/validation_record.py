"""A validation's verifier runs, recorded in the store like any session (append-only).

One run (`kind: validate`) per `task validate`; one session per phase, scenario
`<id>:base` or `<id>:reference`, harness `verifier`. Its actions say what ran: the
command (a `tool.call` / `tool.result` pair per setup step and the verify command), the
phase's evidence and diagnosis as its final output (JSON), and `session.finished`; its raw
lines are the verifier's log. So `benchtape sessions`, `show` and `query` read validations
as they read agents' sessions: `benchtape query 'final_output' --scenario 603:base`.

Written through the Store's public methods only (new_run, new_session, append, append_raw).
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import orjson

from benchtape.core.model import VERIFIER_HARNESS, Action
from benchtape.sandbox.verifier import Evidence, log_tail

if TYPE_CHECKING:
    from benchtape.store.views import RecordingStore

HARNESS = VERIFIER_HARNESS
RUN_KIND = "validate"


def start_run(store: RecordingStore, ids: list[str], level: str, argv: list[str] | None = None, *, why: str = "") -> str:
    run_id: str = store.new_run(RUN_KIND, harness=HARNESS, argv=argv or [], params={"tasks": ids, "level": level, "level_why": why})
    return run_id


def record_phase(store: RecordingStore, run_id: str, task_id: str, phase: str, evidence: Evidence, summary: dict[str, Any], facts: dict[str, Any]) -> str:
    """One phase as a finished session; returns its id."""
    scenario = f"{task_id}:{phase}"
    session_id: str = store.new_session(run_id, scenario, harness=HARNESS, params={"task": task_id, "phase": phase, **{k: facts[k] for k in ("fingerprint",) if k in facts}}, workdir=facts.get("work_dir"))
    now = time.time()
    actions = [Action("session.started", {"scenario": scenario, "harness": HARNESS, "model": None, "prompt": "", "sandbox": str(facts["level"]), "work_dir": facts.get("work_dir"), "validates": task_id, "phase": phase, "where": facts.get("where")}, at=now - evidence.seconds)]
    for i, step in enumerate(evidence.steps, start=1):
        call = f"verify-{i}"
        actions.append(Action("tool.call", {"call_id": call, "tool": "shell", "input": {"command": step["command"]}}, at=now))
        actions.append(Action("tool.result", {"call_id": call, "output": f"exit {step['exit']}" + (" (timed out)" if step.get("timed_out") else ""), "is_error": step["exit"] != 0}, at=now))
    if evidence.patch:
        actions.append(Action("error", {"message": f"{evidence.patch} does not apply: {evidence.detail}", "cause": "patch"}, at=now))
    actions.append(Action("final_output", {"text": orjson.dumps(summary).decode()}, at=now))
    actions.append(Action("session.finished", {"status": "timeout" if evidence.status == "timeout" else "ok", "exit_code": evidence.exit, "timed_out": evidence.status == "timeout", "wall_ms": round(evidence.seconds * 1000, 1)}, at=now))
    store.append(session_id, actions)
    lines = log_tail(evidence.log, 2_000_000).splitlines()
    if lines:
        store.append_raw(session_id, list(enumerate(lines, start=1)))
    return session_id
