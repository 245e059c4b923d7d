"""Fuzzing a real `benchtape view` over HTTP (issue 44): hostile paths, query values and Host
headers, against a store whose every stored field a user can see holds a script.

The store is written through the Store API (a run, sessions, actions, raw lines, a grading
with verdicts and outcomes: scenario, harness, model, prompt, tool names and outputs, reasons
and notes, each a planted payload), then served by `benchtape view` as its own process;
hypothesis draws the requests. Each answer is judged:

- traceback: a 5xx (and every "Traceback" in the viewer's log counts too);
- hang: no whole answer within the time limit, or the viewer died;
- escape: a Host that is not loopback answered anything but 403; a body holding the canary
  planted outside the store's folder (a traversal); an HTML page holding a payload as markup
  (unescaped), or a response without the content-security-policy;
- refused: any other 4xx; ok: 2xx or 3xx.

Bounded in count (per kind) and in time (the whole run), and the viewer's descriptors are
read from /proc at the end: more than DESCRIPTOR_BOUND is a failure (the leak of issue 44).
"""

from __future__ import annotations

import http.client
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from urllib.parse import quote

from fuzzkit import Figures
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

MARK = "xssMARK"
PAYLOADS = [
    f"<script>{MARK}()</script>",
    f'<img src=x onerror="{MARK}()">',
    f'"><svg onload={MARK}()>',
    f"'><iframe srcdoc='<script>{MARK}()</script>'>",
    f"javascript:{MARK}()",
    f"</textarea></title><script>{MARK}()</script>",
    f"{{{{constructor.constructor('{MARK}()')()}}}}",
]
# what a payload looks like once it has become markup (escaped, none of these can appear)
AS_MARKUP = re.compile(rf"<script>{MARK}|<img src=x onerror|<svg onload={MARK}|<iframe srcdoc|href=\"javascript:{MARK}|src=\"javascript:", re.I)
CANARY = "benchtape-fuzz-canary-7f3a"
LOOPBACK = {"127.0.0.1", "localhost", "::1"}
ROUTES = ["/", "/runs", "/run/{h}", "/session/{h}", "/changes/{h}", "/raw/{h}", "/evaluations", "/evaluation/{h}", "/evaluation/{h}/side", "/gradings", "/gradings/diff", "/search", "/events", "/static/{h}"]
KEYS = ["limit", "since", "until", "before", "from", "outcome", "q", "run", "scenario", "harness", "model", "bench", "task", "a", "b", "format", "page", "controls", "h.list", "handle", "name", "limit", "since", "until", "from"]
DESCRIPTOR_BOUND = 120


# ---------------------------------------------------------------- the store


def planted_store(folder: Path) -> tuple[Path, dict[str, str]]:
    """A store with a payload in every field the pages show; the ids the requests may name."""
    from benchtape.core.model import Action
    from benchtape.core.results import Result
    from benchtape.store.database import Store

    db = folder / ".benchtape" / "benchtape.db"
    store = Store(db)
    ids: dict[str, str] = {}
    for n, payload in enumerate(PAYLOADS):
        run = store.new_run(payload[:40], harness=payload, model=payload, bench_path=payload, argv=["benchtape", "run", payload])
        sid = store.new_session(run, payload, harness=payload, model=payload, params={"p": payload})
        calls = [
            Action("session.started", {"scenario": payload, "harness": payload, "model": payload, "prompt": payload, "work_dir": payload}),
            Action("message.user", {"text": payload}),
            Action("thinking", {"text": payload}),
            Action("tool.call", {"call_id": "c1", "tool": payload, "input": {"file_path": payload, "command": payload}}),
            Action("tool.result", {"call_id": "c1", "output": payload, "is_error": True}),
            Action("message.assistant", {"text": payload}),
            Action("metrics", {"cost_usd": 0.01, "tokens_in": 10, "tokens_out": 5, "model": payload}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "wall_ms": 1000.0, "reason": payload}),
        ]
        store.append(sid, calls)
        store.append_raw(sid, [(1, payload), (2, '{"type": "x", "text": ' + repr(payload) + "}")])
        grading = store.new_grading("live", checkset_sha256="0" * 64, catalog_version="1", bench_path=payload, run_id=run, note=payload)
        spec = {"type": "contains", "value": payload}
        result = Result.of(n % 2 == 0, payload, {"x": payload})
        store.add_verdicts(grading, sid, [{"check_path": f"checks[0] {payload}", "type": "contains", "spec": spec, "spec_sha256": f"{n:064d}", "result": result}])
        store.add_outcome(grading, sid, "failed" if n % 2 else "passed", payload)
        ids.update({f"run{n}": run, f"session{n}": sid, f"grading{n}": grading})
    store.close()
    return db, ids


