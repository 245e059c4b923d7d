"""docs/checks.md is generated from the registry; these tests keep it, and the examples in
it, honest."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gradekit import spec

from benchtape.checks.docs import REGENERATE, render_markdown
from benchtape.checks.registry import ALIASES, REFUSED, build, catalog

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "checks.md"


def test_committed_page_is_current():
    committed = PAGE.read_text() if PAGE.exists() else ""
    assert committed == render_markdown(), f"docs/checks.md is stale: regenerate it with `{REGENERATE}` (from the repo root) and commit it"


def test_page_lists_every_type_refusal_and_alias():
    page = render_markdown()
    for t, info in catalog().items():
        assert f"### `{t}`" in page
        assert info.summary in page
    for t in REFUSED:
        assert f"| `{t}` |" in page
    for a, canonical in ALIASES.items():
        assert f"| `{a}` | `{canonical}` |" in page


def test_module_prints_the_page():
    out = subprocess.run([sys.executable, "-m", "benchtape.checks.docs"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out == render_markdown()


@pytest.mark.parametrize("type", sorted(catalog()))
def test_every_example_is_a_check(type):
    info = catalog()[type]
    assert info.example, f"{type} has no example"
    example = spec(info.example)
    if example.type == type:
        build(example)  # the documented example is a valid check
    # else: the type is refused and the example shows what to use instead; it must parse
