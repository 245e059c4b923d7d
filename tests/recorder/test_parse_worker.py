"""A large transcript is parsed in a forked child while the import writes (benchtape.recorder.parse_worker):
what is stored is exactly what parsing it here stores, a secret in one of its batches is
redacted, and whatever ends the child or the import early leaves nothing written and no
process behind."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from importkit import lines_failing_at
from realdatakit import find_realdata

from benchtape.adapters import transcripts
from benchtape.recorder import importer
from benchtape.recorder.importer import import_files
from benchtape.recorder.parse_worker import ParseFailed
from benchtape.store.database import Store

ROOT = Path(__file__).resolve().parents[2]
REALDATA = find_realdata() or ROOT / "tests" / "realdata"
needs_realdata = pytest.mark.skipif(not REALDATA.is_dir(), reason="real transcripts not found")
TABLES = ("runs", "sessions", "actions", "raw")


class Forks(list):
    """The children forked (pids), how each ended (`ended`: pid -> wait status, as the parent
    reaped it), and the signals the parent sent (`kills`)."""

    def __init__(self) -> None:
        super().__init__()
        self.ended: dict[int, int] = {}
        self.kills: list[tuple[int, int]] = []


@pytest.fixture()
def forks(monkeypatch) -> Forks:
    """Every transcript counts as large (parsed in a child); each fork, reap and kill is noted."""
    seen = Forks()
    fork, waitpid, kill, parent = os.fork, os.waitpid, os.kill, os.getpid()

    def forked() -> int:
        pid = fork()
        if pid:
            seen.append(pid)
        return pid

    def waited(pid: int, options: int) -> tuple[int, int]:
        done, status = waitpid(pid, options)
        if done in seen:
            seen.ended[done] = status
        return done, status

    def killed(pid: int, number: int) -> None:
        if os.getpid() == parent:
            seen.kills.append((pid, number))
        kill(pid, number)

    monkeypatch.setattr(importer, "LARGE_BYTES", 0)
    monkeypatch.setattr(os, "fork", forked)
    monkeypatch.setattr(os, "waitpid", waited)
    monkeypatch.setattr(os, "kill", killed)
    return seen


def _slowly(seconds: float):
    """`Transcript.lines`, each line taking `seconds` (a child that would parse for a while)."""
    real = transcripts.Transcript.lines

    def slow(self):
        for item in real(self):
            time.sleep(seconds)
            yield item

    return slow


def _counts(store: Store) -> list[int]:
    return [store.db.conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0] for t in TABLES]


def _reaped(children: list[int]) -> bool:
    """Whether every forked child has ended and been waited for (none left running, no zombie)."""
    for pid in children:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def _stored(store: Store, session_id: str) -> tuple[list, list[str]]:
    """A session's actions and raw lines: what two imports must agree on (all but the seq, and the
    time of the bookends, which the store stamps as it writes them)."""
    bookends = ("session.started", "session.finished")
    return [(a.kind, a.thread, None if a.kind in bookends else a.at, a.data) for a in store.actions(session_id)], store.raw_lines(session_id)


def _many_batches(tmp_path: Path, secret_at: int | None = None) -> Path:
    """A codex exec transcript of ~6 import batches, one message a line (3.6 kB each)."""
    pad = "lorem ipsum dolor " * 200
    texts = [f"{n} {pad}" + (" pushed with ghp_R8dK2mXq7LpT4vNz9WcB3yHs6JfA1uEo5GiQ" if n == secret_at else "") for n in range(440)]
    f = tmp_path / "many.jsonl"
    f.write_text("".join(json.dumps({"type": "item.completed", "item": {"id": f"i{n}", "type": "agent_message", "text": t}}) + "\n" for n, t in enumerate(texts)))
    return f


@needs_realdata
@pytest.mark.parametrize("harness, name", [("claude-code", "claude-transcripts/spotter__subagent-task-agent_progress__v2.1.38.jsonl"), ("codex", "codex-rollout")])
def test_a_transcript_parsed_in_a_child_is_stored_as_one_parsed_here(tmp_path, monkeypatch, forks, harness, name):
    path = REALDATA / name
    files = sorted(path.rglob("*.jsonl")) if path.is_dir() else [path]
    here, there = Store(tmp_path / "here.db"), Store(tmp_path / "there.db")
    with monkeypatch.context() as m:
        m.setattr(importer, "LARGE_BYTES", 1 << 40)
        parsed_here = import_files(here, harness, files)
    assert not forks
    parsed_there = import_files(there, harness, files)
    assert len(forks) == len(parsed_there) == len(parsed_here) > 0
    for a, b in zip(parsed_here, parsed_there):
        assert (a.actions, a.warnings) == (b.actions, b.warnings)
        assert _stored(here, a.session_id) == _stored(there, b.session_id)
    assert _reaped(forks)
    here.close(), there.close()


def test_a_secret_in_a_batch_the_child_sent_is_redacted_and_the_rest_kept_exact(tmp_path, forks):
    f = _many_batches(tmp_path, secret_at=250)
    store = Store(tmp_path / "r.db")
    [r] = import_files(store, "codex", [f])
    assert len(forks) == 1
    raw, lines = store.raw_lines(r.session_id), f.read_text().splitlines()
    assert raw[:250] == lines[:250] and raw[251:] == lines[251:]
    assert "ghp_" not in raw[250] and "pushed with [REDACTED]" in raw[250]
    said = [a.data["text"] for a in store.actions(r.session_id) if a.kind == "message.assistant"]
    assert len(said) == 440 and said[250].endswith("pushed with [REDACTED]") and "ghp_" not in json.dumps(said)
    store.close()


def test_an_error_in_the_child_is_raised_as_it_is_here_and_leaves_nothing(tmp_path, monkeypatch, forks):
    f = _many_batches(tmp_path)
    store = Store(tmp_path / "r.db")
    with monkeypatch.context() as m:
        m.setattr(transcripts.Transcript, "lines", lines_failing_at(300))
        with pytest.raises(OSError, match="the disk went away"):
            import_files(store, "codex", [f])
    assert forks and _counts(store) == [0, 0, 0, 0] and _reaped(forks)
    [r] = import_files(store, "codex", [f])
    assert store.raw_lines(r.session_id) == f.read_text().splitlines()
    store.close()


@pytest.mark.parametrize("where", ["between messages", "in the middle of one"])
def test_a_child_killed_mid_parse_fails_the_import_whole(tmp_path, monkeypatch, forks, where):
    """The stream ends before its end message, or inside a message: ParseFailed names the file
    and the signal, the transaction (which had written batches already) rolls back, and the
    child is reaped once (the parent signals nothing it has reaped: that pid may be reused)."""
    from benchtape.recorder import parse_worker

    parent = os.getpid()
    real_lines, real_send = transcripts.Transcript.lines, parse_worker._send

    def killed_at_300(self):
        for i, item in enumerate(real_lines(self)):
            if i == 300 and os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGKILL)
            yield item

    def cut_short(pipe, message):
        if message[0] == "batch" and message[1][0][0] > 200 and os.getpid() != parent:
            data = parse_worker.pickle.dumps(message)
            pipe.write(parse_worker._LENGTH.pack(len(data)) + data[: len(data) // 2])
            pipe.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        real_send(pipe, message)

    f = _many_batches(tmp_path)
    store = Store(tmp_path / "r.db")
    with monkeypatch.context() as m:
        if where == "between messages":
            m.setattr(transcripts.Transcript, "lines", killed_at_300)
        else:
            m.setattr(parse_worker, "_send", cut_short)
        with pytest.raises(ParseFailed, match=r"many\.jsonl: the process parsing it ended before it was read whole \(killed by SIGKILL\)"):
            import_files(store, "codex", [f])
    assert _counts(store) == [0, 0, 0, 0] and _reaped(forks)
    assert forks.kills == [] and list(forks.ended) == forks
    store.close()


def test_a_ctrl_c_that_ends_the_child_first_is_an_interruption(tmp_path, monkeypatch, forks):
    """Ctrl-C reaches the whole process group; when the child dies of it before the parent
    raises its own, the import still ends as interrupted (exit 130), not as a failed parse."""
    parent = os.getpid()
    real = transcripts.Transcript.lines

    def interrupted_at_300(self):
        for i, item in enumerate(real(self)):
            if i == 300 and os.getpid() != parent:
                os.kill(os.getpid(), signal.SIGINT)  # the child's handler is the default: it dies
            yield item

    f = _many_batches(tmp_path)
    store = Store(tmp_path / "r.db")
    monkeypatch.setattr(transcripts.Transcript, "lines", interrupted_at_300)
    with pytest.raises(KeyboardInterrupt):
        import_files(store, "codex", [f])
    assert _counts(store) == [0, 0, 0, 0] and _reaped(forks) and forks.kills == []
    store.close()


def test_content_already_stored_stops_the_child(tmp_path, monkeypatch, forks):
    """Found by its hash mid-stream (AlreadyImported): the import rolls back, and the child still
    parsing (slowly: ~4 s for the file) is killed and reaped rather than left to finish."""
    f = _many_batches(tmp_path)
    store = Store(tmp_path / "r.db")
    [first] = import_files(store, "codex", [f])
    before = _counts(store)
    monkeypatch.setattr(transcripts.Transcript, "lines", _slowly(0.01))
    started = time.monotonic()
    [again] = import_files(store, "codex", [f])
    assert again.already and again.session_id == first.session_id and _counts(store) == before
    assert len(forks) == 2 and _reaped(forks) and time.monotonic() - started < 3
    assert forks.kills == [(forks[1], signal.SIGKILL)]
    assert os.WIFSIGNALED(forks.ended[forks[1]]) and os.WTERMSIG(forks.ended[forks[1]]) == signal.SIGKILL
    store.close()


def test_a_killed_import_takes_its_child_with_it(tmp_path):
    """SIGKILL to the importing process: its child, parsing a transcript slowly (a batch takes
    it ~15 s), ends at once too (its parent-death signal), not at its next write, and the store
    holds nothing of the file."""
    f = _many_batches(tmp_path)
    db, pids = tmp_path / "r.db", tmp_path / "child.pid"
    script = f"""
import os, sys, time
sys.path[:0] = [{str(ROOT)!r}, {str(ROOT / 'tests')!r}]
from benchtape.adapters import transcripts
from benchtape.recorder import importer
from benchtape.store.database import Store
importer.LARGE_BYTES = 0
real = transcripts.Transcript.lines
def slow(self):
    open({str(pids)!r}, "w").write(str(os.getpid()))
    for item in real(self):
        time.sleep(0.2)
        yield item
transcripts.Transcript.lines = slow
importer.import_files(Store({str(db)!r}), "codex", [importer.Path({str(f)!r})])
"""
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 30
        while not (pids.exists() and pids.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        child = int(pids.read_text())
        assert child != proc.pid
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 3
    while time.monotonic() < deadline and _alive(child):
        time.sleep(0.02)
    assert not _alive(child)
    store = Store(db)
    assert _counts(store) == [0, 0, 0, 0]
    store.close()


def _alive(pid: int) -> bool:
    """Whether the process exists and is not a zombie (a killed orphan is reaped by init)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except FileNotFoundError:
        return False
    return state != "Z"
