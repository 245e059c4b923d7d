"""Importing sessions recorded elsewhere: Claude Code session files, Codex rollouts, ATIF trajectories.

An import is the live path fed from files: the same streaming parsers, the lines in
the order they are stored, so re-deriving actions from the stored raw lines
(`reparse`) gives the same actions as the import did. A `Transcript` is read as a
stream (one line in memory at a time, lines split on newlines only, so U+2028 and
friends inside JSON strings stay in their line): its sha256 (to recognise the same
import twice), then each line with the actions parsed from it, then what the files
say about the session (`meta`). `Imported` is the same read all at once.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Protocol

from benchtape.adapters.aider_history import AiderHistoryParser
from benchtape.adapters.atif_trajectory import AtifParser, Invalid, load
from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.codex_exec import CodexExecParser
from benchtape.adapters.codex_rollout import CodexRolloutParser
from benchtape.adapters.gemini_session import FORMAT as FORMAT_GEMINI
from benchtape.adapters.gemini_session import GeminiSessionParser, is_gemini_session_head
from benchtape.adapters.gemini_stream import GeminiStreamParser
from benchtape.adapters.lines import finish_safely, read_lines
from benchtape.adapters.mini_trajectory import MiniTrajectoryParser
from benchtape.adapters.opencode import OpencodeParser
from benchtape.core.errors import BadInput
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action
from benchtape.core.payloads import EnvironmentReported


@dataclass
class Imported:
    actions: list[Action]
    raw: list[str]  # every native line of every file read, in the order parsed
    sha256: str  # of the bytes of every file read, in that order
    source_files: list[str]
    meta: dict[str, Any] = field(default_factory=dict)  # session_id, cwd, model, version, first_prompt, format, ...


class _Parser(Protocol):
    def feed(self, line: str) -> list[Action]: ...

    def finish(self) -> list[Action]: ...


class Transcript:
    """A transcript's files, read once as a stream of (line, the actions parsed from it)."""

    def __init__(self, fmt: str, files: list[Path], parser: _Parser, meta: Callable[[Transcript], dict[str, Any]], part: tuple[int, int, int] | None = None):
        self.fmt, self.files, self.parser = fmt, files, parser
        self.reported: EnvironmentReported | None = None  # the first environment.reported seen
        self._meta = meta
        self.part = part  # (first, end, number): one session of a capture holding several, by non-blank line index

    def sha256(self) -> str:
        """Of the bytes of every file, in order (read ahead of parsing: an import checks it first);
        a part of a capture adds its number, so each of its sessions is recognised on its own."""
        digest = hashlib.sha256()
        for path in self.files:
            with path.open("rb") as fh:
                while block := fh.read(1 << 20):
                    digest.update(block)
        if self.part is not None:
            digest.update(f"#session-{self.part[2]}".encode())
        return digest.hexdigest()

    def lines(self) -> Iterator[tuple[str, list[Action]]]:
        """Every non-blank line of every file (of this part), in order, with the actions it parsed to."""
        feed = self.parser.feed
        first, end = (self.part[0], self.part[1]) if self.part else (0, None)
        for path in self.files:
            for index, line in enumerate(_nonblank(path)):
                if index < first or (end is not None and index >= end):
                    continue
                actions = feed(line)
                if self.reported is None and actions:
                    self.reported = next((a.payload("environment.reported") for a in actions if a.kind == "environment.reported"), None)
                yield line, actions

    def finish(self) -> list[Action]:
        """The actions the parser held back for the end of the stream (a parser that fails there
        is a warning, never a lost import)."""
        return finish_safely(self.parser)

    @property
    def meta(self) -> dict[str, Any]:
        """What the files said about the session: complete once every line has been read."""
        return self._meta(self)

    def read(self) -> Imported:
        """The whole transcript at once (tests and small files; an import streams instead)."""
        actions: list[Action] = []
        raw: list[str] = []
        sha = self.sha256()
        for line, parsed in self.lines():
            raw.append(line)
            actions.extend(parsed)
        actions.extend(self.finish())
        return Imported(actions, raw, sha, [str(f) for f in self.files], self.meta)


READ_BUFFER = 1 << 20  # a transcript line is ~2 kB: an 8 kB buffer refills every few lines (~40% of reading them)


