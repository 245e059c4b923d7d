"""Raw lines are stored compressed yet exactly, each live line durable (with its actions, in one
transaction) when its append returns; imports stream; specs are stored once; an existing store
is carried forward with its raw lines and verdicts intact."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlite_utils
from importkit import lines_failing_at
from realdatakit import find_realdata

from benchtape.adapters.transcripts import open_transcript
from benchtape.core.model import Action
from benchtape.core.results import Result
from benchtape.recorder.importer import import_files, reparse
from benchtape.store import database as store_module
from benchtape.store.database import MIGRATIONS, Store

ROOT = Path(__file__).resolve().parents[2]
REALDATA = find_realdata() or ROOT / "tests" / "realdata"
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason="real transcripts not found")


@pytest.fixture()
def store(tmp_path):
    s = Store(tmp_path / "r.db")
    yield s
    s.close()


def session(store: Store) -> str:
    return store.new_session(store.new_run("run"), "sc")


ODD = ['{"a": 1}', "", "  spaces  ", "tab\there", "carriage\rreturn", "two\nlines", "sep\u2028inside\u2029json\u0085", "emoji 🐍 and 中文", "lone \udcff surrogate", "x" * 200_000]


def test_raw_lines_come_back_exactly(store):
    sid = session(store)
    for n, text in enumerate(ODD, start=1):
        store.append_line(sid, n, text, [])
    store.append_raw(sid, [(20, "after a gap"), (21, "batch"), (22, "of\nthree")])
    assert store.raw_lines(sid) == [*ODD, "after a gap", "batch", "of\nthree"]
    assert Store(store.path).raw_lines(sid) == [*ODD, "after a gap", "batch", "of\nthree"]  # another connection


def test_a_line_and_its_actions_commit_together_or_not_at_all(store, monkeypatch):
    sid = session(store)
    store.append_line(sid, 1, "one", [Action("message.assistant", {"text": "1"})])

    def broken(*args, **kwargs):
        raise OSError("disk full")

    with monkeypatch.context() as m:
        m.setattr(store, "_insert_encoded", broken)  # the actions fail after the line was written
        with pytest.raises(OSError):
            store.append_line(sid, 2, "two", [Action("message.assistant", {"text": "2"})])
    assert store.raw_lines(sid) == ["one"] and len(store.actions(sid)) == 1
    # the compressor had moved on past the lost line: the next line starts a fresh stream
    store.append_line(sid, 2, "two again", [Action("message.assistant", {"text": "2"})])
    assert store.raw_lines(sid) == ["one", "two again"]
    assert [a.seq for a in store.actions(sid)] == [1, 2]
    assert [f for (f,) in store.db.conn.execute("SELECT fresh FROM raw WHERE session_id = ? ORDER BY line_no", [sid])] == [1, 1]


def test_a_redactor_sees_raw_lines_before_compression(store):
    sid = session(store)
    store.set_redactor(sid, lambda t: t.replace("s3cret", "[REDACTED]"))
    store.append_line(sid, 1, '{"key": "s3cret"}', [Action("message.user", {"text": "s3cret"})])
    assert store.raw_lines(sid) == ['{"key": "[REDACTED]"}'] and store.actions(sid)[0].data["text"] == "[REDACTED]"


RECORDER = """
import sys
sys.path.insert(0, sys.argv[2])
from benchtape.core.model import Action
from benchtape.store.database import Store
store = Store(sys.argv[1])
sid = store.new_session(store.new_run("run"), "sc")
print(sid, flush=True)
n = 0
while True:
    n += 1
    store.append_line(sid, n, '{"line": %d, "pad": "%s"}' % (n, "y" * (n % 300)), [Action("message.assistant", {"text": str(n)})])
    print(n, flush=True)
