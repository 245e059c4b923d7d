"""The `command` harness: a shell-script agent run through a bench, recorded and graded.

Real parts: the `benchtape` CLI in a subprocess, a real SQLite store, the sandbox (level home),
a real shell script as the agent, and a real Claude Code stream-json capture as its transcript.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CALC = ROOT / "fixtures-red" / "demo" / "calc"
REAL_STREAM = Path("/work/shared/realdata/claude-stream-json/obers_ui__tools-thinking-no-subagent__v2.1.72.jsonl")

FIXER = """#!/bin/sh
# reads the prompt from the file benchtape wrote, fixes the sign, says so
printf 'asked: %s\\n' "$(head -c 30 "$1")"
sed -i 's/return a - b/return a + b/' calc.py
echo "Fixed add(); the tests pass."
"""


def benchtape(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "benchtape", *args], cwd=cwd, capture_output=True, text=True, timeout=300)


def bench(tmp: Path, harness_config: dict, checks: list[dict]) -> Path:
    shutil.copytree(CALC, tmp / "calc")
    doc = {
        "description": "a command-line agent",
        "harness": "command",
        "harness_config": harness_config,
        "defaults": {"sandbox": "home", "timeout": "60s"},
        "scenarios": [{"name": "fix", "testdata": "calc", "prompt": "Fix calc.py so the tests pass.", "checks": checks}],
    }
    path = tmp / "bench.yaml"
    path.write_text(json.dumps(doc))  # JSON is YAML
    return path


def test_a_shell_script_agent_runs_through_a_bench_and_is_graded(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text(FIXER)
    agent.chmod(0o755)
    checks = [
        {"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}},
        {"type": "contains", "value": "tests pass"},
        {"type": "session:tool-used", "value": "action:edit"},
    ]
    path = bench(tmp_path, {"command": ["sh", str(agent), "{prompt_file}"]}, checks)
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stderr + done.stdout
    shown = benchtape("show", "latest", "--db", str(tmp_path / "s.db"), "--json", cwd=tmp_path)
    session = json.loads(shown.stdout)
    kinds = [a["kind"] for a in session["actions"]]
    assert "tool.call" not in kinds
    started = session["actions"][0]["data"]
    assert started["harness"] == "command" and started["records_calls"] is False
    final = next(a["data"]["text"] for a in session["actions"] if a["kind"] == "final_output")
    assert final == "asked: Fix calc.py so the tests pass.\nFixed add(); the tests pass."  # the prompt reached it through {prompt_file}
    statuses = [v["status"] for v in session["verdicts"]]
    assert statuses == ["PASS", "PASS", "NA"], session["verdicts"]
    assert "no tool calls" in session["verdicts"][2]["reason"]
    listed = json.loads(benchtape("sessions", "--json", "--db", str(tmp_path / "s.db"), cwd=tmp_path).stdout)
    assert [s["score"] for s in listed] == [1.0], listed  # the NA check is out of the score (it read 0.67)
    # the raw lines hold the whole session: reparse re-derives the same actions
    again = benchtape("reparse", "latest", "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert again.returncode == 0 and "6 actions (6 before), 0 adapter warning(s)" in again.stdout, again.stdout + again.stderr


def test_a_failing_agent_fails_its_check(tmp_path: Path) -> None:
    agent = tmp_path / "agent.sh"
    agent.write_text("#!/bin/sh\necho 'I looked; nothing to do.'\n")
    path = bench(tmp_path, {"command": ["sh", str(agent)]}, [{"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}}])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    assert "FAIL" in done.stdout


def test_a_transcript_gives_the_calls_their_canonical_actions(tmp_path: Path) -> None:
    """The agent leaves a Claude Code stream-json capture behind; its tool calls become the session's."""
    agent = tmp_path / "agent.sh"
    agent.write_text(f"#!/bin/sh\nmkdir -p out && cp {REAL_STREAM} out/run.jsonl\nsed -i 's/return a - b/return a + b/' calc.py\necho finished\n")
    cfg = {"command": ["sh", str(agent)], "transcript": {"path": "out/*.jsonl", "format": "claude-stream-json"}, "timeout": 30}
    path = bench(tmp_path, cfg, [{"type": "session:tool-used", "value": "action:read"}])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    session = json.loads(benchtape("show", "latest", "--db", str(tmp_path / "s.db"), "--json", cwd=tmp_path).stdout)
    calls = [a["data"] for a in session["actions"] if a["kind"] == "tool.call"]
    expected = sum(1 for line in REAL_STREAM.read_text().splitlines() if '"type":"tool_use"' in line.replace(" ", ""))
    assert len(calls) >= expected > 0
    assert all("action" in c for c in calls)
    assert "records_calls" not in session["actions"][0]["data"]
    assert [v["status"] for v in session["verdicts"]] == ["PASS"]


