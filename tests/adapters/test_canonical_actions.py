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
    "update_plan": "plan", "wait_agent": "subagent", "web_search": "web", "write_stdin": None,
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
        elif d["tool"] == "write_stdin":  # a poll of a running command's output, or input sent to it
            assert d["action"] == ("shell" if d["input"].get("chars") else "poll"), d
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
        ("write_stdin", {"session_id": 7, "chars": ""}, "poll", []),  # a poll: no new command
        ("write_stdin", {"session_id": 7}, "poll", []),
        ("write_stdin", {"session_id": 7, "chars": "y\n"}, "shell", []),  # input to a running command can run anything
        ("write_stdin", {"session_id": 7, "chars": "\u0003"}, "shell", []),  # Ctrl-C, as KillShell
        ("BashOutput", {"bash_id": "b1"}, "poll", []),  # Claude's poll: the same behaviour, the same action
        ("KillShell", {"shell_id": "b1"}, "shell", []),
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


# ---------------------------------------------------------------- shell's shortcut

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from benchtape.core.canonical import _split_shell, shell  # noqa: E402

_WORDS = ["cat", "git", "bd", "ls", "bash", "/bin/bash", "sh", "grep", "rg", "python", "sed", "head", "find", "mix", "/bin/cat", "wc", "-n", "-lc", "-c", "--", "x.py", "src/a b.py", "~", "FOO=1", "10,20p"]
_GLUE = [" ", "  ", "\t", "\n", " && ", "; ", " | ", " > ", "'", '"', "\\", "#", "$(", "`", "(", ")", "&", "\x0b", "*", "?", "$HOME", "=", ","]


def _real_commands() -> list[str]:
    return [a.data["command"] for a in _calls() if isinstance(a.data.get("command"), str)]


def test_shell_shortcut_agrees_with_splitting_on_every_real_command():
    """`shell` answers without splitting a command whose first word can be no reader; on every
    command the real transcripts hold it gives what splitting it gives."""
    commands = _real_commands()
    assert len(commands) > 50
    for text in commands:
        assert shell(text) == _split_shell(text), text


_EDGES = ["", " ", "\t", "\n", "'", '"', "\\", "#", "(", ")", ";", "|", "&", "<", "$", "`", "\x0b", "*"]


@settings(max_examples=1000, deadline=None)  # the edges themselves are test_shell_shortcut_agrees_with_splitting_around_the_first_word's grid
@given(st.sampled_from(_EDGES), st.sampled_from(_WORDS), st.sampled_from(_EDGES), st.sampled_from(_EDGES), st.lists(st.one_of(st.sampled_from(_WORDS), st.sampled_from(_GLUE), st.text(max_size=6)), max_size=10))
def test_shell_shortcut_agrees_with_splitting_on_any_text(before, word, inside, after, rest):
    """Quotes, escapes, comments, operators and odd whitespace before, in or right after the
    first word: the shortcut is never taken where splitting could read the first word otherwise."""
    text = before + word[:2] + inside + word[2:] + after + " " + "".join(rest)
    assert shell(text) == _split_shell(text), repr(text)


def test_shell_shortcut_keeps_reads_and_wrapped_reads():
    assert shell("cat src/a.py").action == "read"
    assert shell("  cat src/a.py").action == "read"
    assert shell("bash -lc 'cat src/a.py'").action == "read"
    assert shell("/bin/bash -lc 'grep -n x src/a.py'").action == "search"
    assert shell('"cat" src/a.py').action == "read"  # a quoted first word is split, never shortcut
    assert shell("git log --oneline -10") == _split_shell("git log --oneline -10")
    assert shell("git log").action == "shell" and shell("git log").command == "git log"


def test_shell_shortcut_agrees_with_splitting_around_the_first_word():
    """Every edge character before, inside and after each first word, with a file after it."""
    for before in _EDGES:
        for word in _WORDS:
            for at in {0, 1, len(word)}:
                for edge in _EDGES:
                    for after in ("", " x.py", "' x.py", '" x.py', "x.py"):
                        text = before + word[:at] + edge + word[at:] + after
                        assert shell(text) == _split_shell(text), repr(text)


def _tables_in_order(tool, input, harness=None):
    """canonical() as the shared tables were first written: each tried in order."""
    from benchtape.core import canonical as c

    args = input if isinstance(input, dict) else {}
    if tool.startswith("mcp__") and "__" in tool[5:]:
        server, name = tool[5:].split("__", 1)
        return c.Canonical(f"mcp:{server}/{name}")
    for table, kind in ((c._READ, "read"), (c._WRITE, "write"), (c._EDIT, "edit"), (c._SEARCH, "search")):
        keys = table.get(tool)
        if keys is not None:
            path = c._first(args, keys)
            return c.Canonical(kind, ((path, kind),) if path else ())
    if tool in c._SHELL:
        return c.shell(args.get(c._SHELL[tool], args.get("command", args.get("cmd"))))
    if tool in c._SHELL_ONLY:
        return c.Canonical("shell")
    if tool in c._POLL:
        return c.Canonical("poll")
    if tool in c._STDIN:
        return c._stdin(args)
    if tool in c._PATCH:
        return c._patch(tool, args, input)
    for names, kind in ((c._WEB, "web"), (c._SUBAGENT, "subagent"), (c._PLAN, "plan")):
        if tool in names:
            return c.Canonical(kind)
    return c.Canonical("other")


def test_one_lookup_maps_every_shared_name_as_the_tables_in_order_did():
    from benchtape.core import canonical as c

    names = {*c._READ, *c._WRITE, *c._EDIT, *c._SEARCH, *c._SHELL, *c._SHELL_ONLY, *c._POLL, *c._STDIN, *c._PATCH, *c._WEB, *c._SUBAGENT, *c._PLAN, "Unknown", "mcp__srv__tool", ""}
    inputs = [{}, {"file_path": "a.py", "path": "b", "paths": "c", "notebook_path": "n.ipynb", "filePath": "f", "dir_path": "d"}, {"command": "cat a.py", "cmd": "ls"}, {"patch": "*** Add File: x.py\n"}, "raw"]
    for name in names:
        for value in inputs:
            assert canonical(name, value) == _tables_in_order(name, value), (name, value)
    for name in ("Read", "Edit", "Bash"):
        assert canonical(name, inputs[1]).paths == _tables_in_order(name, inputs[1]).paths
    assert c.Canonical("read", (("a", "read"), ("b", "read"), ("a", "read"))).paths == ["a", "b"]


def test_a_poll_stored_as_shell_by_an_older_import_is_read_as_a_poll():
    """Calls carry the action their adapter wrote; a write_stdin poll written as `shell` before
    polls were their own kind is derived again, so a regrade counts it as a fresh import does."""
    from benchtape.core.canonical import of_call

    assert of_call({"tool": "write_stdin", "input": {"chars": ""}, "action": "shell"}, "codex").action == "poll"
    assert of_call({"tool": "write_stdin", "input": {"chars": "q"}, "action": "shell"}, "codex").action == "shell"
    assert of_call({"tool": "exec_command", "input": {"cmd": "cat a"}, "action": "shell"}, "codex").action == "shell"  # others as recorded
    assert spelling_for("BashOutput") == "action:poll" and spelling_for("write_stdin") == "action:poll"
