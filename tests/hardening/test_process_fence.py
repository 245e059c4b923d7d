"""What each sandbox level confines, as measured: agent-written code never reads another
process's environment.

A secret is planted in benchtape's own environment and another in the process that started
benchtape (its parent, which does not pass it on). At each level the agent (a mock Bash step)
and an `exec` check (agent-written code run during grading) both read every
`/proc/<pid>/environ` they can; neither may find either secret. Before, at level `home` the
check found both. The README's security section states these results.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

PROBE = "cat /proc/[0-9]*/environ 2>/dev/null | tr '\\0' '\\n' | grep -e PLANTED_API_KEY= -e PARENT_SECRET_TOKEN="
PARENT = "import os, subprocess, sys; env = dict(os.environ); env.pop('PARENT_SECRET_TOKEN'); sys.exit(subprocess.call(sys.argv[1:], env=env))"


def _bench(where: Path, level: str) -> Path:
    bench = where / "bench.yaml"
    bench.write_text(textwrap.dedent(f"""\
        harness: mock
        scenarios:
          - name: reads-environs
            prompt: look around
            sandbox: {level}
            mock:
              steps:
                - tool: Bash
                  input: {{command: {json.dumps(PROBE + " > found-by-agent.txt; echo probed")}}}
                - say: done
            checks:
              - type: exec
                args: {{cmd: [sh, -c, {json.dumps("! (" + PROBE + ")")}]}}
              - type: exec
                args: {{cmd: [sh, -c, "test -f found-by-agent.txt && test ! -s found-by-agent.txt"]}}
        """))
    return bench


def _run(where: Path, level: str) -> tuple[subprocess.CompletedProcess, list[dict]]:
    work = where / "cwd"
    work.mkdir()
    bench = _bench(where, level)
    env = {**os.environ, "NO_COLOR": "1", "HOME": str(where), "PLANTED_API_KEY": "sk-planted-in-benchtape-0123456789", "PARENT_SECRET_TOKEN": "tok-planted-in-the-parent-0123456789"}
    argv = [sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(where / "s.db"), "--report-json", str(where / "r.json"), "--plain"]
    if level == "none":
        argv.append("--allow-host-writes")
    out = subprocess.run([sys.executable, "-c", PARENT, *argv], cwd=work, env=env, capture_output=True, text=True, timeout=300)
    [result] = json.loads((where / "r.json").read_text())["results"]
    return out, result["checks"]


def test_the_probe_finds_a_parents_secret_without_a_fence(tmp_path):
    """The control: the same probe, in a child whose own environment is scrubbed, reads the
    secret of the process that started it."""
    env = {**os.environ, "PARENT_SECRET_TOKEN": "tok-planted-in-the-parent-0123456789"}
    out = subprocess.run([sys.executable, "-c", "import subprocess, sys; sys.exit(subprocess.call(['sh', '-c', sys.argv[1]], env={'PATH': '/usr/bin:/bin'}))", PROBE], env=env, capture_output=True, text=True)
    assert "PARENT_SECRET_TOKEN=tok-planted-in-the-parent" in out.stdout


@pytest.mark.parametrize("level", ["none", "workspace", "home"])
def test_no_agent_and_no_grading_command_reads_a_planted_secret_at_a_local_level(tmp_path, level):
    from benchtape.sandbox.pidfence import fence

    if not fence().confined:
        pytest.skip(f"no PID namespace on this machine ({fence().why}): the README says what then leaks")
    out, checks = _run(tmp_path, level)
    assert [c["status"] for c in checks] == ["PASS", "PASS"], (checks, out.stderr)
    con = sqlite3.connect(tmp_path / "s.db")
    [(started,)] = con.execute("select data from actions where kind = 'session.started'").fetchall()
    con.close()
    assert json.loads(started)["process_fence"] == {"pid_namespace": True}


@pytest.mark.docker
def test_no_agent_and_no_grading_command_reads_a_planted_secret_in_a_container(tmp_path, docker_client, base_image):
    out, checks = _run(tmp_path, "container")
    assert [c["status"] for c in checks] == ["PASS", "PASS"], (checks, out.stderr)


def test_the_mock_agent_gets_no_credential_it_does_not_declare(tmp_path):
    """The host's OPENAI_API_KEY and ANTHROPIC_API_KEY reached the mock agent (stored redacted):
    an agent gets only the credentials its tool declares, and the mock declares none."""
    bench = tmp_path / "bench.yaml"
    bench.write_text(textwrap.dedent("""\
        harness: mock
        scenarios:
          - name: env
            prompt: p
            mock: {steps: [{tool: Bash, input: {command: "env | cut -d= -f1 | sort"}}, {say: done}]}
        """))
    env = {**os.environ, "NO_COLOR": "1", "OPENAI_API_KEY": "sk-host-openai-0123456789abcdef", "ANTHROPIC_API_KEY": "sk-ant-host-0123456789abcdef"}
    out = subprocess.run([sys.executable, "-m", "benchtape", "run", str(bench), "--db", str(tmp_path / "s.db"), "--plain"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    con = sqlite3.connect(tmp_path / "s.db")
    [(result,)] = con.execute("select data from actions where kind = 'tool.result'").fetchall()
    con.close()
    names = json.loads(result)["output"].split()
    assert "HOME" in names and "OPENAI_API_KEY" not in names and "ANTHROPIC_API_KEY" not in names


def test_a_tool_gets_the_credentials_it_declares_and_none_with_the_scripted_model(monkeypatch):
    from benchtape.adapters.base import Launch
    from benchtape.adapters.claude_code import ClaudeCodeAdapter
    from benchtape.adapters.codex import CodexAdapter

    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-openai")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-host")
    monkeypatch.setenv("ANTHROPIC_AUTH_TOKEN", "tok-host")
    launch = Launch(prompt="p", work_dir=Path("/w"), root=Path("/w"), home=Path("/w"))
    claude, codex = ClaudeCodeAdapter().command(launch).env, CodexAdapter().command(launch).env
    assert claude["ANTHROPIC_API_KEY"] == "sk-ant-host" and claude["ANTHROPIC_AUTH_TOKEN"] == "tok-host" and "OPENAI_API_KEY" not in claude
    assert codex["OPENAI_API_KEY"] == "sk-host-openai" and "ANTHROPIC_API_KEY" not in codex
    scripted = Launch(prompt="p", work_dir=Path("/w"), root=Path("/w"), home=Path("/w"), endpoint="http://127.0.0.1:1")
    assert "ANTHROPIC_AUTH_TOKEN" not in ClaudeCodeAdapter().command(scripted).env
    assert "OPENAI_API_KEY" not in CodexAdapter().command(scripted).env


def test_a_fenced_command_keeps_its_exit_code_stdin_and_a_missing_program_fails_as_before(tmp_path):
    from benchtape.core.command_runner import run_local
    from benchtape.sandbox.pidfence import fence

    if not fence().confined:
        pytest.skip(fence().why or "")
    env = {"PATH": os.environ["PATH"]}
    done = run_local(fence().wrap(["sh", "-c", "read x; echo got $x pid $$; sleep 60 & exit 3"], tmp_path, env), tmp_path, 30, env=env, stdin=b"in\n")
    assert (done.exit_code, done.output) == (3, "got in pid 2\n")  # its namespace's second process: the first reaps and kills what it left
    assert fence().wrap(["no-such-program-xyz"], tmp_path, env) == ["no-such-program-xyz"]


def test_a_command_whose_secret_cannot_be_covered_is_never_started(tmp_path):
    """A task's agent runs with its task's secrets covered in its own mount namespace; where one
    of them cannot be covered, the agent is not started (exit 126, said on stderr), rather than
    started able to read its answer. A path that is gone needs no covering."""
    from benchtape.core.command_runner import run_local
    from benchtape.sandbox.pidfence import fence

    if not fence().confined:
        pytest.skip(fence().why or "")
    secret = tmp_path / "task"
    secret.mkdir()
    (secret / "reference.patch").write_text("the answer\n")
    dangling = tmp_path / "link"
    dangling.symlink_to(tmp_path / "gone")  # exists as a name, and nothing can be mounted on it
    env = {"PATH": os.environ["PATH"]}
    look = ["sh", "-c", f"echo started; cat {secret}/reference.patch 2>&1 | head -1"]
    covered = run_local(fence().wrap(look, tmp_path, env, hidden=[str(secret), str(tmp_path / "missing")]), tmp_path, 30, env=env)
    assert covered.exit_code == 0 and "started" in covered.output and "the answer" not in covered.output, covered.output
    refused = subprocess.run(fence().wrap(look, tmp_path, env, hidden=[str(secret), str(dangling)]), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=30)
    assert refused.returncode == 126 and refused.stdout == "", (refused.returncode, refused.stdout)
    assert f"could not cover {dangling} from the agent" in refused.stderr and "--sandbox container" in refused.stderr, refused.stderr
    assert (secret / "reference.patch").read_text() == "the answer\n"  # covered in the namespace only


def test_without_a_pid_namespace_preflight_says_what_leaks_and_commands_still_run(tmp_path, monkeypatch):
    from benchtape.sandbox import pidfence

    pidfence.fence.cache_clear()
    monkeypatch.setattr(pidfence.shutil, "which", lambda name, path=None: None)
    monkeypatch.setattr(pidfence.os, "access", lambda path, mode: False)
    try:
        f = pidfence.fence()
        assert not f.confined and f.why == "`unshare` (util-linux) is not installed"
        assert f.wrap(["sh", "-c", "true"]) == ["sh", "-c", "true"]
        assert f.facts() == {"pid_namespace": False, "why": f.why}
        note = pidfence.unconfined_note()
        assert note is not None and "can read other processes' environments" in note and "sandbox: container" in note
        uncovered = pidfence.uncovered_note()
        assert uncovered is not None and "reference fix" in uncovered and f.why in uncovered and "--sandbox container" in uncovered
    finally:
        pidfence.fence.cache_clear()
