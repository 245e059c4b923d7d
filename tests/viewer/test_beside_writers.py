"""A real `benchtape view` process stays whole beside writers and under bursts (issue 44):
every page from several clients in a loop while other processes import, regrade and run
(their exits once made every page "database disk image is malformed"); descriptors stay
bounded over bursts after idle gaps (the server's pool retires idle threads after 10 s, and
each new thread's store used to stay open); and a viewer leaves no -wal or -shm beside a store
that had none.
"""

from __future__ import annotations

import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import orjson
import pytest
import scenes
from viewproc import ViewProcess

pytestmark = pytest.mark.xdist_group("viewer")
REALDATA = Path("/work/shared/realdata")
LOCAL_REALDATA = Path(__file__).resolve().parents[1] / "realdata"
PAGE_THREADS = 8  # the viewer's page threads (benchtape.view.viewer.PAGE_THREADS)


def transcripts() -> list[Path]:
    """Real Claude Code transcripts (the shared corpus, else the copies under tests/realdata)."""
    for folder in (REALDATA / "claude-transcripts", LOCAL_REALDATA / "claude-transcripts", LOCAL_REALDATA):
        found = sorted(folder.glob("*.jsonl")) if folder.is_dir() else []
        if found:
            return found[:3]
    pytest.skip("no real Claude Code transcripts here")


def every_page(v: ViewProcess) -> list[str]:
    """Every route of the viewer, with ids taken from the store as it is now."""
    gradings = orjson.loads(v.get("/gradings?format=json")[1])
    evaluation = orjson.loads(v.get("/evaluation/base?format=json")[1])
    diff = f"/gradings/diff?a={gradings[0]['id']}&b={gradings[-1]['id']}"
    side = f"/evaluation/base/side?task={evaluation['tasks'][0]}"
    return [
        "/", "/runs", "/run/latest", "/session/latest", "/changes/latest", "/raw/latest",
        "/evaluations", "/evaluation/base", side, "/gradings", diff,
        "/search?q=calc", "/?format=json", "/session/latest?format=json", "/evaluation/base?format=json",
    ]


def test_every_page_from_several_clients_while_imports_regrades_and_runs_come_and_go(tmp_path):
    project = scenes.evaluation(tmp_path)
    files = transcripts()
    changed = project.root / "changed.yaml"
    v = ViewProcess(project)
    pages = every_page(v)
    stop = threading.Event()
    seen: list[tuple[str, int, bytes]] = []
    lock = threading.Lock()

    def client(k: int) -> None:
        for _ in range(400):  # bounded: the writers take far less than 400 rounds
            if stop.is_set():
                return
            for path in pages[k:] + pages[:k]:  # each client in its own order
                status, body = v.get(path)
                with lock:
                    seen.append((path, status, body[:400]))

    writers = [
        ("import", "claude-code", *files, "--db", project.db),
        ("regrade", "--bench", changed, "--all", "--db", project.db),
        ("run", "base", "--yes"),
        ("import", "codex", *sorted((REALDATA / "codex-rollout").glob("*.jsonl"))[:1], "--db", project.db) if (REALDATA / "codex-rollout").is_dir() else ("demo", "--db", project.db),
        ("regrade", "--bench", project.root / "madbench.yaml", "--all", "--db", project.db),
        ("demo", "--db", project.db),
    ]
    try:
        with ThreadPoolExecutor(4) as clients:
            running = [clients.submit(client, k) for k in range(4)]
            try:
                for args in writers:  # each a process that writes, then exits (the exit once broke every page)
                    done = project.cli(*args, timeout=300)
                    assert done.returncode in (0, 1), f"{args[0]}: exit {done.returncode}\n{done.stderr[-2000:]}"
            finally:
                stop.set()
                for f in running:
                    f.result(timeout=300)
        assert len(seen) >= 4 * len(pages), "the clients hardly ran"
        # after every writer has gone: every page, from several clients at once, is whole
        with ThreadPoolExecutor(4) as after:
            final = list(after.map(lambda p: (p, *v.get(p)), every_page(v) * 4))
        bad = [(p, s, b[:300]) for p, s, b in seen + final if s != 200]
        print(f"{len(seen) + len(final)} pages served beside {len(writers)} writers; {len(bad)} failed")
        assert not bad, f"{len(bad)} of {len(seen) + len(final)} pages failed, e.g. {bad[:3]}"
        deleted = [d for d in v.descriptors() if "(deleted)" in d]
        assert not deleted, f"the viewer holds descriptors on deleted files: {deleted[:5]}"
    finally:
        err = v.stop()
    assert "Traceback" not in err and "damaged" not in err, err[-3000:]
    verify = project.cli("verify", "--db", project.db)
    assert verify.returncode == 0, verify.stdout + verify.stderr


def test_descriptors_stay_bounded_over_bursts_after_idle_gaps(tmp_path):
    """The server retires a thread idle 10 s; a burst after such a gap ran on new threads, and
    each new thread's store stayed open (~77 descriptors a burst before the fix). Now the pages
    run on the viewer's own threads, one connection each (a database and a -wal descriptor),
    and the process's one -shm."""
    project = scenes.Project(tmp_path)
    scenes.ok(project.cli("demo", "--db", project.db))
    v = ViewProcess(project)
    pages = ["/", "/runs", "/session/latest", "/changes/latest", "/raw/latest", "/gradings", "/search?q=calc"] * 6
    on_store, total = [], []
    try:
        for burst in range(2):  # a burst, an idle gap, a burst: the leak grew with each burst after a gap
            if burst:
                time.sleep(11)  # longer than the server's idle-thread timeout (10 s)
            with ThreadPoolExecutor(24) as clients:
                statuses = list(clients.map(lambda p: v.get(p)[0], pages))
            assert set(statuses) == {200}
            held = v.descriptors()
            on_store.append(sum(1 for d in held if d.startswith(str(project.db))))
            total.append(len(held))
    finally:
        v.stop()
    print(f"descriptors on the store after each burst: {on_store}; in all: {total}")
    assert max(on_store) <= 2 * PAGE_THREADS + 1, f"descriptors on the store after each burst: {on_store}"
    from benchtape.view.viewer import PAGE_THREADS as used

    assert used == PAGE_THREADS
    assert max(total) < 80, f"descriptors after each burst: {total}"


def test_a_viewer_and_a_browsing_command_leave_no_wal_or_shm_beside_a_store_that_had_none(tmp_path):
    project = scenes.Project(tmp_path)
    scenes.ok(project.cli("demo", "--db", project.db))
    folder = project.db.parent
    before = sorted(p.name for p in folder.iterdir())
    assert before == ["benchtape.db"], before
    stamp = project.db.stat().st_mtime_ns, project.db.read_bytes()
    scenes.ok(project.cli("sessions", "--db", project.db))
    assert sorted(p.name for p in folder.iterdir()) == before
    v = ViewProcess(project)
    try:
        with ThreadPoolExecutor(4) as clients:
            assert set(clients.map(lambda p: v.get(p)[0], ["/", "/runs", "/session/latest", "/gradings"] * 3)) == {200}
    finally:
        err = v.stop()
    assert v.proc.returncode in (0, -signal.SIGINT, 130), err
    assert sorted(p.name for p in folder.iterdir()) == before
    assert (project.db.stat().st_mtime_ns, project.db.read_bytes()) == stamp

