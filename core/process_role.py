"""Whether this process is benchtape's own command line: benchtape/cli.py says so before a
command runs. The few choices that differ there rest on one fact: no user code shares the
process (the Python API runs beside the user's own)."""

from __future__ import annotations

_command_line = False


def command_line_process() -> None:
    """Said by the command line before a command runs. SIGTERM (`timeout`, `docker stop`, a
    CI's cancel) then stops a command as Ctrl-C does, as madbench's does (exit 130): a run
    snapshots and grades what its sessions did. Its default ended Python at once, leaving
    sessions for `recover`. Only here: the Python API leaves the user's process its own."""
    import signal

    global _command_line
    _command_line = True
    signal.signal(signal.SIGTERM, signal.default_int_handler)


def is_command_line_process() -> bool:
    return _command_line
