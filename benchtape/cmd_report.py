"""`benchtape report`: a stored run (or one session) as a self-contained static HTML page."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from benchtape.guard import guarded
from benchtape.options import Db, SessionId, open_store
from benchtape.core.errors import BadInput


def report_cmd(
    run: Optional[str] = typer.Argument(None, help="The run (id prefix or `latest`): every session of it."),
    session: SessionId = None,
    html: Path = typer.Option(..., "--html", help="Write the HTML page here (one file: inline CSS, no scripts, no network)."),
    db: Db = None,
) -> None:
    """Write a run's sessions (or one session) as one static HTML page: a per-scenario summary,
    an index, then per session its verdicts, what the agent changed, metrics, timeline and output.

    Example: benchtape report latest --html run.html   ·   benchtape report --session 01J… --html s.html
    """

    def body() -> int:
        from benchtape.preflight import check_outputs
        from benchtape.replay.html import Entry, render
        from benchtape.replay.report import write_text_atomic
        from benchtape.replay.select import Selection, resolve, rows, sessions

        if (run is None) == (session is None):
            raise BadInput("give a run id or --session, exactly one", fix="list them with `benchtape sessions`")
        check_outputs({"--html": html})
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

        page = render(run_row, (Entry.of(store, r, s) for r, s in sessions(store, rows(store, selected))), title=title)
        try:
            write_text_atomic(html, page)
        except OSError as exc:
            raise BadInput(f"cannot write the report: {exc.strerror or exc}", file=str(html), fix="pass a writable path to --html") from None
        print(html)
        return 0

    guarded(body)


def register(app: typer.Typer) -> None:
    app.command("report")(report_cmd)
