"""The benchtape command line: the app, the one place errors become exit codes, and the
explicit list of command modules. Each command parses options, calls one library function
and hands the result to one renderer; nothing here knows the domain.

Nothing heavy is imported at module level: `benchtape version`, `--version` and bare
`--help` are answered by `fast_path` before typer (and the pydantic adapters it builds per
parameter) is imported, so they cost about what a bare interpreter does.
"""

from __future__ import annotations

import os
import sys
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

HELP = "Benchmark agentic coding tools; record every run as an append-only event log in SQLite; grade it many times."

_app: typer.Typer | None = None




def version_cmd() -> None:
    """Print benchtape's version.

    Example: benchtape version
    """
    print(version_line())


def version_line() -> str:
    from benchtape.core.version import VERSION

    return f"benchtape {VERSION}"


def build(command: str | None = None) -> typer.Typer:
    """The app with every command module registered, explicitly (see benchtape/command_table.py),
    made once a process. With `command`, a new app holding only the module that registers that
    command (what `main` runs: `benchtape sessions` never imports the run or task code); the
    full app when no module holds it."""
    global _app
    if command is None and _app is not None:
        return _app
    import typer

    from benchtape import typer_coercion
    from benchtape.command_table import register_all, register_for

    typer_coercion.install()

    app = typer.Typer(
        name="benchtape",
        help=HELP,
        no_args_is_help=True,
        add_completion=False,
        rich_markup_mode=None,
        pretty_exceptions_enable=False,
    )
    app.command("version")(version_cmd)
    if command is not None and register_for(app, command):
        return app
    if _app is not None:
        return _app
    register_all(app)
    _app = app
    return app


def _help_width_is_cached() -> bool:
    """True when typer would lay the help out as the cached text is: click caps it at 80
    columns, so any terminal (or COLUMNS) at least that wide gives the same text."""
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit():
        return int(columns) >= 80
    stdout = sys.__stdout__
    if stdout is None:
        return True  # no stdout at all: as not a terminal
    try:
        return os.get_terminal_size(stdout.fileno()).columns >= 80
    except (AttributeError, ValueError, OSError):
        return True  # not a terminal: shutil's fallback is 80 columns


def fast_path(argv: list[str]) -> int | None:
    """Answer the commands that need no parsing without importing typer; None otherwise."""
    if argv in (["version"], ["--version"]):
        print(version_line())
        return 0
    if argv in ([], ["--help"]) and _help_width_is_cached():
        from benchtape import _help

        if argv:
            sys.stdout.write(_help.TEXT + harness_section())
            return 0
        sys.stderr.write(_help.TEXT + harness_section())  # no arguments: help on stderr and exit 2, as click does
        return 2
    return None


def harness_section() -> str:
    """The harnesses installed here, under the cached help: the built-ins, then each plugin
    package's with its version (read from entry points, never imported)."""
    from benchtape.core.harnesses import installed

    every = installed()
    builtin = ", ".join(h.name for h in every if h.package == "benchtape")
    lines = ["", "Harnesses (`benchtape tools list` for versions and installed CLIs):", f"  built-in: {builtin}"]
    lines += [f"  {h.name:<12} plugin {h.package} {h.version}" + (" (shadowed by the built-in: never used)" if h.shadowed else " (no harness name: never used)" if h.misnamed else "") for h in every if h.package != "benchtape"]
    return "\n".join(lines) + "\n"


TOP_OPTIONS = ("--help", "--version")


def command_names() -> frozenset[str]:
    """The commands the app has, read from the cached help (a test keeps it equal to typer's),
    so telling a command from a bench file costs no import."""
    from benchtape import _help

    _, _, listed = _help.TEXT.partition("\nCommands:\n")
    return frozenset(line.split()[0] for line in listed.splitlines() if line.startswith("  ") and line.split())


def madbench_argv(argv: list[str], cwd: str = ".") -> list[str]:
    """The command lines a madbench user types, as `run` takes them: bare `benchtape` in a
    folder holding madbench.yaml (or .yml) runs it; `benchtape BENCH.yaml [flags]` (a path, not
    a command) and `benchtape --harness mock …` (a run flag first) run the benches named.
    Anything else, `--help` included, is left as it is."""
    if not argv:
        found = any(os.path.isfile(os.path.join(cwd, name)) for name in ("madbench.yaml", "madbench.yml"))
        return ["run"] if found else argv
    first = argv[0]
    if first in TOP_OPTIONS or first in command_names():
        return argv
    if first.startswith("-") or first.endswith((".yaml", ".yml")) or os.path.exists(os.path.join(cwd, first)):
        return ["run", *argv]
    return argv


def help_argv(argv: list[str]) -> list[str]:
    """`benchtape help [COMMAND [SUBCOMMAND]]`, as git and pip take it: that command's `--help`
    (the top-level help with none). Not a registered command: the help a user asks for is the one
    typer prints for the command itself, never a second text to keep in step."""
    if argv[:1] != ["help"]:
        return argv
    return [*argv[1:], "--help"]


def main() -> None:
    from benchtape.core.gcpause import pause_start_up, start_up_done
    from benchtape.core.process_role import command_line_process

    argv = madbench_argv(help_argv(sys.argv[1:]))
    code = fast_path(argv)
    if code is not None:
        sys.stdout.flush()
        raise SystemExit(code)
    pause_start_up()  # until the command's body runs (benchtape.guard)
    command_line_process()  # e.g. a new store's migrations import sqlite-utils without numpy and pandas
    try:
        build(argv[0] if argv else None)(args=argv)
    finally:
        start_up_done()


if __name__ == "__main__":
    main()
