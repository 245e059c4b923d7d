"""Every viewer page's frame: the bar (navigation, search, the live indicator, the JSON twin's
link), the one stylesheet and script, and how URLs and live regions are spelled.

The stylesheet is the static report's own (`benchtape.replay.html.CSS`, the comparison's
extra) plus the viewer's file; the script is one small vendored file. No page loads anything
from anywhere but this server.
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from benchtape.replay.compare_html import EXTRA_CSS
from benchtape.replay.html import CSS, esc

STATIC = Path(__file__).resolve().parent / "static"
NAV = (("/", "Sessions", "sessions"), ("/runs", "Runs", "runs"), ("/evaluations", "Evaluations", "evaluations"), ("/gradings", "Gradings", "gradings"))


def assets() -> dict[str, tuple[bytes, str]]:
    """name → (bytes, media type) of everything under /static/, read once at start."""
    css = CSS + EXTRA_CSS + (STATIC / "view.css").read_text(encoding="utf-8")
    return {
        "view.css": (css.encode(), "text/css; charset=utf-8"),
        "view.js": ((STATIC / "view.js").read_bytes(), "text/javascript; charset=utf-8"),
    }


def href(path: str, params: Mapping[str, Any] | None = None) -> str:
    """A URL of this viewer: the path as given (already quoted), the parameters that are set."""
    given = [(k, v) for k, v in (params or {}).items() if v not in (None, "", False)]
    return path + ("?" + urlencode([(k, "1" if v is True else str(v)) for k, v in given]) if given else "")


def session_href(handle: str, part: str = "session") -> str:
    """A session's stable URL by any handle `resolve` takes (RUN/SCENARIO#N: `#` quoted)."""
    return f"/{part}/" + quote(handle, safe="/")


def region_hash(html: str) -> str:
    return hashlib.blake2b(html.encode(), digest_size=8).hexdigest()


def live_url(page: str, params: Mapping[str, Any], regions: Mapping[str, str]) -> str:
    """The event stream of a live page: its name, its own parameters, and what each region
    showed when the page was made (so the stream sends only what changed since)."""
    return href("/events", {"page": page, **params, **{f"h.{name}": region_hash(html) for name, html in regions.items()}})


def region(name: str, html: str, tag: str = "div") -> str:
    return f'<{tag} id="{esc(name)}" class="region">{html}</{tag}>'


def page(title: str, body: str, *, active: str = "", json_href: str | None = None, live: str | None = None, query: str = "") -> str:
    on = ' class="on"'
    nav = "".join(f'<a href="{url}"{on if key == active else ""}>{name}</a>' for url, name, key in NAV)
    twin = f'<a class="twin" href="{esc(json_href)}" title="the same as the CLI\'s --json">JSON</a>' if json_href else ""
    live_attr = f' data-live="{esc(live)}"' if live else ""
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{esc(title)} · benchtape</title>\n"
        '<link rel="icon" href="data:,">\n<link rel="stylesheet" href="/static/view.css">\n<script src="/static/view.js" defer></script>\n</head>\n'
        f"<body{live_attr}>\n"
        f'<div class="bar"><a class="brand" href="/">benchtape</a><nav>{nav}</nav>'
        f'<form class="search" action="/search" method="get"><input type="search" name="q" value="{esc(query)}" placeholder="search prompts, outputs, tool calls  ( / )" aria-label="search"></form>'
        f'<span id="live" class="live"></span>{twin}</div>\n'
        f"<main>\n{body}\n</main>\n</body>\n</html>\n"
    )


def when(epoch: float | None) -> str:
    if not isinstance(epoch, (int, float)) or not epoch:
        return ""
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(epoch))


def seconds(ms: float | None) -> str:
    if ms is None:
        return ""
    return f"{ms / 1000:.1f}s" if ms < 600_000 else f"{ms / 60000:.1f}m"


def money(usd: float | None) -> str:
    return "unknown" if usd is None else f"${usd:.4f}"


def problem(title: str, what: str, fix: str | None = None) -> str:
    """The body of a page that could not be made: what went wrong and what to do."""
    return f'<h1>{esc(title)}</h1>\n<p class="problem">{esc(what)}</p>' + (f'<p class="fix">fix: {esc(fix)}</p>' if fix else "")
