"""The positive control (`benchtape grade`): re-grade stored sessions with exactly the check
specs they were graded with, and say for every check whether its verdict reproduced.

Grading is meant to be a pure function of the stored session (and its stored workspace),
so a verdict that does not come out the same twice is a check that cannot be trusted:
DIVERGED. A check that cannot be re-run at all (its script is gone, its type is refused
now, it reads a workspace nobody kept) is COULD NOT RE-GRADE, never a silent pass.

Input is either the database (the check specs are the `spec` JSON of each verdict row)
or a report JSON alone (the actions and the checks are both in the report).
"""

from __future__ import annotations

import hashlib
import tarfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from checks import CATALOG_VERSION, CheckConfigError, CheckContext, build, spec_hash
from recorder.errors import BadInput
from recorder.model import Action, Result, Session, project
from recorder.store import SessionRow, Store, loads
from recorder.commands import CommandRunner, run_local
from replay.grading import SandboxFactory, command_sandbox, restored_workspace, transform_output
from replay.report import load_report
from replay.select import Selection, resolve, rows, rows_by_ids
from replay.specs import check_index, missing_scripts, reads_workspace, spec_from_dict

REPRODUCED, DIVERGED, NOT_REGRADABLE = "REPRODUCED", "DIVERGED", "COULD NOT RE-GRADE"
SCORE_TOLERANCE = 1e-9


@dataclass(frozen=True)
class Outcome:
    """One verdict as compared: status, pass and score decide; the reason is shown."""

    status: str
    passed: bool
    score: float
    reason: str = ""

    @classmethod
    def of(cls, r: Result) -> "Outcome":
        return cls(r.status, r.passed, r.score, r.reason)

    def same_as(self, other: "Outcome") -> bool:
        return self.status == other.status and self.passed == other.passed and abs(self.score - other.score) <= SCORE_TOLERANCE

    def to_dict(self) -> dict[str, Any]:
        return {"status": self.status, "pass": self.passed, "score": self.score, "reason": self.reason}


@dataclass
class CheckReplay:
    check_path: str
    type: str
    spec: dict[str, Any]
    spec_sha256: str
    readout: bool
    stored: Outcome
    regraded: Outcome | None
    verdict: str  # REPRODUCED | DIVERGED | COULD NOT RE-GRADE
    why: str | None = None  # why it could not be re-graded

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
    counts: dict[str, int] = field(default_factory=lambda: {REPRODUCED: 0, DIVERGED: 0, NOT_REGRADABLE: 0})

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def exit_code(self) -> int:
        """0 all reproduced; 1 any diverged or not re-gradable; 3 nothing to re-grade."""
        if self.total == 0:
            return 3
        return 0 if self.counts[REPRODUCED] == self.total else 1

    def add(self, s: SessionReplay) -> None:
        self.sessions += 1
        for c in s.checks:
            self.counts[c.verdict] += 1


OnSession = Callable[[SessionReplay], None]


@dataclass(frozen=True)
class _Stored:
    """A stored verdict, from a verdict row or a report's checks[] entry."""

    check_path: str
    type: str
    spec: dict[str, Any]
    spec_sha256: str
    readout: bool
    outcome: Outcome


def replay_session(
    session: Session,
    stored: list[_Stored],
    *,
    bench_dir: Path | None,
    vars: dict[str, Any],
    transform: str | None,
    control: bool,
    workspace: Callable[[], Path | None],
    no_workspace_why: str,
) -> list[tuple[_Stored, Result | None, str | None]]:
    """Re-run every stored check on the session; (stored, new result or None, why not)."""
    out: list[tuple[_Stored, Result | None, str | None]] = []
    try:
        graded = transform_output(session, transform)
    except Exception as exc:  # noqa: BLE001 - a user expression may raise anything
        return [(s, None, f"the scenario's output transform failed: {exc}") for s in stored]
    ctx_cache: dict[bool, CheckContext] = {}
    for s in stored:
        try:
            spec = spec_from_dict(s.spec)
        except ValueError as exc:
            out.append((s, None, str(exc)))
            continue
        gone = missing_scripts(spec, bench_dir)
        if gone:
            out.append((s, None, f"its script file is gone: {gone[0]}"))
            continue
        try:
            check = build(spec)
        except CheckConfigError as exc:
            out.append((s, None, f"the check is refused now: {exc}"))
            continue
        needs_ws = reads_workspace(spec)
        if needs_ws not in ctx_cache:
            work_dir = workspace() if needs_ws else None
            if needs_ws and work_dir is None:
                failed = getattr(workspace, "error", None)
                out.append((s, None, f"it reads the workspace and {failed or no_workspace_why}"))
                continue
            runner = workspace.runner() if needs_ws and hasattr(workspace, "runner") else run_local
            ctx_cache[needs_ws] = CheckContext(work_dir=work_dir, bench_dir=bench_dir, vars=dict(vars or {}), control=control, run_command=runner)
        out.append((s, check.evaluate(graded, ctx_cache[needs_ws]), None))
    return out


