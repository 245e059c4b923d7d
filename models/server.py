"""The scripted model server: one script, four model APIs, on loopback.

    with serve(script, port=0) as srv:
        srv.url              # http://127.0.0.1:PORT  (ANTHROPIC_BASE_URL)
        srv.openai_url       # http://127.0.0.1:PORT/v1  (Codex's base_url, a judge's base URL)
        srv.log              # every request so far, oldest first (a copy)

Routes: `POST /v1/messages` and `/v1/messages/count_tokens` (Anthropic), `HEAD /api/hello`
(Claude Code's probe), `POST .../responses` (OpenAI Responses), `POST .../chat/completions`
(OpenAI Chat Completions), `POST …/models/M:generateContent` and `:streamGenerateContent`
(Gemini, models/gemini.py), any other GET -> `{}`. A path may start with `/s/<name>`
to play the script added under that name (`srv.add(name, script)`, `srv.url_for(name)`),
so one server can play many sessions at once.

Standard library only (ThreadingHTTPServer): each request is answered on its own thread;
the shared state (turn counters, the log) is behind locks. Stopping never waits for a
request still sleeping in a scripted hang.

Whatever reaches the port is answered or closed, never left hanging or raising in a thread: a
body is read only when its Content-Length is a number within MAX_BODY (else 400, or 413 over
it, and the connection is closed unread), a body sent chunked is refused (411), a request
line without an HTTP version (HTTP/0.9) is answered 400 at once, and a connection that sends
nothing for IDLE_SECONDS (between requests, or inside one) is closed.
"""

from __future__ import annotations

import errno
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import orjson

from benchtape.models.playback import Playback
from benchtape.models.wire import Reply, json_reply
from benchtape.spec.script import Script, load_script, script_from

LOOPBACK = "127.0.0.1"
SLOT_PREFIX = "/s/"
MAX_BODY = 64 * 1024 * 1024  # a real agent's longest request (a long session's whole context) is a few MiB
IDLE_SECONDS = 60.0  # a socket read waiting longer than this closes the connection


def _route(method: str, path: str) -> str | None:
    """The API a request is for, from its method and path (query string removed)."""
    if method == "HEAD":
        return "probe"
    if method == "GET":
        return "models" if path.endswith("/models") else "get"
    if path.endswith("/messages/count_tokens"):
        return "count_tokens"
    if path.endswith("/messages"):
        return "messages"
    if path.endswith("/responses"):
        return "responses"
    if path.endswith("/chat/completions"):
        return "chat"
    if path.endswith(":streamGenerateContent"):
        return "gemini_stream"
    if path.endswith(":generateContent"):
        return "gemini"
    if path.endswith(":countTokens"):
        return "gemini_count"
    return None


def _answer(api: str, playback: Playback, body: dict[str, Any], harness: str | None) -> Reply:
    if api == "chat":
        from benchtape.models import chat

        return chat.answer(playback, body, harness)
    if api == "messages":
        from benchtape.models import anthropic

        return anthropic.answer(playback, body)
    if api == "responses":
        from benchtape.models import responses

        return responses.answer(playback, body)
    if api in ("gemini", "gemini_stream"):
        from benchtape.models import gemini

        return gemini.answer(playback, body, stream=api == "gemini_stream")
    if api == "gemini_count":
        return json_reply({"totalTokens": 10}, role="side", outcome="count_tokens")
    if api == "count_tokens":
        return json_reply({"input_tokens": 10}, role="side", outcome="count_tokens")
    if api == "models":
        return json_reply({"object": "list", "data": [], "models": []}, outcome="models")
    return json_reply({}, outcome=api)


