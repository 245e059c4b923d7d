"""`benchtape diff`: two gradings compared verdict by verdict over the sessions both graded.

A check is identified by its place in the scenario (`checks[i]`) and its canonical spec
hash. Same place and hash: the same check, so a status change is a flip and a score
change a delta. The same hash at another place: the same check, moved (a check was
inserted or removed before it). Same place, different hash: a changed check, shown with
both specs. A hash on one side only: added or removed.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterator

from recorder.store import Store, loads
from replay.grading import scenario_outcome
from replay.select import resolve, rows_by_ids
from replay.specs import check_index

SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class V:
    """One stored verdict, as much of it as a diff shows."""

    check_path: str
    type: str
    spec_sha256: str
    spec: str  # JSON text, decoded only when shown
    status: str
    passed: bool
    score: float
    reason: str
    readout: bool

    def brief(self) -> dict[str, Any]:
        return {"status": self.status, "pass": self.passed, "score": self.score, "reason": self.reason}


@dataclass
class Change:
    """A verdict that differs between the gradings: a flip, a score delta, added, removed."""

    kind: str  # flip | score | added | removed | changed
    scenario: str
    session_id: str
    check_path: str
    type: str
    a: V | None
    b: V | None
    spec_changed: bool = False  # the check at this place is not the same spec in both

    @property
    def label(self) -> str:
        if self.kind in ("flip", "changed") and self.a and self.b:
            return f"{self.a.status}→{self.b.status}" if self.a.status != self.b.status else self.a.status
        return self.kind

    @property
    def delta(self) -> float | None:
        return None if self.a is None or self.b is None else self.b.score - self.a.score

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "scenario": self.scenario,
            "session_id": self.session_id,
            "check_path": self.check_path,
            "moved_from": self.a.check_path if self.a and self.b and self.a.check_path != self.b.check_path else None,
            "type": self.type,
            "spec_changed": self.spec_changed,
            "label": self.label,
            "a": self.a.brief() if self.a else None,
            "b": self.b.brief() if self.b else None,
            "score_delta": self.delta,
        }


@dataclass
class ChangedCheck:
    """A check whose spec changed at one place: both specs once, and every session's verdicts."""

    scenario: str
    check_path: str
    spec_a: dict[str, Any]
    spec_b: dict[str, Any]
    sessions: list[Change] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"scenario": self.scenario, "check_path": self.check_path, "spec_a": self.spec_a, "spec_b": self.spec_b, "verdicts": [c.to_dict() for c in self.sessions]}


@dataclass
class GradingDiff:
    a: dict[str, Any]
    b: dict[str, Any]
    sessions: int = 0  # graded by both
    only_a: int = 0
    only_b: int = 0
    same: int = 0  # verdicts identical in both
    flips: list[Change] = field(default_factory=list)
    scores: list[Change] = field(default_factory=list)
    changed: dict[tuple[str, str, str, str], ChangedCheck] = field(default_factory=dict)
    added: list[Change] = field(default_factory=list)
    removed: list[Change] = field(default_factory=list)
    pass_rates: dict[str, list[int]] = field(default_factory=dict)  # scenario → [passed in a, passed in b, sessions]

    def to_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "sessions": self.sessions,
            "sessions_only_in_a": self.only_a,
            "sessions_only_in_b": self.only_b,
            "unchanged_verdicts": self.same,
            "flips": [c.to_dict() for c in self.flips],
            "score_changes": [c.to_dict() for c in self.scores],
            "changed_checks": [c.to_dict() for c in self.changed.values()],
            "added": [c.to_dict() for c in self.added],
            "removed": [c.to_dict() for c in self.removed],
            "pass_rate": {s: {"a": pa, "b": pb, "sessions": n} for s, (pa, pb, n) in sorted(self.pass_rates.items())},
        }


def _verdicts(store: Store, grading_id: str, session_id: str) -> list[V]:
    return [
        V(r[0], r[1], r[2], r[3], r[4], bool(r[5]), float(r[6]), r[7] or "", bool(r[8]))
        for r in store.db.execute(
            "SELECT check_path, type, spec_sha256, spec, status, pass, score, reason, readout FROM verdicts WHERE grading_id = ? AND session_id = ?",
            [grading_id, session_id],
        )
    ]


def _sessions(store: Store, grading_id: str) -> set[str]:
    return {r[0] for r in store.db.execute("SELECT DISTINCT session_id FROM verdicts WHERE grading_id = ?", [grading_id])}


