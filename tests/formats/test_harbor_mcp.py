"""A Harbor task's MCP servers (`[[environment.mcp_servers]]`, Harbor's MCPServerConfig) are given
to the agent as Harbor's own agents give them, not refused: the REAL Claude Code, run by
`benchtape run` on the task, connects to the task's stdio server (its own init line says so),
and the REAL Codex answers a call to the server's tool through the `-c mcp_servers.<name>=…`
the adapter passes. Each entry is checked as Harbor checks it, by its line; a harness
benchtape gives no servers to is said before the run."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from formatskit import benchtape
from harborkit import claude_reported

from benchtape.core.errors import BadInput
from benchtape.spec.harbor_task import load_harbor_task
from benchtape.spec.task import McpServer

TOML = """version = "1.0"

[agent]
timeout_sec = 120.0

[environment]
network_mode = "no-network"
{servers}"""


def _task(folder: Path, servers: str) -> Path:
    from benchtape.sandbox.baseimage import BASE_IMAGE

    (folder / "environment").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "solution").mkdir()
    (folder / "task.toml").write_text(TOML.format(servers=servers))
    (folder / "instruction.md").write_text("Ask the probe server's tool for a greeting and write it into answer.txt.\n")
    (folder / "environment" / "Dockerfile").write_text(f"FROM {BASE_IMAGE}\nWORKDIR /app\n")
    (folder / "tests" / "test.sh").write_text("#!/bin/bash\nmkdir -p /logs/verifier\n[ -s answer.txt ] && echo 1 > /logs/verifier/reward.txt || echo 0 > /logs/verifier/reward.txt\n")
    (folder / "solution" / "solve.sh").write_text("#!/bin/bash\necho probe-ok > answer.txt\n")
    return folder


def _stdio(path: Path) -> str:
    return f'\n[[environment.mcp_servers]]\nname = "mini"\ntransport = "stdio"\ncommand = "python3"\nargs = ["{path}"]\n'


def test_mcp_servers_are_read_as_harbor_reads_them_and_a_bad_entry_is_refused_by_its_line(tmp_path: Path) -> None:
    servers = _stdio(Path("/srv/mini.py")) + '\n[[environment.mcp_servers]]\nname = "docs"\ntransport = "http"\nurl = "http://127.0.0.1:8000/mcp"\n'
    runtime = load_harbor_task(_task(tmp_path / "served", servers)).runtime
    assert runtime is not None and runtime.mcp_servers == (
        McpServer("mini", "stdio", command="python3", args=("/srv/mini.py",)),
        McpServer("docs", "streamable-http", url="http://127.0.0.1:8000/mcp"),  # Harbor reads "http" as streamable-http
    )
    for n, (written, said, fix) in enumerate((
        ('\n[[environment.mcp_servers]]\nname = "s"\nurl = "http://h:1/sse"\ncomand = "x"\n', "`environment.mcp_servers.comand`", "did you mean `command`?"),
        ('\n[[environment.mcp_servers]]\nname = "s"\ntransport = "stdio"\n', "a stdio server needs `command`", 'command = "python3"'),
        ('\n[[environment.mcp_servers]]\nname = "s"\n', "transport sse needs `url`", "url ="),  # Harbor's default transport is sse
        ('\n[[environment.mcp_servers]]\nname = "s"\ntransport = "websocket"\nurl = "ws://h"\n', "`transport` must be one of", 'transport = "stdio"'),
        ('\n[[environment.mcp_servers]]\nname = "a.b"\ncommand = "x"\ntransport = "stdio"\n', "letters, digits", 'name = "files"'),
        ('\n[[environment.mcp_servers]]\nname = "s"\nurl = "http://h:1/mcp"\nheaders = { Authorization = "Bearer ${TOKEN}" }\n', "sends `headers`", "harbor run"),
        ('mcp_servers = "mini"\n', "must be a list of tables", "[[environment.mcp_servers]]"),
    )):
        folder = _task(tmp_path / f"bad{n}", written)
        with pytest.raises(BadInput) as refused:
            load_harbor_task(folder)
        assert said in refused.value.what and fix in (refused.value.fix or ""), refused.value.render()
        key_line = next(i for i, line in enumerate((folder / "task.toml").read_text().splitlines(), start=1) if "mcp_servers" in line)
        assert refused.value.file == str(folder / "task.toml") and refused.value.line is not None and refused.value.line >= key_line, refused.value.render()


def test_each_server_is_refused_by_its_own_lines_and_a_key_harbor_ignores_is_ignored(tmp_path: Path) -> None:
    """The second of two servers is named by its own lines (task.toml kept only a key's first
    line, so it was named by the first server's); a key Harbor's model does not define and that
    reads as none of its own (`env`, `description`) is ignored as Harbor ignores it, and said."""
    two = _stdio(Path("/srv/a.py")) + '\n[[environment.mcp_servers]]\nname = "other"\ntransport = "stdio"\ncommand = ""\n'
    folder = _task(tmp_path / "two", two)
    lines = (folder / "task.toml").read_text().splitlines()
    with pytest.raises(BadInput) as refused:
        load_harbor_task(folder)
    assert "'other': a stdio server needs `command`" in refused.value.what and refused.value.line == len(lines), (refused.value.render(), lines)
    twice = _task(tmp_path / "twice", _stdio(Path("/srv/a.py")) * 2)
    with pytest.raises(BadInput) as again:
        load_harbor_task(twice)
    second_name = [i for i, line in enumerate((twice / "task.toml").read_text().splitlines(), start=1) if line.startswith("name =")][1]
    assert "two MCP servers are named 'mini'" in again.value.what and again.value.line == second_name, again.value.render()
    extra = _task(tmp_path / "extra", _stdio(Path("/srv/a.py")) + 'description = "a probe"\n')
    task = load_harbor_task(extra)
    assert task.runtime is not None and [s.name for s in task.runtime.mcp_servers] == ["mini"]
    assert any("environment.mcp_servers.description` (task.toml line" in n and "ignored, as Harbor ignores it" in n for n in task.runtime.notes), task.runtime.notes
    newline = _task(tmp_path / "newline", '\n[[environment.mcp_servers]]\nname = "s"\nurl = "http://h:1/mcp\\n"\n')
    with pytest.raises(BadInput) as bad_url:
        load_harbor_task(newline)
    assert "needs `url`, an http(s) URL" in bad_url.value.what, bad_url.value.render()


def test_a_harness_given_no_servers_is_said_before_the_run(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    _task(tasks / "served", _stdio(Path("/srv/mini.py")))
    preview = benchtape("run", tasks, "--harness", "gemini-cli", "--model", "scripted", "--dry-run", cwd=tmp_path)
    assert preview.returncode == 0, preview.stdout + preview.stderr
    said = preview.stdout + preview.stderr
    assert "MCP servers (environment.mcp_servers) are given to claude-code and codex only" in said and "gemini-cli run without them: served" in said, said
    quiet = benchtape("run", tasks, "--harness", "oracle", "--dry-run", cwd=tmp_path)
    assert quiet.returncode == 0 and "environment.mcp_servers" not in quiet.stdout + quiet.stderr, quiet.stdout + quiet.stderr
    # what the servers will do is said too: the command a stdio one runs here (level home is no
    # boundary), Claude Code's permission to call their tools, Codex without SSE
    claude = benchtape("run", tasks, "--harness", "claude-code", "--model", "scripted", "--dry-run", cwd=tmp_path)
    said = " ".join((claude.stdout + claude.stderr).split())
    assert claude.returncode == 0 and "stdio MCP server is started by the agent on this machine, as you" in said and "served: python3 /srv/mini.py" in said, said
    assert "Claude Code asks before each MCP tool call" in said and "permission_mode: bypass" in said, said
    sse = _task(tmp_path / "sse-tasks" / "far", '\n[[environment.mcp_servers]]\nname = "far"\nurl = "http://127.0.0.1:8000/sse"\n')
    codex = benchtape("run", sse.parent, "--harness", "codex", "--model", "scripted", "--dry-run", cwd=tmp_path)
    assert "Codex has no SSE client" in " ".join((codex.stdout + codex.stderr).split()) and "far: far" in codex.stdout + codex.stderr, codex.stdout + codex.stderr


def test_claude_codes_permission_note_only_for_a_setup_that_would_ask(tmp_path: Path) -> None:
    """The note that Claude Code asks before each MCP tool call is said of a setup whose
    permission mode asks, and not of one that bypasses (what the note itself tells you to do)."""
    from benchtape.adapters.claude_code import mcp_allowed

    _task(tmp_path / ".benchtape" / "tasks" / "served", _stdio(Path("/srv/mini.py")))
    env = {"XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    valid = benchtape("task", "validate", "served", "--sandbox", "home", cwd=tmp_path, env=env)  # an evaluation runs validated tasks
    assert valid.returncode == 0, valid.stdout + valid.stderr
    said = {}
    for name, options in (("asks", ""), ("bypass", ", options: {permission_mode: bypass}")):
        evaluation = tmp_path / ".benchtape" / "evaluations" / f"{name}.yaml"
        evaluation.parent.mkdir(parents=True, exist_ok=True)
        evaluation.write_text(f"apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: all\ntools:\n  - {{tool: claude-code, model: scripted{options}}}\n")
        out = benchtape("run", name, "--dry-run", cwd=tmp_path, env=env)
        assert out.returncode == 0, out.stdout + out.stderr
        said[name] = " ".join((out.stdout + out.stderr).split())
    assert "Claude Code asks before each MCP tool call" in said["asks"], said["asks"]
    assert "Claude Code asks before each MCP tool call" not in said["bypass"] and "stdio MCP server is started by the agent" in said["bypass"], said["bypass"]
    assert mcp_allowed(["--dangerously-skip-permissions"]) and mcp_allowed(["--permission-mode=bypassPermissions"]) and mcp_allowed(["--allowedTools", "Read,mcp__mini__probe"])
    assert not mcp_allowed(["--permission-mode", "acceptEdits"]) and not mcp_allowed(["--allowedTools", "Edit"]) and not mcp_allowed([])


def test_the_real_claude_code_connects_to_the_tasks_stdio_server(tmp_path: Path) -> None:
    """`benchtape run` on the task with the real Claude Code: its own init line lists the task's
    server as connected (without the server given it lists none)."""
    from realagents import MINI_MCP

    tasks = tmp_path / "tasks"
    _task(tasks / "served", _stdio(MINI_MCP))
    reported, _ = claude_reported(tasks, tmp_path)
    assert reported and {"name": "mini", "status": "connected"} in (reported[-1].get("mcp_servers") or []), reported


def test_the_real_codex_calls_the_tasks_server_through_the_adapters_overrides(tmp_path: Path) -> None:
    """The `-c mcp_servers.mini={command = …, args = […]}` the Codex adapter adds for a task's
    server, given to the real Codex: the scripted model's call of the server's tool is answered
    by the server (a config it could not read would leave the tool unknown)."""
    from realagents import MINI_MCP, need, parse, run_codex, session_of

    from benchtape.adapters.base import Launch
    from benchtape.adapters.codex import CodexAdapter
    from benchtape.adapters.codex_exec import CodexExecParser
    from benchtape.models.server import serve
    from benchtape.spec.script import script_from

    codex = need("codex")
    server = McpServer("mini", "stdio", command="python3", args=(str(MINI_MCP),))
    launch = Launch(prompt="p", work_dir=tmp_path, root=tmp_path, home=tmp_path, scenario={"mcp_servers": [server.to_dict()]})
    argv = CodexAdapter().command(launch).argv
    overrides = [a for i, a in enumerate(argv) if a.startswith("mcp_servers.") and argv[i - 1] == "-c"]
    assert overrides == [f'mcp_servers.mini={{command = "python3", args = ["{MINI_MCP}"]}}'], argv
    import tomllib

    odd = McpServer("odd", "stdio", command="py\x7fthon", args=('a"b', "c\\d", "é"))
    (value,) = [a.split("=", 1)[1] for a in CodexAdapter().command(Launch(prompt="p", work_dir=tmp_path, root=tmp_path, scenario={"mcp_servers": [odd.to_dict()]})).argv if a.startswith("mcp_servers.odd=")]
    assert tomllib.loads(f"x = {value}")["x"] == {"command": "py\x7fthon", "args": ['a"b', "c\\d", "é"]}  # TOML as Codex parses it, DEL included
    work = tmp_path / "work"
    script = {"steps": [{"tool": "mcp__mini__probe", "input": {"x": "task"}}, {"say": "asked the probe"}]}
    with serve(None) as srv:
        url = srv.add("mcp", script_from(script)) + "/v1"
        run = run_codex(codex, url, work, "Ask the probe.", *[x for o in overrides for x in ("-c", o)])
    assert run.rc == 0, run.stderr[-2000:]
    calls = session_of(parse(CodexExecParser(), run.lines)).calls
    probe = [c for c in calls if c.tool == "mcp__mini__probe"]
    assert probe and probe[0].outcome == "ok" and "probe-ok" in json.dumps(probe[0].output), [(c.tool, c.outcome, c.output) for c in calls]
