"""Hostile and malformed transcript lines (issue 15): kept raw with a warning, never fatal,
in all four parsers, the file import and `reparse`; lines split on "\\n" only; a huge line
is read in bounded memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import orjson
import pytest

import benchtape.adapters.lines as lines_module
from benchtape.adapters.claude_disk import ClaudeDiskParser
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.codex_exec import CodexExecParser
from benchtape.adapters.codex_rollout import CodexRolloutParser
from benchtape.adapters.lines import read_lines
from benchtape.adapters.mock import MockParser
from benchtape.adapters.transcripts import read_transcript
from benchtape.recorder.importer import import_files, reparse
from benchtape.store.database import Store

ROOT = Path(__file__).resolve().parents[2]

# format -> (parser, one valid line whose text carries a line separator, the action it gives, the harness)
GOOD = {
    "claude-stream-json": (ClaudeStreamParser, {"type": "result", "subtype": "success", "is_error": False, "result": "done \u2028 here", "session_id": "s"}, "final_output", "claude-code"),
    "claude-transcript": (ClaudeDiskParser, {"type": "user", "message": {"role": "user", "content": "hi \u2028 there"}, "uuid": "u1", "sessionId": "s", "timestamp": "2025-01-01T00:00:00Z"}, "message.user", "claude-code"),
    "codex-exec-json": (CodexExecParser, {"type": "item.completed", "item": {"id": "i1", "type": "agent_message", "text": "hi \u2029 there"}}, "message.assistant", "codex"),
    "codex-rollout": (CodexRolloutParser, {"type": "event_msg", "timestamp": "2025-01-01T00:00:00Z", "payload": {"type": "user_message", "message": "hi \x85 there"}}, "message.user", "codex"),
}
ODD_TYPES = [["assistant"], {"a": 1}, 7, None, True]


def line(obj: object) -> str:
    return orjson.dumps(obj).decode()  # orjson writes U+2028/U+2029/U+0085 raw, as the CLIs do


@pytest.mark.parametrize("fmt", sorted(GOOD))
@pytest.mark.parametrize("odd", ODD_TYPES, ids=lambda v: type(v).__name__)
def test_a_type_of_the_wrong_shape_is_a_warning_and_the_next_line_still_parses(fmt, odd):
    parser_cls, good, kind, _ = GOOD[fmt]
    parser = parser_cls()
    bad = {**good, "type": odd}
    actions = parser.feed(line(bad)) + parser.feed(line(good)) + parser.finish()
    warnings = [a for a in actions if a.kind == "adapter.warning"]
    assert len(warnings) == 1 and warnings[0].data["line"] == line(bad)
    if not isinstance(odd, (str, type(None), bool, int)):
        assert f"its `type` is a {'list' if isinstance(odd, list) else 'map'}, not a string" in warnings[0].data["what"]
    assert kind in [a.kind for a in actions]


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_line_separators_inside_json_strings_do_not_split_the_line(fmt):
    parser_cls, good, kind, _ = GOOD[fmt]
    actions = parser_cls().feed(line(good))
    assert [a.kind for a in actions if a.kind != "metrics"] == [kind]
    assert any(sep in actions[0].data["text"] for sep in ("\u2028", "\u2029", "\x85"))


def test_mock_parser_never_raises():
    parser = MockParser()
    for odd in ('{"kind": ["x"]}', '{"kind": "message.user", "data": [1]}', '{"kind": "message.user", "thread": 7}', "[1]", "nope"):
        assert [a.kind for a in parser.feed(odd)] == ["adapter.warning"]


def transcript(tmp_path: Path, fmt: str, *extra: str) -> Path:
    _, good, _, _ = GOOD[fmt]
    p = tmp_path / f"{fmt}.jsonl"
    p.write_bytes(("\n".join([line(good), *extra, line({**good, "type": ["x"]}), line(good)]) + "\n").encode())
    return p


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_import_and_reparse_keep_odd_lines_as_warnings(tmp_path, fmt):
    _, good, kind, harness = GOOD[fmt]
    path = transcript(tmp_path, fmt, "{not json", "x\u2028y")
    imported = read_transcript(path, fmt)
    assert len(imported.raw) == 5  # split on "\n" only: the separators stayed inside their lines
    assert sum(a.kind == "adapter.warning" for a in imported.actions) == 3
    store = Store(tmp_path / "t.db")
    [result] = import_files(store, harness, [path])
    new = reparse(store, result.session_id)
    kinds = lambda sid: [a.kind for a in store.actions(sid)]  # noqa: E731
    assert kinds(new).count("adapter.warning") == 3
    assert kinds(new).count(kind) == kinds(result.session_id).count(kind) >= 1


def test_a_line_longer_than_the_bound_is_cut_hashed_whole_and_the_next_line_read(tmp_path, monkeypatch):
    monkeypatch.setattr(lines_module, "MAX_LINE_BYTES", 1 << 20)
    _, good, kind, _ = GOOD["claude-stream-json"]
    huge = line({**good, "result": "x" * (3 << 20)})
    path = tmp_path / "s.jsonl"
    path.write_bytes((huge + "\n" + line(good) + "\n").encode())
    imported = read_transcript(path, "claude-stream-json")
    assert imported.raw[0].endswith(f"…[benchtape: a line of {len(huge)} bytes, cut to its first {lines_module.CUT_HEAD}]")
    assert len(imported.raw[0]) < lines_module.CUT_HEAD + 200 and imported.raw[1] == line(good)
    assert imported.sha256 == __import__("hashlib").sha256(path.read_bytes()).hexdigest()
    [warn] = [a for a in imported.actions if a.kind == "adapter.warning"]
    assert "longer than" in warn.data["what"] and kind in [a.kind for a in imported.actions]
    assert [a.kind for a in ClaudeStreamParser().feed(huge)] == ["adapter.warning"]  # a live line that long is not parsed either


def test_read_lines_splits_on_newline_only():
    import io

    data = "a\u2028b\n\nc\x85d\r\ne".encode()
    assert list(read_lines(io.BytesIO(data))) == ["a\u2028b", "c\x85d", "e"]


def test_importing_a_60_mb_line_stays_in_bounded_memory(tmp_path):
    """Issue 15 measured ~440 MB for this; a line is now never held whole."""
    _, good, _, _ = GOOD["claude-stream-json"]
    path = tmp_path / "big.jsonl"
    with path.open("wb") as f:
        f.write(line(good).encode() + b"\n")
        f.write(b'{"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": "')
        for _ in range(60):
            f.write(b"x" * (1 << 20))
        f.write(b'"}]}}\n')
    code = (
        "import resource, sys; from benchtape.adapters.transcripts import read_transcript; "
        f"imp = read_transcript({str(path)!r}, 'claude-stream-json'); "
        # VmHWM, not ru_maxrss: Linux carries ru_maxrss across exec from the forked parent (the
        # pytest worker), so a worker that had grown showed its own size as this child's peak
        "hwm = next(int(l.split()[1]) for l in open('/proc/self/status') if l.startswith('VmHWM:')); "
        "print(len(imp.raw), sum(a.kind == 'adapter.warning' for a in imp.actions), hwm // 1024)"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    raw, warnings, peak_mb = map(int, done.stdout.split())
    assert (raw, warnings) == (2, 1), done.stderr
    assert peak_mb < 150, f"peak {peak_mb} MB"


@pytest.mark.parametrize("fmt", sorted(GOOD))
def test_a_transcript_cut_in_the_middle_of_its_last_line_is_a_truncated_session(tmp_path, fmt):
    """A writer killed mid-line leaves a file that ends inside a JSON line: the session is cut
    short, so it imports as `truncated` (its verdicts count as errored, never as passed), said
    in a warning; the same lines whole, or a last line whole without its newline, are `ok`."""
    _, good, _, harness = GOOD[fmt]
    store = Store(tmp_path / "t.db")
    whole = line(good)
    cases = {"cut": whole + "\n" + whole[: len(whole) // 2], "whole": whole + "\n" + whole + "\n", "no-newline": whole + "\n" + whole}
    status = {}
    for name, text in cases.items():
        path = tmp_path / f"{name}.jsonl"
        path.write_text(text.replace("\u2028", f"{name}\u2028"))  # distinct content: each is a session of its own
        [result] = import_files(store, harness, [path])
        finished = [a for a in store.actions(result.session_id) if a.kind == "session.finished"][-1]
        status[name] = (finished.data["status"], finished.data.get("truncated", False))
        if name == "cut":
            assert any("ends in the middle of a line" in a.data["what"] for a in store.actions(result.session_id) if a.kind == "adapter.warning")
            assert store.load_session(reparse(store, result.session_id)).status == "truncated"  # a reparse keeps how it ended
    assert status == {"cut": ("truncated", True), "whole": ("ok", False), "no-newline": ("ok", False)}
