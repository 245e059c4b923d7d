"""Real harnesses through stand-in binaries that replay real transcripts; imports and reparse."""

from __future__ import annotations

import json
import os
import sqlite3
import textwrap
from pathlib import Path

import pytest
from cli import ROOT, benchtape
from realdatakit import find_realdata

REALDATA = find_realdata() or ROOT / "tests" / "realdata"
BIN = ROOT / "tests" / "bin"
SUBAGENT_STREAM = "claude-stream-json/obers_ui__agent-subagent__api-error-result__v2.1.72.jsonl"

if not REALDATA.is_dir():
    pytest.skip(f"REAL TRANSCRIPTS NOT FOUND at {REALDATA}: set BENCHTAPE_REALDATA", allow_module_level=True)


def run_env(**fake: str) -> dict[str, str]:
    return {"PATH": f"{BIN}:{os.environ['PATH']}", "ANTHROPIC_API_KEY": "sk-ant-test-0123456789", "OPENAI_API_KEY": "sk-test-0123456789", "BENCHTAPE_REALDATA": str(REALDATA), **fake}


def bench(tmp_path: Path, harness: str, checks: str, timeout: str = "60s") -> Path:
    p = tmp_path / "bench.yaml"
    p.write_text(textwrap.dedent(f"""
        harness: {harness}
        harness_config: {{binary: fake-{harness.replace("claude-code", "claude")}}}
        defaults: {{interactive: false, timeout: {timeout}}}
        scenarios:
          - name: replay
            prompt: review the code
            sandbox:
              level: home
              share: {{env: [FAKE_TRANSCRIPT, FAKE_DELAY, FAKE_EXIT, FAKE_HANG, FAKE_STOP_AFTER, FAKE_CUT, BENCHTAPE_REALDATA, FAKE_ARGV]}}
            checks:
        """).lstrip() + textwrap.indent(textwrap.dedent(checks).strip(), "      ") + "\n")
    return p


CLAUDE_CHECKS = """
- {type: session:tool-used, value: Read, args: {gte: 5}}
- {type: session:subagent-used, args: {agent: Explore}}
- {type: session:tool-used, value: Agent, args: {thread: main}}
- {type: cost, threshold: 1.0}
"""


def test_claude_code_session_graded_through_stand_in(tmp_path):
    argv_file = tmp_path / "argv.json"
    out = benchtape(
        "run", bench(tmp_path, "claude-code", CLAUDE_CHECKS), "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json",
        env=run_env(FAKE_TRANSCRIPT=SUBAGENT_STREAM, FAKE_DELAY="0.002", FAKE_ARGV=str(argv_file)),
    )
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    statuses = [c["status"] for c in r["checks"]]
    assert statuses == ["PASS", "PASS", "FAIL", "PASS"], (statuses, out.stderr)
    assert r["session"]["metrics"]["cost_usd"] == pytest.approx(0.5552176)
    started = json.loads(argv_file.read_text())
    assert started["argv"][1:7] == ["--print", "--verbose", "--output-format", "stream-json", "--input-format", "text"]
    assert started["stdin"] == "review the code"
    db = (tmp_path / "c.db").read_bytes()
    assert b"sk-ant-test-0123456789" not in db


def test_codex_session_through_stand_in(tmp_path):
    out = benchtape(
        "run", bench(tmp_path, "codex", "- {type: equals, value: '4'}\n- {type: cost, threshold: 1}"), "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json",
        env=run_env(FAKE_TRANSCRIPT="codex-exec-json/agentcmd__stream-output-1__cli-0.46.0.jsonl"),
    )
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert [c["status"] for c in r["checks"]] == ["PASS", "ERROR"], out.stderr  # codex reports no cost: unknown
    assert r["session"]["metrics"]["tokens_in"] == 2946 and r["session"]["metrics"]["cost_usd"] is None


def test_stand_in_killed_mid_stream_keeps_what_arrived(tmp_path):
    benchtape(
        "run", bench(tmp_path, "claude-code", "- {type: contains, value: x}"), "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json",
        env=run_env(FAKE_TRANSCRIPT=SUBAGENT_STREAM, FAKE_STOP_AFTER="12", FAKE_CUT="40", FAKE_EXIT="137"),
    )
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert r["outcome"] == "error" and r["session"]["status"] == "error" and r["session"]["exit_code"] == 137
    kinds = [a["kind"] for a in r["session"]["actions"]]
    assert "tool.call" in kinds and kinds[-1] == "session.finished"
    assert any("line" in w for w in r["session"]["warnings"])  # the truncated last line is kept as a warning
    con = sqlite3.connect(tmp_path / "c.db")
    assert con.execute("SELECT COUNT(*) FROM raw").fetchone()[0] == 13


