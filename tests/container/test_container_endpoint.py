"""The container level with a model endpoint: `network: none` kept, exactly one loopback
endpoint forwarded in (sandbox/relay.py), every other address unreachable; and the
real Claude Code and Codex, mounted read-only from benchtape's pinned folder, complete a
scripted session inside benchtape's base image."""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli import benchtape  # noqa: E402
from realagents import need  # noqa: E402

pytestmark = [pytest.mark.docker, pytest.mark.xdist_group("docker")]
ROOT = Path(__file__).resolve().parents[2]

# From inside: the forwarded URL answers; the host's other loopback port and an outside
# address (TEST-NET-1: the kernel refuses at once, no packet leaves an interface-less netns) do not.
PROBE = r"""
import json, socket, sys, urllib.request
url, other = sys.argv[1], int(sys.argv[2])
out = {"forwarded": urllib.request.urlopen(url, timeout=10).read().decode()}
for name, addr in (("other_loopback_port", ("127.0.0.1", other)), ("outside", ("192.0.2.1", 80))):
    s = socket.socket(); s.settimeout(3)
    try:
        s.connect(addr); out[name] = "connected"
    except OSError as exc:
        out[name] = type(exc).__name__
print(json.dumps(out))
"""


class _Hello(BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802
        body = f"hello from {self.server.server_address[1]}".encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


def _server() -> ThreadingHTTPServer:
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def test_one_endpoint_is_forwarded_and_nothing_else(tmp_path, base_image):
    from benchtape.sandbox.container_level import ContainerLevel
    from benchtape.spec.bench import load_bench

    model, other = _server(), _server()
    try:
        (tmp_path / "b.yaml").write_text("harness: mock\nscenarios:\n  - {name: s, prompt: p, sandbox: container, interactive: false}\n")
        scenario = load_bench(tmp_path / "b.yaml").scenarios[0]
        with ContainerLevel().open(scenario, None) as box:
            url = f"http://127.0.0.1:{model.server_address[1]}/s/slot"
            assert box.forward(url) == url  # the agent is given the server's own URL
            proc = box.spawn(["python3", "-c", PROBE, url, str(other.server_address[1])], {}, b"")
            lines = [c.text for c in proc.lines(1 << 20)]
            assert proc.wait(30) == 0, proc.stderr_tail()
        seen = json.loads(lines[-1])
        assert seen["forwarded"] == f"hello from {model.server_address[1]}"
        assert seen["other_loopback_port"] == "ConnectionRefusedError"
        assert seen["outside"] in ("OSError", "TimeoutError", "ConnectionRefusedError") and seen["outside"] != "connected"
    finally:
        model.shutdown()
        other.shutdown()


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_the_real_tool_completes_a_scripted_session_in_a_container(tool, tmp_path, base_image):
    need(tool)
    import yaml

    bench = yaml.safe_load((ROOT / "fixtures-red" / "scripted" / f"{tool}.yaml").read_text())
    for sc in bench["scenarios"]:
        sc["testdata"] = str(ROOT / "fixtures-red" / "demo" / "calc")
    bench["x-benchtape-allow-outside"] = [str(ROOT / "fixtures-red" / "demo" / "calc")]  # the demo testdata, from a bench in tmp
    other = _server()  # a host loopback port that is not the model's
    probe = f"python3 -c \"import socket\nfor a in (('127.0.0.1', {other.server_address[1]}), ('192.0.2.1', 80)):\n  s = socket.socket(); s.settimeout(3)\n  print('reached' if s.connect_ex(a) == 0 else 'unreachable', a[1])\""
    bench["scenarios"][0]["mock"]["steps"].insert(-1, {"tool": "Bash", "input": {"command": probe}})
    (tmp_path / "b.yaml").write_text(yaml.safe_dump(bench))
    report = tmp_path / "r.json"
    try:
        out = benchtape("run", tmp_path / "b.yaml", "--sandbox", "container", "--scenario", "fixes-the-bug", "--db", tmp_path / "s.db", "--report-json", report, cwd=tmp_path)
    finally:
        other.shutdown()
    assert out.returncode == 0, out.stdout + out.stderr
    [r] = json.loads(report.read_text())["results"]
    assert r["status"] == "pass", r["checks"]
    started = r["session"]["actions"][0]["data"]
    assert started["sandbox"] == "container" and started["model_endpoint"]["kind"] == "scripted"
    assert r["session"]["calls"] and all(c["outcome"] != "error" for c in r["session"]["calls"]), r["session"]["calls"]
    assert not [a for a in r["session"]["actions"] if a["kind"] == "error"]
    said = str(r["session"]["calls"][-1]["output"])  # the agent's own probe, from inside: only the model was reachable
    assert f"unreachable {other.server_address[1]}" in said and "unreachable 80" in said and "reached" not in said.replace("unreachable", "")
