"""XML and HTML recognizers for the structured checks.

XML is decided by a real parser (expat, through ElementTree: well-formed or not; it
resolves no external entities and refuses entity-expansion bombs). HTML has no such
verdict, since browsers accept any text, so HTML means a tokenizer found an explicit
tag of a known HTML element (or a custom element, which has a hyphen): plain prose,
`a < b`, or an invented `<y>` tag is not HTML.
"""

from __future__ import annotations

import html
import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field

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
    embedded in the text: each `<name` is tried up to the close tag that balances it."""
    tries = 0
    balancing: dict[int, int] | None = None  # built on the first element that needs it
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
            open_at = nxt.start()
        else:
            open_at = start
        gt = text.find(">", open_at)
        if gt < 0:
            continue
        if text[gt - 1] == "/":
            end = gt + 1  # a self-closing element
        else:
            if balancing is None:
                balancing = _balancing_close_tags(text)
            end = balancing.get(open_at, -1)
            if end < 0:
                continue
        tries += 1
        if tries > _MAX_XML_TRIES:
            return XmlFinding(False, error="no well-formed XML found (gave up after many candidates)")
        found = parse_xml(text[start:end])
        if found.ok:
            return XmlFinding(True, found.root, None, start, end)
    return XmlFinding(False, error="no well-formed XML element found")


_TAG = re.compile(r"<(/?)([A-Za-z_][\w.\-]*(?::[A-Za-z_][\w.\-]*)?)(?=[\s/>])[^<>]*>")


def _balancing_close_tags(text: str) -> dict[int, int]:
    """Each open tag's offset -> the end of the close tag that brings the nesting of its
    own name back to zero, for the whole text in one pass (a scan forward from every open
    tag was quadratic: seconds on a few thousand unclosed `<a>`)."""
    open_tags: dict[str, list[int]] = {}
    ends: dict[int, int] = {}
    for m in _TAG.finditer(text):
        name = m.group(2)
        if m.group(1):
            stack = open_tags.get(name)
            if stack:
                ends[stack.pop()] = m.end()
        elif not m.group(0).endswith("/>"):
            open_tags.setdefault(name, []).append(m.start())
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
    starts_with_markup: bool = False  # the text opens with a tag, comment or declaration

    @property
    def tags(self) -> list[str]:
        return [t for t, _ in self.elements]


# A tokenizer of start tags by bounded regexes rather than html.parser, which is
# quadratic on unclosed tags ("<a <a <a …": 30 s on 60 KB); every repetition here is
# bounded or cannot run past a '<' or '>', so a scan is linear in the text.
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)", re.DOTALL)
_RAW_TEXT = re.compile(r"<(script|style)\b[^<>]{0,4096}>.*?(?:</\1\s*>|\Z)", re.DOTALL | re.IGNORECASE)
_ATTR = r"""[^\s"'<>/=]{1,256}(?:\s*=\s*(?:"[^"<>]{0,4096}"|'[^'<>]{0,4096}'|[^\s"'=<>`]{1,4096}))?"""
_START_TAG = re.compile(r"<([A-Za-z][A-Za-z0-9:-]{0,63})((?:\s+" + _ATTR + r")*)\s*/?>")
_ONE_ATTR = re.compile(r"""([^\s"'<>/=]{1,256})(?:\s*=\s*("[^"<>]{0,4096}"|'[^'<>]{0,4096}'|[^\s"'=<>`]{1,4096}))?""")
_MARKUP_OPENING = re.compile(r"<(?:[A-Za-z/!?])")


def scan_html(text: str) -> HtmlScan:
    scan = HtmlScan(starts_with_markup=bool(_MARKUP_OPENING.match(text.lstrip())))

    def keep_tag(m: re.Match[str]) -> str:
        return m.group(0)[: m.group(0).index(">") + 1]  # keep <script …>, drop its raw text

    body = _RAW_TEXT.sub(keep_tag, _COMMENT.sub(" ", text))
    for m in _START_TAG.finditer(body):
        tag = m.group(1).lower()
        if not is_html_element(tag):
            continue
        attrs: dict[str, str] = {}
        for a in _ONE_ATTR.finditer(m.group(2)):
            value = a.group(2) or ""
            if value[:1] in ("'", '"'):
                value = value[1:-1]
            attrs.setdefault(a.group(1).lower(), html.unescape(value))
        scan.elements.append((tag, attrs))
    return scan


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
