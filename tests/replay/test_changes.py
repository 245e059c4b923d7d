"""Seeing what the agent did: `show --diff` (its changes against the staged tree, from the
stored snapshots), `export`, long texts whole on request, and the HTML page's diff."""

from __future__ import annotations

import filecmp
import io
import subprocess
import tarfile
from pathlib import Path

from recorder.model import Action
from recorder.store import Store
from replaykit import cli, write_bench


def _sid(db: Path, scenario: str) -> str:
    return next(r.id for r in Store(db).session_rows() if r.scenario == scenario)


def test_show_diff_is_the_agents_change_against_the_staged_tree(demo_db):
    out = cli("show", _sid(demo_db, "fixes-the-bug"), "--diff", "--db", demo_db)
    assert out.code == 0, out.stderr
    assert "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ " in out.stdout
    assert "\n-    return a - b\n+    return a + b\n" in out.stdout
    # running the tests left a bytecode cache: the agent's doing too, and binary
    assert "diff --git a/__pycache__/calc.cpython-" in out.stdout and "new file mode 100644\nBinary files /dev/null and b/__pycache__/calc.cpython-" in out.stdout
    assert "1 modified · 2 added · 0 removed" in out.stderr
    cheat = cli("show", _sid(demo_db, "weakens-the-test"), "--diff", "--db", demo_db, "--json").json()
    assert cheat["modified"] == ["test_calc.py"] and "-    def test_add_negative" in cheat["patch"]


def test_the_patch_applies_to_the_exported_staged_tree_and_gives_the_final_workspace(demo_db, tmp_path):
    sid = _sid(demo_db, "weakens-the-test")
    assert cli("export", sid, tmp_path / "before", "--staged", "--db", demo_db).code == 0
    out = cli("export", sid, tmp_path / "after", "--db", demo_db)
    assert out.code == 0 and f"final workspace of session {sid}" in out.stdout
    patch = cli("show", sid, "--diff", "--db", demo_db).stdout
    # binary files are named in the patch, not carried: the bytecode cache the tests left is skipped
    subprocess.run(["git", "apply", "--exclude=__pycache__/*", "-"], input=patch, text=True, cwd=tmp_path / "before", check=True)
    cmp = filecmp.dircmp(tmp_path / "before", tmp_path / "after", ignore=["__pycache__"])
    assert not (cmp.left_only or cmp.right_only or cmp.diff_files)
    assert "def test_add_negative" not in (tmp_path / "after" / "test_calc.py").read_text()


def test_export_refuses_a_folder_that_is_not_empty_and_writes_nothing(demo_db, tmp_path):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "mine.txt").write_text("keep")
    out = cli("export", "latest", tmp_path / "full", "--db", demo_db)
    assert out.code == 2 and "is not an empty folder" in out.stderr
    assert [p.name for p in (tmp_path / "full").iterdir()] == ["mine.txt"]


def test_a_session_recorded_without_a_staged_tree_says_it_has_no_diff(tmp_path):
    db = tmp_path / "old.db"
    store = Store(db)
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("a.txt")
        info.size = 2
        tar.addfile(info, io.BytesIO(b"hi"))
    sha = store.put_blob(buf.getvalue())
    run = store.new_run("run", harness="mock")
    sid = store.new_session(run, "old", harness="mock")
    store.append(sid, [Action("session.started", {"scenario": "old"}), Action("workspace.snapshot", {"sha256": sha, "files": 1, "bytes": 2}), Action("session.finished", {"status": "ok"})])
    out = cli("show", sid, "--diff", "--db", db)
    assert out.code == 1 and out.stdout == ""
    assert f"no diff: session {sid} has no snapshot of its staged tree" in out.stderr and "benchtape export" in out.stderr
    assert cli("export", sid, tmp_path / "ws", "--db", db).code == 0 and (tmp_path / "ws" / "a.txt").read_text() == "hi"
    page = tmp_path / "p.html"
    assert cli("report", "--session", sid, "--html", page, "--db", db).code == 0
    assert "has no snapshot of its staged tree" in page.read_text()


LONG = "x" * 300 + " THE-END-OF-THE-LONG-MESSAGE"


def test_long_texts_are_shortened_with_a_marker_and_whole_with_full(tmp_path):
    bench = write_bench(tmp_path, f"""
        harness: mock
        scenarios:
          - name: chatty
            prompt: "talk"
            mock:
              steps:
                - {{tool: Bash, input: {{command: "echo {'y' * 200} END-OF-COMMAND", description: "a long echo"}}}}
                - {{say: "{LONG}"}}
            checks: [{{type: contains, value: "THE-END"}}]
        """)
    db = tmp_path / "d.db"
    assert cli("run", bench, "--db", db).code == 0
    short = cli("show", "latest", "--db", db)
    assert short.code == 0
    [row] = [line for line in short.stdout.splitlines() if "message.assistant" in line]
    assert "THE-END-OF-THE-LONG-MESSAGE" not in row and "chars, --full]" in row and len(row) <= 240
    assert "--full shows everything whole" in short.stdout
    whole = cli("show", "latest", "--db", db, "--full")
    assert LONG in whole.stdout and "END-OF-COMMAND" in whole.stdout and '"description":"a long echo"' in whole.stdout
    page = tmp_path / "p.html"
    assert cli("report", "latest", "--html", page, "--db", db).code == 0
    html = page.read_text()
    assert LONG in html and '<details class="long"><summary>' in html
    assert "a long echo" in html  # the whole tool input, collapsed


def test_html_opens_with_a_per_scenario_summary_an_index_and_each_diff(tmp_path):
    from replaykit import DEMO

    db = tmp_path / "d.db"
    cli("run", DEMO, "--repeat", "2", "--db", db)
    page = tmp_path / "run.html"
    assert cli("report", "latest", "--html", page, "--db", db).code == 0
    html = page.read_text()
    summary, index, first = html.index('id="summary"'), html.index('<nav class="index">'), html.index('<section class="session"')
    assert summary < index < first
    assert "<td>fixes-the-bug</td><td class=\"num\">2</td><td class=\"num\">2/2 (100%)</td><td class=\"num\">$0.0240</td><td class=\"num\">1.80 s</td>" in html
    assert "<td>wrong-fix</td><td class=\"num\">2</td><td class=\"num\">0/2 (0%)</td>" in html
    for sid in (r.id for r in Store(db).session_rows()):
        assert f'<a href="#s-{sid}">' in html and f'id="s-{sid}"' in html
    assert html.count('<details class="changes" open><summary>Changes (1 modified · ') == 6
    assert '<span class="del">-    return a - b</span>' in html and '<span class="add">+    return a + b</span>' in html
