"""The scripted solver's script, from real patch shapes: a hunk is one Edit (its file Read first),
a new file one Write, a deleted file one `rm`, "\\ No newline at end of file" kept exact, and
the partial script plays only the first edit (none when the fix has one)."""

from __future__ import annotations

from benchtape.spec.solver import parse_patch, solver_script

PATCH = b"""diff --git a/pkg/mod.py b/pkg/mod.py
index 1111111..2222222 100644
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,3 +1,4 @@
+import os
 import sys
\x20
 def f():
@@ -10,2 +11,2 @@ def g():
-    return 1
+    return 2
 # end
\\ No newline at end of file
diff --git a/pkg/new.py b/pkg/new.py
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/pkg/new.py
@@ -0,0 +1,2 @@
+X = 1
+Y = 2
diff --git a/pkg/old.py b/pkg/old.py
deleted file mode 100644
index 4444444..0000000
--- a/pkg/old.py
+++ /dev/null
@@ -1 +0,0 @@
-gone = True
"""


def test_hunks_keep_their_exact_text():
    mod, new, old = parse_patch(PATCH.decode())
    assert (mod.old, mod.new, new.old, new.new, old.old, old.new) == ("pkg/mod.py", "pkg/mod.py", None, "pkg/new.py", "pkg/old.py", None)
    assert mod.hunks == [("import sys\n\ndef f():\n", "import os\nimport sys\n\ndef f():\n"), ("    return 1\n# end", "    return 2\n# end")]


def test_the_script_reads_then_edits_writes_new_files_removes_old_ones_runs_the_tests_and_says_done():
    steps = solver_script(PATCH, verify="python3 -m pytest -q tests")["steps"]
    tools = [(s.get("tool"), (s.get("input") or {}).get("file_path") or (s.get("input") or {}).get("command")) for s in steps if "tool" in s]
    assert tools == [
        ("Read", "pkg/mod.py"), ("Edit", "pkg/mod.py"), ("Edit", "pkg/mod.py"),
        ("Write", "pkg/new.py"), ("Bash", "rm -f -- pkg/old.py"), ("Bash", "python3 -m pytest -q tests || true"),
    ]
    assert steps[-1] == {"say": "done"} and steps[4]["input"]["content"] == "X = 1\nY = 2\n"


def test_the_partial_script_plays_only_the_first_edit():
    steps = solver_script(PATCH, partial=True)["steps"]
    assert [s.get("tool") for s in steps if "tool" in s] == ["Read", "Edit"]
    one = PATCH.split(b"diff --git a/pkg/new.py")[0].replace(b"@@ -10,2 +11,2 @@ def g():\n-    return 1\n+    return 2\n # end\n\\ No newline at end of file\n", b"")
    assert [s.get("tool") for s in solver_script(one, partial=True)["steps"] if "tool" in s] == []  # one edit: the partial changes nothing


CHANGELOG = b"""diff --git a/History.md b/History.md
index 4444444..5555555 100644
--- a/History.md
+++ b/History.md
@@ -1,2 +1,4 @@
+* fix g's value
+
 5.0.0
 =====
"""


def test_the_partial_script_never_counts_a_changelog_hunk_as_the_fix():
    """express's fixes end with a History.md hunk: "the first edit" of a one-hunk code fix was
    the whole fix, and the partial passed. The changelog is no part of it: a one-hunk code fix's
    partial changes nothing, a longer one's plays its first code edit, wherever the changelog is."""
    one_code = PATCH.split(b"diff --git a/pkg/new.py")[0].replace(b"@@ -10,2 +11,2 @@ def g():\n-    return 1\n+    return 2\n # end\n\\ No newline at end of file\n", b"")
    assert [s.get("tool") for s in solver_script(one_code + CHANGELOG, partial=True)["steps"] if "tool" in s] == []
    first = [(s["tool"], s["input"].get("file_path")) for s in solver_script(CHANGELOG + PATCH, partial=True)["steps"] if "tool" in s]
    assert first == [("Read", "pkg/mod.py"), ("Edit", "pkg/mod.py")]
    whole = [(s["tool"], s["input"].get("file_path")) for s in solver_script(CHANGELOG + PATCH)["steps"] if "tool" in s]
    assert ("Edit", "History.md") in whole  # the solver still plays the whole fix


def test_a_binary_change_has_no_scripted_solver():
    patch = b"diff --git a/logo.png b/logo.png\nindex 1..2 100644\nGIT binary patch\nliteral 3\nabc\n"
    [only] = solver_script(patch)["steps"]
    assert "binary file (logo.png)" in only["say"]


def test_a_change_no_edit_tool_makes_is_said_not_dropped():
    rename = b"diff --git a/a.py b/b.py\nsimilarity index 100%\nrename from a.py\nrename to b.py\n"
    mode = b"diff --git a/run.sh b/run.sh\nold mode 100644\nnew mode 100755\n"
    empty = b"diff --git a/pkg/__init__.py b/pkg/__init__.py\nnew file mode 100644\nindex 0000000..e69de29\n"
    for patch, said in ((rename, "renames or copies b.py"), (mode, "changes the mode of run.sh"), (empty, "adds an empty file (pkg/__init__.py)")):
        [only] = solver_script(patch)["steps"]
        assert said in only["say"] and "no scripted solver" in only["say"], only


def test_a_blank_context_line_written_without_its_space_is_context():
    patch = b"diff --git a/m.py b/m.py\n--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,3 @@\n x = 1\n\n-y = 2\n+y = 3\n"
    [(old, new)] = parse_patch(patch.decode())[0].hunks
    assert (old, new) == ("x = 1\n\ny = 2\n", "x = 1\n\ny = 3\n")


def test_a_name_git_quoted_is_read_as_the_guard_reads_it():
    patch = b'diff --git "a/t\\303\\251st.py" "b/t\\303\\251st.py"\n--- "a/t\\303\\251st.py"\n+++ "b/t\\303\\251st.py"\n@@ -1 +1 @@\n-x = 1\n+x = 2\n'
    [f] = parse_patch(patch.decode())
    assert (f.old, f.new) == ("tést.py", "tést.py")
