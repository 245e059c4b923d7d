"""The positive control (`benchtape grade`): re-grade stored sessions with exactly the check
specs they were graded with, and say for every check whether its verdict reproduced.

Grading is meant to be a pure function of the stored session (and its stored workspace),
so a verdict that does not come out the same twice is a check that cannot be trusted:
DIVERGED. A check that cannot be re-run at all (its script is gone, its type is refused
now, it reads a workspace the store lost) is COULD NOT RE-GRADE, never a silent pass; a check
that reads a workspace a report never carried is SKIPPED (as the spec says), and the control
holds when everything it could re-grade reproduced. Every re-grade goes through
`benchtape.replay.grading.grade_session`, the function live grading uses.

Input is either the database (the check specs are the `spec` JSON of each verdict row)
or a report JSON alone (the actions and the checks are both in the report).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from benchtape.checks import CATALOG_VERSION, Check, CheckConfigError, build, spec_hash
from benchtape.core.errors import BadInput
from benchtape.core.model import Action, Session, project
from benchtape.core.redact import REDACTED
from benchtape.core.results import Result
from benchtape.replay.grading import (
    NOT_IN_REPORT,
    TASK_VERIFY,
    VERDICT_BATCH,
    GradingContext,
    NoWorkspace,
    Peers,
    SnapshotFile,
    StoredSnapshot,
    Verdict,
    WorkspaceSource,
    checks_read_output_only,
    grade_session,
    stored_session,
)
from benchtape.replay.grading_judges import judge_for_grading
from benchtape.replay.provider_peers import provider_peers
from benchtape.replay.report import load_report
from benchtape.replay.select import Selection, batch_gc, resolve, rows, rows_by_ids
from benchtape.replay.specs import check_index, missing_scripts, spec_from_dict
from benchtape.replay.verdicts import StoredVerdict, control_note, same_outcome
from benchtape.store.database import SessionRow
from benchtape.store.views import GradingStore

_PAGE = 500  # sessions whose first grading is looked up in one query
REPRODUCED, DIVERGED, NOT_REGRADABLE, SKIPPED = "REPRODUCED", "DIVERGED", "COULD NOT RE-GRADE", "SKIPPED"


@dataclass(slots=True)
class Outcome:
    """One verdict as compared: status, pass and score decide; the reason is shown.

    Treat it as immutable: not a frozen dataclass because a grade pass makes two per verdict
    and a frozen __init__ costs five times a plain slots one."""

    status: str
    passed: bool
    score: float
    reason: str = ""

    @classmethod
    def of(cls, r: Result) -> Outcome:
        return cls(r.status, r.passed, r.score, r.reason)

    def same_as(self, other: Outcome) -> bool:
        return same_outcome(self, other)

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "pass": self.passed, "score": self.score, "reason": self.reason}


@dataclass(slots=True)
class CheckReplay:
    check_path: str
    type: str
    spec: dict[str, Any]
    spec_sha256: str
    readout: bool
    stored: Outcome
    regraded: Outcome | None
    verdict: str  # REPRODUCED | DIVERGED | COULD NOT RE-GRADE | SKIPPED
    why: str | None = None  # why it could not be re-graded
    result: Result | None = None  # the verdict as graded now (None when the check could not be built)
    spec_json: str = ""  # the spec as stored (what `spec` was decoded from)

    def to_dict(self) -> dict[str, Any]:
        return {
            "check_path": self.check_path,
            "type": self.type,
            "verdict": self.verdict,
            "stored": self.stored.to_dict(),
            "regraded": self.regraded.to_dict() if self.regraded else None,
            "why": self.why,
        }


@dataclass
class SessionReplay:
    session_id: str
    scenario: str
    attempt: int
    grading_id: str | None  # the grading reproduced (None from a report)
    checks: list[CheckReplay] = field(default_factory=list)
    note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"session_id": self.session_id, "scenario": self.scenario, "attempt": self.attempt, "grading_id": self.grading_id, "note": self.note, "checks": [c.to_dict() for c in self.checks]}


@dataclass
class Reproduction:
    """The whole grade pass; the per-session details were handed to `on_session` as they came."""

    source: str  # database | report
    input: str
    grading_id: str | None = None  # the new grading recorded (database only)
    reproduced_gradings: list[str] = field(default_factory=list)
    sessions: int = 0
    counts: dict[str, int] = field(default_factory=lambda: {REPRODUCED: 0, DIVERGED: 0, NOT_REGRADABLE: 0, SKIPPED: 0})

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def regraded(self) -> int:
        """Checks the pass could re-grade or should have: all but the SKIPPED."""
        return self.total - self.counts[SKIPPED]

    @property
    def exit_code(self) -> int:
        """0 everything re-graded reproduced; 1 any diverged or not re-gradable; 3 nothing to re-grade."""
        if self.regraded == 0:
            return 3
        return 0 if self.counts[REPRODUCED] == self.regraded else 1

    def add(self, s: SessionReplay) -> None:
        self.sessions += 1
        for c in s.checks:
            self.counts[c.verdict] += 1


OnSession = Callable[[SessionReplay], None]


class Rebuilds:
    """What a pass looks up once, not per session: checks rebuilt from stored specs (thousands
    of sessions graded with the same checks store the same few specs, and a built check is
    reusable: regrade builds each of its checks once too), and the grading context of a run's scenario."""

    def __init__(self) -> None:
        self._built: dict[tuple[str, str, Path | None], Check | str] = {}
        self._specs: dict[str, dict[str, Any]] = {}
        self._hashes: dict[tuple[str, str], str] = {}
        self.contexts: dict[tuple[str, str, str], GradingContext] = {}  # per reproduced grading, run and scenario

    def check(self, s: StoredVerdict, bench_dir: Path | None) -> Check | str:
        key = (s.spec_json, s.spec_sha256, bench_dir)
        built = self._built.get(key)
        if built is None:
            built = self._built[key] = _rebuilt(s, bench_dir)
        return built

    def spec(self, s: StoredVerdict) -> dict[str, Any]:
        """The stored spec, decoded once per distinct text (read-only: it is shared)."""
        spec = self._specs.get(s.spec_json)
        if spec is None:
            spec = self._specs[s.spec_json] = s.spec
        return spec

    def spec_sha256(self, c: CheckReplay) -> str:
        """The hash of the spec as the catalog canonicalises it now (the stored one if it no
        longer parses)."""
        key = (c.spec_sha256, c.spec_json or orjson.dumps(c.spec, option=orjson.OPT_SORT_KEYS).decode())
        sha = self._hashes.get(key)
        if sha is None:
            try:
                sha = spec_hash(spec_from_dict(c.spec))
            except ValueError:
                sha = c.spec_sha256
            self._hashes[key] = sha
        return sha


