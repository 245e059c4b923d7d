"""`benchtape import` and `benchtape reparse`: sessions recorded elsewhere, and better adapters."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from benchtape.guard import command
from benchtape.options import Db

if TYPE_CHECKING:
    from benchtape.app.stores import Store


@command()
def import_cmd(
    harness: str = typer.Argument(..., help="claude-code, codex, gemini-cli, or atif (an ATIF trajectory: a Harbor trial's agent/trajectory.json, or `benchtape export --format atif`)."),
    paths: list[Path] = typer.Argument(..., help="Transcript files (~/.claude/projects/…/*.jsonl, ~/.codex/sessions/…/rollout-*.jsonl, ~/.gemini/tmp/…/chats/session-*.json[l], trajectory .json), or folders: every .jsonl below one (a Claude subagent's file goes with its session), for gemini-cli every session file below it, for atif every ATIF .json below it."),
    scenario: str | None = typer.Option(None, "--scenario", help="Scenario name to file the sessions under (default: the session id)."),
    db: Db = None,
) -> int:
    """Import transcripts recorded elsewhere as sessions (one per file), to grade and query them.

    Example: benchtape import claude-code ~/.claude/projects/-home-me-app/9eda1058.jsonl --scenario triage

    Example: benchtape import codex ~/.codex/sessions   (again tomorrow: files imported before, unchanged, are skipped)

    Example: benchtape import gemini-cli ~/.gemini/tmp   (every chats/session-*.json[l])

    Example: benchtape import atif jobs/2025-06-01__12-00-00   (every trial's agent/trajectory.json)
    """

    from benchtape.app.ingest import checked_files, import_checked
    from benchtape.app.stores import db_path, open_store

    # A store file already there is opened first, so a wrong --db is said before any file; a new
    # one is created only once every file is checked, so a refused import leaves no store file.
    store = open_store(db) if db_path(db).exists() else None
    try:
        files = checked_files(harness, paths)
        store = store or open_store(db)
        results = import_checked(store, harness, files, scenario, argv=sys.argv[1:])
    finally:
        if store is not None:
            store.close()
    for r in results:
        if r.already:
            print(f"{r.session_id}  {r.path}  (already imported: same content; nothing written)")
        else:
            warn = f", {r.warnings} adapter warning(s)" if r.warnings else ""
            print(f"{r.session_id}  {r.path}  ({r.actions} actions{warn})")
    return 0


@command(store="existing")
def reparse_cmd(
    store: Store,
    session: str = typer.Argument(..., help="The session: an id prefix, `latest`, or RUN/SCENARIO#N."),
    db: Db = None,
) -> int:
    """Re-derive a session's actions from its stored raw lines, into a new session linked to the old one.

    Example: benchtape reparse 01J9Z3K4M5N6P7Q8R9S0T1V2W3
    """

    from benchtape.app.ingest import reparse, reparse_report
    from benchtape.app.sessions import resolve

    old = resolve(store, "sessions", session)
    new = reparse(store, old)
    print(reparse_report(store, old, new))
    print(f"next: benchtape show {new}   ·   benchtape show {old} (as it was){_grade_hint(store, new)}", file=sys.stderr)
    return 0


def _grade_hint(store: Store, session_id: str) -> str:
    """How to grade the re-derived session, which has no verdicts of its own yet (`show` says
    "not graded"): its bench's checks over its scenario in its run, when a bench ran it."""
    import shlex

    row = store.session_row(session_id)
    run = store.run(row.run_id) if row is not None else None
    bench = (run or {}).get("bench_path")
    if row is None or not bench:
        return ""
    return f"   ·   benchtape regrade --bench {shlex.quote(str(bench))} --run {row.run_id} --scenario {shlex.quote(row.scenario)} (grades it with the bench's checks)"


def register(app: typer.Typer) -> None:
    app.command("import")(import_cmd)
    app.command("reparse")(reparse_cmd)
