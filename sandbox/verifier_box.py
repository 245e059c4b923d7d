"""Where the hidden verifier's commands run: a clean folder on this host, or a fresh container.

`container`: a new container of the project image (network `none` unless the task says
`verify.network`), the patched tree bind-mounted at /workspace, the wheelhouse's unpacked
folder read-only at /opt/benchtape-site on PYTHONPATH and PATH. `home`: the tree in its own
folder, HOME and TMPDIR beside it (never the user's), the scrubbed grading environment, and
no network where this host can take it away (`unshare -rn`: a new user and network
namespace, its loopback brought up: a test's own server on 127.0.0.1 works); where it cannot,
the box says so in its notes.

Either way a command runs through `/bin/sh -c` with the tree as its working directory, and
its timeout is the whole budget. At level home the command runs in a PID namespace of its own
(sandbox/pidfence.py), so what it started (a `setsid` child ignoring TERM, a `sleep &`) ends
with it or at the deadline, never writes on the host afterwards; no file it writes may pass
BENCHTAPE_MAX_BOX_FILE (core/limits.py), nor at level container. The box's own tools are named
by absolute path: a task's environment (`PATH`) cannot hide or replace them.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shlex
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

from benchtape.core.command_runner import CommandResult, grading_env, run_local
from benchtape.core.limits import box_file_limit, box_memory_limit
from benchtape.sandbox.pidfence import fence
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


def host_tool(name: str) -> str | None:
    """A program of this host by absolute path (benchtape's PATH, then the usual folders), so
    that a box's own tools never depend on the PATH a task sets."""
    found = shutil.which(name) or next((f"{d}/{name}" for d in ("/usr/bin", "/bin", "/usr/sbin", "/sbin") if os.access(f"{d}/{name}", os.X_OK)), None)
    return os.path.abspath(found) if found else None


@functools.lru_cache(maxsize=1)
def can_unshare_network() -> bool:
    """Whether this host lets an unprivileged process take its own network away."""
    exe = host_tool("unshare")
    if exe is None:
        return False
    try:
        return subprocess.run([exe, "-rn", "true"], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


@functools.lru_cache(maxsize=1)
def can_private_tmp() -> bool:
    """Whether this host lets an unprivileged process have its own mount namespace and mount a
    tmpfs in it (the verifier's own bounded TMPDIR at level home)."""
    exe = host_tool("unshare")
    if exe is None:
        return False
    probe = f'PATH={BOX_PATH}; d=$(mktemp -d) && mount -t tmpfs -o size=1m t "$d" && umount "$d" && rmdir "$d"'
    try:
        return subprocess.run([exe, "-rm", "--", "/bin/sh", "-c", probe], capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


BOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"  # where a box finds its own tools, whatever PATH a task sets
# $1 the tmpfs size in bytes, $2 TMPDIR, $3 the tree, $4 the command: TMPDIR becomes a tmpfs of
# this namespace (bounded, and gone with it), then the command runs with the task's own PATH.
# A new network namespace (`unshare -n`) has its loopback DOWN: every test that serves on
# 127.0.0.1 (express's supertest, an aiohttp test server) failed on ENETUNREACH. It is brought up
# first, by the box's own interpreter (SIOCSIFFLAGS: up, loopback, running; no iproute2 needed);
# the namespace has no other interface, so nothing beyond the box is reachable.
LOOPBACK_UP = shlex.quote(sys.executable) + """ -I -S -c "import fcntl, socket, struct; fcntl.ioctl(socket.socket(), 0x8914, struct.pack('16sH14x', b'lo', 0x49))" 2>/dev/null; """
_PRIVATE_TMP = '_task_path="${PATH-}"; PATH=' + BOX_PATH + '; mount -t tmpfs -o size="$1" benchtape-tmp "$2" || exit 125; PATH="$_task_path"; export PATH; cd "$3" && exec /bin/sh -c "$4"'


# A fresh HOME has no git identity, and a project whose tests make commits (a versioning tool, a
# git wrapper: dunamai's 8 of 55) failed them all with "Author identity unknown", as their own
# CI, which sets one, never does. The same in every phase, so it decides no test's list.
GIT_IDENTITY = {"GIT_AUTHOR_NAME": "benchtape", "GIT_AUTHOR_EMAIL": "benchtape@localhost", "GIT_COMMITTER_NAME": "benchtape", "GIT_COMMITTER_EMAIL": "benchtape@localhost"}


def rustup_home(host: Mapping[str, str] | None = None) -> dict[str, str]:
    """RUSTUP_HOME as this host has it. `cargo` on most hosts is rustup's proxy, which finds the
    toolchain it runs in `$RUSTUP_HOME`, by default `$HOME/.rustup`: with the box's fresh HOME
    every Rust verifier failed before compiling anything ("rustup could not choose a version of
    cargo to run"), and each task read `gold_still_fails` with "runner not recognised". Only the
    toolchains' home is named: CARGO_HOME (its config.toml, its registry) stays the box's own."""
    host = os.environ if host is None else host
    if host.get("RUSTUP_HOME"):
        return {"RUSTUP_HOME": host["RUSTUP_HOME"]}
    where = Path(host.get("HOME") or str(Path.home())) / ".rustup"
    return {"RUSTUP_HOME": str(where)} if where.is_dir() else {}


@contextlib.contextmanager
def home_box(tree: Path, *, network: bool = False, site: Path | None = None, env: Mapping[str, str] | None = None, env_for: EnvFor | None = None) -> Iterator[VerifierBox]:
    """Commands on this host in `tree`; HOME and TMPDIR are fresh folders beside it, TMPDIR a
    tmpfs of BENCHTAPE_MAX_BOX_FILE bytes in a mount namespace of the command's own where the
    host allows one (what a test leaves there is gone when it ends); each process it starts
    may take BENCHTAPE_MAX_BOX_MEMORY (core/limits.py)."""
    home = tree.parent / "home"
    tmp = tree.parent / "tmp"
    home.mkdir(exist_ok=True)
    tmp.mkdir(exist_ok=True)
    base = grading_env()
    base.update({"HOME": str(home), "TMPDIR": str(tmp), "PYTHONDONTWRITEBYTECODE": "1", **GIT_IDENTITY})
    base.update(rustup_home())
    if not (tree / "go.work").exists():
        # Go takes a go.work from the tree's parents when the tree has none: one in /tmp (an
        # agent at level home wrote it; anyone may) made every Go verifier on the host fail
        # ("directory . is contained in a module that is not one of the workspace modules"),
        # the oracle's cells graded FAIL. A tree's own go.work is the nearest, and still read.
        base["GOWORK"] = "off"
    if site is not None:
        base["PYTHONPATH"] = str(site)
        base["PATH"] = f"{site / 'bin'}:{base.get('PATH', '/usr/bin:/bin')}"
    base.update(env or {})
    if env_for is not None:
        base.update(env_for(str(tree), base.get("PATH", "/usr/bin:/bin")))
    notes: list[str] = []
    cut_network = not network and can_unshare_network()
    if not network and not cut_network:
        notes.append("the network is not taken away at level home on this host (no unprivileged `unshare -rn`); use level container to enforce it")
    fenced = fence()
    if not fenced.confined:
        notes.append(f"what the verifier starts is not confined to it at level home on this host ({fenced.why}): a process it leaves behind may outlive it; use level container")
    limit = box_file_limit()
    memory = box_memory_limit()  # per process: at home no engine caps the whole tree
    unshare = host_tool("unshare") or "unshare"
    private_tmp = can_private_tmp()

    def argv(command: str) -> list[str]:
        if private_tmp:
            return [unshare, "-rmn" if cut_network else "-rm", "--", "/bin/sh", "-c", (LOOPBACK_UP if cut_network else "") + _PRIVATE_TMP, "sh", str(limit), str(tmp), str(tree), command]
        if cut_network:
            return [unshare, "-rn", "--", "/bin/sh", "-c", LOOPBACK_UP + 'exec /bin/sh -c "$1"', "sh", command]
        return ["/bin/sh", "-c", command]

    def run(command: str, timeout: float) -> CommandResult:
        return run_local(fenced.wrap(argv(command), tree, base), tree, timeout, env=base, file_limit=limit, memory_limit=memory)

    yield VerifierBox(run=run, level="home", where="home", network=network or not cut_network, notes=notes)


@contextlib.contextmanager
def container_box(tree: Path, image: str | None, *, network: bool = False, site: Path | None = None, env: Mapping[str, str] | None = None, env_for: EnvFor | None = None, mounts: tuple[str, ...] = ()) -> Iterator[VerifierBox]:
    """Commands in a fresh container of `image` (None: benchtape's base image) on `tree`."""
    from benchtape.sandbox.container import WORKSPACE_AT, ContainerSandbox

    box_env = {"PYTHONDONTWRITEBYTECODE": "1", **GIT_IDENTITY, **(env or {})}
    shares = []
    if site is not None:
        shares.append({"from": str(site), "to": SITE_AT, "access": "ro"})
        box_env["PYTHONPATH"] = SITE_AT
        box_env["PATH"] = f"{SITE_AT}/bin:{CONTAINER_PATH}"
    shares += [{"from": m, "to": m, "access": "ro"} for m in mounts]  # a project environment, at its own path
    if env_for is not None:
        box_env.update(env_for(WORKSPACE_AT, box_env.get("PATH", CONTAINER_PATH)))
    box = ContainerSandbox(image, network="bridge" if network else "none", env=box_env, shares=shares, file_limit=box_file_limit())
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
