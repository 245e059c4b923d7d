"""Staging and probing Claude Code's environment, and the TUI's pre-seed, without the binary:
what benchtape writes, which commands it asks the sandbox to run, and how it reads what they
printed (outputs copied from Claude Code 2.1.328)."""

from __future__ import annotations

import json

from benchtape.adapters.claude_env import AGENT_ENV, MARKETS, Output, agent_env_flags, details_of, environment_of, fold, reported, stage
from benchtape.adapters.claude_tui import STOP_HOOK, seed
from benchtape.core.jsonobjects import merge_json

DETAILS = """demo 0.1.0
  Description: d
  Source: demo@fixtures

Component inventory
  Skills (2)  shout, greet
  Agents (1)  reviewer
  Hooks (0)
  MCP servers (1)  probe  (tool schemas resolved at runtime; not counted)
  LSP servers (0)
"""
LIST = json.dumps([{"id": "demo@fixtures", "version": "0.1.0", "scope": "user", "enabled": True, "installPath": "/h/.claude/plugins/cache/fixtures/demo/0.1.0", "mcpServers": {"probe": {"type": "stdio"}}}])
INIT = json.dumps({
    "type": "system", "subtype": "init", "tools": ["Bash", "Skill", "mcp__plugin_demo_probe__probe"],
    "mcp_servers": [{"name": "plugin:demo:probe", "status": "connected", "source": "plugin"}, {"name": "absent", "status": "failed", "source": "project"}],
    "plugins": [{"name": "demo", "path": "/h/m/demo", "source": "demo@fixtures", "version": "0.1.0"}, {"name": "cc-plugin-privacy", "path": "builtin", "source": "cc-plugin-privacy@builtin"}],
    "skills": ["demo:greet"], "slash_commands": ["demo:shout", "demo:greet"], "agents": ["general-purpose", "demo:reviewer"],
})


def test_plugins_are_staged_as_a_local_marketplace_and_installed(tmp_path):
    staged = stage("claude", tmp_path, ({"id": "demo@fixtures", "path": "/b/plugins/demo"}, {"id": "solo", "path": "/b/solo"}), None)
    assert staged.home_trees == {f"{MARKETS}/fixtures/demo": "/b/plugins/demo", f"{MARKETS}/benchtape/solo": "/b/solo"}
    market = json.loads(staged.home_files[f"{MARKETS}/fixtures/.claude-plugin/marketplace.json"])
    assert market["name"] == "fixtures" and market["plugins"] == [{"name": "demo", "source": "./demo", "description": "staged by benchtape from /b/plugins/demo"}]
    assert [s.argv for s in staged.setup] == [
        ["claude", "plugin", "marketplace", "add", str(tmp_path / MARKETS / "fixtures")],
        ["claude", "plugin", "marketplace", "add", str(tmp_path / MARKETS / "benchtape")],
        ["claude", "plugin", "install", "demo@fixtures"],
        ["claude", "plugin", "install", "solo@benchtape"],
    ]


def test_an_agent_env_runs_alone_with_v0_23_argv(tmp_path):
    source = tmp_path / "env"
    (source / "plugins" / "kit").mkdir(parents=True)
    (source / ".mcp.json").write_text("{}")
    home = tmp_path / "home" / AGENT_ENV
    assert agent_env_flags(home, source) == [
        "--bare", "--setting-sources", "", "--plugin-dir", str(home / "plugins" / "kit"),
        "--mcp-config", str(home / ".mcp.json"), "--strict-mcp-config", "--settings", str(home / "settings.json"),
    ]
    staged = stage("claude", tmp_path / "home", (), str(source))
    assert staged.home_trees == {AGENT_ENV: str(source)} and staged.home_files == {f"{AGENT_ENV}/settings.json": "{}\n"}


def test_plugin_details_inventory():
    assert details_of(DETAILS) == {"skills": ["shout", "greet"], "agents": ["reviewer"], "hooks": 0, "mcp_servers": ["probe"], "lsp_servers": 0}


def test_the_probe_record_folds_plugin_cli_details_and_the_init_line():
    outputs = {
        "plugin-list": Output(0, LIST, ""),
        "plugin-details:demo@fixtures": Output(0, DETAILS, ""),
        "plugin-install:broken@fixtures": Output(1, "", 'Failed to install plugin "broken@fixtures": corrupt manifest'),
        "init": Output(-9, INIT, ""),
    }
    record, problems = reported(outputs, ({"id": "demo@fixtures"}, {"id": "broken@fixtures"}))
    assert record["source"] == "plugin-cli" and record["sources"] == ["plugin-cli", "system:init"]
    demo = record["plugins"][0]
    assert demo["id"] == "demo@fixtures" and demo["skills"] == ["shout", "greet"] and demo["mcp_servers"] == ["probe"] and demo["path"] == "/h/m/demo"
    broken = next(p for p in record["plugins"] if p["id"] == "broken@fixtures")
    assert broken["enabled"] is False and "corrupt manifest" in broken["errors"][0]
    assert record["mcp_servers"] == [{"name": "plugin:demo:probe", "status": "connected"}, {"name": "absent", "status": "failed"}]
    assert record["commands"] == ["demo:shout", "demo:greet"] and "Skill" in record["tools"]
    assert problems == ["staged plugin broken@fixtures did not load: Failed to install plugin \"broken@fixtures\": corrupt manifest", "MCP server absent failed to start"]


def test_a_probe_that_could_not_run_is_a_problem_for_require():
    _, problems = reported({"plugin-list": Output(127, "", "claude: not found")}, ({"id": "demo@fixtures"},))
    assert problems[0].startswith("the environment probe (`claude plugin list --json`) failed: claude: not found")
    assert "staged plugin demo@fixtures is not listed by `claude plugin list`" in problems


def test_print_mode_init_alone_is_the_record_it_always_was():
    init = json.loads(INIT)
    assert fold(None, environment_of(init)) == environment_of(init)


def test_the_seed_answers_every_first_run_dialog_and_keeps_the_updater_off():
    files = seed({"ANTHROPIC_API_KEY": "sk-benchtape-scripted-0123456789abcdef"}, ["/w", "/w/sub"])
    state, settings = files[".claude.json"], files[".claude/settings.json"]
    assert state["hasCompletedOnboarding"] is True and state["autoUpdates"] is False
    assert state["customApiKeyResponses"]["approved"] == ["ted-0123456789abcdef"]
    assert state["projects"] == {"/w": {"hasTrustDialogAccepted": True}, "/w/sub": {"hasTrustDialogAccepted": True}}
    assert settings["skipDangerousModePermissionPrompt"] is True and settings["enableAllProjectMcpServers"] is True
    assert settings["env"] == {"DISABLE_AUTOUPDATER": "1"}
    assert settings["hooks"]["Stop"][0]["hooks"][0]["command"] == STOP_HOOK
    assert f"{AGENT_ENV}/settings.json" in seed({}, ["/w"], agent_env=True)


def test_the_seed_joins_what_staging_wrote():
    staged = {"enabledPlugins": {"demo@fixtures": True}, "hooks": {"Stop": [{"hooks": [{"type": "command", "command": "staged"}]}]}}
    merged = merge_json(staged, seed({}, ["/w"])[".claude/settings.json"])
    assert merged["enabledPlugins"] == {"demo@fixtures": True}
    assert [h["hooks"][0]["command"] for h in merged["hooks"]["Stop"]] == ["staged", STOP_HOOK]
