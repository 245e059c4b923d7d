"""What a check is configured from and what it says: a check spec (with where it was written) and its Result."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

_NO_EVIDENCE: Any = object()  # Result's evidence default: a new {} each time


class Status(StrEnum):
    """A verdict's status. A StrEnum, so it is stored, printed and compared as its value
    ("PASS" == Status.PASS): the verdict rows and every report read as they did."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"  # the check could not decide (a crash, a missing input): no verdict on the agent
    NA = "NA"  # the check does not apply to this session


STATUSES = tuple(Status)
# The members as module globals: a member read through its class (Status.PASS) costs ~6× a
# global's, and every check builds a Result per session.
PASS, FAIL, ERROR, NA = Status.PASS, Status.FAIL, Status.ERROR, Status.NA


@dataclass(frozen=True)
class Where:
    """Where a piece of input came from, so an error can name the file and line."""

    file: str | None = None
    line: int | None = None

    def __str__(self) -> str:
        if self.file and self.line:
            return f"{self.file}:{self.line}"
        return self.file or "<input>"


@dataclass(frozen=True)
class CheckSpec:
    """The YAML form of a check, as loaded (aliases already canonical)."""

    type: str
    value: Any = None
    args: dict[str, Any] = field(default_factory=dict)
    config: dict[str, Any] = field(default_factory=dict)
    weight: float = 1.0
    threshold: float | str | None = None  # a string: a duration with a unit, for the checks that read one (latency)
    metric: str | None = None
    readout: bool = False
    checks: tuple[CheckSpec, ...] = ()
    inline: str | None = None
    transform: str | dict[str, str] | None = None  # JavaScript, or {python: source} (benchtape.spec.transform_source)
    where: Where = field(default_factory=Where, compare=False)

    def to_dict(self) -> dict[str, Any]:
        """Canonical form: only what was set, children recursively; its hash is the check's identity."""
        d: dict[str, Any] = {"type": self.type}
        if self.value is not None:
            d["value"] = self.value
        if self.args:
            d["args"] = self.args
        if self.config:
            d["config"] = self.config
        if self.weight != 1.0:
            d["weight"] = self.weight
        if self.threshold is not None:
            d["threshold"] = self.threshold
        if self.metric is not None:
            d["metric"] = self.metric
        if self.readout:
            d["readout"] = True
        if self.checks:
            d["checks"] = [c.to_dict() for c in self.checks]
        if self.inline is not None:
            d["inline"] = self.inline
        if self.transform is not None:
            d["transform"] = self.transform
        return d


@dataclass(slots=True, init=False)
class Result:
    """A check's verdict on one session: its status, and `score` in [0, 1], higher is better.
    `passed` is the status read as a bool (PASS), never a field of its own that could disagree.

    Checks build one with `of` (passed or not), `error` or `not_applicable`. Treat it as
    immutable; a slots dataclass (not a frozen one) because every check builds one per session
    and a frozen __init__ pays a setattr per field."""

    status: Status
    score: float
    reason: str
    evidence: dict[str, Any]

    def __init__(self, status: Status, score: float, reason: str = "", evidence: dict[str, Any] = _NO_EVIDENCE) -> None:
        score = float(score)
        if score != score:  # NaN
            score = 0.0
        self.status = status
        self.score = 1.0 if score > 1.0 else (score if score > 0.0 else 0.0)
        self.reason = reason
        self.evidence = {} if evidence is _NO_EVIDENCE else evidence

    @property
    def passed(self) -> bool:
        return self.status is PASS

    @classmethod
    def of(cls, passed: bool, reason: str = "", evidence: dict[str, Any] | None = None, score: float | None = None) -> Result:
        return cls(PASS if passed else FAIL, (1.0 if passed else 0.0) if score is None else score, reason, evidence or {})

    @classmethod
    def error(cls, reason: str, evidence: dict[str, Any] | None = None) -> Result:
        return cls(ERROR, 0.0, reason, evidence or {})

    @classmethod
    def not_applicable(cls, reason: str) -> Result:
        return cls(NA, 0.0, reason, {})

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.passed, "score": self.score, "reason": self.reason, "evidence": self.evidence, "status": self.status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Result:
        """A verdict's dict back: its `status`, or, from a writer that gave none, PASS or FAIL by `pass`."""
        status = Status(d["status"]) if d.get("status") else PASS if d.get("pass") else FAIL
        return cls(status, float(d.get("score") or 0.0), d.get("reason") or "", d.get("evidence") or {})
