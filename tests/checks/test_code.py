"""python, custom:exec and custom:http graders, run out of process against real mock sessions."""

from __future__ import annotations

import json
import os
import sys
import textwrap
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from gradekit import grade, spec
from mocksession import mock_session

from benchtape.checks.envelope import VERSION
from benchtape.checks.registry import CheckConfigError, CheckContext, build, catalog


@pytest.fixture(scope="module")
def session(tmp_path_factory):
    steps = [
        {"tool": "Read", "input": {"file_path": "a.txt"}},  # outcome unknown
        {"tool": "Bash", "input": {"command": "false"}},  # outcome error
        {"say": "fixed: 3 tests pass"},
    ]
    return mock_session(tmp_path_factory.mktemp("ws"), steps, files={"a.txt": "hi\n"}, metrics={"cost_usd": 0.01})


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    """A bench directory holding grader files, as a bench file's neighbours."""
    d = tmp_path_factory.mktemp("bench")
    (d / "graders").mkdir()
    (d / "graders" / "check.py").write_text(
        textwrap.dedent(
            """
            import helper  # a sibling module: the script's directory is importable

            def evaluate(output, context):
                return {"pass": helper.ok(output), "score": 0.8, "reason": "via file", "evidence": {"n": len(output)}}
            """
        )
    )
    (d / "graders" / "helper.py").write_text("def ok(output):\n    return 'fixed' in output\n")
    (d / "graders" / "echo.py").write_text(
        textwrap.dedent(
            """
            import json, os, sys
            env = json.load(sys.stdin)
            print("grader log line")  # logs before the reply are fine
            print(json.dumps({"pass": True, "score": 1, "reason": "echo", "evidence": {
                "envelope": env, "env_keys": sorted(os.environ), "cwd": os.getcwd()}}))
            """
        )
    )
    return d


def ctx_for(session, bench=None, **kw) -> CheckContext:
    return CheckContext(work_dir=Path(session.work_dir), bench_dir=bench, **kw)


# ---------------------------------------------------------------- python


def test_python_bool_pass_and_fail(session):
    yes = "def evaluate(output, context):\n    return 'fixed' in output\n"
    no = "def evaluate(output, context):\n    return 'broken' in output\n"
    r = grade({"type": "python", "value": yes}, session, ctx_for(session))
    assert r.passed and r.score == 1.0 and r.evidence == {"returned": True}
    r = grade({"type": "python", "value": no}, session, ctx_for(session))
    assert not r.passed and r.status == "FAIL" and r.score == 0.0


def test_python_inline_snippet_runs_as_madbench_runs_it(session):
    """madbench's inline source may be evaluate's body or one expression, with output, vars,
    config, session and assertion in scope; `return output.startswith(...)` was refused here."""
    body = "return output.startswith('fixed') and vars['want'] in output"
    r = grade({"type": "python", "value": body}, session, ctx_for(session, vars={"want": "tests pass"}))
    assert r.passed, r.reason
    assert not grade({"type": "python", "value": "'broken' in output"}, session, ctx_for(session)).passed
    lines = "n = len(session['calls'])\nif n > 5:\n    return False\nreturn {'pass': True, 'reason': f'{n} calls, {assertion[\"type\"]}'}\n"
    r = grade({"type": "python", "value": lines}, session, ctx_for(session))
    assert r.passed and r.reason == "2 calls, python"


def test_python_score_and_dict(session):
    src = "def evaluate(output, context):\n    return 0.4\n"
    assert grade({"type": "python", "value": src}, session).passed  # above 0 with no threshold
    assert not grade({"type": "python", "value": src, "threshold": 0.5}, session).passed
    src = "def evaluate(output, context):\n    return {'pass': False, 'score': 0.25, 'reason': 'partial', 'evidence': {'k': 1}}\n"
    r = grade({"type": "python", "value": src}, session)
    assert (r.passed, r.score, r.reason, r.evidence) == (False, 0.25, "partial", {"k": 1})


def test_python_runs_in_another_process_with_a_scrubbed_env(session, monkeypatch):
    monkeypatch.setenv("SECRET_API_KEY", "sk-do-not-leak")
    src = textwrap.dedent(
        """
        import os
        def evaluate(output, context):
            print("noise on stdout does not break the reply")
            return {"pass": True, "evidence": {"pid": os.getpid(), "secret": "SECRET_API_KEY" in os.environ,
                                               "benchtape": os.environ.get("BENCHTAPE"), "cwd": os.getcwd()}}
        """
    )
    r = grade({"type": "python", "value": src}, session, ctx_for(session))
    assert r.passed and r.score == 1.0
    assert r.evidence["pid"] != os.getpid() and r.evidence["secret"] is False and r.evidence["benchtape"] == "1"
    assert Path(r.evidence["cwd"]).resolve() == Path(session.work_dir).resolve()


