"""Gemini CLI 0.61.0 and Qwen Code 0.24.4, the real binaries from the tools folder, driven by the
scripted model offline (Gemini's own wire; Qwen's Chat Completions with tool calls).

A bench scenario's `mock:` steps are played through Gemini's own wire (streamGenerateContent,
SSE) and its own tools (read_file, replace, run_shell_command); the session is recorded from its
stream-json stdout, graded, re-parsed, and its canonical actions are the mock harness's for the
same script. The server's Gemini answers and the adapter's preflight and credential routing are
checked on their own too.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest
from realagents import need

from benchtape.adapters.base import Launch
from benchtape.adapters.gemini_cli import GeminiCliAdapter
from benchtape.models.server import serve

pytestmark = pytest.mark.xdist_group("real-agents")  # real CLIs, a minute each: one worker, not two at once
ROOT = Path(__file__).resolve().parents[2]
CALC = ROOT / "fixtures-red" / "demo" / "calc"

BENCH = {
    "description": "gemini-cli, scripted",
    "defaults": {"sandbox": "home", "timeout": "180s"},
    "defaultScenario": {
        "testdata": "calc",
        "prompt": "The tests in calc fail. Fix calc.py so that `python3 -m unittest` passes.",
        "checks": [
            {"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}},
            {"type": "session:tool-used", "value": "action:edit"},
        ],
    },
    "scenarios": [
        {
            "name": "fixes-the-bug",
            "mock": {
                "steps": [
                    {"tool": "Read", "input": {"file_path": "calc.py"}},
                    {"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "return a - b", "new_string": "return a + b"}},
                    {"tool": "Bash", "input": {"command": "python3 -m unittest -q"}},
                    {"say": "Fixed the sign error in add(); all tests pass."},
                ],
                "metrics": {"tokens_in": 1200, "tokens_out": 240},
            },
        },
    ],
}


def benchtape(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("GEMINI_API_KEY", "GOOGLE_API_KEY")}
    return subprocess.run([sys.executable, "-m", "benchtape", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def session(db: Path, handle: str, cwd: Path) -> dict:
    return json.loads(benchtape("show", handle, "--db", str(db), "--json", cwd=cwd).stdout)


def canonical(doc: dict) -> list[tuple[str, list[str]]]:
    return [(a["data"]["action"], [f["path"] for f in a["data"].get("files", [])]) for a in doc["actions"] if a["kind"] == "tool.call"]


SAME = [("read", ["calc.py"]), ("edit", ["calc.py"]), ("shell", [])]  # the mock's canonical actions for the script
# harness -> (its version, the native tools that ran the script, where its own transcript is
# stored (None: its record is the raw lines), its canonical actions)
REAL = {
    "gemini-cli": ("0.61.0", ["read_file", "replace", "run_shell_command"], ".gemini/tmp/", SAME),
    "qwen-code": ("0.24.4", ["read_file", "edit", "run_shell_command"], ".qwen/projects/", SAME),
    "opencode": ("1.18.33", ["read", "edit", "bash"], None, SAME),  # its stdout is its record (its SQLite store is not kept)
    # one tool, bash: the Read is a plain `cat` (a read), the Edit a shell command, the final
    # answer its submit command; so `action:edit` cannot hold, and says so with a FAIL
    "mini-swe-agent": ("2.4.6", ["bash", "bash", "bash", "bash"], None, [("read", ["calc.py"]), ("shell", []), ("shell", []), ("shell", [])]),
    # no tools: the Edit is an edit block in the answer, applied by aider; Read and Bash have nothing to become
    "aider": ("0.86.2", ["apply_edit"], None, [("edit", ["calc.py"])]),
}


@pytest.mark.parametrize("harness", sorted(REAL))
def test_the_real_cli_plays_a_scenario_offline_and_is_graded(harness: str, tmp_path: Path) -> None:
    binary = need(harness)
    version, tools, transcript_at, actions = REAL[harness]
    shutil.copytree(CALC, tmp_path / "calc")
    in_git = harness == "opencode"  # its file snapshots track a git work tree (below)
    if in_git:
        git = ["git", "-C", str(tmp_path / "calc"), "-c", "user.email=t@example.invalid", "-c", "user.name=t"]
        for step in (["init", "-q"], ["add", "-A"], ["commit", "-qm", "base"]):
            subprocess.run([*git, *step], check=True)
    (tmp_path / "bench.yaml").write_text(json.dumps({**BENCH, "harness": harness}))
    db = tmp_path / "s.db"
    # the fix alone: the partial script (solver-partial, a prefix of the fix) is
    # tests/solver/test_solver_cells.py's, and each launch of a real CLI costs seconds of CPU
    done = benchtape("run", "bench.yaml", "--model", "scripted", "--db", str(db), *(["--keep-sandbox"] if in_git else []), cwd=tmp_path)
    edits = ("edit", ["calc.py"]) in actions
    assert done.returncode == (0 if edits else 1), done.stdout + done.stderr
    said = done.stdout + done.stderr
    if in_git:
        _no_snapshot_store_in_the_tree([Path(part.split()[0]) for part in said.split("kept sandbox of ")[1:] for part in [part.split(": ", 1)[1]]])
    fixed_line = "fixes-the-bug #1: PASS" if edits else "fixes-the-bug #1: FAIL  exec=PASS"  # the fix holds; only action:edit cannot
    assert fixed_line in said, said
    run = session(db, "latest", tmp_path)["session"]["run_id"]
    fixed = session(db, f"{run}/fixes-the-bug#1", tmp_path)
    started = fixed["actions"][0]["data"]
    assert started["harness"] == harness and started["binary"]["version"] == version and started["binary"]["path"] == str(binary)
    calls = [a["data"] for a in fixed["actions"] if a["kind"] == "tool.call"]
    assert [c["tool"] for c in calls] == tools  # the CLI's own tools ran the script
    results = [a["data"] for a in fixed["actions"] if a["kind"] == "tool.result"]
    assert [r["is_error"] for r in results][:3] == [False] * min(3, len(tools))
    assert len(tools) < 3 or "OK" in results[2]["output"]
    assert fixed["final_output"].endswith("Fixed the sign error in add(); all tests pass.")  # aider's answer holds its edit block before it
    if harness == "aider":  # it prints its own estimate, rounded ("2.4k sent"): unknown, never a wrong number
        assert fixed["metrics"].get("tokens_in") is None and fixed["metrics"].get("cost_usd") is None
    else:
        assert fixed["metrics"]["tokens_in"] == 1200 and fixed["metrics"]["tokens_out"] == 240 and fixed["metrics"].get("cost_usd") is None  # tokens as reported; no cost: unknown
    if transcript_at is not None:
        transcript = next(a["data"] for a in fixed["actions"] if a["kind"] == "transcript")
        assert transcript["path"].startswith(transcript_at) and transcript["path"].endswith(".jsonl")
    if harness == "gemini-cli":  # its own chat record, imported as one recorded elsewhere would be: the same calls
        from benchtape.store.database import Store

        store = Store(db, readonly=True)
        try:
            (tmp_path / "chats").mkdir()
            (tmp_path / "chats" / "session-live.jsonl").write_bytes(store.get_blob(transcript["sha256"]))
        finally:
            store.close()
        imported = benchtape("import", "gemini-cli", str(tmp_path / "chats"), "--db", str(tmp_path / "imported.db"), cwd=tmp_path)
        assert imported.returncode == 0, imported.stderr
        again = session(tmp_path / "imported.db", "latest", tmp_path)
        assert canonical(again) == canonical(fixed) and again["final_output"] == fixed["final_output"], (canonical(again), again["final_output"])
        # its stream-json shows a read_file's result as its display text, empty: the file's text
        # the model got is read from that record, as a later result of the same call
        streamed = [r for r in results if not r.get("from_transcript")]
        assert streamed[0]["output"] == "" and any(r.get("from_transcript") and "def add" in r["output"] for r in results), results
        out = benchtape("query", "calls[0].output", "--session", fixed["session"]["id"], "--db", str(db), cwd=tmp_path)
        assert "def add" in out.stdout, out.stdout + out.stderr
    assert fixed["session"]["warnings"] == []
    assert [v["status"] for v in fixed["verdicts"]] == ["PASS", "PASS" if edits else "FAIL"]

    # the raw stdout lines re-derive the same calls
    again = benchtape("reparse", fixed["session"]["id"], "--db", str(db), cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    new_id = again.stdout.split()[0]
    assert canonical(session(db, new_id, tmp_path)) == canonical(fixed)

    # the same script under the mock harness: the same canonical actions on the same files
    mock_db = tmp_path / "mock.db"
    (tmp_path / "bench.yaml").write_text(json.dumps({**BENCH, "harness": "mock"}))
    benchtape("run", "bench.yaml", "--db", str(mock_db), "--scenario", "fixes-the-bug", cwd=tmp_path)
    ours = [(action, [Path(p).name for p in paths]) for action, paths in canonical(fixed)]  # qwen's paths are absolute
    assert ours == actions
    if actions == SAME:
        assert canonical(session(mock_db, "latest", tmp_path)) == ours
    # the agent's change is calc.py alone: the CLI's own files under HOME are not the agent's
    diff = benchtape("show", fixed["session"]["id"], "--db", str(db), "--diff", cwd=tmp_path).stdout
    assert [line.split()[2] for line in diff.splitlines() if line.startswith("diff --git")] == ["a/calc.py"], diff


def _no_snapshot_store_in_the_tree(kept: list[Path]) -> None:
    """The sandbox's HOME is the workspace, so opencode's data folder lies inside the git tree its
    file snapshots track: each step re-hashed its own snapshot store (a task cell's session took
    ~35 s against ~5). Its seeded config turns snapshots off; the real binary must honour it."""
    try:
        assert len(kept) == 1, kept
        for box in kept:
            data = box / "work" / ".benchtape-opencode" / "data" / "opencode"
            assert (data / "opencode.db").is_file()  # opencode kept its own store where benchtape put it
            assert (box / "work" / ".git").is_dir() and not (data / "snapshot").exists()  # a git tree, and no snapshot of it
    finally:
        for box in kept:
            shutil.rmtree(box, ignore_errors=True)


def test_the_server_answers_gemini_turns_and_side_calls() -> None:
    script = {"steps": [{"tool": "Write", "input": {"file_path": "a.txt", "content": "x"}}, {"say": "done"}], "metrics": {"tokens_in": 10, "tokens_out": 4}}
    tools = [{"functionDeclarations": [{"name": "write_file"}, {"name": "replace"}]}]
    with serve(script) as srv:
        def post(path: str, body: dict) -> tuple[str, bytes]:
            req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.headers["Content-Type"], resp.read()

        kind, body = post("/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse", {"contents": [{"role": "user", "parts": [{"text": "go"}]}], "tools": tools})
        assert kind == "text/event-stream" and body.startswith(b"data: ")
        first = json.loads(body[len(b"data: "):].strip())
        call = first["candidates"][0]["content"]["parts"][0]["functionCall"]
        assert call["name"] == "write_file" and call["args"] == {"file_path": "a.txt", "content": "x"}
        contents = [{"role": "user", "parts": [{"text": "go"}]}, {"role": "model", "parts": [{"functionCall": call}]}, {"role": "user", "parts": [{"functionResponse": {"name": "write_file", "response": {"output": "ok"}}}]}]
        kind, body = post("/v1beta/models/gemini-2.5-flash:generateContent", {"contents": contents, "tools": tools})
        second = json.loads(body)
        assert second["candidates"][0]["content"]["parts"] == [{"text": "done"}]
        assert second["usageMetadata"]["promptTokenCount"] >= 0
        # a side call with a JSON schema (the `auto` router's) takes no turn and gets a fitting object
        schema = {"type": "OBJECT", "properties": {"complexity_reasoning": {"type": "STRING"}, "complexity_score": {"type": "INTEGER", "minimum": 1}}, "required": ["complexity_reasoning", "complexity_score"]}
        _, body = post("/v1beta/models/gemini-3.5-flash-lite:generateContent", {"contents": [{"role": "user", "parts": [{"text": "route"}]}], "generationConfig": {"responseJsonSchema": schema}})
        assert json.loads(json.loads(body)["candidates"][0]["content"]["parts"][0]["text"]) == {"complexity_reasoning": "", "complexity_score": 1}
        assert [e["outcome"] for e in srv.log] == ["turn", "turn", "side"]


def test_only_geminis_own_key_reaches_it_and_preflight_says_what_is_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GEMINI_API_KEY", "g-key")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "a-key")
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    adapter = GeminiCliAdapter()
    launch = Launch(prompt="hi", work_dir=tmp_path, root=tmp_path, home=tmp_path, model="gemini-2.5-pro", harness_config={"binary": "/bin/true"})
    cmd = adapter.command(launch)
    assert cmd.env == {"GEMINI_API_KEY": "g-key"}
    assert cmd.argv[:2] == ["/bin/true", "--skip-trust"] and "--approval-mode=yolo" in cmd.argv and cmd.argv[-2:] == ["-p", "hi"]
    assert cmd.argv[cmd.argv.index("-m") + 1] == "gemini-2.5-pro"
    scripted = adapter.command(Launch(prompt="hi", work_dir=tmp_path, root=tmp_path, home=tmp_path, model="scripted", endpoint="http://127.0.0.1:9/s/x", harness_config={"binary": "/bin/true"}))
    assert scripted.env["GOOGLE_GEMINI_BASE_URL"] == "http://127.0.0.1:9/s/x" and scripted.env["GEMINI_API_KEY"] != "g-key"
    assert scripted.argv[scripted.argv.index("-m") + 1] == "gemini-2.5-flash"
    found = adapter.preflight(None, {"binary": str(tmp_path / "nope")}, {"PATH": "/usr/bin"})
    assert any("not on PATH" in f and "benchtape tools install gemini-cli" in f for f in found)
    assert any("GEMINI_API_KEY" in f for f in found)
    assert not any("GEMINI_API_KEY" in f for f in adapter.preflight(None, {"binary": "/bin/true"}, {"PATH": "/usr/bin"}, scripted=True))
    assert adapter.home_json[".gemini/settings.json"]["security"]["auth"]["selectedType"] == "gemini-api-key"
    assert adapter.home_json[".gemini/settings.json"]["privacy"]["usageStatisticsEnabled"] is False


def test_the_server_answers_chat_completions_agent_turns_with_tool_calls() -> None:
    """A Chat Completions request offering tools plays the script (Qwen Code's, mini-swe-agent's wire);
    one without tools is still a judge's (it takes a `chat:` reply, never a turn)."""
    script = {"steps": [{"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}, {"say": "done"}], "metrics": {"tokens_in": 7, "tokens_out": 3}}
    qwen_tools = [{"type": "function", "function": {"name": n}} for n in ("read_file", "edit", "run_shell_command")]
    context = {"role": "user", "content": "My operating system is: linux\nI'm currently working in the directory: /work/x\n"}
    with serve(script) as srv:
        def post(body: dict) -> bytes:
            req = urllib.request.Request(srv.openai_url + "/chat/completions", data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
            with urllib.request.urlopen(req, timeout=10) as resp:
                return resp.read()

        streamed = post({"model": "m", "stream": True, "stream_options": {"include_usage": True}, "messages": [{"role": "system", "content": "s"}, context, {"role": "user", "content": "fix"}], "tools": qwen_tools})
        chunks = [json.loads(line[len(b"data: "):]) for line in streamed.split(b"\n") if line.startswith(b"data: {")]
        call = next(c["choices"][0]["delta"]["tool_calls"][0] for c in chunks if c["choices"] and "tool_calls" in c["choices"][0]["delta"])
        assert call["function"]["name"] == "edit" and json.loads(call["function"]["arguments"]) == {"file_path": "/work/x/calc.py", "old_string": "a - b", "new_string": "a + b"}
        assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "tool_calls"
        assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] >= 1 and streamed.rstrip().endswith(b"data: [DONE]")
        assert [e["outcome"] for e in srv.log] == ["turn"]
    script = {"steps": [{"tool": "Write", "input": {"file_path": "a.txt", "content": "x"}}, {"say": "done"}]}
    with serve(script) as srv:
        # an agent offering only `bash` (mini-swe-agent), non-stream: the write arrives as a shell command
        req = urllib.request.Request(srv.openai_url + "/chat/completions", data=json.dumps({"model": "m", "messages": [{"role": "user", "content": "go"}], "tools": [{"type": "function", "function": {"name": "bash"}}]}).encode())
        with urllib.request.urlopen(req, timeout=10) as resp:
            whole = json.loads(resp.read())
        call = whole["choices"][0]["message"]["tool_calls"][0]["function"]
        assert whole["choices"][0]["finish_reason"] == "tool_calls" and call["name"] == "bash"
        assert json.loads(call["arguments"])["command"] == "cat > a.txt <<'BENCHTAPE_EOF'\nx\nBENCHTAPE_EOF"



CRLF_BENCH = {
    "description": "an edit of a CRLF file, scripted",
    "defaults": {"sandbox": "home", "timeout": "180s"},
    "scenarios": [
        {
            "name": "edits-a-crlf-file",
            "testdata": "crlf",
            "prompt": "Set y to 5 in settings.py.",
            "checks": [{"type": "exec", "args": {"cmd": ["python3", "-c", "import sys; sys.exit(open('settings.py', 'rb').read() != b'x = 1\\r\\ny = 5\\r\\nz = 3\\r\\n')"]}}],
            # as the fix's patch has it (tomli's benchmark/run.py, a CRLF file): the edit's own \r\n
            "mock": {"steps": [{"tool": "Read", "input": {"file_path": "settings.py"}}, {"tool": "Edit", "input": {"file_path": "settings.py", "old_string": "x = 1\r\ny = 2\r\n", "new_string": "x = 1\r\ny = 5\r\n"}}, {"say": "y is 5."}]},
        }
    ],
}


def test_benchtapes_own_replace_command_edits_a_crlf_file_as_written(tmp_path: Path) -> None:
    """What mini-swe-agent runs for a scripted Edit (benchtape's own command, in a real shell):
    it read the file with read_text(), which turned tomli #103's CRLF `\\r\\n` into `\\n`, so the
    fix's own `\\r\\n` string never matched. It keeps the file's bytes now."""
    from benchtape.models.tools import replace_command

    (tmp_path / "settings.py").write_bytes(b"x = 1\r\ny = 2\r\nz = 3\r\n")
    edit = CRLF_BENCH["scenarios"][0]["mock"]["steps"][1]["input"]
    done = subprocess.run(["sh", "-c", replace_command("settings.py", edit)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and (tmp_path / "settings.py").read_bytes() == b"x = 1\r\ny = 5\r\nz = 3\r\n", done.stderr
    again = subprocess.run(["sh", "-c", replace_command("settings.py", edit)], cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert again.returncode == 1 and "old_string not found in settings.py" in again.stderr  # refused as the Edit tool refuses


@pytest.mark.parametrize("harness", ["claude-code"])
def test_a_scripted_edit_of_a_crlf_file_is_carried_and_keeps_its_line_endings(harness: str, tmp_path: Path) -> None:
    """The scripted solver of tomli #103 could not edit its CRLF benchmark/run.py under Claude
    Code 2.1.328: it finds no `\\r\\n` string in a file its Read shows with LF lines (a model writes
    LF there, and that edit keeps the file's CRLF). The edit now lands through the real binary,
    and the file keeps its line endings byte for byte."""
    need(harness)
    (tmp_path / "crlf").mkdir()
    (tmp_path / "crlf" / "settings.py").write_bytes(b"x = 1\r\ny = 2\r\nz = 3\r\n")
    (tmp_path / "bench.yaml").write_text(json.dumps({**CRLF_BENCH, "harness": harness, **({"harness_config": {"args": ["--permission-mode", "bypassPermissions"]}} if harness == "claude-code" else {})}))
    done = benchtape("run", "bench.yaml", "--model", "scripted", "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 0 and "edits-a-crlf-file #1: PASS" in done.stdout + done.stderr, done.stdout + done.stderr
    results = [a["data"] for a in session(tmp_path / "s.db", "latest", tmp_path)["actions"] if a["kind"] == "tool.result"]
    assert not [r for r in results if r["is_error"]], results
