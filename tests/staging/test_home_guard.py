"""Level workspace: what a harness keeps in the real HOME (Claude Code's ~/.claude, a plugin's folder) is
put back after the session (a fake HOME here, never the real one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from stagekit import run_bench, write_bench

from benchtape.adapters.claude_code import HOME_STATE
from benchtape.core.launch_plan import HomeState
from benchtape.sandbox.home_guard import HomeGuard


def make_home(root: Path) -> Path:
    home = root / "fakehome"
    c = home / ".claude"
    for d in ("agents", "projects/-old-project", "plugins/cache/p1"):
        (c / d).mkdir(parents=True)
    (c / "settings.json").write_text('{"model": "opus"}\n')
    (c / "CLAUDE.md").write_text("my rules\n")
    (c / "agents" / "reviewer.md").write_text("reviewer\n")
    (c / "projects" / "-old-project" / "s.jsonl").write_text("{}\n")
    (c / "plugins" / "cache" / "p1" / "plugin.json").write_text("{}\n")
    return home


def snapshot_of(home: Path) -> dict[str, str]:
    c = home / ".claude"
    out = {}
    for dirpath, dirnames, filenames in os.walk(c):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            rel = str(p.relative_to(c))
            out[rel] = "->" + os.readlink(p) if p.is_symlink() else ("<dir>" if p.is_dir() else p.read_text())
    return out


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return make_home(tmp_path)


def vandalize(c: Path) -> None:
    (c / "settings.json").write_text('{"model": "haiku", "hooks": "evil"}\n')
    (c / "settings.local.json").write_text("{}\n")
    (c / "CLAUDE.md").unlink()
    (c / ".mcp.json").write_text("{}\n")
    (c / "agents" / "reviewer.md").write_text("rewritten\n")
    (c / "agents" / "new-agent.md").write_text("planted\n")
    (c / "skills" / "s").mkdir(parents=True)
    (c / "projects" / "-new-project").mkdir()
    (c / "todos").mkdir()
    (c / "todos" / "t.json").write_text("[]\n")
    (c / "plugins" / "cache" / "p2").mkdir()


def test_restores_files_trees_and_deletes_created_state(home):
    c = home / ".claude"
    before = snapshot_of(home)
    with HomeGuard(home, HOME_STATE) as guard:
        vandalize(c)
        notes = guard.release()
    after = snapshot_of(home)
    plugin_keys = {k for k in after if k.startswith("plugins")}
    assert {k: v for k, v in after.items() if k not in plugin_keys} == {k: v for k, v in before.items() if not k.startswith("plugins")}
    assert (c / "plugins" / "cache" / "p2").is_dir()  # reported, not undone
    assert len(notes) == 1 and "plugins changed" in notes[0] and "added: cache/p2" in notes[0]


def test_a_symlinked_settings_file_is_restored_as_a_link_and_at_its_target(tmp_path, home):
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "settings.json"
    real.write_text('{"theme": "dark"}\n')
    link = home / ".claude" / "settings.json"
    link.unlink()
    link.symlink_to(real)
    with HomeGuard(home, HOME_STATE):
        link.write_text('{"theme": "hacked"}\n')  # written through the link
    assert link.is_symlink() and os.readlink(link) == str(real)
    assert real.read_text() == '{"theme": "dark"}\n'
    with HomeGuard(home, HOME_STATE):
        link.unlink()
        link.write_text("replaced the link with a file\n")
    assert link.is_symlink() and real.read_text() == '{"theme": "dark"}\n'


def test_concurrent_sessions_restore_once_when_the_last_leaves(home):
    c = home / ".claude"
    first, second = HomeGuard(home, HOME_STATE), HomeGuard(home, HOME_STATE)
    first.__enter__()
    (c / "settings.json").write_text("changed by session one\n")
    second.__enter__()  # must not take a snapshot of session one's change
    first.release()
    assert (c / "settings.json").read_text() == "changed by session one\n"  # session two still runs
    second.release()
    assert (c / "settings.json").read_text() == '{"model": "opus"}\n'
    assert first.release() == []  # idempotent


def test_a_home_without_claude_gets_none_left_behind(tmp_path):
    home = tmp_path / "bare"
    home.mkdir()
    with HomeGuard(home, HOME_STATE):
        (home / ".claude" / "projects" / "x").mkdir(parents=True)
        (home / ".claude" / "settings.json").parent.mkdir(exist_ok=True)
        (home / ".claude" / "settings.json").write_text("{}")
    assert not (home / ".claude").exists()


def test_workspace_level_run_puts_the_fake_home_back(tmp_path, home):
    before = snapshot_of(home)
    script = "; ".join([
        "cd $HOME/.claude",
        "echo '{\"model\": \"haiku\"}' > settings.json",
        "echo '{}' > settings.local.json",
        "rm CLAUDE.md",
        "echo planted > agents/new-agent.md",
        "mkdir -p projects/-bench-run todos shell-snapshots",
        "echo x > todos/t.json",
        "mkdir plugins/cache/p2",
    ])
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: meddler
            prompt: a
            sandbox: workspace
            mock: {{steps: [{{tool: Bash, input: {{command: {json.dumps(script)}}}}}, {{say: done}}]}}
    """)
    ran = run_bench(bench, env={"HOME": str(home)})
    assert ran.code == 0, ran.stderr
    [result] = ran.actions("tool.result")
    assert result["is_error"] is False, result
    after = snapshot_of(home)
    assert {k: v for k, v in after.items() if not k.startswith("plugins")} == {k: v for k, v in before.items() if not k.startswith("plugins")}
    [warning] = ran.actions("adapter.warning")
    assert "plugins changed" in warning["what"] and "cache/p2" in warning["what"]
    assert warning["source"] == "sandbox"