"""


def test_every_line_whose_append_returned_survives_a_kill(tmp_path):
    path = tmp_path / "k.db"
    Store(path).close()
    proc = subprocess.Popen([sys.executable, "-c", RECORDER, str(path), str(ROOT)], stdout=subprocess.PIPE, text=True)
    sid = proc.stdout.readline().strip()
    returned = 0
    deadline = time.monotonic() + 60
    while returned < 400 and time.monotonic() < deadline:
        returned = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store = Store(path)
    lines = store.raw_lines(sid)
    assert len(lines) >= returned
    assert lines == [f'{{"line": {n}, "pad": "{"y" * (n % 300)}"}}' for n in range(1, len(lines) + 1)]
    assert [a.data["text"] for a in store.actions(sid)] == [str(n) for n in range(1, len(lines) + 1)]
    assert store.db.conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


@needs_realdata
def test_imported_raw_lines_are_the_files_lines_and_much_smaller(store):
    files = sorted((REALDATA / "claude-transcripts").glob("*.jsonl")) + sorted((REALDATA / "codex-rollout").glob("*.jsonl"))
    text_bytes = 0
    for f in files:
        [r] = import_files(store, "codex" if "codex" in str(f) else "claude-code", [f])
        lines = [line for line, _ in open_transcript(f).lines()]
        assert store.raw_lines(r.session_id) == lines
        text_bytes += sum(len(line.encode()) for line in lines)
    stored = store.db.conn.execute("SELECT SUM(length(data)) FROM raw").fetchone()[0]
    assert stored < text_bytes / 3


@needs_realdata
def test_an_import_redacts_the_one_secret_line_of_a_batch_and_keeps_the_others_exact(store, tmp_path):
    """An import probes each ~RAW_CHUNK_BYTES batch once: a batch holding one credential is redacted line
    by line, so that line loses the credential (in raw lines and actions) and every other line,
    clean or not, is stored exactly as read."""
    from benchtape.core.redact import shapes_only

    token = "ghp_R8dK2mXq7LpT4vNz9WcB3yHs6JfA1uEo5GiQ"
    f = REALDATA / "claude-transcripts" / "spotter__tool-heavy-webfetch-websearch__v2.1.38.jsonl"
    lines = [line for line in f.read_text().splitlines() if line.strip()]
    middle = next(i for i in range(len(lines) // 2, len(lines)) if '"type":"assistant"' in lines[i] and '"text":"' in lines[i])
    lines[middle] = lines[middle].replace('"text":"', f'"text":"pushed with {token} ', 1)
    planted = tmp_path / "planted.jsonl"
    planted.write_text("\n".join(lines) + "\n")
    [r] = import_files(store, "claude-code", [planted])
    store.db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    assert token.encode() not in (tmp_path / "r.db").read_bytes()
    raw = store.raw_lines(r.session_id)
    assert raw == [shapes_only().exact(line) if i == middle else line for i, line in enumerate(lines)]
    assert "pushed with [REDACTED]" in raw[middle]
    assert any("pushed with [REDACTED]" in str(a.data) for a in store.actions(r.session_id))


@needs_realdata
def test_reparse_of_an_import_is_exact(store):
    f = REALDATA / "claude-transcripts" / "spotter__subagent-task-agent_progress__v2.1.38.jsonl"
    [r] = import_files(store, "claude-code", [f])
    again = reparse(store, r.session_id)
    strip = lambda sid: [(a.kind, a.thread, a.data) for a in store.actions(sid) if a.kind != "session.started"]  # noqa: E731
    assert strip(again) == strip(r.session_id)
    assert store.raw_lines(again) == store.raw_lines(r.session_id)


def _many_batches(tmp_path: Path, secret_at: int | None = None) -> tuple[Path, list[str]]:
    """A codex exec transcript of ~6 import batches (RAW_CHUNK_BYTES each), one message a line."""
    pad = "lorem ipsum dolor " * 200  # 3.6 kB a line, so ~73 lines a batch
    texts = [f"{n} {pad}" + (" pushed with ghp_R8dK2mXq7LpT4vNz9WcB3yHs6JfA1uEo5GiQ" if n == secret_at else "") for n in range(440)]
    f = tmp_path / "many.jsonl"
    f.write_text("".join(json.dumps({"type": "item.completed", "item": {"id": f"i{n}", "type": "agent_message", "text": t}}) + "\n" for n, t in enumerate(texts)))
    return f, texts


def test_an_import_of_many_batches_keeps_every_line_and_action_in_order(store, tmp_path):
    """Batches are packed on a worker one batch ahead of being written: what is stored is still
    the file's lines in order, its actions at consecutive seqs, and a secret in a middle batch
    is redacted in both while the lines around it stay exact."""
    assert store_module.RAW_CHUNK_BYTES * 5 < 440 * 3600
    f, texts = _many_batches(tmp_path, secret_at=250)
    [r] = import_files(store, "codex", [f])
    raw = store.raw_lines(r.session_id)
    lines = f.read_text().splitlines()
    assert raw[:250] == lines[:250] and raw[251:] == lines[251:]
    assert "ghp_" not in raw[250] and "pushed with [REDACTED]" in raw[250]
    chunks = store.db.conn.execute("SELECT line_no, lines FROM raw WHERE session_id = ? ORDER BY line_no", [r.session_id]).fetchall()
    assert len(chunks) >= 5 and [n for n, _ in chunks] == [1 + sum(c for _, c in chunks[:i]) for i in range(len(chunks))]
    said = [a.data["text"] for a in store.actions(r.session_id) if a.kind == "message.assistant"]
    assert said[:250] == texts[:250] and said[251:] == texts[251:]
    assert said[250].endswith("pushed with [REDACTED]")
    seqs = [row[0] for row in store.db.conn.execute("SELECT seq FROM actions WHERE session_id = ? ORDER BY seq", [r.session_id])]
    assert seqs == list(range(1, len(seqs) + 1))


@pytest.mark.parametrize("batches", ["one", "many"])
def test_a_file_that_fails_mid_import_leaves_nothing_of_itself(store, tmp_path, monkeypatch, batches):
    """A file failing part-way leaves nothing (with many batches, earlier ones were already
    written inside the import's transaction: the rollback takes them too, and the packing
    thread is gone); the same file then imports cleanly."""
    import threading

    if batches == "one":
        f = tmp_path / "exec.jsonl"
        f.write_text("".join(f'{{"type": "item.completed", "item": {{"id": "i{i}", "type": "agent_message", "text": "hi"}}}}\n' for i in range(400)))
    else:
        f, _ = _many_batches(tmp_path)
    from benchtape.adapters import transcripts

    with monkeypatch.context() as m:
        m.setattr(transcripts.Transcript, "lines", lines_failing_at(300 if batches == "one" else 400))
        with pytest.raises(OSError):
            import_files(store, "codex", [f])
    conn = store.db.conn
    assert [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "sessions", "actions", "raw")] == [0, 0, 0, 0]
    assert not [t for t in threading.enumerate() if t.name.startswith("benchtape-pack")]
    [r] = import_files(store, "codex", [f])
    assert store.raw_lines(r.session_id) == f.read_text().splitlines()


def test_a_large_file_hashed_while_it_is_written_is_still_imported_once(store, tmp_path, monkeypatch):
    """A file of LARGE_BYTES or more is hashed on a thread while its batches are written;
    the same content again is found (from the batch its hash is known by, or at the end) and
    its transaction rolls back: no second session, run, action or raw row."""
    from benchtape.recorder import importer

    monkeypatch.setattr(importer, "LARGE_BYTES", 0)
    f, _ = _many_batches(tmp_path)
    [first] = import_files(store, "codex", [f])
    conn = store.db.conn
    counts = lambda: [conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in ("runs", "sessions", "actions", "raw")]  # noqa: E731
    before = counts()
    [again] = import_files(store, "codex", [f])
    assert (again.already, again.session_id, again.actions) == (True, first.session_id, first.actions)
    assert counts() == before and before[:2] == [1, 1]
    f.write_text(f.read_text() + '{"type": "item.completed", "item": {"id": "last", "type": "agent_message", "text": "one more"}}\n')
    [grown] = import_files(store, "codex", [f])
    assert not grown.already and grown.actions == first.actions + 1
    assert counts()[:2] == [2, 2]


def test_the_same_file_imported_twice_at_once_is_one_session(tmp_path):
    """Two imports of one file racing (two connections, as two `benchtape import`s are): the
    check for a copy already stored runs again inside the write transaction, so the one that
    gets the lock second finds the first's session instead of writing a second."""
    import threading

    f, _ = _many_batches(tmp_path)
    stores = [Store(tmp_path / "race.db") for _ in range(2)]
    start = threading.Barrier(2)
    results: list = []

    def one(store: Store) -> None:
        start.wait()
        results.extend(import_files(store, "codex", [f]))

    threads = [threading.Thread(target=one, args=(s,)) for s in stores]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(r.already for r in results) == [False, True]
    assert len({r.session_id for r in results}) == 1
    assert stores[0].db.conn.execute("SELECT COUNT(*) FROM sessions").fetchone()[0] == 1
    for s in stores:
        s.close()


