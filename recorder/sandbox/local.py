"""Local sandbox levels: what a run gets its own copy of.

`workspace`: a fresh temp copy of the staged tree, real HOME. `home` (the default): the
same, and HOME is that folder. `none`: the real directory, gated twice (the bench names
it and the operator passes --allow-host-writes). `container` lives in recorder/sandbox/container.py.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from recorder.spec.bench import ScenarioSpec

# Passed through from the host; everything else is scrubbed.
BASE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL")
ALWAYS_FORWARDED_SECRETS = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@dataclass
class Workspace:
    root: Path  # the workspace root: what is snapshotted and graded
    agent_cwd: Path  # where the agent starts (`cwd:` moves only the agent)
    home: Path
    env: dict[str, str]
    level: str
    temp: Path | None = None  # removed on cleanup
    secret_names: list[str] = field(default_factory=list)

    def cleanup(self) -> None:
        if self.temp is not None and self.temp.exists():
            shutil.rmtree(self.temp, ignore_errors=True)


def sandbox_env(scenario: ScenarioSpec, host: Mapping[str, str], home: Path, tmpdir: Path | None) -> dict[str, str]:
    """The scrubbed environment a harness runs with."""
    env = {k: host[k] for k in BASE_ENV if k in host}
    env["HOME"] = str(home)
    if tmpdir is not None:
        env["TMPDIR"] = str(tmpdir)
    elif "TMPDIR" in host:
        env["TMPDIR"] = host["TMPDIR"]
    for name in list(scenario.sandbox.share_env) + list(scenario.sandbox.secret_env) + list(ALWAYS_FORWARDED_SECRETS):
        if name in host:
            env[name] = host[name]
    env.update(scenario.sandbox.env)
    env["BENCHTAPE"] = "1"
    return env


def prepare(scenario: ScenarioSpec, seed: Path | None, host_env: Mapping[str, str] | None = None, level: str | None = None) -> Workspace:
    """A fresh workspace for one session, seeded from the staged tree."""
    host_env = dict(os.environ if host_env is None else host_env)
    level = level or scenario.sandbox.level
    secret_names = list(scenario.sandbox.secret_env)
    if level == "none":
        root = scenario.sandbox.workdir or Path.cwd()
        home = Path(host_env.get("HOME", str(Path.home())))
        env = sandbox_env(scenario, host_env, home, None)
        return Workspace(root=root, agent_cwd=_agent_cwd(root, scenario), home=home, env=env, level=level, secret_names=secret_names)
    temp = Path(tempfile.mkdtemp(prefix="benchtape-"))
    root = temp / "work"
    if seed is not None:
        shutil.copytree(seed, root, symlinks=True)
    else:
        root.mkdir()
    tmpdir = temp / "tmp"
    tmpdir.mkdir()
    home = root if level in ("home", "container") else Path(host_env.get("HOME", str(Path.home())))
    env = sandbox_env(scenario, host_env, home, tmpdir)
    cwd = _agent_cwd(root, scenario)
    if not cwd.is_dir():
        shutil.rmtree(temp, ignore_errors=True)
        from recorder.errors import BadInput

        raise BadInput(f"`cwd: {scenario.cwd}` does not exist in the staged workspace", file=scenario.where.file, line=scenario.where.line, fix="create that folder in the testdata, or fix cwd:")
    for share in scenario.sandbox.share_paths:
        _apply_local_share(share, root)
    return Workspace(root=root, agent_cwd=cwd, home=home, env=env, level=level, temp=temp, secret_names=secret_names)


def _agent_cwd(root: Path, scenario: ScenarioSpec) -> Path:
    return root / scenario.cwd if scenario.cwd else root


def _apply_local_share(share: dict[str, str], root: Path) -> None:
    """rw: a link to the real path; copy: a copy. (ro is container-only and refused at load.)"""
    src = Path(share["from"])
    to = Path(share["to"])
    dest = to if to.is_absolute() else root / to
    if to.is_absolute():
        return  # an absolute target only makes sense inside a container
    dest.parent.mkdir(parents=True, exist_ok=True)
    if share["access"] == "copy":
        if src.is_dir():
            shutil.copytree(src, dest, symlinks=True, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest)
    else:
        if not dest.exists():
            dest.symlink_to(src)
