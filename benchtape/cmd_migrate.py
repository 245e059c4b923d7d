"""`benchtape migrate`: bring a store written by an older benchtape to this version's schema.

Commands that only read (sessions, show, query, gradings, diff, report) never change a file, so
they ask for this when a store is older; commands that record (run, import, grade, …) migrate
on open anyway. Every page is checked after (not by other commands: it reads the whole file),
and `--repair` puts back the guards a store lost, which every command refuses to open without."""

from __future__ import annotations

import typer

from benchtape.guard import command
from benchtape.options import Db


@command()
def migrate_cmd(
    db: Db = None,
    repair: bool = typer.Option(False, "--repair", help="First put back the triggers, views and indexes benchtape made that are missing or changed (its guards), and drop triggers it did not make."),
) -> int:
    """Migrate an existing store to this version's schema, keeping all of its history; then
    check every page of it (SQLite's quick_check): a damaged store is never called up to date.

    Example: benchtape migrate --db .benchtape/benchtape.db
    """
    from benchtape.app.maintenance import migrate

    done = migrate(db, repair)
    for d in done.repaired:
        print(f"{done.path}: repaired: {d}")
    print(f"{done.path}: schema {done.version} of {done.latest}, up to date")
    return 0


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_cmd)
