"""Every command module, registered explicitly on the app (no import for side effect).

A new command lives in its own `benchtape/cmd_<name>.py` with a `register(app)` function
and one line in MODULES.
"""

from __future__ import annotations

import typer

from benchtape import (
    cmd_bench,
    cmd_checks,
    cmd_doctor,
    cmd_evaluation,
    cmd_export,
    cmd_import,
    cmd_init,
    cmd_migrate,
    cmd_model,
    cmd_recover,
    cmd_replay,
    cmd_report,
    cmd_run,
    cmd_sandbox,
    cmd_task,
    cmd_tools,
    cmd_verify,
    cmd_version,
    cmd_view,
)

MODULES = (cmd_run, cmd_bench, cmd_replay, cmd_checks, cmd_evaluation, cmd_import, cmd_init, cmd_report, cmd_sandbox, cmd_model, cmd_migrate, cmd_verify, cmd_recover, cmd_export, cmd_task, cmd_doctor, cmd_tools, cmd_view, cmd_version)


def register_all(app: typer.Typer) -> None:
    for module in MODULES:
        module.register(app)
    keep_examples(app)


def keep_examples(app: typer.Typer) -> None:
    """Each `Example:` paragraph of a command's help printed as written, line by line: click
    rewraps a paragraph, so two examples on two lines ran into one line, and a long one broke
    in the middle of a word (`claude-` / `code`). Click leaves a paragraph after a `\\b` line
    alone; every command's help gets one before its examples."""
    import inspect

    for info in app.registered_commands:
        text = info.help or (inspect.getdoc(info.callback) if info.callback else None)
        if text:
            info.help = examples_unwrapped(text)
    for group in app.registered_groups:
        if group.typer_instance is not None:
            keep_examples(group.typer_instance)


def examples_unwrapped(text: str) -> str:
    """`text` with its example lines (from the first `Example:` of a paragraph on) as a
    paragraph click does not rewrap."""
    import inspect

    out = []
    for paragraph in inspect.cleandoc(text).split("\n\n"):
        lines = paragraph.split("\n")
        at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("Example:")), None)
        if at is None:
            out.append(paragraph)
            continue
        if at:
            out.append("\n".join(lines[:at]))
        out.append("\b\n" + "\n".join(lines[at:]))
    return "\n\n".join(out)