def test_a_bad_config_is_refused_before_anything_runs(tmp_path: Path) -> None:
    path = bench(tmp_path, {"command": ["sh", "{prompt_fil}"]}, [])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 3, done.stdout + done.stderr  # preflight: blocked, nothing ran
    assert "{prompt_fil}" in done.stderr and "not a placeholder" in done.stderr
    if (tmp_path / "s.db").exists():
        with sqlite3.connect(tmp_path / "s.db") as con:
            assert con.execute("select count(*) from sessions").fetchone() == (0,)


CHAT_AGENT = r'''
import json, os, sys, urllib.request
url = sys.argv[1].rstrip("/") + "/v1/chat/completions"
assert os.environ["BENCHTAPE_MODEL_ENDPOINT"] == sys.argv[1]
tools = [{"type": "function", "function": {"name": n, "parameters": {"type": "object"}}} for n in ("Read", "Edit", "Bash")]
messages = [{"role": "user", "content": open(sys.argv[2]).read()}]
for _ in range(5):
    body = json.dumps({"model": sys.argv[3], "messages": messages, "tools": tools}).encode()
    req = urllib.request.Request(url, body, {"content-type": "application/json", "authorization": "Bearer none"})
    msg = json.load(urllib.request.urlopen(req, timeout=30))["choices"][0]["message"]
    messages.append(msg)
    if not msg.get("tool_calls"):
        print(msg.get("content") or "")
        break
    for call in msg["tool_calls"]:
        name, args = call["function"]["name"], json.loads(call["function"]["arguments"])
        out = "unknown tool " + name
        if name == "Edit":
            text = open(args["file_path"]).read()
            open(args["file_path"], "w").write(text.replace(args["old_string"], args["new_string"]))
            out = "edited"
        messages.append({"role": "tool", "tool_call_id": call["id"], "content": out})
'''


