"""Every command runs guarded: a benchtape error becomes its message and exit code, never a traceback."""

from __future__ import annotations

import sys
from typing import Callable


def guarded(fn: Callable[[], int]) -> None:
    """Run a command body; an error meant for the user is printed and becomes its exit code."""
    import typer

    from benchtape.core.errors import BenchtapeError, ExitCode

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
