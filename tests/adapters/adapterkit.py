"""Test helpers for adapters: where the real transcripts are (and a loud skip when they are not).

The samples live in `shared/realdata` beside the repository (CI clones the repo next
to `shared/`). BENCHTAPE_REALDATA names another place when that one is absent.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

import pytest

from recorder.model import Action, Session, project


def find_realdata() -> Path | None:
    beside = (Path(__file__).resolve().parents[2] / "../shared/realdata").resolve()
    if beside.is_dir():
        return beside
    env = os.environ.get("BENCHTAPE_REALDATA")
    if env and Path(env).is_dir():
        return Path(env).resolve()
    return None


REALDATA = find_realdata()
MISSING = (
    "REAL TRANSCRIPTS NOT FOUND: expected shared/realdata beside the repository "
    f"({Path(__file__).resolve().parents[2].parent / 'shared/realdata'}) or a folder in BENCHTAPE_REALDATA; "
    "the adapter tests on real data are SKIPPED"
)
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