def test_stand_in_hanging_past_the_timeout(tmp_path):
    # 5 s: the stand-in (a Python process) must have printed before the kill, and under the
    # suite's load its start alone took most of 2 s once (final_output None in CI)
    out = benchtape(
        "run", bench(tmp_path, "claude-code", "- {type: contains, value: x}", timeout="5s"), "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json",
        env=run_env(FAKE_HANG="1"),
    )
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert out.returncode == 1 and r["session"]["timed_out"] is True and r["outcome"] == "error"
    assert r["session"]["final_output"]  # what the agent said before it hung was recorded


def test_import_dedupe_mismatch_and_reparse(tmp_path):
    db = tmp_path / "i.db"
    transcript = REALDATA / "claude-transcripts" / "spotter__subagent-task-agent_progress__v2.1.38.jsonl"
    first = benchtape("import", "claude-code", transcript, "--db", db, "--scenario", "triage")
    assert first.returncode == 0, first.stderr
    sid = first.stdout.split()[0]
    again = benchtape("import", "claude-code", transcript, "--db", db)
    assert again.stdout.split()[0] == sid and "already imported" in again.stdout
    wrong = benchtape("import", "codex", transcript, "--db", db)
    assert wrong.returncode == 2 and "not a codex transcript" in wrong.stderr
    new = benchtape("reparse", sid, "--db", db)
    assert new.returncode == 0, new.stderr
    new_sid = new.stdout.split()[0]
    assert f"re-derived from session {sid}'s " in new.stdout and "as a new session linked to it (the old one is unchanged)" in new.stdout  # it printed a bare id
    assert "actions (" in new.stdout and "adapter warning(s)" in new.stdout and f"benchtape show {new_sid}" in new.stderr
    con = sqlite3.connect(db)
    count = lambda s: con.execute("SELECT COUNT(*) FROM actions WHERE session_id = ?", [s]).fetchone()[0]  # noqa: E731
    assert count(new_sid) == count(sid)
    assert con.execute("SELECT parent_session FROM sessions WHERE id = ?", [new_sid]).fetchone()[0] == sid


def test_a_reparsed_run_session_says_how_to_grade_it_and_that_grades_it(tmp_path):
    """A re-derived session has no verdicts ("not graded" in `show`); reparse's next line names
    the regrade that grades it with its bench's checks, and that command does."""
    import shutil

    shutil.copytree(ROOT / "fixtures-red" / "demo", tmp_path / "demo")
    db = tmp_path / "r.db"
    assert benchtape("run", tmp_path / "demo" / "bench.yaml", "--scenario", "fixes-the-bug", "--db", db).returncode == 0
    new = benchtape("reparse", "latest", "--db", db)
    assert new.returncode == 0, new.stderr
    new_sid = new.stdout.split()[0]
    hint = next(part for part in new.stderr.split("   ·   ") if part.startswith("benchtape regrade"))
    command = hint.split(" (grades it")[0].split()[1:]
    assert command[:2] == ["regrade", "--bench"] and "--scenario" in command and "fixes-the-bug" in command, new.stderr
    graded = benchtape(*command, "--db", db)
    assert graded.returncode == 0, graded.stderr
    shown = benchtape("show", new_sid, "--json", "--db", db)
    assert json.loads(shown.stdout)["verdicts"], shown.stdout[:500]


def test_import_of_folders_takes_every_session_below_once_with_its_subagents(tmp_path):
    """A folder stands for every transcript below it: both Claude layouts' subagent files go with
    their session (not as sessions of their own), the same folder again writes nothing, and a
    folder holding another harness's file, or none, is refused before anything is written."""
    import shutil

    claude, codex = tmp_path / "projects", tmp_path / "sessions"
    shutil.copytree(REALDATA / "claude-transcripts", claude)
    shutil.copytree(REALDATA / "codex-rollout", codex)
    db = tmp_path / "i.db"
    first = benchtape("import", "claude-code", claude, "--db", db)
    assert first.returncode == 0, first.stderr
    tops = sorted(p for p in claude.rglob("*.jsonl") if not p.name.startswith("agent-"))
    assert [line.split()[1] for line in first.stdout.splitlines()] == [str(p) for p in tops]
    con = sqlite3.connect(db)
    sessions = con.execute("SELECT session_id, json_extract(data, '$.imported_from') FROM actions WHERE kind = 'session.started'").fetchall()
    files = {Path(f).name for _, started in sessions for f in json.loads(started)}
    assert len(sessions) == len(tops) and {"agent-a485154.jsonl", "agent-36541525.jsonl", "agent-50243ee8.jsonl"} <= files
    again = benchtape("import", "claude-code", claude, "--db", db)
    assert again.returncode == 0 and again.stdout.count("already imported") == len(tops)
    assert benchtape("import", "codex", codex, "--db", db).returncode == 0
    shutil.copy(next(codex.glob("*.jsonl")), claude / "codex-rollout.jsonl")
    mixed = benchtape("import", "claude-code", claude, "--db", tmp_path / "mixed.db")
    assert mixed.returncode == 2 and "codex-rollout.jsonl" in mixed.stderr and "not a claude-code transcript" in mixed.stderr
    assert not (tmp_path / "mixed.db").exists()  # refused before anything was written: not even the store
    (tmp_path / "empty").mkdir()
    empty = benchtape("import", "codex", tmp_path / "empty", "--db", db)
    assert empty.returncode == 2 and "no .jsonl transcript in the folder" in empty.stderr


