"""Running one session at the `container` level: the staged workspace is mounted into a
fresh container, the harness runs inside it, and the container is removed afterwards
(also on timeout, errors and Ctrl-C) unless --keep-sandbox asks to keep it."""

from __future__ import annotations

import threading
from contextlib import contextmanager
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Iterator

from recorder.commands import CommandRunner
from recorder.sandbox import local as local_sandbox
from recorder.spec.bench import SandboxSpec, ScenarioSpec
from recorder.sandbox.container import ADAPTERS_AT, WORKSPACE_AT, ContainerProcess, ContainerSandbox, connect

if TYPE_CHECKING:
    from recorder.runner import Runner, SessionRecord

_image_lock = threading.Lock()
_images: dict[str, str] = {}


def resolve_image(spec: SandboxSpec) -> str:
    """The scenario's image: as named, built from its dockerfile, or benchtape's own base."""
    from recorder.sandbox.baseimage import build_image_from_dockerfile, ensure_base_image

    key = spec.image or (str(spec.dockerfile) if spec.dockerfile else "<base>")
    with _image_lock:
        if key not in _images:
            client = connect()
            if spec.image:
                _images[key] = spec.image
            elif spec.dockerfile:
                _images[key] = build_image_from_dockerfile(client, spec.dockerfile)
            else:
                _images[key] = ensure_base_image(client)
        return _images[key]


class _Proc:
    """The runner's process interface over a `docker exec` stream."""

    def __init__(self, proc: ContainerProcess):
        self.proc = proc

    def lines(self) -> Iterator[str]:
        return self.proc.lines()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.proc.wait(timeout)
        except TimeoutError:
            return None

    def kill(self) -> None:
        self.proc.kill()

    def stderr_tail(self) -> str:
        return self.proc.stderr[-4000:]


def run_in_container(runner: "Runner", scenario: ScenarioSpec, attempt: int, seed: Path | None) -> "SessionRecord":
    spec = scenario.sandbox
    image = resolve_image(spec)
    ws = local_sandbox.prepare(scenario, seed, level="container")
    box = ContainerSandbox(image, network=spec.network or "none", user=spec.user, env=spec.env, shares=spec.share_paths, resources=spec.resources or None, keep=runner.options.keep_sandbox)
    try:
        with box:
            box.start(ws.root)
            cwd_in = PurePosixPath(WORKSPACE_AT) / (scenario.cwd or "")
            overrides: dict[str, Any] = {"python": "python3", "support_dir": Path(ADAPTERS_AT), "root": Path(WORKSPACE_AT), "work_dir": Path(str(cwd_in))}
            env = {k: v for k, v in ws.env.items() if k not in ("PATH", "TMPDIR")}
            env["HOME"] = WORKSPACE_AT

            def spawn(argv: list[str], full_env: dict[str, str], cwd: Path, stdin: bytes) -> _Proc:
                full_env = {k: v for k, v in full_env.items() if k not in ("PATH", "TMPDIR")}
                return _Proc(box.spawn(argv, env=full_env, cwd=str(cwd_in), stdin=stdin))

            container = {"image": image, "user": spec.user, "env": spec.env, "resources": spec.resources or None}
            record = runner.record_session(scenario, attempt, ws.root, ws.agent_cwd, ws.home, env, ws.secret_names, "container", spawn=spawn, launch_overrides=overrides, started_extra={"container": container})
            if runner.options.keep_sandbox:
                runner.on_event("sandbox.kept", {"scenario": scenario.name, "attempt": attempt, "where": f"container {box.id} on {ws.root}", "remove": f"{box.remove_hint()}; rm -rf {ws.temp}"})
    finally:
        if not runner.options.keep_sandbox:
            ws.cleanup()
    record.grading_sandbox = container_grading(image, spec)
    runner.on_session_done(record)
    return record


def container_grading(image: str, spec: SandboxSpec) -> Any:
    """A factory: given a restored workspace, a command runner inside a fresh container on it."""
    return grading_factory({"image": image, "user": spec.user, "env": spec.env, "resources": spec.resources or None})


def grading_factory(container: dict[str, Any]) -> Any:
    """From a session's recorded `container` facts: exec checks run in a fresh container again,
    so re-grading a container session never runs its commands on the host."""

    @contextmanager
    def factory(work_dir: Path) -> Iterator[CommandRunner]:
        with ContainerSandbox(container.get("image"), network="none", user=container.get("user"), env=container.get("env") or {}, resources=container.get("resources")) as box:
            box.start(work_dir)
            yield box.run

    return factory
