"""Grading: one pass of a check set over stored sessions, appended as a grading and verdicts.

Grading always reads the stored session (the `Session` projection) and its stored
workspace snapshot, never in-memory run state, so a live grading and a re-grading
a month later see exactly the same input.
"""

from __future__ import annotations

import hashlib
import tarfile
import tempfile
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, ContextManager, Iterable, Iterator, Mapping

import orjson

from checks import CATALOG_VERSION, Check, CheckContext, build, spec_hash
from recorder.commands import CommandRunner, run_local
from recorder.model import CheckSpec, Result, Session
from recorder.errors import BadInput
from recorder.sandbox.snapshot import restore
from recorder.sandbox.trees import remove_tree
from recorder.store import Store


SandboxFactory = Callable[[Path], ContextManager[CommandRunner]]


@dataclass
class Verdict:
    check_path: str
    check: Check
    result: Result

    @property
    def counts(self) -> bool:
        """Whether the verdict decides the scenario: non-readouts, and readouts that errored."""
        return not self.check.readout or self.result.status == "ERROR"

    def row(self) -> dict[str, Any]:
        return {
            "check_path": self.check_path,
            "type": self.check.type,
            "metric": self.check.metric,
            "spec": self.check.spec.to_dict(),
            "spec_sha256": self.check.identity,
            "result": self.result,
            "readout": self.check.readout,
        }


def command_sandbox(session: Session) -> SandboxFactory | None:
    """A container session's exec checks run in a fresh container again when re-graded."""
    started = session.actions[0].data if session.actions and session.actions[0].kind == "session.started" else {}
    if started.get("sandbox") != "container" or not isinstance(started.get("container"), dict):
        return None
    from recorder.sandbox.container_run import grading_factory

    return grading_factory(started["container"])


def check_path(index: int) -> str:
    """A check's place in its scenario: with its spec hash, what a verdict diff matches on."""
    return f"checks[{index}]"


def build_checks(specs: list[CheckSpec]) -> list[Check]:
    return [build(s) for s in specs]


def checkset_sha(specs_by_scenario: Mapping[str, list[CheckSpec]]) -> str:
    canon = {name: [spec_hash(s) for s in specs] for name, specs in sorted(specs_by_scenario.items())}
    return hashlib.sha256(orjson.dumps(canon, option=orjson.OPT_SORT_KEYS)).hexdigest()


def harness_ok(session: Session) -> bool:
    return session.finished and session.status not in ("error", "timeout", "interrupted")


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


def transform_output(session: Session, transform: str | None) -> Session:
    """A scenario-level `transform:` rewrites the output before any check sees it."""
    if not transform:
        return session
    from checks.registry import apply_transform

    return session.with_output(apply_transform(transform, session.final_output))


@contextmanager
def restored_workspace(store: Store | None, session: Session, blob: bytes | None = None) -> Iterator[Path | None]:
    """The session's final workspace, restored from its snapshot into a fresh temp folder."""
    data = blob
    if data is None and store is not None and session.snapshot and session.snapshot.get("sha256"):
        data = store.get_blob(session.snapshot["sha256"])
    if not data:
        yield None
        return
    temp = Path(tempfile.mkdtemp(prefix="benchtape-grade-"))
    try:
        root = temp / "work"
        restore(data, root, sha256=(session.snapshot or {}).get("sha256"))
        yield root
    finally:
        remove_tree(temp)


def evaluate(
    session: Session,
    checks: list[Check],
    *,
    work_dir: Path | None,
    bench_dir: Path | None,
    vars: Mapping[str, Any] | None = None,
    transform: str | None = None,
    control: bool = False,
    run_command: CommandRunner = run_local,
) -> list[Verdict]:
    """Every check over one session: pure given the session and the workspace."""
    try:
        graded = transform_output(session, transform)
    except Exception as exc:  # noqa: BLE001 - a user expression may raise anything
        return errored(checks, f"the scenario's output transform failed: {exc}")
    ctx = CheckContext(work_dir=work_dir, bench_dir=bench_dir, vars=dict(vars or {}), run_command=run_command, control=control)
    return [Verdict(check_path(i), c, c.evaluate(graded, ctx)) for i, c in enumerate(checks)]


def grade_stored(
    store: Store,
    grading_id: str,
    session_id: str,
    checks: list[Check],
    *,
    bench_dir: Path | None,
    vars: Mapping[str, Any] | None = None,
    transform: str | None = None,
    control: bool = False,
    work_dir: Path | None = None,
    run_command: CommandRunner = run_local,
    sandbox_for: SandboxFactory | None = None,
) -> tuple[Session, list[Verdict]]:
    """Grade one stored session and append its verdicts to the grading.

    `sandbox_for(workspace)` (a container scenario's) yields the command runner exec-style
    checks use, so they run inside a fresh container, never on the host.
    """
    session = store.load_session(session_id)

    def run(root: Path | None) -> list[Verdict]:
        if sandbox_for is None or root is None:
            return evaluate(session, checks, work_dir=root, bench_dir=bench_dir, vars=vars, transform=transform, control=control, run_command=run_command)
        with ExitStack() as stack:
            try:
                contained = stack.enter_context(sandbox_for(root))
            except Exception as exc:  # noqa: BLE001 - e.g. the engine went away: the workspace checks could not run
                return only_session_checks(run(None), f"the grading container could not start: {exc}")
            return evaluate(session, checks, work_dir=root, bench_dir=bench_dir, vars=vars, transform=transform, control=control, run_command=contained)

    if work_dir is not None:
        verdicts = run(work_dir)
    else:
        with ExitStack() as stack:
            try:
                root = stack.enter_context(restored_workspace(store, session))
            except (BadInput, OSError, tarfile.TarError) as exc:  # e.g. the agent left a link out of its tree
                verdicts = only_session_checks(run(None), f"the session's workspace snapshot could not be restored: {exc}")
            else:
                verdicts = run(root)
    store.add_verdicts(grading_id, session_id, [v.row() for v in verdicts])
    return session, verdicts


def only_session_checks(verdicts: list[Verdict], why: str) -> list[Verdict]:
    """Keep the verdicts of checks that read only the session; the workspace readers ERROR for `why`."""
    return [v if not v.check.info.reads_workspace else Verdict(v.check_path, v.check, Result.error(why)) for v in verdicts]


def errored(checks: list[Check], why: str) -> list[Verdict]:
    """Every check's verdict an ERROR for one reason: nothing could be measured."""
    return [Verdict(check_path(i), c, Result.error(why)) for i, c in enumerate(checks)]


def new_grading(
    store: Store,
    source: str,
    specs_by_scenario: Mapping[str, list[CheckSpec]],
    *,
    bench_path: str | None,
    run_id: str | None = None,
    note: str | None = None,
    contexts: Mapping[str, Mapping[str, Any]] | None = None,
) -> str:
    """A new grading; `contexts` (scenario → {vars, transform, control}) is kept with it so the
    grading can be reproduced exactly (see `scenario_context`)."""
    grading_id = store.new_grading(source, checkset_sha256=checkset_sha(specs_by_scenario), catalog_version=CATALOG_VERSION, bench_path=bench_path, run_id=run_id, note=note)
    if contexts:
        store.add_grading_scenarios(grading_id, {name: dict(ctx) for name, ctx in contexts.items()})
    return grading_id


def scenario_context(vars: Mapping[str, Any] | None, transform: str | None, control: bool) -> dict[str, Any]:
    """What a grading used for one scenario besides the check specs."""
    return {"vars": dict(vars or {}), "transform": transform, "control": bool(control)}