class ScriptedServer:
    """A running server. Use `serve(...)` rather than building one by hand."""

    def __init__(self, script: Script, host: str = LOOPBACK, port: int = 0, harness: str | None = None, idle_seconds: float = IDLE_SECONDS) -> None:
        self.harness = harness
        self.idle_seconds = idle_seconds
        self._slots: dict[str, Playback] = {"": Playback(script)}
        self._log: list[dict[str, Any]] = []
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._httpd = _bind(host, port, self)
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------ public

    @property
    def host(self) -> str:
        host = self._httpd.server_address[0]
        assert isinstance(host, str)  # an AF_INET/AF_INET6 server's address names its host as a str
        return host

    @property
    def port(self) -> int:
        return self._httpd.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self.host}:{self.port}"

    @property
    def openai_url(self) -> str:
        return self.url + "/v1"

    def url_for(self, name: str) -> str:
        """The base URL that plays the script added under `name` (Anthropic form; add /v1 for OpenAI)."""
        return f"{self.url}{SLOT_PREFIX}{name}"

    def add(self, name: str, script: Script, paths: dict[str, str] | None = None) -> str:
        """Play `script` for requests under `/s/<name>`; returns its base URL. `paths` maps a
        folder as the agent sees it to where it is here (see Playback.local)."""
        if not name or "/" in name:
            raise ValueError(f"a slot name must be non-empty without '/': {name!r}")
        with self._lock:
            self._slots[name] = Playback(script, paths)
        return self.url_for(name)

    @property
    def log(self) -> list[dict[str, Any]]:
        """Every request so far: seq, at, slot, method, path, api, role, turn, outcome, body."""
        with self._lock:
            return [dict(e) for e in self._log]

    def entries(self, *, slot: str | None = None, outcome: str | None = None, role: str | None = None, api: str | None = None) -> list[dict[str, Any]]:
        """The log entries matching every filter given."""
        return [
            e
            for e in self.log
            if (slot is None or e.get("slot") == slot)
            and (outcome is None or e.get("outcome") == outcome)
            and (role is None or e.get("role") == role)
            and (api is None or e.get("api") == api)
        ]

    @property
    def exhausted(self) -> list[dict[str, Any]]:
        """Requests the script had no turn (or chat reply) for: a message for the user."""
        return self.entries(outcome="exhausted")

    def start(self) -> ScriptedServer:
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.1}, name=f"scripted-model:{self.port}", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()  # wakes requests sleeping in a delay or hang
        self._httpd.shutdown()
        self._httpd.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ------------------------------------------------------------ for the handler

    def playback(self, slot: str) -> Playback | None:
        with self._lock:
            return self._slots.get(slot)

    def record(self, entry: dict[str, Any]) -> None:
        with self._lock:
            entry["seq"] = len(self._log) + 1
            self._log.append(entry)

    def wait(self, seconds: float) -> bool:
        """Sleep up to `seconds`; False when the server is stopping."""
        return not self._stop.wait(seconds) if seconds > 0 else True


@contextmanager
def serve(script: Script | dict[str, Any] | str | Path | None = None, *, port: int = 0, host: str = LOOPBACK, harness: str | None = None, idle_seconds: float = IDLE_SECONDS) -> Iterator[ScriptedServer]:
    """Serve `script` (a Script, a mapping in the script vocabulary, or a YAML file; None: the
    no-op script) until the block ends. `port=0` picks a free port; a port in use raises
    BadInput naming it. A connection silent for `idle_seconds` is closed."""
    server = ScriptedServer(as_script(script), host=host, port=port, harness=harness, idle_seconds=idle_seconds).start()
    try:
        yield server
    finally:
        server.stop()


def as_script(script: Script | dict[str, Any] | str | Path | None) -> Script:
    if isinstance(script, Script):
        return script
    if isinstance(script, (str, Path)):
        return load_script(Path(script))
    return script_from(script or {}, "<script>")


# ---------------------------------------------------------------- HTTP


class _HTTPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], handler: Callable[..., Any], owner: ScriptedServer) -> None:
        self.owner = owner
        super().__init__(address, handler)


def _bind(host: str, port: int, owner: ScriptedServer) -> _HTTPServer:
    from benchtape.core.errors import BadInput

    try:
        return _HTTPServer((host, port), _Handler, owner)
    except OSError as exc:
        if exc.errno == errno.EADDRINUSE:
            raise BadInput(f"port {port} on {host} is already in use", fix="choose another --port, or --port 0 for a free one") from None
        if exc.errno == errno.EACCES:
            raise BadInput(f"port {port} on {host} needs privileges", fix="choose a port above 1023, or --port 0 for a free one") from None
        raise