def replay_session(session: Session, stored: list[StoredVerdict], source: WorkspaceSource, context: GradingContext, rebuilds: Rebuilds | None = None, peers: Peers | None = None) -> list[CheckReplay]:
    """Re-run every stored check on the session through the one grading function, and compare
    (`peers`: its multi-provider scenario's sessions, found as they were graded together)."""
    rebuilds = rebuilds or Rebuilds()
    buildable: list[tuple[StoredVerdict, Check]] = []
    refused: dict[str, str] = {}
    for s in stored:
        if s.type == TASK_VERIFY:  # a task cell's verdict: grade_session decides it again itself, from the stored candidate
            continue
        why = rebuilds.check(s, context.bench_dir)
        if isinstance(why, str):
            refused[s.check_path] = why
        else:
            buildable.append((s, why))
    verdicts = grade_session(session, [c for _, c in buildable], source, context, paths=[s.check_path for s, _ in buildable], peers=peers)
    fresh = {v.check_path: v for v in verdicts}
    return [_compare(s, rebuilds.spec(s), fresh.get(s.check_path), refused.get(s.check_path)) for s in stored]


def _rebuilt(s: StoredVerdict, bench_dir: Path | None) -> Check | str:
    """The check rebuilt from its stored spec, or why it cannot be (its script is gone, its type is refused now)."""
    try:
        spec = spec_from_dict(s.spec)
    except ValueError as exc:
        return str(exc)
    if REDACTED in orjson.dumps(s.spec).decode() and spec_hash(spec) != s.spec_sha256:
        return "its spec held a secret, which is never stored in clear: re-grade it with the bench (benchtape regrade --bench)"
    gone = missing_scripts(spec, bench_dir)
    if gone:
        return f"its script file is gone: {gone[0]}"
    try:
        return build(spec)
    except CheckConfigError as exc:
        return f"the check is refused now: {exc}"


