"""Importing sessions recorded elsewhere: Claude Code session files and Codex rollouts.

An import is the live path fed from files: the same streaming parsers, the lines in
the order they are stored, so re-deriving actions from the stored raw lines
(`reparse`) gives the same actions as the import did. `Imported` carries what the
recorder stores: the actions, every native line read, a sha256 of the bytes read
(to recognise the same import twice), the files, and what the files say about the
session (`meta`).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from adapters.claude_disk import ClaudeDiskParser
from adapters.claude_stream import ClaudeStreamParser
from adapters.codex_exec import CodexExecParser
from adapters.codex_rollout import CodexRolloutParser
from adapters.lines import decode, finish_safely, read_lines
from recorder.errors import BadInput
from recorder.model import Action


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


def _run(parser: _Parser, files: list[Path]) -> tuple[list[Action], list[str], str]:
    """Stream each file (never read whole: a line past MAX_LINE_BYTES is kept cut), hashing as it goes."""
    digest = hashlib.sha256()
    raw: list[str] = []
    actions: list[Action] = []
    for path in files:
        with path.open("rb") as stream:
            for line in read_lines(stream, digest):
                raw.append(line)
                actions.extend(parser.feed(line))
    actions.extend(finish_safely(parser))
    return actions, raw, digest.hexdigest()


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
                if entry and isinstance(entry.get("sessionId"), str):
                    return entry["sessionId"]
                if i > 50:
                    break
    except OSError:
        return None
    return None


def read_claude_transcript(path: str | Path) -> Imported:
    """A Claude Code on-disk session (with its subagent files) as one session's actions.

    Given a subagent's sidechain file, the session it belongs to is imported (when it
    is where Claude Code keeps it), since a subagent is not a session of its own.
    """
    session = _readable(path)
    session = _session_of_sidechain(session) or session  # a subagent file imports as its whole session
    files = claude_session_files(session)
    parser = ClaudeDiskParser()
    actions, raw, sha = _run(parser, files)
    return Imported(actions, raw, sha, [str(f) for f in files], dict(parser.meta))


def read_claude_stream(path: str | Path) -> Imported:
    """A saved `claude -p --output-format stream-json` capture."""
    p = _readable(path)
    parser = ClaudeStreamParser()
    actions, raw, sha = _run(parser, [p])
    meta: dict[str, Any] = {"format": "claude-stream-json", "session_id": parser.session_id}
    for a in actions:
        if a.kind == "environment.reported":
            meta.update(cwd=a.data.get("cwd"), model=a.data.get("model"), version=a.data.get("version"))
            break
    return Imported(actions, raw, sha, [str(p)], meta)


# ---------------------------------------------------------------------- Codex


def read_codex_rollout(path: str | Path) -> Imported:
    """A Codex rollout (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`) as one session's actions."""
    p = _readable(path)
    parser = CodexRolloutParser()
    actions, raw, sha = _run(parser, [p])
    return Imported(actions, raw, sha, [str(p)], dict(parser.meta))


def read_codex_exec(path: str | Path) -> Imported:
    """A saved `codex exec --json` capture."""
    p = _readable(path)
    parser = CodexExecParser()
    actions, raw, sha = _run(parser, [p])
    return Imported(actions, raw, sha, [str(p)], {"format": "codex-exec-json", "session_id": parser.thread_id})


# ---------------------------------------------------------------------- any of them

READERS = {
    "claude-transcript": read_claude_transcript,
    "claude-stream-json": read_claude_stream,
    "codex-rollout": read_codex_rollout,
    "codex-exec-json": read_codex_exec,
}


def detect_format(path: str | Path) -> str:
    """Which recorded format a file is, from its first lines; BadInput for one benchtape cannot read."""
    p = _readable(path)
    with p.open("rb") as fh:
        head = fh.read(65536).decode("utf-8", errors="replace")
    if head.lstrip().startswith("{") and '"messages"' in head and '"projectHash"' in head:
        raise BadInput(
            "gemini-cli sessions are not supported yet",
            file=str(p),
            fix="import Claude Code session files or Codex rollouts; gemini-cli support is a later adapter",
        )
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
        fix="pass a Claude Code session .jsonl, a Codex rollout-*.jsonl, or a stream-json / codex exec --json capture",
    )


def read_transcript(path: str | Path, fmt: str | None = None) -> Imported:
    """Import any supported transcript; `fmt` (a READERS key) skips detection."""
    name = fmt or detect_format(path)
    if name not in READERS:
        raise BadInput(f"unknown transcript format {name!r}", fix=f"use one of {', '.join(sorted(READERS))}")
    return READERS[name](path)


def parser_for(fmt: str) -> _Parser:
    """A fresh parser for a format, to re-derive an import's actions from its stored raw lines."""
    parsers = {
        "claude-transcript": ClaudeDiskParser,
        "claude-stream-json": ClaudeStreamParser,
        "codex-rollout": CodexRolloutParser,
        "codex-exec-json": CodexExecParser,
    }
    if fmt not in parsers:
        raise BadInput(f"unknown transcript format {fmt!r}", fix=f"use one of {', '.join(sorted(parsers))}")
    return parsers[fmt]()
