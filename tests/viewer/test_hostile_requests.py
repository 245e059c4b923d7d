"""What a request may ask of a real `benchtape view` (issue 44, item 10): a value out of range
or a name no file could have is a 400 naming the parameter, never a 500 with a traceback in
the viewer's log; a request that never arrives whole is timed out instead of holding its
descriptor forever."""

from __future__ import annotations

import socket
import threading
import time

import orjson
import pytest
import scenes
from viewproc import ViewProcess

pytestmark = pytest.mark.xdist_group("viewer")
LONG = "a" * 5000
REQUEST_TIMEOUT_S = 10.0  # benchtape.view.serving.REQUEST_TIMEOUT_S


@pytest.fixture(scope="module")
def viewer(tmp_path_factory):
    project = scenes.Project(tmp_path_factory.mktemp("hostile"))
    scenes.ok(project.cli("demo", "--db", project.db))
    v = ViewProcess(project)
    yield v
    err = v.stop()
    assert "Traceback" not in err, err[-3000:]


OUT_OF_RANGE = [
    ("/?limit=99999999999999999999999", "limit"),
    ("/runs?limit=99999999999999999999999", "limit"),
    ("/run/latest?limit=100001", "limit"),
    ("/?limit=-1", "limit"),
    ("/?limit=ten", "limit"),
    ("/?since=0001-01-01", "since"),
    ("/?until=9999-12-31", "until"),
    ("/run/latest?since=0001-01-01", "since"),
    ("/?since=2026-13-45", "since"),
    ("/?outcome=nonsense", "outcome"),
    (f"/evaluation/{LONG}", "name"),
    (f"/evaluation/{LONG}/side?task=x", "name"),
    (f"/session/{LONG}", "handle"),
    (f"/run/{LONG}", "handle"),
    (f"/raw/{LONG}", "handle"),
]


@pytest.mark.parametrize(("path", "names"), OUT_OF_RANGE, ids=[p[:40] for p, _ in OUT_OF_RANGE])
def test_a_value_out_of_range_is_a_400_naming_it(viewer, path, names):
    status, body = viewer.get(path)
    assert status == 400, (status, body[:300])
    assert names.encode() in body and b"fix:" in body
    sep = "&" if "?" in path else "?"
    status, body = viewer.get(path + sep + "format=json")
    assert status == 400
    doc = orjson.loads(body)
    assert names in doc["error"] and doc["fix"]


def test_a_position_past_any_store_shows_no_lines_instead_of_failing(viewer):
    status, body = viewer.get("/raw/latest?from=99999999999999999999999")
    assert status == 200, body[:300]


def _closed_within(sock: socket.socket, seconds: float) -> float | None:
    """When the server closed the connection (None: still open after `seconds`)."""
    start = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except TimeoutError:
        return None
    except OSError:
        pass
    return time.monotonic() - start


def test_requests_that_never_arrive_whole_are_timed_out(viewer):
    limit = REQUEST_TIMEOUT_S + 5
    silent = socket.create_connection(("127.0.0.1", viewer.port))
    partial = socket.create_connection(("127.0.0.1", viewer.port))
    partial.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # the headers never end
    after_one = socket.create_connection(("127.0.0.1", viewer.port))
    after_one.sendall(f"GET /runs HTTP/1.1\r\nHost: 127.0.0.1:{viewer.port}\r\n\r\n".encode())
    assert b"200 OK" in after_one.recv(65536)
    after_one.sendall(b"GET / HTTP/1.1\r\n")  # a second request on the kept-alive connection, never finished
    trickle = socket.create_connection(("127.0.0.1", viewer.port))
    cut: list[float] = []

    def drip() -> None:  # a byte every half second: each byte must not buy more time
        start = time.monotonic()
        try:
            for ch in b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: " + b"a" * 100:
                trickle.sendall(bytes([ch]))
                time.sleep(0.5)
        except OSError:
            cut.append(time.monotonic() - start)

    dripping = threading.Thread(target=drip)
    dripping.start()
    results = {name: _closed_within(s, limit) for name, s in (("silent", silent), ("partial", partial), ("after one", after_one))}
    dripping.join(limit + 60)
    for s in (silent, partial, after_one, trickle):
        s.close()
    assert all(t is not None for t in results.values()), f"still open after {limit} s: {results}"
    assert cut and cut[0] < limit, f"the trickle was never cut: {cut}"
    assert viewer.get("/")[0] == 200  # and the viewer still serves
    from benchtape.view.serving import REQUEST_TIMEOUT_S as used

    assert used == REQUEST_TIMEOUT_S