def test_import_redacts_secrets_from_the_environment(tmp_path):
    transcript = tmp_path / "t.jsonl"
    src = (REALDATA / "claude-stream-json" / "obers_ui__minimal-text-only__v2.1.72.jsonl").read_text()
    transcript.write_text(src.replace('"result":"', '"result":"key sk-live-abcdef123456 ', 1))
    out = benchtape("import", "claude-code", transcript, "--db", tmp_path / "i.db", env={"MY_SERVICE_TOKEN": "sk-live-abcdef123456"})
    assert out.returncode == 0, out.stderr
    assert b"sk-live-abcdef123456" not in (tmp_path / "i.db").read_bytes()
    con = sqlite3.connect(tmp_path / "i.db")
    assert con.execute("SELECT COUNT(*) FROM actions WHERE data LIKE '%[REDACTED]%'").fetchone()[0] >= 1


def test_agent_env_and_plugins_never_touch_your_home(tmp_path):
    """Staged into the sandbox HOME: refused at a level whose HOME is yours, allowed at `home`."""
    (tmp_path / "env").mkdir()
    p = tmp_path / "b.yaml"
    p.write_text(
        "harness: claude-code\nharness_config: {binary: fake-claude, agent_env: env, plugins: [{id: dev@magus, path: env}]}\n"
        "scenarios: [{name: a, prompt: p, interactive: false, sandbox: workspace}, {name: b, prompt: p, interactive: false}]\n"
    )
    out = benchtape("preflight", p, env=run_env())
    assert out.returncode == 3
    assert "scenario 'a': harness_config.plugins and harness_config.agent_env are written into the sandbox HOME, and level 'workspace' uses your own" in out.stderr
    assert "scenario 'b'" not in out.stderr


def test_an_adapter_that_raises_keeps_the_stream_and_the_run(tmp_path, monkeypatch):
    """A parser bug on one line is a warning with that line; the lines after it still record."""
    from benchtape.adapters.claude_stream import ClaudeStreamParser
    from benchtape.app.api import load_benches, run_benches
    from benchtape.recorder.runner import RunOptions
    from benchtape.store.database import Store

    real_feed = ClaudeStreamParser.feed
    calls = {"n": 0}

    def flaky_feed(self, line):
        calls["n"] += 1
        if calls["n"] == 3:
            raise KeyError("boom")
        return real_feed(self, line)

    monkeypatch.setattr(ClaudeStreamParser, "feed", flaky_feed)
    for k, v in run_env(FAKE_TRANSCRIPT=SUBAGENT_STREAM).items():
        monkeypatch.setenv(k, v)
    bench_file = bench(tmp_path, "claude-code", "- {type: cost, threshold: 1.0}")
    store = Store(tmp_path / "c.db")
    out = run_benches(load_benches([bench_file]), store, RunOptions())
    session = store.load_session(next(out.results)["session_id"])
    assert any("adapter failed on this line: KeyError" in w["what"] for w in session.warnings)
    assert session.metrics.cost_usd == pytest.approx(0.5552176)  # the result line, long after, was recorded
    assert len(store.raw_lines(session.id)) == sum(1 for line in (REALDATA / SUBAGENT_STREAM).read_text().splitlines() if line.strip())


def test_a_binary_written_relative_to_the_bench_runs_from_any_folder_and_is_refused_in_a_container(tmp_path):
    """`binary: ./wrap.sh` is the bench's file: preflight and launch both find it beside the bench, wherever benchtape runs."""
    folder = tmp_path / "benches"
    folder.mkdir()
    wrap = folder / "wrap.sh"
    wrap.write_text(f'#!/bin/sh\nexec "{BIN / "fake-claude"}" "$@"\n')
    wrap.chmod(0o755)
    p = bench(folder, "claude-code", "- {type: cost, threshold: 1.0}")
    p.write_text(p.read_text().replace("binary: fake-claude", "binary: ./wrap.sh"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = benchtape("run", p, "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json", cwd=elsewhere, env=run_env(FAKE_TRANSCRIPT=SUBAGENT_STREAM))
    assert out.returncode == 0, out.stdout + out.stderr
    started = json.loads((tmp_path / "r.json").read_text())["results"][0]["session"]["actions"][0]["data"]
    assert started["binary"]["path"] == str(wrap)
    p.write_text(p.read_text().replace("level: home", "level: container"))
    out = benchtape("preflight", p, cwd=elsewhere, env=run_env())
    assert out.returncode == 3 and f"harness_config.binary {wrap} is a file on this machine" in out.stderr, out.stderr
