"""The canonical action of every native tool name the real transcripts hold (benchtape.core.canonical):
each adapter writes it on the call, and it is what a check's `action:<kind>` matches."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realdatakit import REALDATA  # noqa: E402

from benchtape.adapters.transcripts import read_transcript
from benchtape.core.canonical import canonical, kinds_of, matches, spelling_for, spelling_problem

# every native name the real transcripts hold (claude stream and disk, codex exec and rollout)
# and the canonical action each maps to
SEEN = {
    "AskUserQuestion": "other", "Bash": None, "Edit": "edit", "ExitPlanMode": "plan", "Glob": "search", "Grep": "search",
    "Read": "read", "WebFetch": "web", "WebSearch": "web", "Write": "write",
    "apply_patch": "edit", "command_execution": None, "exec_command": None, "file_change": "write",
    "update_plan": "plan", "wait_agent": "subagent", "web_search": "web", "write_stdin": "shell",
}


def _calls() -> list:
    if REALDATA is None:
        pytest.skip("no real transcripts")
    out = []
    for path in sorted(REALDATA.glob("**/*.jsonl")):
        if "subagents" in path.parts or path.name.startswith("agent-"):
            continue
        out += [a for a in read_transcript(path).actions if a.kind == "tool.call"]
    return out


def test_every_native_name_in_the_real_transcripts_maps_to_its_action():
    calls = _calls()
    names = {a.data["tool"] for a in calls}
    assert names == set(SEEN), sorted(names ^ set(SEEN))
    for a in calls:
        d = a.data
        assert d["action"] == canonical(d["tool"], d["input"]).action  # the adapter wrote what the one mapping says
        want = SEEN[d["tool"]]
        if want is not None:
            assert d["action"] == want, d
        else:  # a command: a read or search when plainly one, else shell
            assert d["action"] in ("read", "search", "shell") and d["command"], d
    shells = {a.data["command"]: a.data for a in calls if "command" in a.data}
    assert shells["bash -lc 'cat test.js'"]["files"] == [{"path": "test.js", "action": "read"}]  # codex exec wraps it
    assert shells["git status --short"]["action"] == "shell"


@pytest.mark.parametrize(
    "tool, args, action, files",
    [
        ("Read", {"file_path": "/w/a.py"}, "read", [("/w/a.py", "read")]),
        ("NotebookRead", {"notebook_path": "n.ipynb"}, "read", [("n.ipynb", "read")]),
        ("Write", {"file_path": "a.py", "content": "x"}, "write", [("a.py", "write")]),
        ("MultiEdit", {"file_path": "a.py", "edits": []}, "edit", [("a.py", "edit")]),
        ("NotebookEdit", {"notebook_path": "n.ipynb"}, "edit", [("n.ipynb", "edit")]),
        ("LS", {"path": "src"}, "search", [("src", "search")]),
        ("Task", {"prompt": "p"}, "subagent", []),
        ("Agent", {"prompt": "p"}, "subagent", []),
        ("TodoWrite", {"todos": []}, "plan", []),
        ("todo_list", {"items": []}, "plan", []),
        ("mcp__github__create_issue", {}, "mcp:github/create_issue", []),
        ("file_change", {"changes": [{"path": "a", "kind": "add"}, {"path": "b", "kind": "update"}]}, "edit", [("a", "write"), ("b", "edit")]),
        ("apply_patch", {"input": "*** Begin Patch\n*** Add File: n.txt\n+x\n*** End Patch\n"}, "write", [("n.txt", "write")]),
        ("Bash", {"command": "cat -- calc.py"}, "read", [("calc.py", "read")]),
        ("Bash", {"command": "python3 -m unittest -q 2>&1 | tail -1"}, "shell", []),
        ("command_execution", {"command": "/bin/bash -lc \"sed -n '1,40p' a.py && head -n 5 b.py\""}, "read", [("a.py", "read"), ("b.py", "read")]),
        ("exec_command", {"cmd": "nl -ba a.py | sed -n '1,9p'"}, "read", [("a.py", "read")]),
        ("exec_command", {"cmd": "cat a.py > b.py"}, "shell", []),  # a redirection writes: not plainly a read
        ("exec_command", {"cmd": "sed -i 's/a/b/' a.py"}, "shell", []),
        ("exec_command", {"cmd": "cat $(ls)"}, "shell", []),
        ("exec_command", {"cmd": "rg -n todo src"}, "search", [("src", "search")]),
        ("shell", {"command": ["bash", "-lc", "cat a"]}, "read", [("a", "read")]),
        ("request_user_input", {}, "other", []),
        ("SomethingNew", {}, "other", []),
    ],
)
def test_the_mapping(tool, args, action, files):
    got = canonical(tool, args)
    assert got.action == action and list(got.files) == files


def test_a_spelling_matches_every_action_a_call_did():
    cat = canonical("command_execution", {"command": "bash -lc 'cat a.py'"})
    assert kinds_of(cat) == {"read", "shell"}
    assert matches("action:read", "command_execution", cat) and matches("action:shell", "command_execution", cat)
    assert matches("command_execution", "command_execution", cat) and not matches("Read", "command_execution", cat)
    mcp = canonical("mcp__gh__issue", {})
    assert all(matches(n, "mcp__gh__issue", mcp) for n in ("action:mcp", "action:mcp:gh", "action:mcp:gh/issue")) and not matches("action:mcp:other", "x", mcp)
    assert spelling_problem("action:edit") is None and spelling_problem("action:mcp:gh/issue") is None
    assert "names no action" in (spelling_problem("action:edits") or "")
    assert spelling_for("Read") == "action:read" and spelling_for("Bash") == "action:shell" and spelling_for("Grep") == "action:search"