def _compare(s: _Stored, result: Result | None, why: str | None) -> CheckReplay:
    if result is None:
        verdict, regraded = NOT_REGRADABLE, None
    else:
        regraded = Outcome.of(result)
        verdict = REPRODUCED if regraded.same_as(s.outcome) else DIVERGED
    return CheckReplay(s.check_path, s.type, s.spec, s.spec_sha256, s.readout, s.outcome, regraded, verdict, why)


class _LazyWorkspace:
    """Restores the snapshot the first time a check asks for it, once per session."""

    def __init__(self, stack: ExitStack, open_ws: Callable[[], Any], sandbox_for: SandboxFactory | None = None):
        self.stack, self.open_ws, self.done, self.path = stack, open_ws, False, None
        self.sandbox_for = sandbox_for
        self.error: str | None = None  # why the snapshot could not be restored

    def __call__(self) -> Path | None:
        if not self.done:
            self.done = True
            try:
                self.path = self.stack.enter_context(self.open_ws())
            except (BadInput, OSError, tarfile.TarError) as exc:  # a corrupt or hostile snapshot
                self.error = f"its workspace snapshot could not be restored: {exc}"
        return self.path

    def runner(self) -> CommandRunner:
        """Where exec-style checks run: inside a fresh container for a container session."""
        if self.sandbox_for is None or self.path is None:
            return run_local
        return self.stack.enter_context(self.sandbox_for(self.path))


# ---------------------------------------------------------------- from the database


def target_grading(store: Store, session_id: str) -> str | None:
    """The grading a session was first graded with: the one recorded with its run."""
    row = store.db.execute(
        "SELECT v.grading_id FROM verdicts v JOIN gradings g ON g.id = v.grading_id WHERE v.session_id = ? ORDER BY g.created_at, g.id LIMIT 1",
        [session_id],
    ).fetchone()
    return row[0] if row else None


def _stored_verdicts(store: Store, grading_id: str, session_id: str) -> list[_Stored]:
    rows = store.db.execute(
        "SELECT check_path, type, spec, spec_sha256, readout, status, pass, score, reason FROM verdicts WHERE grading_id = ? AND session_id = ?",
        [grading_id, session_id],
    )
    out = [_Stored(path, typ, loads(spec), sha, bool(readout), Outcome(status, bool(passed), float(score), reason or "")) for path, typ, spec, sha, readout, status, passed, score, reason in rows]
    return sorted(out, key=lambda s: check_index(s.check_path))


def reproduce_store(store: Store, sel: Selection, *, grading: str | None = None, on_session: OnSession | None = None) -> Reproduction:
    """Re-grade the selected stored sessions (or every session of `grading`) and record the
    pass as a new grading, source `control`."""
    grading_id = resolve(store, "gradings", grading) if grading else None
    if sel.empty and grading_id is None:
        raise BadInput("nothing named to re-grade", fix="pass a report JSON, a run id, --session ID, --grading ID or --all")

    def picked() -> Iterator[SessionRow]:
        return rows(store, sel) if not sel.empty else _graded_by(store, grading_id)

    targets: dict[str, str] = {}  # session → the grading it reproduces (ids only: memory stays small)
    for row in picked():
        target = grading_id or target_grading(store, row.id)
        if target is not None and (grading_id is None or _graded(store, target, row.id)):
            targets[row.id] = target
    rep = Reproduction(source="database", input=str(store.path), reproduced_gradings=sorted(set(targets.values())))
    if not targets:
        return rep
    rep.grading_id = _new_control_grading(store, rep.reproduced_gradings)
    runs: dict[str, dict[str, Any] | None] = {}
    contexts: dict[str, dict[str, dict[str, Any]]] = {}
    gradings: dict[str, dict[str, Any] | None] = {}
    for row in picked():
        target = targets.get(row.id)
        if target is None:
            continue
        if target not in gradings:
            gradings[target] = store.grading(target)
            contexts[target] = store.grading_scenarios(target)
        if row.run_id not in runs:
            runs[row.run_id] = store.run(row.run_id)
        one = _replay_stored(store, row, target, gradings[target], contexts[target].get(row.scenario) or {}, runs[row.run_id], rep.grading_id)
        rep.add(one)
        if on_session:
            on_session(one)
    return rep


