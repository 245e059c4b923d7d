"""Grading: one function grades a session, whichever command asks.

Live grading (`run`), the negative control (`check`), the positive control (`grade`) and
`regrade` all call `grade_session`. They differ only in where the checks come from (the
bench as it was, as it is now, or the stored specs) and where the verdicts go; the
restore, the grading sandbox, the evaluation and the fallback when something is missing
live here, once, so a verdict never depends on the command that produced it.

What is missing is found lazily: the workspace is restored, and the grading sandbox
started, only when a check first asks for them. A workspace that cannot be provided (no
snapshot in the store, a corrupt one, a report without snapshots), a grading container
that cannot start, or an output transform that raised each make exactly the checks that
needed it ERROR, with one wording per cause (`benchtape.core.command_runner.Unavailable`).

Output transforms run where the session's grading commands run (a subprocess on the host,
or the grading container), all of one session's in one process per language, when a check
first reads a transformed output (`benchtape.checks.output_transforms`).
"""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
from contextlib import ExitStack
from dataclasses import dataclass, field
from functools import lru_cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Mapping, Protocol, Sequence, cast

import orjson

from benchtape.checks import CATALOG_VERSION, Check, CheckContext, build, spec_hash
from benchtape.checks.output_transforms import SessionTransforms, TransformPlace, transformed
from benchtape.checks.registry import CheckInfo
from benchtape.core.command_runner import Unavailable
from benchtape.core.errors import BadInput
from benchtape.core.judgments import Judge
from benchtape.core.model import Session, text_of
from benchtape.core.results import ERROR, FAIL, PASS, CheckSpec, Result
from benchtape.sandbox.trees import later, remove_tree
from benchtape.store.database import dumps
from benchtape.store.views import BrowsingStore, GradingStore

if TYPE_CHECKING:
    from benchtape.replay.changes import Changes
    from benchtape.sandbox.inodes import InodePool
    from benchtape.sandbox.levels import GradingHost, GradingSandbox
    from benchtape.sandbox.run_resources import RunResources
    from benchtape.store.reader import SessionRow

# The causes a check can be errored for, with the one wording each gets.
NO_SNAPSHOT_IN_STORE = "snapshot_missing"
SNAPSHOT_CORRUPT = "snapshot_corrupt"
NOT_IN_REPORT = "not_in_report"
GRADING_CONTAINER = "grading_container"
# (and benchtape.checks.output_transforms.TRANSFORM: the output a check reads is a transform's, which failed)
VERDICT_BATCH = 200  # sessions per verdict transaction when a pass grades many (regrade, grade)


@dataclass
class Verdict:
    check_path: str
    check: Check
    result: Result

    @property
    def counts(self) -> bool:
        """Whether the verdict decides the scenario: non-readouts, and readouts that errored."""
        return not self.check.readout or self.result.status == "ERROR"

    @property
    def unavailable(self) -> str | None:
        """The cause, when the check could not be graded because what it reads was missing."""
        return self.result.evidence.get("unavailable") if self.result.status == "ERROR" else None

    def row(self) -> dict[str, Any]:
        """The stored-verdict value: what `Store.add_verdicts` writes for this verdict."""
        return {**static_row(self.check_path, self.check), "result": self.result}


def static_row(path: str, check: Check) -> dict[str, Any]:
    """The half of a verdict row that depends only on the check (built once per check when
    thousands of sessions are graded with it)."""
    return {"check_path": path, "type": check.type, "metric": check.metric, "spec": dumps(check.spec.to_dict()), "spec_sha256": check.identity, "readout": check.readout}


