"""`benchtape report`: stored reports, as madbench's `report` has them (`list`, `show`,
`compare`, `trend` over a `--report-dir` folder), and a stored run as one static HTML page
(`report html`; the older spelling `report [RUN | --session S] --html FILE` still works: a
first word that is no subcommand is read as `html`'s)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer
from typer.core import TyperGroup

from benchtape.core.errors import BadInput
from benchtape.guard import command
from benchtape.options import Db, Json, Plain, SessionId, open_store, plain_wanted

SUBCOMMANDS = ("list", "show", "compare", "trend", "html")
ReportDir = typer.Option(None, "--report-dir", help="The folder `run --report-dir` wrote (default .reports).")


class _ReportGroup(TyperGroup):
    """`report RUN --html F` and `report --session S --html F` (the spelling before the
    subcommands) are `report html …`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["html", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(cls=_ReportGroup, help="Stored reports: list, show, compare, trend over a --report-dir folder; html: a stored run as one page.", no_args_is_help=True, add_completion=False, rich_markup_mode=None)


@app.command("list")
@command()
def list_cmd(report_dir: Path | None = ReportDir, as_json: Json = False, plain: Plain = False) -> int:
    """Every run's report in the folder, oldest first: run, when, bench, passed/total, complete or not.

    Example: benchtape report list --report-dir .reports
    """

    from benchtape import render_history
    from benchtape.app.reports import folder, reports_in

    where = folder(report_dir)
    found = reports_in(where)
    if as_json:
        render_history.emit([r.to_dict() for r in found])
    else:
        render_history.listing(where, found, plain_wanted(plain))
    return 0


@app.command("show")
@command()
def show_cmd(report: str = typer.Argument("latest", help="A report: its run id (a prefix), `latest`, or a path to RUN_ID.json / .jsonl / a --report-json file."), report_dir: Path | None = ReportDir, as_json: Json = False, plain: Plain = False) -> int:
    """One report: its summary, each scenario's outcome with its checks and metrics, the run's metrics.

    Example: benchtape report show latest --report-dir .reports
    """

    from benchtape import render_history
    from benchtape.app.reports import find

    reports, where = _reports(report_dir, report)
    picked = find(reports, report, where)
    if as_json:
        render_history.emit(picked.document())
    else:
        render_history.one(picked, plain_wanted(plain))
    return 0


@app.command("compare")
@command()
def compare_cmd(a: str = typer.Argument(..., help="The earlier report (run id prefix, `latest`, or path)."), b: str = typer.Argument("latest", help="The later report (default: the latest)."), report_dir: Path | None = ReportDir, as_json: Json = False, plain: Plain = False) -> int:
    """What changed between two reports: each scenario's outcome in both, the checks that flipped, the metrics side by side.

    Example: benchtape report compare 01J8… latest --report-dir .reports
    """

    from benchtape import render_history
    from benchtape.app.reports import compare, find

    reports, where = _reports(report_dir, a, b)
    diff = compare(find(reports, a, where), find(reports, b, where))
    if as_json:
        render_history.emit(diff)
    else:
        render_history.comparison(diff, plain_wanted(plain))
    return 0


@app.command("trend")
@command()
def trend_cmd(report_dir: Path | None = ReportDir, scenario: str | None = typer.Option(None, "--scenario", help="Only this scenario."), as_json: Json = False, plain: Plain = False) -> int:
    """Run after run: each report's pass rate and metrics, and each scenario's outcome in every run.

    Example: benchtape report trend --report-dir .reports --scenario fixes-the-bug
    """

    from benchtape import render_history
    from benchtape.app.reports import folder, reports_in, trend

    found = trend(reports_in(folder(report_dir)), scenario)
    if scenario is not None and scenario not in found["scenarios"]:
        raise BadInput(f"no report in the folder has a scenario {scenario!r}", fix="scenarios: " + (", ".join(sorted(trend(reports_in(folder(report_dir)))["scenarios"])) or "none"))
    if as_json:
        render_history.emit(found)
    else:
        render_history.trend(found, plain_wanted(plain))
    return 0


def _reports(report_dir: Path | None, *refs: str) -> tuple[list[Any], Path]:
    """The folder's reports, unless every report is named by its path (then no folder is needed)."""
    from benchtape.app.reports import DEFAULT_DIR, folder, reports_in

    if all(Path(r).suffix in (".json", ".jsonl") and Path(r).is_file() for r in refs):
        return [], report_dir or DEFAULT_DIR
    where = folder(report_dir)
    return reports_in(where), where


@app.command("html")
@command()
def html_cmd(
    run: str | None = typer.Argument(None, help="The run (id prefix or `latest`): every session of it."),
    session: SessionId = None,
    html: Path = typer.Option(..., "--html", help="Write the HTML page here (one file: inline CSS, no scripts, no network)."),
    db: Db = None,
) -> int:
    """Write a run's sessions (or one session) as one static HTML page: a per-scenario summary,
    an index, then per session its verdicts, what the agent changed, metrics, timeline and output.

    Example: benchtape report html latest --html run.html   ·   benchtape report --session 01J… --html s.html
    """

    from benchtape.app.preflight import check_outputs
    from benchtape.app.reports import write_text_atomic
    from benchtape.app.sessions import Selection, resolve, rows, sessions
    from benchtape.replay.html import Entry, render

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
        assert run is not None  # exactly one of run and session: refused above otherwise
        run_id = resolve(store, "runs", run)
        run_row, title, selected = store.run(run_id), None, Selection(run=run_id)

    page = render(run_row, (Entry.of(store, r, s) for r, s in sessions(store, rows(store, selected))), title=title)
    try:
        write_text_atomic(html, page)
    except OSError as exc:
        raise BadInput(f"cannot write the report: {exc.strerror or exc}", file=str(html), fix="pass a writable path to --html") from None
    print(html)
    return 0


def register(root: typer.Typer) -> None:
    root.add_typer(app, name="report")
