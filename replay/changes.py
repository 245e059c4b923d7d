"""What the agent changed: its final workspace against the tree benchtape staged for it,
both read from the snapshots stored with the session (no sandbox, no checkout needed).

The diff is git's shape (`diff --git a/… b/…`, unified hunks), so it reads like a pull
request and `git apply` takes all of it: a binary file (the bytecode cache running the tests
left, an image) is carried as `git diff --binary` carries it (its full index line and a
`GIT binary patch`: zlib'd, base85 in lines of 52 bytes), which a terminal or a report shows
as one line (`display_lines`). replay/workspace_export.py writes either tree to a folder.
A task cell's candidate patch (`task_candidate`) is made here too: grading a task cell reads
this module, so it imports nothing that imports grading.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import io
import os
import re
import stat
import tarfile
import zlib
from dataclasses import dataclass, field
from typing import Iterable, Iterator, Sequence

from benchtape.core.model import VERIFIER_HARNESS as VERIFIER
from benchtape.core.model import Session
from benchtape.sandbox.treediff import CACHES, cache_rule
from benchtape.store.views import BrowsingStore

CONTEXT = 3  # lines of context around each change, as git shows


class NoDiff(Exception):
    """The diff cannot be made for this session; the message says why, in a user's words."""


@dataclass(frozen=True)
class Entry:
    """One path of a snapshot: a file's bytes and mode, or a link's target."""

    kind: str  # file | link | dir
    data: bytes = b""
    mode: int = 0o644
    target: str = ""


@dataclass
class Changes:
    added: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    modified: list[str] = field(default_factory=list)
    patch: str = ""
    left_out: list[str] = field(default_factory=list)  # the tool's own state files that changed (Adapter.own_state)
    caches: list[str] = field(default_factory=list)  # caches that changed: not the agent's writing (treediff.cache_rule)

    @property
    def empty(self) -> bool:
        return not (self.added or self.removed or self.modified)

    def summary(self) -> str:
        if not self.empty:
            said = f"{len(self.modified)} modified · {len(self.added)} added · {len(self.removed)} removed"
        else:
            said = "no changes but the tool's own state" if self.left_out else "no changes: the final workspace is the staged tree"
        if self.left_out:  # no parentheses: the HTML page shows this inside its own
            said += f" · left out of the patch: {', '.join(self.left_out)}, the tool's own state, rewritten at every start; `benchtape export` writes it"
        if self.caches:
            said += f" · left out: {len(self.caches)} file(s) of {CACHES}"
        return said

    def to_dict(self) -> dict[str, object]:
        return {"added": self.added, "removed": self.removed, "modified": self.modified, "patch": self.patch, "left_out": self.left_out, "caches": self.caches}


def never_had_workspace(session: Session) -> str | None:
    """Why a session has no workspace to diff or export by its nature: an imported one (or a
    reparse of one: both keep `imported_from`), of which benchtape saw only the transcript; a
    validation's verifier run (tasks/validation_record.py), which keeps its log and evidence,
    never its throwaway tree (and was told "it failed" or "never finished" when it had done
    neither). None for an agent's session benchtape ran."""
    files = session.imported_from
    if files is not None:
        return f"session {session.id} was imported from a transcript ({', '.join(files) or 'a file'}): benchtape saw what the agent did, never its workspace"
    if session.harness == VERIFIER:
        return f"session {session.id} is a validation's verifier run ({session.scenario}): it keeps the verifier's log and its evidence, never the throwaway tree it ran in"
    return None


def workspace_changes(store: BrowsingStore, session: Session) -> Changes:
    """The session's changes to its workspace; NoDiff says why when they cannot be known."""
    imported = never_had_workspace(session)
    if imported is not None:
        listed = "its log" if session.harness == VERIFIER else "its edits as tool calls"
        raise NoDiff(f"{imported}, so there are no changes to diff; `benchtape show {session.id}` lists {listed}")
    if session.task is not None:  # a task cell: the candidate patch its task:verify verdict stored (the same bytes, derived again)
        return task_candidate(store, session)
    if not session.staged_snapshot:
        raise NoDiff(f"session {session.id} has no snapshot of its staged tree (recorded before benchtape kept one, or it failed), so its changes cannot be diffed; `benchtape export {session.id} DIR` still writes its final workspace")
    if not session.snapshot:
        raise NoDiff(f"session {session.id} has no final workspace snapshot (it never finished, or the snapshot failed), so there is nothing to diff against the staged tree")
    before = _entries(store, session.staged_snapshot["sha256"], "staged tree")
    after = _entries(store, session.snapshot["sha256"], "final workspace")
    return diff_trees(before, after, own_state=session.staged_snapshot.get("own_state") or ())


