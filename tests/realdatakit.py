"""Where the real transcripts are, the one place that knows.

BENCHTAPE_REALDATA when set; else `shared/realdata` beside the repository (the shared
folder this project was built from); else the copy kept in `tests/realdata`, the same
files as they are, so a clean clone runs the tests on real data instead of skipping them.
"""

from __future__ import annotations

import os
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VENDORED = ROOT / "tests" / "realdata"


def find_realdata() -> Path | None:
    env = os.environ.get("BENCHTAPE_REALDATA")
    for place in (Path(env) if env else None, ROOT.parent / "shared" / "realdata", VENDORED):
        if place is not None and place.is_dir():
            return place.resolve()
    return None


REALDATA = find_realdata()
