"""The whole v0.23.0 catalog is built: no type the spec names is refused by name, and an
unknown type names the closest spelling."""

from __future__ import annotations

import pytest

from benchtape.checks.judge import JUDGE_TYPES
from benchtape.checks.registry import REFUSED, CheckConfigError, catalog, lookup
from benchtape.spec.judge_config import JUDGE_TYPE_NAMES

SERVICE_AND_CODE = ("ts", "js", "python", "exec", "custom:exec", "custom:gosrc", "custom:wasm", "custom:http", "model:current")


def test_92_types_built_and_none_refused():
    assert len(catalog()) == 92
    assert REFUSED == {}


def test_the_judge_types_and_the_loaders_list_agree():
    assert len(JUDGE_TYPES) == 17
    assert set(JUDGE_TYPES) == set(JUDGE_TYPE_NAMES)
    assert all(catalog()[t].kind == "AI" for t in JUDGE_TYPES)


@pytest.mark.parametrize("type", SERVICE_AND_CODE)
def test_code_and_service_types_are_built(type):
    assert catalog()[type].kind in ("Code", "Service")


@pytest.mark.parametrize("type,canonical", [("custom:gosrc:./grader.go", "custom:gosrc"), ("custom:wasm:./g.wasm", "custom:wasm")])
def test_prefix_forms_dispatch(type, canonical):
    assert lookup(type).type == canonical


def test_unknown_type_names_the_closest():
    with pytest.raises(CheckConfigError, match='did you mean "llm-rubric"'):
        lookup("llm-rubrik")
