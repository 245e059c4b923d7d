"""`task lint [--fix] [ID…]`: does any task's prompt say where its answer is?

The findings are spec/prompt_leaks.py's (the PR's URL, owner/repo, forge hosts, the task's
own #N and pull/N, prefixes of its base or fix commit); `--fix` rewrites prompt.md with each
one replaced by `[redacted]` (written under a temporary name and renamed), so a task that
was leaking can be validated. Fixing a validated task's prompt makes it stale, as any edit
to a bound input does.

A redaction can leave a stray fragment: a line that says nothing once the reference is gone
("# Fixes [redacted]"), or a word glued to one (`[redacted]#12`, `https://docs.example/[redacted]/x`,
`[see]([redacted])`). A line of punctuation alone is one too: `task create` removes closing
references without a marker, and Python-Markdown's "Fixes #918." left its "." as a line. Each is
a finding too (`fragments`); `--fix` drops such a line and reduces such a word to `[redacted]`.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.spec.harbor_task import load_task_folder
from benchtape.spec.project import Project
from benchtape.spec.prompt_leaks import REDACTED, Finding, redact
from benchtape.spec.task import TaskSpec, find_task, task_dirs


@dataclass
class LintResult:
    id: str
    prompt: Path
    findings: list[Finding]
    fixed: bool = False
    remaining: list[Finding] = field(default_factory=list)
    fragments: list[Fragment] = field(default_factory=list)  # stray fragments of a redaction, after --fix what is left

    @property
    def clean(self) -> bool:
        return not (self.remaining if self.fixed else self.findings) and not self.fragments

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "prompt": str(self.prompt),
            "findings": [f.to_dict() for f in self.findings],
            "fragments": [f.to_dict() for f in self.fragments],
            "fixed": self.fixed,
            "remaining": [f.to_dict() for f in self.remaining],
        }


@dataclass(frozen=True)
class Fragment:
    """What a redaction left behind: the line, its text, and why it is stray."""

    line: int
    text: str
    why: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "text": self.text, "why": self.why}

    def describe(self) -> str:
        return f"line {self.line}: a stray fragment of a redaction ({self.why}): {self.text!r}"


_TOKEN = re.compile(r"\S*" + re.escape(REDACTED) + r"\S*")
_EDGE = ".,;:!?\"'`()"


# What a redaction leaves of a sentence: its punctuation, an emptied "()" or "[]". A line of
# hyphens alone is Markdown (a rule, a heading's underline), "::" reStructuredText's literal
# block, and an ellipsis says something.
_REMNANT = re.compile(r"\s*(?:(?:[.,;:!?\u2013\u2014-]|\(\s*\)|\[\s*\])\s*)+")
_MARKUP = re.compile(r"[\s-]*|\s*::\s*|\s*(?:\.\s*){3,}")
_FENCE = re.compile(r"^ {0,3}(?:`{3,}|~{3,})")


def fragments(text: str) -> list[Fragment]:
    """The stray fragments redaction left in `text` (see the module's docstring)."""
    found = []
    lines = text.splitlines()
    for number, (line, code) in enumerate(zip(lines, _in_code(lines)), start=1):
        if not code and _only_punctuation(line):
            found.append(Fragment(number, line.strip(), "a line of punctuation alone, what a redaction left of a sentence"))
            continue
        if REDACTED not in line:
            continue
        if _says_nothing(line):
            found.append(Fragment(number, line.strip(), "the line says nothing without what was redacted"))
            continue
        for m in _TOKEN.finditer(line):
            if m.group(0).strip(_EDGE) != REDACTED:
                found.append(Fragment(number, m.group(0), "a word glued to a redaction still points somewhere"))
    return found


def _says_nothing(line: str) -> bool:
    words = re.findall(r"[A-Za-z0-9][\w'-]*", re.sub(r"^\s*(?:#+|[-*+]|\d+[.)])\s*", "", line.replace(REDACTED, " ")))
    return len(words) <= 2


def _only_punctuation(line: str) -> bool:
    """A line that is a redaction's remnant, not Markdown that has no words by nature."""
    return bool(_REMNANT.fullmatch(line)) and not _MARKUP.fullmatch(line)


def _in_code(lines: list[str]) -> list[bool]:
    """Whether each line is in a fenced code block (or is its fence): a `;` or `)` alone there is
    code, no remnant of a sentence."""
    inside, marks = False, []
    for line in lines:
        fence = bool(_FENCE.match(line))
        marks.append(inside or fence)
        if fence:
            inside = not inside
    return marks


def without_fragments(text: str) -> str:
    """`text` with each line that says nothing dropped, and each word glued to a redaction
    reduced to the redaction (its sentence punctuation kept). A line dropped between two blank
    ones takes one of them along, so no paragraph gap doubles."""
    kept: list[str] = []
    lines = text.splitlines()
    gap = False
    for line, code in zip(lines, _in_code(lines)):
        if (REDACTED in line and _says_nothing(line)) or (not code and _only_punctuation(line)):
            gap = gap or bool(kept) and not kept[-1].strip()
            continue
        if gap and not line.strip():
            gap = False
            continue
        gap = False
        kept.append(_TOKEN.sub(lambda m: REDACTED + (m.group(0)[-1] if m.group(0)[-1] in ".,;:!?" else ""), line))
    while kept and not kept[0].strip():
        kept.pop(0)
    while kept and not kept[-1].strip():
        kept.pop()
    return "\n".join(kept) + ("\n" if text.endswith("\n") else "")


def repositories(project: Project) -> list[str]:
    """The owner/repo names a prompt must not carry: the project's `source:`, the forge its git
    remote points at, and the repository its package.json names (a clone from a local path, or
    a task created before the remote was set, carries neither in its own task.yaml)."""
    from benchtape.tasks.gitlog import remote_url
    from benchtape.tasks.init_project import parse_remote

    found = [project.source.full_name] if project.source.full_name else []
    remote = parse_remote(remote_url(project.root))
    if remote.get("owner"):
        found.append(f"{remote['owner']}/{remote['repo']}")
    declared = _package_repository(project.root)
    if declared:
        found.append(declared)
    return list(dict.fromkeys(found))


def _package_repository(root: Path) -> str | None:
    """owner/repo from package.json's `repository` (`"jshttp/cookie"`, `"github:owner/repo"`, or
    `{"url": "git+https://github.com/owner/repo.git"}`); None when it names none."""
    from benchtape.envs.node import package_json
    from benchtape.spec.project_tree import FolderTree
    from benchtape.tasks.init_project import parse_remote

    declared = package_json(FolderTree(root)).get("repository")
    url = declared.get("url") if isinstance(declared, dict) else declared
    if not isinstance(url, str):
        return None
    short = re.fullmatch(r"(?:github:|gitlab:)?([\w.-]+)/([\w.-]+)", url.strip())
    if short:
        return f"{short.group(1)}/{short.group(2)}"
    parsed = parse_remote(re.sub(r"^git\+", "", url.strip()))
    return f"{parsed['owner']}/{parsed['repo']}" if parsed.get("owner") else None


def selected(project: Project, ids: list[str] | None) -> list[TaskSpec]:
    """The tasks named (every task when none), each loaded strictly."""
    folders = [find_task(project.root, i) for i in ids] if ids else list(task_dirs(project.root).values())
    return [load_task_folder(f) for f in folders]


def lint_task(task: TaskSpec, project: Project, fix: bool = False) -> LintResult:
    findings = task.leaks(repositories(project))
    result = LintResult(task.id, task.prompt_path, findings, fragments=fragments(task.prompt()))
    if fix and (findings or result.fragments):
        text = without_fragments(redact(task.prompt(), findings))
        tmp = task.prompt_path.with_name(f".{task.prompt_path.name}.tmp")
        tmp.write_text(text, encoding="utf-8")
        os.replace(tmp, task.prompt_path)
        result.fixed = True
        result.remaining = task.leaks(repositories(project))
        result.fragments = fragments(text)
    return result


def lint(project: Project, ids: list[str] | None = None, fix: bool = False) -> list[LintResult]:
    return [lint_task(t, project, fix) for t in selected(project, ids)]