@dataclass(frozen=True)
class GradingContext:
    """Everything besides the session and its checks that a verdict depends on."""

    bench_dir: Path | None = None
    vars: Mapping[str, Any] = field(default_factory=dict)
    transform: str | dict[str, str] | None = None  # the scenario's output transform (benchtape.spec.transform_source)
    control: bool = False  # grading the negative control
    runtimes: Mapping[str, str] = field(default_factory=dict)  # runtime pins of code checks ({"bun": "1.1"})
    judge: Judge | None = field(default=None, compare=False)  # the grading's judge (benchtape.replay.grading_judges), shared by its sessions
    resources: RunResources | None = field(default=None, compare=False)  # live grading: the run's files made ahead and cleanups (never part of a verdict)
    providers: tuple[str, ...] = ()  # a multi-provider scenario's labels, in order: its sessions are graded together

    def to_dict(self) -> dict[str, Any]:
        """What a grading keeps per scenario (`grading_scenarios`), so it can be reproduced."""
        d = {"vars": dict(self.vars), "transform": self.transform, "control": bool(self.control), "runtimes": dict(self.runtimes)}
        return {**d, "providers": list(self.providers)} if len(self.providers) > 1 else d

    @classmethod
    def stored(cls, d: Mapping[str, Any], bench_dir: Path | None = None, **extra: Any) -> GradingContext:
        """The context a grading kept (`to_dict`), to grade again exactly as it did."""
        return cls(bench_dir, dict(d.get("vars") or {}), d.get("transform"), bool(d.get("control")), dict(d.get("runtimes") or {}), **{"providers": tuple(d.get("providers") or ()), **extra})


# ---------------------------------------------------------------- where the workspace comes from


class WorkspaceSource(Protocol):
    def restore(self, into: Path, pool: InodePool | None = None) -> bool:
        """Put the session's final workspace at `into` (from `pool`'s entries made ahead, when
        given); False when none was ever recorded; raises Unavailable when one was recorded but
        cannot be provided."""


class StoredSnapshot:
    """The snapshot the session recorded, from the store's blobs (its sha256 verified)."""

    def __init__(self, store: BrowsingStore, session: Session):
        self.store, self.session = store, session

    def restore(self, into: Path, pool: InodePool | None = None) -> bool:
        sha = (self.session.snapshot or {}).get("sha256")
        if not sha:
            return False
        data = self.store.get_blob(sha)
        if data is None:
            raise Unavailable(NO_SNAPSHOT_IN_STORE, f"the session's workspace snapshot {sha[:12]} is missing from the store")
        _restore_verified(data, sha, into, pool)
        return True


class SnapshotFile:
    """A snapshot tar a report folder carries (`--report-dir`), verified against the session's sha256."""

    def __init__(self, path: Path, sha: str):
        self.path, self.sha = path, sha

    def restore(self, into: Path, pool: InodePool | None = None) -> bool:
        try:
            data = self.path.read_bytes()
        except OSError as exc:
            raise Unavailable(SNAPSHOT_CORRUPT, f"the session's workspace snapshot could not be restored: {exc}") from None
        _restore_verified(data, self.sha, into, pool)
        return True


class NoWorkspace:
    """A source that has no workspace to give, for a reason the check's verdict names."""

    def __init__(self, cause: str | None = None, why: str = ""):
        self.cause, self.why = cause, why

    def restore(self, into: Path, pool: InodePool | None = None) -> bool:
        if self.cause is None:
            return False
        raise Unavailable(self.cause, self.why)


def _restore_verified(data: bytes, sha: str, into: Path, pool: InodePool | None) -> None:
    from benchtape.sandbox.snapshot import restore  # only when a check reads the workspace: most gradings never do

    try:
        restore(data, into, sha256=sha, pool=pool)  # refuses a blob or tar whose content is not the recorded one
    except (BadInput, OSError, tarfile.TarError, ValueError) as exc:  # a corrupt or hostile snapshot
        raise Unavailable(SNAPSHOT_CORRUPT, f"the session's workspace snapshot could not be restored: {exc}") from None


