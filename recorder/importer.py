"""Bringing sessions recorded elsewhere into the store, and re-deriving a stored session's
actions from its raw lines when an adapter has improved (`reparse`)."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterator, cast

import orjson

from benchtape.adapters.base import Parser, warning
from benchtape.adapters.lines import finish_safely
from benchtape.adapters.transcripts import Transcript, check_atif, detect_format, gemini_sessions_below, open_transcripts, parser_for, trajectories_below, transcripts_below
from benchtape.core.errors import BadInput
from benchtape.core.model import Action
from benchtape.core.payloads import ENDED_IN_ERROR, SessionFinished
from benchtape.recorder.parse_worker import Parse, parsed
from benchtape.store.database import RAW_CHUNK_BYTES, Batch, new_id
from benchtape.store.views import RecordingStore

FORMATS_BY_HARNESS = {
    "claude-code": ("claude-transcript", "claude-stream-json"),
    "codex": ("codex-rollout", "codex-exec-json"),
    "gemini-cli": ("gemini-session",),
    "atif": ("atif",),  # not a harness: the session's harness is the trajectory's agent
}
JSON_LINES = frozenset(FORMATS_BY_HARNESS["claude-code"] + FORMATS_BY_HARNESS["codex"])  # one JSON document a line
# What a live run's raw lines are, by harness, for reparse.
LIVE_FORMAT = {"claude-code": "claude-stream-json", "codex": "codex-exec-json", "gemini-cli": "gemini-stream-json", "qwen-code": "claude-stream-json", "mini-swe-agent": "command", "opencode": "opencode-json", "aider": "command", "mock": "mock", "command": "command"}


# A transcript this large is parsed in a child process while this one writes
# (benchtape.recorder.parse_worker), and hashed on a thread meanwhile (the 0.04 s of hashing a 50 MB
# file no longer comes before its parse); a smaller one is hashed first, so an unchanged file
# imported again (a folder, daily) is only read, never parsed, and is parsed here.
LARGE_BYTES = 8 << 20


class AlreadyImported(Exception):
    """The transcript's content is in the store already, found once its hash was known: the
    transaction that was writing it rolls back, and the import reports the session it has."""

    def __init__(self, session_id: str):
        super().__init__(session_id)
        self.session_id = session_id


@dataclass
class ImportResult:
    path: str
    session_id: str
    already: bool  # the same content was imported before: nothing new was written
    actions: int
    warnings: int


def import_files(store: RecordingStore, harness: str, paths: list[Path], scenario: str | None = None, argv: list[str] | None = None) -> list[ImportResult]:
    """One session per transcript (run kind `import`); the same content twice is found, not duplicated.

    Every file's format is checked before anything is written (checked_files); then each file
    streams into the store in one transaction of its own (import_checked)."""
    return import_checked(store, harness, checked_files(harness, paths), scenario, argv)


def checked_files(harness: str, paths: list[Path]) -> list[tuple[Path, str]]:
    """Each transcript the paths name (a folder: those below it) with its format, every one
    found importable as `harness` before any is written: BadInput names the first that is not.
    Nothing here touches a store, so a command checks first and only then opens (or creates)
    its store: a refused import leaves no store file behind."""
    if harness not in FORMATS_BY_HARNESS:
        raise BadInput(f"cannot import {harness!r} transcripts", fix=f"use one of {', '.join(FORMATS_BY_HARNESS)}")
    files = _files(paths, harness)
    formats: list[tuple[Path, str]] = []
    for p in files:
        try:
            fmt = detect_format(p)
            if fmt not in FORMATS_BY_HARNESS[harness]:
                what = "an ATIF trajectory" if fmt == "atif" else f"a {fmt} file"
                wanted = "an ATIF trajectory" if harness == "atif" else f"a {harness} transcript"
                raise BadInput(f"this is {what}, not {wanted}", file=str(p), fix=f"import it as `benchtape import {_harness_of(fmt)} {p}`")
            if fmt == "atif":
                check_atif(p)
        except BadInput as exc:
            if len(files) > 1:  # every file is checked before any is written: say the others were not imported either
                exc.what += f" (nothing was imported: each of the {len(files)} files is checked before any is written; fix or move this one and import again)"
                exc.args = (exc.render(),)
            raise
        formats.append((p, fmt))
    return formats


def import_checked(store: RecordingStore, harness: str, formats: list[tuple[Path, str]], scenario: str | None = None, argv: list[str] | None = None) -> list[ImportResult]:
    """The files checked_files gave, each streamed into the store in one transaction of its own
    (memory stays flat in the file's size, and a file that fails to read leaves nothing of
    itself behind)."""
    results: list[ImportResult] = []
    run_id: str | None = None  # the import's run row, made in the transaction of its first new session
    for p, fmt, transcript in [(q, f, t) for q, f in formats for t in open_transcripts(q, f)]:  # a capture of several runs: one session each
        large = _size(transcript) >= LARGE_BYTES
        with parsed(transcript, in_child=large) as parse, _hashed(transcript, beside=large) as digest:
            known = None if large else store.find_session_by_source(f"import:{digest.result()}")
            if known is None:
                try:
                    run_id, sid, actions, warnings = _stream_into(store, run_id, harness, fmt, transcript, parse, digest, scenario or None, p, argv or [])
                    results.append(ImportResult(str(p), sid, False, actions, warnings))
                    continue
                except AlreadyImported as already:
                    known = already.session_id
        results.append(ImportResult(str(p), known, True, *_counts(store, known)))
    return results


@contextmanager
def _hashed(transcript: Transcript, *, beside: bool) -> Iterator[Future[str]]:
    """The transcript's sha256: on a thread of its own beside its parse (`beside`: a large one,
    whose child is forked before the thread starts, so no thread of the parent's is alive at
    the fork), else computed here first."""
    if beside:
        with ThreadPoolExecutor(1, thread_name_prefix="benchtape-hash") as hasher:
            yield hasher.submit(transcript.sha256)
        return
    digest: Future[str] = Future()
    digest.set_result(transcript.sha256())
    yield digest


def _harness_of(fmt: str) -> str:
    """What to import a file of this format as."""
    return next(h for h, formats in FORMATS_BY_HARNESS.items() if fmt in formats)


def _files(paths: list[Path], harness: str) -> list[Path]:
    """The paths given, a folder standing for every transcript below it
    (benchtape.adapters.transcripts.transcripts_below; for ATIF, trajectories_below)."""
    out: list[Path] = []
    for p in paths:
        if not Path(p).is_dir():
            out.append(Path(p))
            continue
        if harness == "atif":
            found = trajectories_below(Path(p))
            if not found:
                raise BadInput(f"no ATIF trajectory (.json) in the folder {p}", file=str(p), fix="pass a trajectory .json file, or a folder holding some (a Harbor job folder: <trial>/agent/trajectory.json)")
        elif harness == "gemini-cli":
            found = gemini_sessions_below(Path(p))
            if not found:
                raise BadInput(f"no Gemini CLI session record (session-*.json or .jsonl) in the folder {p}", file=str(p), fix="pass a session file, or a folder holding some (~/.gemini/tmp/)")
        else:
            found = transcripts_below(Path(p))
            if not found:
                raise BadInput(f"no .jsonl transcript in the folder {p}", file=str(p), fix="pass a session .jsonl file, or a folder holding some (~/.claude/projects/<project>/, ~/.codex/sessions/)")
        out += found
    return out


def _stream_into(store: RecordingStore, run_id: str | None, harness: str, fmt: str, transcript: Transcript, parse: Parse, digest: Future[str], scenario: str | None, path: Path, argv: list[str]) -> tuple[str, str, int, int]:
    """Write one transcript as a new session in one transaction, a batch at a time as `parse`
    gives them: raw lines in ~RAW_CHUNK_BYTES chunks, actions beside them. The session row and
    `session.started` (which need what only the whole file tells: model, cwd, first prompt) go
    in last, at the seq kept for them; foreign keys are checked at commit. The per-row
    no-rewrite triggers of actions and raw are lifted while the transaction holds the write
    lock (Store.transaction's `bulk`): its inserts are plain INSERTs of a new session's rows.

    The file may still be being hashed (`digest`): from the batch its hash is known by, and
    again before the session row, a transcript already in the store raises AlreadyImported,
    rolling back what was written. The import's run row (`run_id` None: not made yet) is made
    beside the session row. Returns (run_id, session_id, actions, warnings)."""
    sid = new_id()
    counted = warnings = 0
    source: str | None = None
    span = _Span()
    with store.transaction(defer_foreign_keys=True, bulk=True):
        started_seq = store.reserve_seq(sid)
        with store.batch_writer(sid) as writer:
            for batch in parse.batches:
                if source is None and digest.done():
                    source = _new_source(store, digest)
                writer.write(batch)
                span.add(batch)
                counted, warnings = counted + len(batch.heads), warnings + batch.warnings()
        source = source or _new_source(store, digest)
        meta = parse.meta
        name = scenario or meta.get("scenario") or meta.get("session_id") or path.stem
        ran = meta.get("harness") or harness  # an ATIF trajectory names its agent
        run_id = run_id or store.new_run("import", harness=harness, argv=argv)
        store.new_session(run_id, str(name), harness=ran, model=meta.get("model"), workdir=meta.get("cwd"), source=source, session_id=sid)
        started = Action(
            "session.started",
            {"scenario": name, "harness": ran, "model": meta.get("model"), "prompt": meta.get("first_prompt"), "work_dir": meta.get("cwd"), "format": fmt, "imported_from": [str(f) for f in transcript.files], "meta": meta},
            at=span.first,
        )
        store.append(sid, [started], at_seq=started_seq)
        finished: dict[str, Any] = meta["finished"] if isinstance(meta.get("finished"), dict) else {}  # how a session exported from benchtape ended
        # a transcript whose tool said it ended in error (Claude's result is_error, Codex's turn.failed)
        # is an errored session, as a live run of it is: never `status ok` beside "API Error …"
        cut = [str(f) for f in transcript.files if cut_short(f)] if fmt in JSON_LINES else []  # an ATIF trajectory is one JSON document
        done: SessionFinished = {"status": "error" if span.failed else "truncated" if cut else "ok", "exit_code": None, "timed_out": False, "wall_ms": span.wall_ms()}
        done.update(cast(SessionFinished, finished))  # an export's own session.finished: the writer checks its fields
        done["imported"] = True
        if cut:  # its verdicts would judge part of a session: errored, never passed (replay/grading.harness_ok)
            done["truncated"] = True
            note = warning(f"the transcript ends in the middle of a line ({', '.join(cut)}): its writer was stopped mid-write, so the session is cut short (status truncated)", "")
            note.at = span.last
            store.append(sid, [note])
            warnings += 1
        store.append(sid, [Action("session.finished", done, at=span.last)])
    return run_id, sid, counted, warnings


TAIL_BYTES = 1 << 20  # how far back a cut last line is looked for (longer lines are cut on read anyway)


def cut_short(path: Path) -> bool:
    """Whether the file ends in the middle of a JSON line: no newline after its last line, and
    that line is not JSON (a process killed while writing it). A last line written whole
    without its newline is not cut."""
    try:
        with path.open("rb") as fh:
            size = fh.seek(0, 2)
            if size == 0:
                return False
            fh.seek(max(0, size - TAIL_BYTES))
            tail = fh.read()
    except OSError:
        return False
    if tail.endswith(b"\n"):
        return False
    last = tail.rsplit(b"\n", 1)[-1].strip()
    if not last:
        return False
    try:
        orjson.loads(last)
    except orjson.JSONDecodeError:
        return True
    return False


class _Span:
    """When the transcript's own events began and ended (their timestamps; 0.0 when it has
    none): an imported session starts and finishes then, not when it was imported, and the
    time between is its wall clock."""

    def __init__(self) -> None:
        self.first = self.last = 0.0
        self.failed: str | None = None  # the tool's own word that the session ended in error

    def add(self, batch: Batch) -> None:
        for i, (kind, _, at) in enumerate(batch.heads):
            if at:
                self.first = min(self.first, at) if self.first else at
                self.last = max(self.last, at)
            if kind == "error":  # rare: decoded only here
                data = orjson.loads(batch.encoded[i])
                if data.get("source") in ENDED_IN_ERROR:
                    self.failed = str(data.get("message") or "error")

    def wall_ms(self) -> float | None:
        return round((self.last - self.first) * 1000, 1) if self.first else None


def _new_source(store: RecordingStore, digest: Future[str]) -> str:
    """The session source of a transcript not in the store yet; AlreadyImported when it is."""
    source = f"import:{digest.result()}"
    known = store.find_session_by_source(source)
    if known is not None:
        raise AlreadyImported(known)
    return source


def _size(transcript: Transcript) -> int:
    return sum(f.stat().st_size for f in transcript.files)


def _counts(store: RecordingStore, session_id: str) -> tuple[int, int]:
    """(actions, adapter warnings) of an imported session, without its bookends."""
    actions = store.actions(session_id)
    return sum(a.kind not in ("session.started", "session.finished") for a in actions), _warnings(actions)


def reparse_report(store: RecordingStore, old_id: str, new_id: str) -> str:
    """What `reparse` did, in one line that starts with the new session's id (as `import`'s do)."""
    (old_n, old_w), (new_n, new_w) = _counts(store, old_id), _counts(store, new_id)
    lines = len(store.raw_lines(new_id))
    return (
        f"{new_id}  re-derived from session {old_id}'s {lines} stored raw line(s) as a new session linked to it "
        f"(the old one is unchanged): {new_n} actions ({old_n} before), {new_w} adapter warning(s) ({old_w} before)"
    )


def reparse(store: RecordingStore, session_id: str) -> str:
    """A new session (linked to the old one) whose actions are re-derived from the stored raw lines."""
    row = store.session_row(session_id)
    if row is None:
        raise BadInput(f"no session {session_id}", fix="`benchtape sessions` lists them")
    old = store.actions(session_id)
    started = next((a for a in old if a.kind == "session.started"), None)
    fmt = (started.payload("session.started").get("format") if started else None) or LIVE_FORMAT.get(row.harness or "")
    parser = _format_parser(fmt) if fmt is not None else _plugin_parser(session_id, row.harness)
    raw = store.raw_lines(session_id)
    if not raw:
        raise BadInput(f"session {session_id} has no stored raw lines to re-derive from")
    derived: list[Action] = []
    for line in raw:
        derived.extend(parser.feed(line))
    derived.extend(finish_safely(parser))
    live = "format" not in (started.data if started else {})  # a run benchtape recorded, not an import
    # what benchtape itself wrote around a live run's stream (an import's parser derives its own)
    kept_front = [a for a in old if a.kind == "session.started" or (a.kind == "environment.expected" and live)]
    first_user = next((a for a in old if a.kind == "message.user" and live), None)
    kept_back = [a for a in old if a.kind in ("workspace.snapshot", "session.finished")]
    front = [Action.untyped(a.kind, {**a.data, "reparsed_from": session_id} if a.kind == "session.started" else a.data, a.thread, a.at) for a in kept_front]
    back = [Action.untyped(a.kind, a.data, a.thread, a.at) for a in kept_back]
    live_stream = fmt is None or fmt in LIVE_FORMAT.values()  # a plugin's sessions are its live stream
    user = [Action.untyped(first_user.kind, first_user.data, first_user.thread, first_user.at)] if first_user is not None and live_stream else []
    with store.transaction():  # the new session is there whole, or not at all
        new_id = store.new_session(row.run_id, row.scenario, cell_id=row.cell_id, attempt=row.attempt, harness=row.harness, model=row.model, params=row.params, workdir=row.workdir, parent_session=session_id, source=f"reparse:{session_id}")
        with store.batch_writer(new_id) as writer:
            for batch in _chunks(list(enumerate(raw, start=1))):
                writer.add(batch, [])
            writer.add([], [*front, *user, *derived, *back])
    return new_id


def _format_parser(fmt: str) -> Parser:
    """A fresh parser of a native format benchtape ships."""
    if fmt == "mock":
        from benchtape.adapters.mock import MockParser

        return MockParser()
    if fmt == "command":
        from benchtape.adapters.command import CommandParser

        return CommandParser()
    return parser_for(fmt)


def _plugin_parser(session_id: str, harness: str | None) -> Parser:
    """The parser of the plugin harness that recorded the session: a plugin's raw lines are its
    own format, which only its adapter reads (LIVE_FORMAT names built-in harnesses only)."""
    from benchtape.adapters.base import get_adapter
    from benchtape.core.harnesses import BUILTIN, harness_names

    if not harness or harness in BUILTIN:
        raise BadInput(f"session {session_id} has no known native format to re-derive from")
    if harness not in harness_names():
        raise BadInput(
            f"session {session_id} was recorded by harness {harness!r}, whose plugin is not installed here",
            fix=f"install the plugin that provides harness {harness!r} (a package with a `benchtape.harnesses` entry point named {harness}; `benchtape doctor` lists the installed ones), then reparse again",
        )
    try:
        return get_adapter(harness).parser()
    except NotImplementedError:
        raise BadInput(f"session {session_id}: harness {harness!r}'s plugin offers no parser to re-derive its raw lines with") from None


def _chunks(lines: list[tuple[int, str]]) -> Iterator[list[tuple[int, str]]]:
    """Lines in batches of about RAW_CHUNK_BYTES, one compressed chunk each."""
    batch: list[tuple[int, str]] = []
    size = 0
    for item in lines:
        batch.append(item)
        size += len(item[1])
        if size >= RAW_CHUNK_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _warnings(actions: list[Action]) -> int:
    return sum(a.kind == "adapter.warning" for a in actions)
