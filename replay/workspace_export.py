"""`benchtape export SESSION DIR`: a session's final workspace (or its staged tree) written
into a folder, through the same verified restore grading uses."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from benchtape.core.command_runner import Unavailable
from benchtape.core.errors import BadInput
from benchtape.core.model import VERIFIER_HARNESS, Session
from benchtape.replay.changes import never_had_workspace
from benchtape.replay.grading import StoredSnapshot
from benchtape.replay.report import new_folder
from benchtape.store.views import BrowsingStore


def export(store: BrowsingStore, session: Session, dest: Path, *, staged: bool = False) -> int:
    """Write the session's final workspace (or its staged tree) into `dest`, a new or empty
    folder; returns how many files. Written beside `dest` first and moved in, so a failure
    leaves nothing half-written."""
    snap = session.staged_snapshot if staged else session.snapshot
    what = "staged tree" if staged else "final workspace"
    imported = never_had_workspace(session)
    if imported is not None:
        fix = "its tree can be made again: `benchtape task validate` with the task's id runs the phase anew" if session.harness == VERIFIER_HARNESS else "run the scenario with `benchtape run` to record a workspace"
        raise BadInput(f"{imported}, so there is no {what} to export", fix=fix)
    if not snap:
        raise BadInput(f"session {session.id} has no {what} snapshot to export", fix="only sessions recorded since benchtape kept the staged tree have one" if staged else "the session never finished, or its snapshot failed: see `benchtape show`")
    with new_folder(dest) as tmp:
        try:
            StoredSnapshot(store, replace(session, snapshot=snap)).restore(tmp)
        except Unavailable as exc:
            raise BadInput(str(exc), fix="the stored snapshot cannot be restored; re-run the session") from None
    return int(snap.get("files") or 0)
