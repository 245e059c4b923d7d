"""`benchtape export`: a session's final workspace (or its staged tree) as a folder, to open,
run or diff with your own tools."""

from __future__ import annotations

from pathlib import Path

import typer

from benchtape.guard import guarded
from benchtape.options import Db, open_store


def export_cmd(
    session: str = typer.Argument(..., help="The session: an id prefix, `latest`, or RUN/SCENARIO#N."),
    folder: Path = typer.Argument(..., help="A new (or empty) folder to write the workspace into."),
    staged: bool = typer.Option(False, "--staged", help="Write the tree as staged, before the agent ran, instead of its final workspace."),
    db: Db = None,
) -> None:
    """Write a session's final workspace, from its stored snapshot, into a new folder.

    Example: benchtape export latest /tmp/ws && cd /tmp/ws && python3 -m unittest
    """

    def body() -> int:
        from benchtape.replay.changes import export
        from benchtape.replay.select import resolve

        store = open_store(db, must_exist=True, readonly=True)
        sid = resolve(store, "sessions", session)
        files = export(store, store.load_session(sid), folder, staged=staged)
        print(f"wrote the {'staged tree' if staged else 'final workspace'} of session {sid} ({files} files) to {folder}")
        return 0

    guarded(body)


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