def _compare(s: StoredVerdict, spec: dict[str, Any], fresh: Verdict | None, why: str | None) -> CheckReplay:
    stored = _outcome(s)
    if fresh is None:  # not re-graded, for `why`
        regraded, verdict, result = None, NOT_REGRADABLE, None
    else:
        result, why = fresh.result, None
        regraded = Outcome.of(result)
        if regraded.same_as(stored):
            verdict = REPRODUCED
        elif fresh.unavailable is not None:  # what it reads is not here: no verdict to compare, not a divergence
            regraded, verdict, why = None, SKIPPED if fresh.unavailable == NOT_IN_REPORT else NOT_REGRADABLE, result.reason
        else:
            verdict = DIVERGED
    return CheckReplay(s.check_path, s.type, spec, s.spec_sha256, s.readout, stored, regraded, verdict, why, result, s.spec_json)


# ---------------------------------------------------------------- from the database


def _stored_verdicts(store: GradingStore, grading_id: str, session_id: str) -> list[StoredVerdict]:
    return sorted((StoredVerdict.from_brief(r) for r in store.verdict_briefs(grading_id, session_id)), key=lambda s: check_index(s.check_path))


def _outcome(s: StoredVerdict) -> Outcome:
    return Outcome(s.status, s.passed, s.score, s.reason)


def reproduce_store(store: GradingStore, sel: Selection, *, grading: str | None = None, on_session: OnSession | None = None) -> Reproduction:
    """Re-grade the selected stored sessions (or every session of `grading`) and record the
    pass as a new grading, source `control`."""
    grading_id = resolve(store, "gradings", grading) if grading else None
    if sel.empty and grading_id is None:
        raise BadInput("nothing named to re-grade", fix="pass a report JSON, a run id, --session ID, --grading ID or --all")

    def picked() -> Iterator[SessionRow]:
        if not sel.empty:
            return rows(store, sel)
        assert grading_id is not None  # refused above when neither names anything
        return _graded_by(store, grading_id)

    targets: dict[str, str] = {}  # session → the grading it reproduces (ids only: memory stays small)
    if grading_id is not None:
        targets = {row.id: grading_id for row in picked() if store.graded(grading_id, row.id)}
    else:
        page: list[str] = []
        for row in picked():
            page.append(row.id)
            if len(page) >= _PAGE:
                targets.update(store.first_gradings(page))
                page = []
        targets.update(store.first_gradings(page))
    rep = Reproduction(source="database", input=str(store.path), reproduced_gradings=sorted(set(targets.values())))
    if not targets:
        return rep
    rep.grading_id = _new_control_grading(store, rep.reproduced_gradings)
    runs: dict[str, dict[str, Any] | None] = {}
    contexts: dict[str, dict[str, dict[str, Any]]] = {}
    gradings: dict[str, dict[str, Any] | None] = {}
    judges: dict[str, Any] = {}  # per reproduced grading: always asks again, as that grading's judge did
    rebuilds = Rebuilds()
    pending: list[tuple[str, list[dict[str, Any]]]] = []  # verdicts written a batch of sessions at a time, as regrade does
    with batch_gc():
        for row in picked():
            target = targets.get(row.id)
            if target is None:
                continue
            if target not in gradings:
                gradings[target] = store.grading(target)
                contexts[target] = store.grading_scenarios(target)
                judges[target] = judge_for_grading(store, rep.grading_id, mode="ask", judges=None, like_grading=target)
            if row.run_id not in runs:
                runs[row.run_id] = store.run(row.run_id)
            one = _replay_stored(store, row, target, gradings[target], contexts[target].get(row.scenario) or {}, runs[row.run_id], judges[target], rebuilds)
            pending.append((row.id, [_verdict_row(c, rebuilds) for c in one.checks]))
            if len(pending) >= VERDICT_BATCH:
                store.add_verdicts_many(rep.grading_id, pending)
                pending = []
            rep.add(one)
            if on_session:
                on_session(one)
        store.add_verdicts_many(rep.grading_id, pending)
    return rep


