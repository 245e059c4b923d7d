"""`benchtape diff`: two gradings compared verdict by verdict over the sessions both graded.

A check is identified by its place in the scenario's check tree (`checks[i]`) and its
canonical spec hash, never by list position alone. Same place and hash: the same check,
so a status change is a flip and a score change a delta. The same hash at another place:
the same check, moved (a check was inserted or removed before it), and its flips still
show. Then a check keeps its identity through an edit when its name (`metric:`) and type
are unchanged, wherever it moved, or, unnamed, when its place and type are, or when it is
the only check of its type left on both sides: a changed check, shown with both specs.
What is left is added or removed.

Per session, the flips and the outcome they led to; per scenario, the pass rate and the
checks that changed it.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator

from benchtape.replay.document import placed
from benchtape.replay.grading import TASK_VERIFY, scenario_outcome
from benchtape.replay.select import resolve, rows_by_ids
from benchtape.replay.specs import check_index
from benchtape.replay.verdicts import SCORE_TOLERANCE, StoredVerdict
from benchtape.store.views import BrowsingStore

V = StoredVerdict  # what a diff shows of a stored verdict


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
    def name(self) -> str:
        v = self.b or self.a
        return v.name if v else self.type

    @property
    def moved_from(self) -> str | None:
        return self.a.check_path if self.a and self.b and self.a.check_path != self.b.check_path else None

    def why(self) -> str:
        """This change in a few words: `checks[1] cost: PASS→FAIL (check changed)`."""
        if self.kind == "added":
            return f"{placed(self.check_path, self.name)} added: {self.b.status if self.b else ''}"
        if self.kind == "removed":
            return f"{placed(self.check_path, self.name)} removed (was {self.a.status if self.a else ''})"
        moved = f" (moved from {self.moved_from})" if self.moved_from else ""
        changed = (" (task changed)" if self.type == TASK_VERIFY else " (check changed)") if self.spec_changed else ""
        return f"{placed(self.check_path, self.name)}: {self.label}{moved}{changed}"

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
            "moved_from": self.moved_from,
            "type": self.type,
            "name": self.name,
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
class TaskVersion:
    """A task graded against one version in A and another in B (its fingerprint changed: a
    repaired tests.patch, an edited prompt): the task cells' verdicts moved with the task, not
    with any new agent session."""

    kind: str
    task: str
    fingerprint_a: str | None
    fingerprint_b: str | None
    sessions: list[str] = field(default_factory=list)

    def why(self) -> str:
        return f"task {self.task} changed: graded against {_short(self.fingerprint_a)} in A, {_short(self.fingerprint_b)} in B"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "task": self.task, "fingerprint_a": self.fingerprint_a, "fingerprint_b": self.fingerprint_b, "sessions": self.sessions}


def _short(fingerprint: str | None) -> str:
    return (fingerprint or "?").removeprefix("sha256:")[:12]


@dataclass
class SessionFlips:
    """One session whose verdicts changed: its outcome in each grading and the changes behind it."""

    session_id: str
    scenario: str
    attempt: int
    outcome_a: str
    outcome_b: str
    changes: list[Change] = field(default_factory=list)

    @property
    def outcome_changed(self) -> bool:
        return self.outcome_a != self.outcome_b

    def deciding(self) -> list[Change]:
        """The changes that can have moved the outcome: a counting check's flip, one added that does not pass, one removed that did not."""
        out = []
        for c in self.changes:
            if c.kind == "flip" and ((c.a and c.a.counts) or (c.b and c.b.counts)):
                out.append(c)
            elif c.kind == "added" and c.b and c.b.counts and c.b.status not in ("PASS", "NA"):
                out.append(c)
            elif c.kind == "removed" and c.a and c.a.counts and c.a.status not in ("PASS", "NA"):
                out.append(c)
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "session_id": self.session_id,
            "scenario": self.scenario,
            "attempt": self.attempt,
            "outcome_a": self.outcome_a,
            "outcome_b": self.outcome_b,
            "flips": [c.why() for c in self.changes if c.kind == "flip"],
            "because": [c.why() for c in self.deciding()] if self.outcome_changed else [],
        }


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
    per_session: list[SessionFlips] = field(default_factory=list)  # sessions with a flip, an added or a removed check
    tasks: dict[tuple[str, str, str | None, str | None], TaskVersion] = field(default_factory=dict)  # task cells whose task changed between the gradings

    def reasons(self, scenario: str) -> list[tuple[str, int, int]]:
        """Why a scenario's pass rate changed: (the change, sessions it turned to pass, sessions it
        turned from pass). A session that neither passed before nor passes now (FAIL to ERROR)
        moved no pass rate: it is counted in neither (it was counted from pass)."""
        tally: dict[str, list[int]] = {}
        for s in self.per_session:
            if s.scenario != scenario or not s.outcome_changed or "pass" not in (s.outcome_a, s.outcome_b):
                continue
            for c in s.deciding():
                key = c.why()
                counts = tally.setdefault(key, [0, 0])
                counts[0 if s.outcome_b == "pass" else 1] += 1
        return sorted(((k, up, down) for k, (up, down) in tally.items()), key=lambda t: -(t[1] + t[2]))

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
            "pass_rate": {s: {"a": pa, "b": pb, "sessions": n, "because": [{"change": k, "to_pass": up, "from_pass": down} for k, up, down in self.reasons(s)] if pa != pb else []} for s, (pa, pb, n) in sorted(self.pass_rates.items())},
            "sessions_changed": [s.to_dict() for s in self.per_session],
            "task_versions": [t.to_dict() for t in self.tasks.values()],
        }


