"""Contamination, dated: which tasks a setup's model may have seen in training.

A task mined from a repository's history was solved by its fix commit; a model whose training
data runs past that commit's date may have read the fix. Each task's date is its fix commit's
committer date (`source.fix_date` when the task file states it, else asked of the project's
git history); each setup's cutoff is the latest training-data cutoff among its steps' models
(`cutoff:` in the tool registry, where published). A task dated on or before a setup's cutoff
is flagged "may have been seen" for that setup; `compare --after-cutoff` keeps only tasks
dated after every setup's cutoff, so all of them meet the tasks fresh.

Undated tasks (bench scenarios, tasks without a fix commit) and setups whose model publishes
no cutoff cannot be placed: they are said, never guessed.
"""

from __future__ import annotations

import datetime
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence


def fix_dates(project: Path, tasks: Sequence[Any]) -> dict[str, str | None]:
    """task id → the fix commit's date (YYYY-MM-DD), None when the task has none or the
    project's history does not hold the commit. One `git log` for all of them."""
    out: dict[str, str | None] = {}
    wanted: dict[str, str] = {}
    for t in tasks:
        source = getattr(t, "source", None) or getattr(getattr(t, "spec", None), "source", None)  # a TaskSpec, or an evaluation's Task
        stated = getattr(source, "fix_date", None)
        sha = getattr(source, "fix_commit", None)
        out[t.id] = stated[:10] if isinstance(stated, str) else None
        if out[t.id] is None and sha:
            wanted[t.id] = sha
    if wanted:
        known = commit_dates(project, sorted(set(wanted.values())))
        for task_id, sha in wanted.items():
            out[task_id] = known.get(sha)
    return out


def commit_dates(repo: Path, shas: Sequence[str]) -> dict[str, str]:
    """sha → its committer date (UTC, YYYY-MM-DD), for the commits the repository holds."""
    found: dict[str, str] = {}
    if not shas:
        return found
    done = subprocess.run(["git", "-C", str(repo), "log", "--no-walk=unsorted", "--format=%H %ct", "--ignore-missing", *shas], capture_output=True, text=True, timeout=60)
    if done.returncode != 0:
        return found
    for line in done.stdout.splitlines():
        sha, _, when = line.partition(" ")
        day = datetime.datetime.fromtimestamp(int(when), datetime.UTC).date().isoformat()  # UTC, as `task create` writes it
        for asked in shas:
            if sha.startswith(asked) or asked.startswith(sha):
                found[asked] = day
    return found


def arm_cutoffs(ev: Any) -> dict[str, str | None]:
    """arm key → the latest training cutoff among its steps' models; None when one is unpublished."""
    return {arm: cutoff for arm, (cutoff, _) in _arm_cutoffs(ev).items()}


def arm_cutoff_sources(ev: Any) -> dict[str, str | None]:
    """arm key → the page that publishes its cutoff (that of the step whose model's is the latest)."""
    return {arm: source for arm, (_, source) in _arm_cutoffs(ev).items()}


def _arm_cutoffs(ev: Any) -> dict[str, tuple[str | None, str | None]]:
    by_id: dict[str, tuple[str | None, str | None]] = {}
    for tool in ev.registry.tools.values():
        for model in tool.models.values():
            by_id.setdefault(model.id, (model.cutoff, model.cutoff_source))
            if model.cutoff:
                by_id[model.id] = (model.cutoff, model.cutoff_source)
    out: dict[str, tuple[str | None, str | None]] = {}
    for arm in ev.arms:
        found = [by_id.get(s.model_id or "", (None, None)) for s in arm.steps]
        out[arm.key] = (None, None) if not found or any(c is None for c, _ in found) else max(found, key=lambda f: f[0] or "")
    return out


def _on_or_before(date: str, cutoff: str) -> bool:
    """A date against a cutoff of month precision: the whole month counts as seen."""
    return date[: len(cutoff)] <= cutoff


@dataclass
class Contamination:
    dates: dict[str, str | None]  # task → fix date
    cutoffs: dict[str, str | None]  # arm → training cutoff
    seen: dict[str, list[str]] = field(default_factory=dict)  # arm → tasks dated on or before its cutoff
    sources: dict[str, str | None] = field(default_factory=dict)  # arm → the vendor's page that publishes its cutoff

    def to_dict(self) -> dict[str, Any]:
        return {"dates": self.dates, "cutoffs": self.cutoffs, "cutoff_sources": self.sources, "may_have_been_seen": self.seen, "undated_tasks": sorted(t for t, d in self.dates.items() if d is None)}


def contamination(dates: Mapping[str, str | None], cutoffs: Mapping[str, str | None], sources: Mapping[str, str | None] | None = None) -> Contamination:
    seen = {arm: sorted(t for t, d in dates.items() if d is not None and _on_or_before(d, cutoff)) for arm, cutoff in cutoffs.items() if cutoff}
    return Contamination(dict(dates), dict(cutoffs), seen, {arm: (sources or {}).get(arm) for arm in cutoffs})


def after_cutoff(dates: Mapping[str, str | None], cutoffs: Mapping[str, str | None], labels: Mapping[str, str]) -> list[str]:
    """The tasks dated after every setup's cutoff (`compare --after-cutoff`); a clear error
    when a setup's model publishes no cutoff (nothing can be said to be after it)."""
    from benchtape.core.errors import BadInput

    unknown = [labels.get(arm, arm) for arm, c in cutoffs.items() if c is None]
    if unknown:
        raise BadInput(f"--after-cutoff needs every setup's training cutoff; none is published for {', '.join(unknown)}", fix='add `cutoff: "YYYY-MM"` to the model in .benchtape/tools/TOOL.yaml (an overlay with `extends: builtin`), or compare without --after-cutoff')
    latest = max((c for c in cutoffs.values() if c), default=None)
    return [t for t, d in dates.items() if d is not None and (latest is None or not _on_or_before(d, latest))]