class _Host:
    """One session's grading place, opened lazily: the workspace is restored, and the grading
    sandbox started, when a check first asks; a failure is remembered and raised again for
    every later check that asks, so each gets the same wording."""

    def __init__(self, stack: ExitStack, source: WorkspaceSource, session: Session, sandbox: GradingSandbox | None, bench_dir: Path | None, resources: RunResources | None = None):
        self.stack, self.source, self.session, self.sandbox, self.bench_dir = stack, source, session, sandbox, bench_dir
        self.resources = resources
        self._work: Path | None = None
        self._restored = False
        self._host: GradingHost | None = None
        self._failed: Unavailable | None = None

    def work_dir(self) -> Path | None:
        if not self._restored:
            self._restored = True
            pool = self.resources.pool if self.resources is not None else None
            temp = Path(pool.temp_dir("benchtape-grade-") if pool is not None else tempfile.mkdtemp(prefix="benchtape-grade-"))  # from the run's folders made ahead, when it has some
            park = self.resources.cleanup.park if self.resources is not None else later
            self.stack.callback(park, partial(remove_tree, temp))  # no recursion (an agent may leave a 2,500-deep tree); off the grading's path
            try:
                self._work = temp / "work" if self.source.restore(temp / "work", pool) else None
            except Unavailable as exc:
                self._failed = exc
        if self._failed is not None:
            raise self._failed
        return self._work

    def grading_host(self) -> GradingHost:
        if self._host is None:
            work = self.work_dir()
            if work is None:
                from benchtape.sandbox.local import LocalGrading  # nothing to mount: commands run in a temp dir on the host

                self._host = self.stack.enter_context(LocalGrading().open(Path(tempfile.gettempdir())))
            else:
                # where commands run is decided when a check first runs one (most gradings never do)
                from benchtape.sandbox.by_level import grading_sandbox_for

                sandbox = self.sandbox or grading_sandbox_for(self.session.started)
                self._host = self.stack.enter_context(sandbox.open(work, self.bench_dir))
        return self._host

    def transform_place(self) -> TransformPlace:
        """Where output transforms run. A container session's in its grading container (the
        workspace restored for it, as for any command there); any other's on the host, with
        the scrubbed grading environment, without restoring a workspace it does not read."""
        if self._host is None and self.sandbox is None:
            from benchtape.sandbox.by_level import grading_sandbox_for

            sandbox = grading_sandbox_for(self.session.started)
            from benchtape.sandbox.local import LocalGrading

            if isinstance(sandbox, LocalGrading):
                here = self.bench_dir if self.bench_dir is not None else Path(tempfile.gettempdir())
                host = self.stack.enter_context(sandbox.open(here, self.bench_dir))
                return TransformPlace(host.run, host.interpreter, here)
        host = self.grading_host()
        work = self.work_dir()
        return TransformPlace(host.run, host.interpreter, work if work is not None else Path(tempfile.gettempdir()))

    def run(self, *args: Any, **kwargs: Any) -> Any:
        return self.grading_host().run(*args, **kwargs)

    def interpreter(self, name: str) -> list[str] | None:
        return self.grading_host().interpreter(name)


def _session_transforms(session: Session, checks: Sequence[Check], context: GradingContext, host: _Host) -> SessionTransforms | None:
    """The session's output transforms (the scenario's and every check's), to run together;
    None when there are none, which costs a grading nothing."""
    wanted = [t for c in checks for t in c.transforms]
    if context.transform:
        wanted.insert(0, context.transform)
    if not wanted:
        return None
    return SessionTransforms(wanted, session.final_output, {"vars": dict(context.vars), "prompt": session.prompt}, host.transform_place, context.runtimes, context.bench_dir)


Peers = Mapping[str, "tuple[Session, WorkspaceSource]"]  # a multi-provider scenario's sessions by label, in `providers:` order


