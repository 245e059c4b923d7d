"""`benchtape model serve` (the scripted model server, by hand) and `benchtape script` (a stored
session's model side as a script)."""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command
from benchtape.options import Db

if TYPE_CHECKING:
    from benchtape.app.sessions import BrowsingStore

HARNESSES = ("claude-code", "codex", "gemini-cli")


def register(app: typer.Typer) -> None:
    model_app = typer.Typer(help="Speak to models: the scripted model server.", no_args_is_help=True, rich_markup_mode=None)
    model_app.command("serve")(serve_cmd)
    app.add_typer(model_app, name="model")
    app.command("script")(script_cmd)


# ---------------------------------------------------------------- model serve


@command()
def serve_cmd(
    script: Path = typer.Argument(..., help="A script: YAML with `steps:` in the mock: vocabulary (and `metrics:`, `model:`, `chat:`)."),
    port: int = typer.Option(0, "--port", min=0, max=65535, help="Loopback port (0: a free one)."),
    harness: str | None = typer.Option(None, "--harness", help="Print the setup for this harness only (claude-code, codex or gemini-cli); codex and gemini-cli also refuse steps they have no tool for."),
) -> int:
    """Serve a script as a model on 127.0.0.1 (Anthropic Messages, OpenAI Responses and Chat Completions, Gemini generateContent) until Ctrl-C.

    Prints the environment (claude-code, gemini-cli) and config.toml (codex) that point a real binary at it,
    then one line per request. Exit 2 on a malformed script or a port in use.
    Example: benchtape model serve fix.yaml --port 8898 --harness claude-code
    """
    return _serve(script, port, harness)


def _serve(path: Path, port: int, harness: str | None) -> int:
    from benchtape.app.catalog import load_script, serve

    if harness is not None and harness not in HARNESSES:
        raise BadInput(f"--harness {harness!r} is not one the scripted model serves", fix=f"use one of {', '.join(HARNESSES)}")
    script = load_script(path)
    if harness in ("codex", "gemini-cli"):
        _refuse_unmapped(script, path, harness)
    with serve(script, port=port) as srv:
        shown = 0

        def show_new() -> None:
            nonlocal shown
            log = srv.log
            for entry in log[shown:]:
                print(_request_line(entry, len(script.turns), len(script.chat)), file=sys.stderr, flush=True)
            shown = len(log)

        try:  # from the setup on: a Ctrl-C the moment it is printed stops the server as any other does
            _print_setup(srv, path, script, harness)
            while True:
                time.sleep(0.2)
                show_new()
        except KeyboardInterrupt:
            show_new()
        served = [e for e in srv.log if e.get("outcome") == "turn"]
        replied = [e for e in srv.log if e.get("outcome") == "reply"]
        print(f"\nstopped: {len(served)} scripted turn(s) and {len(replied)} chat reply(ies) served, {len(srv.exhausted)} request(s) after the script ran out", file=sys.stderr)
    return 0


def _refuse_unmapped(script: Any, path: Path, harness: str = "codex") -> None:
    from benchtape.app.catalog import unmapped_for_codex

    unmapped = unmapped_for_codex(script)
    if unmapped:
        call, what = unmapped[0]
        named = {"codex": "Codex", "gemini-cli": "Gemini CLI"}.get(harness, harness)
        raise BadInput(f"{what} (`{call.tool}`) has no {named} tool to play it with", file=str(path), line=call.line, fix="drop the step, or serve the script for claude-code")


def _print_setup(srv: Any, path: Path, script: Any, harness: str | None) -> None:
    from benchtape.app.catalog import CODEX_KEY_ENV, GEMINI_MODEL, GEMINI_SETTINGS, SCRIPTED_KEY, claude_env, codex_config

    what = ", ".join(part for part in (
        "the no-op script (says the prompt back)" if script.noop and not script.chat else "" if script.noop else f"{len(script.turns)} main turn(s)",
        f"{len(script.chat)} chat reply(ies) for judges, one per request" if script.chat else "",
    ) if part)
    lines: list[str] = []
    lines.append(f"scripted model: {path} ({what}, sha256 {script.digest[:12]}) on {srv.url}  -- Ctrl-C stops")
    if harness in (None, "claude-code"):
        lines.append("\nClaude Code (print mode; any HOME you like, a fresh one is hermetic):")
        for key, value in claude_env(srv.url).items():
            lines.append(f"  export {key}={value}")
        lines.append('  claude -p "your prompt" --output-format stream-json --verbose --permission-mode bypassPermissions < /dev/null')
    if harness in (None, "codex"):
        lines.append("\nCodex: write this to $CODEX_HOME/config.toml (a private CODEX_HOME):")
        for line in codex_config(srv.openai_url).splitlines():
            lines.append(f"  {line}")
        lines.append(f"  export CODEX_HOME=<that folder> {CODEX_KEY_ENV}={SCRIPTED_KEY}")
        lines.append('  codex exec --json --skip-git-repo-check "your prompt" < /dev/null')
    if harness in (None, "gemini-cli"):
        lines.append("\nGemini CLI: write this to $HOME/.gemini/settings.json (a private HOME):")
        lines.append(f"  {json.dumps(GEMINI_SETTINGS)}")
        lines.append(f"  export GEMINI_API_KEY={SCRIPTED_KEY} GOOGLE_GEMINI_BASE_URL={srv.url}")
        lines.append(f'  gemini -m {GEMINI_MODEL} --skip-trust --approval-mode=yolo --output-format stream-json -p "your prompt" < /dev/null')
    if harness is None:
        lines.append(f"\nChat Completions (judges): POST {srv.openai_url}/chat/completions")
    lines.append("")
    # one write: the URL on the first line is what a reader waits for, and with the lines after it
    # written one by one (an unbuffered stdout, as under CI) a Ctrl-C sent once the URL answered
    # could land mid-setup and leave the rest unprinted (CI met it once)
    sys.stdout.write("\n".join(lines) + "\n")
    sys.stdout.flush()


