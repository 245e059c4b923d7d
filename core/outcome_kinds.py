"""The names of a cell's outcomes (replay/outcomes.py says what each means and decides them):
vocabulary that `compare`, the viewer and the sessions list read without loading grading
(which brings the check catalog, the sandboxes and the store's writer), so it lives at the bottom."""

from __future__ import annotations

PASSED = "passed"
FAILED = "failed"
NO_CHANGES = "no_changes"
GUARD_VIOLATION = "guard_violation"
PATCH_APPLY_FAILED = "patch_apply_failed"
TIMEOUT = "timeout"
ADAPTER_ERROR = "adapter_error"
INFRASTRUCTURE_ERROR = "infrastructure_error"

REUSABLE = (PASSED, FAILED, PATCH_APPLY_FAILED, GUARD_VIOLATION, NO_CHANGES)
EXECUTION_FAILURES = (TIMEOUT, ADAPTER_ERROR, INFRASTRUCTURE_ERROR)
OUTCOMES = REUSABLE + EXECUTION_FAILURES


def is_reusable(outcome: str | None) -> bool:
    """A verdict (reused by a re-run), not an execution failure or an ungraded session."""
    return outcome in REUSABLE