def test_a_line_holding_unicode_separators_is_one_line(store, tmp_path):
    f = tmp_path / "exec.jsonl"
    f.write_text('{"type": "thread.started", "thread_id": "t"}\n{"type": "item.completed", "item": {"id": "a", "type": "agent_message", "text": "one\u2028two\u0085three"}}\n', encoding="utf-8")
    [r] = import_files(store, "codex", [f])
    assert len(store.raw_lines(r.session_id)) == 2
    assert any(a.data.get("text") == "one\u2028two\u0085three" for a in store.actions(r.session_id))


def test_each_spec_is_stored_once(store):
    gid = store.new_grading("regrade", checkset_sha256="c", catalog_version="1")
    spec = {"type": "contains", "value": "done", "metric": "says-done"}
    sids = [session(store) for _ in range(5)]
    store.add_verdicts_many(gid, [(sid, [{"check_path": "checks[0]", "type": "contains", "spec": spec, "spec_sha256": "h", "result": Result.of(True)}]) for sid in sids])
    again = store.new_grading("regrade", checkset_sha256="c", catalog_version="1")
    store.add_verdicts(again, sids[0], [{"check_path": "checks[0]", "type": "contains", "spec": spec, "spec_sha256": "h", "result": Result.of(False)}])
    conn = store.db.conn
    assert conn.execute("SELECT COUNT(*) FROM specs").fetchone()[0] == 1
    assert [v["spec"] for v in store.verdicts(grading_id=gid)] == [spec] * 5
    assert conn.execute("SELECT spec FROM verdicts WHERE grading_id = ?", [again]).fetchone()[0] == '{"type":"contains","value":"done","metric":"says-done"}'


