"""Serving the viewer: a socket bound before anything is printed (so the URL shown is
listening, and a port in use is a message, not a traceback), uvicorn pinned to its plain
choices (h11, asyncio: nothing a later install of uvloop or httptools could change), and a
stop that ends the live streams first (uvicorn waits for every open response, and a stream
never ends by itself).

uvicorn times out only an idle keep-alive connection: one that opens and sends nothing, or a
request's headers a byte at a time, was held forever (each a descriptor, until the process had
none left). ViewProtocol gives every request REQUEST_TIMEOUT_S from its first byte (or the
connection's opening) to arrive whole, then closes the connection; and at most
MAX_CONNECTIONS are served at once (the rest are answered 503).
"""

from __future__ import annotations

import asyncio
import errno
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Callable

import uvicorn
from uvicorn.protocols.http.h11_impl import H11Protocol

from benchtape.core.errors import BadInput
from benchtape.view.viewer import Viewer
from benchtape.view.webapp import make_app


def listen(host: str, port: int) -> socket.socket:
    """A listening socket on host:port (0: any free port)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind((host, port))
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise BadInput(f"port {port} on {host} is in use", fix=f"pass another --port (0 picks a free one), or stop what serves on {port}") from None
        raise BadInput(f"cannot serve on {host}:{port}: {exc.strerror or exc}", fix="pass --host 127.0.0.1 (the default) or an address of this machine") from None
    sock.listen(128)  # before the URL is printed: an early browser waits in the backlog
    return sock


def url_of(sock: socket.socket) -> str:
    host, port = sock.getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}/"


class ViewServer(uvicorn.Server):
    """uvicorn with a first Ctrl-C (or SIGTERM) that ends the live streams too, so it stops at once."""

    def __init__(self, config: uvicorn.Config, viewer: Viewer, ready: Callable[[], None] | None = None):
        super().__init__(config)
        self.viewer = viewer
        self.ready = ready

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        """Serving, with uvicorn's Ctrl-C handler in place: only now is the URL said (`ready`), so
        a Ctrl-C as soon as it is read stops the server as any later one does (one sent while
        it was still starting, under a loaded machine, once left the process running)."""
        await super().startup(sockets=sockets)
        if self.started and self.ready is not None:
            self.ready()

    def handle_exit(self, sig: int, frame: Any) -> None:
        self.viewer.stopping.set()
        super().handle_exit(sig, frame)


REQUEST_TIMEOUT_S = 10.0  # from a connection's opening, or a request's first byte, to its whole headers
MAX_CONNECTIONS = 256  # connections and requests at once; beyond, a 503


class ViewProtocol(H11Protocol):
    """h11 with a deadline on every incomplete request (not reset by each byte that trickles in)."""

    deadline: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def data_received(self, data: bytes) -> None:
        between = self.cycle is None or self.cycle.response_complete  # this data starts a new request
        super().data_received(data)
        if self.cycle is not None and not self.cycle.response_complete:
            self._disarm()  # the request is in hand: the response takes as long as it takes
        elif between and self.deadline is None:
            self._arm()

    def on_response_complete(self) -> None:
        self._disarm()
        super().on_response_complete()  # arms uvicorn's keep-alive timeout until the next request's first byte

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        self._disarm()
        self.deadline = self.loop.call_later(REQUEST_TIMEOUT_S, self._too_slow)

    def _disarm(self) -> None:
        if self.deadline is not None:
            self.deadline.cancel()
            self.deadline = None

    def _too_slow(self) -> None:
        self.deadline = None
        if (self.cycle is None or self.cycle.response_complete) and not self.transport.is_closing():
            self.transport.close()


def server(viewer: Viewer, host: str, ready: Callable[[], None] | None = None) -> ViewServer:
    config = uvicorn.Config(
        make_app(viewer, host=host),
        log_level="warning",
        access_log=False,
        lifespan="off",
        loop="asyncio",
        http=ViewProtocol,
        ws="none",
        timeout_graceful_shutdown=2,
        limit_concurrency=MAX_CONNECTIONS,
    )
    return ViewServer(config, viewer, ready)


def serve(viewer: Viewer, sock: socket.socket, host: str, ready: Callable[[], None] | None = None) -> None:
    """In the foreground until Ctrl-C (KeyboardInterrupt once uvicorn has shut down); `ready`
    once it serves."""
    try:
        server(viewer, host, ready).run(sockets=[sock])
    finally:
        viewer.close()


@contextmanager
def running(viewer: Viewer, host: str = "127.0.0.1", port: int = 0) -> Iterator[str]:
    """The viewer served from a thread (tests, screenshots, benchmarks): yields its URL."""
    sock = listen(host, port)
    srv = server(viewer, host)
    thread = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, name="benchtape-view", daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not srv.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("benchtape view did not start")
        time.sleep(0.01)
    try:
        yield url_of(sock).rstrip("/")
    finally:
        viewer.stopping.set()
        srv.should_exit = True
        thread.join(10)
        sock.close()
        viewer.close()
