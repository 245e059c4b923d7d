"""Live pages: `/events` streams (server-sent events) a page's regions again whenever the
store may have changed, rendered by the very functions that made the page.

A stream keeps one read-only connection and polls SQLite's `PRAGMA data_version` (a
counter of other connections' commits: microseconds, no lock) every POLL_S. A change is
only a hint (a checkpoint moves it too), so the page's regions are rendered again, at most
every MIN_GAP_S, and a region is sent only when it differs from what the browser shows
(the page names each region's hash in the stream's URL; the stream remembers what it sent
since). The browser swaps the region's HTML in: no templates on the client. Every read is
read to its end, so no read transaction is left open between polls to pin an old snapshot.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any

import orjson
from starlette.concurrency import run_in_threadpool

from benchtape.app.sessions import BrowsingStore, data_version
from benchtape.core.errors import BenchtapeError
from benchtape.view import page_evaluation, page_session, page_sessions
from benchtape.view.shell import region_hash
from benchtape.view.viewer import Viewer

POLL_S = 0.2
MIN_GAP_S = 0.3
KEEPALIVE_S = 15.0

Regions = Callable[[Viewer, BrowsingStore, Mapping[str, str]], dict[str, str]]
Done = Callable[[Viewer, BrowsingStore, Mapping[str, str]], bool]

# a live page → (its regions, whether it can change no more, the least time between renders:
# an evaluation's comparison reads every cell, so it is redone at most once a second)
LIVE: dict[str, tuple[Regions, Done | None, float]] = {
    "index": (page_sessions.index_regions, None, MIN_GAP_S),
    "runs": (page_sessions.runs_regions, None, MIN_GAP_S),
    "run": (page_sessions.run_regions, None, MIN_GAP_S),
    "session": (page_session.session_regions, page_session.session_done, MIN_GAP_S),
    "evaluation": (page_evaluation.evaluation_regions, None, 1.0),
}


def event(name: str, data: Any) -> str:
    """One event; its data is one JSON line (no raw newline can end it early)."""
    return f"event: {name}\ndata: {orjson.dumps(data).decode()}\n\n"


async def stream(v: Viewer, params: Mapping[str, str]) -> AsyncIterator[str]:
    """The events of one live page until the browser leaves, the page can change no more, or
    the viewer stops."""
    name = params.get("page") or ""
    if name not in LIVE:
        yield event("problem", {"what": f"no live page {name!r}"})
        return
    regions_of, done_of, gap = LIVE[name]
    shown = {k[2:]: h for k, h in params.items() if k.startswith("h.")}
    own = {k: x for k, x in params.items() if k != "page" and not k.startswith("h.")}
    store = await run_in_threadpool(v.open)
    try:
        yield "retry: 1000\n\n"
        version: int | None = None
        rendered, quiet = 0.0, time.monotonic()
        while not v.stopping.is_set():
            now = time.monotonic()
            current = data_version(store)
            if current != version and now - rendered >= gap:
                version, rendered = current, now
                try:
                    regions, done = await run_in_threadpool(_render, v, store, own, regions_of, done_of)
                except BenchtapeError as exc:
                    yield event("problem", {"what": exc.render()})
                    return
                for region, html in regions.items():
                    digest = region_hash(html)
                    if shown.get(region) != digest:
                        shown[region] = digest
                        quiet = now
                        yield event("region", {"id": region, "html": html})
                if done:
                    yield event("done", {})
                    return
            if now - quiet > KEEPALIVE_S:
                quiet = now
                yield ": keepalive\n\n"
            await asyncio.sleep(POLL_S)
    finally:
        v.release(store)


def _render(v: Viewer, store: BrowsingStore, params: Mapping[str, str], regions_of: Regions, done_of: Done | None) -> tuple[dict[str, str], bool]:
    done = done_of(v, store, params) if done_of is not None else False
    return regions_of(v, store, params), done
