"""Fixtures shared by the read-side tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from replaykit import cli


@pytest.fixture(scope="module")
def demo_db(tmp_path_factory) -> Path:
    """One `benchtape demo` run: three sessions with exec, composite, string and cost checks."""
    d = tmp_path_factory.mktemp("demo")
    out = cli("demo", "--db", d / "demo.db")
    assert out.code == 0, out.stderr
    return d / "demo.db"
