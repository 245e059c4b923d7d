"""The sandbox of a level, and the grading sandbox of a stored session: the one place a level name becomes a class."""

from __future__ import annotations

from typing import TYPE_CHECKING

from benchtape.core.payloads import SessionStarted
from benchtape.sandbox.levels import Event, GradingSandbox, Sandbox
from benchtape.spec.bench import LEVELS

if TYPE_CHECKING:
    from benchtape.sandbox.run_resources import RunResources


def sandbox_for(level: str, *, keep: bool = False, on_event: Event | None = None, resources: RunResources | None = None) -> Sandbox:
    """The sandbox of a level; `keep` leaves each session's sandbox in place for debugging;
    `resources`: the run's (its spare folders and cleanups), None for a sandbox outside a run."""
    emit = on_event or (lambda kind, data: None)
    if level == "container":
        from benchtape.sandbox.container_level import ContainerLevel

        return ContainerLevel(keep=keep, on_event=emit)
    from benchtape.sandbox.local import LocalLevel

    if level not in LEVELS:
        raise ValueError(f"unknown sandbox level {level!r}")
    return LocalLevel(level, keep=keep, on_event=emit, resources=resources)


def grading_sandbox_for(started: SessionStarted) -> GradingSandbox:
    """How a stored session's grading commands run, from its `session.started` facts: a
    container session's in a fresh container of the same image (never on the host), any
    other's on the host with a scrubbed environment."""
    container = started.get("container") if started.get("sandbox") == "container" else None
    if isinstance(container, dict):
        from benchtape.sandbox.container_level import ContainerGrading

        return ContainerGrading(container)
    from benchtape.sandbox.local import LocalGrading

    return LocalGrading()
