"""What a killed benchtape left behind: its sessions finished, its sandboxes removed.

A `kill -9` (or a crash, or a power cut) of benchtape leaves, per session it was recording,
a session folder in the temp dir whose lock nobody holds any more: the harness's capture
files (what it printed, including lines benchtape had not read yet), session.json (which
database and session, the harness, the workspace, the container, the secrets'
fingerprints) and the workspace. Recovering one:

1. kills whatever still carries the session's marker (its supervisor normally did already)
   and removes its container;
2. appends to the session, in its own database, the capture lines the store does not have
   yet (parsed by the harness's adapter, redacted, within the output limits), a note saying
   so, the workspace snapshot, and `session.finished` with status `interrupted` and
   `recovered: true` — appended actions, never an update;
3. removes the folder (a `--keep-sandbox` workspace stays).

Also: a ~/.claude baseline whose owner died is put back (sandbox/home_guard.py),
and containers labelled with an owner process that is gone are removed. `benchtape recover`
runs all of this; so does the start of every run.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from benchtape.core.limits import output_limits
from benchtape.core.model import Action
from benchtape.core.payloads import SessionFinished
from benchtape.core.redact import redactor, secret_values
from benchtape.sandbox.capture import CaptureTail, Ending, SessionFolder, read_manifest, secrets_from, session_folders
from benchtape.sandbox.supervisor import MARKER, kill_marked

if TYPE_CHECKING:
    from benchtape.store.views import RecordingStore


def sweep(tmp: Path | None = None, *, containers: bool = False, only_db: Path | None = None, only_under: Path | None = None) -> list[str]:
    """Recover every orphaned session folder in the temp dir (only those recording into
    `only_db`, or into a store under the folder `only_under`, when given), restore orphaned
    ~/.claude baselines (and, with `containers`, remove containers whose owner is gone).
    Returns one line per thing done."""
    from benchtape.sandbox.home_guard import restore_orphans

    done: list[str] = []
    for path in session_folders(tmp):
        if _names_a_store(path) and not _chosen(path, only_db, only_under):
            continue  # another run's session: its own recover finishes it
        folder = SessionFolder.claim(path)
        if folder is None:
            continue  # its owner is alive (or another recover took it)
        try:
            done.append(recover_folder(folder))
        finally:
            folder.close(remove=not folder.facts.get("keep"))
    done += [f"put back {claude} (a killed workspace-level run had changed it)" for claude in restore_orphans(tmp)]
    if containers:
        from benchtape.sandbox.container import remove_orphan_containers

        done += [f"removed container {name} (its benchtape is gone)" for name in remove_orphan_containers()]
    return done


def _names_a_store(path: Path) -> bool:
    """Whether the folder records a session. One that names no store (a spare made ahead, a
    run's inode pool, a folder whose session never began) holds nothing to finish: any sweep
    removes it once its owner is gone, or a node's reaper or `recover --db` would skip it for
    good (a Ray node killed while its worker had a spare left one in the node's /tmp)."""
    return (read_manifest(path) or {}).get("db") is not None


def _chosen(path: Path, only_db: Path | None, only_under: Path | None) -> bool:
    if only_db is not None and not _records_into(path, only_db):
        return False
    return only_under is None or records_under(path, only_under)


def _records_into(path: Path, db: Path) -> bool:
    named = (read_manifest(path) or {}).get("db")
    return named is not None and os.path.realpath(named) == os.path.realpath(db)


def records_under(path: Path, folder: Path) -> bool:
    """Whether the session folder at `path` records into a store under `folder` (a node's shards)."""
    named = (read_manifest(path) or {}).get("db")
    return named is not None and Path(os.path.realpath(named)).is_relative_to(os.path.realpath(folder))


def recover_folder(folder: SessionFolder) -> str:
    """Finish one orphaned session (see the module docstring); returns what was done."""
    facts = folder.facts
    _wait_for_supervisor(facts.get("supervisor"))  # it is still draining the harness's last output into the capture
    killed = kill_marked(f"{MARKER}={folder.path.name}".encode())
    notes = [f"killed {killed} process(es) it left running"] if killed else []
    if facts.get("container"):
        notes.append(_remove_container(str(facts["container"])))
    session_id, db = facts.get("session_id"), facts.get("db")
    if facts.get("spare"):
        return f"removed {folder.path} ({facts['spare']}, made ahead by a benchtape that is gone)" + _joined(notes)
    if facts.get("purpose"):
        return f"removed {folder.path} (the scratch folder of `{facts['purpose']}`, killed before it ended)" + _joined(notes)
    if not session_id or not db:
        return f"removed {folder.path} (benchtape was killed before its session began)" + _joined(notes)
    if not Path(db).exists():
        return f"removed {folder.path}: its database {db} is gone, session {session_id} cannot be finished" + _joined(notes)
    from benchtape.store.database import Store

    store = Store(db, create=False)
    try:
        if store.finish_status(session_id) is not None:
            return f"removed {folder.path} (session {session_id} had finished)" + _joined(notes)
        added = ingest(store, folder)
    finally:
        store.close()
    return f"recovered session {session_id} into {db}: {added} line(s) from its capture file, finished as interrupted" + _joined(notes)


def ingest(store: RecordingStore, folder: SessionFolder) -> int:
    """Append what the capture file holds beyond the store's last raw line, then close the
    session. Returns how many lines were added."""
    from benchtape.recorder.recording import Recording, home_paths_of, workspace_snapshot
    from benchtape.store.database import Blob

    facts = folder.facts
    session_id = facts["session_id"]
    known, unmatched = secrets_from(facts.get("secrets") or [], dict(os.environ))
    redact = redactor(known + secret_values(os.environ, facts.get("secret_names") or []))
    store.set_redactor(session_id, redact)
    limits = output_limits()
    recording = Recording(store, session_id, _parser(facts), str(facts.get("harness")), limits, lambda kind, data: None)
    stored = store.raw_lines(session_id)
    for text in stored:  # the parser's state (open calls, threads) as the live recorder left it
        try:
            recording.parser.feed(text)
        except Exception:  # noqa: BLE001 - it failed live too, and said so then
            pass
    recording.budget.stored = sum(len(t) for t in stored)
    last = store.last_raw_line(session_id)
    ended = _exit(folder)
    end = ended.get("stdout_bytes")
    stdout = folder.file("stdout")
    if not stdout.exists():
        end = 0
    added = 0
    if stdout.exists():
        tail = CaptureTail(stdout, limits.line)
        try:
            for n, line in enumerate(tail.lines(lambda: end if end is not None else tail.size_now()), start=1):
                if n <= last:
                    continue
                added += 1
                recording.line_no = n
                if recording.budget.admit(n, line):
                    recording.store_line(n, line)
            late = max(0, tail.size_now() - end) if end is not None else 0
            rewrites = tail.rewrites
        finally:
            tail.close()
    else:
        late = rewrites = 0
    recording.finish(Ending(late, int(ended.get("leftovers_killed") or 0), rewrites))
    why = "benchtape was killed while recording this session"
    message = f"{why}; `benchtape recover` added the {added} line(s) the harness had written to its capture file after the last one stored"
    if unmatched:
        message += f" ({unmatched} of the session's secret values are not in this environment: those lines were redacted by credential shape only)"
    closing = [Action("error", {"message": message})]
    blobs: list[Blob] = []
    root = facts.get("root")
    if root and facts.get("level") != "none":
        closing += workspace_snapshot(store, Path(root), redact, leave_out=home_paths_of(facts.get("harness"), facts.get("home"), root), blobs=blobs)
    started, at = facts.get("started"), ended.get("at")
    finished: SessionFinished = {
        "status": "interrupted",
        "exit_code": ended.get("exit_code"),
        "timed_out": False,
        "wall_ms": (at - started) * 1000 if isinstance(started, (int, float)) and isinstance(at, (int, float)) else None,
        "recovered": True,
    }
    if recording.budget.truncated:
        finished["truncated"] = True
    closing.append(Action("session.finished", finished))
    store.append(session_id, closing, blobs=blobs)
    return added


def _parser(facts: dict[str, Any]) -> Any:
    from benchtape.adapters.base import get_adapter
    from benchtape.adapters.mock import MockAdapter

    harness = facts.get("harness") or "mock"
    return (MockAdapter(noop=bool(facts.get("noop"))) if harness == "mock" else get_adapter(harness)).parser()


def _exit(folder: SessionFolder) -> dict[str, Any]:
    """What the supervisor (JSON) or the container's wrapper ("CODE BYTES") wrote when the harness ended."""
    try:
        text = folder.file("exit").read_text().strip()
    except OSError:
        return {}
    if not text:
        return {}
    if text.startswith("{"):
        try:
            return dict(orjson.loads(text))
        except orjson.JSONDecodeError:
            return {}
    parts = text.split()
    try:
        return {"exit_code": int(parts[0]), "stdout_bytes": int(parts[1]), "at": os.stat(folder.file("exit")).st_mtime}
    except (IndexError, ValueError):
        return {}


def _wait_for_supervisor(pid: Any, timeout: float = 10.0) -> None:
    """A supervisor outlives benchtape by the moment it takes to kill the harness and write
    down where its output ended; recovering before that would miss the end."""
    if not isinstance(pid, int):
        return
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if b"supervisor_program.py" not in Path(f"/proc/{pid}/cmdline").read_bytes():
                return
        except OSError:
            return
        time.sleep(0.05)




def _remove_container(container_id: str) -> str:
    try:
        from benchtape.sandbox.container import connect

        client = connect(timeout=10)
        try:
            client.containers.get(container_id).remove(force=True, v=True)
        finally:
            client.close()
        return f"removed its container {container_id[:12]}"
    except Exception as exc:  # noqa: BLE001 - gone already, or no engine: nothing more to do here
        name = type(exc).__name__
        return f"its container {container_id[:12]} is gone" if name == "NotFound" else f"could not remove its container {container_id[:12]}: {exc}"


def _joined(notes: list[str]) -> str:
    return "; " + "; ".join(notes) if notes else ""
