"""Types named by the spec that this version refuses: each refused by name, with what is missing."""

from __future__ import annotations

import pytest

from checks.registry import REFUSED, CheckConfigError, build, catalog, lookup
from gradekit import spec

MISSING = {
    "model:current": "needs the claudish live model catalog",
    "ts": "needs the bun runtime",
    "js": "needs the bun runtime",
    "custom:gosrc": "needs the go toolchain",
    "custom:wasm": "needs a WASI runtime",
}


@pytest.mark.parametrize("type,missing", sorted(MISSING.items()))
def test_others_name_what_is_missing(type, missing):
    with pytest.raises(CheckConfigError) as exc:
        build(spec({"type": type, "value": "x"}))
    assert missing in str(exc.value)


@pytest.mark.parametrize("type,missing", [("custom:gosrc:./grader.go", "go toolchain"), ("custom:wasm:./g.wasm", "WASI runtime")])
def test_prefix_forms_are_refused_too(type, missing):
    with pytest.raises(CheckConfigError) as exc:
        lookup(type)
    assert missing in str(exc.value) and type in str(exc.value)


def test_counts():
    assert set(REFUSED) >= set(MISSING)
    assert not set(REFUSED) & set(catalog())  # refused types are never also built
