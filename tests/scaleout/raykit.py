"""A real local Ray cluster for the scale-out tests, and an evaluation project to run on it.

`LocalCluster`: `ray.cluster_utils.Cluster` (Ray's own test cluster: a head and worker nodes as
process trees on this machine), the head with no CPUs (cells never run beside the driver) and
fast health checks (a killed node is declared dead in ~2 s, not ~15), each worker node with a
TMPDIR of its own (its session folders and node folder, so a test sees what one node left) and
a short-lived reaper. Never `ray stop`: it stops every cluster on the machine.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import tempfile
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_USAGE_STATS_REPORT_URL", "http://127.0.0.1:9/")

OSM = 100 * 1024 * 1024  # each node's object store: plenty for bundles of mock cells
FAST_HEALTH = {"health_check_period_ms": 500, "health_check_failure_threshold": 3, "health_check_timeout_ms": 500, "health_check_initial_delay_ms": 0}
CALC = "def add(a, b):\n    return a - b\n\n\ndef sub(a, b):\n    return a + b\n"


def bench(sleep: float, others: float = 0) -> str:
    """Three tasks of the calc testdata; the scripted mock sleeps `sleep` s mid-session in fix-add
    (a cell long enough to lose its node in the middle of), and `others` s in the other two (every
    scripted cell long: whichever node a run places one on has one in flight)."""
    nap = f"{{sleep: {others}}}, " if others else ""
    return f"""
