"""`benchtape migrate`: bring a store written by an older benchtape to this version's schema.

Commands that only read (sessions, show, query, gradings, diff, report) never change a file, so
they ask for this when a store is older; commands that record (run, import, grade, …) migrate
on open anyway. Every page is checked after (not by other commands: it reads the whole file),
and `--repair` puts back the guards a store lost, which every command refuses to open without."""

from __future__ import annotations

import typer

from benchtape.guard import command
from benchtape.options import Db, db_path


@command()
def migrate_cmd(
    db: Db = None,
    repair: bool = typer.Option(False, "--repair", help="First put back the triggers, views and indexes benchtape made that are missing or changed (its guards), and drop triggers it did not make."),
) -> int:
    """Migrate an existing store to this version's schema, keeping all of its history; then
    check every page of it (SQLite's quick_check): a damaged store is never called up to date.

    Example: benchtape migrate --db .benchtape/benchtape.db
    """

    from benchtape.core.errors import BadInput
    from benchtape.store.database import MIGRATIONS, Store
    from benchtape.store.sqlite_io import damaged_fix

    store = Store(db_path(db), create=False, repair=repair)  # opening to write migrates, under an exclusive lock
    for d in store.repaired:
        print(f"{store.path}: repaired: {d}")
    damage = store.page_check(quick=True)
    if damage:
        listed = "; ".join(damage[:3]) + (f"; and {len(damage) - 3} more" if len(damage) > 3 else "")
        raise BadInput(f"the database is damaged: {listed}", file=str(store.path), fix=damaged_fix(store.path))
    print(f"{store.path}: schema {store.schema_version()} of {len(MIGRATIONS)}, up to date")
    store.close()
    return 0


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_cmd)