def _verdicts(store: BrowsingStore, grading_id: str, session_id: str) -> list[V]:
    return [StoredVerdict.from_brief(r) for r in store.verdict_briefs(grading_id, session_id)]


def _sessions(store: BrowsingStore, grading_id: str) -> set[str]:
    return set(store.graded_session_ids(grading_id))


def pair(a: list[V], b: list[V]) -> Iterator[tuple[V | None, V | None]]:
    """Match one session's verdicts by check identity: same place and hash; the same hash
    elsewhere (moved); the same name and type (a named check, edited, wherever it is now);
    the same place and type (an unnamed check, edited); the one check of its type on both
    sides (edited and moved). What is left is removed (a) or added (b)."""
    left = {v.check_path: v for v in a}
    right = {v.check_path: v for v in b}
    for path in sorted(set(left) & set(right), key=check_index):
        if left[path].spec_sha256 == right[path].spec_sha256:
            yield left.pop(path), right.pop(path)
    yield from _pair_by(left, right, lambda v: v.spec_sha256)
    yield from _pair_by(left, right, lambda v: (v.metric, v.type) if v.named else None, unique=True)
    yield from _pair_by(left, right, lambda v: (v.check_path, v.type))
    yield from _pair_by(left, right, lambda v: v.type, unique=True)
    for v in sorted(left.values(), key=lambda v: check_index(v.check_path)):
        yield v, None
    for v in sorted(right.values(), key=lambda v: check_index(v.check_path)):
        yield None, v


def _pair_by(left: dict[str, V], right: dict[str, V], key: Callable[[V], Any], unique: bool = False) -> Iterator[tuple[V, V]]:
    """Pair what is left on both sides by `key` (None: never), in check order, removing the pairs.
    With `unique`, only keys that occur once on each side pair (a name two checks share identifies neither)."""
    by_key: dict[Any, list[V]] = defaultdict(list)
    for v in sorted(right.values(), key=lambda v: check_index(v.check_path)):
        k = key(v)
        if k is not None:
            by_key[k].append(v)
    if unique:
        seen = Counter(key(v) for v in left.values())
        by_key = defaultdict(list, {k: vs for k, vs in by_key.items() if len(vs) == 1 and seen[k] == 1})
    for v in sorted(left.values(), key=lambda v: check_index(v.check_path)):
        k = key(v)
        if k is not None and by_key.get(k):
            match = by_key[k].pop(0)
            del left[v.check_path], right[match.check_path]
            yield v, match