def _request_line(entry: dict[str, Any], turns: int, replies: int = 0) -> str:
    outcome = entry.get("outcome")
    head = f"  {entry.get('method')} {entry.get('path')} -> {entry.get('status')}"
    if outcome == "turn":
        return f"{head}  {entry.get('role')} turn {entry.get('turn', 0) + 1}/{turns}"
    if outcome == "reply":
        return f"{head}  judge: chat reply {entry.get('reply', 0) + 1}/{replies}"
    if outcome == "exhausted" and entry.get("role") == "judge":
        return f"{head}  THE SCRIPT RAN OUT: a judge asked again, and all {replies} chat reply(ies) are used (one per request); add a `chat:` entry per judge request"
    if outcome == "exhausted":
        return f"{head}  THE SCRIPT RAN OUT: the agent asked for turn {entry.get('turn', 0) + 1} of a {turns}-turn script; add steps"
    return f"{head}  {outcome}"


# ---------------------------------------------------------------- script


@command(store="read")
def script_cmd(
    store: BrowsingStore,
    session: str = typer.Argument(..., help="Session id (a unique prefix)."),
    output: Path | None = typer.Option(None, "-o", "--output", help="Write the script here (default: stdout)."),
    db: Db = None,
) -> int:
    """Write the model side of a stored session (its turns: texts, thinking, tool calls) as a script.

    `benchtape model serve` (or a scenario's mock:) replays it against a real tool, offline.
    Example: benchtape script 01J9Z3K4 -o replay.yaml
    """
    return _script(store, session, output)


def _script(store: BrowsingStore, prefix: str, output: Path | None) -> int:
    from benchtape.app.catalog import script_from, script_of
    from benchtape.app.sessions import resolve

    sid = resolve(store, "sessions", prefix)
    session = store.load_session(sid)
    extracted = script_of(session)
    script_from(extracted.script, f"<session {sid}>")  # what is written must load and play
    text = _header(sid, session, extracted.notes) + _yaml(extracted.script)
    if output is None:
        sys.stdout.write(text)
        return 0
    scratch = output.with_name(f".{output.name}.partial")
    try:
        scratch.write_text(text, encoding="utf-8")
        os.replace(scratch, output)
    except OSError as exc:
        scratch.unlink(missing_ok=True)
        raise BadInput(f"cannot write the script: {exc.strerror}", file=str(output), fix="choose a writable path for -o") from None
    print(f"{output}: {len(extracted.script.get('steps') or [])} step(s) from session {sid}", file=sys.stderr)
    for note in extracted.notes:
        print(f"  note: {note}", file=sys.stderr)
    return 0


def _header(sid: str, session: Any, notes: list[str]) -> str:
    lines = [f"# The model side of session {sid} ({session.harness or 'unknown harness'}, scenario {session.scenario or '-'})."]
    if session.prompt:
        first = session.prompt.strip().splitlines()[0] if session.prompt.strip() else ""
        lines.append(f"# Its prompt began: {first[:200]}")
    lines.append("# Replay: benchtape model serve THIS_FILE   (tool results are not here: replaying runs the tools)")
    lines += [f"# note: {n}" for n in notes]
    return "\n".join(lines) + "\n"


def _yaml(value: Any) -> str:
    import yaml

    class _Dumper(yaml.SafeDumper):  # type: ignore[misc]  # PyYAML has no stubs here: its classes are Any
        pass

    def text(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
        style = "|" if "\n" in data else None
        return dumper.represent_scalar("tag:yaml.org,2002:str", data, style=style)

    _Dumper.add_representer(str, text)
    dumped: str = yaml.dump(value, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=100)  # a str: no stream given
    return dumped
