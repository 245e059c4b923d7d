"""`benchtape model serve` against what may reach a loopback port: lengths that are no length,
bodies over the cap, chunked bodies, HTTP/0.9, clients that go silent. Each is answered (or
closed) at once, never raises in a thread or holds the connection, and the server serves on."""

from __future__ import annotations

import socket
import time

import orjson
import pytest

from benchtape.models import server as server_module
from benchtape.models.server import serve


def _exchange(port: int, data: bytes, wait: float = 5.0) -> tuple[bytes, bool, float]:
    """What the server sent back, whether it closed the connection, and how long that took."""
    started = time.monotonic()
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.settimeout(wait)
        s.sendall(data)
        got, closed = b"", False
        try:
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    closed = True
                    break
                got += chunk
        except (TimeoutError, ConnectionResetError):
            pass
    return got, closed, time.monotonic() - started


def _status(reply: bytes) -> int:
    return int(reply.split(b" ", 2)[1]) if reply.startswith(b"HTTP/1.") else 0


def _post(length: bytes, extra: bytes = b"") -> bytes:
    return b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: " + length + b"\r\n" + extra + b"\r\n{}"


@pytest.mark.parametrize(("request_bytes", "status", "words"), [
    (_post(b"99999999999"), 413, b"over this server's limit"),
    (_post(b"-5"), 400, b"is not a number of bytes"),
    (_post(b"abc"), 400, b"is not a number of bytes"),
    (b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", 411, b"chunked"),
    (b"GET /\r\n", 400, b"HTTP/0.9"),
])
def test_a_request_whose_body_cannot_be_read_is_answered_and_closed_at_once(request_bytes, status, words):
    with serve() as srv:
        reply, closed, took = _exchange(srv.port, request_bytes)
        assert _status(reply) == status and words in reply and closed and took < 2, (reply, closed, took)
        head, body = reply.split(b"\r\n\r\n", 1)
        assert orjson.loads(body)["error"]["message"]
        ok, _, _ = _exchange(srv.port, b"GET /v1/models HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        assert _status(ok) == 200  # the server serves on


def test_a_body_over_the_cap_is_refused_unread(monkeypatch):
    monkeypatch.setattr(server_module, "MAX_BODY", 1000)
    with serve() as srv:
        body = b'{"x": "' + b"a" * 2000 + b'"}'
        reply, closed, _ = _exchange(srv.port, b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        assert _status(reply) == 413 and closed
        assert srv.log[-1]["status"] == 413 and srv.log[-1]["outcome"] == "error"


@pytest.mark.parametrize("sent", [b"", b"POST /v1/messages HTTP/1.1\r\nHost: x\r\n", _post(b"100")[:-2]])
def test_a_connection_that_goes_silent_is_closed(sent):
    """Silent before a request, inside its headers, or inside its body."""
    with serve(idle_seconds=0.5) as srv:
        _, closed, took = _exchange(srv.port, sent, wait=10)
        assert closed and took < 3, took
