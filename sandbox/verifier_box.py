"""Where the hidden verifier's commands run: a clean folder on this host, or a fresh container.

`container`: a new container of the project image (network `none` unless the task says
`verify.network`), the patched tree bind-mounted at /workspace, the wheelhouse's unpacked
folder read-only at /opt/benchtape-site on PYTHONPATH and PATH. `home`: the tree in its own
folder, HOME and TMPDIR beside it (never the user's), the scrubbed grading environment, and
no network where this host can take it away (`unshare -rn`: a new user and network
namespace, loopback only); where it cannot, the box says so in its notes.

Either way a command runs through `/bin/sh -c` with the tree as its working directory, and
a timeout kills its whole process group.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

from benchtape.core.command_runner import CommandResult, grading_env, run_local
from benchtape.sandbox.verifier import RunCommand
from benchtape.sandbox.wheelhouse import SITE_AT

LEVELS = ("home", "container")
# (the tree where the box runs it, the box's own PATH) -> variables to add: a project
# environment's venv and PYTHONPATH (envs/), said once for both levels
EnvFor = Callable[[str, str], Mapping[str, str]]
CONTAINER_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


@dataclass
class VerifierBox:
    run: RunCommand
    level: str
    where: str  # "home" or "container IMAGE"
    network: bool
    notes: list[str] = field(default_factory=list)


@functools.lru_cache(maxsize=1)
def can_unshare_network() -> bool:
    """Whether this host lets an unprivileged process take its own network away."""
    exe = shutil.which("unshare")
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@contextlib.contextmanager
def home_box(tree: Path, *, network: bool = False, site: Path | None = None, env: Mapping[str, str] | None = None, env_for: EnvFor | None = None) -> Iterator[VerifierBox]:
    """Commands on this host in `tree`; HOME and TMPDIR are fresh folders beside it."""
    home = tree.parent / "home"
    tmp = tree.parent / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    base = grading_env()
    base.update({"HOME": str(home), "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1"})
    if site is not None:
        base["PYTHONPATH"] = str(site)
        base["PATH"] = f"{site / 'bin'}:{base.get('PATH', '/usr/bin:/bin')}"
    base.update(env or {})
    if env_for is not None:
        base.update(env_for(str(tree), base.get("PATH", "/usr/bin:/bin")))
    notes: list[str] = []
    prefix: list[str] = []
    if not network:
        if can_unshare_network():
            prefix = ["unshare", "-rn", "--"]
        else:
            notes.append("the network is not taken away at level home on this host (no unprivileged `unshare -rn`); use level container to enforce it")

    def run(command: str, timeout: float) -> CommandResult:
        return run_local([*prefix, "/bin/sh", "-c", command], tree, timeout, env=base)

    yield VerifierBox(run=run, level="home", where="home", network=network or bool(notes), notes=notes)


@contextlib.contextmanager
def container_box(tree: Path, image: str | None, *, network: bool = False, site: Path | None = None, env: Mapping[str, str] | None = None, env_for: EnvFor | None = None, mounts: tuple[str, ...] = ()) -> Iterator[VerifierBox]:
    """Commands in a fresh container of `image` (None: benchtape's base image) on `tree`."""
    from benchtape.sandbox.container import WORKSPACE_AT, ContainerSandbox

    box_env = {"PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    shares = []
    if site is not None:
        shares.append({"from": str(site), "to": SITE_AT, "access": "ro"})
        box_env["PYTHONPATH"] = SITE_AT
        box_env["PATH"] = f"{SITE_AT}/bin:{CONTAINER_PATH}"
    shares += [{"from": m, "to": m, "access": "ro"} for m in mounts]  # a project environment, at its own path
    if env_for is not None:
        box_env.update(env_for(WORKSPACE_AT, box_env.get("PATH", CONTAINER_PATH)))
    box = ContainerSandbox(image, network="bridge" if network else "none", env=box_env, shares=shares)
    box.start(tree)
    try:

        def run(command: str, timeout: float) -> CommandResult:
            return box.run(["/bin/sh", "-c", command], WORKSPACE_AT, timeout)

        yield VerifierBox(run=run, level="container", where=f"container {box.image}", network=network)
    finally:
        box.remove()


def verifier_box(level: str, tree: Path, *, image: str | None = None, network: bool = False, site: Path | None = None, env_for: EnvFor | None = None, mounts: tuple[str, ...] = ()) -> contextlib.AbstractContextManager[VerifierBox]:
    """The box of a level (`home` or `container`) on `tree`: where validation and grading run a
    task's verifier. `site`: an unpacked wheelhouse (sandbox/wheelhouse.py), with no project image;
    `env_for`: the project environment's variables (envs/); `mounts`: folders a container
    mounts read-only at their own path (the environment's venv)."""
    if level == "container":
        return container_box(tree, image, network=network, site=site, env_for=env_for, mounts=mounts)
    if level != "home":
        raise ValueError(f"the verifier runs at level home or container, not {level!r}")
    return home_box(tree, network=network, site=site, env_for=env_for)