def reproduce_sample(store: GradingStore, count: int) -> list[SessionReplay]:
    """The `count` newest graded sessions re-graded with the checks of their first grading and
    compared, writing nothing (what `benchtape verify --sample` reports: a DIVERGED verdict is
    one the store cannot re-derive). No judge is asked: an AI check is COULD NOT RE-GRADE here."""
    out: list[SessionReplay] = []
    rebuilds = Rebuilds()
    runs: dict[str, dict[str, Any] | None] = {}
    for session_id, _kind in store.newest_sessions():
        if len(out) >= count:
            break
        target = store.first_grading_for(session_id)
        row = store.session_row(session_id) if target else None
        if target is None or row is None:
            continue
        if row.run_id not in runs:
            runs[row.run_id] = store.run(row.run_id)
        context = store.grading_scenarios(target).get(row.scenario) or {}
        out.append(_replay_stored(store, row, target, store.grading(target), context, runs[row.run_id], None, rebuilds))
    return out


def _graded_by(store: GradingStore, grading_id: str) -> Iterator[SessionRow]:
    yield from rows_by_ids(store, store.graded_session_ids(grading_id))


def _new_control_grading(store: GradingStore, reproduced: list[str]) -> str:
    """The grade pass's own grading: the check set it ran is exactly the reproduced gradings'."""
    rows_ = [store.grading(g) for g in reproduced]
    if len(rows_) == 1 and rows_[0] is not None:
        checkset, bench_path = rows_[0]["checkset_sha256"], rows_[0]["bench_path"]
    else:
        checkset = hashlib.sha256("\n".join(f"{r['id']}:{r['checkset_sha256']}" for r in rows_ if r).encode()).hexdigest()
        paths = {r["bench_path"] for r in rows_ if r}
        bench_path = paths.pop() if len(paths) == 1 else None
    run_ids = {r["run_id"] for r in rows_ if r and r.get("run_id")}
    note = control_note(reproduced)
    return store.new_grading("control", checkset_sha256=checkset, catalog_version=CATALOG_VERSION, bench_path=bench_path, run_id=run_ids.pop() if len(run_ids) == 1 else None, note=note)


def _replay_stored(store: GradingStore, row: SessionRow, target: str, grading: dict[str, Any] | None, context: dict[str, Any], run: dict[str, Any] | None, judge: Any, rebuilds: Rebuilds) -> SessionReplay:
    stored = _stored_verdicts(store, target, row.id)
    key = (target, row.run_id, row.scenario)
    ctx = rebuilds.contexts.get(key)
    if ctx is None:  # the same for every session of the run and scenario this grading graded
        bench_path = (grading or {}).get("bench_path")
        vars = {**(context.get("vars") or {}), **store.generated_vars(row.run_id, row.scenario)}
        ctx = GradingContext.stored({**context, "vars": vars, "control": bool((run or {}).get("kind") == "control")}, Path(bench_path).parent if bench_path else None, judge=judge)
        rebuilds.contexts[key] = ctx
    # read as regrade reads it: without its calls when every check it grades again reads only the output
    checks = [c for c in (rebuilds.check(s, ctx.bench_dir) for s in stored if s.type != TASK_VERIFY) if not isinstance(c, str)]
    session = stored_session(store, row, checks_read_output_only(checks) and not ctx.providers)
    peers = provider_peers(store, row, session, ctx.providers)
    one = SessionReplay(row.id, row.scenario, row.attempt, target, replay_session(session, stored, StoredSnapshot(store, session), ctx, rebuilds, peers))
    if not one.checks:
        one.note = "the grading holds no verdicts for this session"
    return one


def _verdict_row(c: CheckReplay, rebuilds: Rebuilds) -> dict[str, Any]:
    """The grade pass's own verdict: the check as graded now; one that could not even be
    rebuilt is an ERROR saying why."""
    result = c.result if c.result is not None else Result.error(f"could not re-grade: {c.why}")
    # the stored spec's own text when there is one: the store keeps it as it is, not dumped again
    return {"check_path": c.check_path, "type": c.type, "metric": c.spec.get("metric") or c.type, "spec": c.spec_json or c.spec, "spec_sha256": rebuilds.spec_sha256(c), "result": result, "readout": c.readout}


# ---------------------------------------------------------------- from a report JSON alone


