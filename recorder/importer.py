"""Bringing sessions recorded elsewhere into the store, and re-deriving a stored session's
actions from its raw lines when an adapter has improved (`reparse`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from adapters.lines import finish_safely
from adapters.transcripts import Imported, detect_format, parser_for, read_transcript
from recorder.errors import BadInput
from recorder.model import Action
from recorder.store import Store

FORMATS_BY_HARNESS = {
    "claude-code": ("claude-transcript", "claude-stream-json"),
    "codex": ("codex-rollout", "codex-exec-json"),
}
# What a live run's raw lines are, by harness, for reparse.
LIVE_FORMAT = {"claude-code": "claude-stream-json", "codex": "codex-exec-json", "mock": "mock"}


@dataclass
class ImportResult:
    path: str
    session_id: str
    already: bool  # the same content was imported before: nothing new was written
    actions: int
    warnings: int


def import_files(store: Store, harness: str, paths: list[Path], scenario: str | None = None, argv: list[str] | None = None) -> list[ImportResult]:
    """One session per transcript (run kind `import`); the same content twice is found, not duplicated."""
    if harness not in FORMATS_BY_HARNESS:
        raise BadInput(f"cannot import {harness!r} transcripts", fix=f"use one of {', '.join(FORMATS_BY_HARNESS)}")
    prepared: list[tuple[Path, str, Imported]] = []
    for p in paths:  # read and check everything before writing anything
        fmt = detect_format(p)
        if fmt not in FORMATS_BY_HARNESS[harness]:
            raise BadInput(f"this is a {fmt} file, not a {harness} transcript", file=str(p), fix=f"import it as `benchtape import {'codex' if fmt.startswith('codex') else 'claude-code'} {p}`")
        prepared.append((p, fmt, read_transcript(p, fmt)))
    results: list[ImportResult] = []
    run_id: str | None = None
    for p, fmt, imp in prepared:
        source = f"import:{imp.sha256}"
        existing = store.find_session_by_source(source)
        if existing:
            results.append(ImportResult(str(p), existing, True, len(imp.actions), _warnings(imp.actions)))
            continue
        if run_id is None:
            run_id = store.new_run("import", harness=harness, argv=argv or [])
        name = scenario or imp.meta.get("session_id") or p.stem
        sid = store.new_session(run_id, str(name), harness=harness, model=imp.meta.get("model"), workdir=imp.meta.get("cwd"), source=source)
        store.append_raw(sid, list(enumerate(imp.raw, start=1)))
        started = Action(
            "session.started",
            {"scenario": name, "harness": harness, "model": imp.meta.get("model"), "prompt": imp.meta.get("first_prompt"), "work_dir": imp.meta.get("cwd"), "format": fmt, "imported_from": imp.source_files, "meta": imp.meta},
        )
        finished = Action("session.finished", {"status": "ok", "exit_code": None, "timed_out": False, "wall_ms": None, "imported": True})
        store.append(sid, [started, *imp.actions, finished])
        results.append(ImportResult(str(p), sid, False, len(imp.actions), _warnings(imp.actions)))
    return results


def reparse(store: Store, session_id: str) -> str:
    """A new session (linked to the old one) whose actions are re-derived from the stored raw lines."""
    row = store.session_row(session_id)
    if row is None:
        raise BadInput(f"no session {session_id}", fix="`benchtape sessions` lists them")
    old = store.actions(session_id)
    started = next((a for a in old if a.kind == "session.started"), None)
    fmt = (started.data.get("format") if started else None) or LIVE_FORMAT.get(row.harness or "")
    if fmt is None:
        raise BadInput(f"session {session_id} has no known native format to re-derive from")
    if fmt == "mock":
        from adapters.mock import MockParser

        parser = MockParser()
    else:
        parser = parser_for(fmt)
    raw = store.raw_lines(session_id)
    if not raw:
        raise BadInput(f"session {session_id} has no stored raw lines to re-derive from")
    derived: list[Action] = []
    for line in raw:
        derived.extend(parser.feed(line))
    derived.extend(finish_safely(parser))
    kept_front = [a for a in old if a.kind in ("session.started", "environment.expected")]
    first_user = next((a for a in old if a.kind == "message.user" and "format" not in (started.data if started else {})), None)
    kept_back = [a for a in old if a.kind in ("workspace.snapshot", "session.finished")]
    new_id = store.new_session(row.run_id, row.scenario, cell_id=row.cell_id, attempt=row.attempt, harness=row.harness, model=row.model, params=row.params, workdir=row.workdir, parent_session=session_id, source=f"reparse:{session_id}")
    store.append_raw(new_id, list(enumerate(raw, start=1)))
    front = [Action(a.kind, {**a.data, "reparsed_from": session_id} if a.kind == "session.started" else a.data, a.thread, a.at) for a in kept_front]
    back = [Action(a.kind, a.data, a.thread, a.at) for a in kept_back]
    user = [Action(first_user.kind, first_user.data, first_user.thread, first_user.at)] if first_user is not None and fmt in LIVE_FORMAT.values() else []
    store.append(new_id, [*front, *user, *derived, *back])
    return new_id


def _warnings(actions: list[Action]) -> int:
    return sum(a.kind == "adapter.warning" for a in actions)
