"""What a harness asks of the sandbox it runs in, said without naming the harness.

The sandbox lays a session out before the harness's command exists: which host folders the
agent must read (benchtape's helper programs: the mock, oracle and command agents), which JSON
the tool wants under a HOME of the sandbox's own (its first-run answers), and what the tool
keeps under your real HOME that a session at level `workspace` must leave as it found it
(Claude Code's ~/.claude). A harness says all of it in a `LaunchPlan` (adapters/base.py
`launch_plan` builds one from the adapters a session or a cell runs); the sandbox only carries
it out, so a plugin harness gets the same treatment as a built-in one. The command itself
(argv, env, stdin, the files written under HOME) reaches the sandbox through its `spawn`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping

SUPPORT_AT = "/opt/benchtape"  # where a container sees benchtape's helper programs (read-only)


@dataclass(frozen=True)
class Mount:
    """A host folder the agent reads: a container binds it read-only at `target`; a level on
    the host leaves it where it is."""

    source: Path
    target: str


@dataclass(frozen=True)
class HomeState:
    """What a tool keeps in a folder under your real HOME (level `workspace` runs the agent
    with it): the files a session could change, snapshotted before and put back after; the
    session-state folders whose new entries the session made and are deleted; the files beside
    the folder, in HOME itself, put back byte for byte; a folder whose changes are reported,
    never undone (plugins: reinstalling them is the user's decision)."""

    folder: str  # relative to HOME, e.g. ".claude"
    restored_files: tuple[str, ...] = ()  # globs in the folder
    restored_trees: tuple[str, ...] = ()  # sub-folders in the folder, put back whole
    created_entries_deleted: tuple[str, ...] = ()  # sub-folders whose new entries the session made
    home_files: tuple[str, ...] = ()  # relative to HOME
    reported: str | None = None  # a sub-folder whose changes are reported, not undone

    def doc(self) -> dict[str, Any]:
        """As written in a baseline, so another process restores an orphaned one (`recover`)."""
        return {
            "folder": self.folder,
            "restored_files": list(self.restored_files),
            "restored_trees": list(self.restored_trees),
            "created_entries_deleted": list(self.created_entries_deleted),
            "home_files": list(self.home_files),
            "reported": self.reported,
        }

    @classmethod
    def of(cls, doc: Mapping[str, Any]) -> HomeState:
        return cls(
            folder=str(doc["folder"]),
            restored_files=tuple(doc.get("restored_files") or ()),
            restored_trees=tuple(doc.get("restored_trees") or ()),
            created_entries_deleted=tuple(doc.get("created_entries_deleted") or ()),
            home_files=tuple(doc.get("home_files") or ()),
            reported=doc.get("reported"),
        )


@dataclass(frozen=True)
class LaunchPlan:
    """Everything the sandbox lays out for a harness before the session starts (see the module
    docstring); the empty plan asks for nothing."""

    mounts: tuple[Mount, ...] = ()
    home_json: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # relative path under HOME → keys merged into that JSON file (a HOME of the sandbox's own only)
    home_states: tuple[HomeState, ...] = ()  # put back at level workspace

    def joined(self, other: LaunchPlan) -> LaunchPlan:
        """Both plans at once (a workflow runs several harnesses in one sandbox): every mount and
        home state once, the home JSON merged."""
        from benchtape.core.jsonobjects import merge_json

        return LaunchPlan(
            mounts=_once(self.mounts + other.mounts),
            home_json=merge_json(dict(self.home_json), dict(other.home_json)),
            home_states=_once(self.home_states + other.home_states),
        )


def _once(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))
