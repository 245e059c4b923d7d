"""`benchtape view`: the store in a browser, live and read-only, on this machine only unless
`--host` says otherwise."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from benchtape.guard import command
from benchtape.options import Db, db_path, open_store

PORT = 8737
LOOPBACK = ("127.0.0.1", "localhost", "::1")


@command()
def view_cmd(
    db: Db = None,
    port: int = typer.Option(PORT, "--port", min=0, max=65535, help="The port to serve on (0: any free port)."),
    open_: bool = typer.Option(False, "--open", help="Open the viewer in your browser."),
    host: str = typer.Option("127.0.0.1", "--host", help="The address to serve on (default loopback only; any other is reachable by others: a warning says so)."),
) -> int:
    """Browse the store in a browser: runs and sessions (live as `benchtape run` records), a
    session's timeline, diff and verdicts, evaluations' matrices, grading diffs. Read-only.

    Every page has a stable URL and a JSON twin (`?format=json`) equal to the CLI's `--json`.
    Example: benchtape view --open   ·   benchtape view --db runs.db --port 0
    """

    from benchtape.view.serving import listen, serve, url_of
    from benchtape.view.viewer import Viewer

    open_store(db, must_exist=True, readonly=True).close()  # a path that is no store: exit 2 now, not per page
    sock = listen(host, port)
    url = url_of(sock)
    if host not in LOOPBACK:
        print(f"warning: serving on {host}: anyone who can reach this address can read the store (there is no login); the default, 127.0.0.1, is this machine only", file=sys.stderr)

    def ready() -> None:  # serving, Ctrl-C handled: the URL works, and a Ctrl-C now stops it
        print(f"benchtape view: {url}  (store {db_path(db)}; read-only; Ctrl-C to stop)", flush=True)
        if open_:
            import webbrowser

            webbrowser.open(url)

    try:
        serve(Viewer(db_path(db).resolve(), Path.cwd()), sock, host, ready)
    except KeyboardInterrupt:  # uvicorn shuts down gracefully, then re-raises the signal it caught
        print("benchtape view: stopped", file=sys.stderr)
    return 0


def register(app: typer.Typer) -> None:
    app.command("view")(view_cmd)
