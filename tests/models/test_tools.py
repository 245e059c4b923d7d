"""Script tools in each harness's own tools: apply_patch hunks built from the real file."""

from __future__ import annotations

from benchtape.models.tools import edit_patch, for_claude, for_codex, write_patch
from benchtape.spec.script import Block


def test_an_edit_of_a_substring_patches_its_whole_lines(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = x - y  # keep\nc = 3\n")
    patch = edit_patch("f.py", [{"old_string": "x - y", "new_string": "x + y"}], tmp_path)
    assert patch == "*** Begin Patch\n*** Update File: f.py\n@@\n-b = x - y  # keep\n+b = x + y  # keep\n*** End Patch\n"


def test_multi_edits_apply_in_order_and_replace_all(tmp_path):
    (tmp_path / "f.py").write_text("x\nx x\ny\n")
    patch = edit_patch("f.py", [{"old_string": "x x", "new_string": "z z", "replace_all": True}, {"old_string": "y", "new_string": "w"}], tmp_path)
    assert patch.count("@@") == 2 and "-x x\n+z z\n" in patch and "-y\n+w\n" in patch


def test_without_the_file_the_edit_is_sent_as_written_so_codex_refuses_it(tmp_path):
    patch = edit_patch("missing.py", [{"old_string": "a", "new_string": "b"}], tmp_path)
    assert "-a\n+b\n" in patch


def test_write_adds_a_new_file_and_replaces_an_existing_one(tmp_path):
    assert write_patch("n.txt", "1\n2\n", tmp_path) == "*** Begin Patch\n*** Add File: n.txt\n+1\n+2\n*** End Patch\n"
    (tmp_path / "o.txt").write_text("old\n")
    assert write_patch("o.txt", "new\n", tmp_path) == "*** Begin Patch\n*** Update File: o.txt\n@@\n-old\n+new\n*** End Patch\n"


def test_codex_native_names_pass_through_and_claude_gets_bash_for_exec_command():
    call = for_codex(Block("call", tool="update_plan", input={"plan": []}), None, {})
    assert (call.kind, call.name, call.arguments) == ("function_call", "update_plan", '{"plan":[]}')
    assert for_claude(Block("call", tool="exec_command", input={"cmd": "ls"}), {"Bash"}) == ("Bash", {"command": "ls"})
    assert for_claude(Block("call", tool="Glob", input={"pattern": "*"}), {"Glob", "Bash"}) == ("Glob", {"pattern": "*"})
