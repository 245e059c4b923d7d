"""Preflight: could this bench run? Every run asks first; a blocking finding stops it (exit 3).

It lives on the write side because it asks what recording needs (a harness binary, keys,
testdata, a sandbox engine); it also builds every check, so a refused check stops the run
before any spend (the one arrow from recorder to the check catalog).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from adapters.base import get_adapter, harness_names
from checks import CheckConfigError, build
from recorder.spec.bench import BenchSpec, ScenarioSpec
from recorder.model import CheckSpec
from recorder.runner import RunOptions
from recorder.spec.evalfile import EvalSpec

@dataclass
class Preflight:
    blocking: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.blocking

    def merge(self, other: "Preflight") -> None:
        self.blocking.extend(other.blocking)
        self.notes.extend(other.notes)

def preflight(bench: BenchSpec, *, harness: str | None = None, sandbox: str | None = None, allow_host_writes: bool = False, allow_network: bool = False, concurrency: int = 4, noop: bool = False, env: dict[str, str] | None = None) -> Preflight:
    env = dict(os.environ if env is None else env)
    pf = Preflight()
    name = harness or bench.harness or "mock"
    where = str(bench.path)
    if name not in harness_names():
        pf.blocking.append(f"{where}: harness {name!r} is not known (want one of {', '.join(harness_names())})")
        return pf
    adapter = get_adapter(name)
    pf.blocking.extend(adapter.preflight(None, bench.harness_config, env))
    for finding in bench.not_built:
        pf.notes.append(f"not supported in this version, ignored: {finding}")
    none_scenarios = 0
    for sc in bench.scenarios:
        level = sandbox or sc.sandbox.level
        pf.merge(_scenario(sc, level, name, allow_host_writes, allow_network))
        none_scenarios += level == "none"
        if name == "claude-code":
            from adapters.claude_code import preflight_scenario

            pf.blocking.extend(f"{sc.where}: scenario {sc.name!r}: {m}" for m in preflight_scenario(sc.raw))
    if none_scenarios and concurrency > 1 and len(bench.scenarios) > 1:
        pf.blocking.append(f"{where}: `sandbox: none` runs in your real directory and cannot run concurrently; pass --concurrency 1 (it is refused, not downgraded)")
    return pf

def _scenario(sc: ScenarioSpec, level: str, harness: str, allow_host_writes: bool, allow_network: bool = False) -> Preflight:
    pf = Preflight()
    label = f"{sc.where}: scenario {sc.name!r}"
    if level == "none":
        if sc.sandbox.level != "none":
            pf.blocking.append(f"{label}: --sandbox none needs the bench itself to name `sandbox: none` as well")
        if not allow_host_writes and os.environ.get("BENCHTAPE_ALLOW_HOST_WRITES") != "1":
            pf.blocking.append(f"{label}: `sandbox: none` writes to your real directory; pass --allow-host-writes (or BENCHTAPE_ALLOW_HOST_WRITES=1) to consent")
        if sc.testdata is not None:
            pf.blocking.append(f"{label}: `testdata:` cannot be used with sandbox none")
    if level == "container":
        pf.merge(_container(sc, label, allow_network))
    if sc.testdata is not None and not sc.testdata.is_dir():
        pf.blocking.append(f"{label}: testdata {sc.testdata} does not exist")
    elif sc.cwd and sc.testdata is not None and sc.repo is None and sc.setup is None and sc.generate is None and not (sc.testdata / sc.cwd).is_dir():
        pf.blocking.append(f"{label}: `cwd: {sc.cwd}` does not exist in the testdata ({sc.testdata / sc.cwd}); create it or fix cwd:")
    for key, path in (("setup", sc.setup), ("generate", sc.generate)):
        if path is not None and not os.access(path, os.X_OK):
            pf.blocking.append(f"{label}: `{key}:` {path} is not executable (chmod +x it)")
    if harness == "mock" and sc.mock is None:
        pf.notes.append(f"{label}: no `mock:` script; the mock echoes the prompt and calls no tools")
    for i, spec in enumerate(sc.checks):
        pf.blocking.extend(f"{label}: checks[{i}] ({spec.where}): {m}" for m in check_problems(spec))
    return pf

def _container(sc: ScenarioSpec, label: str, allow_network: bool = False) -> Preflight:
    pf = Preflight()
    network = sc.sandbox.network or "none"
    if network != "none":
        reach = "the host's own network stack" if network == "host" else f"network {network!r} (and through it, likely the internet)"
        if allow_network or os.environ.get("BENCHTAPE_ALLOW_NETWORK") == "1":
            pf.notes.append(f"{label}: `network: {network}` gives the agent {reach}; confirmed by --allow-network")
        else:
            pf.blocking.append(f"{label}: `network: {network}` gives the agent {reach} instead of none; pass --allow-network (or BENCHTAPE_ALLOW_NETWORK=1) to confirm")
    try:
        from recorder.sandbox.container import ContainerError, available, resource_limits
    except ImportError:
        pf.blocking.append(f"{label}: the container sandbox is not available in this build")
        return pf
    try:
        resource_limits(sc.sandbox.resources or None)
    except ContainerError as exc:
        pf.blocking.append(f"{label}: sandbox.resources: {exc}")
        return pf
    ok, why = available()
    if not ok:
        pf.blocking.append(f"{label}: sandbox container needs a running Docker engine: {why}")
        return pf
    from recorder.sandbox.baseimage import BASE_IMAGE, _image_or_none
    from recorder.sandbox.container import connect

    image = sc.sandbox.image
    client = connect()
    if image is not None and _image_or_none(client, image) is None:
        pf.blocking.append(f"{label}: image {image!r} is not on this machine and benchtape never pulls; build or load it (docker build / docker load), or drop `image:` to use benchtape's own base image")
    elif image is None and sc.sandbox.dockerfile is None and _image_or_none(client, BASE_IMAGE) is None:
        pf.notes.append(f"{label}: the base image {BASE_IMAGE} is not built yet; the first session builds it (about a second), or run `benchtape sandbox build` now")
    elif sc.sandbox.resources:
        refused = _limits_refused(client, image or BASE_IMAGE, sc.sandbox.resources)
        if refused:
            pf.blocking.append(f"{label}: sandbox.resources: {refused}")
    return pf


_TRIED: dict[str, str | None] = {}


def _limits_refused(client: object, image: str, resources: dict) -> str | None:
    """The engine's verdict on these limits, tried once per process (a throwaway container)."""
    import orjson

    from recorder.sandbox.container import limits_refused

    key = image + orjson.dumps(resources, option=orjson.OPT_SORT_KEYS, default=str).decode()
    if key not in _TRIED:
        _TRIED[key] = limits_refused(client, image, resources)
    return _TRIED[key]

def check_problems(spec: CheckSpec) -> list[str]:
    """Construct the check (and any children): a refusal is a blocking finding."""
    try:
        build(spec)
    except CheckConfigError as exc:
        return [str(exc)]
    return []


def preflight_all(benches: list[BenchSpec], options: RunOptions, ev: EvalSpec | None = None) -> Preflight:
    """Every bench's findings, deduplicated (an Eval's runs share one bench), and the Eval's unbuilt keys as notes."""
    total = Preflight()
    for bench in benches:
        total.merge(preflight(bench, harness=options.harness, sandbox=options.sandbox, allow_host_writes=options.allow_host_writes, allow_network=options.allow_network, concurrency=options.concurrency, noop=options.noop))
    if ev is not None:
        total.notes.extend(f"not supported in this version, ignored: {f}" for f in ev.not_built)
    total.blocking, total.notes = list(dict.fromkeys(total.blocking)), list(dict.fromkeys(total.notes))  # an Eval's runs share one bench
    return total
