"""`benchtape migrate`: bring a store written by an older benchtape to this version's schema.

Commands that only read (sessions, show, query, gradings, diff, report) never change a file, so
they ask for this when a store is older; commands that record (run, import, grade, …) migrate
on open anyway."""

from __future__ import annotations

import typer

from benchtape.guard import guarded
from benchtape.options import Db, open_store


def migrate_cmd(db: Db = None) -> None:
    """Migrate an existing store to this version's schema, keeping all of its history.

    Example: benchtape migrate --db .benchtape/benchtape.db
    """

    def body() -> int:
        from benchtape.store.database import MIGRATIONS

        store = open_store(db, must_exist=True)  # opening to write migrates, under an exclusive lock
        print(f"{store.path}: schema {store.schema_version()} of {len(MIGRATIONS)}, up to date")
        store.close()
        return 0

    guarded(body)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate_cmd)
