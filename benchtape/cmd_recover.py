"""`benchtape recover`: finish what a killed benchtape left behind."""

from __future__ import annotations

from pathlib import Path

import typer

from benchtape.guard import command


@command()
def recover_cmd(
    db: Path | None = typer.Option(None, "--db", help="Only sessions recorded into this store (default: every store a killed run was writing to)."),
) -> int:
    """Ingest what killed runs left (output the harness wrote that was not stored yet), finish
    those sessions as `interrupted`, kill what they left running, remove their containers and
    sandbox folders, and put back a ~/.claude a killed workspace-level run changed. Every run
    does this first; run it yourself to clean up without starting one.

    Example: benchtape recover
    """

    from benchtape.app.ingest import sweep

    done = sweep(containers=True, only_db=db) + _fold_spool(db)
    for line in done:
        print(line)
    if not done:
        print("nothing to recover: no session folder, ~/.claude baseline, container or spooled bundle was left by a killed benchtape")
    return 0


def _fold_spool(db: Path | None) -> list[str]:
    """Bundles a killed `--executor ray` run received but did not fold, folded into their store
    (the one --db names, else the default one), when it has a spool."""
    from benchtape.app.ingest import fold_spooled, spool_folder, spooled
    from benchtape.options import db_path, open_store

    path = db_path(db)
    if not path.exists() or not spooled(spool_folder(path)):
        return []
    return fold_spooled(open_store(db))


def register(app: typer.Typer) -> None:
    app.command("recover")(recover_cmd)