# ---------------------------------------------------------------- the requests


def _segment() -> st.SearchStrategy[str]:
    hostile = st.sampled_from(["..", "%2e%2e", "%2e%2e%2f", "..%2f..%2f..%2fetc%2fpasswd", "%00", "%2f", "%5c..%5c", "....//", "%252e%252e", "~", ".", "%ff", "%c0%ae%c0%ae", "etc/passwd", "latest", CANARY, "a" * 300, "a" * 5000])
    return st.one_of(hostile, st.text(max_size=40).map(lambda t: quote(t, safe="")), st.sampled_from(PAYLOADS).map(lambda t: quote(t, safe="")))


@st.composite
def path_request(draw: Any) -> dict[str, Any]:
    route = draw(st.sampled_from(ROUTES))
    parts = [draw(_segment()) for _ in range(draw(st.integers(1, 4)))]
    path = route.replace("{h}", "/".join(parts)) if "{h}" in route else route + draw(st.sampled_from(["", "/", "/" + "/".join(parts)]))
    return {"path": path, "host": None, "method": "GET"}


# which pages read which query value (a value sent where it is read reaches the code that parses it)
READS = {
    "limit": ["/", "/runs", "/run/latest"], "since": ["/", "/run/latest"], "until": ["/", "/run/latest"], "before": ["/", "/runs", "/run/latest"],
    "outcome": ["/", "/run/latest"], "run": ["/"], "scenario": ["/", "/run/latest"], "harness": ["/"], "model": ["/"], "bench": ["/"], "controls": ["/", "/runs"],
    "from": ["/raw/latest", "/evaluation/e/side"], "q": ["/search"], "task": ["/evaluation/e/side"], "a": ["/gradings/diff", "/evaluation/e/side"],
    "b": ["/gradings/diff", "/evaluation/e/side"], "format": ["/", "/session/latest", "/gradings"], "page": ["/events"], "h.list": ["/events"],
}
BOUNDARIES = [
    "0", "-1", "1", "100000", "100001", str(1 << 63), str((1 << 63) - 1), str(-(1 << 63) - 1), "99999999999999999999999", "9" * 400, "1e9", "nan", "inf", "0x10", " 5", "٣",
    "0001-01-01", "9999-12-31", "1970-01-01", "1969-12-31", "2026-02-30", "99999-01-01", "2026-1-1", "latest", "passed", "json", "", " ",
]


def _value() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(BOUNDARIES),
        st.sampled_from(BOUNDARIES),  # twice: the boundaries are where the bugs were
        st.integers(-(1 << 70), 1 << 70).map(str),
        st.text(max_size=60),
        st.sampled_from(PAYLOADS),
    )


@st.composite
def query_request(draw: Any) -> dict[str, Any]:
    pairs = [(draw(st.sampled_from(KEYS)), draw(_value())) for _ in range(draw(st.integers(1, 3)))]
    route = draw(st.sampled_from(READS.get(pairs[0][0], ["/"])))
    query = "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)
    return {"path": f"{route}?{query}", "host": None, "method": "GET", "stream": route == "/events"}


