"""Issue 47: `benchtape task export ID --format harbor -o DIR` turns a task mined from a real
history (toolz PR 603, from shared/realrepos) into a Harbor task folder: the real Harbor 0.25
lints it clean and loads it; its oracle earns reward 1 and its untouched environment reward 0
(benchtape's validation of the exported folder at level container, through the Harbor contract
alone); and the real `harbor run -a oracle` passes it while `-a nop` fails it, where Harbor's
Docker environment can run (it drives the `docker compose` v2 plugin)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from formatskit import ROOT, benchtape
from harborkit import harbor, harbor_environment, harbor_run, harbor_script

sys.path.insert(0, str(ROOT / "tests" / "harvest"))
from harvestkit import clone_toolz  # noqa: E402
from test_task_container import PYTEST_DEPS, wheel_of  # noqa: E402 - the offline wheelhouse the container tests use


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    top = tmp_path_factory.mktemp("harbor-export")
    repo = clone_toolz(top / "toolz")
    assert benchtape("task", "create", "603", cwd=repo).returncode == 0
    wheels = repo / ".benchtape" / "wheelhouse"
    wheels.mkdir()
    for name in PYTEST_DEPS:
        wheel_of(name, wheels)
    out = benchtape("task", "export", "603", "--format", "harbor", "-o", top / "harbor", "--json", cwd=repo, env={"XDG_CACHE_HOME": str(top / "cache")}, timeout=300)
    assert out.returncode == 0, out.stdout + out.stderr
    (done,) = json.loads(out.stdout)["exported"]
    return {"top": top, "repo": repo, "folder": Path(done["folder"]), "doc": done}


def test_the_folder_is_a_harbor_task_harbor_lints_clean_and_loads(exported: dict[str, Any]) -> None:
    folder = exported["folder"]
    for name in ("task.toml", "instruction.md", "environment/Dockerfile", "tests/test.sh", "solution/solve.sh"):
        assert (folder / name).is_file(), name
    assert (folder / "instruction.md").read_text() == (exported["repo"] / ".benchtape" / "tasks" / "603" / "prompt.md").read_text()
    assert (folder / "tests" / "files" / "toolz" / "tests" / "test_itertoolz.py").is_file()  # the hidden tests, as tests.patch leaves them
    assert (folder / "solution" / "files" / "toolz" / "itertoolz.py").is_file()  # the reference patch's fix
    assert not (folder / "environment" / "workspace" / ".git").exists() and (folder / "environment" / "workspace" / "toolz" / "itertoolz.py").is_file()
    lint = harbor("lint", folder, cwd=exported["top"])
    assert lint.returncode == 0 and "error" not in (lint.stdout + lint.stderr).lower(), lint.stdout + lint.stderr
    python = harbor_script().with_name("python")
    probe = "import sys\nfrom harbor.models.task.task import Task\nt = Task(sys.argv[1])\nprint(t.config.schema_version, t.config.verifier.environment_mode.value, t.config.artifacts, t.config.environment.workdir)"
    loaded = subprocess.run([str(python), "-c", probe, str(folder)], capture_output=True, text=True, timeout=120)
    assert loaded.returncode == 0 and loaded.stdout.split() == ["1.4", "separate", "['/app']", "/app"], loaded.stdout + loaded.stderr


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_through_the_harbor_contract_the_oracle_passes_and_the_noop_fails(exported: dict[str, Any], tmp_path: Path) -> None:
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: the exported folder NOT RUN: {why}")
    repo = tmp_path / "repo"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    shutil.copytree(exported["folder"], repo / ".benchtape" / "tasks" / "603")
    done = benchtape("task", "validate", "--sandbox", "container", "--json", cwd=repo, timeout=900)
    report = json.loads(done.stdout)["tasks"][0]
    assert done.returncode == 0 and report["validated"], json.dumps(report, indent=1)
    assert (report["phases"]["base"]["reward"], report["phases"]["reference"]["reward"]) == (0.0, 1.0)
    assert any("given the task's artifacts: /app" in n for n in report["notes"])


def test_the_real_harbor_run_passes_the_oracle_and_fails_nop(exported: dict[str, Any]) -> None:
    """`harbor run -p FOLDER -a oracle|nop`: with Harbor's Docker environment where the `docker
    compose` v2 plugin exists, else its Podman environment (Debian's podman, PyPI's
    podman-compose). Harbor's Podman environment enforces no network policy and refuses a
    no-network phase, so there the folder runs with its verifier's network table removed (the
    only change; the verifier needs no network either way)."""
    from benchtape.sandbox.baseimage import BASE_IMAGE

    folder = exported["folder"]
    env, extra = harbor_environment([BASE_IMAGE], exported["top"])
    if extra:  # Harbor's podman environment
        folder = shutil.copytree(exported["folder"], exported["top"] / "podman" / "603")
        toml = folder / "task.toml"
        text = toml.read_text()
        assert '[verifier.environment]  # the verifier\'s own environment: its network\nnetwork_mode = "no-network"\n' in text
        toml.write_text(text.replace('[verifier.environment]  # the verifier\'s own environment: its network\nnetwork_mode = "no-network"\n', ""))
    rewards = {}
    for agent, trials in harbor_run(folder, ["oracle", "nop"], exported["top"] / "jobs", extra=extra, env=env, cwd=exported["top"]).items():  # one job, both agents
        (trial,) = trials.values()
        assert not (trial.get("exception_info") or {}), trial.get("exception_info")
        rewards[agent] = (trial.get("verifier_result") or {}).get("rewards", {}).get("reward")
    assert rewards == {"oracle": 1.0, "nop": 0.0}


def test_bad_requests_are_refused_and_nothing_is_written(exported: dict[str, Any]) -> None:
    repo = exported["repo"]
    unknown = benchtape("task", "export", "9999", "--format", "harbor", "-o", exported["top"] / "none", cwd=repo)
    assert unknown.returncode == 2 and "no task '9999'" in unknown.stderr and not (exported["top"] / "none").exists()
    taken = benchtape("task", "export", "603", "--format", "harbor", "-o", exported["folder"].parent, cwd=repo)
    assert taken.returncode == 2 and "not an empty folder" in taken.stderr
    wrong = benchtape("task", "export", "603", "--format", "swe", "-o", exported["top"] / "x", cwd=repo)
    assert wrong.returncode == 2 and "--format harbor" in wrong.stderr


def test_a_project_with_its_own_dockerfile_exports_that_environment(exported: dict[str, Any]) -> None:
    """With `Dockerfile.benchtape`, the environment is the project's: that Dockerfile, its build
    context the tree at the base commit (as benchtape builds it), the working directory /workspace."""
    from benchtape.sandbox.baseimage import BASE_IMAGE

    repo = exported["repo"]
    dockerfile = repo / "Dockerfile.benchtape"
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nCOPY . /workspace\n")
    try:
        out = benchtape("task", "export", "603", "--format", "harbor", "-o", exported["top"] / "own", "--json", cwd=repo)
    finally:
        dockerfile.unlink()
    assert out.returncode == 0, out.stderr
    (done,) = json.loads(out.stdout)["exported"]
    folder = Path(done["folder"])
    assert done["environment"] == "Dockerfile.benchtape" and done["workdir"] == "/workspace"
    assert (folder / "environment" / "Dockerfile").read_text() == f"FROM {BASE_IMAGE}\nCOPY . /workspace\nWORKDIR /workspace\n"
    assert (folder / "environment" / "toolz" / "itertoolz.py").is_file() and not (folder / "environment" / ".git").exists()
    toml = (folder / "task.toml").read_text()
    assert 'artifacts = ["/workspace"]' in toml and 'workdir = "/workspace"' in toml
    lint = harbor("lint", folder, cwd=exported["top"])
    assert lint.returncode == 0, lint.stdout + lint.stderr


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_without_a_wheelhouse_the_project_environment_goes_into_the_image_and_the_oracle_passes(exported: dict[str, Any], tmp_path: Path) -> None:
    """Most projects bring neither a Dockerfile.benchtape nor a wheelhouse. Their folder's image
    gets the project environment container-level validation verifies in (the venv, pytest in
    it), copied to the path it has here, with the box's variables. The base image alone holds
    a Python and its standard library, so the oracle earned 0 there (`No module named pytest`)."""
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        if os.environ.get("CI") == "true":
            pytest.fail(f"NO DOCKER ENGINE (CI=true): {why}", pytrace=False)
        pytest.skip(f"NO DOCKER ENGINE: the exported folder NOT RUN: {why}")
    repo = shutil.copytree(exported["repo"], tmp_path / "toolz", symlinks=True, ignore=shutil.ignore_patterns("wheelhouse"))
    out = benchtape("task", "export", "603", "--format", "harbor", "-o", tmp_path / "harbor", "--json", cwd=repo, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    (done,) = json.loads(out.stdout)["exported"]
    assert done["dependencies"].startswith("the project environment "), done
    folder = Path(done["folder"])
    dockerfile = (folder / "environment" / "Dockerfile").read_text()
    (venv,) = [line.split("=", 1)[1].strip('"') for line in dockerfile.splitlines() if line.startswith("ENV VIRTUAL_ENV=")]
    assert "COPY host/ /" in dockerfile and 'ENV PYTHONPATH="/app"' in dockerfile, dockerfile
    assert list((folder / "environment" / "host" / venv.lstrip("/") / "lib").glob("python3*/site-packages/pytest")), "pytest is in the venv the image gets"
    leaving = [str(link) for link in folder.rglob("*") if link.is_symlink() and (os.path.isabs(os.readlink(link)) or not os.path.realpath(link).startswith(str(folder.resolve())))]
    assert not leaving, leaving  # Harbor refuses a task folder with a link out of it (the venv's bin/python -> /usr/bin/python3)
    lint = harbor("lint", folder, cwd=tmp_path)
    assert lint.returncode == 0 and "error" not in (lint.stdout + lint.stderr).lower(), lint.stdout + lint.stderr
    project = tmp_path / "project"
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    shutil.copytree(folder, project / ".benchtape" / "tasks" / "603")
    done = benchtape("task", "validate", "--sandbox", "container", "--json", cwd=project, timeout=900)
    report = json.loads(done.stdout)["tasks"][0]
    assert done.returncode == 0 and report["validated"], json.dumps(report, indent=1)
    assert (report["phases"]["base"]["reward"], report["phases"]["reference"]["reward"]) == (0.0, 1.0)


def test_a_task_never_validated_is_exported_saying_so(exported: dict[str, Any]) -> None:
    """603 here was created, never validated: its folder was exported without a word, though
    its hidden tests were never proven to fail before the fix and pass after it (itsdangerous'
    154, newcomer pass). The export still happens, saying so, and the JSON carries the state."""
    assert exported["doc"]["state"] == "unvalidated"
    out = benchtape("task", "export", "603", "--format", "harbor", "-o", exported["top"] / "again", cwd=exported["repo"], env={"XDG_CACHE_HOME": str(exported["top"] / "cache")}, timeout=300)
    assert out.returncode == 0 and (exported["top"] / "again" / "603" / "task.toml").is_file(), out.stdout + out.stderr
    assert "note: task 603 is unvalidated (never validated): exported as it is" in out.stderr and "next: benchtape task validate 603" in out.stderr, out.stderr