description: scale-out tests
harness: mock
defaults: {{sandbox: home, interactive: false, timeout: 60s}}
scenarios:
  - name: fix-add
    prompt: "make add() return the sum"
    testdata: calc
    checks:
      - {{type: exec, args: {{cmd: [python3, -c, "import calc; assert calc.add(2, 3) == 5"]}}}}
    mock: {{steps: [{{tool: Edit, input: {{file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}}}, {{sleep: {sleep}}}, {{say: done}}]}}
  - name: fix-sub
    prompt: "make sub() return the difference"
    testdata: calc
    checks:
      - {{type: exec, args: {{cmd: [python3, -c, "import calc; assert calc.sub(5, 3) == 2"]}}}}
    mock: {{steps: [{{tool: Edit, input: {{file_path: calc.py, old_string: "return a + b", new_string: "return a * b"}}}}, {nap}{{say: done}}]}}
  - name: explain
    prompt: "say what calc does"
    testdata: calc
    checks:
      - {{type: contains, value: "calc"}}
    mock: {{steps: [{nap}{{say: "calc adds and subtracts"}}]}}
"""


def evaluation(models: str = "[scripted, noop]", attempts: int = 1) -> str:
    return f"apiVersion: benchtape/v1alpha1\nkind: Evaluation\nattempts: {attempts}\ntools:\n  - tool: mock\n    model: {models}\n"


def make_project(root: Path, *, sleep: float = 0.2, others: float = 0, models: str = "[scripted, noop]", attempts: int = 1, name: str = "base") -> Path:
    for rel, text in {"calc/calc.py": CALC, "madbench.yaml": textwrap.dedent(bench(sleep, others)).lstrip(), f".benchtape/evaluations/{name}.yaml": evaluation(models, attempts)}.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


@dataclass
class LocalCluster:
    cluster: Any
    tmp: Path
    nodes: dict[str, Any] = field(default_factory=dict)  # node id -> its node handle
    tmpdirs: dict[str, Path] = field(default_factory=dict)  # node id -> its TMPDIR

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def add_node(self, name: str) -> str:
        tmp = self.tmp / f"node-{name}-{len(self.tmpdirs)}"
        tmp.mkdir()
        env = {"TMPDIR": str(tmp), "BENCHTAPE_REAPER_IDLE": "2"}
        node = self.cluster.add_node(num_cpus=1, resources={"docker_slot": 1, f"node_{name}": 1}, object_store_memory=OSM, env_vars=env)
        self.nodes[node.node_id] = node
        self.tmpdirs[node.node_id] = tmp
        return str(node.node_id)

    def kill_node(self, node_id: str) -> None:
        """SIGKILL the node's raylet (a machine lost, not drained), and everything of it Ray knows."""
        self.cluster.remove_node(self.nodes.pop(node_id), allow_graceful=False)


def start_cluster(names: tuple[str, ...] = ("a", "b")) -> LocalCluster:
    import ray
    from ray.cluster_utils import Cluster

    tmp = Path(tempfile.mkdtemp(prefix="rt", dir="/tmp"))  # short: Ray's socket paths live under it
    # Ray's cluster_utils writes the head's address to the default temp dir (/tmp/ray) whatever
    # temp_dir says, and does not make the folder: on a machine where no Ray ran before, it is absent
    (Path(tempfile.gettempdir()) / "ray").mkdir(exist_ok=True)
    head = {"num_cpus": 0, "object_store_memory": OSM, "include_dashboard": False, "temp_dir": str(tmp / "ray"), "_system_config": FAST_HEALTH}
    local = LocalCluster(Cluster(initialize_head=True, head_node_args=head), tmp)
    for name in names:
        local.add_node(name)
    local.cluster.wait_for_nodes()
    ray.init(address=local.address, log_to_driver=False, logging_level="WARNING")
    return local


def stop_cluster(local: LocalCluster) -> None:
    import ray

    ray.shutdown()
    local.cluster.shutdown()
    shutil.rmtree(local.tmp, ignore_errors=True)


# ---------------------------------------------------------------- running an evaluation


@dataclass
class Run:
    """An evaluation run through the front door's own calls (what `benchtape run NAME --yes` does)."""

    project: Path
    db: Path
    done: Any = None
    error: BaseException | None = None
    thread: threading.Thread | None = None


def run_evaluation(project: Path, db: Path, *, executor: str | None = None, address: str | None = None, tasks: list[str] | None = None, fresh: bool = False, concurrency: int = 2, sandbox: str | None = None, background: bool = False) -> Run:
    from benchtape.app.evaluation_run import EvaluationRequest, plan_evaluation, run_planned
    from benchtape.spec.pricing import load_pricing
    from benchtape.store.database import Store

    run = Run(project, db)

    def go() -> None:
        here = os.getcwd()
        os.chdir(project)
        try:
            store = Store(db)
            req = EvaluationRequest(name="base", tasks=tasks, fresh=fresh, yes=True, db=db, concurrency=concurrency, sandbox=sandbox, executor=executor, address=address)
            planned = plan_evaluation(req, store)
            run.done = run_planned(planned, store, req, load_pricing(planned.ev.project))
            store.close()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            run.error = exc
        finally:
            os.chdir(here)

    if background:
        run.thread = threading.Thread(target=go, daemon=True)
        run.thread.start()
    else:
        go()
        if run.error is not None:
            raise run.error
    return run


def preview(project: Path, db: Path, **kw: Any) -> dict[str, Any]:
    """What `--dry-run` says (as its JSON)."""
    from benchtape.app.evaluation_run import EvaluationRequest, plan_evaluation
    from benchtape.app.evaluation_run import preview as preview_doc
    from benchtape.spec.pricing import load_pricing
    from benchtape.store.database import Store

    here = os.getcwd()
    os.chdir(project)
    try:
        store = Store(db, readonly=True)
        planned = plan_evaluation(EvaluationRequest(name="base", dry_run=True, db=db, **kw), store)
        store.close()
        return preview_doc(planned, load_pricing(planned.ev.project))
    finally:
        os.chdir(here)


def cells(db: Path) -> dict[tuple[str, str, int], list[tuple[Any, ...]]]:
    """Per (task, setup, attempt): each stored attempt's outcome and its verdicts, oldest first."""
    from benchtape.store.database import Store

    store = Store(db, readonly=True)
    roots = [r for r in store.session_rows() if r.cell_id and r.parent_session is None]
    outcomes = store.latest_outcomes([r.id for r in roots])
    out: dict[tuple[str, str, int], list[tuple[Any, ...]]] = {}
    for r in roots:
        o = outcomes.get(r.id) or {}
        verdicts = sorted((v["check_path"], v["status"], v["pass"], v["score"]) for v in store.verdicts(session_id=r.id))
        out.setdefault((r.scenario, (r.params or {}).get("arm"), r.attempt), []).append((o.get("outcome"), r.cell_id, tuple(verdicts)))
    store.close()
    return out


def table(project: Path, db: Path) -> list[dict[str, str]]:
    """`compare base` as its rows (the terminal's text per column), without time (it is measured)."""
    from benchtape.replay.compare import comparison, display
    from benchtape.spec.evaluation import load_evaluation
    from benchtape.spec.pricing import load_pricing
    from benchtape.store.database import Store

    here = os.getcwd()
    os.chdir(project)
    try:
        store = Store(db, readonly=True)
        c = comparison(store, ["base"], load_pricing(load_evaluation("base").project), project)
        store.close()
        return [{k: v for k, v in display(row, c.k).items() if k != "time/cell"} for row in c.rows]
    finally:
        os.chdir(here)


def integrity(db: Path) -> str:
    c = sqlite3.connect(db)  # closed here: `with` would only end its transaction
    try:
        return str(c.execute("PRAGMA integrity_check").fetchone()[0])
    finally:
        c.close()


def wait_for(what: Any, timeout: float, every: float = 0.2) -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = what()
        if got or time.monotonic() > deadline:
            return got
        time.sleep(every)


def ledger_attempts() -> list[dict[str, Any]]:
    """Every attempt the (one) running evaluation's ledger has seen."""
    import ray

    from benchtape.recorder.ray_executor import NAMESPACE

    found = [a for a in ray.util.list_named_actors(all_namespaces=True) if a["name"].startswith("ledger-") and a["namespace"] == NAMESPACE]
    if not found:
        return []
    try:
        return list(ray.get(ray.get_actor(found[-1]["name"], namespace=NAMESPACE).all.remote(), timeout=10))
    except Exception:  # noqa: BLE001 - the run ended meanwhile
        return []


def left_running(tmp: Path) -> list[str]:
    """What is left of a node whose TMPDIR was `tmp`: live processes whose environment names it,
    session folders in it, and containers whose session folder was in it."""
    from benchtape.sandbox.capture import session_folders
    from benchtape.sandbox.supervisor_program import process_table

    needle = str(tmp).encode()
    out = []
    for pid in process_table():
        try:
            with open(f"/proc/{pid}/environ", "rb") as f:
                if needle in f.read():
                    out.append(f"process {pid}")
        except OSError:
            continue
    out += [f"session folder {p}" for p in session_folders(tmp)]
    return out + containers_of(tmp)


def containers_of(tmp: Path) -> list[str]:
    """Containers (any state) a session under `tmp` started."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        found = client.containers.list(all=True, filters={"label": "benchtape.session_dir"})
    except Exception:  # noqa: BLE001 - no engine: no container
        return []
    return [f"container {c.name}" for c in found if str(c.labels.get("benchtape.session_dir", "")).startswith(str(tmp))]


def need_ray() -> None:
    """Ray is the optional extra `benchtape[ray]`: without it the cluster tests skip, except in
    CI (`.ci/run` installs the test extra, which takes it), where they fail instead."""
    import importlib.util

    import pytest

    if importlib.util.find_spec("ray") is None:
        why = "ray is not installed (pip install -e '.[ray]')"
        if os.environ.get("CI") == "true":
            pytest.fail(f"the scale-out tests need Ray in CI: {why}")
        pytest.skip(why, allow_module_level=True)


def docker_up() -> bool:
    from benchtape.sandbox.container import available

    return bool(available()[0])
