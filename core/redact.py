"""Secrets never reach the store, a report, a snapshot or an error in clear.

Two nets, both applied to every text benchtape writes down:

- **Known values**: the values of environment variables whose name says they are secret
  (`*_API_KEY`, `*_TOKEN`, `*_SECRET*`, `*_PASSWORD`, `*_ACCESS_KEY_ID`, `*_KEY`, …), the
  names a bench lists under `share.secret_env`, and any value (an env var, a `--param`) that
  has a credential's shape. Each is redacted in the encodings an agent is likely to print it
  in: as is, JSON-escaped, base64 (standard and URL-safe, at any alignment inside a longer
  base64 text), URL-encoded and hex, and line by line for multi-line values (a key file).
- **Shapes**: credentials nobody told benchtape about, recognised by their form: cloud keys
  (AWS key ids, and secrets next to an AWS name; Google API keys), GitHub/GitLab/Slack/
  Stripe/OpenAI/Anthropic/npm/Hugging Face tokens, private key blocks, JWTs, passwords in
  URLs, bearer and basic credentials.

Every replacement stays inside one JSON string (no pattern matches a quote or half an
escape), so redacting the JSON text of an action or a raw line keeps it valid JSON.
Snapshots are redacted for known values only: a credential-shaped string in a workspace
is often what the scenario is about (a key the agent must remove), and rewriting it would
change what the checks see.
"""

from __future__ import annotations

import base64
import json
import re
import urllib.parse
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Iterable, Mapping

REDACTED = "[REDACTED]"
MIN_SECRET_LEN = 8  # shorter values (a `SORT_KEY=name`) would redact ordinary words everywhere
MIN_FORM_LEN = 8
MIN_LINE_LEN = 16  # a line of a multi-line secret (a key file's body line) redacted on its own

SECRET_NAME = re.compile(
    r"(?:^|_)(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|PASSWORD|PASSWD|PASSPHRASE|ACCESS_KEY|ACCESS_KEY_ID|"
    r"PRIVATE_KEY|KEY|CREDENTIALS?|DSN|WEBHOOK_URL|AUTH)$",
    re.IGNORECASE,
)

_BODY = r"[A-Za-z0-9+/=:,.\- \t\r\n]|\\[rnt]"  # a PEM body unit: base64, header text, (escaped) newlines
_W = "[A-Za-z0-9_]"


@dataclass(frozen=True)
class Shape:
    """A credential's form: what is kept before it, the secret itself, what is kept after.

    Speed matters (every recorded line passes here): a pattern that begins with a literal
    lets the regex engine skip ahead to it, so word boundaries are lookbehinds placed after
    that literal; a pattern that cannot begin with one runs only when one of its `markers`
    is in the text (`lower`: looked for in the lower-cased text)."""

    secret: str
    before: str = ""
    after: str = ""
    markers: tuple[str, ...] = ()
    lower: bool = False

    @property
    def pattern(self) -> re.Pattern[str]:
        return re.compile(f"(?P<a>{self.before})(?P<v>{self.secret})(?P<z>{self.after})")


