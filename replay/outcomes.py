"""Cell outcomes: every cell of an evaluation ends in exactly one [outcome, reason], decided by
the grading that graded it and stored with that grading (`Store.add_outcome`), never in the
session's recorded stream (stores older than that hold `cell.outcome` actions, which read as
the outcomes of their gradings: `Store.outcomes`).

Verdicts (reusable: a re-run re-grades the stored session instead of measuring again):
  passed              every counting check passed (the only outcome that counts as a pass)
  failed              the agent finished; a check did not pass (or could not measure)
  no_changes          not passed, and the agent's diff against the staged tree is empty
  guard_violation     the agent changed a protected path (declared by the bench or the tool overlay)
  patch_apply_failed  reserved for tasks with a hidden verifier: the candidate patch (or the
                      hidden tests on top of it) did not apply; a verdict says so with
                      `evidence.patch_apply_failed: true`
Execution failures (attempted, never reused as measurements):
  timeout             the cell exceeded its time limit
  adapter_error       the harness crashed (non-zero exit) or none of its output could be parsed
  infrastructure_error the sandbox, the engine or staging failed, not the agent (an `error`
                      action whose `cause` is infrastructure, sandbox, engine or staging), or
                      the session never finished

A task cell (its session.started names a `task`) carries one `task:verify` verdict whose
evidence names the hidden verifier's outcome (replay/task_verdict.py): unless it passed, it is
the cell's outcome (a verifier that timed out or could not run: timeout, infrastructure_error).

Precedence: an execution failure wins over everything; then a guard violation; then a task
verdict that did not pass; then a patch that did not apply; then the checks (passed; else no_changes when nothing changed; else failed).
A passing cell with an empty diff is `passed`: some tasks ask for an answer, not a change.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from benchtape.core.model import Session
from benchtape.core.outcome_kinds import (  # noqa: F401 - the names, re-exported where they were always imported from
    ADAPTER_ERROR,
    EXECUTION_FAILURES,
    FAILED,
    GUARD_VIOLATION,
    INFRASTRUCTURE_ERROR,
    NO_CHANGES,
    OUTCOMES,
    PASSED,
    PATCH_APPLY_FAILED,
    REUSABLE,
    TIMEOUT,
    is_reusable,
)
from benchtape.replay.grading import TASK_VERIFY, scenario_outcome, task_of, unstarted_step
from benchtape.sandbox.treediff import WorkspaceDiff, diff_trees, read_snapshot
from benchtape.store.views import BrowsingStore

INFRASTRUCTURE_CAUSES = frozenset({"infrastructure", "sandbox", "engine", "staging"})
# Actions that show a harness's output was understood (anything but warnings and lifecycle).
_UNDERSTOOD = frozenset({"message.assistant", "tool.call", "tool.result", "thinking", "final_output", "metrics", "subagent.spawned", "skill.invoked", "turn.finished", "environment.reported"})


@dataclass(frozen=True)
class Outcome:
    outcome: str
    reason: str

    def __post_init__(self) -> None:
        if self.outcome not in OUTCOMES:
            raise ValueError(f"unknown outcome {self.outcome!r}")

    @property
    def reusable(self) -> bool:
        return self.outcome in REUSABLE

    @property
    def passed(self) -> bool:
        return self.outcome == PASSED


def execution_outcome(session: Session) -> Outcome | None:
    """An execution failure, decided from the session alone; None when the agent ran to its end."""
    for action in session.actions:
        if action.kind == "error":
            error = action.payload("error")
            if error.get("cause") in INFRASTRUCTURE_CAUSES:
                return Outcome(INFRASTRUCTURE_ERROR, f"{error.get('cause')}: {error.get('message') or 'failed'}")
    if not session.finished:
        return Outcome(INFRASTRUCTURE_ERROR, "the session never finished (benchtape stopped or lost its process)")
    if session.status == "interrupted":
        return Outcome(INFRASTRUCTURE_ERROR, "interrupted before the agent finished")
    if session.timed_out or session.status == "timeout":
        return Outcome(TIMEOUT, _first_error(session) or "exceeded its time limit")
    if session.status == "error":
        first = _first_error(session)
        return Outcome(ADAPTER_ERROR, f"the harness exited with code {session.exit_code}" + (f": {first}" if first else ""))
    if session.warnings and not any(a.kind in _UNDERSTOOD for a in session.actions):
        return Outcome(ADAPTER_ERROR, f"none of the harness's output could be parsed ({len(session.warnings)} unparsed line(s))")
    return None


def later_step_unstarted(sessions: Sequence[Session]) -> bool:
    """A multi-step task's measurement whose steps all executed but the last, a later step
    that never started its agent: graded all the same, since whether the earlier steps would
    ever have let it start is the verifiers' to say (`decide`, grading.unstarted_step)."""
    *ran, last = sessions
    task = task_of(last)
    step = task.get("step") if task is not None and isinstance(task.get("step"), dict) else None
    return bool(ran) and unstarted_step(last, step) is not None and all(execution_outcome(s) is None for s in ran)


