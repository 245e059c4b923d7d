"""`benchtape task envs`: the environment cache listed and pruned. Each environment here is
really built (ensure_env: uv, a venv, the tiny project installed editable) by a child process,
so what holds an environment is a real process: one still running keeps its environment
through any prune, one that exited does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from e2e.cli import benchtape  # noqa: E402

DAY = 86400.0
BUILD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from benchtape.envs.build import ensure_env
    from benchtape.envs.recipe import recipe_for
    from benchtape.spec.project_tree import FolderTree
    tree = Path(sys.argv[1])
    env = ensure_env(recipe_for(FolderTree(tree)), tree)
    print(env.folder, flush=True)
    if len(sys.argv) > 2:  # hold it: wait until told to exit
        sys.stdin.read()
    """
)


def _project(root: Path, name: str) -> Path:
    tree = root / name
    (tree / name).mkdir(parents=True)
    (tree / name / "__init__.py").write_text("VALUE = 1\n")
    (tree / "pyproject.toml").write_text(f'[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "{name}"\nversion = "0.1"\n')
    return tree


def _env(cache: Path) -> dict[str, str]:
    return {"BENCHTAPE_ENV_CACHE": str(cache)}


def _built(cache: Path, tree: Path) -> Path:
    done = subprocess.run([sys.executable, "-c", BUILD, str(tree)], env={**os.environ, **_env(cache)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return Path(done.stdout.strip())


def _listed(cache: Path) -> dict[str, Any]:
    done = benchtape("task", "envs", "--json", env=_env(cache))
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """Two environments of two tiny projects, each built by a process that has exited."""
    root = tmp_path_factory.mktemp("env-cache")
    cache = root / "cache"
    trees = {name: _project(root, name) for name in ("alpha", "beta")}
    return {"cache": cache, "trees": trees, "folders": {name: _built(cache, tree) for name, tree in trees.items()}}


def test_the_list_shows_each_built_environment_with_its_project_python_size_and_last_use(built: dict[str, Any]):
    doc = _listed(built["cache"])
    by_key = {e["key"]: e for e in doc["environments"]}
    assert set(by_key) == {f.name for f in built["folders"].values()}
    for name, folder in built["folders"].items():
        entry = by_key[folder.name]
        assert entry["project"] == name and entry["project_installed"] and entry["complete"]
        assert entry["python"] == f"{sys.version_info.major}.{sys.version_info.minor}"
        assert entry["bytes"] > 1_000_000  # a venv with the project in it
        assert time.time() - entry["last_used"] < 600 and not entry["in_use"]  # the builder exited
    assert doc["bytes"] == sum(e["bytes"] for e in doc["environments"])
    plain = benchtape("task", "envs", env=_env(built["cache"]))
    assert plain.returncode == 0 and "alpha, Python" in plain.stdout and "2 environments" in plain.stdout, plain.stdout


def test_an_environment_is_built_with_its_packages_compiled(built: dict[str, Any]):
    """(Before any prune below.) Its runs start from bytecode: where PYTHONDONTWRITEBYTECODE is set (many CI machines) or
    the environment is mounted read-only (a container) nothing else compiles it, and each test
    run compiled pytest again from source."""
    venv = built["folders"]["alpha"] / "venv"
    assert len(list(venv.glob("lib/python*/site-packages/_pytest/__pycache__/*.pyc"))) > 30


def test_a_cache_hit_stamps_the_last_use_and_a_prune_removes_only_the_stale_and_the_unfinished(built: dict[str, Any]):
    cache, folders = built["cache"], built["folders"]
    month_ago = time.time() - 31 * DAY
    for folder in folders.values():
        os.utime(folder / ".last-used", (month_ago, month_ago))
    assert _built(cache, built["trees"]["beta"]) == folders["beta"]  # a hit: reused, and its use stamped now
    unfinished = cache / "0123456789abcdef0123"  # a build killed before its manifest
    (unfinished / "venv").mkdir(parents=True)
    done = benchtape("task", "envs", "--prune", "--unused-for", "30d", "--json", env=_env(cache))
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert {e["key"] for e in doc["removed"]} == {folders["alpha"].name, unfinished.name}
    assert doc["kept"] == 1 and doc["kept_in_use"] == [] and doc["freed_bytes"] > 1_000_000
    assert not folders["alpha"].exists() and not unfinished.exists() and (folders["beta"] / "venv" / "bin" / "python").exists()
    assert [e["key"] for e in _listed(cache)["environments"]] == [folders["beta"].name]
    # alpha built again on its next use, as a first build is
    assert _built(cache, built["trees"]["alpha"]) == folders["alpha"] and (folders["alpha"] / "manifest.json").is_file()


def test_an_environment_a_running_benchtape_uses_survives_any_prune(built: dict[str, Any]):
    cache = built["cache"]
    holder = subprocess.Popen([sys.executable, "-c", BUILD, str(built["trees"]["alpha"]), "hold"], env={**os.environ, **_env(cache)}, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        held = Path(holder.stdout.readline().strip())  # type: ignore[union-attr]
        assert held == built["folders"]["alpha"]
        assert {e["key"]: e["in_use"] for e in _listed(cache)["environments"]}[held.name] is True
        done = benchtape("task", "envs", "--prune", "--unused-for", "0d", env=_env(cache))
        assert done.returncode == 0, done.stderr
        assert f"kept    {held.name}" in done.stdout and "a running benchtape uses it" in done.stdout, done.stdout
        assert (held / "venv" / "bin" / "python").exists()
    finally:
        holder.communicate("", timeout=60)
    assert holder.returncode == 0
    doc = json.loads(benchtape("task", "envs", "--prune", "--unused-for", "0d", "--json", env=_env(cache)).stdout)
    assert held.name in {e["key"] for e in doc["removed"]} and not held.exists()  # its holder exited: nothing keeps it


def test_an_age_that_is_not_one_is_refused_with_the_fix(tmp_path: Path):
    done = benchtape("task", "envs", "--prune", "--unused-for", "a month", env=_env(tmp_path / "cache"))
    assert done.returncode == 2
    assert "--unused-for 'a month' is not an age" in done.stderr and "--unused-for 30d" in done.stderr, done.stderr
    empty = benchtape("task", "envs", env=_env(tmp_path / "cache"))
    assert empty.returncode == 0 and "no cached environments in" in empty.stdout


def test_a_read_only_cache_is_listed_and_a_prune_names_what_it_could_not_remove(built: dict[str, Any], monkeypatch: pytest.MonkeyPatch):
    """A cache this process cannot write (a read-only mount, another user's files): the list
    still reads it, and a prune says, by name and with the error, what it could not remove,
    exit 1, never "removed" for a folder that is still there."""
    from e2e.cli import read_only

    cache = built["cache"]
    folder = _built(cache, built["trees"]["beta"])  # present whatever the tests before left
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(cache))
    listed = read_only(cache, "task", "envs", "--json")
    assert listed.returncode == 0, listed.stderr
    assert folder.name in {e["key"] for e in json.loads(listed.stdout)["environments"]}
    done = read_only(cache, "task", "envs", "--prune", "--unused-for", "0d", "--json")
    assert done.returncode == 1, done.stdout + done.stderr
    doc = json.loads(done.stdout)
    failed = {e["key"]: e["error"] for e in doc["failed"]}
    assert folder.name in failed and failed[folder.name], doc
    assert folder.name not in {e["key"] for e in doc["removed"]} and folder.is_dir()



def test_an_entry_written_into_after_its_build_is_built_anew_on_its_next_use(tmp_path: Path):
    """Anything that wrote into a cached venv (an agent on a host with no mount namespace, which
    could reach every project's entries, not its cell's alone) is found at the entry's next use:
    its digest is the build's no longer, and it is built anew, saying why. A pytest plugin
    planted there would have turned the next verifier's failures into passes."""
    cache, tree = tmp_path / "cache", _project(tmp_path, "gamma")
    folder = _built(cache, tree)
    built = (folder / "manifest.json").stat().st_ino
    assert _built(cache, tree) == folder and (folder / "manifest.json").stat().st_ino == built  # a hit while nothing changed
    [site] = list((folder / "venv").glob("lib/python*/site-packages"))
    (site / "planted_plugin.py").write_text("def pytest_runtest_logreport(report):\n    report.outcome = 'passed'\n")
    done = subprocess.run([sys.executable, "-c", BUILD.replace("print(env.folder, flush=True)", "print(env.folder, env.built, env.notes, flush=True)"), str(tree)], env={**os.environ, **_env(cache)}, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "True" in done.stdout and "was changed in place after it was built" in done.stdout, done.stdout
    assert not (site / "planted_plugin.py").exists() and (folder / "manifest.json").stat().st_ino != built
    assert _built(cache, tree) == folder and "changed in place" not in (folder / "manifest.json").read_text()  # said by the build that found it, not kept