def test_python_context(session):
    src = textwrap.dedent(
        """
        def evaluate(output, context):
            s = context["session"]
            return {"pass": True, "evidence": {"vars": context["vars"], "config": context["config"], "final": s["final_output"],
                    "calls": [c["name"] for c in s["calls"]], "assertion": context["assertion"]["type"], "prompt": context["prompt"]}}
        """
    )
    r = grade({"type": "python", "value": src, "config": {"min": 3}}, session, ctx_for(session, vars={"lang": "go"}))
    assert r.evidence == {"vars": {"lang": "go"}, "config": {"min": 3}, "final": "fixed: 3 tests pass", "calls": ["Read", "Bash"], "assertion": "python", "prompt": "fix it"}


def test_python_result_line_survives_a_script_printing_the_marker(session):
    """The script's own prints share the pipe with the result line; a stray line that looks
    like one (here printed at exit, after the real result) made a JSONDecodeError ERROR."""
    src = textwrap.dedent(
        """
        import atexit, sys
        atexit.register(lambda: print("@@benchtape-result@@ not json at all", file=sys.stderr))
        print("@@benchtape-result@@ [1, 2]")
        def evaluate(output, context):
            return True
        """
    )
    r = grade({"type": "python", "value": src}, session)
    assert r.status == "PASS", r.reason


def test_python_file_relative_to_the_bench(session, bench):
    r = grade({"type": "python", "value": "file://graders/check.py"}, session, ctx_for(session, bench))
    assert (r.passed, r.score, r.reason, r.evidence) == (True, 0.8, "via file", {"n": len("fixed: 3 tests pass")})
    r = grade({"type": "python", "value": "file://graders/check.py"}, session, ctx_for(session))
    assert r.status == "ERROR" and "no bench directory" in r.reason
    r = grade({"type": "python", "value": "file://graders/nope.py"}, session, ctx_for(session, bench))
    assert r.status == "ERROR" and "nope.py does not exist" in r.reason


def test_python_errors(session):
    boom = "def evaluate(output, context):\n    raise ValueError('kaput')\n"
    r = grade({"type": "python", "value": boom}, session)
    assert r.status == "ERROR" and "ValueError: kaput" in r.reason
    slow = "import time\ndef evaluate(output, context):\n    time.sleep(5)\n    return True\n"
    r = grade({"type": "python", "value": slow, "args": {"timeout": "500ms"}}, session)
    assert r.status == "ERROR" and "timed out after 0.5s" in r.reason
    odd = "def evaluate(output, context):\n    return 'yes'\n"
    r = grade({"type": "python", "value": odd}, session)
    assert r.status == "ERROR" and "return a bool, a score in [0, 1]" in r.reason
    r = grade({"type": "python", "value": "def evaluate(o, c):\n    return 3\n"}, session)
    assert r.status == "ERROR" and "outside [0, 1]" in r.reason


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "python"}, "python: 'value' (inline source, or file://path relative to the bench file) is required"),
        ({"type": "python", "value": "def evaluate(:\n"}, "python: the inline source does not compile: line 1"),
        ({"type": "python", "value": "def check(output, context):\n    return True\n"}, "python: the inline source must define evaluate(output, context), or be its body"),
        ({"type": "python", "value": "x = len(output)\n"}, "python: the inline source must define evaluate(output, context), or be its body"),
        ({"type": "python", "value": "file:///no/such/grader.py"}, "python: grader /no/such/grader.py does not exist"),
        ({"type": "python", "value": "def evaluate(o, c): return True", "args": {"timeout": 30}}, "python: args.timeout 30 has no unit"),
        ({"type": "python", "value": "def evaluate(o, c): return True", "threshold": 5}, "python: 'threshold' is a score bar in [0, 1]"),
    ],
)
def test_python_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


# ---------------------------------------------------------------- custom:exec


