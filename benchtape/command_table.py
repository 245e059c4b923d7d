"""Every command module, registered explicitly on the app (no import for side effect).

A new command lives in its own `benchtape/cmd_<name>.py` with a `register(app)` function
and one line in MODULES.
"""

from __future__ import annotations

import typer

from benchtape import cmd_bench, cmd_checks, cmd_doctor, cmd_evaluation, cmd_export, cmd_import, cmd_init, cmd_migrate, cmd_model, cmd_recover, cmd_replay, cmd_report, cmd_run, cmd_sandbox, cmd_task, cmd_verify, cmd_version, cmd_view

MODULES = (cmd_run, cmd_bench, cmd_replay, cmd_checks, cmd_evaluation, cmd_import, cmd_init, cmd_report, cmd_sandbox, cmd_model, cmd_migrate, cmd_verify, cmd_recover, cmd_export, cmd_task, cmd_doctor, cmd_view, cmd_version)


def register_all(app: typer.Typer) -> None:
    for module in MODULES:
        module.register(app)