@st.composite
def host_request(draw: Any) -> dict[str, Any]:
    host = draw(
        st.one_of(
            st.sampled_from([
                "evil.example", "127.0.0.1.evil.example", "localhost.evil.example", "evil.example:80@127.0.0.1", "127.0.0.1@evil.example",
                "[::1].evil", "[::ffff:127.0.0.1]", "0.0.0.0", "127.1", "2130706433", "0x7f.0.0.1", "LOCALHOST", "localhost.", "127.0.0.1:99999",
                " 127.0.0.1", "127.0.0.1\t", "", "[::1]", "[::1]:8080", "localhost:1", "127.0.0.1, evil.example", "ŀocalhost",
            ]),
            st.text(alphabet=st.characters(min_codepoint=33, max_codepoint=126), max_size=40),
        )
    )
    path = draw(st.sampled_from(["/", "/runs", "/session/latest", "/gradings", "/static/view.js"]))
    method = draw(st.sampled_from(["GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "TRACE"]))
    return {"path": path, "host": host, "method": method}


@st.composite
def xss_request(draw: Any, ids: dict[str, str]) -> dict[str, Any]:
    n = draw(st.integers(0, len(PAYLOADS) - 1))
    path = draw(st.sampled_from([
        "/", "/runs", f"/run/{ids[f'run{n}']}", f"/session/{ids[f'session{n}']}", f"/changes/{ids[f'session{n}']}", f"/raw/{ids[f'session{n}']}",
        "/gradings", f"/gradings/diff?a={ids['grading0']}&b={ids[f'grading{n}']}", f"/search?q={quote(PAYLOADS[n][:12])}", f"/?scenario={quote(PAYLOADS[n])}",
        f"/?harness={quote(PAYLOADS[n])}", f"/search?q={MARK}", "/evaluations", f"/evaluation/{quote(PAYLOADS[n], safe='')}",
    ]))
    return {"path": path, "host": None, "method": "GET"}


def requests(n: int, seed_value: int, ids: dict[str, str]) -> list[tuple[str, dict[str, Any]]]:
    """`n` requests of each kind, drawn by hypothesis (the generate phase only)."""
    out: list[tuple[str, dict[str, Any]]] = []
    for kind, strategy in (("v-path", path_request()), ("v-query", query_request()), ("v-host", host_request()), ("v-xss", xss_request(ids))):
        out += [(kind, r) for r in _drawn(strategy, n, seed_value)]
    return out


def fixed_requests() -> list[tuple[str, dict[str, Any]]]:
    """Every boundary value at every page that reads its key, every route with a name past any
    file's, and each hostile Host: once per run, whatever hypothesis draws besides."""
    out: list[tuple[str, dict[str, Any]]] = []
    for key, routes in READS.items():
        for route in routes:
            for value in BOUNDARIES:
                out.append(("v-query", {"path": f"{route}?{quote(key, safe='')}={quote(value, safe='')}", "host": None, "method": "GET", "stream": route == "/events"}))
    for route in ROUTES:
        if "{h}" in route:
            for segment in ("a" * 256, "a" * 5000, "..%2f..%2fsecret.txt", "%2e%2e/%2e%2e/secret.txt", "%00"):
                out.append(("v-path", {"path": route.replace("{h}", segment), "host": None, "method": "GET"}))
    return out


def _drawn(strategy: st.SearchStrategy[dict[str, Any]], n: int, seed_value: int) -> list[dict[str, Any]]:
    drawn: list[dict[str, Any]] = []

    @seed(seed_value)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(strategy)
    def collect(value: dict[str, Any]) -> None:
        drawn.append(value)

    collect()
    return drawn


# ---------------------------------------------------------------- running them


def host_of(header: str) -> str:
    text = header.strip().lower()
    if text.startswith("["):
        return text[1 : text.find("]")] if "]" in text else text
    return text.rsplit(":", 1)[0] if text.count(":") == 1 else text


def judge(kind: str, req: dict[str, Any], status: int, headers: dict[str, str], body: bytes) -> tuple[str, str]:
    what = f"{req['method']} {req['path'][:80]!r}" + (f" Host {req['host']!r}" if req["host"] is not None else "")
    if status >= 500:
        return "traceback", f"{status} for {what}"
    if req["host"] is not None and host_of(req["host"]) not in LOOPBACK and status != 403:
        return "escape", f"Host bypass: {status} for {what}"
    if CANARY.encode() + b":secret" in body:
        return "escape", f"traversal: the canary's text for {what}"
    if status != 403 and "content-security-policy" not in headers:
        return "escape", f"no content-security-policy on {status} for {what}"
    if headers.get("content-type", "").startswith("text/html"):
        found = AS_MARKUP.search(body.decode("utf-8", "replace"))
        if found:
            return "escape", f"a payload as markup ({found[0]!r}) in {what}"
    return ("ok", "") if status < 400 else ("refused", f"{status}")


class Viewer:
    def __init__(self, db: Path, cwd: Path):
        env = {**os.environ, "NO_COLOR": "1", "XDG_CONFIG_HOME": str(cwd / "xdg")}
        self.log = open(cwd / "view.log", "w+b")  # noqa: SIM115 (read at the end: a pipe left unread would fill and stall the server)
        self.proc = subprocess.Popen([sys.executable, "-m", "benchtape", "view", "--db", str(db), "--port", "0"], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=self.log, text=True, start_new_session=True)
        line = self.proc.stdout.readline() if self.proc.stdout else ""
        found = re.search(r"http://127\.0\.0\.1:(\d+)/", line)
        if not found:
            raise RuntimeError(f"benchtape view did not start: {line!r}")
        self.port = int(found[1])

    def ask(self, req: dict[str, Any], limit: float) -> tuple[int, dict[str, str], bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=limit)
        try:
            conn.putrequest(req["method"], req["path"], skip_host=True, skip_accept_encoding=True)
            conn.putheader("Host", req["host"].encode() if req["host"] is not None else f"127.0.0.1:{self.port}")  # as UTF-8 bytes: any text a client may send
            conn.endheaders()
            r = conn.getresponse()
            if req.get("stream") and r.status == 200:
                body = r.read1(65536)  # a live stream never ends: its first chunk is enough
            else:
                body = r.read()
            return r.status, {k.lower(): v for k, v in r.getheaders()}, body
        finally:
            conn.close()

    def peak_mb(self) -> int:
        try:
            return int(re.search(r"VmHWM:\s+(\d+)", Path(f"/proc/{self.proc.pid}/status").read_text())[1]) // 1024  # type: ignore[index]
        except (OSError, TypeError):
            return 0

    def descriptors(self) -> int:
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))

    def stop(self) -> str:
        try:
            os.killpg(self.proc.pid, signal.SIGINT)
            self.proc.wait(15)
        except (subprocess.TimeoutExpired, ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.log.seek(0)
        return self.log.read().decode("utf-8", "replace")


def _valid_request(req: dict[str, Any]) -> bool:
    """http.client refuses (before sending) what no HTTP request can carry: control characters."""
    return not re.search(r"[\x00-\x20\x7f]", req["path"]) and (req["host"] is None or not re.search(r"[\r\n\x00]", req["host"]))


def run_viewer_fuzz(n: int, seed_value: int, *, time_limit: float = 20.0, budget_s: float = 300.0) -> Figures:
    """`n` requests of each kind at one `benchtape view` (this interpreter's benchtape), after
    the fixed ones (fixed_requests), for at most `budget_s` seconds."""
    figures = Figures()
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="benchtape-fuzz-view-") as tmp:
        folder = Path(tmp) / "project"
        folder.mkdir()
        (Path(tmp) / "secret.txt").write_text(CANARY + ":secret\n")  # beside the project: no path may reach it
        db, ids = planted_store(folder)
        todo = [(k, r) for k, r in fixed_requests() + requests(n, seed_value, ids) if _valid_request(r)]
        viewer = Viewer(db, folder)
        try:
            for kind, req in todo:
                if time.monotonic() - started > budget_s:
                    break
                figures.inputs[kind] += 1
                t0 = time.monotonic()
                try:
                    status, headers, body = viewer.ask(req, time_limit)
                    outcome, detail = judge(kind, req, status, headers, body)
                except (TimeoutError, http.client.HTTPException, OSError) as exc:
                    outcome, detail = ("hang" if viewer.proc.poll() is None else "crash"), f"{type(exc).__name__} for {req['method']} {req['path'][:80]!r}"
                seconds = time.monotonic() - t0
                if seconds > figures.slowest:
                    figures.slowest, figures.slowest_input = seconds, f"{kind} {req['path'][:60]!r}"
                figures.outcomes[(kind, outcome)] += 1
                if outcome in Figures.BAD or outcome == "unclear":
                    figures.failures.append((kind, outcome, detail))
                if viewer.proc.poll() is not None:
                    break
            held = viewer.descriptors() if viewer.proc.poll() is None else 0
            figures.peak_rss_mb, figures.peak_input = viewer.peak_mb(), "viewer (its peak RSS, not a worker's)"
        finally:
            log = viewer.stop()
    if held > DESCRIPTOR_BOUND:
        figures.outcomes[("v-path", "crash")] += 1
        figures.failures.append(("v-path", "crash", f"the viewer held {held} descriptors at the end (bound {DESCRIPTOR_BOUND})"))
    if "Traceback" in log:  # each distinct error the viewer logged (a 5xx was counted as its request's)
        for where in sorted(set(re.findall(r"\n(\w+(?:Error|Exception)[^\n]{0,120})", log)))[:10] or ["a traceback"]:
            figures.inputs["v-log"] += 1
            figures.outcomes[("v-log", "traceback")] += 1
            figures.failures.append(("v-log", "traceback", where))
    figures.seconds = time.monotonic() - started
    return figures