def _killed_mid_session(tmp_path: Path, home: Path, state: str, session: str) -> Path:
    """A process that guards `home` with this module's `state`, runs `session` in it and is
    killed -9 before it restores: the temp folder its baseline was left in."""
    import signal
    import subprocess
    import sys

    tmp = tmp_path / "tmp"
    tmp.mkdir()
    child = subprocess.Popen(
        [sys.executable, "-c", f"import sys, time; sys.path.insert(0, {str(Path(__file__).parent)!r}); import test_home_guard as t; from pathlib import Path; g = t.HomeGuard(Path({str(home)!r}), t.{state}).__enter__(); t.{session}(Path({str(home)!r})); print('in', flush=True); time.sleep(60)"],
        env={**os.environ, "TMPDIR": str(tmp)}, stdout=subprocess.PIPE, text=True,
    )
    assert child.stdout is not None and child.stdout.readline().strip() == "in"
    child.send_signal(signal.SIGKILL)
    child.wait()
    return tmp


def _home_files(home: Path) -> dict[str, bytes | str]:
    out: dict[str, bytes | str] = {}
    for p in sorted(home.rglob("*")):
        rel = str(p.relative_to(home))
        out[rel] = "->" + os.readlink(p) if p.is_symlink() else ("<dir>" if p.is_dir() else p.read_bytes())
    return {k: v for k, v in out.items() if not k.startswith(".claude/plugins")}


def terminal_ui_session(home: Path) -> None:
    """What a terminal-UI session writes into a real HOME: the first-run answers into
    ~/.claude.json and settings.json (benchtape's), then Claude Code's own state."""
    from benchtape.adapters.claude_tui import seed
    from benchtape.sandbox.home_seed import seed_home

    seed_home(home, seed({"ANTHROPIC_API_KEY": "sk-test-0123456789abcdefghij"}, ["/tmp/run/work"]))
    c = home / ".claude"
    (home / ".claude.json").write_text('{"numStartups": 99}')  # it rewrites the file (a new inode)
    with (c / "history.jsonl").open("a") as f:
        f.write('{"display": "the bench prompt"}\n')
    for d in ("session-env/abc", "file-history/abc", "sessions", "benchtape", "backups", "debug"):
        (c / d).mkdir(parents=True, exist_ok=True)
    (c / "benchtape" / "stop.jsonl").write_text("{}\n")
    (c / ".last-cleanup").write_text("x")
    (home / ".local" / "share" / "applications").mkdir(parents=True)
    (home / ".local" / "share" / "applications" / "claude-code-url-handler.desktop").write_text("[Desktop Entry]\n")
    (home / ".config").mkdir(exist_ok=True)
    (home / ".config" / "mimeapps.list").write_text("x-scheme-handler/claude-cli=claude-code-url-handler.desktop\n")


def test_the_terminal_uis_first_run_answers_and_state_are_put_back_byte_for_byte(home):
    """madbench §2.3 at level workspace: the answers go into the user's own ~/.claude.json; it,
    settings.json, the prompt history are put back exactly, and what the session made goes."""
    (home / ".claude.json").write_bytes(b'{\n  "numStartups": 3,\n  "projects": {}\n}\n')
    (home / ".claude" / "history.jsonl").write_text('{"display": "mine"}\n')
    before = _home_files(home)
    with HomeGuard(home, HOME_STATE):
        terminal_ui_session(home)
        assert b"hasTrustDialogAccepted" not in (home / ".claude.json").read_bytes()  # rewritten by the tool
    assert _home_files(home) == before


def test_a_home_without_claude_json_gets_none_left_behind(tmp_path):
    home = tmp_path / "bare"
    home.mkdir()
    with HomeGuard(home, HOME_STATE):
        terminal_ui_session(home)
    assert sorted(p.name for p in home.iterdir()) == []


