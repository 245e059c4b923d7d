"""A saved stdout capture holding several runs one after another (two `claude -p … stream-json`
runs appended to one file, two `codex exec --json` runs) imports as one session per run."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from adapterkit import MISSING, REALDATA
from typer.testing import CliRunner

from benchtape.cli import build
from benchtape.store.database import Store

pytestmark = pytest.mark.skipif(REALDATA is None, reason=MISSING)
app = build()


def _import(db: Path, harness: str, *paths: Path) -> list[str]:
    out = CliRunner().invoke(app, ["import", harness, *map(str, paths), "--db", str(db)], catch_exceptions=False)
    assert out.exit_code == 0, out.stdout + out.stderr
    return out.stdout.splitlines()


def _session_ids(path: Path, key: str) -> list[str]:
    seen: list[str] = []
    for line in path.read_text().splitlines():
        if line.strip():
            value = orjson.loads(line).get(key)
            if isinstance(value, str) and value not in seen:
                seen.append(value)
    return seen


@pytest.mark.parametrize(
    ("harness", "first", "second", "key"),
    [
        ("claude-code", "claude-stream-json/obers_ui__minimal-text-only__v2.1.72.jsonl", "claude-stream-json/obers_ui__tools-thinking-no-subagent__v2.1.72.jsonl", "session_id"),
        ("codex", "codex-exec-json/agentcmd__stream-output-1__cli-0.46.0.jsonl", "codex-exec-json/agentcmd__stream-output-2__cli-0.46.0.jsonl", "thread_id"),
    ],
)
def test_two_runs_in_one_capture_import_as_two_sessions(tmp_path, harness, first, second, key):
    a, b = REALDATA / first, REALDATA / second
    both = tmp_path / "both.jsonl"
    both.write_bytes(a.read_bytes() + b.read_bytes())
    alone = _import(tmp_path / "alone.db", harness, a, b)
    together = _import(tmp_path / "both.db", harness, both)
    assert len(alone) == 2 and len(together) == 2, together
    separate, joined = Store(tmp_path / "alone.db"), Store(tmp_path / "both.db")
    rows = list(joined.session_rows())
    assert [r.scenario for r in rows] == [*_session_ids(a, key), *_session_ids(b, key)]
    for mine, theirs in zip(rows, separate.session_rows()):
        kinds = [x.kind for x in joined.actions(mine.id)]
        assert kinds == [x.kind for x in separate.actions(theirs.id)]  # each session exactly as if imported on its own
        assert len(joined.raw_lines(mine.id)) == len(separate.raw_lines(theirs.id))
    again = _import(tmp_path / "both.db", harness, both)
    assert all("already imported" in line for line in again) and len(list(joined.session_rows())) == 2


def test_a_capture_of_one_run_is_one_session_as_before(tmp_path):
    one = REALDATA / "claude-stream-json/obers_ui__agent-subagent__api-error-result__v2.1.72.jsonl"
    assert len(_import(tmp_path / "d.db", "claude-code", one)) == 1


def test_a_session_the_tool_ended_in_error_imports_as_errored_and_its_turns_are_told_apart(tmp_path):
    """Issue 44: a real capture that ended in "API Error … (EAI_AGAIN)" (result is_error: true) showed
    `status ok`, and its turns read 14 in the metrics action but 1 in the built-in metrics."""
    one = REALDATA / "claude-stream-json/obers_ui__agent-subagent__api-error-result__v2.1.72.jsonl"
    db = tmp_path / "d.db"
    [line] = _import(db, "claude-code", one)
    sid = line.split()[0]
    session = Store(db).load_session(sid)
    assert session.status == "error" and session.metrics.turns == 14
    shown = CliRunner().invoke(app, ["show", sid, "--db", str(db)], catch_exceptions=False)
    assert "status error" in shown.stdout
    assert "turns  1  (exchanges: the prompt and each follow-up; the tool reported 14 model turns)" in shown.stdout
