"""Helpers for judge tests: stored sessions, a scripted judge endpoint's config, and the
grading loop a judge check runs in (the one the lead's grading function performs:
build the checks, hand each session a context whose `judge` is the grading's).
"""

from __future__ import annotations

import json
from typing import Any, Iterable, Mapping

from benchtape.checks.registry import CheckContext, build
from benchtape.core.model import Action
from benchtape.core.results import CheckSpec, Result
from benchtape.spec.judge_config import JudgesConfig, ProviderSpec
from benchtape.store.database import Store


def verdict(passed: bool | None = None, score: float | None = None, reason: str = "because", prose: str = "Let me think. ") -> str:
    """A judge's reply: some reasoning, then the JSON object."""
    obj: dict[str, Any] = {"reason": reason}
    if score is not None:
        obj["score"] = score
    if passed is not None:
        obj["pass"] = passed
    return prose + json.dumps(obj)


def local(url: str, *, pid: str = "local", model: str = "judge-1", concurrency: int = 4, timeout: float = 10.0, retries: int = 2, price: Mapping[str, float] | None = None) -> JudgesConfig:
    """A keyless OpenAI-compatible provider at the scripted server's base URL, as the default."""
    spec = ProviderSpec(pid, "openai", model, url, None, concurrency=concurrency, timeout=timeout, retries=retries, price=price)
    return JudgesConfig(providers={pid: spec}, default=pid, explicit_default=True)


def store_sessions(store: Store, outputs: Iterable[str], *, prompt: str = "Say which test fails and fix it.", scenario: str = "judged", calls: Iterable[tuple[str, dict[str, Any], bool | None]] = ()) -> list[str]:
    """One finished session per final output (no agent run: a recorded stream, as an import makes)."""
    run_id = store.new_run("import", harness="mock")
    calls = list(calls)
    ids = []
    for text in outputs:
        sid = store.new_session(run_id, scenario, harness="mock")
        actions = [Action("session.started", {"scenario": scenario, "harness": "mock", "prompt": prompt}), Action("message.user", {"text": prompt})]
        for i, (tool, args, is_error) in enumerate(calls):
            actions.append(Action("tool.call", {"call_id": f"c{i}", "tool": tool, "input": args}))
            actions.append(Action("tool.result", {"call_id": f"c{i}", "output": "ok", "is_error": is_error}))
        actions += [
            Action("message.assistant", {"text": text}),
            Action("final_output", {"text": text}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 10.0}),
        ]
        store.append(sid, actions)
        ids.append(sid)
    return ids


def grade(store: Store, grading_id: str, session_ids: Iterable[str], specs: list[CheckSpec], judge: Any, vars: Mapping[str, Any] | None = None, control: bool = False) -> dict[str, list[Result]]:
    """Every check over every session with `judge` as ctx.judge; verdicts appended."""
    checks = [build(s) for s in specs]
    out: dict[str, list[Result]] = {}
    for sid in session_ids:
        session = store.load_session(sid)
        ctx = CheckContext(vars=dict(vars or {}), judge=judge, catalog=getattr(judge, "catalog", None), control=control)
        results = [c.evaluate(session, ctx) for c in checks]
        store.add_verdicts(grading_id, sid, [{"check_path": f"checks[{i}]", "type": c.type, "metric": c.metric, "spec": c.spec.to_dict(), "spec_sha256": c.identity, "result": r, "readout": c.readout} for i, (c, r) in enumerate(zip(checks, results))])
        out[sid] = results
    return out


def new_grading(store: Store, source: str = "regrade") -> str:
    return store.new_grading(source, checkset_sha256="t", catalog_version="t")
