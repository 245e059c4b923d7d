"""`repo:` — the base layer of a staged tree: a git checkout at `ref`, exported without git.

The workspace must not carry `.git` (the agent could read history, or the answer in a
later commit), submodules are not fetched, and Git-LFS content is not smudged: the
bench gets exactly the tracked files at `ref`. Git never prompts (a missing credential is
an error, not a hang) and runs under the staging time limit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from pathlib import Path, PurePosixPath
from typing import Any, Mapping

from benchtape.sandbox.trees import remove_tree


class CheckoutFailed(Exception):
    """A git step failed: the message names the command and git's own words."""


def export_repo(repo: Mapping[str, Any], dest: Path, *, timeout: float) -> None:
    """Write the tracked files of `repo.url` at `repo.ref` (under `repo.path`) into dest (which must not exist)."""
    url = str(repo["url"])
    ref = repo.get("ref")
    sub = _sub_path(repo.get("path"))
    scratch = Path(tempfile.mkdtemp(prefix="benchtape-clone-"))
    try:
        clone = scratch / "clone"
        _git(["clone", "--no-checkout", "--quiet", "--", url, str(clone)], None, timeout)
        commit = _resolve(clone, str(ref) if ref is not None else "HEAD", timeout)
        _git(["-c", "advice.detachedHead=false", "checkout", "--quiet", "--detach", commit], clone, timeout)
        source = clone / sub if sub else clone
        if not source.is_dir() or (sub and not _inside(source, clone)):
            raise CheckoutFailed(f"`repo.path: {repo.get('path')}` is not a folder of {url} at {ref or 'HEAD'}")
        shutil.copytree(source, dest, symlinks=True, ignore=shutil.ignore_patterns(".git"))
    finally:
        remove_tree(scratch)


def resolve_commit(repo: Mapping[str, Any], *, timeout: float) -> str:
    """The commit `repo.ref` names today, without cloning: what a cell's identity records, so a
    branch that moved makes new cells. A local repository answers `rev-parse`; a remote one
    `ls-remote` (a full sha is itself; an abbreviated sha of a remote cannot be resolved)."""
    url = str(repo["url"])
    ref = str(repo.get("ref") or "HEAD")
    if _FULL_SHA.match(ref):
        return ref.lower()
    if not url.startswith(_REMOTE) and Path(url).exists():
        proc = _git(["-C", url, "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], None, timeout, check=False)
        if proc.returncode == 0:
            return proc.stdout.strip()
        raise CheckoutFailed(f"`repo.ref: {ref}` names no commit, tag or branch of {url}")
    proc = _git(["ls-remote", "--", url, ref, f"{ref}^{{}}"], None, timeout)
    found = [line.split("\t") for line in proc.stdout.splitlines() if "\t" in line]
    peeled = [sha for sha, name in found if name.endswith("^{}")]
    shas = peeled or [sha for sha, _ in found]
    if not shas:
        raise CheckoutFailed(f"`repo.ref: {ref}` is no branch or tag of {url} (an abbreviated sha of a remote cannot be resolved without cloning: give the full sha)")
    return shas[0]


_FULL_SHA = re.compile(r"^[0-9a-fA-F]{40}$")
_REMOTE = ("git@", "http://", "https://", "ssh://", "git://", "file://")


def _sub_path(value: Any) -> str:
    if value in (None, "", "."):
        return ""
    p = PurePosixPath(str(value))
    if p.is_absolute() or ".." in p.parts:
        raise CheckoutFailed(f"`repo.path: {value}` must be a relative folder inside the repository, without `..`")
    return str(p)


def _resolve(clone: Path, ref: str, timeout: float) -> str:
    """A commit for ref: a sha, tag or local branch, else the remote's branch of that name."""
    for candidate in (ref, f"origin/{ref}"):
        proc = _git(["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], clone, timeout, check=False)
        if proc.returncode == 0:
            return proc.stdout.strip()
    raise CheckoutFailed(f"`repo.ref: {ref}` names no commit, tag or branch of the repository")


def _git(args: list[str], cwd: Path | None, timeout: float, check: bool = True) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1", "GIT_SSH_COMMAND": env.get("GIT_SSH_COMMAND", "ssh -o BatchMode=yes")})
    argv = ["git", *args]
    try:
        proc = subprocess.run(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise CheckoutFailed("`repo:` needs git on PATH, and there is none") from None
    except subprocess.TimeoutExpired:
        raise CheckoutFailed(f"`{' '.join(argv)}` took longer than the staging timeout ({timeout:g}s)") from None
    if check and proc.returncode != 0:
        raise CheckoutFailed(f"`{' '.join(argv)}` failed (exit {proc.returncode}): {proc.stderr.strip()[-1000:]}")
    return proc


def _inside(path: Path, root: Path) -> bool:
    real, top = path.resolve(), root.resolve()
    return real == top or top in real.parents


def export_commit(repo: Path, commit: str, dest: Path, *, timeout: float = 300.0) -> None:
    """Write the tracked files of `commit` in the local repository `repo` into `dest` (which
    must not exist), without `.git`, as a checkout writes them.

    Not `git archive`: it rewrites files marked `export-subst` (a `_version.py` holding
    `$Format:%H$`), so a patch made against the real file would not apply. A throwaway index
    read from the commit and `checkout-index` give the bytes a checkout gives, the repository
    itself untouched."""
    scratch = Path(tempfile.mkdtemp(prefix="benchtape-export-"))
    env = {"GIT_INDEX_FILE": str(scratch / "index"), "GIT_DIR": str(Path(repo) / ".git") if (Path(repo) / ".git").exists() else str(repo)}
    try:
        _git_env(["read-tree", commit], repo, timeout, env)
        dest.mkdir(parents=True)
        _git_env(["checkout-index", "--all", "--force", f"--prefix={dest.resolve()}/"], repo, timeout, env)
    finally:
        remove_tree(scratch)


def _git_env(args: list[str], cwd: Path, timeout: float, extra: Mapping[str, str]) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE")}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_LFS_SKIP_SMUDGE": "1", **extra})
    try:
        proc = subprocess.run(["git", *args], cwd=cwd, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    except FileNotFoundError:
        raise CheckoutFailed("exporting a commit needs git on PATH, and there is none") from None
    except subprocess.TimeoutExpired:
        raise CheckoutFailed(f"`git {' '.join(args)}` took longer than {timeout:g}s") from None
    if proc.returncode != 0:
        raise CheckoutFailed(f"`git {' '.join(args)}` failed (exit {proc.returncode}): {proc.stderr.strip()[-1000:]}")
