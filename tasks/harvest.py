"""`task scan`: which merged changes of the local history would make tasks, best first.

A good task is a change that touched the implementation AND its tests: the tests become the
hidden verifier, the implementation the reference fix. Every mainline commit is a candidate
(merged PRs first, plain commits as the fallback), and so is every PR merged anywhere else in
the history of HEAD (gitlog.history); one that cannot be a task is listed with why (no tests
changed, tests only, docs or CI only, too many files, no changes, a release or merge-only
commit). The rest are
ranked: a merged PR over a plain commit, a small fix over a large one, tests that add over
tests that only edit, the recent over the old (the code of today's environment).

Local git only: nothing is fetched, no forge is asked.
"""

from __future__ import annotations

import math
import re
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import Any

from benchtape.core.errors import BadInput
from benchtape.spec.project import Project
from benchtape.spec.task import task_dirs
from benchtape.tasks.classify import Split, is_test_source, split
from benchtape.tasks.gitlog import Landing, history, landing_of

DEFAULT_LIMIT = 20
MAX_LIMIT = 200
DEFAULT_MAX_FILES = 10  # implementation files a reference fix may touch


@dataclass
class Candidate:
    landing: Landing
    split: Split
    score: float = 0.0
    skipped: str | None = None  # why it is no task; None: a candidate
    existing: bool = False  # a task of this id exists already

    def to_dict(self) -> dict[str, Any]:
        lines = {f.path: (f.added or 0) + (f.deleted or 0) for f in self.landing.fix.files}
        return {
            "id": self.landing.id,
            "kind": self.landing.kind,
            "mainline": self.landing.fix.mainline,
            "pull_request": self.landing.number,
            "fix_commit": self.landing.fix.sha,
            "base_commit": self.landing.base,
            "date": _iso(self.landing.fix.time),
            "title": _title(self.landing),
            "tests": self.split.tests,
            "implementation": self.split.code,
            "other": self.split.other,
            "noise": self.split.noise,
            "lines": {"tests": sum(lines.get(p, 0) for p in self.split.tests), "implementation": sum(lines.get(p, 0) for p in self.split.code)},
            "score": round(self.score, 2),
            "skipped": self.skipped,
            "task_exists": self.existing,
        }


@dataclass
class Scan:
    repo: Path
    head: str
    scanned: int
    candidates: list[Candidate]
    skipped: list[Candidate]
    limit: int
    since: str | None
    max_files: int
    seconds: float
    reasons: dict[str, int] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {
            "repository": str(self.repo),
            "head": self.head,
            "scanned": self.scanned,
            "limit": self.limit,
            "since": self.since,
            "max_files": self.max_files,
            "seconds": round(self.seconds, 3),
            "candidates": [c.to_dict() for c in self.candidates[: self.limit]],
            "more_candidates": max(len(self.candidates) - self.limit, 0),
            "skipped_reasons": self.reasons,
            "skipped": [c.to_dict() for c in self.skipped],
        }


def age_seconds(value: str) -> int | None:
    """An age (90d, 6w, 3m, 1y; 0d) in seconds; None when `value` is not one."""
    m = re.fullmatch(r"(\d+)([dwmy])", value.strip())
    return None if m is None else int(m.group(1)) * {"d": 1, "w": 7, "m": 30, "y": 365}[m.group(2)] * 86400