def grade_session(
    session: Session,
    checks: Sequence[Check],
    source: WorkspaceSource,
    context: GradingContext,
    *,
    paths: Sequence[str] | None = None,
    sandbox: GradingSandbox | None = None,
    peers: Peers | None = None,
) -> list[Verdict]:
    """Every check over one session: the one grading function.

    `source` says where the final workspace comes from; grading commands run where the
    session's own sandbox facts say (`sandbox` overrides, for tests). `paths` are the checks'
    places in their scenario (default `checks[i]`). `peers`: the sessions of a multi-provider
    scenario (this one among them), each graded with its own workspace when a composite that
    compares them asks (replay/provider_peers.py finds them).
    """
    places = paths if paths is not None else _default_places(len(checks))
    task = task_of(session)
    if task is not None:  # a task cell: its verdict is the hidden verifier's, added here once (never a check a bench or a stored spec builds)
        kept = [(p, c) for p, c in zip(places, checks) if c.type != TASK_VERIFY]
        places, checks = [p for p, _ in kept], [c for _, c in kept]
    with ExitStack() as stack:
        graded, ctx = _graded_context(stack, session, checks, source, context, sandbox)
        if peers is not None and len(peers) > 1:
            ctx.peers = {label: _peer(stack, session, graded, ctx, checks, peer, peer_source, context, sandbox) for label, (peer, peer_source) in peers.items()}
        verdicts = [Verdict(place, c, c.evaluate(graded, ctx)) for place, c in zip(places, checks)]
    if task is not None:
        verdicts.append(task_verify(session, source, task))
    return verdicts


def checks_read_output_only(checks: Sequence[Check]) -> bool:
    """Whether every check reads only what a session without its calls has (each one's
    registered `reads`: checks/registry.reads_output_only): a session graded by them alone may
    be read without its calls (`stored_session`)."""
    from benchtape.checks.registry import reads_output_only

    return bool(checks) and all(reads_output_only(c.info.reads) for c in checks)


def stored_session(store: GradingStore, row: SessionRow, output_only: bool) -> Session:
    """A stored session as its checks need it: for output checks (`checks_read_output_only`, and
    nothing else of the grading reading more), its projection without its calls (BULK_KINDS:
    ~nine rows in ten, never read); the whole session when that could answer differently (a
    delegation to a subagent) or a task cell's verifier reads it. `regrade` and `grade` read
    sessions through this one choice."""
    from benchtape.core.model import BULK_KINDS, output_complete

    if output_only:
        partial = store.load_session(row.id, row, skip=BULK_KINDS)
        if output_complete(partial) and task_of(partial) is None:
            return partial
    return store.load_session(row.id, row)


# ---------------------------------------------------------------- a task cell's verdict

TASK_VERIFY = "task:verify"  # the verdict of a task cell's hidden verifier: its type and its place
CANDIDATE_UNAVAILABLE = "candidate_unavailable"
STATUS_OF = {"passed": PASS, "failed": FAIL, "no_changes": FAIL, "guard_violation": FAIL, "patch_apply_failed": FAIL}  # else ERROR: timeout, infrastructure_error


def task_facts(verdicts: Sequence[Verdict]) -> dict[str, Any]:
    """What a task cell's outcome row keeps of its `task:verify` verdict, live or regraded
    alike: the task, the fingerprint it was graded against, the candidate patch's sha256
    (compare's `uncarried` reads it); {} for a bench scenario's verdicts."""
    task = next((v.result.evidence for v in verdicts if v.check_path == TASK_VERIFY), None)
    if not task:
        return {}
    return {"task": task.get("task"), "fingerprint": task.get("fingerprint"), "candidate": (task.get("candidate") or {}).get("sha256")}


def task_of(session: Session) -> dict[str, Any] | None:
    """The task a task cell's session.started names (the contract: kind, id, folder,
    fingerprint); None for any other session (a bench scenario's, a validation's)."""
    task = session.task  # folded from session.started: asking costs no Action (a regrade of a bench makes none)
    return task if task is not None and task.get("folder") else None


