"""The text `benchtape evaluation create` writes: a commented template (no terminal), or the
answers to a few questions (tools, models, efforts, attempts), each checked against the
tool registry as it is given, so the file it writes always validates."""

from __future__ import annotations

from typing import Callable

import typer

from benchtape.spec.documents import API_VERSION
from benchtape.spec.overlays import Registry, ToolDef

TEMPLATE = """\
# benchtape evaluation {name}: which setups to compare over the tasks (the scenarios) of a bench.
#   check it (starts nothing):   benchtape evaluation validate {name}
#   rank what was measured:      benchtape compare {name}
apiVersion: {api}
kind: Evaluation
description: {name}

# bench: madbench.yaml   # default: the bench in this project folder (a list for several benches)
# tasks: all             # or task ids ([603, 551]) or Harbor task folders; with no bench:, the valid
#                        # tasks in .benchtape/tasks/ (benchtape task create / task validate)
attempts: 3              # every setup runs each task this many times (pass@k, intervals)

# A scalar and a one-item list mean the same. Lists inside a block form a cross product;
# separate blocks are unioned. As written: 2 claude-code setups + 2 codex setups, 3 attempts
# each = 12 cells per task. Unknown tools, models, efforts or options are refused by name.
tools:
  - tool: claude-code
    model: [sonnet-4.6, opus-4.6]
    effort: medium

  - tool: codex
    model: gpt-5.5
    effort: [medium, high]

  # Change one thing at a time: a listed option is an axis; unlisted options keep their
  # default in every setup. This block isolates the effect of repository instructions:
  # - tool: claude-code
  #   model: sonnet-4.6
  #   effort: medium
  #   options:
  #     agents_md: [default, none]
  #
  # tool_version is an axis too (latest, or a pinned MAJOR.MINOR.PATCH, quoted):
  #   tool_version: [latest, "2.1.0"]
  # pre: setup commands run in the workspace before the agent ({{workdir}} expands); their
  # commands and effects are part of each cell's identity:
  #   pre: ["touch {{workdir}}/.ready"]
"""


def template(name: str) -> str:
    return TEMPLATE.format(name=name, api=API_VERSION)


def ask(name: str, registry: Registry, prompt: Callable[..., str] = typer.prompt) -> str:
    """Ask for the setups on a terminal; every answer is checked before the next question."""
    tools = [t for t in registry.tools if t != "mock"] + ["mock"]
    blocks: list[str] = []
    chosen = _pick(prompt, "Tools to compare (comma-separated)", tools, default="claude-code,codex")
    for tool_name in chosen:
        tool = registry.tools[tool_name]
        models = _pick(prompt, f"{tool_name}: models", sorted(tool.models), default=sorted(tool.models)[0])
        accepted = sorted(set.intersection(*(set(tool.models[m].efforts) for m in models))) if models else []
        efforts = _pick(prompt, f"{tool_name}: efforts (empty for the CLI default)", accepted, default="medium" if "medium" in accepted else "", allow_empty=True)
        blocks.append(_block(tool, models, efforts))
    attempts = _attempts(prompt)
    head = f"# benchtape evaluation {name} (written by `benchtape evaluation create`)\napiVersion: {API_VERSION}\nkind: Evaluation\ndescription: {name}\nattempts: {attempts}\ntools:\n"
    return head + "".join(blocks)


def _pick(prompt: Callable[..., str], question: str, valid: list[str], default: str, allow_empty: bool = False) -> list[str]:
    from benchtape.core.errors import closest

    while True:
        answer = prompt(f"{question} [{', '.join(valid) or 'none'}]", default=default, show_default=bool(default))
        picked = [a.strip() for a in str(answer).split(",") if a.strip()]
        if not picked and allow_empty:
            return []
        bad = [p for p in picked if p not in valid]
        if picked and not bad:
            return list(dict.fromkeys(picked))
        for p in bad:
            near = closest(p, valid)
            typer.echo(f"  unknown: {p!r}" + (f" (did you mean {near!r}?)" if near else ""), err=True)
        if not picked:
            typer.echo("  choose at least one", err=True)


def _attempts(prompt: Callable[..., str]) -> int:
    while True:
        answer = str(prompt("Attempts per setup and task", default="3")).strip()
        if answer.isdigit() and int(answer) >= 1:
            return int(answer)
        typer.echo("  a whole number of at least 1", err=True)


def _block(tool: ToolDef, models: list[str], efforts: list[str]) -> str:
    lines = [f"  - tool: {tool.name}", f"    model: {_flow(models)}"]
    if efforts:
        lines.append(f"    effort: {_flow(efforts)}")
    return "\n".join(lines) + "\n\n"


def _flow(values: list[str]) -> str:
    return values[0] if len(values) == 1 else "[" + ", ".join(values) + "]"
