"""Every command runs guarded: a benchtape error becomes its message and exit code, never a traceback."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Callable

if TYPE_CHECKING:
    from benchtape.core.errors import BadInput


def guarded(fn: Callable[[], int], done: bool = True) -> None:
    """Run a command body; an error meant for the user is printed and becomes its exit code.
    `done=False`: a first step of the command, which returns when it succeeds."""
    import typer

    from benchtape.core.errors import BenchtapeError, ExitCode
    from benchtape.core.termtext import printable

    try:
        code = fn()
    except BenchtapeError as exc:
        text = printable(exc.render(), one_line=False)  # it may name a file of someone else's, control characters and all
        print(text if exc.exit_code != ExitCode.BAD_INPUT else f"error: {text}", file=sys.stderr)
        code = exc.exit_code
    except Exception as exc:
        damage = _sqlite_damage(exc)
        if damage is None:
            raise
        print(f"error: {damage.render()}", file=sys.stderr)
        code = ExitCode.BAD_INPUT
    except KeyboardInterrupt:
        print("interrupted: what was recorded stays recorded", file=sys.stderr)
        code = ExitCode.INTERRUPTED
    else:
        if not done and code == 0:
            return
    raise typer.Exit(int(code))


def _sqlite_damage(exc: Exception) -> BadInput | None:
    """An error SQLite raised that the store did not turn into its message (its reads and
    writes do, naming the file): the user's message all the same, never a traceback. None
    for any other error (a bug is a bug: it stays a traceback)."""
    sqlite3 = sys.modules.get("sqlite3")  # never imported here: a command that has no store never loaded it
    if sqlite3 is None or not isinstance(exc, sqlite3.DatabaseError) or isinstance(exc, sqlite3.IntegrityError):
        return None
    from benchtape.core.errors import BadInput

    return BadInput(
        f"the benchtape store could not be read or written ({exc})",
        fix="check it with `benchtape verify` (pass the same --db); restore it from a copy if it is damaged",
    )