def task_verify(session: Session, source: WorkspaceSource, task: Mapping[str, Any]) -> Verdict:
    """A task cell's one verdict (`task:verify`): the candidate patch (final workspace against
    the tree the agent started from, from the store alone), stored as a blob the verdict names,
    through the task as it is NOW at the level the session ran at (replay/task_verdict.py).
    PASS only for `passed`; FAIL for the agent's failures (failed, no_changes, guard_violation,
    patch_apply_failed; a partial Harbor reward, or the share of FAIL_TO_PASS tests passed,
    kept as the score); ERROR when the verifier
    could not decide (timeout, infrastructure_error), so `scenario_status` and the cell's
    outcome agree."""
    from benchtape.replay.changes import NoDiff, task_candidate
    from benchtape.replay.task_verdict import INFRASTRUCTURE_ERROR, grade_recorded

    level = "container" if session.started.get("sandbox") == "container" else "home"
    ref = {k: task.get(k) for k in ("kind", "id", "folder", "fingerprint")}
    store = source.store if isinstance(source, StoredSnapshot) else None
    if store is None:
        result = Result.error("a task cell is graded from the store (its candidate patch is derived from the stored snapshots); this source has none", {"unavailable": CANDIDATE_UNAVAILABLE, "outcome": INFRASTRUCTURE_ERROR, "task": ref})
        return Verdict(TASK_VERIFY, _task_check(ref, None), result)
    step = task.get("step") if isinstance(task.get("step"), dict) else None
    steps: list[bytes] | None = None
    unstarted = unstarted_step(session, step)
    try:
        if step is None:
            changes = task_candidate(store, session)
        else:  # a multi-step task: the workspace after each step, its verifiers run in turn
            steps, changes = _step_candidates(store, session, step, ran=unstarted is None)
    except NoDiff as exc:
        result = Result.error(str(exc), {"unavailable": CANDIDATE_UNAVAILABLE, "outcome": INFRASTRUCTURE_ERROR, "task": ref})
        return Verdict(TASK_VERIFY, _task_check(ref, None), result)
    candidate = changes.patch.encode("utf-8")
    # content-addressed, append-only: the same candidate is one blob however often graded (a
    # read-only store, `verify --sample`, keeps what it has: the verdict names the sha either way)
    # (a snapshot's store is typed for reading; one not opened read-only is the whole Store, which writes)
    sha = hashlib.sha256(candidate).hexdigest() if store.readonly else cast("GradingStore", store).put_blob(candidate)
    verdict, fingerprint = grade_recorded(ref, candidate, level=level, steps=steps, unstarted=unstarted)
    evidence = {
        **verdict.evidence,
        "outcome": verdict.outcome,
        "task": ref,
        "fingerprint": fingerprint,
        "recorded_fingerprint": ref.get("fingerprint"),
        "candidate": {"sha256": sha, "bytes": len(candidate), "added": changes.added, "modified": changes.modified, "removed": changes.removed},
        "level": verdict.evidence.get("level", level),
    }
    reason = verdict.reason + (_failed_edits(session) if verdict.outcome == "no_changes" else "")
    status = STATUS_OF.get(verdict.outcome, ERROR)
    # a FAIL's score is its partial credit: a Harbor reward, or the share of FAIL_TO_PASS tests passed
    score = 1.0 if status == PASS else float(evidence.get("reward") or evidence.get("fail_to_pass_share") or 0.0) if status == FAIL else 0.0
    return Verdict(TASK_VERIFY, _task_check(ref, fingerprint), Result(status, score, reason, evidence))


def _failed_edits(session: Session) -> str:
    """Why an agent that changed nothing may have: its edit and write calls (every harness's, by
    canonical action) that all ended in an error, the first one's words given (Claude Code's
    default permission mode refuses each edit in --print mode: "Claude requested permissions
    to write ..., but you haven't granted it yet")."""
    tried = [c for c in session.calls if c.canonical.action in ("edit", "write")]
    failed = [c for c in tried if c.is_error]
    if not failed or len(failed) < len(tried):
        return ""
    first = next((text for c in failed for text in [text_of(c.output)] if text), "")
    said = f": {first.strip().splitlines()[0][:200]!r}" if first.strip() else ""
    return f" (its {len(failed)} edit call(s) all failed{said})"


