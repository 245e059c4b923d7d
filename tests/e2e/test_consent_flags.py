"""Every consent flag through every command that takes it (issue 44: `--allow-network` was
accepted and dropped by `run DIR` and `run EVALUATION`; only BENCHTAPE_ALLOW_NETWORK=1 worked).

Each command is asked twice: without the flag it is blocked before anything runs (exit 3, the
gate naming the flag), with it the gate is gone. Nothing here sends a packet: the runs that go on
use level `none` with the mock agent, the others stop at --dry-run."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from cli import ROOT, benchtape

BENCH = """\
description: consent
harness: mock
scenarios:
  - name: net
    prompt: say done
    sandbox: {level: container, network: bridge}
    mock: {steps: [{say: done}]}
    checks: [{type: contains, value: done}]
  - name: hostwrites
    prompt: say done
    sandbox: {level: none}
    mock: {steps: [{say: done}]}
    checks: [{type: contains, value: done}]
"""
EVALUATION = """\
apiVersion: benchtape/v1alpha1
kind: Evaluation
bench: madbench.yaml
tools:
  - tool: mock
    model: scripted
"""
NETWORK_GATE = "pass --allow-network"
WRITES_GATE = "pass --allow-host-writes"
# the flags alone decide: a consent left in the environment by whoever runs the tests would hide the bug
NO_ENV_CONSENT = {"BENCHTAPE_ALLOW_NETWORK": "", "MADBENCH_ALLOW_NETWORK": "", "BENCHTAPE_ALLOW_HOST_WRITES": "", "MADBENCH_ALLOW_HOST_WRITES": ""}


@pytest.fixture()
def project(tmp_path: Path) -> Path:
    (tmp_path / "madbench.yaml").write_text(BENCH)
    (tmp_path / ".benchtape" / "evaluations").mkdir(parents=True)
    (tmp_path / ".benchtape" / "evaluations" / "ev.yaml").write_text(EVALUATION)
    return tmp_path


def _run(project: Path, *args: str):
    done = benchtape(*args, cwd=project, env=NO_ENV_CONSENT, timeout=300)
    return done, done.stdout + done.stderr


def test_preflight_takes_both_flags(project: Path):
    done, out = _run(project, "preflight", "madbench.yaml", "--concurrency", "1")
    assert done.returncode == 3 and NETWORK_GATE in out and WRITES_GATE in out
    done, out = _run(project, "preflight", "madbench.yaml", "--concurrency", "1", "--allow-network", "--allow-host-writes")
    assert NETWORK_GATE not in out and WRITES_GATE not in out and "confirmed by --allow-network" in out


def test_run_bench_takes_both_flags(project: Path):
    done, out = _run(project, "run", "madbench.yaml", "--concurrency", "1", "--db", "blocked.db")
    assert done.returncode == 3 and NETWORK_GATE in out and WRITES_GATE in out and "nothing was run" in out
    assert not list(project.glob("blocked.db*"))  # a blocked run leaves no store behind (it left an empty one)
    done, out = _run(project, "run", "madbench.yaml", "--concurrency", "1", "--scenario", "hostwrites", "--allow-host-writes")
    assert done.returncode == 0, out


def test_run_evaluation_takes_both_flags(project: Path):
    done, out = _run(project, "run", "ev", "--dry-run", "--concurrency", "1")
    assert done.returncode == 3 and NETWORK_GATE in out and WRITES_GATE in out
    done, out = _run(project, "run", "ev", "--dry-run", "--concurrency", "1", "--allow-network", "--allow-host-writes")
    assert done.returncode == 0, out
    assert NETWORK_GATE not in out and WRITES_GATE not in out and "confirmed by --allow-network" in out


def test_run_harbor_folder_takes_allow_network(tmp_path: Path):
    task = tmp_path / "fix-the-sum"
    shutil.copytree(ROOT / "fixtures-red" / "harbor" / "fix-the-sum", task)
    toml = task / "task.toml"
    toml.write_text(toml.read_text().replace('network_mode = "no-network"', 'network_mode = "public"'))
    done, out = _run(tmp_path, "run", "fix-the-sum", "--harness", "oracle", "--sandbox", "container", "--dry-run")
    assert done.returncode == 3 and NETWORK_GATE in out
    done, out = _run(tmp_path, "run", "fix-the-sum", "--harness", "oracle", "--sandbox", "container", "--dry-run", "--allow-network")
    assert done.returncode == 0, out
    assert NETWORK_GATE not in out


def test_check_takes_allow_host_writes(project: Path):
    done, out = _run(project, "check", "madbench.yaml", "--db", "blocked.db")
    assert done.returncode == 3 and WRITES_GATE in out
    assert not list(project.glob("blocked.db*"))  # a blocked control leaves no store behind, as a blocked run does (it left an empty one)
    done, out = _run(project, "check", "madbench.yaml", "--allow-host-writes")
    assert WRITES_GATE not in out and done.returncode in (0, 1), out  # the no-op ran: every gradable cell must fail (0) or one passed (1)
