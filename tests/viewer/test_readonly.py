"""The viewer reads, never writes: the store's file is byte for byte what it was, a writer in
another process records while pages and live streams are served, nothing but GET and HEAD is
answered, a foreign Host is refused, and `benchtape view` itself binds loopback by default."""

from __future__ import annotations

import hashlib
import http.client
import os
import re
import select
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.request

import pytest
import scenes
from scenes import serving

pytestmark = pytest.mark.xdist_group("viewer")
PAGES = ("/", "/runs", "/session/latest", "/changes/latest", "/raw/latest", "/gradings", "/evaluations", "/search?q=calc", "/?outcome=fail", "/session/latest?format=json")


def fingerprint(path) -> tuple[str, int, int]:
    st = path.stat()
    return hashlib.sha256(path.read_bytes()).hexdigest(), st.st_mtime_ns, st.st_size


def fetch(base: str, path: str, **headers: str) -> tuple[int, bytes, dict[str, str]]:
    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=30)
    conn.request("GET", path, headers=headers)
    r = conn.getresponse()
    out = (r.status, r.read(), {k.lower(): v for k, v in r.getheaders()})
    conn.close()
    return out


def read_events(base: str, path: str, seconds: float, until: tuple[str, ...] = ()) -> str:
    """What a live page's stream sends in `seconds` (read off the socket as it comes), or
    until every text of `until` has arrived."""
    host, port = base.removeprefix("http://").split(":")
    got: list[bytes] = []
    with socket.create_connection((host, int(port)), timeout=30) as sock:
        sock.sendall(f"GET {path} HTTP/1.1\r\nHost: {host}:{port}\r\nAccept: text/event-stream\r\n\r\n".encode())
        end = time.monotonic() + seconds
        while time.monotonic() < end:
            ready, _, _ = select.select([sock], [], [], 0.2)
            if ready:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                got.append(chunk)
                if until and all(t.encode() in b"".join(got) for t in until):
                    break
    return b"".join(got).decode(errors="replace")


def live_of(page: bytes) -> str:
    """A live page's own stream URL (naming what its regions showed)."""
    return re.search(rb'data-live="([^"]+)"', page)[1].decode().replace("&amp;", "&")


def test_serving_every_page_leaves_the_file_as_it_was(rich):
    before = fingerprint(rich.db)
    with serving(rich) as base:
        for path in PAGES:
            status, _, _ = fetch(base, path)
            assert status == 200, path
        stream = read_events(base, live_of(fetch(base, "/")[1]), 1.0)
        assert "retry: 1000" in stream and "event: region" not in stream  # nothing changed since the page: nothing sent
    assert fingerprint(rich.db) == before


def test_a_writer_records_while_the_viewer_serves_and_the_stream_sees_it(tmp_path):
    project = scenes.Project(tmp_path)
    scenes.ok(project.cli("demo", "--db", project.db))
    bench = scenes.slow_bench(tmp_path, scenarios=2, sleep=0.5)
    with serving(project) as base:
        status, page, _ = fetch(base, "/")
        assert status == 200
        live = live_of(page)
        seen: list[str] = []
        reader = threading.Thread(target=lambda: seen.append(read_events(base, live, 60.0, until=("slow-1", "slow-2"))))
        reader.start()
        stop = threading.Event()

        def browse() -> None:  # pages served all the while the run writes
            while not stop.is_set():
                for path in PAGES[:4]:
                    assert fetch(base, path)[0] == 200
        browser = threading.Thread(target=browse)
        browser.start()
        try:
            run = project.cli("run", bench, "--db", project.db, "--concurrency", "2", "--plain", timeout=120)
        finally:
            stop.set()
            browser.join(30)
        assert run.returncode == 0, run.stderr
        assert "locked" not in run.stderr
        reader.join(30)
    names = re.findall(r"slow-\d", seen[0])
    assert {"slow-1", "slow-2"} <= set(names), seen[0][-2000:]  # the new sessions arrived on the stream


