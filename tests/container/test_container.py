"""The container sandbox, against a real Docker engine (no registry: benchtape's own base image).

Each test proves one promise the `container` level makes: the image is built once and
reused, an agent really acts inside, the network is absent, `ro` is read-only, limits are
applied, nothing is left behind (or it is kept on request), and a kill reaches the
whole process group.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchtape.adapters.base import SUPPORT, Launch
from benchtape.adapters.mock import MockAdapter
from benchtape.checks.registry import CheckContext
from benchtape.core.command_runner import CommandResult, run_local
from benchtape.core.launch_plan import SUPPORT_AT
from benchtape.sandbox.baseimage import BASE_IMAGE, RECIPE_LABEL, build_image_from_dockerfile, ensure_base_image
from benchtape.sandbox.container import WORKSPACE_AT, ContainerError, ContainerSandbox, available, exec_sandbox_for, resource_limits

# Container tests share one engine and one base image: keep them on one xdist worker.
pytestmark = pytest.mark.xdist_group("docker")
docker = pytest.mark.docker

BUGGY = "def add(a, b):\n    return a - b\n"
TEST = (
    "import unittest\n\nfrom calc import add\n\n\n"
    "class T(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n"
)


def red_workspace(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / "calc.py").write_text(BUGGY)
    (root / "test_calc.py").write_text(TEST)
    return root


def gone(client: Any, container_id: str) -> bool:
    import docker as sdk

    try:
        client.containers.get(container_id)
    except sdk.errors.NotFound:
        return True
    return False


# ------------------------------------------------------------------ no engine needed
def test_resource_defaults_and_validation() -> None:
    assert resource_limits(None) == {"mem_limit": 1 << 30, "memswap_limit": 1 << 30, "nano_cpus": 10**9, "pids_limit": 256}
    assert resource_limits({"memory": "512m", "cpus": 0.5})["nano_cpus"] == 5 * 10**8
    with pytest.raises(ContainerError, match="unknown resources"):
        resource_limits({"disk": "1g"})
    with pytest.raises(ContainerError, match="not a size"):
        resource_limits({"memory": "lots"})


def test_env_for_exec_translates_workspace_paths_and_drops_host_ones(tmp_path: Path) -> None:
    box = ContainerSandbox()
    box.workspace = tmp_path.resolve()
    env = box.exec_env({"HOME": str(tmp_path), "X": str(tmp_path / "a"), "PATH": os.environ.get("PATH", ""), "K": "v"})
    assert env == {"HOME": WORKSPACE_AT, "X": f"{WORKSPACE_AT}/a", "K": "v"}
    assert box.container_path(tmp_path / "sub") == f"{WORKSPACE_AT}/sub"
    assert box.container_path("/etc") == "/etc"


# ------------------------------------------------------------------ the image
@docker
def test_engine_is_available(docker_client: Any) -> None:
    ok, why = available()
    assert ok, why


@docker
def test_base_image_builds_and_is_reused(docker_client: Any, base_image: dict[str, Any]) -> None:
    assert base_image["tag"] == BASE_IMAGE
    first = docker_client.images.get(BASE_IMAGE)
    assert first.labels.get(RECIPE_LABEL)
    assert ensure_base_image(docker_client) == BASE_IMAGE
    assert docker_client.images.get(BASE_IMAGE).id == first.id, "a warm call must reuse the tag, not rebuild"
    script = (
        "for t in sh ls cat grep sed mkdir rm test env sleep python3; do command -v $t >/dev/null || echo missing $t; done; "
        "python3 -c 'import unittest, json, subprocess, sqlite3, tempfile; print(\"py ok\")'"
    )
    out = docker_client.containers.run(BASE_IMAGE, ["sh", "-c", script], network_mode="none", remove=True)
    assert out.decode().strip() == "py ok"


@docker
def test_dockerfile_is_built_once_by_content(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    dockerfile = tmp_path / "Dockerfile"
    dockerfile.write_text(f"FROM {BASE_IMAGE}\nRUN echo scenario > /etc/marker\n")
    tag = build_image_from_dockerfile(docker_client, dockerfile)
    assert tag.startswith("benchtape-scenario:") and len(tag.split(":")[1]) == 12
    try:
        built = docker_client.images.get(tag).id
        assert build_image_from_dockerfile(docker_client, dockerfile) == tag
        assert docker_client.images.get(tag).id == built  # the same content is not built again
        with ContainerSandbox(tag) as box:
            box.start(tmp_path)
            assert box.run(["cat", "/etc/marker"], tmp_path, 10).output == "scenario\n"
    finally:
        docker_client.images.remove(tag, force=True)


# ------------------------------------------------------------------ an agent inside
@docker
def test_mock_agent_fixes_a_failing_test_inside_the_container(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    ws = red_workspace(tmp_path / "ws")
    adapter = MockAdapter()
    steps = [
        {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}},
        {"tool": "Bash", "input": {"command": "python3 -m unittest -q"}},
        {"say": "fixed"},
    ]
    launch = Launch(
        prompt="fix",
        work_dir=Path(WORKSPACE_AT),
        root=Path(WORKSPACE_AT),
        scenario={"mock": {"steps": steps}},
        python="python3",
        mounted={str(SUPPORT): SUPPORT_AT},
    )
    command = adapter.command(launch)
    assert command.argv[-1] == f"{SUPPORT_AT}/mock_agent.py"
    with ContainerSandbox(base_image["tag"], client=docker_client, shares=[{"from": str(SUPPORT), "to": SUPPORT_AT, "access": "ro"}]) as box:
        box.start(ws)
        red = box.run(["python3", "-m", "unittest", "-q"], ws, 60)
        assert red.exit_code not in (0, None), red.output
        proc = box.spawn(command.argv, env=command.env, cwd=WORKSPACE_AT, stdin=command.stdin)
        parser = adapter.parser()
        actions = [a for line in proc.lines() for a in parser.feed(line)]
        assert proc.wait(60) == 0, proc.stderr
        results = [a.data for a in actions if a.kind == "tool.result"]
        assert [r["is_error"] for r in results] == [False, False], results
        assert actions[-1].kind == "final_output" and actions[-1].data["text"] == "fixed"
        green = box.run(["python3", "-m", "unittest", "-q"], ws, 60)  # run_local's positional form
        assert green == CommandResult(0, green.output) and "OK" in green.output
        ctx = CheckContext(work_dir=ws, run_command=box.run)
        assert ctx.run_command(["grep", "-c", "a + b", "calc.py"], ws, 10).output.strip() == "1"
    assert (ws / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    assert not (ws / "__pycache__").exists()  # the image keeps bytecode out of the graded tree


@docker
def test_exec_sandbox_for_grades_a_restored_workspace(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    ws = red_workspace(tmp_path / "restored")
    (ws / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    with exec_sandbox_for(ws, base_image["tag"], client=docker_client) as box:
        assert box.container.attrs["HostConfig"]["NetworkMode"] == "none"
        result = box.run(["python3", "-m", "unittest", "-q"], ws, 60)
        host = run_local(["python3", "-m", "unittest", "-q"], ws, 60)
    assert result.exit_code == host.exit_code == 0


# ------------------------------------------------------------------ confinement
NET_PROBE = """
import errno, socket
for host in ("127.0.0.1", "10.255.255.1"):
    s = socket.socket(); s.settimeout(1)
    try:
        s.connect((host, 9)); print(host, "CONNECTED")
    except OSError as e:
        print(host, errno.errorcode.get(e.errno, e.__class__.__name__))
    finally:
        s.close()