SHAPES: dict[str, Shape] = {
    "private_key": Shape(rf"-----BEGIN[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----(?:{_BODY})*?(?:-----END[A-Z0-9 ]{{0,40}}PRIVATE KEY(?: BLOCK)?-----|(?!{_BODY}))"),
    "aws_key_id": Shape(rf"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)(?<!{_W}....)[0-9A-Z]{{16}}\b"),
    "aws_secret": Shape(r"[A-Za-z0-9/+]{40}", before=r"[aA][wW][sS][a-zA-Z_]{0,24}(?:[sS][eE][cC][rR][eE][tT]|[kK][eE][yY])[^A-Za-z0-9/+\n]{1,12}", after=r"(?![A-Za-z0-9/+=])", markers=("aws",), lower=True),
    "google_api_key": Shape(rf"AIza(?<!{_W}AIza)[0-9A-Za-z_-]{{35}}"),
    "github": Shape(rf"gh[pousr]_(?<!{_W}..._)[A-Za-z0-9]{{36,255}}\b"),
    "github_pat": Shape(rf"github_pat_(?<!{_W}github_pat_)[A-Za-z0-9_]{{22,255}}\b"),
    "gitlab": Shape(r"glpat-[A-Za-z0-9_-]{20,}"),
    "slack": Shape(r"xox[abposr]-[A-Za-z0-9-]{10,}"),
    "slack_webhook": Shape(r"https://hooks\.slack\.com/services/[A-Za-z0-9/_-]{20,}"),
    "stripe": Shape(rf"[rs]k_(?:live|test)_(?<!{_W}.k_...._)[A-Za-z0-9]{{16,}}", markers=("k_live_", "k_test_")),
    "openai_anthropic": Shape(r"sk-(?<![A-Za-z0-9_-]sk-)(?:ant-|proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    "npm": Shape(rf"npm_(?<!{_W}npm_)[A-Za-z0-9]{{36}}\b"),
    "huggingface": Shape(rf"hf_(?<!{_W}hf_)[A-Za-z0-9]{{34,}}\b"),
    "jwt": Shape(r"eyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}"),
    "url_password": Shape(r"[^\s@/\"\\]{3,128}", before=r"://[^\s:/@\"\\]{1,64}:", after=r"(?=@)"),
    "bearer": Shape(r"[A-Za-z0-9._~+/-]{16,}=*", before=r"[Bb][Ee][Aa][Rr][Ee][Rr]\s+", markers=("bearer",), lower=True),
    "basic_auth": Shape(r"[A-Za-z0-9+/]{12,}={0,2}", before=r"[Aa]uthorization:\s*[Bb]asic\s+", markers=("authorization",), lower=True),
}
_COMPILED = [(shape.pattern, shape.markers, shape.lower) for shape in SHAPES.values()]

# Per shape, an RE2 pattern that matches (in the UTF-8 bytes of a text) wherever the shape
# matches: a looser condition, never a stricter one (no upper bound on a negated class, whose
# char may take 4 bytes; RE2's \s is narrower than Python's, so it is only ever excluded;
# lookbehinds become a plain preceding class). Every recorded text passes through the
# redactor, and Python's re scans a text once per pattern (17 scans, ~65% of an import's
# time): RE2 runs every probe and every known value in one DFA pass, and only a text it
# flags (almost none) is scanned by the exact patterns above.
PROBES: dict[str, str] = {
    "private_key": r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY",
    "aws_key_id": r"(?:AKIA|ASIA|ABIA|ACCA|AGPA|AIDA|AROA|AIPA|ANPA|ANVA|APKA)[0-9A-Z]{16}",
    "aws_secret": r"(?i:aws)[a-zA-Z_]{0,24}(?i:secret|key)[^A-Za-z0-9/+\n]",
    "google_api_key": r"AIza",
    "github": r"gh[pousr]_[A-Za-z0-9]{16}",
    "github_pat": r"github_pat_",
    "gitlab": r"glpat-",
    "slack": r"xox[abposr]-",
    "slack_webhook": r"https://hooks\.slack\.com/services/",
    "stripe": r"[rs]k_(?:live|test)_",
    "openai_anthropic": r"(?:^|[^A-Za-z0-9_-])sk-[A-Za-z0-9_-]{20}",
    "npm": r"npm_[A-Za-z0-9]{16}",
    "huggingface": r"hf_[A-Za-z0-9]{16}",
    "jwt": r"eyJ[A-Za-z0-9_-]{10}[A-Za-z0-9_-]*\.eyJ",
    "url_password": r'://[^\s:/@"\\]+:[^\s@/"\\]{3}[^\s@/"\\]*@',
    "bearer": r"(?i:bearer)[^A-Za-z0-9._~+/-]+[A-Za-z0-9._~+/-]{16}",
    "basic_auth": r"uthorization:[^A-Za-z0-9+/]*[Bb]asic[^A-Za-z0-9+/]+[A-Za-z0-9+/]{12}",
}
assert PROBES.keys() == SHAPES.keys()


def _probe(known: list[bytes], *, shapes: bool = True) -> Any:
    """One RE2 pattern for every shape's probe (unless `shapes` is False) and every known form,
    searched in bytes (RE2's Latin-1 mode: any bytes, encoded surrogates included, are
    searchable). None when RE2 cannot take the pattern: every text then goes the exact way."""
    import re2

    pattern = b"|".join([*(f"(?:{p})".encode() for p in (PROBES.values() if shapes else ())), *(re2.escape(f) for f in known)])
    options = re2.Options()
    options.encoding = re2.Options.Encoding.LATIN1  # a byte is a char: a negated class takes any byte of a multi-byte char
    options.max_mem = 64 << 20  # room for the DFA: an RE2 out of it falls back to its slow NFA
    try:
        return re2.compile(pattern, options)
    except re2.error:
        return None


def _keep(m: re.Match[str]) -> str:
    return m.group("a") + REDACTED + m.group("z")


def redact_shapes(text: str) -> str:
    """`text` with every credential-shaped string replaced."""
    lowered: str | None = None
    for pattern, markers, lower in _COMPILED:
        if markers:
            if lower:
                lowered = text.lower() if lowered is None else lowered
                hay = lowered
            else:
                hay = text
            if not any(m in hay for m in markers):
                continue
        new = pattern.sub(_keep, text)
        if new is not text and new != text:
            text, lowered = new, None
    return text


def has_shape(text: str) -> bool:
    """Whether `text` holds something shaped like a credential."""
    return redact_shapes(text) != text


def secret_name(name: str) -> bool:
    """Whether an environment variable's (or a param's) name says its value is secret."""
    return bool(SECRET_NAME.search(name))


def secret_values(env: Mapping[str, str], extra_names: Iterable[str] = ()) -> list[str]:
    """The known secrets of an environment: values of secret-named variables, of the names a
    bench lists as secret, and any value shaped like a credential. Longest first."""
    names = set(extra_names)
    values = {v for k, v in env.items() if isinstance(v, str) and len(v) >= MIN_SECRET_LEN and (k in names or secret_name(k) or has_shape(v))}
    return sorted(values, key=len, reverse=True)


def secret_params(params: Mapping[str, Any]) -> list[str]:
    """Param values that are secrets: by their name (`api_key`, `token`) or their shape."""
    return [str(v) for k, v in params.items() if isinstance(v, str) and len(v) >= MIN_SECRET_LEN and (secret_name(str(k)) or has_shape(v))]


def forms(value: str) -> set[str]:
    """The ways `value` may appear in text an agent printed or a tool wrote."""
    raw = value.encode("utf-8", "surrogatepass")
    out = {value, json.dumps(value)[1:-1], urllib.parse.quote(value, safe=""), urllib.parse.quote_plus(value), raw.hex()}
    for enc in (base64.b64encode, base64.urlsafe_b64encode):
        full = enc(raw).decode()
        out.update((full, full.rstrip("=")))
        for shift in (0, 1, 2):  # the value inside a longer base64 text ("user:KEY" in basic auth)
            text = enc(b"\0" * shift + raw).decode().rstrip("=")
            start, end = (8 * shift + 5) // 6, (8 * (shift + len(raw))) // 6
            out.add(text[start:end])
    lines = [line.strip() for line in value.splitlines()]
    if len(lines) > 1:
        out.update(line for line in lines if len(line) >= MIN_LINE_LEN)
    return {f for f in out if len(f) >= MIN_FORM_LEN}


class Redactor:
    """Replaces known values (in every form) and credential shapes with [REDACTED]."""

    def __init__(self, secrets: Iterable[str] = ()):
        self.values = sorted({s for s in secrets if s and len(s) >= MIN_SECRET_LEN}, key=len, reverse=True)
        known = sorted({f for s in self.values for f in forms(s)}, key=len, reverse=True)
        self._known = re.compile("|".join(map(re.escape, known))) if known else None
        self._known_bytes = re.compile(b"|".join(re.escape(f.encode("utf-8", "surrogatepass")) for f in known)) if known else None
        self._probe = _probe([f.encode("utf-8", "surrogatepass") for f in known])
        # a file's bytes hold a known value only if this finds one (Python's alternation of the
        # forms scanned a codex home's 1.4 MB in 5 ms, RE2 in 2)
        self._known_probe = _probe([f.encode("utf-8", "surrogatepass") for f in known], shapes=False) if known else None

    def __call__(self, text: str) -> str:
        """`text` redacted; a text the probe finds nothing in is returned as it is, unscanned."""
        return text if self.clean(text.encode("utf-8", "surrogatepass")) else self.exact(text)

    def clean(self, data: bytes) -> bool:
        """Whether the probe finds nothing in `data`: the UTF-8 bytes of one text, or of several
        joined by newlines (every probe matches inside one text, its one `^` is met by the newline
        before it too, so what it finds in a text it finds in the join). Then each of those texts
        is its own redaction: a batch writer probes a batch once instead of each text of it."""
        return self._probe is not None and self._probe.search(data) is None

    def exact(self, text: str) -> str:
        """What `__call__` returns, always computed the slow way (every pattern scans): the
        reference the probe is tested against."""
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        return redact_shapes(text)

    def known_in_bytes(self, data: bytes) -> tuple[bytes, int]:
        """`data` with every known value (in every form) replaced, and how many were."""
        if self._known_bytes is None or (self._known_probe is not None and self._known_probe.search(data) is None):
            return data, 0
        return self._known_bytes.subn(REDACTED.encode(), data)


def redactor(secrets: Iterable[str]) -> Redactor:
    """A function replacing each secret (in every form) and every credential shape with [REDACTED].

    One per distinct set of secrets: a Redactor is a pure function of them, and the sessions of
    a run share theirs. Each one compiles its patterns and its RE2 automaton grows as it scans,
    and the store keeps every session's redactor for the run's life, so one per session held
    ~10 KB a session (a 500-session run grew 5 MB) and paid the compile each time."""
    return _redactor_of(frozenset(s for s in secrets if s and len(s) >= MIN_SECRET_LEN))


@lru_cache(maxsize=64)
def _redactor_of(values: frozenset[str]) -> Redactor:
    return Redactor(values)


def shapes_only() -> Redactor:
    return _redactor_of(frozenset())


def redact_argv(argv: list[str], redact: Callable[[str], str]) -> list[str]:
    """A command line as stored with a run: `name=value` arguments (a `--param`) whose name says
    secret lose their value, and every argument passes through `redact`."""
    out = []
    for arg in argv:
        name, eq, value = arg.partition("=")
        out.append(f"{name}={REDACTED}" if eq and value and secret_name(name.lstrip("-")) else redact(arg))
    return out


def redact_params(params: Mapping[str, Any], redact: Callable[[str], str]) -> dict[str, Any]:
    """Params as stored (runs.params, sessions.params): secret-named values dropped, the rest redacted."""
    return {k: REDACTED if isinstance(v, str) and secret_name(str(k)) and v else redact_json(v, redact) for k, v in params.items()}


def redact_json(doc: Any, redact: Callable[[str], str] | None) -> Any:
    """A JSON-able document with every secret redacted (its JSON text passed through `redact`).

    Reports carry what checks computed (exec output, evidence) beside what the store
    already redacted, so a report row is redacted as a whole before it is written.
    """
    if redact is None:
        return doc
    import orjson

    text = orjson.dumps(doc, default=str).decode()
    cleaned = redact(text)
    return doc if cleaned == text else orjson.loads(cleaned)