class BadRequest(Exception):
    """A request the server answers with `status` and closes: its body cannot be read."""

    def __init__(self, status: int, kind: str, message: str):
        super().__init__(message)
        self.status, self.kind = status, kind


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _HTTPServer

    def setup(self) -> None:
        super().setup()
        self.connection.settimeout(self.server.owner.idle_seconds)  # every read of this connection waits this long at most

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the stdlib's name
        pass  # the request log is the record; stderr stays quiet

    def parse_request(self) -> bool:
        """The stdlib's, but a request line without a version (HTTP/0.9, `GET /`) is answered
        400 at once: the stdlib reads headers after it, and a client that sends none waits."""
        line: bytes = getattr(self, "raw_requestline", b"")  # set by the stdlib before it calls this
        words = line.split()
        if 0 < len(words) < 3:
            self.command, self.path, self.request_version = words[0].decode("latin-1"), "", "HTTP/1.1"
            self.requestline = line.decode("latin-1").rstrip("\r\n")
            self.close_connection = True
            self._send(json_reply({"type": "error", "error": {"type": "invalid_request_error", "message": "HTTP/0.9 requests are not served: send an HTTP/1.x request line"}}, status=400))
            return False
        return super().parse_request()

    def do_HEAD(self) -> None:
        self._handle("HEAD")

    def do_GET(self) -> None:
        self._handle("GET")

    def do_POST(self) -> None:
        self._handle("POST")

    def _handle(self, method: str) -> None:
        owner = self.server.owner
        slot, path = _split_slot(self.path.split("?", 1)[0])
        entry: dict[str, Any] = {"at": time.time(), "slot": slot, "method": method, "path": self.path}
        try:
            body = self._body() if method == "POST" else {}
        except BadRequest as exc:
            self.close_connection = True  # what follows on this connection is the unread body
            reply = json_reply({"type": "error", "error": {"type": exc.kind, "message": str(exc)}}, status=exc.status, outcome="error")
            entry.update({"api": None, "status": exc.status, "body": None, **reply.note})
            owner.record(entry)
            self._send(reply, head=False)
            return
        api = _route(method, path)
        entry["api"] = api
        playback = owner.playback(slot)
        if body is None:
            reply = json_reply({"type": "error", "error": {"type": "invalid_request_error", "message": "the request body is not a JSON object"}}, status=400, outcome="error")
        elif api is None:
            reply = json_reply({"type": "error", "error": {"type": "not_found_error", "message": f"no such endpoint: {method} {path}"}}, status=404, outcome="error")
        elif playback is None:
            reply = json_reply({"type": "error", "error": {"type": "not_found_error", "message": f"no script named {slot!r} on this server"}}, status=404, outcome="error")
        else:
            try:
                reply = _answer(api, playback, body or {}, owner.harness)
            except Exception as exc:  # noqa: BLE001 - a server bug answers 500 and is logged, never kills the thread silently
                reply = json_reply({"type": "error", "error": {"type": "api_error", "message": f"scripted model failed: {type(exc).__name__}: {exc}"}}, status=500, outcome="error")
        entry.update(reply.note)
        entry["status"] = reply.status
        entry["body"] = body
        owner.record(entry)
        if not owner.wait(reply.delay):
            return
        self._send(reply, head=method == "HEAD")

    def _body(self) -> dict[str, Any] | None:
        """The JSON object the request carries ({} for none; None for one that is not an
        object); BadRequest when its length cannot be trusted to read it."""
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            raise BadRequest(411, "invalid_request_error", "a chunked request body is not read: send it with a Content-Length")
        given = (self.headers.get("Content-Length") or "0").strip()
        if not given.isdigit():
            raise BadRequest(400, "invalid_request_error", f"Content-Length {given[:40]!r} is not a number of bytes")
        length = int(given)
        if length > MAX_BODY:
            raise BadRequest(413, "request_too_large", f"a request body of {length} bytes is over this server's limit of {MAX_BODY} bytes")
        raw = self.rfile.read(length) if length else b""
        if not raw:
            return {}
        try:
            value = orjson.loads(raw)
        except orjson.JSONDecodeError:
            return None
        return value if isinstance(value, dict) else None

    def _send(self, reply: Reply, head: bool = False) -> None:
        try:
            self.send_response(reply.status)
            self.send_header("Content-Type", reply.content_type)
            self.send_header("Content-Length", "0" if head else str(len(reply.body)))
            for key, value in reply.headers.items():
                self.send_header(key, value)
            self.end_headers()
            if not head:
                self.wfile.write(reply.body)
                self.wfile.flush()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the client gave up (a timeout): nothing left to tell it


def _split_slot(path: str) -> tuple[str, str]:
    """(`name`, rest) for `/s/<name>/rest`; ("", path) otherwise."""
    if path.startswith(SLOT_PREFIX):
        name, _, rest = path[len(SLOT_PREFIX):].partition("/")
        return name, "/" + rest
    return "", path