import os; print("ifaces", sorted(os.listdir("/sys/class/net")))
"""


@docker
def test_network_none_has_no_route(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client) as box:
        box.start(tmp_path)
        assert box.container.attrs["HostConfig"]["NetworkMode"] == "none"
        out = box.run(["python3", "-c", NET_PROBE], tmp_path, 20).output.splitlines()
    assert out[0] == "127.0.0.1 ECONNREFUSED"  # loopback exists, nothing listens
    assert out[1] in ("10.255.255.1 ENETUNREACH", "10.255.255.1 EHOSTUNREACH")  # no route off the box
    assert out[2] == "ifaces ['lo']"


@docker
def test_shares_ro_rw_copy(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    ws = (tmp_path / "ws")
    ws.mkdir()
    for name in ("ro", "rw", "cp", "cp2"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "f.txt").write_text(name)
    shares = [
        {"from": str(tmp_path / "ro"), "to": "/data/ro", "access": "ro"},
        {"from": str(tmp_path / "rw"), "to": "/data/rw", "access": "rw"},
        {"from": str(tmp_path / "cp"), "to": "vendor", "access": "copy"},  # relative: under the workspace
        {"from": str(tmp_path / "cp2"), "to": "/opt/cp2", "access": "copy"},  # outside it: into the container
        {"from": str(SUPPORT), "to": SUPPORT_AT, "access": "ro"},  # a launch plan's mount, as container_level passes it
    ]
    with ContainerSandbox(base_image["tag"], client=docker_client, shares=shares) as box:
        box.start(ws)
        ro = box.run(["sh", "-c", "echo x > /data/ro/new.txt"], ws, 10)
        assert ro.exit_code != 0 and "Read-only file system" in ro.output
        assert box.run(["cat", "/data/ro/f.txt"], ws, 10).output == "ro"
        assert box.run(["sh", "-c", "echo x > /data/rw/new.txt"], ws, 10).exit_code == 0
        assert box.run(["cat", "vendor/f.txt", "/opt/cp2/f.txt"], ws, 10).output == "cpcp2"
        assert box.run(["sh", "-c", f"echo x > {SUPPORT_AT}/new.py"], ws, 10).exit_code != 0  # benchtape's helpers are ro
        assert box.run(["test", "-f", f"{SUPPORT_AT}/mock_agent.py"], ws, 10).exit_code == 0
    assert not (tmp_path / "ro" / "new.txt").exists()
    assert (tmp_path / "rw" / "new.txt").read_text() == "x\n"
    assert (ws / "vendor" / "f.txt").read_text() == "cp"


@docker
def test_resource_limits_are_applied(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client) as box:
        box.start(tmp_path)
        host = box.container.attrs["HostConfig"]
        assert (host["Memory"], host["NanoCpus"], host["PidsLimit"]) == (1 << 30, 10**9, 256)
        assert box.container.labels["benchtape"] == "1"
    with ContainerSandbox(base_image["tag"], client=docker_client, resources={"memory": "256m", "cpus": 0.5, "pids": 64}) as box:
        box.start(tmp_path)
        host = box.container.attrs["HostConfig"]
        assert (host["Memory"], host["NanoCpus"], host["PidsLimit"]) == (256 << 20, 5 * 10**8, 64)


@docker
def test_user_files_come_back_to_the_host_user(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    with ContainerSandbox(base_image["tag"], client=docker_client, user="65534:65534") as box:
        box.start(ws)
        result = box.run(["sh", "-c", "id -u; mkdir d && echo hi > d/f.txt"], ws, 10)
        assert result == CommandResult(0, "65534\n")
    st = os.stat(ws / "d" / "f.txt")
    assert (st.st_uid, st.st_gid) == (os.getuid(), os.getgid())
    assert (ws / "d" / "f.txt").read_text() == "hi\n"


# ------------------------------------------------------------------ lifecycle
@docker
def test_container_is_removed_after_exit_and_after_an_exception(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client) as box:
        box.start(tmp_path)
        cid = box.id
    assert gone(docker_client, cid)
    with pytest.raises(KeyboardInterrupt):  # Ctrl-C inside the block
        with ContainerSandbox(base_image["tag"], client=docker_client) as box:
            box.start(tmp_path)
            cid = box.id
            raise KeyboardInterrupt
    assert gone(docker_client, cid)


@docker
def test_keep_leaves_the_container_and_says_how_to_remove_it(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client, keep=True) as box:
        box.start(tmp_path)
    try:
        assert not gone(docker_client, box.id)
        assert box.remove_hint() == f"docker rm -f {box.id}"
    finally:
        box.remove(force=True)
    assert gone(docker_client, box.id)


@docker
def test_killed_spawn_leaves_no_process(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client) as box:
        box.start(tmp_path)
        proc = box.spawn(["sh", "-c", "echo up; sleep 300 & python3 -c 'import time; time.sleep(301)'"])
        assert next(proc.lines()) == "up"
        with pytest.raises(TimeoutError):
            proc.wait(0.5)
        proc.kill()
        assert proc.wait(5) == 137
        ps = box.run(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"], tmp_path, 10).output
        assert "sleep 300" not in ps and "301" not in ps, ps
        timed = box.run(["sleep", "30"], tmp_path, 0.5)
        assert timed.timed_out and timed.exit_code is None
        assert "sleep 30" not in box.run(["sh", "-c", "cat /proc/[0-9]*/cmdline | tr '\\0' ' '"], tmp_path, 10).output


@docker
def test_streamed_lines_arrive_before_exit(docker_client: Any, base_image: dict[str, Any], tmp_path: Path) -> None:
    with ContainerSandbox(base_image["tag"], client=docker_client) as box:
        box.start(tmp_path)
        script = "import sys, time\nfor i in range(3):\n    print(i, flush=True); time.sleep(0.3)\nprint('err', file=sys.stderr)"
        proc = box.spawn(["python3", "-c", script])
        first = next(proc.lines())
        assert first == "0" and proc.returncode is None  # it arrived while the process was still running
        assert list(proc.lines()) == ["1", "2"]
        assert proc.wait(10) == 0 and proc.stderr == "err\n"
        payload = json.dumps({"big": "x" * 300_000}).encode()
        echo = box.spawn(["python3", "-c", "import sys; d = sys.stdin.buffer.read(); print(len(d))"], stdin=payload)
        assert list(echo.lines()) == [str(len(payload))]


@docker
def test_missing_image_is_refused_not_pulled(docker_client: Any, tmp_path: Path) -> None:
    with pytest.raises(ContainerError, match="not present locally"):
        ContainerSandbox("benchtape-no-such-image:1", client=docker_client).start(tmp_path)