def pair(a: list[V], b: list[V]) -> Iterator[tuple[V | None, V | None]]:
    """Match one session's verdicts: same place+hash, then same hash elsewhere (moved), then
    same place (changed); what is left is removed (a) or added (b)."""
    left = {v.check_path: v for v in a}
    right = {v.check_path: v for v in b}
    for path in sorted(set(left) & set(right), key=check_index):
        if left[path].spec_sha256 == right[path].spec_sha256:
            yield left.pop(path), right.pop(path)
    by_hash: dict[str, list[V]] = defaultdict(list)
    for v in sorted(right.values(), key=lambda v: check_index(v.check_path)):
        by_hash[v.spec_sha256].append(v)
    for v in sorted(list(left.values()), key=lambda v: check_index(v.check_path)):
        if by_hash.get(v.spec_sha256):
            moved = by_hash[v.spec_sha256].pop(0)
            del left[v.check_path], right[moved.check_path]
            yield v, moved
    for path in sorted(set(left) & set(right), key=check_index):
        yield left.pop(path), right.pop(path)
    for v in sorted(left.values(), key=lambda v: check_index(v.check_path)):
        yield v, None
    for v in sorted(right.values(), key=lambda v: check_index(v.check_path)):
        yield None, v


def passes(verdicts: list[V], finish_status: str | None) -> bool:
    """The scenario rule over stored verdicts: a finished, ok session whose every counting
    verdict (non-readouts, and readouts that errored) is PASS or NA."""
    return scenario_outcome(finish_status == "ok", ((v.status, v.readout) for v in verdicts)) == "pass"


def diff_gradings(store: Store, grading_a: str, grading_b: str) -> GradingDiff:
    """Compare two gradings over the sessions both graded, one session at a time."""
    ida, idb = resolve(store, "gradings", grading_a), resolve(store, "gradings", grading_b)
    ga, gb = store.grading(ida), store.grading(idb)
    out = GradingDiff(a=dict(ga or {}), b=dict(gb or {}))
    sa, sb = _sessions(store, ida), _sessions(store, idb)
    both = sa & sb
    out.sessions, out.only_a, out.only_b = len(both), len(sa - both), len(sb - both)
    for row in rows_by_ids(store, list(both)):
        va, vb = _verdicts(store, ida, row.id), _verdicts(store, idb, row.id)
        _compare_session(out, row.scenario, row.id, va, vb)
        finished = store.finish_status(row.id)
        rate = out.pass_rates.setdefault(row.scenario, [0, 0, 0])
        rate[0] += passes(va, finished)
        rate[1] += passes(vb, finished)
        rate[2] += 1
    return out


def _compare_session(out: GradingDiff, scenario: str, session_id: str, va: list[V], vb: list[V]) -> None:
    for a, b in pair(va, vb):
        if a is None:
            out.added.append(Change("added", scenario, session_id, b.check_path, b.type, None, b))
        elif b is None:
            out.removed.append(Change("removed", scenario, session_id, a.check_path, a.type, a, None))
        else:
            spec_changed = a.spec_sha256 != b.spec_sha256
            if spec_changed:
                key = (scenario, a.check_path, a.spec_sha256, b.spec_sha256)
                group = out.changed.get(key)
                if group is None:
                    group = out.changed[key] = ChangedCheck(scenario, a.check_path, loads(a.spec), loads(b.spec))
                group.sessions.append(Change("changed", scenario, session_id, b.check_path, b.type, a, b, spec_changed=True))
            if a.status != b.status or a.passed != b.passed:
                out.flips.append(Change("flip", scenario, session_id, b.check_path, b.type, a, b, spec_changed=spec_changed))
            elif abs(a.score - b.score) > SCORE_TOLERANCE:
                out.scores.append(Change("score", scenario, session_id, b.check_path, b.type, a, b, spec_changed=spec_changed))
            elif not spec_changed:
                out.same += 1


def gradings_table(store: Store) -> list[dict[str, Any]]:
    """Every grading with how many sessions it graded, oldest first."""
    counts = dict(store.db.execute("SELECT grading_id, COUNT(DISTINCT session_id) FROM verdicts GROUP BY grading_id").fetchall())
    return [
        {
            "id": g["id"],
            "source": g["source"],
            "created_at": g["created_at"],
            "sessions": counts.get(g["id"], 0),
            "bench": g["bench_path"],
            "run_id": g["run_id"],
            "checkset_sha256": g["checkset_sha256"],
            "catalog_version": g["catalog_version"],
            "note": g["note"],
        }
        for g in store.gradings()
    ]
