"""The options many commands share, declared once, and what they resolve to.

A command names `db: Db = None` and gets the same flag, help and meaning as every other
command that takes a store; how `--param` becomes a mapping and `--plain` a rendering choice
is defined here and nowhere else (how `--db` becomes a store is the app layer's:
benchtape.app.stores, re-exported here for the commands).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from benchtape.app.stores import db_path, open_store  # noqa: F401 - how --db becomes a store: the app layer's, re-exported for the commands

Db = Annotated[Path | None, typer.Option("--db", help="SQLite store (default .benchtape/benchtape.db, or $BENCHTAPE_DB).")]
Json = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
Plain = Annotated[bool, typer.Option("--plain", help="Plain lines (implied when stderr is not a TTY or NO_COLOR is set).")]
Params = Annotated[list[str] | None, typer.Option("--param", help="Override a declared param: k=v (repeatable).")]
SessionId = Annotated[str | None, typer.Option("--session", help="Only this session: an id prefix, `latest`, or RUN/SCENARIO#N.")]
RunId = Annotated[str | None, typer.Option("--run", help="Only this run's sessions: an id prefix or `latest`.")]
Scenario = Annotated[str | None, typer.Option("--scenario", help="Only this scenario's sessions.")]
All = Annotated[bool, typer.Option("--all", help="Every stored session.")]
IncludeControls = Annotated[bool, typer.Option("--include-controls", help="Also the negative control's no-op sessions (left out of sets by default).")]
Full = Annotated[bool, typer.Option("--full", help="Show every text in full (the terminal shortens long ones, with a marker).")]
EnvFile = Annotated[Path | None, typer.Option("--env-file", help="Read variables from this dotenv file instead of ./.env (it must exist); never over a variable already set.")]
NoEnv = Annotated[bool, typer.Option("--no-env", help="Read no .env file (./.env is read by default when it exists).")]
Benches = Annotated[list[Path] | None, typer.Argument(help="Bench files or folders (a folder runs every *.yaml and case dir in it); default madbench.yaml here.")]




def parse_params(values: list[str] | None) -> dict[str, Any]:
    from benchtape.app.runs import parse_cli_param

    return dict(parse_cli_param(v) for v in values or [])


def plain_wanted(flag: bool) -> bool:
    from benchtape.render import plain_wanted as wanted

    return wanted(flag)


def selection(session: str | None = None, run: str | None = None, scenario: str | None = None, all_: bool = False, controls: bool = False) -> Any:
    from benchtape.app.sessions import Selection

    return Selection(session=session, run=run, scenario=scenario, all=all_, controls=controls)
