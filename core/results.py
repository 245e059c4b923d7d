"""What a check is configured from and what it says: a check spec (with where it was written) and its Result."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_NO_EVIDENCE: Any = object()  # Result's evidence default: a new {} each time


STATUSES = ("PASS", "FAIL", "ERROR", "NA")


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
    threshold: float | None = None
    metric: str | None = None
    readout: bool = False
    checks: tuple["CheckSpec", ...] = ()
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
    """A check's verdict on one session. `score` in [0, 1], higher is better.

    Treat it as immutable; a slots dataclass (not a frozen one) because every check builds one
    per session and a frozen __init__ pays a setattr per field."""

    passed: bool
    score: float
    reason: str
    evidence: dict[str, Any]
    status: str

    def __init__(self, passed: bool, score: float, reason: str = "", evidence: dict[str, Any] = _NO_EVIDENCE, status: str = "") -> None:
        score = float(score)
        if score != score:  # NaN
            score = 0.0
        self.passed = passed
        self.score = 1.0 if score > 1.0 else (score if score > 0.0 else 0.0)
        self.reason = reason
        self.evidence = {} if evidence is _NO_EVIDENCE else evidence
        self.status = status or ("PASS" if passed else "FAIL")

    @classmethod
    def of(cls, passed: bool, reason: str = "", evidence: dict[str, Any] | None = None, score: float | None = None) -> "Result":
        return cls(bool(passed), (1.0 if passed else 0.0) if score is None else score, reason, evidence or {})

    @classmethod
    def error(cls, reason: str, evidence: dict[str, Any] | None = None) -> "Result":
        return cls(False, 0.0, reason, evidence or {}, "ERROR")

    @classmethod
    def not_applicable(cls, reason: str) -> "Result":
        return cls(False, 0.0, reason, {}, "NA")

    def to_dict(self) -> dict[str, Any]:
        return {"pass": self.passed, "score": self.score, "reason": self.reason, "evidence": self.evidence, "status": self.status}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "Result":
        return cls(bool(d.get("pass")), float(d.get("score") or 0.0), d.get("reason") or "", d.get("evidence") or {}, d.get("status") or "")