def test_a_first_release_store_keeps_its_raw_lines_and_verdicts(tmp_path):
    path = tmp_path / "old.db"
    db = sqlite_utils.Database(path)
    store_module.MIGRATIONS[0](db)
    db.execute("PRAGMA user_version = 1")
    db.execute("INSERT INTO runs (id, kind, started_at) VALUES ('R1', 'run', 0)")
    for s in ("S1", "S2"):
        db.execute("INSERT INTO sessions (id, run_id, scenario, started_at) VALUES (?, 'R1', 'sc', 0)", [s])
        db.conn.executemany("INSERT INTO raw (session_id, line_no, text) VALUES (?, ?, ?)", [(s, n, f'{{"{s}": {n}}}') for n in range(1, 3001)])
    db.execute("INSERT INTO gradings (id, source, created_at) VALUES ('G1', 'live', 0)")
    rows = [("G1", s, f"checks[{i}]", "contains", None, f'{{"type": "contains", "value": "{i}"}}', f"h{i}", "PASS", 1, 1.0, None, "{}", 0, 0.0) for s in ("S1", "S2") for i in range(3)]
    db.conn.executemany("INSERT INTO verdicts VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)", rows)
    db.conn.commit()
    db.conn.close()
    s = Store(path)
    assert s.db.conn.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS)
    assert s.raw_lines("S1") == [f'{{"S1": {n}}}' for n in range(1, 3001)]
    assert s.raw_lines("S2") == [f'{{"S2": {n}}}' for n in range(1, 3001)]
    got = sorted((v["session_id"], v["check_path"], v["spec"]["value"], v["spec_sha256"]) for v in s.verdicts(grading_id="G1"))
    assert got == sorted((r[1], r[2], str(i), f"h{i}") for i, r in zip([0, 1, 2] * 2, rows))
    assert s.db.conn.execute("SELECT COUNT(*) FROM specs").fetchone()[0] == 3
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        s.db.conn.execute("INSERT OR REPLACE INTO raw SELECT * FROM raw LIMIT 1")