def test_any_cli_reaches_the_scripted_model_through_endpoint_and_is_offered_its_own_tool_names(tmp_path: Path) -> None:
    """A newcomer's `llm`-based agent under `--model scripted`: the command was never told where
    the scripted model was (`{endpoint}` was no placeholder, nothing in its environment). Now
    `{endpoint}` and BENCHTAPE_MODEL_ENDPOINT say it, and a chat agent offering Claude's tool
    names gets the script's Edit as `Edit`, so its own tool loop fixes the file."""
    agent = tmp_path / "chat_agent.py"
    agent.write_text(CHAT_AGENT)
    path = bench(tmp_path, {"command": [sys.executable, str(agent), "{endpoint}", "{prompt_file}", "{model}"]}, [{"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}}])
    doc = json.loads(path.read_text())
    doc["scenarios"][0]["mock"] = {"steps": [{"tool": "Edit", "input": {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"}}, {"say": "Fixed add()."}]}
    path.write_text(json.dumps(doc))
    done = benchtape("run", str(path), "--model", "scripted", "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    session = json.loads(benchtape("show", "latest", "--db", str(tmp_path / "s.db"), "--json", cwd=tmp_path).stdout)
    assert [v["status"] for v in session["verdicts"]] == ["PASS"], session["verdicts"]
    final = next(a["data"]["text"] for a in session["actions"] if a["kind"] == "final_output")
    assert final == "Fixed add().", final
    assert (session["actions"][0]["data"].get("model_endpoint") or {}).get("url"), session["actions"][0]["data"]


def test_an_agent_that_crashes_shows_why_in_show_not_only_its_exit_code(tmp_path: Path) -> None:
    """`show` printed only "harness exited with code 1" for a newcomer's crashed agent; its
    traceback was kept but only `show --json` had it. The row now ends with the stderr's last
    line, and --full shows the stderr's tail whole."""
    agent = tmp_path / "crash.py"
    agent.write_text("import sys\nprint('starting')\nraise ValueError('no model named scripted in llm config')\n")
    path = bench(tmp_path, {"command": [sys.executable, str(agent)]}, [{"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}}])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = benchtape("show", "latest", "--plain", "--db", str(tmp_path / "s.db"), cwd=tmp_path).stdout
    assert "harness exited with code 1: ValueError: no model named scripted in llm config" in shown, shown
    full = benchtape("show", "latest", "--plain", "--full", "--db", str(tmp_path / "s.db"), cwd=tmp_path).stdout
    assert "Traceback (most recent call last):" in full, full


def test_a_cli_refusing_a_flag_says_which_not_its_closing_help_line(tmp_path: Path) -> None:
    """Codex given a flag of Claude Code's (a bench's harness_config.args, run with --harness
    codex) exits 2 with clap's usage error first and `For more information, try '--help'.` last:
    the session, the run's outcome and `show` said only that last line. The line naming the
    error is the one kept, in the error's message itself."""
    agent = tmp_path / "strict.py"
    usage = "error: unexpected argument '--permission-mode' found\n\n  tip: to pass '--permission-mode' as a value, use '-- --permission-mode'\n\nUsage: codex exec [OPTIONS] [PROMPT]\n\nFor more information, try '--help'.\n"
    agent.write_text(f"import sys\nsys.stderr.write({usage!r})\nsys.exit(2)\n")
    path = bench(tmp_path, {"command": [sys.executable, str(agent)]}, [{"type": "exec", "args": {"cmd": ["true"]}}])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr
    shown = benchtape("show", "latest", "--plain", "--db", str(tmp_path / "s.db"), cwd=tmp_path).stdout
    assert "harness exited with code 2: error: unexpected argument '--permission-mode' found" in shown and "For more information" not in shown, shown


def test_checks_of_calls_under_a_command_without_a_transcript_are_said_before_the_run(tmp_path: Path) -> None:
    """They are NA in every session (it records no calls); preflight said "ok" and a newcomer
    found out after the run. Said before it now; with a `transcript:` nothing is said."""
    checks = [{"type": "exec", "args": {"cmd": ["true"]}}, {"type": "session:tool-used", "value": "action:edit"}, {"type": "session:tool-sequence", "value": ["action:read", "action:edit"]}]
    path = bench(tmp_path, {"command": ["sh", "-c", "true"]}, checks)
    said = benchtape("preflight", str(path), cwd=tmp_path)
    assert said.returncode == 0, said.stdout + said.stderr
    warned = [ln for ln in (said.stdout + said.stderr).splitlines() if "records none without `transcript:`" in ln]
    assert len(warned) == 2 and "session:tool-used" in warned[0] and "session:tool-sequence" in warned[1], said.stdout + said.stderr
    (tmp_path / "with").mkdir()
    path = bench(tmp_path / "with", {"command": ["sh", "-c", "true"], "transcript": {"path": "out/*.jsonl", "format": "claude-stream-json"}}, checks)
    assert "records none" not in benchtape("preflight", str(path), cwd=tmp_path / "with").stdout


def test_a_misspelt_command_key_is_named_with_the_key_it_resembles(tmp_path: Path) -> None:
    path = bench(tmp_path, {"comand": ["sh", "-c", "true"]}, [])
    done = benchtape("run", str(path), "--db", str(tmp_path / "s.db"), cwd=tmp_path)
    assert done.returncode == 3 and "`comand` is not a key it reads: did you mean `command`?" in done.stdout + done.stderr, done.stdout + done.stderr
