"""The workspace an agent gets for a task: the tree at `base_commit`, as a FRESH repository.

One commit, made here, holding the base tree's bytes (exported as a checkout writes them,
sandbox/checkout.py export_commit): no history, no remote, no branch names, no hidden tests
and no reference patch, so nothing in `git log`, `git remote` or the object store points
at the change the task was mined from. Its author and date are fixed, so the same base
gives the same commit id (a cell's workspace is reproducible by content). What the project
environment's build generated into the tree (a VCS version file) joins that one commit when
the agent is given the environment (envs/agent_env.py).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any, Callable

from benchtape.sandbox.checkout import CheckoutFailed, export_commit

AUTHOR = "benchtape"
EMAIL = "task@benchtape.invalid"
DATE = "2000-01-01T00:00:00Z"
MESSAGE = "base"


def fresh_workspace(repo: Path, base_commit: str, dest: Path, *, timeout: float = 300.0, add: Callable[[Path], Any] | None = None) -> Path:
    """Write the tree of `base_commit` in `repo` to `dest` (which must not exist) as a new
    repository with one commit on `main`; returns `dest`. `add` writes into the exported tree
    before that commit (what the project environment's build generated into its tree:
    envs/agent_env.py), so what it wrote is part of the base, never of a candidate."""
    export_commit(repo, base_commit, dest, timeout=timeout)
    if add is not None:
        add(dest)
    return commit_as_base(dest, timeout=timeout)


def commit_as_base(dest: Path, *, timeout: float = 300.0) -> Path:
    """The tree at `dest` made a new repository with its files as the one commit on `main`, so
    that `candidate_patch` says what changed since (a Harbor task's starting workspace, for its
    solution script's change)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({
        "GIT_AUTHOR_NAME": AUTHOR, "GIT_AUTHOR_EMAIL": EMAIL, "GIT_AUTHOR_DATE": DATE,
        "GIT_COMMITTER_NAME": AUTHOR, "GIT_COMMITTER_EMAIL": EMAIL, "GIT_COMMITTER_DATE": DATE,
        "GIT_CONFIG_NOSYSTEM": "1", "HOME": str(dest.parent), "GIT_TERMINAL_PROMPT": "0",
    })
    for args in (["init", "-q", "-b", "main"], ["add", "-A", "-f"], ["commit", "-q", "--allow-empty", "--no-verify", "--no-gpg-sign", "-m", MESSAGE]):
        try:
            done = subprocess.run(["git", *args], cwd=dest, env=env, capture_output=True, text=True, timeout=timeout)
        except FileNotFoundError:
            raise CheckoutFailed("a task's workspace needs git on PATH, and there is none") from None
        except subprocess.TimeoutExpired:
            raise CheckoutFailed(f"`git {' '.join(args)}` took longer than {timeout:g}s") from None
        if done.returncode != 0:
            raise CheckoutFailed(f"`git {' '.join(args)}` failed (exit {done.returncode}): {done.stderr.strip()[-1000:]}")
    return dest


def candidate_patch(workspace: Path, *, timeout: float = 120.0) -> bytes:
    """What the agent changed in a fresh workspace: every file against its one commit (new
    files, deletions and binaries included), in git's shape, as `git apply` takes it."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_INDEX_FILE": str(workspace / ".git" / "benchtape-candidate-index"), "HOME": str(workspace.parent), "GIT_CONFIG_NOSYSTEM": "1"})
    for args in (["read-tree", "HEAD"], ["add", "-A", "-f"]):
        subprocess.run(["git", *args], cwd=workspace, env=env, capture_output=True, check=True, timeout=timeout)
    done = subprocess.run(["git", "diff", "--cached", "--binary", "--no-color", "--no-ext-diff", "HEAD"], cwd=workspace, env=env, capture_output=True, check=True, timeout=timeout)
    return done.stdout
