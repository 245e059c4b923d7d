"""toolz's hand-checked PRs (shared/realrepos/README.md) that tests/harvest/test_task_validate.py
does not already validate, in toolz's real environment (setuptools, a flat layout, no declared
test dependencies: pytest added; versioneer at old bases, setuptools-git-versioning at new
ones, each given a pretend version): with those, every PR of the README's table and its two
extra valid ones validate or are diagnosed as the hand check says, with no hand edit."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "harvest"))
from harvestkit import clone_bundle  # noqa: E402

from benchtape.envs.project_env import recipe_at  # noqa: E402
from benchtape.spec.project import load_project  # noqa: E402
from benchtape.store.database import Store  # noqa: E402
from benchtape.tasks.create import create_task  # noqa: E402
from benchtape.tasks.validate import validate  # noqa: E402

# PR -> the diagnosis the hand check implies ("" valid), and (base failed+errors, reference passed) for the valid ones
TRUTH = {
    "425": ("", (2, 45)), "451": ("", (1, 38)), "411": ("", (1, 36)),
    "526": ("base_already_passes", None), "485": ("base_already_passes", None),
    "458": ("gold_still_fails", None), "454": ("gold_still_fails", None), "469": ("gold_still_fails", None),
    "607": ("gold_still_fails", None),  # the reference moves the build to pyproject; its version test needs a real version
}


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    cache = tmp_path_factory.mktemp("env-cache")
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHTAPE_ENV_CACHE", str(cache))
    mp.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)  # repeat runs are tests/harvest/test_per_test.py's
    # nor the base's whole suite after each task that held (~5 s each; PASS_TO_PASS from it is
    # test_per_test.py's, and no assertion here reads it)
    mp.setattr("benchtape.tasks.validate.suite_command", lambda *args: None)
    root = clone_bundle("toolz.bundle", tmp_path_factory.mktemp("toolz") / "toolz")
    project = load_project(root)
    ids = {ref: create_task(project, ref).id for ref in TRUTH}
    done = validate(project, list(ids.values()), store=Store(root / ".benchtape" / "benchtape.db"), level="home", logs=root / ".benchtape" / "validate")
    yield {"root": root, "project": project, "ids": ids, "done": done, "cache": cache}
    mp.undo()


def test_detects_toolz(toolz: dict[str, Any]):
    det = recipe_at(toolz["project"], "HEAD").detection
    assert (det.backend, det.packages, det.roots) == ("setuptools", ("toolz",), (".",))
    old = recipe_at(toolz["project"], _base(toolz, "411")).detection
    assert (old.backend, old.declarations, old.packages, old.test_deps_from) == ("setuptools", ("setup.py",), ("toolz",), None)
    assert "test dependencies: none declared (pytest is added)" in old.lines()


def _base(toolz: dict[str, Any], ref: str) -> str:
    report = next(t for t in toolz["done"].tasks if t.id == toolz["ids"][ref])
    from benchtape.spec.task import find_task, load_task

    return load_task(find_task(toolz["root"], report.id)).source.base_commit


@pytest.mark.parametrize("ref", list(TRUTH))
def test_each_pr_is_what_the_hand_check_says(toolz: dict[str, Any], ref: str):
    diagnosis, counts = TRUTH[ref]
    report = next(t for t in toolz["done"].tasks if t.id == toolz["ids"][ref])
    assert report.validated is (diagnosis == ""), report.to_dict()
    found = [p.judgement.diagnosis for p in report.phases.values() if not p.judgement.held]
    assert found[:1] == ([diagnosis] if diagnosis else []), report.to_dict()
    for name in ("base", "reference"):  # always the tree's own toolz (the health runs after them skip the check they made)
        phase = report.phases[name]
        assert [(i["package"], i["inside"]) for i in phase.evidence.imported or []] == [("toolz", True)]
    if counts is not None:
        base, reference = report.phases["base"].evidence.counts, report.phases["reference"].evidence.counts
        assert (base.failed + base.errored, reference.passed) == counts


def _source(toolz: dict[str, Any], ref: str) -> Any:
    from benchtape.spec.task import find_task, load_task

    return load_task(find_task(toolz["root"], toolz["ids"][ref])).source


def test_bases_with_the_same_declarations_share_one_environment(toolz: dict[str, Any]):
    """...and resolved as of the same month (or the floor of this Python: toolz's fixes of
    2019-2023 all resolve as of 3.11's established date)."""
    built = [p for p in toolz["cache"].iterdir() if p.is_dir()]
    recipes = [recipe_at(toolz["project"], (src := _source(toolz, ref)).base_commit, fix_commit=src.fix_commit) for ref in TRUTH]
    keys = {r.key()[:20] for r in recipes}
    assert {p.name for p in built} == keys and len(keys) < len(TRUTH)
    assert all(r.resolved_at is not None and r.resolved_at >= "2023-04-24" for r in recipes)
