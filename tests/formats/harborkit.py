"""The REAL Harbor 0.25 (PyPI `harbor`), which needs Python 3.12, from a venv of its own:
BENCHTAPE_HARBOR names its `harbor` script, else `.benchtape/venvs/harbor` under the checkout
(`make receivers` makes it; `.ci/run` does). A test that needs it skips naming what is missing,
and fails instead under CI=true."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]


def harbor_script() -> Path:
    given = os.environ.get("BENCHTAPE_HARBOR")
    script = Path(given) if given else ROOT / ".benchtape" / "venvs" / "harbor" / "bin" / "harbor"
    if not script.is_file():
        why = f"Harbor 0.25 is not installed at {script} (it needs Python 3.12: `make receivers` installs it in a venv of its own; or set BENCHTAPE_HARBOR)"
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    return script


def harbor(*args: str | Path, cwd: Path, timeout: float = 300, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "HARBOR_TELEMETRY": "0", "DO_NOT_TRACK": "1", **(env or {})}  # Harbor's telemetry off: nothing leaves loopback
    return subprocess.run([str(harbor_script()), *map(str, args)], cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


def compose_v2() -> str | None:
    """Why Harbor's Docker environment cannot run here (None when it can): it drives `docker compose` (v2)."""
    if shutil.which("docker") is None:
        return "no docker CLI"
    done = subprocess.run(["docker", "compose", "version"], capture_output=True, text=True)
    if done.returncode != 0:
        return "the `docker compose` v2 plugin is missing (Debian bookworm and PyPI ship only docker-compose 1.29, which Harbor does not drive)"
    return None


def podman_setup(images: list[str], workdir: Path) -> dict[str, str] | str:
    """What `harbor run -e podman` needs here, or why it cannot run: Debian's podman, a
    podman-compose that speaks Harbor's dialect (PyPI's, in Harbor's venv: Debian bookworm's 1.0.3
    lacks `--in-pod`), the local images loaded from Docker's store (podman has its own, and
    nothing is pulled), and a containers.conf whose default ulimits fit under this host's hard
    limits (podman's defaults exceed them in a container). The environment to run it with."""
    bin_dir = harbor_script().parent
    if shutil.which("podman") is None:
        return "podman is not installed (Debian: apt-get install podman)"
    if not (bin_dir / "podman-compose").is_file():
        return f"podman-compose is not installed in Harbor's venv ({bin_dir}/pip install podman-compose; `make receivers` does)"
    import resource

    conf = workdir / "containers.conf"
    nofile = min(4096, resource.getrlimit(resource.RLIMIT_NOFILE)[1])
    nproc = min(4096, resource.getrlimit(resource.RLIMIT_NPROC)[1])
    conf.write_text(f'[containers]\ndefault_ulimits = ["nofile={nofile}:{nofile}", "nproc={nproc}:{nproc}"]\n')
    env = {"CONTAINERS_CONF": str(conf), "PATH": f"{bin_dir}:{os.environ.get('PATH', '')}"}
    for image in images:
        have = subprocess.run(["podman", "image", "exists", image], env={**os.environ, **env}, capture_output=True)
        if have.returncode != 0:
            save = subprocess.Popen(["docker", "save", image], stdout=subprocess.PIPE)
            load = subprocess.run(["podman", "load"], stdin=save.stdout, env={**os.environ, **env}, capture_output=True, text=True, timeout=600)
            save.wait(timeout=60)
            if load.returncode != 0 or save.returncode != 0:
                return f"could not load {image} from Docker into podman: {load.stderr[-500:]}"
    probe = subprocess.run(["podman", "run", "--rm", "--network", "none", images[0], "true"], env={**os.environ, **env}, capture_output=True, text=True, timeout=300)
    if probe.returncode != 0:
        return f"podman cannot run a container here: {probe.stderr.strip()[-500:]}"
    return env


def harbor_environment(images: list[str], workdir: Path) -> tuple[dict[str, str], list[str]]:
    """The environment and `harbor run` arguments for this machine: Harbor's Docker environment
    where `docker compose` v2 exists, else its podman environment; the test skips saying why
    neither can run (and fails under CI=true)."""
    if compose_v2() is None:
        return {}, []
    got = podman_setup(images, workdir)
    if isinstance(got, str):
        why = f"harbor run NOT RUN: {compose_v2()}; and {got}"
        if os.environ.get("CI") == "true":
            pytest.fail(why + " (CI=true)")
        pytest.skip(why)
    # --no-delete: Harbor ends a trial with `down --rmi local --remove-orphans`, and podman-compose
    # force-removes every orphan container's image whatever --rmi says: the base image loaded
    # above, which the other worker's `harbor run` was starting containers from ("image not known")
    return got, ["-e", "podman", "--no-delete"]


def harbor_run(tasks: Path, agents: list[str], jobs: Path, *, extra: list[str], env: dict[str, str], cwd: Path) -> dict[str, dict[str, dict]]:
    """One `harbor run` of every agent over a folder of task folders (a JobConfig naming the
    agents: Harbor runs each agent × task as a trial, all of them concurrently, rather than a job
    an agent one after the other): {agent: {task folder's name: its trial's result.json}}."""
    import json

    config = jobs.parent / f"{jobs.name}.agents.yaml"
    config.write_text("agents:\n" + "".join(f"  - name: {a}\n" for a in agents))
    folders = 1 if (tasks / "task.toml").is_file() else sum(1 for p in tasks.iterdir() if (p / "task.toml").is_file())
    done = harbor("run", "-c", config, "-p", tasks, "-n", str(len(agents) * folders), *extra, "-o", jobs, "-y", cwd=cwd, timeout=1800, env=env)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    out: dict[str, dict[str, dict]] = {a: {} for a in agents}
    for result in jobs.glob("*/*/result.json"):
        trial = json.loads(result.read_text())
        out[trial["config"]["agent"]["name"]][Path(trial["task_id"]["path"]).name] = trial
    return out


def claude_reported(tasks: Path, tmp_path: Path) -> tuple[list[dict[str, Any]], str]:
    """`benchtape run TASKS --harness claude-code --model scripted` with the real Claude Code
    (the pinned version, from the project's tools): what its own init line reported
    (`environment.reported`) in the run's one session, and the cell's outcome."""
    import json

    from formatskit import benchtape
    from realagents import TOOLS, need

    from benchtape.store.database import Store
    from benchtape.tools.binaries import resolve

    need("claude-code")
    version = resolve("claude-code", root=TOOLS).version
    (tmp_path / ".benchtape" / "tools").mkdir(parents=True, exist_ok=True)
    (tmp_path / ".benchtape" / "tools" / "claude-code.yaml").write_text(f'apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: claude-code\nextends: builtin\nversion: "{version}"\n')
    db = tmp_path / "cc.db"
    done = benchtape("run", tasks, "--harness", "claude-code", "--model", "scripted", "--yes", "--json", "--db", db, cwd=tmp_path, env={"BENCHTAPE_TOOLS": str(TOOLS)}, timeout=600)
    assert done.returncode in (0, 1), done.stdout[-2000:] + done.stderr[-3000:]
    store = Store(db, readonly=True)
    try:
        (row,) = list(store.session_rows(run_id=json.loads(done.stdout)["run_id"]))
        reported = [a.data for a in store.load_session(row.id).actions if a.kind == "environment.reported"]
        return reported, store.outcomes([row.id])[row.id][-1]["outcome"]
    finally:
        store.close()
