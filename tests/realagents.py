"""Running the real Claude Code and Codex against a scripted model server, hermetically.

Each run gets a private HOME (and CODEX_HOME), stdin from /dev/null (or the stream-json
turns it is fed), PATH and nothing else from this process's environment, plus the
recipes' variables (benchtape.adapters.endpoints). The binaries are the pinned ones under
`.benchtape/tools` (`make agents`); without them a test skips with the reason, except
in CI (CI=true), where it fails: CI installs them, so a skip there would hide a gap.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from benchtape.adapters.endpoints import claude_env, codex_env, write_codex_home
from benchtape.core.errors import BadInput
from benchtape.core.model import Action, Session, project
from benchtape.tools.binaries import resolve

ROOT = Path(__file__).resolve().parents[1]
TOOLS = Path(os.environ.get("BENCHTAPE_TOOLS") or ROOT / ".benchtape" / "tools")
MINI_MCP = ROOT / "fixtures-red" / "interactive" / "plugins" / "demo" / "probe_mcp.py"  # the demo plugin's stdio MCP server (one tool, `probe`)


def need(tool: str) -> Path:
    """The pinned binary of `tool`; a skip naming why it is missing (a failure in CI)."""
    reason = None
    if shutil.which("node") is None:
        reason = "node is not installed"
    else:
        try:
            return resolve(tool, root=TOOLS).path
        except BadInput as exc:
            reason = exc.render().replace("\n", " ")
    if os.environ.get("CI") == "true":
        pytest.fail(f"the real {tool} is required in CI: {reason}")
    pytest.skip(f"real {tool} not available: {reason}")


def npm_global() -> list[str]:
    """What is installed in npm's global prefix (what an updater's `npm install -g` would change)."""
    root = Path(subprocess.run(["npm", "root", "-g"], capture_output=True, text=True, check=True).stdout.strip())
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LANG": "C.UTF-8", "HOME": str(home)}


def parse(parser: Any, lines: list[str]) -> list[Action]:
    out: list[Action] = []
    for line in lines:
        out.extend(parser.feed(line))
    out.extend(parser.finish())
    return out


def session_of(actions: list[Action]) -> Session:
    return project([a.stamped(seq=i + 1) for i, a in enumerate(actions)])


# ---------------------------------------------------------------- claude


@dataclass
class ClaudeRun:
    rc: int
    lines: list[str]
    stderr: str
    home: Path
    work: Path
    session_id: str
    log: list[dict[str, Any]] = field(default_factory=list)

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines if line.strip()]

    def results(self) -> list[dict[str, Any]]:
        return [e for e in self.events() if e.get("type") == "result"]

    def transcript(self) -> list[Path]:
        """The on-disk session found by its id (never by computing the project folder's name),
        then its subagents' sidechain files."""
        main = glob.glob(str(self.home / ".claude" / "projects" / "*" / f"{self.session_id}.jsonl"))
        subs = sorted(glob.glob(str(self.home / ".claude" / "projects" / "*" / self.session_id / "subagents" / "agent-*.jsonl")))
        return [Path(p) for p in main + subs]


def run_claude(
    binary: Path,
    base_url: str,
    work: Path,
    prompt: str | None,
    *args: str,
    home: Path | None = None,
    turns: list[str] | None = None,
    extra_env: dict[str, str] | None = None,
    timeout: float = 120,
) -> ClaudeRun:
    """`claude -p` in stream-json; with `turns`, one process fed each as a stream-json user message."""
    home = home or work.parent / f"{work.name}-home"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    sid = str(uuid.uuid4())
    env = {**base_env(home), **claude_env(base_url, home), **(extra_env or {})}
    # the prompt right after -p: options such as --tools take several values and would swallow it
    argv = [str(binary), "-p", *([prompt] if turns is None else []), "--output-format", "stream-json", "--verbose", "--session-id", sid]
    if "--permission-mode" not in args:
        argv += ["--permission-mode", "bypassPermissions"]
    argv += list(args)
    if turns is None:
        done = subprocess.run(argv, cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
        return ClaudeRun(done.returncode, done.stdout.splitlines(), done.stderr, home, work, sid)
    argv += ["--input-format", "stream-json"]
    proc = subprocess.Popen(argv, cwd=work, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    lines: list[str] = []
    try:
        assert proc.stdin is not None and proc.stdout is not None
        for text in turns:
            proc.stdin.write(json.dumps({"type": "user", "message": {"role": "user", "content": text}}) + "\n")
            proc.stdin.flush()
            for line in proc.stdout:
                lines.append(line.rstrip("\n"))
                if line.startswith('{"') and json.loads(line).get("type") == "result":
                    break
        proc.stdin.close()
        lines += [line.rstrip("\n") for line in proc.stdout]
        rc = proc.wait(timeout=timeout)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    return ClaudeRun(rc, lines, proc.stderr.read() if proc.stderr else "", home, work, sid)


# ---------------------------------------------------------------- codex


@dataclass
class CodexRun:
    rc: int
    lines: list[str]
    stderr: str
    codex_home: Path
    work: Path

    def events(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.lines if line.startswith("{")]

    @property
    def thread_id(self) -> str | None:
        return next((e.get("thread_id") for e in self.events() if e.get("type") == "thread.started"), None)

    def rollout(self) -> Path | None:
        """The rollout file found by the thread id exec reported."""
        found = glob.glob(str(self.codex_home / "sessions" / "*" / "*" / "*" / f"rollout-*-{self.thread_id}.jsonl"))
        return Path(found[0]) if len(found) == 1 else None


def mcp_config(name: str = "mini") -> str:
    return f'\n[mcp_servers.{name}]\ncommand = "python3"\nargs = ["{MINI_MCP}"]\n'


def run_codex(binary: Path, openai_url: str, work: Path, prompt: str, *args: str, codex_home: Path | None = None, config_extra: str = "", resume: str | None = None, timeout: float = 120) -> CodexRun:
    """`codex exec --json` (or `exec resume <thread>`) with a private CODEX_HOME pointing at the server."""
    codex_home = codex_home or work.parent / f"{work.name}-codex"
    home = work.parent / f"{work.name}-home"
    home.mkdir(parents=True, exist_ok=True)
    work.mkdir(parents=True, exist_ok=True)
    write_codex_home(codex_home, openai_url, extra=config_extra)
    env = {**base_env(home), **codex_env(codex_home, home)}
    head = [str(binary), "exec", "resume", "--json", "--skip-git-repo-check", resume] if resume else [str(binary), "exec", "--json", "--skip-git-repo-check"]
    done = subprocess.run([*head, *args, prompt], cwd=work, env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout)
    return CodexRun(done.returncode, done.stdout.splitlines(), done.stderr, codex_home, work)
