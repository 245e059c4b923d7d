"""The `realdata` fixture: the real transcripts folder, or a loud skip naming where it was looked for."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest
from adapterkit import MISSING, REALDATA


@pytest.fixture
def realdata() -> Path:
    if REALDATA is None:
        warnings.warn(MISSING, stacklevel=1)
        pytest.skip(MISSING)
    return REALDATA
