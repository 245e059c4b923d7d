"""Reading a repository's local history: no forge, no network, one `git log` for a whole scan.

Merged pull requests are recognised by how they landed on the mainline (the first-parent
chain from HEAD):
- a merge commit "Merge pull request #N from owner/branch" (GitHub), or "Merge branch … into …"
  whose body says "See merge request group/project!N" (GitLab): the fix is the merge, the base
  its first parent;
- a squash merge whose subject ends "(#N)": the fix is the commit, the base its parent;
- any other commit on the mainline is a plain-commit candidate (the fallback), with no number.
A pull request merged anywhere else in the history of HEAD (into a release branch, into
another PR's branch, merged on later) is found too (`history`); off the mainline only a
merged PR is a candidate (a merge naming it, or a squash GitHub committed), never a branch's own
commits, even one whose subject ends `(#N)`.

Every git call runs with the user's config that would change its output turned off
(colour, prefixes, external diff, textconv, renames).
"""

from __future__ import annotations

import os
import re
import subprocess
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.sandbox.patches import file_blocks

_MERGE_PR = re.compile(r"^Merge pull request #(\d+) from (\S+)")
_GITLAB_MR = re.compile(r"^See merge request (\S+)!(\d+)\s*$", re.MULTILINE)
_SQUASH = re.compile(r"\(#(\d+)\)\s*$")
_DIFF_FLAGS = ["--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/"]


class GitError(Exception):
    """A git command failed: the message names it and git's words."""


@dataclass
class FileChange:
    path: str
    added: int | None  # None: binary
    deleted: int | None


@dataclass
class Commit:
    sha: str
    parents: list[str]
    time: int  # committer time, epoch seconds
    subject: str
    body: str
    files: list[FileChange] = field(default_factory=list)
    mainline: bool = True  # on the first-parent chain of HEAD (else a PR merged elsewhere in its history)

    @property
    def message(self) -> str:
        return (self.subject + ("\n\n" + self.body if self.body.strip() else "")).strip()


@dataclass
class Landing:
    """How one change landed: the PR number (None for a plain commit), base and fix commits."""

    kind: str  # merge, squash, commit
    number: int | None
    fix: Commit
    base: str
    branch: str | None = None  # "owner/branch" a GitHub merge names, when it does

    @property
    def id(self) -> str:
        """The task id: the PR number, or the fix commit's 12-hex prefix."""
        return str(self.number) if self.number is not None else self.fix.sha[:12]


