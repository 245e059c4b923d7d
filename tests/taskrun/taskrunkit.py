"""What the task-run tests share: reading a recorded run back from the store (real SQLite)."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path
from typing import Any

from benchtape.store.database import Store


def run_json(done: Any) -> dict[str, Any]:
    """The one JSON document `benchtape run … --json` printed."""
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def sessions(db: Path, run_id: str) -> list[dict[str, Any]]:
    """Every session of the run: its row, its session.started payload, tool calls, snapshots."""
    store = Store(db, readonly=True)
    try:
        return _sessions(store, run_id)
    finally:
        store.close()  # a reader left open across another process's writes would see a stale WAL index


def _sessions(store: Store, run_id: str) -> list[dict[str, Any]]:
    out = []
    for row in store.session_rows(run_id=run_id):
        actions = store.actions(row.id)
        snaps = [a.data for a in actions if a.kind == "workspace.snapshot"]
        out.append(
            {
                "row": row,
                "started": next(a.data for a in actions if a.kind == "session.started"),
                "calls": [a.data for a in actions if a.kind == "tool.call"],
                "results": [a.data for a in actions if a.kind == "tool.result"],
                "finished": next((a.data for a in actions if a.kind == "session.finished"), None),
                "baseline": snaps[0]["sha256"] if snaps else None,
                "final": snaps[-1]["sha256"] if len(snaps) > 1 else None,
            }
        )
    return out


def tree(db: Path, sha: str) -> dict[str, bytes]:
    """A stored snapshot's files: path → bytes."""
    store = Store(db, readonly=True)
    try:
        data = store.get_blob(sha)
    finally:
        store.close()
    assert data is not None
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name.removeprefix("./"): tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]
