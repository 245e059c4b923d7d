"""Where a task's prompt tells the agent where the answer is (berbench §2.5, leak lint).

A task is mined from a merged pull request, and the fix is one click away from anything
that names it: the PR's URL, the repository (`owner/repo`, with or without its host), any
forge host, the task's own number (`#603`, `pull/603`, `!603`, `merge_requests/603`), or a
prefix of the base or fix commit. The prompt is the only text the agent sees, so each of
these in it is a finding; `redact` replaces them with `[redacted]` (`task lint --fix`), and a
task with findings is `leaking` and is never validated or run.

Pure text in, findings out: `task lint`, `task list` and `validate` read the same function.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterable

REDACTED = "[redacted]"
# Forges an agent must never reach (berbench §2.5): these and their subdomains.
FORGE_HOSTS = ("github.com", "gitlab.com", "githubusercontent.com", "bitbucket.org", "codeberg.org", "sr.ht")
_HOST = r"(?:[A-Za-z0-9-]+\.)*(?:" + "|".join(re.escape(h) for h in FORGE_HOSTS) + r")"
_FORGE_URL = re.compile(r"(?:https?|ssh|git)://[^\s<>()\[\]`'\"]*?" + _HOST + r"[^\s<>()\[\]`'\"]*|git@" + _HOST + r":[^\s<>()\[\]`'\"]+", re.IGNORECASE)
_FORGE_HOST = re.compile(r"(?<![A-Za-z0-9.-])" + _HOST + r"(?![A-Za-z0-9-])", re.IGNORECASE)
_HEX = re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{7,40}(?![0-9A-Za-z])")


@dataclass(frozen=True)
class Finding:
    """One leak: what kind, the text found, where (1-based line and column), and its span."""

    kind: str  # pr_url, forge_url, forge_host, owner_repo, self_reference, commit
    text: str
    line: int
    column: int
    start: int
    end: int

    def to_dict(self) -> dict[str, object]:
        return {"kind": self.kind, "text": self.text, "line": self.line, "column": self.column}

    def describe(self) -> str:
        what = {
            "pr_url": "the pull request's URL",
            "forge_url": "a forge URL",
            "forge_host": "a forge host",
            "owner_repo": "the repository's owner/name",
            "self_reference": "the task's own number",
            "commit": "a prefix of the base or fix commit",
        }[self.kind]
        return f"line {self.line}: {what}: {self.text!r}"


@dataclass(frozen=True)
class LeakContext:
    """What the prompt must not name: the PR (number, URL), the repository, the two commits."""

    number: int | None = None
    pull_request_url: str | None = None
    repositories: tuple[str, ...] = ()  # "owner/repo" names (the project's, the remote's)
    commits: tuple[str, ...] = ()  # full shas of the base and fix commits


def find_leaks(text: str, ctx: LeakContext) -> list[Finding]:
    """Every finding in `text`, in order, none overlapping another (the widest one wins)."""
    spans: list[tuple[int, int, str]] = []
    if ctx.pull_request_url:
        spans += [(m.start(), m.end(), "pr_url") for m in re.finditer(re.escape(ctx.pull_request_url.rstrip("/")), text)]
    spans += [(m.start(), m.start() + len(m.group(0).rstrip(".,;:!?")), "forge_url") for m in _FORGE_URL.finditer(text)]
    spans += [(m.start(), m.end(), "forge_host") for m in _FORGE_HOST.finditer(text)]
    for repo in ctx.repositories:
        pattern = r"(?<![A-Za-z0-9_.-])(?:" + _HOST + r"/)?" + re.escape(repo) + r"(?:\.git)?(?![A-Za-z0-9_-])"
        spans += [(m.start(), m.end(), "owner_repo") for m in re.finditer(pattern, text, re.IGNORECASE)]
    if ctx.number is not None:
        n = str(ctx.number)
        pattern = r"(?:(?<![&!#])[#!]|(?:pull|pulls|issues|merge_requests)/)" + n + r"(?![0-9])"  # `owner/repo#N` too
        spans += [(m.start(), m.end(), "self_reference") for m in re.finditer(pattern, text, re.IGNORECASE)]
    commits = [c.lower() for c in ctx.commits if c]
    for m in _HEX.finditer(text):
        word = m.group(0).lower()
        if any(c.startswith(word) for c in commits):
            spans.append((m.start(), m.end(), "commit"))
    return [_finding(text, start, end, kind) for start, end, kind in _widest(spans)]


def redact(text: str, findings: Iterable[Finding]) -> str:
    """`text` with every finding replaced by `[redacted]`."""
    out, last = [], 0
    for f in sorted(findings, key=lambda f: f.start):
        if f.start < last:
            continue
        out.append(text[last : f.start])
        out.append(REDACTED)
        last = f.end
    out.append(text[last:])
    return "".join(out)


def repository_names(*urls: str | None) -> tuple[str, ...]:
    """`owner/repo` from forge-style remotes and URLs (`git@host:o/r.git`, `https://host/o/r/pull/1`);
    a local path names no repository."""
    out: list[str] = []
    for url in urls:
        if not url:
            continue
        m = re.match(r"^(?:[a-z+]+://(?:[^@/]+@)?[^/]+/|[^@\s]+@[^:\s]+:)([^/\s]+)/([^/\s]+?)(?:\.git)?(?:/|$)", url.strip())
        if m:
            name = f"{m.group(1)}/{m.group(2)}"
            if name not in out:
                out.append(name)
    return tuple(out)


def _widest(spans: list[tuple[int, int, str]]) -> list[tuple[int, int, str]]:
    """Spans in order, an overlapped one dropped in favour of the one covering more."""
    chosen: list[tuple[int, int, str]] = []
    for span in sorted(spans, key=lambda s: (s[0], -(s[1] - s[0]))):
        if chosen and span[0] < chosen[-1][1]:
            if span[1] > chosen[-1][1]:
                start, _, kind = chosen[-1]
                chosen[-1] = (start, span[1], kind)
            continue
        chosen.append(span)
    return chosen


def _finding(text: str, start: int, end: int, kind: str) -> Finding:
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return Finding(kind, text[start:end], line, column, start, end)