def reproduce_report(path: Path, *, session: str | None = None, on_session: OnSession | None = None) -> Reproduction:
    """Re-grade the sessions a report carries, from the report alone (no database).

    Workspace-reading checks use `<report_dir>/<run_id>/snapshots/<sha>.tar` when the
    report was written by `--report-dir`; without it they cannot be re-graded."""
    doc = load_report(path)
    rep = Reproduction(source="report", input=str(path))
    run_dirs = {r.get("run_id"): r.get("bench_dir") for r in doc.get("runs") or []}
    wanted = session.strip().upper() if session else None
    rebuilds = Rebuilds()
    together: dict[tuple[Any, Any, Any], list[dict[str, Any]]] = {}  # a multi-provider scenario's rows: graded together
    for result in doc["results"]:
        together.setdefault((result.get("run_id") or doc.get("run_id"), result.get("scenario_id"), result.get("attempt")), []).append(result)
    for result in doc["results"]:
        sid = str(result.get("session_id") or "")
        if wanted and not sid.upper().startswith(wanted):
            continue
        run_id = result.get("run_id") or doc.get("run_id")
        bench_dir = doc.get("bench_dir") or run_dirs.get(run_id)
        group = together[(run_id, result.get("scenario_id"), result.get("attempt"))]
        one = _replay_result(result, path, run_id, Path(bench_dir) if bench_dir else None, rebuilds, group)
        rep.add(one)
        if on_session:
            on_session(one)
    if wanted and rep.sessions == 0:
        raise BadInput(f"no session with id {session!r} in the report", file=str(path), fix="copy a session_id from the report's results[]")
    return rep


def session_from_report(result: dict[str, Any]) -> Session:
    """The projection rebuilt from the report's authoritative actions."""
    actions = [Action.untyped(a["kind"], a.get("data") or {}, thread=a.get("thread") or "main", at=a.get("at") or 0.0, seq=a.get("seq")) for a in (result.get("session") or {}).get("actions") or []]
    s = project(actions)
    s.id = result.get("session_id")
    s.scenario = s.scenario or result.get("scenario_id")
    return s


def _report_workspace(report: Path, run_id: str | None, session: Session) -> WorkspaceSource:
    """Where `--report-dir` put this session's workspace snapshot; a report written without
    one cannot give workspace readers anything (they are SKIPPED)."""
    sha = (session.snapshot or {}).get("sha256")
    if not sha:
        return NoWorkspace()
    tar = report.parent / (run_id or "") / "snapshots" / f"{sha}.tar"
    in_report_dir = bool(run_id) and report.name in (f"{run_id}.json", f"{run_id}.jsonl")  # the report, or the stream beside it
    if in_report_dir and tar.is_file():
        return SnapshotFile(tar, sha)
    if in_report_dir:
        return NoWorkspace(NOT_IN_REPORT, f"the session's workspace snapshot is not beside the report yet ({tar.relative_to(report.parent)}: --report-dir writes them when the run ends), or grade from the database (benchtape grade {run_id})")
    return NoWorkspace(NOT_IN_REPORT, "this report carries no workspace snapshots: write it with --report-dir, or grade from the database (benchtape grade RUN_ID)")


def _replay_result(result: dict[str, Any], report: Path, run_id: str | None, bench_dir: Path | None, rebuilds: Rebuilds, group: list[dict[str, Any]] | None = None) -> SessionReplay:
    session = session_from_report(result)
    stored = sorted(
        (
            StoredVerdict.from_report(c, i)
            for i, c in enumerate(result.get("checks") or [])
        ),
        key=lambda s: check_index(s.check_path),
    )
    context = result.get("grading_context") or {}
    ctx = GradingContext.stored(context, bench_dir)
    peers = None
    if len(ctx.providers) > 1:
        sessions = [session if r is result else session_from_report(r) for r in group or []]
        found = {s.provider: s for s in sessions if s.provider in ctx.providers}
        peers = {label: (found[label], _report_workspace(report, run_id, found[label])) for label in ctx.providers if label in found}
    graded = replay_session(session, stored, _report_workspace(report, run_id, session), ctx, rebuilds, peers)
    one = SessionReplay(str(result.get("session_id")), str(result.get("scenario_id")), int(result.get("attempt") or 1), None, graded)
    if not one.checks:
        one.note = "the report holds no checks for this session"
    return one