def _graded(store: Store, grading_id: str, session_id: str) -> bool:
    return store.db.execute("SELECT 1 FROM verdicts WHERE grading_id = ? AND session_id = ? LIMIT 1", [grading_id, session_id]).fetchone() is not None


def _graded_by(store: Store, grading_id: str) -> Iterator[SessionRow]:
    ids = [r[0] for r in store.db.execute("SELECT DISTINCT session_id FROM verdicts WHERE grading_id = ?", [grading_id])]
    yield from rows_by_ids(store, ids)


def _new_control_grading(store: Store, reproduced: list[str]) -> str:
    """The grade pass's own grading: the check set it ran is exactly the reproduced gradings'."""
    rows_ = [store.grading(g) for g in reproduced]
    if len(rows_) == 1 and rows_[0] is not None:
        checkset, bench_path = rows_[0]["checkset_sha256"], rows_[0]["bench_path"]
    else:
        checkset = hashlib.sha256("\n".join(f"{r['id']}:{r['checkset_sha256']}" for r in rows_ if r).encode()).hexdigest()
        paths = {r["bench_path"] for r in rows_ if r}
        bench_path = paths.pop() if len(paths) == 1 else None
    run_ids = {r["run_id"] for r in rows_ if r and r.get("run_id")}
    note = "grade: reproduces " + ", ".join(reproduced)
    return store.new_grading("control", checkset_sha256=checkset, catalog_version=CATALOG_VERSION, bench_path=bench_path, run_id=run_ids.pop() if len(run_ids) == 1 else None, note=note)


def _replay_stored(store: Store, row: SessionRow, target: str, grading: dict[str, Any] | None, context: dict[str, Any], run: dict[str, Any] | None, new_grading: str) -> SessionReplay:
    session = store.load_session(row.id, row)
    stored = _stored_verdicts(store, target, row.id)
    bench_path = (grading or {}).get("bench_path")
    bench_dir = Path(bench_path).parent if bench_path else None
    control = bool((run or {}).get("kind") == "control")
    with ExitStack() as stack:
        ws = _LazyWorkspace(stack, lambda: restored_workspace(store, session), command_sandbox(session))
        why = "no workspace snapshot was stored for this session" if not session.snapshot else "its workspace snapshot is missing from the store"
        vars = {**(context.get("vars") or {}), **store.generated_vars(row.run_id, row.scenario)}
        graded = replay_session(session, stored, bench_dir=bench_dir, vars=vars, transform=context.get("transform"), control=control, workspace=ws, no_workspace_why=why)
    one = SessionReplay(row.id, row.scenario, row.attempt, target, [_compare(s, r, w) for s, r, w in graded])
    if not one.checks:
        one.note = "the grading holds no verdicts for this session"
    store.add_verdicts(new_grading, row.id, [_verdict_row(c) for c in one.checks])
    return one


def _verdict_row(c: CheckReplay) -> dict[str, Any]:
    """The grade pass's own verdict; a check that could not be re-graded is an ERROR saying why."""
    result = (
        Result(c.regraded.passed, c.regraded.score, c.regraded.reason, {}, c.regraded.status)
        if c.regraded is not None
        else Result.error(f"could not re-grade: {c.why}")
    )
    try:
        sha = spec_hash(spec_from_dict(c.spec))
    except ValueError:
        sha = c.spec_sha256
    return {"check_path": c.check_path, "type": c.type, "metric": c.spec.get("metric") or c.type, "spec": c.spec, "spec_sha256": sha, "result": result, "readout": c.readout}