def _step_candidates(store: BrowsingStore, session: Session, step: Mapping[str, Any], ran: bool = True) -> tuple[list[bytes], Changes]:
    """A multi-step task's candidates, one per step that ran (the earlier steps' sessions, named
    in `task.step.earlier`, then this one unless its agent never started: `ran`), each measured
    from the cell's starting tree; and the last one's changes (the final candidate)."""
    from benchtape.replay.changes import step_candidate

    earlier = [store.load_session(sid) for sid in step.get("earlier") or []]  # one missing has no snapshot: NoDiff names it
    first = earlier[0] if earlier else session
    changes = [step_candidate(store, s, first) for s in [*earlier, *([session] if ran else [])]]
    return [c.patch.encode("utf-8") for c in changes], changes[-1]


def unstarted_step(session: Session, step: Mapping[str, Any] | None) -> str | None:
    """Why a multi-step task's later step never started its agent (its setup.sh or healthcheck
    failed after the earlier steps ran: recorder/cellrun._step_refused), else None. Whether
    that is the cell's outcome is the verifiers' to say: when an earlier step's rewards stop
    the steps after it, Harbor never reaches this one."""
    if step is None or not step.get("earlier"):
        return None
    for action in session.actions:
        if action.kind == "error" and action.payload("error").get("cause") == "staging":
            return str(action.payload("error").get("message") or "its setup failed")
    return None


def _task_check(ref: Mapping[str, Any], fingerprint: str | None) -> Check:
    """The check-shaped half of a task verdict: its spec names the task and the fingerprint it
    was graded against, so `diff` across task versions shows the task changed (spec_a, spec_b)."""
    spec = CheckSpec(type=TASK_VERIFY, args={"kind": ref.get("kind"), "task": ref.get("id"), "fingerprint": fingerprint or ref.get("fingerprint")})
    return Check(spec, _TASK_INFO, _never_evaluated)


def _never_evaluated(session: Session, ctx: CheckContext) -> Result:
    return Result.error("a task verdict is decided by grade_session, never evaluated as a check")


_TASK_INFO = CheckInfo(type=TASK_VERIFY, family="task", summary="the task's hidden verifier on the candidate patch", reads="workspace", builder=lambda spec: _never_evaluated, kind="Code", reads_workspace=True)


def _graded_context(stack: ExitStack, session: Session, checks: Sequence[Check], source: WorkspaceSource, context: GradingContext, sandbox: GradingSandbox | None) -> tuple[Session, CheckContext]:
    """The session as checks see it (its output transformed where grading runs) and the context
    they read it in."""
    host = _Host(stack, source, session, sandbox, context.bench_dir, context.resources)
    transforms = _session_transforms(session, checks, context, host)
    graded = transformed(session, context.transform, transforms, "the scenario's") if context.transform and transforms is not None else session
    judge = context.judge
    ctx = CheckContext(
        bench_dir=context.bench_dir,
        vars=dict(context.vars),
        run_command=host.run,
        interpreter=host.interpreter,
        control=context.control,
        workspace=host.work_dir,
        judge=judge,
        catalog=getattr(judge, "catalog", None),
        runtimes=context.runtimes,
        transforms=transforms,
    )
    return graded, ctx


def _peer(stack: ExitStack, session: Session, graded: Session, ctx: CheckContext, checks: Sequence[Check], peer: Session, source: WorkspaceSource, context: GradingContext, sandbox: GradingSandbox | None) -> Callable[[Check], Result]:
    """A grader of one check on a provider's session: this session's own context, or the
    peer's (its workspace restored only if a check asks)."""
    if peer.id == session.id:
        return lambda check: check.evaluate(graded, ctx)
    made: list[tuple[Session, CheckContext]] = []

    def grade(check: Check) -> Result:
        if not made:
            made.append(_graded_context(stack, peer, checks, source, context, sandbox))
        view, peer_ctx = made[0]
        return check.evaluate(view, peer_ctx)

    return grade


