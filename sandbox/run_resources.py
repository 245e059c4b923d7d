"""What one run keeps for its sessions and their grading, and gives back at its end.

A run (a bench run's sessions, an evaluation's cells) makes files ahead so its sessions and
gradings do not wait on the disk: the inode pool a restore for grading takes empty files and
folders from (benchtape.sandbox.inodes), the next session's folder (benchtape.sandbox.spares),
and the finished sessions' removals parked until the next harness has started
(benchtape.sandbox.trees.Cleanup). They are one run's, made by its scheduler and handed to
what uses them (the sandbox levels, the grading of its sessions), never switched on for the
whole process: two runs in one process do not share, disable or wait for each other's.
"""

from __future__ import annotations

from benchtape.sandbox.inodes import InodePool
from benchtape.sandbox.spares import Spares
from benchtape.sandbox.trees import Cleanup


class RunResources:
    def __init__(self) -> None:
        self.cleanup = Cleanup()
        self.pool = InodePool(self.cleanup)
        self.spares = Spares(self.cleanup)

    def open(self) -> None:
        """The run starts recording: finished sessions' folders are parked from now on."""
        self.cleanup.open()

    def harness_started(self) -> None:
        """A session's harness has started: what was parked goes to the cleanup thread now."""
        self.cleanup.release()

    def close(self) -> None:
        """At the run's end: the unused spare (before the staged trees it was copied from go),
        the pool, then every cleanup the run asked for, waited for."""
        self.spares.discard()
        self.pool.discard()
        self.cleanup.close()