def task_candidate(store: BrowsingStore, session: Session) -> Changes:
    """A task cell's candidate patch: its final workspace against the tree it started from (the
    staged snapshot, else the cell's baseline: both taken before the agent ran), the workspace's
    own repository (`.git/`) and the tool's own state left out. What the verifier applies."""
    if not session.snapshot:
        raise NoDiff(f"session {session.id} has no final workspace snapshot (it never finished, or the snapshot failed): it has no candidate patch")
    staged = session.staged_snapshot or {}
    sha = staged.get("sha256") or (session.started.get("cell") or {}).get("baseline")
    if not sha:
        raise NoDiff(f"session {session.id} has no snapshot of the tree it started from, so its candidate patch cannot be derived")
    before = _without_repository(_entries(store, sha, "starting tree"))
    after = _without_repository(_entries(store, session.snapshot["sha256"], "final workspace"))
    return diff_trees(before, after, own_state=staged.get("own_state") or ())


def step_candidate(store: BrowsingStore, session: Session, first: Session) -> Changes:
    """A multi-step task's candidate after one step (`session`): its final workspace against the
    tree the task's first step started from, as a single-step task's is, except that what the
    first step's workdir/ and setup.sh changed before its agent started (`task.step.prelude`,
    in its staged snapshot) counts as a change: it is part of what each step's verifier is given,
    as it is in Harbor's container (the later steps' preludes are in the candidates already).
    benchtape's own writes into HOME before the agent stay out, as for a single step."""
    if not session.snapshot:
        raise NoDiff(f"session {session.id} has no final workspace snapshot (it never finished, or the snapshot failed): it has no candidate patch")
    staged = first.staged_snapshot or {}
    if not staged.get("sha256"):
        raise NoDiff(f"session {first.id} has no snapshot of the tree the task's first step started from, so the steps' candidate patches cannot be derived")
    before = _without_repository(_entries(store, staged["sha256"], "first step's starting tree"))
    prelude = ((first.task or {}).get("step") or {}).get("prelude") or []
    if prelude:  # those files as they were before the prelude: the cell's baseline (taken before it)
        baseline = (first.started.get("cell") or {}).get("baseline")
        if not baseline:
            raise NoDiff(f"session {first.id} has no baseline snapshot: what its step's workdir/ put in cannot be told from what was there")
        was = _entries(store, baseline, "starting tree")
        for path in prelude:
            if path in was:
                before[path] = was[path]
            else:
                before.pop(path, None)
    after = _without_repository(_entries(store, session.snapshot["sha256"], "final workspace"))
    return diff_trees(before, after, own_state=staged.get("own_state") or ())


def _without_repository(entries: dict[str, Entry]) -> dict[str, Entry]:
    """A task workspace's tree minus its fresh repository (an agent that committed changed it)."""
    return {p: e for p, e in entries.items() if p != ".git" and not p.startswith(".git/")}


def diff_trees(before: dict[str, Entry], after: dict[str, Entry], own_state: Sequence[str] = ()) -> Changes:
    """The patch from `before` to `after`; a changed path in `own_state` (the tool's own state
    files, as the staged snapshot names them) is named in `left_out`, not patched."""
    out = Changes()
    parts: list[str] = []
    is_cache = cache_rule(before, {p: e.data for p, e in after.items() if e.kind == "file"})
    for path in sorted(set(before) | set(after)):
        a, b = before.get(path), after.get(path)
        if a == b or (a is not None and b is not None and a.kind == b.kind == "dir"):
            continue
        if path in own_state:
            out.left_out.append(path)
            continue
        if is_cache(path):
            if not (a is not None and a.kind == "dir" or b is not None and b.kind == "dir"):
                out.caches.append(path)
            continue
        if a is None or a.kind == "dir":
            if b is not None and b.kind != "dir":
                out.added.append(path)
                parts.append(_file_patch(path, None, b))
        elif b is None or b.kind == "dir":
            out.removed.append(path)
            parts.append(_file_patch(path, a, None))
        else:
            out.modified.append(path)
            parts.append(_file_patch(path, a, b))
    out.patch = "".join(parts)
    return out


def _entries(store: BrowsingStore, sha: str, what: str) -> dict[str, Entry]:
    data = store.get_blob(sha)
    if data is None:
        raise NoDiff(f"the {what} snapshot {sha[:12]} is missing from the store")
    if hashlib.sha256(data).hexdigest() != sha:
        raise NoDiff(f"the {what} snapshot {sha[:12]} does not match its sha256 (damaged)")
    out: dict[str, Entry] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
            for m in tar:
                name = os.path.normpath(m.name)
                if m.isreg():
                    f = tar.extractfile(m)
                    out[name] = Entry("file", f.read() if f else b"", stat.S_IMODE(m.mode))
                elif m.issym():
                    out[name] = Entry("link", target=m.linkname)
                elif m.isdir():
                    out[name] = Entry("dir")
    except tarfile.TarError as exc:
        raise NoDiff(f"the {what} snapshot {sha[:12]} cannot be read: {exc}") from None
    return out


