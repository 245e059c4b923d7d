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


MARKDOWN_REFERENCE = '''diff --git a/markdown/extensions/toc.py b/markdown/extensions/toc.py
--- a/markdown/extensions/toc.py
+++ b/markdown/extensions/toc.py
@@ -10,6 +10,7 @@ class TocTreeprocessor(Treeprocessor):
         self.use_permalinks = parseBoolValue(config["permalink"], False)
+        self.permalink_leading = parseBoolValue(config["permalink_leading"], False)
         self.slugify = config["slugify"]
@@ -40,3 +41,7 @@ class TocExtension(Extension):
             "permalink_title": ["Permanent link", "Title attribute of the permalink"],
+            "permalink_leading": [False, "True if permalinks should be placed at the start"],
             "baselevel": ["1", "Base level for headers."],
'''

MARKDOWN_TESTS = '''diff --git a/tests/test_syntax/extensions/test_toc.py b/tests/test_syntax/extensions/test_toc.py
--- a/tests/test_syntax/extensions/test_toc.py
+++ b/tests/test_syntax/extensions/test_toc.py
@@ -1,3 +1,9 @@
+    def test_permalink_leading(self):
+        self.assertMarkdownRenders(
+            '# Header',
+            '<h1 id="header"><a class="headerlink" href="#header">&para;</a>Header</h1>',
+            extensions=[TocExtension(permalink=True, permalink_leading=True)]
+        )
'''


def test_an_option_the_fix_adds_and_the_tests_pass_by_keyword_is_named():
    """Python-Markdown #1339: the prompt (its PR title) asked for `permalink_prepend`; the fix
    and the tests call it `permalink_leading`. An agent following the prompt fails every test."""
    found = unnamed_interface(MARKDOWN_TESTS, MARKDOWN_REFERENCE, "# Add a new boolean option `permalink_prepend` to the toc extension")
    assert [(u.name, u.test_file) for u in found] == [("permalink_leading", "tests/test_syntax/extensions/test_toc.py")]
    assert unnamed_interface(MARKDOWN_TESTS, MARKDOWN_REFERENCE, "Add a `permalink_leading` option") == []


def test_an_option_used_as_a_local_name_or_attribute_is_no_use_of_it():
    local = MARKDOWN_TESTS.replace("permalink=True, permalink_leading=True", "permalink=True").replace("+    def test_permalink_leading(self):\n", "+    def test_permalink_leading(self):\n+        permalink_leading = 1\n")
    assert unnamed_interface(local, MARKDOWN_REFERENCE, "") == []


def test_a_one_letter_key_in_the_fixs_docstring_is_no_interface():
    """glom #69: the fix's docstring showed `{'a': {'b': {'c': 'hi'}}}` and the tests compared
    with `{'c': {'d': val}}`; `c` was reported as an option the prompt should name."""
    reference = (
        "diff --git a/glom/mutable.py b/glom/mutable.py\n--- a/glom/mutable.py\n+++ b/glom/mutable.py\n"
        "@@ -1,2 +1,5 @@\n def assign(obj, path, val):\n+    \"\"\"\n+       {'a': {'b': {'c': 'hi'}}}\n+    \"\"\"\n     pass\n"
    )
    tests = (
        "diff --git a/glom/test/test_mutable.py b/glom/test/test_mutable.py\n--- a/glom/test/test_mutable.py\n+++ b/glom/test/test_mutable.py\n"
        "@@ -1,1 +1,2 @@\n def test_x():\n+    assert target == {'a': {'b': {'c': {'d': 1}}}}\n"
    )
    assert unnamed_interface(tests, reference, "Add missing parameter to assign()") == []