# ---------------------------------------------------------------- from a report JSON alone


def reproduce_report(path: Path, *, session: str | None = None, on_session: OnSession | None = None) -> Reproduction:
    """Re-grade the sessions a report carries, from the report alone (no database).

    Workspace-reading checks use `<report_dir>/<run_id>/snapshots/<sha>.tar` when the
    report was written by `--report-dir`; without it they cannot be re-graded."""
    doc = load_report(path)
    rep = Reproduction(source="report", input=str(path))
    run_dirs = {r.get("run_id"): r.get("bench_dir") for r in doc.get("runs") or []}
    wanted = session.strip().upper() if session else None
    for result in doc["results"]:
        sid = str(result.get("session_id") or "")
        if wanted and not sid.upper().startswith(wanted):
            continue
        run_id = result.get("run_id") or doc.get("run_id")
        bench_dir = doc.get("bench_dir") or run_dirs.get(run_id)
        one = _replay_result(result, path, run_id, Path(bench_dir) if bench_dir else None)
        rep.add(one)
        if on_session:
            on_session(one)
    if wanted and rep.sessions == 0:
        raise BadInput(f"no session with id {session!r} in the report", file=str(path), fix="copy a session_id from the report's results[]")
    return rep


def session_from_report(result: dict[str, Any]) -> Session:
    """The projection rebuilt from the report's authoritative actions."""
    actions = [Action(a["kind"], a.get("data") or {}, thread=a.get("thread") or "main", at=a.get("at") or 0.0, seq=a.get("seq")) for a in (result.get("session") or {}).get("actions") or []]
    s = project(actions)
    s.id = result.get("session_id")
    s.scenario = s.scenario or result.get("scenario_id")
    return s


def _snapshot_file(report: Path, run_id: str | None, session: Session) -> Path | None:
    """Where `--report-dir` put this session's workspace snapshot, if the report came from there."""
    if not run_id or not session.snapshot or not session.snapshot.get("sha256"):
        return None
    if report.name != f"{run_id}.json":
        return None
    tar = report.parent / run_id / "snapshots" / f"{session.snapshot['sha256']}.tar"
    return tar if tar.is_file() else None


def _replay_result(result: dict[str, Any], report: Path, run_id: str | None, bench_dir: Path | None) -> SessionReplay:
    session = session_from_report(result)
    stored = sorted(
        (
            _Stored(
                c.get("path") or f"checks[{i}]",
                c.get("type") or (c.get("spec") or {}).get("type", "?"),
                c.get("spec") or {"type": c.get("type")},
                c.get("spec_sha256") or "",
                bool(c.get("readout")),
                Outcome(c.get("status") or ("PASS" if (c.get("result") or {}).get("pass") else "FAIL"), bool((c.get("result") or {}).get("pass")), float((c.get("result") or {}).get("score") or 0.0), (c.get("result") or {}).get("reason") or ""),
            )
            for i, c in enumerate(result.get("checks") or [])
        ),
        key=lambda s: check_index(s.check_path),
    )
    context = result.get("grading_context") or {}
    tar = _snapshot_file(report, run_id, session)
    if tar is not None:
        why = "its snapshot could not be restored"
    elif not session.snapshot:
        why = "no workspace snapshot was recorded for this session"
    else:
        why = "this report carries no workspace snapshots: write it with --report-dir, or grade from the database (benchtape grade RUN_ID)"
    with ExitStack() as stack:
        ws = _LazyWorkspace(stack, lambda: restored_workspace(None, session, tar.read_bytes() if tar is not None else None))
        graded = replay_session(session, stored, bench_dir=bench_dir, vars=context.get("vars") or {}, transform=context.get("transform"), control=bool(context.get("control")), workspace=ws, no_workspace_why=why)
    one = SessionReplay(str(result.get("session_id")), str(result.get("scenario_id")), int(result.get("attempt") or 1), None, [_compare(s, r, w) for s, r, w in graded])
    if not one.checks:
        one.note = "the report holds no checks for this session"
    return one
