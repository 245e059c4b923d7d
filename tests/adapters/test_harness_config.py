"""harness_config checking, the argv each harness is started with, and preflight findings."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from benchtape.adapters.base import Launch, get_adapter
from benchtape.adapters.claude_code import ClaudeCodeAdapter, parse_config
from benchtape.adapters.codex import CodexAdapter
from benchtape.adapters.codex import parse_config as parse_codex
from benchtape.core.errors import BadInput


def launch(tmp_path: Path, config: dict | None = None, **kw) -> Launch:
    return Launch(prompt="fix the test", work_dir=tmp_path, root=tmp_path, harness_config=config or {}, **kw)


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ({"model": 3}, "claude-code harness_config: model must be a string, got int"),
        ({"effort": "hgih"}, 'effort "hgih" is not a level the CLI accepts'),
        ({"effort": "High"}, 'effort "High" is not a level the CLI accepts'),
        ({"effort": ""}, "effort must not be empty"),
        ({"binary": ""}, "binary must not be empty"),
        ({"system_prompt": ["a"]}, "system_prompt must be a string, got list"),
        ({"args": "--foo"}, "args must be a list of strings, got string"),
        ({"args": ["--max-turns", 3]}, "args must be a list of strings, got a list with int"),
        ({"agent_env": True}, "agent_env must be a string, got bool"),
        ({"magmux_binary": 1.5}, "magmux_binary must be a string, got float"),
        ({"plugins": {"id": "x"}}, "plugins must be a list"),
        ({"plugins": [{"path": "p"}]}, "plugins[0] has no id"),
        ({"environment": "yes"}, "environment must be a map, got string"),
        ({"environment": {"probe": "no"}}, "environment.probe must be a bool, got string"),
        ({"environment": {"details": "8"}}, "environment.details must be an int, got string"),
        ({"environment": {"probe": False, "require": True}}, "environment.probe is false but environment.require is true"),
    ],
)
def test_claude_config_errors_name_the_key(config: dict, message: str) -> None:
    with pytest.raises(BadInput) as err:
        parse_config(config)
    assert message in str(err.value)


def test_claude_config_values_and_what_is_ignored() -> None:
    assert parse_config({"temperature": 0.2, "permission_mode": "plan"}) == parse_config({})
    cfg = parse_config(
        {
            "binary": "/opt/claude",
            "model": "",
            "effort": None,
            "args": ["--permission-mode", "bypassPermissions"],
            "plugins": [{"id": "dev@magus", "path": "plugins/dev"}],
            "environment": {"probe": False, "details": 0},
        }
    )
    assert (cfg.binary, cfg.model, cfg.effort) == ("/opt/claude", None, None)  # "" omits, ~ is the CLI default
    assert cfg.args == ("--permission-mode", "bypassPermissions")
    assert cfg.plugins == ({"id": "dev@magus", "path": "plugins/dev"},)
    assert (cfg.environment.probe, cfg.environment.details, cfg.environment.require) == (False, 0, False)
    for level in ("low", "medium", "high", "xhigh", "max"):
        assert parse_config({"effort": level}).effort == level


def test_claude_argv_puts_args_last_and_the_prompt_on_stdin(tmp_path: Path) -> None:
    config = {"model": "haiku", "system_prompt": "be brief", "effort": "high", "args": ["--permission-mode", "bypassPermissions"]}
    cmd = ClaudeCodeAdapter().command(launch(tmp_path, config, session_uuid="0000-1111"))
    assert Path(cmd.argv[0]).name == "claude"  # the pinned binary when installed, else `claude` on PATH
    assert cmd.argv[1:] == [
        "--print", "--verbose", "--output-format", "stream-json", "--input-format", "text",
        "--session-id", "0000-1111", "--model", "haiku", "--system-prompt", "be brief", "--effort", "high",
        "--permission-mode", "bypassPermissions",
    ]  # fmt: skip
    assert cmd.stdin == b"fix the test"
    run_model = ClaudeCodeAdapter().command(launch(tmp_path, config, model="opus", session_uuid="u"))
    assert run_model.argv[run_model.argv.index("--model") + 1] == "opus"


def test_codex_config_and_argv(tmp_path: Path) -> None:
    with pytest.raises(BadInput, match="codex harness_config: model must be a string, got int"):
        parse_codex({"model": 5})
    with pytest.raises(BadInput, match='effort "hgih" is not a level the CLI accepts'):
        parse_codex({"effort": "hgih"})
    cmd = CodexAdapter().command(launch(tmp_path, {"model": "gpt-5-codex", "effort": "low", "args": ["--profile", "x"]}))
    assert Path(cmd.argv[0]).name == "codex"
    assert cmd.argv[1:] == [
        "exec", "--json", "--skip-git-repo-check", "--sandbox", "workspace-write",
        "-m", "gpt-5-codex", "-c", "model_reasoning_effort=low", "-c", "allow_login_shell=false", "--profile", "x", "-",
    ]  # fmt: skip  (a plain shell: a login shell's /etc/profile sets PATH anew, losing a task's project environment)
    assert cmd.stdin == b"fix the test"
    own_sandbox = CodexAdapter().command(launch(tmp_path, {"args": ["--sandbox", "danger-full-access"]}))
    assert own_sandbox.argv.count("--sandbox") == 1
    # in benchtape's container the container is the fence (codex's bwrap cannot make namespaces there)
    contained = CodexAdapter().command(launch(tmp_path, {}, in_container=True))
    assert contained.argv[contained.argv.index("--sandbox") + 1] == "danger-full-access"
    chosen = CodexAdapter().command(launch(tmp_path, {"args": ["--sandbox", "read-only"]}, in_container=True))
    assert chosen.argv.count("--sandbox") == 1 and "danger-full-access" not in chosen.argv
    (tmp_path / ".git").mkdir()
    in_git = CodexAdapter().command(launch(tmp_path, {}))
    assert "--skip-git-repo-check" not in in_git.argv  # only outside git


def test_every_claude_run_is_hermetic_and_a_scripted_one_points_at_its_endpoint(tmp_path: Path) -> None:
    plain = ClaudeCodeAdapter().command(launch(tmp_path, {}))
    assert plain.env["DISABLE_AUTOUPDATER"] == "1" and plain.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert plain.env["CLAUDE_CODE_FORCE_SESSION_PERSISTENCE"] == "1"  # as madbench always sets it
    assert ClaudeCodeAdapter().command(launch(tmp_path, {}, interactive=True)).env["CLAUDE_CODE_FORCE_SESSION_PERSISTENCE"] == "1"
    assert "ANTHROPIC_BASE_URL" not in plain.env and "IS_SANDBOX" not in plain.env
    scripted = ClaudeCodeAdapter().command(launch(tmp_path, {"args": ["--permission-mode", "bypassPermissions"]}, model="scripted", endpoint="http://127.0.0.1:9/s/x"))
    assert scripted.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:9/s/x" and "--model" not in scripted.argv
    assert scripted.env.get("IS_SANDBOX") == ("1" if os.geteuid() == 0 else None)


def test_a_scripted_codex_gets_a_private_codex_home_pointing_at_its_endpoint(tmp_path: Path) -> None:
    cmd = CodexAdapter().command(launch(tmp_path, {}, model="scripted", endpoint="http://127.0.0.1:9/s/x", home=tmp_path))
    assert cmd.env["CODEX_HOME"] == f"{tmp_path}/.codex" and "-m" not in cmd.argv
    assert 'base_url = "http://127.0.0.1:9/s/x/v1"' in cmd.home_files[".codex/config.toml"]


def test_adapters_are_registered() -> None:
    assert get_adapter("claude-code").name == "claude-code"
    assert get_adapter("codex").name == "codex"


def _bin(tmp_path: Path, name: str) -> str:
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    exe = folder / name
    exe.write_text("#!/bin/sh\n")
    exe.chmod(0o755)
    return str(folder)


def test_claude_preflight_names_what_is_missing_and_never_a_key(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    adapter = ClaudeCodeAdapter()
    findings = adapter.preflight(None, {"binary": "claude"}, {"PATH": str(tmp_path / "nowhere"), "HOME": str(home)})
    assert len(findings) == 2
    assert "`claude` is not on PATH" in findings[0]
    assert "ANTHROPIC_API_KEY" in findings[1] and str(home) in findings[1]

    secret = "sk-ant-do-not-print-me"
    ok = adapter.preflight(None, {}, {"PATH": _bin(tmp_path, "claude"), "HOME": str(home), "ANTHROPIC_API_KEY": secret})
    assert ok == []
    bad = adapter.preflight(None, {"binary": "claude-nightly"}, {"PATH": _bin(tmp_path, "claude"), "ANTHROPIC_API_KEY": secret})
    assert bad and all(secret not in f for f in bad) and "claude-nightly" in bad[0]


@pytest.mark.parametrize(
    ("path", "content"),
    [(".claude/.credentials.json", "{}"), (".claude.json", json.dumps({"oauthAccount": {"emailAddress": "a@b"}}))],
)
def test_claude_preflight_accepts_a_subscription_login(tmp_path: Path, path: str, content: str) -> None:
    home = tmp_path / "home"
    (home / path).parent.mkdir(parents=True, exist_ok=True)
    (home / path).write_text(content)
    assert ClaudeCodeAdapter().preflight(None, {}, {"PATH": _bin(tmp_path, "claude"), "HOME": str(home)}) == []


def test_claude_preflight_refuses_a_bad_config_but_not_interactive_scenarios(tmp_path: Path) -> None:
    env = {"PATH": _bin(tmp_path, "claude"), "ANTHROPIC_API_KEY": "k"}
    assert ClaudeCodeAdapter().preflight(None, {"effort": "hgih"}, env) == [
        'claude-code harness_config: effort "hgih" is not a level the CLI accepts; '
        "use one of low, medium, high, xhigh, max (or omit `effort` for the CLI default)"
    ]
    assert ClaudeCodeAdapter().preflight(launch(tmp_path, scenario={"name": "fix-bug"}), {}, env) == []  # interactive is the default, and runs


def test_codex_preflight(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    findings = CodexAdapter().preflight(None, {"binary": "codex"}, {"PATH": "", "HOME": str(home)})
    assert "`codex` is not on PATH" in findings[0] and "OPENAI_API_KEY" in findings[1]
    (home / ".codex").mkdir()
    (home / ".codex/auth.json").write_text("{}")
    assert CodexAdapter().preflight(None, {}, {"PATH": _bin(tmp_path, "codex"), "HOME": str(home)}) == []
    assert CodexAdapter().preflight(None, {}, {"PATH": _bin(tmp_path, "codex"), "OPENAI_API_KEY": "sk-x"}) == []


def test_codex_own_sandbox_in_benchtapes_container_is_refused_before_any_spend(tmp_path: Path) -> None:
    """bwrap cannot make namespaces in the container: a session there whose args chose codex's
    own sandbox measured `no_changes` with every command failing. Preflight refuses it, for a
    bench's args and an evaluation's `sandbox` option alike (its option becomes those args)."""
    from benchtape.adapters.codex import own_sandbox_in_container
    from benchtape.app.preflight import preflight
    from benchtape.spec.bench import load_bench

    chosen = {(): None, ("--sandbox", "workspace-write"): "workspace-write", ("-s", "read-only"): "read-only", ("--sandbox=read-only",): "read-only",
              ("--full-auto",): "workspace-write (--full-auto)", ("--sandbox", "danger-full-access"): None, ("--sandbox=danger-full-access",): None, ("--yolo",): None}
    assert {args: own_sandbox_in_container({"args": list(args)}) for args in chosen} == chosen

    def findings(level: str, args: list[str]) -> list[str]:
        (tmp_path / "b.yaml").write_text(f"harness: codex\nharness_config: {{args: {json.dumps(args)}}}\nscenarios:\n  - name: s\n    prompt: p\n    sandbox: {level}\n")
        pf = preflight(load_bench(tmp_path / "b.yaml"), env={"PATH": _bin(tmp_path, "codex"), "OPENAI_API_KEY": "sk-x"})
        return [f for f in pf.blocking if "codex's own sandbox" in f]

    [refused] = findings("container", ["--sandbox", "workspace-write"])
    assert "(workspace-write) cannot run inside benchtape's container" in refused and "options: {sandbox: danger-full-access}" in refused
    assert findings("container", []) == findings("container", ["--sandbox", "danger-full-access"]) == findings("home", ["--sandbox", "workspace-write"]) == []


@pytest.mark.parametrize("harness", ["claude-code", "codex", "gemini-cli", "qwen-code", "opencode", "mini-swe-agent", "aider"])
def test_every_cli_harness_preflight_starts_alike(harness: str, tmp_path: Path) -> None:
    """One prologue (adapters/base.preflight_prologue): a bad harness_config is the only finding;
    a binary not on PATH names how to get the pinned version, from the harness's install recipe."""
    from benchtape.tools.binaries import VERIFIED

    adapter = get_adapter(harness)
    bad = adapter.preflight(None, {"binary": 3}, {"PATH": ""}, scripted=True)
    assert len(bad) == 1 and "binary must be a string" in bad[0] and harness in bad[0], bad
    [missing] = adapter.preflight(None, {"binary": "no-such-agent"}, {"PATH": str(tmp_path)}, scripted=True)
    pin = VERIFIED[harness]
    assert missing.startswith(f"{harness}: `no-such-agent` is not on PATH; `benchtape tools install {harness}` installs the pinned {pin.version}")
    assert ("into a venv of its own" in missing) == (pin.kind == "pypi")
    assert adapter.preflight(None, {"binary": "agent"}, {"PATH": _bin(tmp_path, "agent")}, scripted=True) == []