def _nonblank(path: Path) -> Iterator[str]:
    """A file's non-blank lines, split on newlines only, one in memory at a time, none longer
    than benchtape.adapters.lines.MAX_LINE_BYTES (a longer one is kept cut, with a marker)."""
    with path.open("rb", buffering=READ_BUFFER) as fh:
        yield from read_lines(fh)


def _session_starts(path: Path, fmt: str) -> list[int]:
    """Where each session of a saved stdout capture starts (non-blank line indices): a capture
    of two `claude -p` (or `codex exec`) runs one after another holds two sessions. A Claude
    session starts at a `system/init` after a `result` or under a new session_id; a Codex one
    at `thread.started`."""
    starts: list[int] = []
    current: str | None = None
    ended = False
    for index, line in enumerate(_nonblank(path)):
        event = decode(line)
        if event is None:
            continue
        if fmt == "codex-exec-json":
            if event.get("type") == "thread.started" and (starts or index):
                starts.append(index)
            continue
        sid = event.get("session_id")
        if event.get("type") == "system" and event.get("subtype") == "init" and (ended or (current is not None and sid != current)):
            starts.append(index)
            ended = False
        if isinstance(sid, str):
            current = sid
        ended = ended or event.get("type") == "result"
    return [0, *starts] if starts else [0]


def open_transcripts(path: str | Path, fmt: str | None = None) -> list[Transcript]:
    """Every session a file holds: one, except a saved stdout capture of several runs one after another."""
    name = fmt or detect_format(path)
    if name not in ("claude-stream-json", "codex-exec-json"):
        return [open_transcript(path, name)]
    starts = _session_starts(_readable(path), name)
    if len(starts) == 1:
        return [open_transcript(path, name)]
    ends = [*starts[1:], None]
    out = []
    for number, (first, end) in enumerate(zip(starts, ends), start=1):
        t = open_transcript(path, name)
        t.part = (first, end if end is not None else 1 << 62, number)
        out.append(t)
    return out


def transcripts_below(folder: Path) -> list[Path]:
    """Every transcript file under a folder (`~/.claude/projects/<project>/`, `~/.codex/sessions/`),
    in path order. A Claude subagent's sidechain (`agent-*.jsonl`) whose session file is where
    Claude Code keeps it is left out: it is imported with that session, not as one of its own;
    when that session file is not under the folder (a `subagents/` folder given alone), one of
    its sidechains stands for it, which imports the whole session (open_transcripts)."""
    files = sorted(p for p in folder.rglob("*.jsonl") if p.is_file())
    here = set(files)
    out: list[Path] = []
    owners: set[Path] = set()
    for p in files:
        owner = _session_of_sidechain(p) if p.name.startswith("agent-") else None
        if owner is None:
            out.append(p)
        elif owner not in here and owner not in owners:
            owners.add(owner)
            out.append(p)
    return out


def _readable(path: str | Path) -> Path:
    p = Path(path)
    if not p.is_file():
        raise BadInput(f"no transcript file at {p}", file=str(p), fix="pass the path of a session .jsonl file")
    return p


# ---------------------------------------------------------------------- Claude Code


def claude_session_files(session: Path) -> list[Path]:
    """The session file, then its subagent sidechains in both on-disk layouts.

    2.1.x: `<session>/subagents/agent-<agentId>.jsonl` (also accepted: a `subagents/`
    folder beside the session file). 2.0.x: `agent-<agentId>.jsonl` beside the
    session file in the project directory, shared by all of the project's sessions.
    A sidechain is taken only when its lines name this session.
    """
    session_id = _session_id(session) or session.stem
    files = [session]
    candidates: list[Path] = []
    for folder in (session.parent / session.stem / "subagents", session.parent / "subagents"):
        if folder.is_dir():
            candidates += sorted(folder.glob("agent-*.jsonl"))
    candidates += sorted(session.parent.glob("agent-*.jsonl"))
    for sidechain in candidates:
        if sidechain != session and sidechain not in files and _session_id(sidechain) == session_id:
            files.append(sidechain)
    return files


