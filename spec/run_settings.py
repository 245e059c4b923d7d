"""`runs:` — where an evaluation's cells run, in the evaluation or the project's config.yaml:

    runs:
      executor: ray            # local (the default: this machine's threads) or ray
      address: 10.0.0.5:6379   # the Ray cluster's GCS address (else --address, else RAY_ADDRESS)
      retries: 3               # times Ray runs a cell again when its node or worker is lost
      cpus: 1                  # CPUs one cell asks of a node
      runtime_env: {py_modules: [...]}   # handed to ray.init as it is (docs/scale-out.md)

What runs where is not part of a cell's identity: a cell measured on a cluster is reused by a
local run and the other way round. The command line wins over the evaluation, which wins over
the project (`under`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from benchtape.spec.yamlsrc import LineDict

EXECUTORS = ("local", "ray")
RUNS_KEYS = {"executor", "address", "retries", "cpus", "runtime_env"}
DEFAULT_RETRIES = 3
DEFAULT_CPUS = 1.0


@dataclass(frozen=True)
class RunSettings:
    executor: str | None = None
    address: str | None = None
    retries: int | None = None
    cpus: float | None = None
    runtime_env: dict[str, Any] = field(default_factory=dict)
    where: str | None = None  # the file they came from (for messages)

    def under(self, weaker: RunSettings) -> RunSettings:
        """These settings, each unset one taken from `weaker` (the evaluation's over the project's)."""
        return RunSettings(
            self.executor if self.executor is not None else weaker.executor,
            self.address if self.address is not None else weaker.address,
            self.retries if self.retries is not None else weaker.retries,
            self.cpus if self.cpus is not None else weaker.cpus,
            self.runtime_env or weaker.runtime_env,
            self.where or weaker.where,
        )


def load_run_settings(ld: Any, top: LineDict) -> RunSettings:
    """`runs:` of a document (a spec.documents.DocLoader's), strictly; empty when absent."""
    node = top.get("runs")
    if node is None:
        return RunSettings()
    if isinstance(node, list):
        raise ld.err("`runs:` here says where the cells run (a mapping: executor, address, retries, cpus, runtime_env); a list of run entries belongs to an Eval file (bench + runs)", top, "runs", "e.g. `runs: {executor: ray, address: 10.0.0.5:6379}`")
    node = ld.strict(ld.mapping(node, "`runs:`", top, "runs"), RUNS_KEYS, "`runs:`")
    executor = node.get("executor")
    if executor is not None:
        executor = ld.choose(str(executor), list(EXECUTORS), "executor", node, "executor")
    address = node.get("address")
    if address is not None and (not isinstance(address, str) or not address.strip()):
        raise ld.err(f"`runs.address` must be a cluster address such as 10.0.0.5:6379, got {address!r}", node, "address")
    retries = node.get("retries")
    if retries is not None and (isinstance(retries, bool) or not isinstance(retries, int) or retries < 0):
        raise ld.err(f"`runs.retries` must be a whole number of at least 0, got {retries!r}", node, "retries", "e.g. `retries: 3` (0: a lost node fails its cells)")
    cpus = node.get("cpus")
    if cpus is not None and (isinstance(cpus, bool) or not isinstance(cpus, (int, float)) or cpus < 0):
        raise ld.err(f"`runs.cpus` must be a number of at least 0, got {cpus!r}", node, "cpus", "e.g. `cpus: 1`")
    env = node.get("runtime_env")
    if env is not None and not isinstance(env, dict):
        raise ld.err("`runs.runtime_env` must be a mapping (Ray's runtime_env)", node, "runtime_env", "e.g. `runtime_env: {py_modules: [/srv/benchtape]}`")
    return RunSettings(executor, address.strip() if address else None, retries, float(cpus) if cpus is not None else None, _plain(env or {}), ld.file)


def _plain(value: Any) -> Any:
    """YAML's line-tracking mappings and lists as plain ones (they go to Ray as they are)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value
