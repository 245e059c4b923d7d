"""The viewer as an ASGI app: its routes, each page's JSON twin, and the guard in front of them.

Every route is GET (HEAD): nothing here writes, to the store or anywhere. The guard refuses a
request whose Host is not this viewer's (a page on another site cannot reach it through DNS
rebinding), refuses every other method, and sends headers that keep a page from loading
anything but this server's own script and stylesheet (agent output is hostile input: it is
escaped everywhere, and the policy refuses inline script besides).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import orjson
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from benchtape.app.sessions import BrowsingStore
from benchtape.core.errors import BenchtapeError
from benchtape.view import (
    events,
    page_evaluation,
    page_gradings,
    page_search,
    page_session,
    page_sessions,
)
from benchtape.view.page_session import NotFound
from benchtape.view.request_limits import BadParameter, check_names
from benchtape.view.shell import assets, page, problem
from benchtape.view.viewer import Viewer

PageFn = Callable[[Viewer, BrowsingStore, Mapping[str, str]], Any]
LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
WILDCARD = frozenset({"0.0.0.0", "::", ""})
POLICY = "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
HEADERS = [
    (b"content-security-policy", POLICY.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
]


def json_response(value: Any, status: int = 200) -> Response:
    """A JSON twin: the value the CLI's `--json` prints, as the CLI serializes it."""
    return Response(orjson.dumps(value, option=orjson.OPT_INDENT_2, default=str) + b"\n", status_code=status, media_type="application/json")


def _endpoint(v: Viewer, html: PageFn, twin: PageFn | None) -> Callable[[Request], Awaitable[Response]]:
    """A page: its HTML, or with `?format=json` its twin. Bad input (an id that names nothing)
    is the message and the fix, as the CLI says them, never a traceback."""

    async def handle(request: Request) -> Response:
        params = {**request.query_params, **request.path_params}
        return await v.run(lambda: answer(params))

    def answer(params: dict[str, str]) -> Response:
        wants_json = params.pop("format", None) == "json"
        try:
            check_names(params)
            store = v.store()
            if wants_json and twin is not None:
                return json_response(twin(v, store, params))
            return HTMLResponse(html(v, store, params))
        except BadParameter as exc:
            return _problem(wants_json, "bad request", exc.what, exc.fix, 400)
        except NotFound as exc:
            return _problem(wants_json, "nothing to show", str(exc), None, 404)
        except BenchtapeError as exc:
            what, fix = getattr(exc, "what", str(exc)), getattr(exc, "fix", None)
            return _problem(wants_json, "not found", what, fix, 404)

    return handle


def _problem(wants_json: bool, title: str, what: str, fix: str | None, status: int) -> Response:
    if wants_json:
        return json_response({"error": what, "fix": fix}, status)
    return HTMLResponse(page(title, problem(title, what, fix)), status_code=status)


def make_app(v: Viewer, *, host: str = "127.0.0.1") -> ASGIApp:
    """The viewer's app over `v`'s store, accepting the Host names of loopback and of `host`."""
    static = assets()

    def one(path: str, html: PageFn, twin: PageFn | None) -> Route:
        return Route(path, _endpoint(v, html, twin), methods=["GET"])

    async def event_stream(request: Request) -> Response:
        return StreamingResponse(events.stream(v, dict(request.query_params)), media_type="text/event-stream", headers={"x-accel-buffering": "no"})

    def asset(request: Request) -> Response:
        found = static.get(request.path_params["name"])
        if found is None:
            return Response(b"not found\n", status_code=404, media_type="text/plain")
        return Response(found[0], media_type=found[1])

    routes = [
        one("/", page_sessions.index_page, page_sessions.index_json),
        one("/runs", page_sessions.runs_page, page_sessions.runs_json),
        one("/run/{handle:path}", page_sessions.run_page, page_sessions.run_json),
        one("/session/{handle:path}", page_session.session_page, lambda v, s, q: page_session.session_json(s, q["handle"])),
        one("/changes/{handle:path}", page_session.changes_page, lambda v, s, q: page_session.changes_json(s, q["handle"])),
        one("/raw/{handle:path}", page_session.raw_page_html, lambda v, s, q: page_session.raw_json(s, q["handle"], q)),
        one("/evaluations", page_evaluation.list_page, page_evaluation.list_json),
        one("/evaluation/{name}/side", lambda v, s, q: page_evaluation.side_page(v, s, q["name"], q), lambda v, s, q: page_evaluation.side_json(v, s, q["name"], q)),
        one("/evaluation/{name}", page_evaluation.evaluation_page, lambda v, s, q: page_evaluation.evaluation_json(v, s, q["name"])),
        one("/gradings", page_gradings.list_page, page_gradings.list_json),
        one("/gradings/diff", page_gradings.diff_page, page_gradings.diff_json),
        one("/search", page_search.search_page, page_search.search_json),
        Route("/events", event_stream, methods=["GET"]),
        Route("/static/{name}", asset, methods=["GET"]),
    ]
    app = Starlette(routes=routes)
    app.state.viewer = v
    return Guard(app, hosts=allowed_hosts(host))


def allowed_hosts(host: str) -> frozenset[str] | None:
    """The Host names a request may carry; None (any) when serving on every address, where the
    names people reach it by cannot be known."""
    name = host.strip("[]").lower()
    if name in WILDCARD:
        return None
    return LOOPBACK | {name}


def host_name(header: str) -> str:
    """`127.0.0.1:8700` → `127.0.0.1`, `[::1]:8700` → `::1`, `Example.org` → `example.org`."""
    text = header.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


class Guard:
    """Before every request: its Host must be this viewer's and its method GET or HEAD; after
    it, the security headers on every response."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str] | None):
        self.app, self.hosts = app, hosts

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or [])
        host = headers.get(b"host", b"").decode("latin-1")
        if self.hosts is not None and host_name(host) not in self.hosts:
            await _refuse(send, 403, f"refused: Host {host!r} is not this viewer's (it answers to {', '.join(sorted(self.hosts))})\n")
            return
        if scope["method"] not in ("GET", "HEAD"):
            await _refuse(send, 405, "benchtape view only reads: GET and HEAD\n", [(b"allow", b"GET, HEAD")])
            return

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message["headers"] = [*message.get("headers", []), *HEADERS]
            await send(message)

        await self.app(scope, receive, with_headers)


async def _refuse(send: Callable[[Message], Awaitable[None]], status: int, text: str, extra: list[tuple[bytes, bytes]] | None = None) -> None:
    body = text.encode()
    await send({"type": "http.response.start", "status": status, "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode()), *(extra or []), *HEADERS]})
    await send({"type": "http.response.body", "body": body})
