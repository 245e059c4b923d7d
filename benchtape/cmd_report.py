"""`benchtape report`: a stored run (or one session) as a self-contained static HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from benchtape.cli import guarded
from benchtape.options import Db, open_store
from recorder.errors import BadInput


def report_cmd(
    run: Optional[str] = typer.Argument(None, help="Run id (a unique prefix is enough): every session of it."),
    session: Optional[str] = typer.Option(None, "--session", help="Only this session (id prefix)."),
    html: Path = typer.Option(..., "--html", help="Write the HTML page here (one file: inline CSS, no scripts, no network)."),
    db: Db = None,
) -> None:
    """Write a run's sessions (or one session) as one static HTML page: verdicts, metrics, timeline, output.

    Example: benchtape report 01J… --html run.html   ·   benchtape report --session 01J… --html s.html
    """

    def body() -> int:
        from replay.html import Entry, render
        from replay.query import latest_verdicts
        from replay.report import write_text_atomic
        from replay.select import Selection, resolve, rows, sessions

        if (run is None) == (session is None):
            raise BadInput("give a run id or --session, exactly one", fix="list them with `benchtape sessions`")
        store = open_store(db, must_exist=True, readonly=True)
        if session is not None:
            sid = resolve(store, "sessions", session)
            row = store.session_row(sid)
            run_row = store.run(row.run_id) if row else None
            title = f"benchtape session {sid}"
            selected = Selection(session=sid)
        else:
            run_id = resolve(store, "runs", run)
            run_row, title, selected = store.run(run_id), None, Selection(run=run_id)
        entries = (Entry(r, s, latest_verdicts(store, r.id)) for r, s in sessions(store, rows(store, selected)))
        write_text_atomic(html, render(run_row, entries, title=title))
        print(html)
        return 0

    guarded(body)


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
