"""A verdict as stored, the one shape the read side compares: `diff` pairs two gradings'
verdicts, `grade` compares a fresh verdict with the stored one. Both read it from a verdict
row (the store) or a report's `checks[]` entry, and both decide "the same" by one rule."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import orjson

from benchtape.replay.document import check_name

# Scores are floats computed by checks: equal within this, they are the same verdict.
SCORE_TOLERANCE = 1e-9

REPRODUCES = "grade: reproduces "  # a positive control's grading note, then the gradings it reproduced


def control_note(reproduced: Sequence[str]) -> str:
    """The note a positive control's grading is stored with: which gradings it reproduced."""
    return REPRODUCES + ", ".join(reproduced)


def reproduced_by(note: str | None) -> list[str]:
    """The gradings a positive control reproduced, read back from its note (control_note's)."""
    if not note or not note.startswith(REPRODUCES):
        return []
    return [g for g in note[len(REPRODUCES) :].split(", ") if g]


def same_outcome(a: Any, b: Any) -> bool:
    """Status, pass and score decide whether two verdicts are the same; the reason is shown only."""
    return bool(a.status == b.status and a.passed == b.passed and abs(a.score - b.score) <= SCORE_TOLERANCE)


@dataclass(slots=True)
class StoredVerdict:
    """Treat it as immutable: not a frozen dataclass because `grade` and `diff` read one per
    stored verdict, and a frozen __init__ of ten fields costs five times a plain slots one."""

    check_path: str
    type: str
    metric: str | None
    spec_sha256: str
    spec_json: str  # decoded only when shown or rebuilt
    status: str
    passed: bool
    score: float
    reason: str
    readout: bool

    @classmethod
    def from_brief(cls, row: Sequence[Any]) -> StoredVerdict:
        """From `Store.verdict_briefs`."""
        path, type_, metric, sha, spec, status, passed, score, reason, readout = row
        return cls(path, type_, metric, sha, spec, status, bool(passed), float(score), reason or "", bool(readout))

    @classmethod
    def from_report(cls, entry: dict[str, Any], index: int) -> StoredVerdict:
        """From a report's `checks[]` entry (written by `benchtape.replay.report.result_row`)."""
        result = entry.get("result") or {}
        spec = entry.get("spec") or {"type": entry.get("type")}
        passed = bool(result.get("pass"))
        return cls(
            entry.get("path") or f"checks[{index}]",
            entry.get("type") or spec.get("type", "?"),
            entry.get("metric"),
            entry.get("spec_sha256") or "",
            orjson.dumps(spec).decode(),
            entry.get("status") or ("PASS" if passed else "FAIL"),
            passed,
            float(result.get("score") or 0.0),
            result.get("reason") or "",
            bool(entry.get("readout")),
        )

    @property
    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = orjson.loads(self.spec_json)  # a CheckSpec's dict, as stored
        return spec

    def brief(self) -> dict[str, Any]:
        return {"status": self.status, "pass": self.passed, "score": self.score, "reason": self.reason}

    @property
    def name(self) -> str:
        return check_name(self.metric, self.type)

    @property
    def named(self) -> bool:
        """Given a name of its own (`metric:`), which identifies it through edits and moves."""
        return bool(self.metric) and self.metric != self.type

    @property
    def counts(self) -> bool:
        """Whether it decides the scenario: non-readouts, and readouts that errored."""
        return not self.readout or self.status == "ERROR"
