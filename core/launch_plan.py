"""What a harness asks of the sandbox it runs in, said without naming the harness.

The sandbox lays a session out before the harness's command exists: which host folders the
agent must read (benchtape's helper programs: the mock, oracle and command agents), which JSON
the tool wants under a HOME of the sandbox's own (its first-run answers), and what the tool
keeps under your real HOME that a session at level `workspace` must leave as it found it
(Claude Code's ~/.claude). A harness says all of it in a `LaunchPlan` (adapters/base.py
`launch_plan` builds one from the adapters a session or a cell runs); the sandbox only carries
it out, so a plugin harness gets the same treatment as a built-in one. The command itself
(argv, env, stdin, the files written under HOME) reaches the sandbox through its `spawn`.

A cell adds what the agent gets besides its harness: a history task's project environment
(envs/agent_env.py) as variables (`env_for`), folders the agent may read but never write
(`mounts` in a container, `read_only` on the host) and a Node project's `node_modules` laid
beside the workspace, where Node's walk up the parent folders finds it and no diff of the
workspace ever sees it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping

SUPPORT_AT = "/opt/benchtape"  # where a container sees benchtape's helper programs (read-only)
EnvFor = Callable[[str, str], Mapping[str, str]]  # (a tree as the box sees it, the box's PATH) -> variables


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
    # (the workspace as the agent sees it, the box's own PATH) -> variables the agent starts with
    # (a project environment's venv first on PATH, its import roots: envs/build.py ProjectEnv.run_env)
    env_for: EnvFor | None = None
    # host folders a level on the host makes read-only for the agent (bound so in its own mount
    # namespace, sandbox/pidfence.py, where this host gives one); a container shows a folder
    # through `mounts`, read-only already
    read_only: tuple[str, ...] = ()
    # host paths a level on the host hides from the agent (an empty folder or file over each, in
    # its own mount namespace): what a task's agent must never read (its hidden tests, the
    # reference patch, the history holding the fix: spec/task_cells.hidden_from_agent)
    hidden: tuple[str, ...] = ()
    # a Node project's installed dependencies, beside the workspace (in its parent folder): a copy
    # of its own on the host, this folder bound read-only at /node_modules in a container
    node_modules: Path | None = None
    # folders a container makes for the agent's user before it starts (as root, then theirs): where
    # a harness is handed files Harbor puts there (the oracle's /solution) when the task names a user
    container_folders: tuple[str, ...] = ()

    def joined(self, other: LaunchPlan) -> LaunchPlan:
        """Both plans at once (a workflow runs several harnesses in one sandbox): every mount and
        home state once, the home JSON merged, both plans' variables (the other's over these)."""
        from benchtape.core.jsonobjects import merge_json

        return LaunchPlan(
            mounts=_once(self.mounts + other.mounts),
            home_json=merge_json(dict(self.home_json), dict(other.home_json)),
            home_states=_once(self.home_states + other.home_states),
            env_for=_chained(self.env_for, other.env_for),
            read_only=_once(self.read_only + other.read_only),
            hidden=_once(self.hidden + other.hidden),
            node_modules=other.node_modules or self.node_modules,
            container_folders=_once(self.container_folders + other.container_folders),
        )

    def variables(self, workspace: str, path: str) -> dict[str, str]:
        """The variables the plan gives the agent, its workspace at `workspace` as it sees it and
        `path` the PATH it would start with ({} when the plan gives none)."""
        return dict(self.env_for(workspace, path)) if self.env_for is not None else {}


def _chained(first: EnvFor | None, then: EnvFor | None) -> EnvFor | None:
    """Both functions' variables, the second given the PATH the first made."""
    if first is None or then is None:
        return first or then
    a, b = first, then

    def both(workspace: str, path: str) -> Mapping[str, str]:
        made = dict(a(workspace, path))
        return {**made, **b(workspace, made.get("PATH", path))}

    return both


def _once(items: Iterable[Any]) -> tuple[Any, ...]:
    return tuple(dict.fromkeys(items))
