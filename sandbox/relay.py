"""One model endpoint into a container that has no network: a relay on each side of a unix socket.

A `network: none` container has only its own loopback. To let its agent reach the scripted
model server (listening on the host's 127.0.0.1:PORT) and nothing else, the container
level bind-mounts a host folder holding one unix socket:

    agent -> 127.0.0.1:PORT (inside) -> container relay -> model.sock -> host relay -> 127.0.0.1:PORT (host)

The host relay (`HostRelay`, a thread in benchtape) accepts on the socket and connects to
exactly the one host port it was made for; the container relay (`main`, run inside with
`python3 -c <this file's source>`) listens on the container's 127.0.0.1:PORT and connects
each client to the socket. Nothing else is routed: every other address stays unreachable.

Standard library only, and self-contained below the imports, because the same source runs
inside an image that has nothing but a Python interpreter.
"""

from __future__ import annotations

import os
import socket
import sys
import threading
from typing import Callable

BUFFER = 65536


def _pump(src: socket.socket, dst: socket.socket) -> None:
    """Copy until `src` says EOF, then half-close `dst` so the other side sees it too."""
    try:
        while True:
            data = src.recv(BUFFER)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def _bridge(client: socket.socket, connect: Callable[[], socket.socket]) -> None:
    try:
        upstream = connect()
    except OSError:
        client.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, client), daemon=True)
    back.start()
    _pump(client, upstream)
    back.join()
    for s in (client, upstream):
        try:
            s.close()
        except OSError:
            pass


def _serve(listener: socket.socket, connect: Callable[[], socket.socket], stop: threading.Event) -> None:
    while not stop.is_set():
        try:
            client, _ = listener.accept()
        except OSError:
            if stop.is_set():
                return
            continue
        threading.Thread(target=_bridge, args=(client, connect), daemon=True).start()


def _tcp(host: str, port: int) -> Callable[[], socket.socket]:
    return lambda: socket.create_connection((host, port), timeout=30)


def _unix(path: str) -> Callable[[], socket.socket]:
    def connect() -> socket.socket:
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(path)
        return s

    return connect


class HostRelay:
    """Accepts on a unix socket (in a folder mounted into the container) and connects each
    client to one loopback port on the host, and to nothing else."""

    def __init__(self, socket_path: str, port: int, host: str = "127.0.0.1") -> None:
        self.socket_path = socket_path
        self.target = (host, port)
        self._stop = threading.Event()
        self._listener: socket.socket | None = None

    def start(self) -> HostRelay:
        if os.path.exists(self.socket_path):
            os.unlink(self.socket_path)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(self.socket_path)
        os.chmod(self.socket_path, 0o777)  # a non-root container user must be able to connect
        listener.listen(64)
        listener.settimeout(0.5)
        self._listener = listener
        threading.Thread(target=_serve, args=(listener, _tcp(*self.target), self._stop), name="benchtape-relay", daemon=True).start()
        return self

    def close(self) -> None:
        self._stop.set()
        if self._listener is not None:
            try:
                self._listener.close()
            except OSError:
                pass
        try:
            os.unlink(self.socket_path)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """`listen PORT SOCKET`: inside the container, 127.0.0.1:PORT -> SOCKET; prints `ready` once listening."""
    if len(argv) != 3 or argv[0] != "listen":
        print("usage: relay listen PORT SOCKET", file=sys.stderr)
        return 2
    port, path = int(argv[1]), argv[2]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    print("ready", flush=True)
    _serve(listener, _unix(path), threading.Event())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