def test_a_live_page_stays_live_when_a_new_session_makes_its_short_handle_ambiguous(tmp_path):
    """A run's next session can share the prefix a page was opened by (ULIDs made in the same
    millisecond-ish share their first characters): the page's stream must still name its own
    session, and not end with "ambiguous" while the session is being recorded."""
    from benchtape.core.model import Action
    from benchtape.store.database import Store

    project = scenes.Project(tmp_path)
    store = Store(project.db)
    run = store.new_run("run", harness="mock")
    first = store.new_session(run, "slow-1", harness="mock", session_id="01M8Z0210G6BY6BC8CGAX2X6SB")
    store.append(first, [Action("session.started", {"scenario": "slow-1", "harness": "mock", "prompt": "wait", "attempt": 1}, at=1000.0)])
    store.close()
    with serving(project) as base:
        run_page = fetch(base, "/run/" + run[:10])[1]
        status, page, _ = fetch(base, "/session/01M8Z02")  # unique now
        assert status == 200 and b"incomplete" in page
        live = live_of(page)
        store = Store(project.db)
        store.new_session(run, "slow-2", harness="mock", session_id="01M8Z0242VAR64FP86TZT03YZD")  # and now it is not
        store.append(first, [Action("final_output", {"text": "done 1"}, at=1001.0), Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1000.0}, at=1002.0)])
        store.close()
        assert fetch(base, "/session/01M8Z02")[0] != 200  # the short handle itself is ambiguous now
        stream = read_events(base, live, 10.0, until=("done 1",))
        assert "event: problem" not in stream, stream[-1000:]
        assert "done 1" in stream  # the session's page saw it finish
        runs = read_events(base, live_of(run_page), 3.0, until=("slow-2",))
        assert "event: problem" not in runs and "slow-2" in runs, runs[-1000:]


def test_only_get_and_head_and_only_for_this_viewers_host(rich):
    with serving(rich) as base:
        host, port = base.removeprefix("http://").split(":")
        for method in ("POST", "PUT", "DELETE", "PATCH"):
            conn = http.client.HTTPConnection(host, int(port), timeout=30)
            conn.request(method, "/", body=b"x")
            r = conn.getresponse()
            assert r.status == 405 and r.getheader("allow") == "GET, HEAD", method
            conn.close()
        status, body, _ = fetch(base, "/", Host="attacker.example:80")
        assert status == 403 and b"attacker.example" in body  # a page elsewhere, rebound to 127.0.0.1
        for name in (f"127.0.0.1:{port}", f"localhost:{port}"):
            assert fetch(base, "/", Host=name)[0] == 200
        status, _, headers = fetch(base, "/session/latest")
        assert "script-src 'self'" in headers["content-security-policy"] and headers["x-content-type-options"] == "nosniff"
        status, body, headers = fetch(base, "/static/view.js")
        assert status == 200 and headers["content-type"].startswith("text/javascript") and b"EventSource" in body


def view(*args: object, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "benchtape", "view", *map(str, args)], cwd=cwd, env={**os.environ, "NO_COLOR": "1"}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_benchtape_view_serves_loopback_until_ctrl_c(rich):
    proc = view("--db", rich.db, "--port", "0", cwd=rich.root)
    try:
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line + proc.stderr.read()
        with urllib.request.urlopen(url[0], timeout=30) as r:
            assert r.status == 200 and b"delegates" in r.read()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_port_in_use_and_a_path_that_is_no_store_are_bad_input(rich, tmp_path):
    from typer.testing import CliRunner

    from benchtape.cli import build
    from benchtape.core.errors import BadInput
    from benchtape.view.serving import listen

    taken = listen("127.0.0.1", 0)
    try:
        with pytest.raises(BadInput) as busy:
            listen("127.0.0.1", taken.getsockname()[1])
        assert "is in use" in busy.value.what and "--port" in (busy.value.fix or "")
    finally:
        taken.close()
    missing = CliRunner().invoke(build(), ["view", "--db", str(tmp_path / "none.db")], catch_exceptions=False)
    assert missing.exit_code == 2 and "no benchtape database here" in missing.stderr
    assert not (tmp_path / "none.db").exists()


def test_benchtape_view_warns_when_it_serves_beyond_loopback(rich):
    """Ctrl-C the moment the URL is read: the URL is said once the server serves with its
    Ctrl-C handler in place (a Ctrl-C sent while it was still starting once left it running
    past 15 s on a loaded machine, in CI)."""
    proc = view("--db", rich.db, "--port", "0", "--host", "0.0.0.0", cwd=rich.root)
    try:
        assert "http://0.0.0.0:" in proc.stdout.readline()
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=15) == 0
        assert "warning: serving on 0.0.0.0" in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
