"""An import keeps what the transcript says about when and how long: the session starts at
its first timestamp and finishes at its last (the wall clock between), and its metrics carry
the cost and duration the transcript carries (Claude's `turn_duration` entries, 1.x `costUSD`,
2.1.3xx `cost-state`; Codex's turn durations). Before, an import started and finished when it
was imported, and most Claude transcripts had tokens but no duration."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

from benchtape.recorder.importer import import_files
from benchtape.store.database import Store

REALDATA = Path(__file__).resolve().parents[1] / "realdata"
TRANSCRIPT = REALDATA / "claude-transcripts" / "codemie__session-9eda1058__summaries-interrupt__v2.1.4.jsonl"


def _epoch(stamp: str) -> float:
    return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()


def _stamps(path: Path) -> list[float]:
    out = []
    for line in path.read_text().splitlines():
        try:
            doc = json.loads(line)
        except ValueError:
            continue
        if isinstance(doc, dict) and isinstance(doc.get("timestamp"), str):
            out.append(_epoch(doc["timestamp"]))
    return out


def _imported(folder: Path, harness: str, path: Path):
    folder.mkdir(exist_ok=True)
    store = Store(folder / "s.db")
    [result] = import_files(store, harness, [path])
    return store, result.session_id


def test_a_claude_transcript_keeps_its_times_and_its_turn_durations(tmp_path):
    store, sid = _imported(tmp_path, "claude-code", TRANSCRIPT)
    actions = store.actions(sid)
    started, finished = actions[0], actions[-1]
    stamps = _stamps(TRANSCRIPT)
    assert started.kind == "session.started" and abs(started.at - min(stamps)) < 0.01
    assert finished.kind == "session.finished" and abs(finished.at - max(stamps)) < 0.01
    assert abs(finished.data["wall_ms"] - (max(stamps) - min(stamps)) * 1000) < 10
    turns = [json.loads(line)["durationMs"] for line in TRANSCRIPT.read_text().splitlines() if '"subtype":"turn_duration"' in line]
    session = store.load_session(sid)
    assert turns and session.metrics.duration_ms == sum(turns) and session.metrics.latency_ms == sum(turns)
    assert session.metrics.tokens_in and session.metrics.cost_usd is None  # the file carries tokens, no cost: unknown, never zero


def test_claude_costs_per_entry_and_a_cost_state_are_the_sessions_cost(tmp_path):
    def entry(i: int, cost: float | None = None, **more) -> str:
        doc = {"type": "assistant", "uuid": f"u{i}", "sessionId": "s", "timestamp": f"2026-01-01T00:00:0{i}.000Z",
               "message": {"id": f"m{i}", "role": "assistant", "model": "claude-x", "content": [{"type": "text", "text": "hi"}], "usage": {"input_tokens": 10, "output_tokens": 2}}, **more}
        if cost is not None:
            doc["costUSD"] = cost
        return json.dumps(doc)

    first = tmp_path / "old.jsonl"
    first.write_text("\n".join([json.dumps({"type": "user", "uuid": "u0", "sessionId": "s", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "go"}}), entry(1, 0.25), entry(2, 0.5)]) + "\n")
    store, sid = _imported(tmp_path / "a", "claude-code", first)
    session = store.load_session(sid)
    assert session.metrics.cost_usd == 0.75 and store.actions(sid)[-1].data["wall_ms"] == 2000.0
    second = tmp_path / "new.jsonl"
    second.write_text(first.read_text() + json.dumps({"type": "cost-state", "totalCostUSD": 1.5, "timestamp": "2026-01-01T00:00:03.000Z"}) + "\n")
    store, sid = _imported(tmp_path / "b", "claude-code", second)
    assert store.load_session(sid).metrics.cost_usd == 1.5  # the total the tool kept wins


def test_a_codex_rollout_keeps_its_times(tmp_path):
    [rollout] = [p for p in (REALDATA / "codex-rollout").glob("*.jsonl") if "SYNTHETIC" not in p.name]
    store, sid = _imported(tmp_path, "codex", rollout)
    actions = store.actions(sid)
    stamps = _stamps(rollout)
    assert abs(actions[0].at - min(stamps)) < 0.01 and abs(actions[-1].at - max(stamps)) < 0.01
    assert actions[-1].data["wall_ms"] > 0