def git(repo: Path, args: list[str], *, text: bool = True, timeout: float = 300.0, check: bool = True, stdin: str | None = None) -> subprocess.CompletedProcess[Any]:
    """git in `repo`, never prompting, its pager and the user's diff settings out of the way."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    env.update({"GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "LC_ALL": "C"})
    argv = ["git", "-c", "core.quotepath=off", "-c", "diff.noprefix=false", "-c", "log.showSignature=false", *args]
    try:
        if stdin is None:
            done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=text, timeout=timeout, stdin=subprocess.DEVNULL)
        else:
            done = subprocess.run(argv, cwd=repo, env=env, capture_output=True, text=text, timeout=timeout, input=stdin if text else stdin.encode())
    except FileNotFoundError:
        raise GitError("git is not on PATH") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"`git {' '.join(args[:3])} …` took longer than {timeout:g}s") from None
    if check and done.returncode != 0:
        err = done.stderr if text else done.stderr.decode("utf-8", "replace")
        raise GitError(f"`git {' '.join(args[:4])}` failed (exit {done.returncode}): {err.strip()[-800:]}")
    return done


def repo_root(folder: Path) -> Path:
    """The top of the git work tree holding `folder`, or BadInput saying there is none."""
    try:
        done = git(folder, ["rev-parse", "--show-toplevel"])
    except GitError:
        raise BadInput(f"{folder} is not inside a git repository", fix="run this in a clone of the repository whose history the tasks come from") from None
    return Path(done.stdout.strip())


_LOG_FORMAT = "--format=%x1e%H%x1f%P%x1f%ct%x1f%s%x1f%b%x1f"


def mainline(repo: Path, since: int | None = None, rev: str = "HEAD") -> list[Commit]:
    """Every commit on the first-parent chain from `rev`, newest first, with its changed files
    (a merge's against its first parent). One git process."""
    args = ["log", "--first-parent", "--diff-merges=first-parent", "--numstat", "-z", "--no-renames", _LOG_FORMAT, rev]
    if since is not None:
        args.insert(1, f"--since={since}")
    return _parse_log(git(repo, args).stdout)


def history(repo: Path, since: int | None = None, rev: str = "HEAD") -> list[Commit]:
    """The mainline (newest first), then every pull request merged elsewhere in the history of
    `rev` (a merge naming its PR, or a squash `… (#N)`), newest first, marked `mainline=False`.
    Two more git processes: a listing of every commit, and the changed files of those found."""
    main = mainline(repo, since, rev)
    on = {c.sha for c in main}
    args = ["log", "--format=%H%x1f%P%x1f%s%x1f%ce%x1f%b%x1e", rev]
    if since is not None:
        args.insert(1, f"--since={since}")
    found = []
    for record in git(repo, args).stdout.split("\x1e"):
        parts = record.strip("\n").split("\x1f")
        if len(parts) < 5 or parts[0] in on:
            continue
        sha, parents, subject, committer, body = parts[0], parts[1].split(), parts[2], parts[3], parts[4]
        if _names_a_pull_request(parents, subject, body, committer):
            found.append(sha)
    if not found:
        return main
    out = git(repo, ["log", "--no-walk=unsorted", "--stdin", "--diff-merges=first-parent", "--numstat", "-z", "--no-renames", _LOG_FORMAT], stdin="\n".join(found) + "\n").stdout
    elsewhere = _parse_log(out)
    for commit in elsewhere:
        commit.mainline = False
    elsewhere.sort(key=lambda c: -c.time)
    return main + elsewhere


FORGE_COMMITTER = "noreply@github.com"  # who commits a squash merged on GitHub (its web flow)


def _names_a_pull_request(parents: list[str], subject: str, body: str, committer: str) -> bool:
    """Whether a commit off the mainline is a pull request merged there. A squash counts only
    when GitHub committed it: a contributor's own commit on a PR branch often ends `(#N)` too,
    naming the issue it fixes (prettytable's `fix: autoindex html format (#199)`, a commit of
    the branch merged later as #345), and taken as PR #199 it was a task whose reference was half
    a change, its parent lacking code the branch added before it."""
    if len(parents) >= 2:
        return bool(_MERGE_PR.match(subject) or _GITLAB_MR.search(body))
    return len(parents) == 1 and committer == FORGE_COMMITTER and bool(_SQUASH.search(subject))


def _parse_log(out: str) -> list[Commit]:
    commits: list[Commit] = []
    for record in out.split("\x1e"):
        if not record.strip():
            continue
        head = record.split("\x1f")
        if len(head) < 6:
            continue
        sha, parents, ctime, subject, body = head[:5]
        commit = Commit(sha.strip(), parents.split(), int(ctime), subject, body.strip())
        commit.files = _numstat(head[5])
        commits.append(commit)
    return commits


def _numstat(text: str) -> list[FileChange]:
    files = []
    for entry in text.strip("\n\0").split("\0"):
        entry = entry.strip("\n")
        parts = entry.split("\t", 2)
        if len(parts) != 3 or not parts[2]:
            continue
        a, d, path = parts
        files.append(FileChange(path, None if a == "-" else int(a), None if d == "-" else int(d)))
    return files


def landing_of(commit: Commit) -> Landing:
    """How `commit` (on the mainline) landed."""
    if len(commit.parents) >= 2:
        m = _MERGE_PR.match(commit.subject)
        if m:
            return Landing("merge", int(m.group(1)), commit, commit.parents[0], branch=m.group(2))
        mr = _GITLAB_MR.search(commit.body)
        if mr:
            return Landing("merge", int(mr.group(2)), commit, commit.parents[0])
        titled = _SQUASH.search(commit.subject)  # a merge GitHub titled as the PR (pallets/click: "Add FAQ entry (#3778)")
        return Landing("merge", int(titled.group(1)) if titled else None, commit, commit.parents[0])
    squash = _SQUASH.search(commit.subject)
    base = commit.parents[0] if commit.parents else ""
    if squash:
        return Landing("squash", int(squash.group(1)), commit, base)
    return Landing("commit", None, commit, base)


def resolve(repo: Path, rev: str) -> str | None:
    """The full sha `rev` names in `repo`, or None."""
    done = git(repo, ["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], check=False)
    return done.stdout.strip() if done.returncode == 0 and done.stdout.strip() else None


def is_ancestor(repo: Path, commit: str, of: str = "HEAD") -> bool:
    return git(repo, ["merge-base", "--is-ancestor", commit, of], check=False).returncode == 0


def read_commit(repo: Path, sha: str) -> Commit:
    out = git(repo, ["show", "-s", "--format=%H%x1f%P%x1f%ct%x1f%s%x1f%b", sha]).stdout
    sha, parents, ctime, subject, body = out.split("\x1f", 4)
    return Commit(sha, parents.split(), int(ctime), subject, body.strip())


def branch_messages(repo: Path, landing: Landing) -> list[str]:
    """The messages of the commits a merged branch brought in (not merges), oldest first."""
    if landing.kind != "merge" or len(landing.fix.parents) < 2:
        return []
    out = git(repo, ["log", "--no-merges", "--reverse", "--format=%B%x1e", f"{landing.base}..{landing.fix.parents[1]}"]).stdout
    return [m.strip() for m in out.split("\x1e") if m.strip()]


def file_diffs(repo: Path, base: str, fix: str) -> list[tuple[str, bytes]]:
    """(path, that file's patch) for every file changed from `base` to `fix`, binary-safe."""
    # bytes, not text: text mode's universal newlines would turn a name's carriage return into a newline
    names = [n.decode("utf-8", "replace") for n in git(repo, ["diff", "--name-only", "-z", "--no-renames", base, fix], text=False).stdout.split(b"\0") if n]
    patch = git(repo, ["diff", "--binary", "--full-index", *_DIFF_FLAGS, base, fix], text=False).stdout
    blocks = [block for _, block in file_blocks(patch)]
    if len(blocks) != len(names):
        raise GitError(f"the diff of {base[:12]}..{fix[:12]} has {len(blocks)} file blocks for {len(names)} changed files")
    return list(zip(names, blocks, strict=True))


def remote_url(repo: Path) -> str | None:
    """The `origin` remote's URL (else the first remote's), when the repository has one."""
    remotes = git(repo, ["remote"], check=False).stdout.split()
    if not remotes:
        return None
    name = "origin" if "origin" in remotes else remotes[0]
    done = git(repo, ["remote", "get-url", name], check=False)
    return done.stdout.strip() or None


def importers_at(repo: Path, commit: str, path: str) -> list[str]:
    """The files at `commit` whose text names `path`'s module (`./cases.spec.js` for
    src/cases.spec.ts: its name without the last extension), by git grep; their paths."""
    stem = PurePosixPath(path).name.rsplit(".", 1)[0]
    done = git(repo, ["grep", "-l", "-F", "-e", f"/{stem}", commit, "--"], check=False)
    return [line.split(":", 1)[1] for line in done.stdout.splitlines() if ":" in line and line.split(":", 1)[1] != path] if done.returncode == 0 else []


def read_at(repo: Path, commit: str, path: str) -> str | None:
    """A file's text at `commit`, or None when it is not there."""
    done = git(repo, ["show", f"{commit}:{path}"], text=False, check=False)
    return done.stdout.decode("utf-8", "replace") if done.returncode == 0 else None
