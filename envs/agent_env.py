"""What a history task's agent is given of its project's environment: the environment its
hidden verifier runs in at the cell's level (envs/project_env.py `project_environment`, the same
call validation and grading make, so the cached one), so `pytest`, `npm test` or
`python -c 'import dep'` in the agent's workspace finds what the verdict is computed with, and
nothing of it ever shows up in the agent's candidate patch.

- Python: the venv's bin first on PATH, VIRTUAL_ENV, and the import roots of the agent's
  WORKSPACE on PYTHONPATH (`ProjectEnv.run_env`, the verifier's own, given the workspace as the
  agent sees it). What the build generated into the tree (hatch-vcs's `_version.py`, which the
  package's import may need) is written into the fresh workspace before its one commit
  (`workspace_files`, `ProjectEnv.materialize` as each verifier tree gets it): never part of a
  candidate, and the candidate applies to a verifier tree that holds the same file.
- Node: the top node_modules beside the workspace, in its parent folder (Node resolves a module
  by walking up the parents), its `.bin` on PATH; nothing inside the workspace. On the host it
  is a copy of the agent's own (`cp -a --reflink=auto`, never hard links: a write through one
  would change the cache, whose digest check then refuses every later verifier); in a container
  the cache's folder bound read-only at /node_modules, with node and npm mounted as the
  verifier has them. npm is told to write no log file (its ~/.npm: HOME is the workspace at
  levels home and container). A workspace package's own node_modules is not given.
- The cache is never the agent's to write: in a container every folder of it is mounted
  read-only; on the host the whole cache (every project's entries, not the cell's alone) is
  bound read-only in the agent's own mount namespace where the host allows one
  (sandbox/pidfence.py), and a venv's digest (paths, sizes, mtimes; bytecode caches left out:
  any import writes them) is taken before the agent and after it (`Guard`): a venv that changed
  is discarded (its next use builds it anew). Every use of an entry compares its digest with
  the build's (envs/build.py `venv_digest`), so one changed by anything else is built anew too:
  no verdict is ever computed in what an agent installed there.

Level `none` (the agent in your own folder) is given nothing: nothing is laid out there.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.core.launch_plan import LaunchPlan, Mount
from benchtape.envs.build import ProjectEnv, discard, venv_digest
from benchtape.envs.cache import MANIFEST
from benchtape.envs.node import modules_digest
from benchtape.envs.project_env import env_mounts

# npm writes a log file under ~/.npm for every command, and HOME is the workspace at levels home
# and container: none is written, nor the update check's stamp (only an empty ~/.npm is left,
# which no diff shows)
NPM_QUIET = {"npm_config_logs_max": "0", "npm_config_update_notifier": "false"}


@dataclass
class AgentEnv:
    """A history task's project environment as one cell's agent gets it (or why it gets none)."""

    level: str
    env: ProjectEnv | None = None  # None: not given (`why` says why)
    why: str | None = None
    protection: str = ""  # how the cache is kept from the agent's writes, in a reader's words
    notes: list[str] = field(default_factory=list)
    workspace: list[str] = field(default_factory=list)  # what `workspace_files` wrote into the fresh workspace
    _plan: LaunchPlan | None = field(default=None, repr=False)

    @classmethod
    def withheld(cls, level: str, why: str, notes: list[str] | None = None) -> AgentEnv:
        return cls(level, None, why, notes=list(notes or []))

    @classmethod
    def of(cls, env: ProjectEnv, level: str, protection: str) -> AgentEnv:
        """`env` (what `project_environment` gave at the cell's level) as the agent gets it."""
        notes = [*env.recipe.notes, *env.notes]
        if env.folder is None:
            return cls.withheld(level, "no environment is built for this project" + (f" ({'; '.join(notes)})" if notes else ""), notes)
        given = cls(level, env, None, protection, notes)
        nested = [rel for rel in env.generated if rel != "node_modules"] if env.node_modules else []
        if nested:
            given.notes.append(f"only the top node_modules is beside the workspace: {', '.join(nested)} (a workspace package's own) is not given")
        if env.node_modules and not (env.folder / "tree" / "node_modules").is_dir():
            return cls.withheld(level, f"the cached environment {env.folder} has no top node_modules", notes)
        if env.node_modules and env.modules_digest and modules_digest(env.folder / "tree", env.generated) != env.modules_digest:
            return cls.withheld(level, f"the cached node_modules in {env.folder} was changed in place since it was built (`benchtape task envs --prune --unused-for 0d` removes it; it is built anew)", notes)
        return given

    @property
    def given(self) -> bool:
        return self.env is not None and self.env.folder is not None

    def workspace_files(self, tree: Path) -> list[str]:
        """What the build generated into its tree (a VCS version file), written into the fresh
        workspace `tree` before its one commit, as each verifier tree gets it; a Node project's
        node_modules never (it goes beside the workspace)."""
        if not self.given or self.env is None or self.env.venv is None:
            return []
        self.workspace = self.env.materialize(tree)
        return self.workspace

    def plan(self) -> LaunchPlan:
        """What the sandbox lays out for the agent (core/launch_plan.py): variables, the cache
        read-only (mounted in a container, bound on the host), a Node project's node_modules."""
        if self._plan is None:
            self._plan = self._laid_out()
        return self._plan

    def _laid_out(self) -> LaunchPlan:
        env = self.env
        if env is None or env.folder is None:
            return LaunchPlan()
        node_modules = env.folder / "tree" / "node_modules" if env.node_modules else None
        if self.level == "container":
            return LaunchPlan(mounts=tuple(Mount(Path(p), p) for p in env_mounts(env, "container")), env_for=self.variables, node_modules=node_modules)
        # the whole cache, not the entry alone: every project's environments are there, and an
        # agent that wrote into another's would change the verdicts of cells it never ran in
        return LaunchPlan(env_for=self.variables, read_only=(str(env.folder.parent),), node_modules=node_modules)

    def variables(self, workspace: str, path: str) -> dict[str, str]:
        """The agent's variables, its workspace at `workspace` and `path` its own PATH: the
        verifier's (`ProjectEnv.run_env`) with the workspace as the tree; a Node project's
        node_modules is in the workspace's parent, so its `.bin` is that folder's."""
        assert self.env is not None
        if self.env.node_modules:
            beside = posixpath.dirname(workspace.rstrip("/")).rstrip("/")  # '' for /workspace: /node_modules
            return {**self.env.run_env(beside, path), **NPM_QUIET}
        return self.env.run_env(workspace, path)

    def guard(self) -> Guard | None:
        """The venv's digest, taken now (before the agent), for a host level (a container mounts
        it read-only); None for a Node project (the agent has a copy of its own) or none given."""
        if self.env is None or self.env.venv is None or self.env.folder is None or self.level == "container":
            return None
        return Guard(self.env.folder)

    def record(self) -> dict[str, Any]:
        """What `environment.expected` says of it: what the agent could run, and where it came from."""
        env = self.env
        if env is None or env.folder is None:
            return {"given": False, "why": self.why, "notes": self.notes}
        det = env.recipe.detection
        out: dict[str, Any] = {
            "given": True,
            "language": det.language,
            "manager": env.installer,
            "key": env.folder.name,
            "folder": str(env.folder),
            "variables": sorted(self.variables("/workspace" if self.level == "container" else "WORKSPACE", "PATH")),
            "read_only": self.protection,
            "notes": self.notes,
        }
        if env.venv is not None:
            out.update({"python": env.recipe.python_version, "venv": str(env.venv), "workspace_files": list(self.workspace)})
        else:
            out.update({"node": env.recipe.node, "node_modules": "/node_modules (read-only)" if self.level == "container" else "../node_modules (a copy of the agent's own, beside the workspace)"})
        return out


class Guard:
    """A venv's digest before an agent ran beside it, checked after it."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.built = _manifest(folder)
        self.digest = venv_digest(folder)

    def check(self) -> str | None:
        """None when the venv is as it was; else it is discarded and the message says so. One
        discarded or rebuilt meanwhile (another cell found it changed) is not this agent's to judge."""
        if self.built is None or _manifest(self.folder) != self.built or venv_digest(self.folder) == self.digest:
            return None
        discard(self.folder)
        return (f"the project environment's venv in {self.folder} changed while the agent ran (written by it, or by an agent running beside it): "
                "it was discarded, so the verdict is computed in one built anew, never in what an agent installed there")


def _manifest(folder: Path) -> tuple[int, int] | None:
    """Which build of the entry this is (its manifest's inode and mtime), None when discarded."""
    try:
        st = (folder / MANIFEST).stat()
    except OSError:
        return None
    return st.st_ino, st.st_mtime_ns
