"""Script tools in each harness's own tools: apply_patch hunks built from the real file."""

from __future__ import annotations

from benchtape.models.tools import aider_blocks, aider_files, edit_patch, for_chat, for_claude, for_codex, write_patch
from benchtape.spec.script import Block


def test_an_edit_of_a_substring_patches_its_whole_lines(tmp_path):
    (tmp_path / "f.py").write_text("a = 1\nb = x - y  # keep\nc = 3\n")
    patch = edit_patch("f.py", [{"old_string": "x - y", "new_string": "x + y"}], tmp_path)
    assert patch == "*** Begin Patch\n*** Update File: f.py\n@@\n-b = x - y  # keep\n+b = x + y  # keep\n*** End Patch\n"


def test_multi_edits_apply_in_order_and_replace_all(tmp_path):
    (tmp_path / "f.py").write_text("x\nx x\ny\n")
    patch = edit_patch("f.py", [{"old_string": "x x", "new_string": "z z", "replace_all": True}, {"old_string": "y", "new_string": "w"}], tmp_path)
    assert patch.count("@@") == 2 and "-x x\n+z z\n" in patch and "-y\n+w\n" in patch


def test_replace_all_patches_the_lines_of_every_match_not_the_first_alone(tmp_path):
    (tmp_path / "k.py").write_text("_kw = 1\n\ndef f():\n    return _kw\n\ndef g():\n    return _kw\n")
    patch = edit_patch("k.py", [{"old_string": "_kw", "new_string": "_KW", "replace_all": True}], tmp_path)
    assert patch.count("@@") == 3 and "-_kw = 1\n+_KW = 1\n" in patch and patch.count("-    return _kw\n+    return _KW\n") == 2, patch
    blocks = aider_blocks(Block("call", tool="Edit", input={"file_path": "k.py", "old_string": "_kw", "new_string": "_KW", "replace_all": True}), {"k.py": (tmp_path / "k.py").read_text()})
    assert len(blocks) == 3 and all("_kw" not in b.split("=======")[1] for b in blocks), blocks


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


def test_a_chat_agent_offering_the_scripts_own_names_gets_them_as_they_are():
    """A harness plugin or a `command` agent offering Claude's names (llm with a tools file: Read,
    Edit, Bash) was sent Gemini CLI's (read_file), found no such tool and changed nothing. The
    names it offers are sent as written; the built-in agents' own names still decide for them."""
    edit = Block("call", tool="Edit", input={"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    assert for_chat(edit, {"Read", "Edit", "Bash"}) == [("Edit", {"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})]
    assert for_chat(Block("call", tool="lookup", input={"q": "x"}), {"lookup"}) == [("lookup", {"q": "x"})]
    assert [name for name, _ in for_chat(edit, {"read_file", "write_file", "replace", "run_shell_command"})] == ["replace"]  # Gemini's, as before
    assert [name for name, _ in for_chat(edit, {"read", "write", "edit", "bash"})] == ["edit"]  # opencode's
    assert [name for name, _ in for_chat(Block("call", tool="Bash", input={"command": "ls"}), {"bash"})] == ["bash"]  # mini-swe-agent's


AIDER_FILES = {"role": "user", "content": (
    "I have *added these files to the chat* so you can go ahead and edit them.\n\n"
    "*Trust this message as the true contents of these files!*\n"
    "Any other messages in the chat may contain outdated versions of the files' contents.\n\n"
    "calc.py\n```\ndef add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n```\n\n"
    "notes.txt\n````\nsee ```x```\nlast line````\n"
)}


def test_aider_finds_the_files_it_sent_each_to_its_closing_fence():
    files = aider_files([{"role": "system", "content": "x"}, AIDER_FILES])
    assert files == {"calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n", "notes.txt": "see ```x```\nlast line"}


def test_an_aider_edit_of_part_of_a_line_searches_its_whole_lines():
    edit = Block("call", tool="Edit", input={"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    [block] = aider_blocks(edit, aider_files([AIDER_FILES]))
    assert block == "calc.py\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```"


def test_aider_multi_edits_widen_in_order_over_several_lines():
    edits = [{"old_string": "a - b\n\n\ndef mul", "new_string": "a + b\n\n\ndef times"}, {"old_string": "a * b", "new_string": "b * a"}]
    blocks = aider_blocks(Block("call", tool="MultiEdit", input={"file_path": "/w/calc.py", "edits": edits}), aider_files([AIDER_FILES]))
    assert "SEARCH\n    return a - b\n\n\ndef mul(a, b):\n=======\n    return a + b\n\n\ndef times(a, b):\n>>>>>>> REPLACE" in blocks[0]
    assert "SEARCH\n    return a * b\n=======\n    return b * a\n>>>>>>> REPLACE" in blocks[1]


def test_without_the_file_in_aiders_request_the_edit_is_sent_as_written():
    edit = Block("call", tool="Edit", input={"file_path": "other.py", "old_string": "a - b", "new_string": "a + b"})
    assert aider_blocks(edit, aider_files([AIDER_FILES])) == aider_blocks(edit) == ["other.py\n```\n<<<<<<< SEARCH\na - b\n=======\na + b\n>>>>>>> REPLACE\n```"]


def test_aiders_reflection_on_a_partial_line_gets_the_edit_in_whole_lines():
    """aider's first request holds no file, so the script's `a - b` -> `a + b` went as written and
    matched no line; its reflection carries the file: the failed edit is sent again widened, and a
    block that already was whole lines is not sent again (models/chat._aider_retry)."""
    from types import SimpleNamespace

    from benchtape.models.chat import _aider_retry

    edit = Block("call", tool="Edit", input={"file_path": "calc.py", "old_string": "a - b", "new_string": "a + b"})
    whole = Block("call", tool="Edit", input={"file_path": "calc.py", "old_string": "def mul(a, b):\n", "new_string": "def times(a, b):\n"})
    conv = SimpleNamespace(script=SimpleNamespace(turns=[SimpleNamespace(blocks=[edit, whole])]))
    failed = {"role": "user", "content": "# 1 SEARCH/REPLACE block failed to match!\n\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in calc.py\n<<<<<<< SEARCH\na - b\n=======\na + b\n>>>>>>> REPLACE\n"}
    assert _aider_retry(conv, [AIDER_FILES, failed]) == "calc.py\n```\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n```"
    assert _aider_retry(conv, [failed]) is None  # no file in the request: nothing to widen with
    assert _aider_retry(conv, [AIDER_FILES, {"role": "user", "content": "thanks"}]) is None  # no reflection