def outcome(verdicts: list[V], finish_status: str | None) -> str:
    """The scenario rule over stored verdicts: pass for a finished, ok session whose every
    counting verdict (non-readouts, and readouts that errored) is PASS or NA."""
    return scenario_outcome(finish_status == "ok", ((v.status, v.readout) for v in verdicts))


def diff_gradings(store: BrowsingStore, grading_a: str, grading_b: str) -> GradingDiff:
    """Compare two gradings over the sessions both graded, one session at a time."""
    ida, idb = resolve(store, "gradings", grading_a), resolve(store, "gradings", grading_b)
    ga, gb = store.grading(ida), store.grading(idb)
    out = GradingDiff(a=dict(ga or {}), b=dict(gb or {}))
    sa, sb = _sessions(store, ida), _sessions(store, idb)
    both = sa & sb
    out.sessions, out.only_a, out.only_b = len(both), len(sa - both), len(sb - both)
    for row in rows_by_ids(store, list(both)):
        va, vb = _verdicts(store, ida, row.id), _verdicts(store, idb, row.id)
        changes = _compare_session(out, row.scenario, row.id, va, vb)
        finished = store.finish_status(row.id)
        oa, ob = outcome(va, finished), outcome(vb, finished)
        rate = out.pass_rates.setdefault(row.scenario, [0, 0, 0])
        rate[0] += oa == "pass"
        rate[1] += ob == "pass"
        rate[2] += 1
        if changes or oa != ob:
            out.per_session.append(SessionFlips(row.id, row.scenario, row.attempt, oa, ob, changes))
    return out


def _compare_session(out: GradingDiff, scenario: str, session_id: str, va: list[V], vb: list[V]) -> list[Change]:
    """File each paired verdict under its kind of change; returns this session's flips, additions and removals."""
    mine: list[Change] = []
    for a, b in pair(va, vb):
        if a is None:
            assert b is not None  # pair() never yields two Nones
            out.added.append(Change("added", scenario, session_id, b.check_path, b.type, None, b))
            mine.append(out.added[-1])
        elif b is None:
            out.removed.append(Change("removed", scenario, session_id, a.check_path, a.type, a, None))
            mine.append(out.removed[-1])
        else:
            spec_changed = a.spec_sha256 != b.spec_sha256
            if spec_changed and a.type == b.type == TASK_VERIFY:
                _task_version(out, session_id, a, b)
            if spec_changed:
                key = (scenario, a.check_path, a.spec_sha256, b.spec_sha256)
                group = out.changed.get(key)
                if group is None:
                    group = out.changed[key] = ChangedCheck(scenario, a.check_path, a.spec, b.spec)
                group.sessions.append(Change("changed", scenario, session_id, b.check_path, b.type, a, b, spec_changed=True))
            if a.status != b.status or a.passed != b.passed:
                out.flips.append(Change("flip", scenario, session_id, b.check_path, b.type, a, b, spec_changed=spec_changed))
                mine.append(out.flips[-1])
            elif abs(a.score - b.score) > SCORE_TOLERANCE:
                out.scores.append(Change("score", scenario, session_id, b.check_path, b.type, a, b, spec_changed=spec_changed))
            elif not spec_changed:
                out.same += 1
    return mine


def _task_version(out: GradingDiff, session_id: str, a: StoredVerdict, b: StoredVerdict) -> None:
    """File a task cell whose `task:verify` spec names another task version in B (its spec holds
    the fingerprint the candidate was graded against)."""
    args_a, args_b = a.spec.get("args") or {}, b.spec.get("args") or {}
    if args_a.get("fingerprint") == args_b.get("fingerprint"):
        return
    key = (str(args_b.get("kind")), str(args_b.get("task")), args_a.get("fingerprint"), args_b.get("fingerprint"))
    version = out.tasks.get(key) or out.tasks.setdefault(key, TaskVersion(*key))
    version.sessions.append(session_id)


def gradings_table(store: BrowsingStore) -> list[dict[str, Any]]:
    """Every grading with how many sessions it graded, oldest first."""
    counts = store.sessions_per_grading()
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
