"""Test helpers for adapters: the real transcripts (tests/realdatakit.py finds them), and a
loud skip when they are missing."""

from __future__ import annotations

import warnings

import pytest
from realdatakit import REALDATA, VENDORED, find_realdata  # noqa: F401 - re-exported for the adapter tests

from benchtape.core.model import Action, Session, project

MISSING = f"REAL TRANSCRIPTS NOT FOUND: not in BENCHTAPE_REALDATA, shared/realdata beside the repository, nor {VENDORED}; the adapter tests on real data are SKIPPED"
if REALDATA is None:
    warnings.warn(MISSING, stacklevel=1)


def realdata_params(pattern: str) -> list:
    """pytest params for realdata files matching a glob (relative to realdata), or one loud skip."""
    if REALDATA is None:
        return [pytest.param(None, marks=pytest.mark.skip(reason=MISSING), id="realdata-missing")]
    files = sorted(p for p in REALDATA.glob(pattern) if p.is_file())
    return [pytest.param(p, id=str(p.relative_to(REALDATA))) for p in files]


def session_of(actions: list[Action]) -> Session:
    """The projection of actions numbered as the store would number them."""
    return project([a.stamped(seq=i + 1) for i, a in enumerate(actions)])


def feed_lines(parser, lines) -> list[Action]:
    out: list[Action] = []
    for line in lines:
        out.extend(parser.feed(line))
    return out + parser.finish()
