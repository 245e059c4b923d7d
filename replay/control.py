"""The negative control (`benchtape check`): every scenario under the no-op mock, and every
gradable check must FAIL.

A no-op agent echoes the prompt and touches nothing, so a check that passes on it
measures nothing: a fence with no activity partner, an absence check, a ceiling with no
floor. The tally puts each check in one bucket: failed as required, WRONGLY PASSED,
ERRORED (graded nothing), NOT APPLICABLE (latency, cost, composites made only of them,
and readouts, which cannot fail a scenario anyway).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.core.errors import PreflightBlocked
from benchtape.replay.grading import UNFINISHED, Verdict
from benchtape.spec.bench import BenchSpec

FAILED, WRONGLY_PASSED, ERRORED, NOT_APPLICABLE = "failed as required", "WRONGLY PASSED", "ERRORED", "NOT APPLICABLE"
BUCKETS = (FAILED, WRONGLY_PASSED, ERRORED, NOT_APPLICABLE)


def bucket_of(status: str, readout: bool) -> str:
    """Where one verdict lands under the no-op agent."""
    if status == "ERROR":
        return ERRORED  # an erroring readout still fails a scenario, so it counts here too
    if status == "NA" or readout:
        return NOT_APPLICABLE
    return WRONGLY_PASSED if status == "PASS" else FAILED


@dataclass
class ControlCheck:
    check_path: str
    type: str
    status: str
    readout: bool
    reason: str
    bucket: str

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class ControlCell:
    bench: str
    scenario: str
    attempt: int
    session_id: str
    session_status: str | None
    checks: list[ControlCheck] = field(default_factory=list)

    def count(self, bucket: str) -> int:
        return sum(c.bucket == bucket for c in self.checks)

    @property
    def ran(self) -> bool:
        """The no-op session ran to its end: one that errored (timed out, was cut short) graded
        its checks on no finished run, so the scenario could not be graded (madbench: exit 1)."""
        return self.session_status not in UNFINISHED

    @property
    def holds(self) -> bool:
        return self.ran and not self.count(WRONGLY_PASSED) and not self.count(ERRORED)

    def to_dict(self) -> dict[str, Any]:
        return {
            "bench": self.bench,
            "scenario": self.scenario,
            "attempt": self.attempt,
            "session_id": self.session_id,
            "session_status": self.session_status,
            "tally": {b: self.count(b) for b in BUCKETS},
            "checks": [c.to_dict() for c in self.checks],
        }


@dataclass
class ControlReport:
    cells: list[ControlCell]
    run_ids: list[str]
    grading_ids: list[str]

    def total(self, bucket: str) -> int:
        return sum(c.count(bucket) for c in self.cells)

    @property
    def gradable(self) -> int:
        """Checks that graded or tried to: everything but NOT APPLICABLE."""
        return self.total(FAILED) + self.total(WRONGLY_PASSED) + self.total(ERRORED)

    @property
    def unfinished(self) -> int:
        """No-op sessions that did not run to their end (their scenarios could not be graded)."""
        return sum(not c.ran for c in self.cells)

    @property
    def exit_code(self) -> int:
        """0 the control holds; 1 a check wrongly passed or could not be graded, or a scenario
        could not be (its no-op session did not run to its end); 3 nothing gradable."""
        if self.gradable == 0:
            return 3
        return 1 if self.total(WRONGLY_PASSED) or self.total(ERRORED) or self.unfinished else 0

    def closing_line(self) -> str:
        line = f"{self.total(FAILED)}/{self.gradable} checks failed as required · {self.total(ERRORED)} errored · {self.total(WRONGLY_PASSED)} wrongly passed"
        return line + (f" · {self.unfinished} no-op session(s) did not run to their end" if self.unfinished else "")

    def to_dict(self) -> dict[str, Any]:
        return {
            "cells": [c.to_dict() for c in self.cells],
            "totals": {b: self.total(b) for b in BUCKETS},
            "gradable": self.gradable,
            "unfinished_sessions": self.unfinished,
            "exit_code": self.exit_code,
            "runs": self.run_ids,
            "gradings": self.grading_ids,
        }




def refuse_images(benches: list[BenchSpec]) -> None:
    """madbench's `check` refuses `image:` benches (its mock is not image-capable), and so does
    benchtape's, though its mock takes images: the no-op agent would be sent the picture, so
    `session:image-sent` passes under it by construction and the control could never hold."""
    found = [f"{sc.where}: scenario {sc.name!r}: an `image:` bench cannot be negative-controlled (madbench: harness \"mock\" cannot deliver an image; the no-op agent would be sent the picture, so session:image-sent passes under it)" for b in benches for sc in b.scenarios if sc.image]
    if found:
        raise PreflightBlocked(found)


def tally(runs: list[Any]) -> ControlReport:
    """Bucket every verdict of a control run (`RunOutcome.runs`: bench, results, verdicts)."""
    cells: list[ControlCell] = []
    for run in runs:
        for row in run.results:
            verdicts: list[Verdict] = run.verdicts.get(row["session_id"], [])
            cell = ControlCell(str(Path(run.bench.path)), row["scenario_id"], row["attempt"], row["session_id"], row["session"].get("status"))
            for v in verdicts:
                cell.checks.append(ControlCheck(v.check_path, v.check.type, v.result.status, v.check.readout, v.result.reason, bucket_of(v.result.status, v.check.readout)))
            cells.append(cell)
    return ControlReport(cells, [r.run_id for r in runs], [r.grading_id for r in runs])