def grade_stored(store: GradingStore, grading_id: str, session_id: str, checks: Sequence[Check], context: GradingContext, peers: Sequence[str] = ()) -> tuple[Session, list[Verdict]]:
    """Grade a stored session from the store alone and append its verdicts to the grading:
    what live grading (and the negative control) does as each session finishes. `peers`: the
    session ids of its multi-provider scenario's sessions (itself among them), in order."""
    session = store.load_session(session_id)
    found = {sid: session if sid == session_id else store.load_session(sid) for sid in peers}
    by_label = {(s.provider or sid): (s, StoredSnapshot(store, s)) for sid, s in found.items()}
    verdicts = grade_session(session, checks, StoredSnapshot(store, session), context, peers=by_label or None)
    store.add_verdicts(grading_id, session_id, [v.row() for v in verdicts])
    return session, verdicts


# ---------------------------------------------------------------- check sets and gradings


def check_path(index: int) -> str:
    """A check's place in its scenario: with its spec hash, what a verdict diff matches on."""
    return f"checks[{index}]"


@lru_cache(maxsize=64)
def _default_places(count: int) -> tuple[str, ...]:
    """`checks[0]`…: the same few tuples for every session a pass grades."""
    return tuple(check_path(i) for i in range(count))


def build_checks(specs: list[CheckSpec]) -> list[Check]:
    return [build(s) for s in specs]


def checkset_sha(specs_by_scenario: Mapping[str, list[CheckSpec]]) -> str:
    canon = {name: [spec_hash(s) for s in specs] for name, specs in sorted(specs_by_scenario.items())}
    return hashlib.sha256(orjson.dumps(canon, option=orjson.OPT_SORT_KEYS)).hexdigest()


def new_grading(
    store: GradingStore,
    source: str,
    specs_by_scenario: Mapping[str, list[CheckSpec]],
    *,
    bench_path: str | None,
    run_id: str | None = None,
    note: str | None = None,
    contexts: Mapping[str, GradingContext] | None = None,
) -> str:
    """A new grading; the per-scenario contexts are kept with it so it can be reproduced exactly."""
    grading_id = store.new_grading(source, checkset_sha256=checkset_sha(specs_by_scenario), catalog_version=CATALOG_VERSION, bench_path=bench_path, run_id=run_id, note=note)
    if contexts:
        store.add_grading_scenarios(grading_id, {name: ctx.to_dict() for name, ctx in contexts.items()})
    return grading_id


# ---------------------------------------------------------------- the scenario rule


# A session's statuses that say the harness did not run to its end, or not all it printed was recorded.
UNFINISHED = frozenset({"error", "timeout", "interrupted", "truncated"})


def harness_ok(session: Session) -> bool:
    """The harness ran to its end and all it printed was recorded (a `truncated` session's
    verdicts would be judged on part of its output: they count as errored, never as passed)."""
    return session.finished and session.status not in UNFINISHED


def scenario_outcome(ok: bool, verdicts: Iterable[tuple[str, bool]]) -> str:
    """The scenario rule, over fresh or stored verdicts alike ((status, readout) pairs): `error`
    when the harness failed or a counting check errored; else `pass` iff every counting check
    (non-readouts, and readouts that errored) is PASS or NA; else `fail`."""
    if not ok:
        return "error"
    status = "pass"  # one pass (a regrade asks this of every session): any ERROR wins, then any not PASS/NA
    for got, readout in verdicts:
        if got == "ERROR":
            return "error"
        if not readout and got != "PASS" and got != "NA":
            status = "fail"
    return status


def scenario_status(verdicts: list[Verdict], session: Session) -> str:
    return scenario_outcome(harness_ok(session), ((v.result.status, v.check.readout) for v in verdicts))
