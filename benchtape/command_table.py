"""Every command module, registered explicitly on the app (no import for side effect).

A new command lives in its own `benchtape/cmd_<name>.py` with a `register(app)` function,
one line in MODULES and its names in COMMANDS. `benchtape NAME …` imports only the module
that registers NAME (a command's imports are paid by that command alone); the full app (every
module, in MODULES' order) is built for anything else: bare `--help` in a narrow terminal, a
mistyped name (click's "No such command" and its suggestions), tests and helpgen.
tests/e2e/test_startup.py keeps COMMANDS equal to what each module registers.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import typer

# In registration order: the order the top-level help lists them in.
MODULES = ("cmd_run", "cmd_bench", "cmd_replay", "cmd_checks", "cmd_evaluation", "cmd_import", "cmd_init", "cmd_report", "cmd_sandbox", "cmd_model", "cmd_migrate", "cmd_verify", "cmd_recover", "cmd_export", "cmd_task", "cmd_doctor", "cmd_tools", "cmd_view", "cmd_version")

# Each top-level command (and group) by the module that registers it, hidden aliases included.
COMMANDS = {
    "version": "cmd_version",  # the command itself is benchtape.cli's
    "run": "cmd_run",
    "demo": "cmd_run",
    "list": "cmd_bench",
    "preflight": "cmd_bench",
    "check": "cmd_replay",
    "grade": "cmd_replay",
    "regrade": "cmd_replay",
    "diff": "cmd_replay",
    "gradings": "cmd_replay",
    "query": "cmd_replay",
    "sessions": "cmd_replay",
    "show": "cmd_replay",
    "checks": "cmd_checks",
    "evaluation": "cmd_evaluation",
    "eval": "cmd_evaluation",
    "compare": "cmd_evaluation",
    "import": "cmd_import",
    "reparse": "cmd_import",
    "init": "cmd_init",
    "report": "cmd_report",
    "sandbox": "cmd_sandbox",
    "model": "cmd_model",
    "script": "cmd_model",
    "migrate": "cmd_migrate",
    "verify": "cmd_verify",
    "recover": "cmd_recover",
    "export": "cmd_export",
    "task": "cmd_task",
    "doctor": "cmd_doctor",
    "tools": "cmd_tools",
    "view": "cmd_view",
}

# Registers no command: the group's own options (--version), on every app.
ALWAYS = "cmd_version"


def register_all(app: typer.Typer) -> None:
    for name in MODULES:
        import_module(f"benchtape.{name}").register(app)
    keep_examples(app)


def register_for(app: typer.Typer, command: str) -> bool:
    """Register only the module that holds `command` (and the group's options), and keep only
    `command` (and `version`) of what it registers: typer reads every registered function's
    signature when it builds the group, a few ms for a module of eight commands. False, with
    nothing registered, when no module holds it."""
    name = COMMANDS.get(command)
    if name is None:
        return False
    for module in dict.fromkeys((name, ALWAYS)):
        import_module(f"benchtape.{module}").register(app)
    app.registered_commands = [info for info in app.registered_commands if info.name in (command, "version")]
    app.registered_groups = [info for info in app.registered_groups if info.name == command]
    keep_examples(app)
    return True


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
        if paragraph.startswith("\b"):  # done already: a module-level sub-app is registered once per app built
            out.append(paragraph)
            continue
        lines = paragraph.split("\n")
        at = next((i for i, line in enumerate(lines) if line.lstrip().startswith("Example:")), None)
        if at is None:
            out.append(paragraph)
            continue
        if at:
            out.append("\n".join(lines[:at]))
        out.append("\b\n" + "\n".join(lines[at:]))
    return "\n\n".join(out)
