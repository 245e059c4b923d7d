"""`benchtape doctor`: every check of what tasks, validation and runs need, at once (tasks/doctor.py)."""

from __future__ import annotations

from pathlib import Path

import typer

from benchtape.guard import command
from benchtape.options import Db, Json


@command()
def doctor_cmd(
    tools: list[str] | None = typer.Option(None, "--tool", help="Check credentials for this tool (repeatable; default: the tools of the project's evaluations)."),
    json_out: Json = False,
    db: Db = None,
) -> int:
    """Check git, the engine, the project config and image, the task set, the store, the agent CLIs, pricing and credentials (names only). Every failure with its next action; exit 0 ok, 1 a check failed.

    Example: benchtape doctor --tool claude-code
    """
    from benchtape.app.tasks import doctor
    from benchtape.options import db_path
    from benchtape.render_tasks import doctor_lines, print_json

    report = doctor(Path.cwd(), db=db_path(db), tools=tools)
    if json_out:
        print_json(report.to_dict())
    else:
        doctor_lines(report)
    return 0 if report.ok else 1


def register(app: typer.Typer) -> None:
    app.command("doctor")(doctor_cmd)
