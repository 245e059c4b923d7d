"""XML and HTML recognizers for the structured checks.

XML is decided by a real parser (expat, through ElementTree: well-formed or not; it
resolves no external entities and refuses entity-expansion bombs). HTML has no such
verdict, since browsers accept any text, so HTML means a tokenizer found an explicit
tag of a known HTML element (or a custom element, which has a hyphen): plain prose,
`a < b`, or an invented `<y>` tag is not HTML.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from html.parser import HTMLParser

# ---------------------------------------------------------------- XML


@dataclass(frozen=True)
class XmlFinding:
    ok: bool
    root: str | None = None
    error: str | None = None
    start: int = 0
    end: int = 0


def parse_xml(text: str) -> XmlFinding:
    """Whether the whole (trimmed) text is one well-formed XML document."""
    body = text.strip()
    if not body:
        return XmlFinding(False, error="the text is empty")
    try:
        root = ET.fromstring(body)
    except ET.ParseError as exc:
        return XmlFinding(False, error=f"not well-formed: {exc}")
    offset = text.find(body)
    return XmlFinding(True, _local(root.tag), None, offset, offset + len(body))


_XML_START = re.compile(r"<(\?xml\b|[A-Za-z_][\w.\-]*(?::[A-Za-z_][\w.\-]*)?)")
_MAX_XML_TRIES = 400


def find_xml(text: str) -> XmlFinding:
    """The first well-formed XML element (optionally after an `<?xml …?>` declaration)
    embedded in the text: each `<name` is tried up to each matching `</name>`, nearest first."""
    tries = 0
    for m in _XML_START.finditer(text):
        start = m.start()
        name = m.group(1)
        if name.startswith("?xml"):
            decl_end = text.find("?>", start)
            if decl_end < 0:
                continue
            nxt = _XML_START.search(text, decl_end)
            if nxt is None or nxt.group(1).startswith("?xml"):
                continue
            name = nxt.group(1)
            open_at = nxt.start()
        else:
            open_at = start
        for end in _candidate_ends(text, open_at, name):
            tries += 1
            if tries > _MAX_XML_TRIES:
                return XmlFinding(False, error="no well-formed XML found (gave up after many candidates)")
            found = parse_xml(text[start:end])
            if found.ok:
                return XmlFinding(True, found.root, None, start, end)
    return XmlFinding(False, error="no well-formed XML element found")


def _candidate_ends(text: str, open_at: int, name: str) -> list[int]:
    ends: list[int] = []
    gt = text.find(">", open_at)
    if gt > 0 and text[gt - 1] == "/":
        ends.append(gt + 1)  # a self-closing element
    for close in re.finditer(r"</" + re.escape(name) + r"\s*>", text[open_at:]):
        ends.append(open_at + close.end())
    return ends


def _local(tag: str) -> str:
    return tag.rsplit("}", 1)[-1] if isinstance(tag, str) else str(tag)


# ---------------------------------------------------------------- HTML

HTML_ELEMENTS = frozenset(
    """a abbr address area article aside audio b base bdi bdo blockquote body br button canvas
    caption cite code col colgroup data datalist dd del details dfn dialog div dl dt em embed
    fieldset figcaption figure footer form h1 h2 h3 h4 h5 h6 head header hgroup hr html i iframe
    img input ins kbd label legend li link main map mark menu meta meter nav noscript object ol
    optgroup option output p param picture pre progress q rp rt ruby s samp script search section
    select slot small source span strong style sub summary sup svg table tbody td template
    textarea tfoot th thead time title tr track u ul var video wbr math center font big tt strike""".split()
)


def is_html_element(tag: str) -> bool:
    return tag in HTML_ELEMENTS or ("-" in tag and tag[0].isalpha())


@dataclass
class HtmlScan:
    """What the tokenizer saw: HTML elements in order, with their attributes."""

    elements: list[tuple[str, dict[str, str]]] = field(default_factory=list)
    first_event: str | None = None  # tag | decl | comment | data

    @property
    def tags(self) -> list[str]:
        return [t for t, _ in self.elements]


class _Scanner(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.scan = HtmlScan()

    def _first(self, what: str) -> None:
        if self.scan.first_event is None:
            self.scan.first_event = what

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self._first("tag")
        if is_html_element(tag):
            self.scan.elements.append((tag, {k: v or "" for k, v in attrs}))

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag: str) -> None:
        self._first("tag")

    def handle_decl(self, decl: str) -> None:
        self._first("decl")

    def handle_comment(self, data: str) -> None:
        self._first("comment")

    def handle_data(self, data: str) -> None:
        if data.strip():
            self._first("data")


def scan_html(text: str) -> HtmlScan:
    parser = _Scanner()
    parser.feed(text)
    parser.close()
    return parser.scan


@dataclass(frozen=True)
class HtmlSchema:
    """The optional `value` of is-html / contains-html: {rootTag, hasElement, attrHas}."""

    root_tag: str | None = None
    has_elements: tuple[str, ...] = ()
    attr_has: tuple[tuple[str, str], ...] = ()  # (attribute, substring of its value; "" = any)

    def problems(self, scan: HtmlScan) -> list[str]:
        out: list[str] = []
        if self.root_tag is not None:
            first = scan.tags[0] if scan.tags else None
            if first != self.root_tag:
                out.append(f"root element is <{first}>, not <{self.root_tag}>")
        for tag in self.has_elements:
            if tag not in scan.tags:
                out.append(f"no <{tag}> element")
        for attr, want in self.attr_has:
            if not any(attr in attrs and want in attrs[attr] for _, attrs in scan.elements):
                out.append(f"no element has {attr}" + (f" containing {want!r}" if want else ""))
        return out
