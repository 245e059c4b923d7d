"""`benchtape verify`: check a whole store and say what is wrong with it.

Every command checks a store's schema and guards when it opens one (cheap, on every open);
this reads every row once: pages, blob hashes, raw streams, specs, references, and, with
`--sample N`, re-grades the N newest graded sessions offline to show their verdicts can be
re-derived from the store alone (a DIVERGED verdict is a finding). It only reads: the file is
opened read-only, and the sample's re-grading is recorded nowhere."""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

import typer

from benchtape.guard import command
from benchtape.options import Db, Json

if TYPE_CHECKING:
    from benchtape.app.maintenance import Verification


@command()
def verify_cmd(
    db: Db = None,
    as_json: Json = False,
    sample: int = typer.Option(0, "--sample", min=0, help="Also re-grade the N newest graded sessions offline (as `grade` does, writing nothing) and report any verdict that does not reproduce."),
) -> int:
    """Check a whole store: schema and guards, every page, blob and raw stream, every stored
    spec and reference, optionally a re-graded sample. Exit 0 clean, 1 findings, 2 cannot open.

    Example: benchtape verify --db .benchtape/benchtape.db --sample 20
    """
    from benchtape.app.maintenance import verify

    found = verify(db, sample)
    if as_json:
        from benchtape.render_replay import emit_json

        emit_json(found.to_dict())
    else:
        _print(found)
    return 0 if found.clean else 1


def _print(found: Verification) -> None:
    read = ", ".join(f"{n:,} {what}" for what, n in found.checked.items())
    print(f"{found.path} (schema {found.schema_version}): read {read}")
    for f in found.findings:
        print(f"  {f.part}: {f.what}")
    if found.clean:
        print("clean: nothing found")
    else:
        print(f"{len(found.findings)} finding(s)", file=sys.stderr)


def register(app: typer.Typer) -> None:
    app.command("verify")(verify_cmd)
