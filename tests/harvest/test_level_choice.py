"""`--sandbox auto` says which level it chose and why, whatever it chose (issue 44: a user saw the
level change between two runs of one command when an engine came up, with no word of why)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.sandbox.container import available
from benchtape.spec.project import load_project
from benchtape.tasks.validate import choose_level


def _project(tmp_path: Path, image: bool):
    (tmp_path / ".benchtape").mkdir()
    if image:
        (tmp_path / "Dockerfile.benchtape").write_text("FROM benchtape-base\n")
    return load_project(tmp_path)


def test_an_explicit_level_says_it_was_asked_for(tmp_path: Path):
    assert choose_level("home", _project(tmp_path, image=False)) == ("home", "--sandbox home, as asked")


def test_auto_says_why_it_chose_its_level(tmp_path: Path):
    project = _project(tmp_path, image=False)
    level, why = choose_level("auto", project)
    engine, _ = available()
    assert why.startswith("--sandbox auto: ")
    if engine:
        assert level == "home" and "no project image" in why
    else:
        assert level == "home" and "no engine answers" in why


def test_auto_with_an_image_and_an_engine_says_container(tmp_path: Path):
    engine, reason = available()
    if not engine:
        pytest.skip(f"no Docker engine: {reason}")
    level, why = choose_level("auto", _project(tmp_path, image=True))
    assert level == "container" and why == "--sandbox auto: an engine answers and the project has an image: validating at level container"


def test_a_level_that_is_none_is_refused(tmp_path: Path):
    with pytest.raises(BadInput):
        choose_level("bogus", _project(tmp_path, image=False))


def test_auto_validates_a_node_project_in_a_container_without_an_image_of_its_own(tmp_path: Path):
    """A Node project's node_modules is built on this host and mounted into benchtape's base
    image, so it needs no Dockerfile.benchtape nor wheelhouse: `auto` chose home and asked for a
    (Python) wheelhouse, where `--sandbox container` validated p-map's tasks."""
    engine, reason = available()
    (tmp_path / "package.json").write_text('{"name": "p", "version": "1.0.0", "scripts": {"test": "node --test"}}\n')
    level, why = choose_level("auto", _project(tmp_path, image=False))
    if engine:
        assert level == "container" and "Node project" in why and "wheelhouse" not in why, why
    else:
        assert level == "home" and "no engine answers" in why, why
