"""A multi-provider scenario's sessions, found again in the store: what `regrade` and `grade`
give a session as its peers, so `select-best`, `max-score` and `compare` compare the same
sessions they compared when the run graded them (live grading holds them as they finish).

The sessions of one (run, scenario, attempt) are the scenario's providers, each carrying its
label in `session.started`; they are returned in the scenario's `providers:` order (the
first is the one `compare` asks about)."""

from __future__ import annotations

from typing import Sequence

from benchtape.core.model import Session
from benchtape.replay.grading import Peers, StoredSnapshot
from benchtape.store.database import SessionRow
from benchtape.store.views import BrowsingStore


def provider_peers(store: BrowsingStore, row: SessionRow, session: Session, providers: Sequence[str]) -> Peers | None:
    """The scenario's sessions by label (this one among them), or None when it has fewer than
    two providers. A label whose session the store lacks is left out, and the composites
    compare the ones there are."""
    if len(providers) < 2 or session.provider is None:
        return None
    found: dict[str, Session] = {}
    for other in store.session_rows(run_id=row.run_id, scenario=row.scenario):
        if other.attempt != row.attempt:
            continue
        peer = session if other.id == row.id else store.load_session(other.id, other)
        label = peer.provider
        if label is not None and label in providers:
            found.setdefault(label, peer)
    return {label: (found[label], StoredSnapshot(store, found[label])) for label in providers if label in found}