def _mode(e: Entry) -> str:
    return "120000" if e.kind == "link" else ("100755" if e.mode & 0o111 else "100644")


def _body(e: Entry | None) -> bytes:
    if e is None:
        return b""
    return e.target.encode() if e.kind == "link" else e.data


def _lines(data: bytes) -> list[str] | None:
    """Text lines, or None for binary content (a NUL byte, or not UTF-8)."""
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8").splitlines(keepends=True)
    except UnicodeDecodeError:
        return None


def _file_patch(path: str, a: Entry | None, b: Entry | None) -> str:
    head = [f"diff --git a/{path} b/{path}\n"]
    if a is None:
        head.append(f"new file mode {_mode(b)}\n")  # type: ignore[arg-type]
    elif b is None:
        head.append(f"deleted file mode {_mode(a)}\n")
    elif _mode(a) != _mode(b):
        head += [f"old mode {_mode(a)}\n", f"new mode {_mode(b)}\n"]
    old, new = _body(a), _body(b)
    if old == new:
        return "".join(head)
    la, lb = _lines(old), _lines(new)
    src, dst = ("/dev/null" if a is None else f"a/{path}"), ("/dev/null" if b is None else f"b/{path}")
    if la is None or lb is None:
        same_mode = f" {_mode(b)}" if a is not None and b is not None and _mode(a) == _mode(b) else ""
        head.append(f"index {_blob_id(a)}..{_blob_id(b)}{same_mode}\n")
        return "".join(head) + "GIT binary patch\n" + _literal(new) + "\n" + _literal(old) + "\n"
    body = []
    for line in difflib.unified_diff(la, lb, src, dst, n=CONTEXT):
        body.append(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n")
    return "".join(head + body)


def _blob_id(e: Entry | None) -> str:
    """The git blob id of the content (all zeros for none): `git apply` refuses a binary patch
    without the full index line."""
    if e is None:
        return "0" * 40
    body = _body(e)
    return hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest()


def _literal(data: bytes) -> str:
    """A `literal` hunk of a git binary patch: the size, then the zlib'd bytes in base85 (git's
    alphabet is Python's b85), 52 bytes a line, each led by its length (A-Z for 1-26, a-z for 27-52)."""
    packed = zlib.compress(data, 9)
    out = [f"literal {len(data)}\n"]
    for i in range(0, len(packed), 52):
        chunk = packed[i : i + 52]
        n = len(chunk)
        out.append((chr(ord("A") + n - 1) if n <= 26 else chr(ord("a") + n - 27)) + base64.b85encode(chunk, pad=True).decode() + "\n")
    return "".join(out)


# A file's header lines in the patch (the renderers style them apart from its hunks)
HEADER_LINES = ("diff --git", "new file", "deleted file", "old mode", "new mode", "index ", "GIT binary patch")


def display_lines(patch: str) -> Iterator[str]:
    """The patch's lines for a reader: each binary file's base85 lines as one line saying how
    big the new content is (the patch itself, for `git apply`, carries them)."""
    lines = iter(patch.splitlines())
    for line in lines:
        if line != "GIT binary patch":
            yield line
            continue
        size = next(lines, "literal ?")[len("literal ") :]
        for rest in lines:  # the forward literal, a blank line, the reverse literal, a blank line
            if rest.startswith("diff --git "):
                yield f"GIT binary patch ({size} bytes, carried for git apply)"
                yield rest
                break
        else:
            yield f"GIT binary patch ({size} bytes, carried for git apply)"


_HUNK = re.compile(r"^@@ -\d+(?:,(\d+))? \+\d+(?:,(\d+))? @@")


def line_classes(lines: Iterable[str]) -> Iterator[tuple[str, str]]:
    """Each display line of a patch with what it is: `hd` (a file's header), `hunk` (`@@`),
    `add`, `del`, `meta` (`\\ No newline at end of file`) or `` (context). Inside a hunk the
    lines it announced are counted, so a removed line reading `-- comment` (SQL, Lua) or an
    added `++x` is a change, never taken for a file's `---`/`+++` header."""
    old = new = 0  # lines the current hunk still owes on each side
    for line in lines:
        if old > 0 or new > 0:
            c = line[:1]
            if c == "+":
                new -= 1
                yield "add", line
                continue
            if c == "-":
                old -= 1
                yield "del", line
                continue
            if c == " " or line == "":
                old, new = old - 1, new - 1
                yield "", line
                continue
            if c == "\\":
                yield "meta", line
                continue
            old = new = 0  # a hunk cut short: what follows is read as headers again
        m = _HUNK.match(line)
        if m:
            old = int(m[1]) if m[1] is not None else 1
            new = int(m[2]) if m[2] is not None else 1
            yield "hunk", line
        elif line.startswith((*HEADER_LINES, "--- ", "+++ ")):
            yield "hd", line
        elif line.startswith("\\"):
            yield "meta", line
        else:
            yield "", line
