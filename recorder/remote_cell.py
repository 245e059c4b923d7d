"""An evaluation cell as a worker on another machine records it.

The driver plans and stages; a worker only records. What crosses to the worker:
- the run's planning (`shipped_matrix`: the evaluation, its tasks, resolved versions and task
  facts, so nothing is resolved again there), once per run;
- the cell's plan (`WorkerCell`), per cell;
- its task's staged tree (`ShippedSeed`: the snapshot tar the driver made of what it staged, or
  why staging failed), once per task; a worker unpacks it once per node into its node folder.

Staging on the driver keeps one answer key per run: a task's `generate:` values are the ones
the driver grades with, whichever node recorded the cell.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import uuid
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.envs.agent_env import AgentEnv
from benchtape.recorder.cellrun import CellJob, CellRecord, record_cell, record_lost
from benchtape.recorder.matrix import CellPlan, Matrix, Problem, Staging
from benchtape.recorder.runner import Runner
from benchtape.spec.evaluation import Task
from benchtape.spec.identity import CellIdentity


@dataclass(frozen=True)
class ShippedSeed:
    """A task's staged tree for workers: its snapshot (None: an empty workspace), or its problem."""

    task: str
    sha256: str | None = None
    data: bytes | None = None
    problem: Problem | None = None


def ship_seed(matrix: Matrix, task: Task) -> ShippedSeed:
    """Stage the task here (once per invocation, as a local run does) and pack its tree."""
    from benchtape.sandbox.snapshot import snapshot

    seed, problem = matrix.staging.seed(task)
    if problem is not None:
        return ShippedSeed(task.id, problem=problem)
    if seed is None:
        return ShippedSeed(task.id)
    try:
        data, _ = snapshot(seed)
    except (OSError, ValueError) as exc:
        return ShippedSeed(task.id, problem=Problem("staging", f"the staged tree could not be packed for the workers: {exc}"))
    return ShippedSeed(task.id, hashlib.sha256(data).hexdigest(), data)


class ShippedStaging(Staging):
    """A worker's staging: the seeds the driver shipped, each unpacked once into the node's
    folder (every worker process of a node shares it; the first to finish unpacking wins)."""

    def __init__(self, seeds: dict[str, ShippedSeed] | None = None, folder: Path | None = None):  # no locks: it travels
        self.seeds = dict(seeds or {})
        self.folder = folder

    def seed(self, task: Task) -> tuple[Path | None, Problem | None]:
        shipped = self.seeds.get(task.id)
        if shipped is None:
            return None, Problem("staging", f"the driver shipped no staged tree for task {task.id}")
        if shipped.problem is not None or shipped.data is None or shipped.sha256 is None:
            return None, shipped.problem
        assert self.folder is not None
        return unpacked(shipped.data, shipped.sha256, self.folder / "seeds"), None

    def ready(self, task: Task) -> bool:
        return True

    def environment(self, task: Task) -> AgentEnv | None:
        """A worker has no project repository nor environment cache of the driver's: a history
        task's agent runs there without the project's environment, said in its record (what the
        build generated into the tree is in the shipped seed)."""
        if task.kind != "history":
            return None
        if not task.project_environment:
            return AgentEnv.withheld(task.scenario.sandbox.level, "`project_environment: false` in the evaluation: the agent runs without the project's environment")
        return AgentEnv.withheld(task.scenario.sandbox.level, "cells recorded on a Ray worker are not given the project's environment (it is built on the driver); run with --executor local to give it")

    def scenario(self, task: Task) -> Any:
        """The scenario as the driver loaded it. A `generated:` picture is not shipped with the
        seed: such a cell stops here, saying so, rather than run without its picture."""
        if task.scenario.generated_images:
            raise OSError(f"scenario {task.scenario.name!r}: `image: generated:` pictures are not shipped to Ray workers; run it with --executor local")
        return task.scenario

    def vars(self, task: Task) -> dict[str, Any]:
        return {}  # the answer key stays with the driver, which grades

    def generated(self) -> dict[str, dict[str, Any]]:
        return {}

    def cleanup(self) -> None:
        """The node's seeds outlive one cell: the node sweep removes them with the run's folder."""


def unpacked(data: bytes, sha256: str, seeds: Path) -> Path:
    """The tree of this snapshot under `seeds/<sha256>`, unpacked on first use (into a folder of
    its own, then renamed into place: a reader never sees half a tree)."""
    from benchtape.sandbox.snapshot import restore

    target = seeds / sha256
    if target.is_dir():
        return target
    seeds.mkdir(parents=True, exist_ok=True)
    scratch = seeds / f".{sha256}.{os.getpid()}.{uuid.uuid4().hex[:8]}"
    restore(data, scratch, sha256=sha256)
    try:
        os.rename(scratch, target)
    except OSError:  # another worker of this node put it there first
        shutil.rmtree(scratch, ignore_errors=True)
    return target


def shipped_matrix(matrix: Matrix) -> Matrix:
    """The run's planning as it travels: without its staging (and its locks) or its events."""
    return replace(matrix, staging=ShippedStaging(), on_event=_quiet)


def _quiet(kind: str, data: dict[str, Any]) -> None:
    """Events of a shipped matrix go nowhere: the worker reports through the bundle."""


@dataclass(frozen=True)
class WorkerCell:
    """One cell as it travels: its plan, recorded by `record` on the worker."""

    plan: CellPlan
    keep: bool = False

    def record(self, runner: Runner, matrix: Matrix, seed: ShippedSeed | None, folder: Path) -> CellRecord:
        """Record the cell into the runner's store (the worker's shard) with the shipped seed."""
        staged = replace(matrix, staging=ShippedStaging({seed.task: seed} if seed is not None else {}, folder))
        return record_cell(runner, staged, self.plan, keep=self.keep)


class CellShipment:
    """A cell of the run, as the driver ships it and records what came back (or did not)."""

    def __init__(self, job: CellJob):
        self.job, self.plan, self.matrix = job, job.plan, job.matrix

    @property
    def name(self) -> str:
        """How Ray names its task (`ray list tasks`, the logs)."""
        cell = self.plan.cell
        return f"benchtape {cell.task.id} {cell.arm.label} #{cell.attempt}"

    @property
    def seed_key(self) -> str:
        """What its staged tree is shipped once per run under: its task."""
        return self.plan.cell.task.id

    def ship_seed(self) -> ShippedSeed:
        return ship_seed(self.matrix, self.plan.cell.task)

    def shipped_matrix(self) -> Matrix:
        return shipped_matrix(self.matrix)

    def worker(self) -> WorkerCell:
        return WorkerCell(self.plan, self.job.keep)

    def received(self, identity: CellIdentity, sessions: list[str]) -> CellRecord:
        """Its record as a worker recorded it (its sessions folded into the run's store)."""
        return CellRecord(self.plan, identity, list(sessions))

    def lost(self, runner: Runner, message: str, *, retried: bool, source: str | None = None) -> CellRecord:
        return record_lost(runner, self.matrix, self.plan, message, retried=retried, source=source)


def shipment_of(job: Any) -> Any:
    """The job as it is shipped: an evaluation's cell, or a job that says how it travels (its
    `shipment()`, with CellShipment's members: what benchmarks/scaleout.py ships). A bench run's
    sessions record on this machine."""
    if isinstance(job, CellJob):
        return CellShipment(job)
    if hasattr(job, "shipment"):
        return job.shipment()
    raise BadInput("--executor ray records an evaluation's cells; a bench run records on this machine", fix="drop --executor ray, or run an evaluation (`benchtape run NAME`)")