def decide(session: Session, verdicts: Sequence[Any], diff: WorkspaceDiff | None, protected: Iterable[str] = ()) -> Outcome:
    """The cell's outcome from its stored session, the verdicts of its latest grading (stored
    rows or `benchtape.replay.grading.Verdict`s), and the agent's diff against the staged tree (None when
    the task has no workspace to change)."""
    rows = [_row(v) for v in verdicts]
    task = _task_outcome(rows)
    failure = execution_outcome(session)
    if failure is not None and not _stopped_before(rows, task):
        return failure
    if diff is not None:
        touched = diff.touching(protected)
        if touched:
            return Outcome(GUARD_VIOLATION, "changed protected path(s): " + ", ".join(touched[:10]))
    if task is not None and not task.passed:
        return task
    for row in rows:
        if isinstance(row["evidence"], Mapping) and row["evidence"].get("patch_apply_failed"):
            return Outcome(PATCH_APPLY_FAILED, f"{row['check_path']}: {row['reason'] or 'the candidate patch did not apply'}")
    status = scenario_outcome(True, ((r["status"], r["readout"]) for r in rows))
    if rows and status == "pass":
        return task if task is not None and len(rows) == 1 else Outcome(PASSED, f"{len(rows)} check(s) passed")
    if diff is not None and diff.empty and not _answer_failed(rows, task):
        return Outcome(NO_CHANGES, "the agent changed nothing in the staged tree")
    if not rows:
        return Outcome(FAILED, "no check graded this cell")
    return Outcome(FAILED, _failing(rows))


def _answer_failed(rows: list[dict[str, Any]], task: Outcome | None) -> bool:
    """A bench scenario whose failing checks all read only the answer (its final output, the
    prompt, the reported cost or latency): a question, say, whose agent was told to change
    nothing. Its empty diff is what it was asked for, and `no_changes` hid the failed answer
    in compare's grid (cachetools' question scenario, newcomer pass): it failed. A task cell,
    or any failing check of the files, the calls or the workspace, keeps `no_changes`."""
    from benchtape.checks.registry import lookup, reads_output_only

    failing = [r for r in rows if r["status"] in ("FAIL", "ERROR")]
    if task is not None or not failing:
        return False
    for row in failing:
        try:
            if not reads_output_only(lookup(str(row["type"])).reads):
                return False
        except Exception:  # noqa: BLE001 - a type this catalog does not know (an older grading's): as before
            return False
    return True


def _stopped_before(rows: list[dict[str, Any]], task: Outcome | None) -> bool:
    """A multi-step task whose later step could not start, where the verifiers measured the cell
    anyway: an earlier step's rewards stopped the steps after it, so (as in Harbor) the step
    that could not start was never to be reached (replay/task_verdict.grade_harbor_steps)."""
    return task is not None and task.outcome != INFRASTRUCTURE_ERROR and any(
        row["type"] == TASK_VERIFY and isinstance(row["evidence"], Mapping) and row["evidence"].get("unstarted") for row in rows
    )


def _task_outcome(rows: list[dict[str, Any]]) -> Outcome | None:
    """A task cell's outcome, as its `task:verify` verdict decided it (the pipeline's own:
    guard_violation, no_changes, patch_apply_failed, passed, failed; timeout or
    infrastructure_error when the verifier could not decide); None for a bench scenario."""
    for row in rows:
        if row["type"] == TASK_VERIFY and isinstance(row["evidence"], Mapping):
            outcome = row["evidence"].get("outcome")
            if outcome in OUTCOMES:
                return Outcome(outcome, f"{TASK_VERIFY}: {row['reason'] or outcome}")
            return Outcome(INFRASTRUCTURE_ERROR, f"{TASK_VERIFY}: {row['reason'] or 'the verifier decided nothing'}")
    return None


def agent_diff(store: BrowsingStore, session: Session, baseline: Mapping[str, bytes], ignore: Iterable[str] = ()) -> WorkspaceDiff | None:
    """The agent's change: the session's final snapshot against the tree it started from
    (after staging and any `pre` commands), minus the harness's own state files; None when
    the session has no snapshot."""
    sha = (session.snapshot or {}).get("sha256")
    data = store.get_blob(sha) if sha else None
    if data is None:
        return None
    return diff_trees(baseline, read_snapshot(data)).without(ignore)


def _row(v: Any) -> dict[str, Any]:
    """A stored verdict row and a fresh `Verdict` alike."""
    if isinstance(v, Mapping):
        return {"check_path": v.get("check_path"), "type": v.get("type"), "status": v.get("status"), "readout": bool(v.get("readout")), "reason": v.get("reason"), "evidence": v.get("evidence") or {}}
    return {"check_path": v.check_path, "type": v.check.type, "status": v.result.status, "readout": v.check.readout, "reason": v.result.reason, "evidence": v.result.evidence}


def _failing(rows: list[dict[str, Any]]) -> str:
    for r in rows:
        if r["status"] == "ERROR":
            return f"{r['check_path']} ({r['type']}) could not measure: {r['reason'] or 'error'}"
    for r in rows:
        if not r["readout"] and r["status"] not in ("PASS", "NA"):
            return f"{r['check_path']} ({r['type']}) failed: {r['reason'] or 'no reason given'}"
    return "a check did not pass"


def _first_error(session: Session) -> str | None:
    return next((e for e in session.errors if e and e != "None"), None)


def graded_now(outcomes: list[dict[str, Any]], fingerprint: str | None) -> dict[str, Any]:
    """The newest of a measurement's outcomes (oldest first) graded against its task as it is
    now. A regrade records the task content it graded (`fingerprint`): one made while the task
    was edited, the edit since undone, measured the edit, and it stays in history beside the
    rest without standing for the cell. An outcome with no fingerprint (the run's own grading)
    is the run's, whose task content `current` compares."""
    if fingerprint is None:
        return outcomes[-1]
    return next((o for o in reversed(outcomes) if o.get("fingerprint") in (None, fingerprint)), outcomes[-1])
