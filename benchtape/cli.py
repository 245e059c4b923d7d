"""The benchtape command line: the app, the one place errors become exit codes, and the
explicit list of command modules. Each command parses options, calls one library function
and hands the result to one renderer; nothing here knows the domain."""

from __future__ import annotations

import sys
from typing import Callable

import typer

from recorder.errors import BenchtapeError, ExitCode
from recorder.version import VERSION

app = typer.Typer(
    name="benchtape",
    help="Benchmark agentic coding tools; record every run as an append-only event log in SQLite; grade it many times.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body; an error meant for the user is printed and becomes its exit code."""
    try:
        code = fn()
    except BenchtapeError as exc:
        text = exc.render()
        print(text if exc.exit_code != ExitCode.BAD_INPUT else f"error: {text}", file=sys.stderr)
        code = exc.exit_code
    except KeyboardInterrupt:
        print("interrupted: what was recorded stays recorded", file=sys.stderr)
        code = ExitCode.INTERRUPTED
    raise typer.Exit(int(code))


def version_cmd() -> None:
    """Print benchtape's version.

    Example: benchtape version
    """
    print(f"benchtape {VERSION}")


def build() -> typer.Typer:
    """Register every command module on the app, explicitly (see benchtape/commands.py)."""
    from benchtape.commands import register_all

    if not getattr(app, "_registered", False):
        app.command("version")(version_cmd)
        register_all(app)
        app._registered = True  # type: ignore[attr-defined]
    return app


def main() -> None:
    build()()


if __name__ == "__main__":
    main()
