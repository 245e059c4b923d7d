"""Keeping a store and the sandbox healthy: verify every row (with a re-graded sample), migrate or
repair the schema, build the container base image.

Each is one function a command calls and renders: `benchtape verify`, `benchtape migrate`,
`benchtape sandbox build`. They open what they check themselves, because each opens it in a way
no other use case does (verify without the schema check it reports on; migrate to write, which
migrates under an exclusive lock).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from benchtape.app.stores import db_path
from benchtape.core.errors import BadInput

if TYPE_CHECKING:
    from benchtape.store.integrity import Difference
    from benchtape.store.verify import Verification


def verify(db: Path | None, sample: int = 0) -> Verification:
    """Every row of the store read once (read-only; a schema or guard that is not benchtape's is
    a finding, not a refusal), and with `sample` the N newest graded sessions re-graded offline:
    a verdict that does not reproduce is a finding too. Nothing is written."""
    from benchtape.replay.reproduce import DIVERGED, NOT_REGRADABLE, reproduce_sample
    from benchtape.store.database import Store
    from benchtape.store.verify import Finding, verify_store

    store = Store(db_path(db), readonly=True, create=False, check_schema=False)
    try:
        found = verify_store(store)
        if sample:
            replays = reproduce_sample(store, sample)
            found.checked["re-graded sessions"] = len(replays)
            found.checked["re-graded verdicts"] = sum(1 for r in replays for c in r.checks if c.verdict != NOT_REGRADABLE)
            found.findings += [
                Finding("regrade", f"{DIVERGED}: session {r.session_id} {c.check_path} ({c.type}) is stored {c.stored.status} by grading {r.grading_id}, re-graded {c.regraded.status if c.regraded else '?'}")
                for r in replays
                for c in r.checks
                if c.verdict == DIVERGED
            ]
        return found
    finally:
        store.close()


@dataclass(frozen=True)
class Migrated:
    path: Path
    version: int
    latest: int
    repaired: list[Difference] = field(default_factory=list)


def migrate(db: Path | None, repair: bool = False) -> Migrated:
    """Open an existing store to write (which migrates it, under an exclusive lock), `repair`
    first putting back benchtape's guards; then check every page: a damaged store is a BadInput,
    never called up to date."""
    from benchtape.store.database import MIGRATIONS, Store
    from benchtape.store.sqlite_io import damaged_fix

    store = Store(db_path(db), create=False, repair=repair)
    try:
        damage = store.page_check(quick=True)
        if damage:
            listed = "; ".join(damage[:3]) + (f"; and {len(damage) - 3} more" if len(damage) > 3 else "")
            raise BadInput(f"the database is damaged: {listed}", file=str(store.path), fix=damaged_fix(store.path))
        return Migrated(store.path, store.schema_version(), len(MIGRATIONS), list(store.repaired))
    finally:
        store.close()


def build_base_image(rebuild: bool = False) -> str:
    """The tag of benchtape's container base image, built locally when missing (or `rebuild`)."""
    from benchtape.sandbox.baseimage import ensure_base_image
    from benchtape.sandbox.container import ContainerError, available, connect

    ok, why = available()
    if not ok:
        raise BadInput(f"no Docker engine answers: {why}", fix="start dockerd (or install docker.io), then run this again")
    try:
        return ensure_base_image(connect(), rebuild=rebuild)
    except ContainerError as exc:
        raise BadInput(str(exc)) from None