def test_custom_exec_envelope_and_env(session, bench, monkeypatch):
    monkeypatch.setenv("SECRET_API_KEY", "sk-do-not-leak")
    r = grade({"type": "custom:exec", "value": "sys-python ./graders/echo.py".replace("sys-python", sys.executable), "args": {"k": 1}}, session, ctx_for(session, bench, vars={"v": 2}))
    assert r.passed and r.reason == "echo"
    env = r.evidence["envelope"]
    assert env["version"] == VERSION == "madbench/v1" and env["producer"] == "benchtape"
    assert env["assertion"] == {"type": "custom:exec", "value": f"{sys.executable} ./graders/echo.py", "args": {"k": 1}}
    assert env["vars"] == {"v": 2}
    sess = env["session"]
    assert set(sess) == {"final_output", "prompt", "actions", "calls", "metrics", "work_dir"}
    assert sess["final_output"] == "fixed: 3 tests pass" and sess["work_dir"] == session.work_dir
    assert sess["metrics"]["cost_usd"] == 0.01 and "tokens_in" not in sess["metrics"]  # unknown is absent, never 0
    assert sess["metrics"]["cost"] == 0.01 and "prompt_tokens" not in sess["metrics"]  # madbench's names beside (a grader written for it reads metrics.cost)
    read, bash = sess["calls"]
    assert read["name"] == "Read" and "result_ok" not in read  # unknown outcome: absent
    assert bash["name"] == "Bash" and bash["result_ok"] is False and bash["args"] == {"command": "false"}
    assert [a["kind"] for a in sess["actions"]][:2] == ["session.started", "message.user"]
    assert "SECRET_API_KEY" not in r.evidence["env_keys"] and {"BENCHTAPE", "MADBENCH"} <= set(r.evidence["env_keys"])
    assert set(r.evidence["env_keys"]) <= {"PATH", "HOME", "LANG", "LC_ALL", "TMPDIR", "BENCHTAPE", "MADBENCH", "PWD", "SHLVL", "_", "LC_CTYPE"}
    assert Path(r.evidence["cwd"]).resolve() == Path(session.work_dir).resolve()


def test_custom_exec_finds_a_grader_beside_the_bench_by_its_bare_name(session, bench):
    """`[python3, grader.py]` as a madbench bench writes it: the file beside the bench file, not
    one in the workspace (the grader's cwd); a bare program name stays a PATH lookup."""
    (bench / "grader.py").write_text("import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'pass': True, 'reason': 'beside the bench'}))\n")
    r = grade({"type": "custom:exec", "args": {"command": [sys.executable, "grader.py"]}}, session, ctx_for(session, bench))
    assert r.passed and r.reason == "beside the bench", r.reason
    r = grade({"type": "custom:exec", "args": {"command": [sys.executable, "absent_grader.py"]}}, session, ctx_for(session, bench))
    assert r.status == "ERROR" and "absent_grader.py" in r.reason  # no such file beside the bench: left as written, run from the workspace


def test_custom_exec_pass_fail_and_suffix(session, bench, tmp_path):
    g = tmp_path / "g.py"
    g.write_text("import json, sys\nd = json.load(sys.stdin)\nprint(json.dumps({'pass': 'fixed' in d['session']['final_output'], 'reason': 'looked'}))\n")
    r = grade({"type": "custom:exec", "args": {"command": [sys.executable, str(g)]}}, session)
    assert r.passed and r.score == 1.0
    g2 = tmp_path / "g2.py"
    g2.write_text("import json, sys\njson.load(sys.stdin)\nprint(json.dumps({'score': 0.3}))\n")
    r = grade({"type": "custom:exec:" + f"{sys.executable} {g2}", "threshold": 0.5}, session)
    assert not r.passed and r.score == 0.3 and r.status == "FAIL"
    assert grade({"type": "custom:exec:" + f"{sys.executable} {g2}", "threshold": 0.25}, session).passed
    # no `pass` and no bar: false, as madbench's Go decoder reads it (it passed here on any score above 0)
    r = grade({"type": "custom:exec:" + f"{sys.executable} {g2}"}, session)
    assert r.status == "FAIL" and r.score == 0.3 and "the reply has no 'pass': read as false, as madbench reads it" in r.reason


