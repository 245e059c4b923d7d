"""`benchtape --version`: the flag every command-line tool answers (beside `benchtape version`)."""

from __future__ import annotations

import typer


def _print_version(value: bool) -> None:
    if value:
        from benchtape.core.version import VERSION

        print(f"benchtape {VERSION}")
        raise typer.Exit(0)


def main_options(
    version: bool = typer.Option(False, "--version", callback=_print_version, is_eager=True, help="Print benchtape's version and exit."),
) -> None:
    """Benchmark agentic coding tools; record every run as an append-only event log in SQLite; grade it many times."""


def register(app: typer.Typer) -> None:
    app.callback()(main_options)