def _session_of_sidechain(path: Path) -> Path | None:
    """The session file a sidechain (agent-*.jsonl) belongs to, when it is where Claude Code puts it."""
    if not path.name.startswith("agent-"):
        return None
    session_id = _session_id(path)
    if not session_id:
        return None
    for folder in (path.parent, path.parent.parent, path.parent.parent.parent):
        candidate = folder / f"{session_id}.jsonl"
        if candidate.is_file():
            return candidate
        for other in sorted(folder.glob("*.jsonl")):
            if not other.name.startswith("agent-") and _session_id(other) == session_id:
                return other
    return None


def _session_id(path: Path) -> str | None:
    try:
        with path.open("rb") as fh:
            for i, line in enumerate(read_lines(fh)):
                entry = decode(line)
                found = entry.get("sessionId") if entry else None
                if isinstance(found, str):
                    return found
                if i > 50:
                    break
    except OSError:
        return None
    return None


def open_claude_transcript(path: str | Path) -> Transcript:
    """A Claude Code on-disk session (with its subagent files) as one session's actions.

    Given a subagent's sidechain file, the session it belongs to is imported (when it
    is where Claude Code keeps it), since a subagent is not a session of its own.
    """
    session = _readable(path)
    session = _session_of_sidechain(session) or session  # a subagent file imports as its whole session
    parser = ClaudeDiskParser()
    return Transcript("claude-transcript", claude_session_files(session), parser, lambda t: dict(parser.meta))


def open_claude_stream(path: str | Path) -> Transcript:
    """A saved `claude -p --output-format stream-json` capture."""
    parser = ClaudeStreamParser()

    def meta(t: Transcript) -> dict[str, Any]:
        out: dict[str, Any] = {"format": "claude-stream-json", "session_id": parser.session_id}
        if t.reported is not None:
            out.update(cwd=t.reported.get("cwd"), model=t.reported.get("model"), version=t.reported.get("version"))
        return out

    return Transcript("claude-stream-json", [_readable(path)], parser, meta)


# ---------------------------------------------------------------------- Codex


def open_codex_rollout(path: str | Path) -> Transcript:
    """A Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as one session's actions."""
    parser = CodexRolloutParser()
    return Transcript("codex-rollout", [_readable(path)], parser, lambda t: dict(parser.meta))


def open_codex_exec(path: str | Path) -> Transcript:
    """A saved `codex exec --json` capture."""
    parser = CodexExecParser()
    return Transcript("codex-exec-json", [_readable(path)], parser, lambda t: {"format": "codex-exec-json", "session_id": parser.thread_id})


def read_claude_transcript(path: str | Path) -> Imported:
    return open_claude_transcript(path).read()


def read_claude_stream(path: str | Path) -> Imported:
    return open_claude_stream(path).read()


def read_codex_rollout(path: str | Path) -> Imported:
    return open_codex_rollout(path).read()


def read_codex_exec(path: str | Path) -> Imported:
    return open_codex_exec(path).read()


# ---------------------------------------------------------------------- ATIF


def open_gemini_session(path: str | Path) -> Transcript:
    """Gemini CLI's own session record (`~/.gemini/tmp/<project>/chats/session-*.json[l]`) as
    one session's actions (benchtape.adapters.gemini_session)."""
    parser = GeminiSessionParser()
    return Transcript(FORMAT_GEMINI, [_readable(path)], parser, lambda t: dict(parser.meta))


def gemini_sessions_below(folder: Path) -> list[Path]:
    """Every Gemini CLI session record under a folder (`~/.gemini/tmp/`), in path order."""
    out = []
    for p in sorted(folder.rglob("*.json*")):
        if p.is_file() and p.suffix in (".json", ".jsonl"):
            with p.open("rb") as fh:
                if is_gemini_session_head(fh.read(65536).decode("utf-8", errors="replace")):
                    out.append(p)
    return out


def open_atif(path: str | Path) -> Transcript:
    """An ATIF trajectory (one JSON document: a Harbor trial's `agent/trajectory.json`, or
    `benchtape export --format atif`) as one session's actions (benchtape.adapters.atif_trajectory)."""
    parser = AtifParser()
    return Transcript("atif", [_readable(path)], parser, lambda t: dict(parser.meta))