def parse_since(value: str | None, now: float | None = None) -> int | None:
    """`--since`: a date (2024-01-31) or an age (90d, 6w, 3m, 1y) → epoch seconds."""
    if value is None:
        return None
    now = now if now is not None else time.time()
    ago = age_seconds(value)
    if ago is not None:
        return int(now - ago)
    try:
        day = datetime.strptime(value.strip(), "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        raise BadInput(f"--since {value!r} is neither a date nor an age", fix="e.g. --since 2024-01-31, or --since 90d (also 6w, 3m, 1y)") from None
    return int(day.timestamp())


def scan(project: Project, *, limit: int = DEFAULT_LIMIT, since: str | None = None, max_files: int = DEFAULT_MAX_FILES) -> Scan:
    """Rank the mainline's changes as task candidates (local history only)."""
    if not 1 <= limit <= MAX_LIMIT:
        raise BadInput(f"--limit {limit} is out of range", fix=f"give 1 to {MAX_LIMIT}")
    if max_files < 1:
        raise BadInput(f"--max-files {max_files} must be at least 1")
    started = time.monotonic()
    commits = history(project.root, since=parse_since(since))
    existing = set(task_dirs(project.root))
    now = time.time()
    candidates, skipped = [], []
    reasons: dict[str, int] = {}
    seen: set[str] = set()
    for commit in commits:
        landing = landing_of(commit)
        paths = [f.path for f in commit.files]
        cand = Candidate(landing, split(paths, project.test_patterns, project.noise_patterns), existing=landing.id in existing)
        cand.skipped = _why_not(cand, max_files)
        if cand.skipped is None and landing.id in seen:
            cand.skipped = f"#{landing.number} landed twice; the newer landing is the candidate"
        if cand.skipped is None:
            seen.add(landing.id)
            cand.score = _score(cand, now)
            candidates.append(cand)
        else:
            key = cand.skipped.split(" (")[0]
            reasons[key] = reasons.get(key, 0) + 1
            skipped.append(cand)
    candidates.sort(key=lambda c: (-c.score, -c.landing.fix.time))
    head = commits[0].sha if commits else ""
    return Scan(project.root, head, len(commits), candidates, skipped, limit, since, max_files, time.monotonic() - started, reasons)


def _why_not(cand: Candidate, max_files: int) -> str | None:
    s = cand.split
    tests = [p for p in s.tests if is_test_source(p)]
    if not cand.landing.fix.files:
        return "no changes against its base"
    if cand.landing.kind == "merge" and cand.landing.number is None:
        return "a merge that names no pull request (its changes are the merged branch's)"
    what = release_or_merge_only(_title(cand.landing))
    if what and not (cand.landing.kind == "merge" and what.startswith("a merge-only")):  # a PR's merge is the PR, whatever its subject
        return what
    if not tests and not s.code:
        return "no tests and no implementation changed (docs, configuration or noise only)"
    if not tests:
        return "no test changed (nothing to verify with)"
    if not s.code:
        return "tests only: no implementation changed (nothing for an agent to fix)"
    if len(s.code) > max_files:
        return f"too many implementation files ({len(s.code)} > --max-files {max_files})"
    return None


_RELEASE = re.compile(
    r"^(?:\[release\]|releasing|prepare(?:d|s)?(?: for)?(?: the)? release|bump(?:ed|s)?(?: the)? version|version bump|bump to v?\d)\b|^v?\d+\.\d+(?:\.\d+)*(?:[-.]?(?:rc|a|b|alpha|beta|post|dev)\d*)?\s*$|^release(?: version)?\s*:?\s*v?\d|^release\s*$|^\[release\]",
    re.IGNORECASE,
)
_MERGE_ONLY = re.compile(r"^Merge (?:branch|remote-tracking branch|tag|commit|(?:the )?changes from) |^Merge \S+ into \S+", re.IGNORECASE)


def release_or_merge_only(title: str) -> str | None:
    """Why a change titled `title` is no task though it touched tests and code: a release
    ("Release v7.0.3", "Bump version to 0.8.2", "v1.2.0") gathers other changes, a merge of one
    branch into another ("Merge branch 'main' into dev") brings changes already counted."""
    text = re.sub(r"\s*\(#\d+\)\s*$", "", title).strip()
    if _RELEASE.search(text):
        return "a release commit (it gathers changes that landed on their own)"
    if _MERGE_ONLY.search(text):
        return "a merge-only commit (the changes it brings landed on their own)"
    return None


# A sweep of mechanical edits: its tests change to match the code's spelling or layout, and no
# behaviour does (inflect's "Fix typos found by codespell", "apply updated black v23 style
# rules" and toolz's "Fix typos" #526 ranked among the first, and no such change is a task).
# Ranked lower, never skipped: a title is not proof.
_SWEEP = re.compile(r"\btypos?\b|\bcodespell\b|\bspelling\b|\blint(?:ing|er)?\b|\bblack\b|\bisort\b|\bflake8\b|\bruff\b|\bpre-commit\b|\bcode[- ]style\b|\breformat", re.IGNORECASE)


# A change whose own words say no behaviour changed: its tests pass at the base too (tomlkit
# #517 "pure optimisation, no behaviour change" and boltons #446, tests covering a branch #438
# had fixed, were in their top five; each base_already_passes; wooorm/markdown-table's
# "Refactor code-style", first of 22, is a _SWEEP). Ranked lower, never skipped.
_NO_BEHAVIOUR = re.compile(r"^(?:clean ?up|tidy)\b|\bcover(?:s|ing|age)?\b", re.IGNORECASE)  # not "refactor" nor "faster": toolz #434 "refactor parallel.fold" and #425 "Faster dissoc" are tasks
_NO_BEHAVIOUR_SAID = re.compile(r"\bno (?:functional|behaviou?r(?:al)?|user-facing|semantic) changes?\b|\bpure(?:ly)? (?:an? )?(?:optimi[sz]ation|refactor(?:ing)?|performance)\b|\bbehaviou?r (?:is )?unchanged\b", re.IGNORECASE)


# test files that hold a runner's fixtures or a package marker, never a test of their own
_FIXTURE_FILES = ("conftest.py", "__init__.py", "setup.js", "setupTests.js", "setupTests.ts")


def _score(cand: Candidate, now: float) -> float:
    lines = {f.path: (f.added or 0) + (f.deleted or 0) for f in cand.landing.fix.files}
    added = {f.path: f.added or 0 for f in cand.landing.fix.files}
    impl_lines = sum(lines.get(p, 0) for p in cand.split.code)
    test_added = sum(added.get(p, 0) for p in cand.split.tests)
    score = 50.0
    score += 20.0 if cand.landing.number is not None else 0.0
    score -= 4.0 * (len(cand.split.code) - 1)
    score -= 6.0 * math.log2(1 + impl_lines / 10)
    # the tests a fix adds count, up to a point; many test files are a sweep, not one fix's tests
    # (commander.js moving 114 files from jest to node:test ranked first of 194 on its test lines)
    score += 3.0 * math.log2(1 + min(test_added, 200))
    score -= 4.0 * max(0, len(cand.split.tests) - 5)
    score -= 2.0 * len(cand.split.other)
    years = max(now - cand.landing.fix.time, 0) / (365 * 86400)
    score -= 2.5 * years
    if not any(is_test_source(p) and PurePosixPath(p).name not in _FIXTURE_FILES for p in cand.split.tests):
        score -= 20.0  # only fixtures changed (markupsafe #461's conftest.py, second of its scan): no test of its own to fail at the base
    if _SWEEP.search(_title(cand.landing)):
        score -= 25.0
    elif _NO_BEHAVIOUR.search(_title(cand.landing)) or _NO_BEHAVIOUR_SAID.search(cand.landing.fix.body):
        score -= 20.0
    return score


def _title(landing: Landing) -> str:
    if landing.kind == "merge" and landing.fix.body:
        return landing.fix.body.splitlines()[0].strip()
    return re.sub(r"\s*\(#\d+\)\s*$", "", landing.fix.subject).strip()


def _iso(epoch: int) -> str:
    return datetime.fromtimestamp(epoch, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
