"""One session (`/session/HANDLE`), its changes as a patch (`/changes/HANDLE`) and its raw
lines (`/raw/HANDLE`).

The session is `benchtape show`'s (`replay.timeline.show`), drawn by the static report's
own `session_section`; its JSON twin is `show --json` (`replay.timeline.show_document`), the
changes' is `show --diff --json`. A session still being recorded stays live.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchtape.app.sessions import BrowsingStore, NoDiff, Shown, raw_page, resolve, session_status, short_handles, show, show_document, workspace_changes
from benchtape.replay.html import Entry, Window, changes, esc, session_section
from benchtape.view.request_limits import MAX_POSITION
from benchtape.view.shell import href, live_url, page, region, session_href
from benchtape.view.viewer import Viewer

RAW_PAGE = 500  # raw lines per page
TIMELINE_PAGE = 2500  # top-level timeline rows per page (a 2,000-action session is one page)


class NotFound(Exception):
    """A page about a session that has nothing of that kind to show (the message says why)."""


def _status(shown: Shown) -> str:
    return session_status(shown.session, shown.verdicts) if shown.session.finished else "incomplete"


def session_json(store: BrowsingStore, handle: str) -> Any:
    """`benchtape show HANDLE --json`."""
    return show_document(store, show(store, handle))


def session_regions(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> dict[str, str]:
    return _regions(store, show(store, q["handle"]), q)


def _regions(store: BrowsingStore, shown: Shown, q: Mapping[str, str]) -> dict[str, str]:
    entry = Entry.of(store, shown.row, shown.session, shown.verdicts)
    handle = q["handle"]
    window = Window(_number(q.get("rows")) - 1, TIMELINE_PAGE, lambda first: href(session_href(handle), {"rows": first + 1}))
    return {"session": session_section(entry, _status(shown), anchored=True, window=window)}


def session_done(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> bool:
    """A finished and graded session's page changes no more (a later regrade aside: reload to
    see it); a finished one waits for the grading live grading gives it."""
    shown = show(store, q["handle"])
    return shown.session.finished and bool(shown.verdicts)


def session_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    handle = q["handle"]
    shown = show(store, handle)
    sid = shown.row.id
    regions = _regions(store, shown, q)
    run_handle = short_handles(store, "runs", [shown.row.run_id])[shown.row.run_id]
    raw_total = raw_page(store, sid, 1, 0).total
    links = [
        f'run <a href="{esc("/run/" + run_handle)}"><code>{esc(run_handle)}</code></a>',
        f'<a href="{esc(session_href(handle, "changes"))}">changes as a patch</a>',
        f'<a href="{esc(session_href(handle, "raw"))}">raw lines ({raw_total})</a>' if raw_total else "no raw lines",
        '<span class="keys">keys: <kbd>j</kbd>/<kbd>k</kbd> next/previous call, <kbd>o</kbd> open/close it</span>',
    ]
    control = '<p class="tag">the negative control: the no-op agent</p>' if shown.control else ""
    body = f'<p class="crumbs">{" · ".join(links)}</p>{control}' + region("session", regions["session"])
    # the stream names the session by its whole id: a short handle unique now can be made
    # ambiguous by the next session the run starts, while the page is still live
    live = None if shown.session.finished and shown.verdicts else live_url("session", {**q, "handle": sid}, regions)
    return page(f"{shown.row.scenario} #{shown.row.attempt}", body, active="sessions", json_href=href(session_href(handle), {"format": "json"}), live=live)


def changes_json(store: BrowsingStore, handle: str) -> Any:
    """`benchtape show HANDLE --diff --json`; NotFound (the CLI's exit 1) when there is no diff."""
    shown = show(store, handle)
    try:
        return workspace_changes(store, shown.session).to_dict()
    except NoDiff as exc:
        raise NotFound(f"no diff: {exc}") from None


def changes_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    handle = q["handle"]
    shown = show(store, handle)
    try:
        fragment = changes(workspace_changes(store, shown.session))
    except NoDiff as exc:
        fragment = changes(None, str(exc))
    head = f'<h1>Changes · <a href="{esc(session_href(handle))}">{esc(shown.row.scenario)} #{esc(shown.row.attempt)}</a></h1><p class="meta">session <code>{esc(shown.row.id)}</code>: its final workspace against the tree benchtape staged (<code>benchtape show {esc(handle)} --diff | git apply</code> applies it)</p>'
    return page(f"changes {shown.row.scenario}", head + fragment, active="sessions", json_href=href(session_href(handle, "changes"), {"format": "json"}))


def raw_json(store: BrowsingStore, handle: str, q: Mapping[str, str]) -> Any:
    sid = resolve(store, "sessions", handle)
    got = raw_page(store, sid, _first(q), RAW_PAGE)
    return {"session_id": sid, "first": got.first, "total": got.total, "lines": got.lines}


def raw_page_html(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    handle = q["handle"]
    sid = resolve(store, "sessions", handle)
    got = raw_page(store, sid, _first(q), RAW_PAGE)
    rows = "".join(f'<tr id="L{n}"><td class="num"><a href="#L{n}">{n}</a></td><td class="raw">{esc(line)}</td></tr>' for n, line in enumerate(got.lines, start=got.first))
    base = session_href(handle, "raw")
    pager = []
    if got.first > 1:
        pager.append(f'<a href="{esc(href(base, {"from": max(1, got.first - RAW_PAGE)}))}">← lines before</a>')
    if got.first + len(got.lines) <= got.total:
        pager.append(f'<a rel="next" href="{esc(href(base, {"from": got.first + len(got.lines)}))}">lines after →</a>')
    head = f'<h1>Raw lines · <a href="{esc(session_href(handle))}"><code>{esc(handle)}</code></a></h1><p class="meta">the harness\'s output as received (after redaction), lines {got.first}–{got.first + len(got.lines) - 1} of {got.total}</p>'
    table = f'<table class="raw">{rows}</table>' if rows else '<p class="none">no raw lines stored</p>'
    return page(f"raw {handle}", head + table + f'<p class="pager">{" ".join(pager)}</p>', active="sessions", json_href=href(base, {**q, "format": "json", "handle": None}))


def _first(q: Mapping[str, str]) -> int:
    return _number(q.get("from"))


def _number(text: str | None) -> int:
    """A 1-based position from a parameter (anything else: 1)."""
    try:
        return min(max(1, int(text or 1)), MAX_POSITION)
    except ValueError:
        return 1
