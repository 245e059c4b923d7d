"""Which names a task's hidden tests need that only its fix defines (tasks/interface.py): read
from the patches, so a comment, a signature change or a name the prompt says is never one."""

from __future__ import annotations

from benchtape.tasks.interface import unnamed_interface

REFERENCE = """diff --git a/src/pkg/windows.py b/src/pkg/windows.py
--- a/src/pkg/windows.py
+++ b/src/pkg/windows.py
@@ -1,5 +1,8 @@
 import ctypes
+
+_KF_FLAG_DONT_VERIFY: int = 0x00004000
+
-def get_folder(csidl):
+def get_folder(csidl, flags=0):
     return ctypes.windll.shell32.SHGetKnownFolderPath(csidl)
+class Resolver:
+    def __init__(self):
+        self.cache = {}
"""

TESTS = """diff --git a/tests/test_windows.py b/tests/test_windows.py
new file mode 100644
--- /dev/null
+++ b/tests/test_windows.py
@@ -0,0 +1,7 @@
+from pkg.windows import _KF_FLAG_DONT_VERIFY, get_folder
+# Resolver is exercised elsewhere
+
+def test_flag():
+    assert get_folder(1, _KF_FLAG_DONT_VERIFY)
+    obj = object()
+    obj.__init__()
"""


def test_a_constant_the_fix_adds_and_the_tests_import_is_named_with_its_test_file():
    found = unnamed_interface(TESTS, REFERENCE, "Pass KF_FLAG_DONT_VERIFY to SHGetKnownFolderPath.")
    assert [(u.name, u.test_file) for u in found] == [("_KF_FLAG_DONT_VERIFY", "tests/test_windows.py")]


def test_a_changed_signature_a_comment_a_dunder_and_a_name_the_prompt_says_are_not():
    # get_folder: defined before too (its signature changed); Resolver: only in a comment;
    # __init__: every class's; _KF_FLAG_DONT_VERIFY: the prompt says it
    assert unnamed_interface(TESTS, REFERENCE, "Add `_KF_FLAG_DONT_VERIFY` and pass it.") == []


def test_no_python_no_finding():
    js = TESTS.replace("tests/test_windows.py", "tests/windows.test.js")
    assert unnamed_interface(js, REFERENCE, "") == []
