"""The stand-in binaries print their transcript as a live agent would, and obey their knobs."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from adapterkit import feed_lines, session_of

from benchtape.adapters.base import Launch
from benchtape.adapters.claude_code import ClaudeCodeAdapter
from benchtape.adapters.codex import CodexAdapter

BIN = Path(__file__).resolve().parents[1] / "bin"
STREAM = "claude-stream-json/obers_ui__tools-thinking-no-subagent__v2.1.72.jsonl"
EXEC = "codex-exec-json/agentcmd__stream-output-4__cli-0.46.0.jsonl"


def run(name: str, realdata: Path, *, stdin: bytes = b"", timeout: float = 10, argv: list[str] | None = None, **env: str):
    full = {**os.environ, "BENCHTAPE_REALDATA": str(realdata), **env}
    return subprocess.run(
        [sys.executable, str(BIN / name), *(argv or [])], input=stdin, capture_output=True, env=full, timeout=timeout, check=False
    )


@pytest.mark.parametrize(("name", "transcript"), [("fake-claude", STREAM), ("fake-codex", EXEC)])
def test_standin_prints_its_transcript_and_exits_with_the_code(realdata: Path, name: str, transcript: str) -> None:
    assert os.access(BIN / name, os.X_OK)
    proc = run(name, realdata, FAKE_TRANSCRIPT=transcript, FAKE_EXIT="7", FAKE_DELAY="0.001")
    assert proc.returncode == 7
    assert proc.stdout.decode().splitlines() == (realdata / transcript).read_text().splitlines()


def test_standin_stops_early_and_cuts_the_last_line(realdata: Path) -> None:
    proc = run("fake-codex", realdata, FAKE_TRANSCRIPT=EXEC, FAKE_STOP_AFTER="3", FAKE_CUT="15")
    out = proc.stdout.decode()
    whole = (realdata / EXEC).read_text().splitlines()
    assert out.splitlines()[:3] == whole[:3] and out.endswith(whole[3][:15]) and not out.endswith("\n")
    actions = feed_lines(CodexAdapter().parser(), out.splitlines())
    assert actions[-1].kind == "adapter.warning" and "truncated" in actions[-1].data["what"]


def test_standin_hangs_when_asked(realdata: Path) -> None:
    with pytest.raises(subprocess.TimeoutExpired) as hung:
        run("fake-claude", realdata, FAKE_TRANSCRIPT=STREAM, FAKE_HANG="1", timeout=1.0)
    assert hung.value.stdout and len(hung.value.stdout.decode().splitlines()) == len((realdata / STREAM).read_text().splitlines())


def test_claude_command_run_against_the_standin(realdata: Path, tmp_path: Path) -> None:
    """The argv the adapter builds, run for real (with the stand-in as the binary), parses like the file."""
    launch = Launch(
        prompt="check the plan",
        work_dir=tmp_path,
        root=tmp_path,
        harness_config={"binary": str(BIN / "fake-claude"), "effort": "low"},
        session_uuid="9f0c",
    )
    cmd = ClaudeCodeAdapter().command(launch)
    log = tmp_path / "argv.json"
    env = {**os.environ, **cmd.env, "BENCHTAPE_REALDATA": str(realdata), "FAKE_TRANSCRIPT": STREAM, "FAKE_ARGV": str(log)}
    proc = subprocess.run(cmd.argv, input=cmd.stdin, capture_output=True, env=env, cwd=tmp_path, timeout=10, check=True)
    seen = json.loads(log.read_text())
    assert seen["stdin"] == "check the plan" and seen["argv"][1:] == cmd.argv[1:]
    session = session_of(feed_lines(ClaudeCodeAdapter().parser(), proc.stdout.decode().splitlines()))
    assert session.metrics.cost_usd and len(session.calls) == 17 and session.warnings == []
