"""Whether this process is benchtape's own command line: benchtape/cli.py says so before a
command runs. The few choices that differ there rest on one fact: no user code shares the
process (the Python API runs beside the user's own)."""

from __future__ import annotations

_command_line = False


def command_line_process() -> None:
    """Said by the command line before a command runs."""
    global _command_line
    _command_line = True


def is_command_line_process() -> bool:
    return _command_line
