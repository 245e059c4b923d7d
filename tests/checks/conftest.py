"""Fixtures the check tests share."""

from __future__ import annotations

import pytest
from gradekit import Outputs


@pytest.fixture(scope="module")
def said(tmp_path_factory) -> Outputs:
    """Real mock sessions by final output, one agent run per distinct text (per test module)."""
    return Outputs(tmp_path_factory.mktemp("said"))
