"""`benchtape migrate`: bring a store written by an older benchtape to this version's schema.

Commands that only read (sessions, show, query, gradings, diff, report) never change a file, so
they ask for this when a store is older; commands that record (run, import, grade, …) migrate
on open anyway."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from benchtape.cli import DB_HELP, app, guarded, open_store


@app.command("migrate")
def migrate_cmd(db: Optional[Path] = typer.Option(None, "--db", help=DB_HELP)) -> None:
    """Migrate an existing store to this version's schema, keeping all of its history.

    Example: benchtape migrate --db .benchtape/benchtape.db
    """

    def body() -> int:
        from recorder.store import MIGRATIONS, schema_version

        store = open_store(db, must_exist=True)  # opening to write migrates, under an exclusive lock
        print(f"{store.path}: schema {schema_version(store.db.conn)} of {len(MIGRATIONS)}, up to date")
        store.close()
        return 0

    guarded(body)
