"""Building a project's environment runs the mined repository's own code on this host (its
setup.py): it must not see the host's secrets. markupsafe-shaped repro: a setup.py that wrote
`os.environ['ANTHROPIC_API_KEY']` to a file during `task validate`'s build got the real key.
Really built: uv, PyPI (setuptools for the build)."""

from __future__ import annotations

from pathlib import Path

import pytest
from repokit import git, init_repo, write_files

from benchtape.envs.build import ensure_env
from benchtape.envs.host_env import build_host_env
from benchtape.envs.project_env import recipe_at
from benchtape.spec.project import load_project

SETUP = """import os
from setuptools import setup
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "seen-env.txt"), "w") as f:
    f.write("\\n".join(f"{k}={v}" for k, v in sorted(os.environ.items())))
setup(name="peek", version="0.1", packages=["peek"])
"""


def test_the_build_env_leaves_out_secret_names_and_shapes(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-notreal-0123456789")
    monkeypatch.setenv("MY_SERVICE_TOKEN", "plainvalue12345")
    monkeypatch.setenv("GH_PAT_HERE", "ghp_" + "a" * 36)
    monkeypatch.setenv("UV_INDEX_PRIVATE_PASSWORD", "index-pass-123")
    monkeypatch.setenv("SOME_SETTING", "ordinary")
    env = build_host_env()
    assert "ANTHROPIC_API_KEY" not in env and "MY_SERVICE_TOKEN" not in env and "GH_PAT_HERE" not in env
    assert env["UV_INDEX_PRIVATE_PASSWORD"] == "index-pass-123" and env["SOME_SETTING"] == "ordinary" and "PATH" in env


def test_a_repositorys_setup_py_never_sees_the_hosts_keys(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    secret = "sk-ant-api03-hpy-planted-secret-0123456789"
    monkeypatch.setenv("ANTHROPIC_API_KEY", secret)
    root = tmp_path / "peek"
    init_repo(root)
    write_files(root, {"setup.py": SETUP, "peek/__init__.py": "", "tests/test_peek.py": "def test_ok():\n    assert True\n"})
    git(root, "add", "-A")
    git(root, "commit", "-qm", "peek")
    recipe = recipe_at(load_project(root), git(root, "rev-parse", "HEAD"))
    env = ensure_env(recipe, root, cache=tmp_path / "cache")
    seen = list((tmp_path / "cache").rglob("seen-env.txt"))
    assert env.venv is not None and seen, "the project's setup.py did not run"
    text = "".join(p.read_text() for p in seen)
    assert "PATH=" in text and secret not in text and "ANTHROPIC_API_KEY" not in text


def test_the_node_install_is_handed_the_same_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """npm and yarn read the repository's own configuration: their install gets the host's
    environment without its secrets too, as the Python build does (one definition)."""
    from benchtape.envs.node import build_modules

    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-api03-node-planted-0123456789")
    monkeypatch.setenv("npm_config_registry", "http://127.0.0.1:4873/")
    (tmp_path / "package.json").write_text('{"name": "p", "version": "1.0.0"}\n')
    handed: list[dict[str, str]] = []
    build_modules(tmp_path, ["npm", "install"], {}, tmp_path / "cache", lambda argv, cwd, env, what: handed.append(env))
    (env,) = handed
    assert "ANTHROPIC_API_KEY" not in env and env["npm_config_registry"] == "http://127.0.0.1:4873/" and "PATH" in env