def check_atif(path: str | Path) -> None:
    """BadInput unless the file is one ATIF trajectory the `atif` package accepts: an import
    checks every file before it writes anything."""
    p = _readable(path)
    try:
        load(p.read_bytes())
    except Invalid as exc:
        raise BadInput(f"not an ATIF trajectory: {exc}", file=str(p), fix="pass one ATIF document per file (a Harbor trial's agent/trajectory.json); `benchtape export --format atif` writes one") from None


def is_atif_head(head: str) -> bool:
    """Whether a file's first 64 kB look like an ATIF document (an object with an ATIF schema_version)."""
    return head.lstrip().startswith("{") and '"schema_version"' in head and '"ATIF-v' in head


def trajectories_below(folder: Path) -> list[Path]:
    """Every ATIF trajectory (`*.json` holding one) under a folder, in path order: a Harbor job
    folder's `<trial>/agent/trajectory.json`, or a folder `benchtape export --format atif --run` wrote."""
    out = []
    for p in sorted(folder.rglob("*.json")):
        if p.is_file():
            with p.open("rb") as fh:
                if is_atif_head(fh.read(65536).decode("utf-8", errors="replace")):
                    out.append(p)
    return out


# ---------------------------------------------------------------------- any of them

OPENERS: dict[str, Callable[[str | Path], Transcript]] = {
    "claude-transcript": open_claude_transcript,
    "claude-stream-json": open_claude_stream,
    "codex-rollout": open_codex_rollout,
    "codex-exec-json": open_codex_exec,
    "atif": open_atif,
    FORMAT_GEMINI: open_gemini_session,
}


def detect_format(path: str | Path) -> str:
    """Which recorded format a file is, from its first lines; BadInput for one benchtape cannot read."""
    p = _readable(path)
    with p.open("rb") as fh:
        head = fh.read(65536).decode("utf-8", errors="replace")
    if is_atif_head(head):
        return "atif"
    if is_gemini_session_head(head):  # before Claude's: its first line holds a sessionId too
        return FORMAT_GEMINI
    for line in head.split("\n")[:40]:
        entry = decode(line)
        if entry is None:
            continue
        kind = entry.get("type")
        if kind in ("session_meta", "response_item", "event_msg", "turn_context") or "record_type" in entry:
            return "codex-rollout"
        if isinstance(kind, str) and (kind.startswith("thread.") or kind.startswith("turn.") or kind.startswith("item.")):
            return "codex-exec-json"
        if "sessionId" in entry or kind in ("summary", "file-history-snapshot", "queue-operation"):
            return "claude-transcript"
        if "session_id" in entry and kind in ("system", "assistant", "user", "result"):
            return "claude-stream-json"
    raise BadInput(
        "not a transcript benchtape can import",
        file=str(p),
        fix="pass a Claude Code session .jsonl, a Codex rollout-*.jsonl, a stream-json / codex exec --json capture, a Gemini CLI session-*.json[l], or an ATIF trajectory .json",
    )


def open_transcript(path: str | Path, fmt: str | None = None) -> Transcript:
    """Any supported transcript, to stream; `fmt` (an OPENERS key) skips detection."""
    name = fmt or detect_format(path)
    if name not in OPENERS:
        raise BadInput(f"unknown transcript format {name!r}", fix=f"use one of {', '.join(sorted(OPENERS))}")
    return OPENERS[name](path)


def read_transcript(path: str | Path, fmt: str | None = None) -> Imported:
    """Any supported transcript read at once; `fmt` (an OPENERS key) skips detection."""
    return open_transcript(path, fmt).read()


def parser_for(fmt: str) -> _Parser:
    """A fresh parser for a format, to re-derive an import's actions from its stored raw lines."""
    parsers: dict[str, Callable[[], _Parser]] = {
        "claude-transcript": ClaudeDiskParser,
        "claude-stream-json": ClaudeStreamParser,
        "codex-rollout": CodexRolloutParser,
        "codex-exec-json": CodexExecParser,
        "atif": AtifParser,
        FORMAT_GEMINI: GeminiSessionParser,
        "gemini-stream-json": GeminiStreamParser,
        "mini-swe-agent": MiniTrajectoryParser,
        "opencode-json": OpencodeParser,
        "aider-history": AiderHistoryParser,
    }
    if fmt not in parsers:
        raise BadInput(f"unknown transcript format {fmt!r}", fix=f"use one of {', '.join(sorted(parsers))}")
    return parsers[fmt]()
