"""`task validate` at level container: benchtape's base image with the test dependencies from
a wheelhouse (offline), and a project's own Dockerfile.benchtape built from the exported base
tree with the network off."""

from __future__ import annotations

import json
import os
import shutil
import zipfile
from importlib import metadata
from pathlib import Path

import pytest
from e2e.cli import benchtape
from harvestkit import clone_toolz

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("docker")]
PYTEST_DEPS = ("pytest", "pluggy", "iniconfig", "packaging", "pygments")


@pytest.fixture(scope="module", autouse=True)
def engine() -> None:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: container validation NOT RUN: {why}")


def wheel_of(name: str, dest: Path) -> Path:
    """A pure-Python wheel of an installed distribution (its files under site-packages, as a
    wheel holds them), made offline from what this interpreter has."""
    dist = metadata.distribution(name)
    path = dest / f"{dist.metadata['Name'].replace('-', '_')}-{dist.version}-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as z:
        for f in dist.files or []:
            rel = str(f)
            if rel.startswith("..") or "__pycache__" in rel:
                continue
            z.write(dist.locate_file(f), rel)
    return path


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = clone_toolz(tmp_path_factory.mktemp("container") / "toolz")
    assert benchtape("task", "create", "603", cwd=repo).returncode == 0
    return repo


def test_validate_in_the_base_image_with_a_wheelhouse(toolz: Path, tmp_path: Path):
    wheels = toolz / ".benchtape" / "wheelhouse"
    wheels.mkdir()
    for name in PYTEST_DEPS:
        wheel_of(name, wheels)
    done = benchtape("task", "validate", "603", "--sandbox", "container", "--json", cwd=toolz, env={"XDG_CACHE_HOME": str(tmp_path / "cache")}, timeout=600)
    doc = json.loads(done.stdout)
    report = doc["tasks"][0]
    assert done.returncode == 0, json.dumps(report, indent=1)
    assert doc["level"] == "container" and report["where"].startswith("container benchtape-base:")
    assert any("test dependencies from" in n for n in report["notes"])
    assert (report["phases"]["base"]["failed"], report["phases"]["base"]["passed"]) == (1, 49)
    assert report["phases"]["reference"]["passed"] == 50
    # pytest's JUnit report, written inside the container, is read test by test
    assert report["tests"]["fail_to_pass"] == ["toolz.tests.test_itertoolz::test_partition_all"] and report["tests"]["pass_to_pass"] == 49
    assert report["phases"]["base"]["tests"]["toolz.tests.test_itertoolz::test_partition_all"] == "failed"
    shutil.rmtree(wheels)


def test_a_project_image_without_its_test_dependencies_is_diagnosed(toolz: Path):
    from benchtape.sandbox.baseimage import BASE_IMAGE

    dockerfile = toolz / "Dockerfile.benchtape"
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nCOPY . /workspace\nRUN test -f /workspace/toolz/itertoolz.py && test ! -e /workspace/.git\n")
    try:
        done = benchtape("task", "validate", "603", "--sandbox", "container", "--json", cwd=toolz, timeout=600)
        report = json.loads(done.stdout)["tasks"][0]
        assert done.returncode == 1
        assert report["where"].startswith("container benchtape-project:") and any("from Dockerfile.benchtape" in n for n in report["notes"])
        base = report["phases"]["base"]
        assert base["diagnosis"] == "missing_dependency" and base["detail"] == "no module named 'pytest'"
        assert "Dockerfile.benchtape" in base["remedy"]
    finally:
        dockerfile.unlink()

