"""`benchtape export`: a session's final workspace (or its staged tree) as a folder, to open,
run or diff with your own tools; or sessions in the field's interchange formats: ATIF
trajectories (Harbor's) and Inspect AI eval logs (to open in `inspect view`)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

from benchtape.guard import command
from benchtape.options import Db, open_store

if TYPE_CHECKING:
    from benchtape.app.sessions import BrowsingStore

FORMATS = ("workspace", "atif", "inspect", "otlp")


@command()
def export_cmd(
    session: str | None = typer.Argument(None, help="The session: an id prefix, `latest`, or RUN/SCENARIO#N."),
    folder: Path | None = typer.Argument(None, help="workspace: a new (or empty) folder to write the workspace into (or give -o)."),
    fmt: str = typer.Option("workspace", "--format", "-f", help="workspace (the session's files), atif (its ATIF trajectory, as Harbor records trials) inspect (Inspect AI .eval logs, one per setup; needs benchtape[inspect]) or otlp (OpenTelemetry traces under the GenAI conventions; needs benchtape[otlp])."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Where to write: atif, a .json file for one session (default: stdout) or a new folder for --run/--all; inspect, a folder (one .eval log per setup, named as Inspect names its logs) or a .eval file (one setup); otlp, an OTLP/JSON file."),
    run: str | None = typer.Option(None, "--run", help="atif, inspect: every session of this run (an id prefix or `latest`)."),
    all_: bool = typer.Option(False, "--all", help="atif, otlp: every stored session (negative-control runs left out)."),
    endpoint: str | None = typer.Option(None, "--endpoint", help="otlp: the OTLP/HTTP receiver to send the traces to (e.g. http://127.0.0.1:6006 for Phoenix; /v1/traces is added to a bare address)."),
    staged: bool = typer.Option(False, "--staged", help="workspace: write the tree as staged, before the agent ran, instead of its final workspace."),
    db: Db = None,
) -> int:
    """Write a session's final workspace into a new folder, or sessions as ATIF trajectories or an Inspect log.

    Example: benchtape export latest /tmp/ws && cd /tmp/ws && python3 -m unittest

    Example: benchtape export latest --format atif -o trajectory.json

    Example: benchtape export --format inspect --run latest -o logs/ && inspect view --log-dir logs

    Example: benchtape export --format otlp --run latest --endpoint http://127.0.0.1:6006
    """

    from benchtape.core.errors import BadInput

    if fmt not in FORMATS:
        harbor = "; a task goes to Harbor as a task folder: benchtape task export ID --format harbor -o FOLDER" if fmt.lower() == "harbor" else ""
        raise BadInput(f"unknown export format {fmt!r}", fix=f"use one of {', '.join(FORMATS)}{harbor}")
    picked = [name for name, given in (("SESSION", session), ("--run", run), ("--all", all_)) if given]
    if len(picked) != 1:
        raise BadInput(f"export takes one of SESSION, --run or --all (got {', '.join(picked) or 'none'})", fix="name a session, or pass --run RUN (or --all, for atif)")
    if folder is not None and output is not None:
        raise BadInput("give the destination once: as the folder argument or as -o", fix="drop one of them")
    dest = output or folder
    if fmt == "workspace":
        return _workspace(session, dest, picked[0], staged, db)
    if staged:
        raise BadInput("--staged is for a workspace export", fix="drop --staged, or pass --format workspace")
    store = open_store(db, must_exist=True, readonly=True)
    if endpoint is not None and fmt != "otlp":
        raise BadInput("--endpoint is for an otlp export", fix="drop --endpoint, or pass --format otlp")
    if fmt == "atif":
        return _atif(store, session, run, all_, dest)
    if fmt == "otlp":
        return _otlp(store, session, run, all_, dest, endpoint)
    return _inspect(store, session, run, all_, dest)


def _workspace(session: str | None, dest: Path | None, picked: str, staged: bool, db: Db) -> int:
    from benchtape.app.exporting import export
    from benchtape.app.sessions import resolve
    from benchtape.core.errors import BadInput

    if picked != "SESSION":
        raise BadInput(f"a workspace export is of one session, not {picked}", fix="name the session, or pass --format atif|inspect to export several")
    if dest is None:
        raise BadInput("a workspace export needs a folder to write into", fix="benchtape export SESSION FOLDER")
    store = open_store(db, must_exist=True, readonly=True)
    sid = resolve(store, "sessions", session or "")
    files = export(store, store.load_session(sid), dest, staged=staged)
    print(f"wrote the {'staged tree' if staged else 'final workspace'} of session {sid} ({files} files) to {dest}")
    return 0


def _atif(store: BrowsingStore, session: str | None, run: str | None, all_: bool, dest: Path | None) -> int:
    import sys

    from benchtape.app.exporting import atif_document, write_atif_file, write_atif_folder
    from benchtape.app.sessions import Selection, resolve
    from benchtape.core.errors import BadInput

    if session:
        sid = resolve(store, "sessions", session)
        if dest is None:
            sys.stdout.buffer.write(atif_document(store, sid))
            return 0
        write_atif_file(store, sid, dest)
        print(f"wrote the ATIF trajectory of session {sid} to {dest}")
        return 0
    if dest is None:
        raise BadInput("exporting several sessions as ATIF needs a folder to write them into", fix="add -o FOLDER (a new or empty folder: one <session id>.json each)")
    selection = Selection(run=resolve(store, "runs", run)) if run else Selection(all=all_)
    written = write_atif_folder(store, selection, dest)
    print(f"wrote {len(written)} ATIF trajector{'y' if len(written) == 1 else 'ies'} to {dest}")
    return 0


def _inspect(store: BrowsingStore, session: str | None, run: str | None, all_: bool, dest: Path | None) -> int:
    from benchtape.app.exporting import write_inspect_logs
    from benchtape.app.sessions import Selection, resolve
    from benchtape.core.errors import BadInput

    if all_:
        raise BadInput("an Inspect log holds one run's sessions, not the whole store", fix="pass --run RUN (or a session)")
    if dest is None:
        raise BadInput("an Inspect export needs somewhere to write the log", fix="add -o FILE.eval, or -o FOLDER (the log is named as Inspect names its logs)")
    selection = Selection(session=resolve(store, "sessions", session)) if session else Selection(run=resolve(store, "runs", run or ""))
    paths, samples = write_inspect_logs(store, selection, dest)
    logs = "an Inspect log" if len(paths) == 1 else f"{len(paths)} Inspect logs (one per setup)"
    print(f"wrote {logs} of {samples} session{'' if samples == 1 else 's'} to {paths[0] if len(paths) == 1 else paths[0].parent}\n  view it: inspect view --log-dir {paths[0].parent}")
    return 0


def _otlp(store: BrowsingStore, session: str | None, run: str | None, all_: bool, dest: Path | None, endpoint: str | None) -> int:
    from benchtape.app.exporting import write_otlp
    from benchtape.app.sessions import Selection, resolve
    from benchtape.core.errors import BadInput

    if endpoint is None and dest is None:
        raise BadInput("an OpenTelemetry export needs a receiver or a file", fix="add --endpoint URL (an OTLP/HTTP receiver) or -o FILE (OTLP/JSON)")
    selection = Selection(session=resolve(store, "sessions", session)) if session else Selection(run=resolve(store, "runs", run)) if run else Selection(all=all_)
    count, spans = write_otlp(store, selection, endpoint=endpoint, dest=dest)
    where = " and ".join(w for w in (endpoint and f"sent to {endpoint}", dest and f"written to {dest}") if w)
    print(f"{count} session{'' if count == 1 else 's'} as OpenTelemetry traces ({spans} spans) {where}")
    return 0


def register(app: typer.Typer) -> None:
    app.command("export")(export_cmd)