def test_session_summary_view_browses_without_benchtape(tmp_path):
    path = tmp_path / "v.db"
    s = Store(path)
    run = s.new_run("run", bench_path="b.yaml")
    done = s.new_session(run, "fixes-bug", harness="mock", model="m1")
    s.append(done, [Action("session.started", {"scenario": "fixes-bug"}), Action("metrics", {"cost_usd": 0.5, "tokens_in": 10}), Action("metrics", {"cost_usd": 0.75, "tokens_out": 5}), Action("session.finished", {"status": "timeout", "wall_ms": 1500.0}, at=1_700_000_000.25)])
    running = s.new_session(run, "fixes-bug", attempt=2)
    row = lambda v: {"check_path": f"checks[{v}]", "type": "contains", "spec": {"v": v}, "spec_sha256": str(v), "result": Result.of(v != 1)}  # noqa: E731
    first = s.new_grading("live", checkset_sha256="c", catalog_version="1")
    s.add_verdicts(first, done, [row(0), row(1)])
    time.sleep(0.01)
    latest = s.new_grading("regrade", checkset_sha256="c", catalog_version="1")
    s.add_verdicts(latest, done, [row(0), row(1), row(2)])
    s.close()
    conn = sqlite3.connect(path)  # any SQLite client: the view needs no benchtape function
    conn.row_factory = sqlite3.Row
    rows = {r["session_id"]: dict(r) for r in conn.execute("SELECT * FROM session_summary")}
    assert {k: rows[done][k] for k in ("run_id", "bench", "scenario", "attempt", "harness", "model", "status", "cost_usd", "tokens_in", "tokens_out", "duration_ms", "grading_id", "pass", "fail", "error", "na")} == {
        "run_id": run, "bench": "b.yaml", "scenario": "fixes-bug", "attempt": 1, "harness": "mock", "model": "m1", "status": "timeout",
        "cost_usd": 0.75, "tokens_in": 10, "tokens_out": 5, "duration_ms": 1500.0, "grading_id": latest, "pass": 2, "fail": 1, "error": 0, "na": 0,
    }  # fmt: skip
    assert rows[done]["finished_at"] == "2023-11-14T22:13:20.250Z" and rows[done]["started_at"].endswith("Z")
    assert rows[running]["status"] == "unfinished" and rows[running]["grading_id"] is None and rows[running]["pass"] == 0


def test_append_line_probes_the_line_and_its_actions_once_and_redacts_only_what_holds_a_secret(store):
    """One probe covers the line and its actions; when it finds a secret, each of them goes
    through the redactor, which changes only the one that holds it."""
    from benchtape.core.redact import redactor

    sid = session(store)
    store.set_redactor(sid, redactor(["hunter2-s3cret-value"]))
    store.append_line(sid, 1, '{"plain": "line"}', [Action("message.user", {"text": "pw hunter2-s3cret-value"})])
    store.append_line(sid, 2, '{"pw": "hunter2-s3cret-value"}', [Action("message.user", {"text": "plain action é"})])
    store.append_line(sid, 3, '{"plain": "é"}', [Action("message.user", {"text": "plain"})])
    assert store.raw_lines(sid) == ['{"plain": "line"}', '{"pw": "[REDACTED]"}', '{"plain": "é"}']
    assert [a.data["text"] for a in store.actions(sid)] == ["pw [REDACTED]", "plain action é", "plain"]
    stored = " ".join(t for (t,) in store.db.conn.execute("SELECT data FROM actions WHERE session_id = ?", [sid]))
    assert "hunter2" not in stored
