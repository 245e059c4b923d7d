"""`/search?q=…`: sessions whose prompts, messages, final outputs or tool calls hold the text,
newest first, each hit linking to its row of the session's timeline."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchtape.app.sessions import BrowsingStore, lines_of
from benchtape.replay.html import badge, esc
from benchtape.view.fulltext import Found, search
from benchtape.view.shell import href, page, session_href
from benchtape.view.viewer import Viewer


def _found(store: BrowsingStore, q: Mapping[str, str]) -> Found | None:
    text = (q.get("q") or "").strip()
    if not text:
        return None
    return search(store, text, before=q.get("before") or None, controls=bool(q.get("controls")))


def search_json(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> Any:
    found = _found(store, q)
    return found.to_dict() if found else {"query": "", "sessions": [], "scanned_sessions": 0, "seconds": 0, "next_before": None}


def search_page(v: Viewer, store: BrowsingStore, q: Mapping[str, str]) -> str:
    found = _found(store, q)
    text = (q.get("q") or "").strip()
    if found is None:
        body = '<h1>Search</h1><p class="meta">type in the box above: prompts, messages, final outputs, tool inputs and outputs, newest session first</p>'
        return page("search", body, json_href=None)
    lines = {line.id: line for line in lines_of(store, [(s.session_id, "") for s in found.sessions])}
    items = []
    for s in found.sessions:
        line = lines[s.session_id]
        link = session_href(line.handle)
        hits = "".join(
            f'<li><a href="{esc(link)}#a-{h.seq}"><small>#{h.seq} {esc(h.where)}{(" " + esc(h.tool)) if h.tool else ""}</small></a> '
            f'<span class="snippet">{esc(h.before)}<mark>{esc(h.match)}</mark>{esc(h.after)}</span></li>'
            for h in s.hits
        )
        more = f'<li class="none">and {s.count - len(s.hits)} more in this session</li>' if s.count > len(s.hits) else ""
        items.append(
            f'<li class="found" data-nav><a href="{esc(link)}"><code>{esc(line.handle)}</code></a> {esc(line.scenario)} #{line.attempt} {badge(line.outcome)} '
            f'<small>{esc(line.harness or "")}{("/" + esc(line.model)) if line.model else ""}</small><ul class="hits">{hits}{more}</ul></li>'
        )
    state = f"searched {found.scanned} session(s) in {found.seconds * 1000:.0f} ms"
    more = f' · <a rel="next" href="{esc(href("/search", {**q, "before": found.next_before}))}">search older sessions →</a>' if found.next_before else " · every session searched"
    body = f'<h1>Search <small>“{esc(text)}”</small></h1><p class="meta">{len(found.sessions)} session(s) · {state}{more}</p><ol class="found">{"".join(items)}</ol>'
    return page(f"search {text}", body, json_href=href("/search", {**q, "format": "json"}), query=text)
