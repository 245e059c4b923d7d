"""fixtures-red/harbor/ against the real format, as Harbor's published docs define it.

The layout and key set below were written down from Harbor's task-format documentation: the
"Task Structure" page of harbor-framework's docs (harborframework.com/docs/task-format, whose
source is laude-institute/harbor-docs content/docs/tasks/index.mdx: the configuration
parameter table and the example task.toml, the `[task]` table of schema_version 1.1+, and the
special paths /logs/verifier, /tests, /solution), and its "Managing Resources" page
(harborframework.com/docs/tasks/managing-resources: cpus, memory_mb, storage_mb, gpus,
gpu_types, tpu), and its "Network Policy" page (harborframework.com/docs/tasks/network-policy:
network_mode and allowed_hosts per phase, [verifier.environment]). Deprecated keys the docs still show in their examples (version, memory,
storage, allow_internet) are in the set too: real datasets carry them.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from benchtape.sandbox.baseimage import BASE_IMAGE
from benchtape.spec.harbor_task import KEYS

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures-red" / "harbor"

# Harbor's documented task.toml keys, by table ("" is the top level).
DOCUMENTED: dict[str, set[str]] = {
    "": {"version", "schema_version", "source", "task", "metadata", "verifier", "agent", "environment", "solution"},
    "task": {"name", "description", "authors", "keywords"},
    "verifier": {"timeout_sec", "env", "user", "network_mode", "allowed_hosts", "environment"},
    "agent": {"timeout_sec", "user", "network_mode", "allowed_hosts"},
    "solution": {"env"},
    "environment": {
        "build_timeout_sec", "docker_image", "os", "cpus", "memory_mb", "storage_mb", "gpus", "gpu_types", "tpu",
        "allow_internet", "network_mode", "allowed_hosts", "mcp_servers", "memory", "storage",
    },
}
FREE_FORM = {"metadata"}  # "Metadata is arbitrary"
REQUIRED_FILES = ("task.toml", "instruction.md", "tests/test.sh")  # the docs' required components
REWARD = re.compile(r"/logs/verifier/reward\.(txt|json)")

TASKS = sorted(p.parent for p in FIXTURES.glob("*/task.toml"))


def test_there_are_a_few_fixture_tasks():
    assert [t.name for t in TASKS] == ["fix-the-sum", "hello-file", "two-files-partial"]


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_the_layout_is_harbors(task: Path):
    for name in REQUIRED_FILES:
        assert (task / name).is_file(), name
    assert (task / "environment").is_dir() and (task / "environment" / "Dockerfile").is_file()
    assert (task / "solution" / "solve.sh").is_file()  # optional in Harbor; the oracle needs it
    assert {p.name for p in task.iterdir()} <= {"task.toml", "instruction.md", "environment", "tests", "solution", "README.md"}
    assert (task / "instruction.md").read_text().strip()
    for script in ("tests/test.sh", "solution/solve.sh"):
        text = (task / script).read_text()
        assert text.startswith("#!/bin/bash\n"), script
    assert REWARD.search((task / "tests" / "test.sh").read_text()), "the verifier writes its reward where Harbor reads it"


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_dockerfiles_start_from_benchtapes_base_image(task: Path):
    froms = re.findall(r"^FROM\s+(\S+)", (task / "environment" / "Dockerfile").read_text(), re.MULTILINE)
    assert froms == [BASE_IMAGE]
    assert re.search(r"^WORKDIR\s+/", (task / "environment" / "Dockerfile").read_text(), re.MULTILINE)


@pytest.mark.parametrize("task", TASKS, ids=lambda p: p.name)
def test_task_toml_uses_only_documented_keys(task: Path):
    doc = tomllib.loads((task / "task.toml").read_text())
    assert set(doc) <= DOCUMENTED[""], set(doc) - DOCUMENTED[""]
    assert "version" in doc or "schema_version" in doc
    for table, value in doc.items():
        if table in FREE_FORM or not isinstance(value, dict):
            continue
        assert set(value) <= DOCUMENTED[table], (table, set(value) - DOCUMENTED[table])


def test_the_loader_knows_every_documented_key():
    """A key Harbor documents is never refused as unknown (it may be refused as unsupported, by name)."""
    for table, keys in DOCUMENTED.items():
        assert keys <= KEYS[table], (table, keys - KEYS[table])