def test_an_orphaned_baseline_puts_claude_json_back_after_kill_9(tmp_path, home):
    """A benchtape killed mid-session: `restore_orphans` (what `recover` runs) puts the user's
    ~/.claude.json back, from the baseline the dead process left in the temp dir."""
    from benchtape.sandbox.home_guard import restore_orphans

    (home / ".claude.json").write_bytes(b'{"numStartups": 3}\n')
    before = _home_files(home)
    tmp = _killed_mid_session(tmp_path, home, "HOME_STATE", "terminal_ui_session")
    assert _home_files(home) != before
    assert restore_orphans(tmp) == [str(home / ".claude")]
    assert _home_files(home) == before
    assert list(tmp.iterdir()) == []


def test_a_shared_stop_log_counts_only_this_sessions_turn_ends(tmp_path):
    """At level workspace the Stop hook's log is in your ~/.claude, written by every session
    over it (and by a Claude Code you run meanwhile): a turn end is this session's only when
    the line carries its id."""
    from benchtape.recorder.interactive import _stops

    log = tmp_path / "stop.jsonl"
    log.write_text('{"session_id": "other", "last_assistant_message": "theirs"}\n\n{"session_id": "mine", "last_assistant_message": "ours"}\n')
    assert [s["last_assistant_message"] for s in _stops(log, "mine")] == ["ours"]
    assert len(_stops(log)) == 2


# ---------------------------------------------------------------- any harness's home state

OTHER = HomeState(folder=".othertool", restored_files=("config*.toml",), restored_trees=("prompts",), created_entries_deleted=("sessions",), home_files=(".othertool.json",), reported="extensions")


def _other_home(root: Path) -> Path:
    home = root / "otherhome"
    (home / ".othertool" / "prompts").mkdir(parents=True)
    (home / ".othertool" / "sessions" / "old").mkdir(parents=True)
    (home / ".othertool" / "config.toml").write_text("model = 'x'\n")
    (home / ".othertool" / "prompts" / "p.md").write_text("mine\n")
    (home / ".othertool.json").write_bytes(b'{"runs": 1}\n')
    return home


def _other_session(home: Path) -> None:
    t = home / ".othertool"
    (t / "config.toml").write_text("model = 'hijacked'\n")
    (t / "config.local.toml").write_text("x\n")
    (t / "prompts" / "p.md").write_text("rewritten\n")
    (t / "sessions" / "new").mkdir()
    (t / "extensions" / "e").mkdir(parents=True)
    (home / ".othertool.json").write_bytes(b'{"runs": 2}\n')


def test_the_guard_knows_no_tool_a_harness_names_its_own_folder(tmp_path):
    """The sandbox puts back what the home state says, for a folder no built-in harness uses:
    files and trees restored, new session entries removed, HOME's file back byte for byte, the
    reported folder reported (not undone), and ~/.claude untouched."""
    home = _other_home(tmp_path)
    (home / ".claude").mkdir()
    (home / ".claude" / "settings.json").write_text("{}")  # another tool's: not this state's to put back
    before = _home_files(home)
    with HomeGuard(home, OTHER) as guard:
        _other_session(home)
        (home / ".claude" / "settings.json").write_text('{"changed": 1}')
        notes = guard.release()
    after = _home_files(home)
    assert after.pop(".claude/settings.json") == b'{"changed": 1}'
    assert {k: v for k, v in after.items() if not k.startswith(".othertool/extensions")} == {k: v for k, v in before.items() if k != ".claude/settings.json"}
    assert len(notes) == 1 and notes[0].startswith("~/.othertool/extensions changed") and "added: e" in notes[0]


def test_an_orphaned_baseline_carries_its_home_state(tmp_path):
    """`recover` restores a killed session's baseline in a process that never saw the harness:
    the baseline names what to put back."""
    from benchtape.sandbox.home_guard import restore_orphans

    home = _other_home(tmp_path)
    before = _home_files(home)
    tmp = _killed_mid_session(tmp_path, home, "OTHER", "_other_session")
    assert _home_files(home) != before
    assert restore_orphans(tmp) == [str(home / ".othertool")]
    after = _home_files(home)
    assert {k: v for k, v in after.items() if not k.startswith(".othertool/extensions")} == before


def test_a_launch_plan_guards_every_known_tools_home_only_where_home_is_yours():
    """Level workspace: whichever harness runs (here the mock), what every harness benchtape
    knows keeps in your HOME is put back; a HOME of the sandbox's own needs nothing put back.
    Either way benchtape's helper programs are mounted for the agent."""
    from benchtape.adapters.base import SUPPORT, launch_plan
    from benchtape.adapters.gemini_cli import GeminiCliAdapter
    from benchtape.core.launch_plan import SUPPORT_AT, Mount

    ours = launch_plan(["mock"], "workspace")
    assert HOME_STATE in ours.home_states and ours.mounts == (Mount(SUPPORT, SUPPORT_AT),) and dict(ours.home_json) == {}
    private = launch_plan(["gemini-cli", "mock"], "home")
    assert private.home_states == () and dict(private.home_json) == GeminiCliAdapter.home_json
    assert launch_plan(["gemini-cli"], "home", home_json=False).home_json == {}