def test_custom_exec_errors(session, tmp_path):
    quiet = tmp_path / "quiet.py"
    quiet.write_text("import sys\nsys.stdin.read()\nprint('no json here')\nsys.exit(2)\n")
    r = grade({"type": "custom:exec", "args": {"command": [sys.executable, str(quiet)]}}, session)
    assert r.status == "ERROR" and "printed no JSON result (exit 2)" in r.reason and "no json here" in r.reason
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.stdin.read()\nprint('{\"pass\": true, \"score\": 2}')\n")
    r = grade({"type": "custom:exec", "args": {"command": [sys.executable, str(bad)]}}, session)
    assert r.status == "ERROR" and "'score' must be a number in [0, 1], got 2" in r.reason
    r = grade({"type": "custom:exec", "args": {"command": ["sleep", "5"], "timeout": "300ms"}}, session)
    assert r.status == "ERROR" and "timed out after 0.3s" in r.reason
    r = grade({"type": "custom:exec", "value": "/no/such/grader"}, session)
    assert r.status == "ERROR" and "cannot start '/no/such/grader'" in r.reason


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "custom:exec"}, "custom:exec: 'args.command' (a list) or 'value' (a command line) is required"),
        ({"type": "custom:exec", "args": {"command": "python g.py"}}, "custom:exec: args.command must be a non-empty list of strings"),
        ({"type": "custom:exec", "value": "python 'unclosed"}, "custom:exec: cannot split \"python 'unclosed\" into arguments"),
        ({"type": "custom:exec", "value": "g", "args": {"timeout": "10"}}, 'custom:exec: args.timeout "10" has no unit'),
    ],
)
def test_custom_exec_refused(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


# ---------------------------------------------------------------- custom:http


class _Grader(BaseHTTPRequestHandler):
    seen: list[dict] = []

    def do_POST(self):  # noqa: N802
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        _Grader.seen.append({"path": self.path, "headers": dict(self.headers), "body": body})
        if self.path == "/slow":
            time.sleep(1.0)
        if self.path == "/500":
            self._send(500, b"grader exploded")
            return
        if self.path == "/text":
            self._send(200, b"<html>hi</html>")
            return
        ok = "fixed" in body["session"]["final_output"] and self.path != "/fail"
        self._send(200, json.dumps({"pass": ok, "score": 0.9 if ok else 0.1, "reason": f"http says {ok}", "evidence": {"path": self.path}}).encode())

    def _send(self, code: int, data: bytes) -> None:
        self.send_response(code)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):  # keep test output quiet
        pass


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):  # the /slow client hangs up first, by design
        pass


@pytest.fixture(scope="module")
def server():
    httpd = _Server(("127.0.0.1", 0), _Grader)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()
    httpd.server_close()


def test_http_pass_and_fail(session, server):
    r = grade({"type": "custom:http", "args": {"url": server + "/grade", "headers": {"X-Bench": "demo"}}}, session)
    assert (r.passed, r.score, r.reason, r.evidence) == (True, 0.9, "http says True", {"path": "/grade"})
    req = _Grader.seen[-1]
    assert req["headers"]["X-Bench"] == "demo" and req["headers"]["Content-Type"] == "application/json"
    assert req["body"]["version"] == "madbench/v1" and req["body"]["assertion"]["type"] == "custom:http"
    r = grade({"type": "custom:http", "value": server + "/fail"}, session)
    assert not r.passed and r.score == pytest.approx(0.1)


def test_http_errors(session, server):
    r = grade({"type": "custom:http", "value": server + "/500"}, session)
    assert r.status == "ERROR" and "answered HTTP 500: grader exploded" in r.reason and r.evidence == {"status": 500}
    r = grade({"type": "custom:http", "value": server + "/text"}, session)
    assert r.status == "ERROR" and "with no JSON result" in r.reason
    r = grade({"type": "custom:http", "value": server + "/slow", "args": {"timeout": "300ms"}}, session)
    assert r.status == "ERROR" and "did not answer within 0.3s" in r.reason
    r = grade({"type": "custom:http", "value": "http://127.0.0.1:9/closed"}, session)
    assert r.status == "ERROR" and "cannot reach http://127.0.0.1:9/closed" in r.reason


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "custom:http"}, "custom:http: 'args.url' or 'value' (an http or https URL) is required"),
        ({"type": "custom:http", "value": "ftp://x/grade"}, "custom:http: 'ftp://x/grade' is not an http:// or https:// URL"),
        ({"type": "custom:http", "value": "file:///etc/passwd"}, "is not an http:// or https:// URL"),
        ({"type": "custom:http", "value": "http://x", "args": {"headers": {"X-N": 5}}}, "custom:http: args.headers must map header names to literal strings"),
        ({"type": "custom:http", "value": "http://x", "args": {"headers": {"X-A": "a\r\nX-B: b"}}}, "contains a line break"),
    ],
)
def test_http_refused(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


def test_registrations():
    c = catalog()
    assert c["python"].kind == "Code" and c["python"].reads_workspace
    assert c["custom:exec"].kind == "Code" and c["custom:exec"].prefix and c["custom:exec"].reads_workspace
    assert c["custom:http"].kind == "Service" and c["custom:http"].prefix and not c["custom:http"].reads_workspace
