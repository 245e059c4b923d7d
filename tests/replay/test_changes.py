"""Seeing what the agent did: `show --diff` (its changes against the staged tree, from the
stored snapshots), `export`, long texts whole on request, and the HTML page's diff."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from replaykit import cli, write_bench

from benchtape.core.model import Action
from benchtape.store.database import Store


def _sid(db: Path, scenario: str) -> str:
    return next(r.id for r in Store(db).session_rows() if r.scenario == scenario)


def test_show_diff_is_the_agents_change_against_the_staged_tree(demo_db):
    out = cli("show", _sid(demo_db, "fixes-the-bug"), "--diff", "--db", demo_db)
    assert out.code == 0, out.stderr
    assert "diff --git a/calc.py b/calc.py\n--- a/calc.py\n+++ b/calc.py\n@@ " in out.stdout
    assert "\n-    return a - b\n+    return a + b\n" in out.stdout
    # running the tests left bytecode caches: not the agent's writing, left out and named
    assert "__pycache__" not in out.stdout and "GIT binary patch" not in out.stdout
    assert "1 modified · 0 added · 0 removed · left out: 2 file(s) of bytecode caches" in out.stderr
    cheat = cli("show", _sid(demo_db, "weakens-the-test"), "--diff", "--db", demo_db, "--json").json()
    assert cheat["modified"] == ["test_calc.py"] and "-    def test_add_negative" in cheat["patch"]


@pytest.mark.parametrize("scenario", ["weakens-the-test", "fixes-the-bug"])  # the second left bytecode caches
def test_the_patch_applies_to_the_exported_staged_tree_and_gives_the_final_workspace(demo_db, tmp_path, scenario):
    sid = _sid(demo_db, scenario)
    assert cli("export", sid, tmp_path / "before", "--staged", "--db", demo_db).code == 0
    out = cli("export", sid, tmp_path / "after", "--db", demo_db)
    assert out.code == 0 and f"final workspace of session {sid}" in out.stdout
    patch = cli("show", sid, "--diff", "--db", demo_db).stdout
    # as the help says: `show --diff | git apply`, whatever binary files the agent left included
    subprocess.run(["git", "apply", "-"], input=patch, text=True, cwd=tmp_path / "before", check=True)
    tree = lambda root: {p.relative_to(root): p.read_bytes() for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts}  # noqa: E731
    assert tree(tmp_path / "before") == tree(tmp_path / "after")  # all but the bytecode caches, which the patch leaves out
    if scenario == "weakens-the-test":
        assert "def test_add_negative" not in (tmp_path / "after" / "test_calc.py").read_text()
    else:
        assert list((tmp_path / "after" / "__pycache__").glob("calc.*.pyc")) and not (tmp_path / "before" / "__pycache__").exists()


def test_git_applies_every_kind_of_change_binary_ones_included(tmp_path):
    """Text and binary files added, changed, removed, a mode flip, text turned binary and back,
    an empty file, and a large one that does not compress: `git apply` of the patch turns the
    staged tree into the final one, byte for byte and mode for mode."""
    import os
    import random
    import stat

    from benchtape.replay.changes import Entry, diff_trees, display_lines

    rnd = random.Random(7)
    noise = bytes(rnd.getrandbits(8) for _ in range(200_000))
    before = {"same.bin": b"\0keep", "changed.bin": bytes(range(256)) * 4, "gone.bin": b"\0\1\2", "to-binary.txt": b"was text\n", "to-text.dat": b"\0was binary", "edit.txt": b"a\nb\nc\n", "run.sh": b"#!/bin/sh\necho hi\n"}
    after = {"same.bin": b"\0keep", "changed.bin": bytes(range(255, -1, -1)) * 5, "to-binary.txt": b"\0\xff now binary", "to-text.dat": b"now text\n", "edit.txt": b"a\nB\nc\n", "run.sh": b"#!/bin/sh\necho hi\n", "new.bin": noise, "empty": b""}
    modes = {"run.sh": 0o755, "changed.bin": 0o755}
    for name, tree in (("before", before), ("after", after)):
        for rel, data in tree.items():
            path = tmp_path / name / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
            os.chmod(path, modes.get(rel, 0o644) if name == "after" else 0o644)
    entries = lambda name, tree: {rel: Entry("file", data, stat.S_IMODE((tmp_path / name / rel).stat().st_mode)) for rel, data in tree.items()}  # noqa: E731
    changes = diff_trees(entries("before", before), entries("after", after))
    assert sorted(changes.added) == ["empty", "new.bin"] and changes.removed == ["gone.bin"]
    subprocess.run(["git", "init", "-q", "."], cwd=tmp_path / "before", check=True)
    subprocess.run(["git", "apply", "-"], input=changes.patch.encode(), cwd=tmp_path / "before", check=True)
    got = {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in (tmp_path / "before").iterdir() if p.is_file()}
    assert got == {p.name: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in (tmp_path / "after").iterdir()}
    # a reader sees each binary file as one line, not its base85
    shown = list(display_lines(changes.patch))
    assert "GIT binary patch (200000 bytes, carried for git apply)" in shown and len(shown) < 60


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


def test_the_tools_own_state_is_named_beside_the_patch_not_in_it():
    """A file the tool rewrites at every start (claude's .claude.json, as the staged snapshot
    names it) would make the patch fail on a checkout without it: it is named, not patched."""
    from benchtape.replay.changes import Entry, diff_trees

    before = {"calc.py": Entry("file", b"a - b\n"), ".claude.json": Entry("file", b'{"numStartups": 1}')}
    after = {"calc.py": Entry("file", b"a + b\n"), ".claude.json": Entry("file", b'{"numStartups": 2}')}
    changes = diff_trees(before, after, own_state=[".claude.json"])
    assert changes.modified == ["calc.py"] and changes.left_out == [".claude.json"] and ".claude.json" not in changes.patch
    assert changes.summary() == "1 modified · 0 added · 0 removed · left out of the patch: .claude.json, the tool's own state, rewritten at every start; `benchtape export` writes it"
    assert changes.to_dict()["left_out"] == [".claude.json"]
    only_state = diff_trees({".claude.json": before[".claude.json"]}, {".claude.json": after[".claude.json"]}, own_state=[".claude.json"])
    assert only_state.empty and only_state.summary().startswith("no changes but the tool's own state · left out of the patch: .claude.json")
    assert diff_trees(before, after).modified == [".claude.json", "calc.py"]  # a session recorded before the staged tree named it


def test_bytecode_caches_are_left_out_of_the_patch_and_the_agents_diff_and_named():
    """Running the tests leaves __pycache__/ behind: no agent wrote it, so neither the patch nor
    the evaluation's diff (no_changes, lines changed) counts it, and the summary says so."""
    from benchtape.replay.changes import Entry, diff_trees
    from benchtape.sandbox.treediff import diff_trees as agent_diff_of

    before = {"calc.py": Entry("file", b"a - b\n")}
    after = {"calc.py": Entry("file", b"a + b\n"), "__pycache__": Entry("dir"), "__pycache__/calc.cpython-311.pyc": Entry("file", b"\x00bytes"), "pkg/mod.pyc": Entry("file", b"x")}
    changes = diff_trees(before, after)
    assert changes.added == [] and changes.modified == ["calc.py"] and "pyc" not in changes.patch
    assert changes.caches == ["__pycache__/calc.cpython-311.pyc", "pkg/mod.pyc"]
    assert changes.summary().endswith("left out: 2 file(s) of bytecode caches (__pycache__/, .pyc), new cache folders (CACHEDIR.TAG: .pytest_cache/, .ruff_cache/), new test-tool state (.hypothesis/, .tox/, .nox/, .coverage), new node_modules/ folders (vite's .vite/, babel's .cache/) and new HOME state at the top (.cache/, .npm/, .config/configstore/, Go's go/pkg/mod/, shell histories): written by whatever ran the code, not by the agent")
    only_caches = agent_diff_of({"calc.py": b"x"}, {"calc.py": b"x", "__pycache__/calc.cpython-311.pyc": b"\x00"})
    assert only_caches.empty  # an agent that only ran the tests changed nothing


def test_a_node_modules_folder_the_starting_tree_did_not_have_is_a_cache():
    """A history task's Node dependencies are beside the workspace, so a node_modules/ inside it is
    what a tool the agent ran wrote (vitest's results under node_modules/.vite/): never part of the
    candidate patch; a node_modules the repository itself holds (vendored) stays the agent's to change."""
    from benchtape.replay.changes import Entry, diff_trees

    before = {"index.js": Entry("file", b"a - b\n"), "vendor/node_modules/x/index.js": Entry("file", b"1\n")}
    after = {**before, "index.js": Entry("file", b"a + b\n"), "node_modules/.vite/vitest/results.json": Entry("file", b"{}"), "vendor/node_modules/x/index.js": Entry("file", b"2\n"), "vendor/node_modules/y.js": Entry("file", b"3\n")}
    changes = diff_trees(before, after)
    assert changes.modified == ["index.js", "vendor/node_modules/x/index.js"] and changes.added == ["vendor/node_modules/y.js"]
    assert changes.caches == ["node_modules/.vite/vitest/results.json"] and ".vite" not in changes.patch


def test_what_a_tool_keeps_in_home_is_not_the_agents_change():
    """At levels home and container HOME is the workspace: a test runner the agent ran leaves
    its update notifier's state (ava's .config/configstore/, seen on sindresorhus/slugify), which
    made a change of no code `failed` instead of `no_changes` and added lines to the setup's
    size. Such HOME state at the top is left out where the staged tree had none of it; a project
    file an agent adds under .config/ (dotnet tools, nextest) stays its change, as does anything
    the staged tree's own top folder holds, a nested one, or a file merely named alike."""
    from benchtape.replay.changes import Entry, diff_trees
    from benchtape.sandbox.treediff import diff_trees as agent_diff_of

    notifier = {".config/configstore/update-notifier-ava.json": b'{"optOut": false}\n', ".npm/_logs/debug.log": b"x\n", ".bash_history": b"npx ava\n"}
    assert agent_diff_of({"index.js": b"a\n"}, {"index.js": b"a\n", **notifier}).empty
    changes = diff_trees({"index.js": Entry("file", b"a\n")}, {"index.js": Entry("file", b"b\n"), **{p: Entry("file", d) for p, d in notifier.items()}})
    assert changes.modified == ["index.js"] and changes.added == [] and sorted(changes.caches) == sorted(notifier)
    project = agent_diff_of({"a.py": b"a\n"}, {"a.py": b"a\n", ".config/nextest.toml": b"c\n", ".bash_history.bak": b"x\n"})
    assert [c.path for c in project.changes] == [".bash_history.bak", ".config/nextest.toml"]
    own = agent_diff_of({".npm/x": b"a\n"}, {".npm/x": b"b\n"})  # the repository's own .npm/
    assert [c.path for c in own.changes] == [".npm/x"]
    nested = agent_diff_of({"a.py": b"a\n"}, {"a.py": b"a\n", "pkg/.cache/x": b"c\n"})
    assert [c.path for c in nested.changes] == ["pkg/.cache/x"]


def test_the_cache_folder_a_real_pytest_run_leaves_is_not_the_agents_change(tmp_path):
    """An agent that runs the tests leaves .pytest_cache/ (its node ids: a line per test), which
    made its change look several times the size of one that did not (seen on pluggy: 64 lines a
    cell against 20, the same fix). The real pytest tags it (CACHEDIR.TAG): a new hidden folder
    so tagged is left out like bytecode; a tag cannot hide a file the staged tree had, a folder
    that is not hidden, or anything under a tag without the standard's signature."""
    from benchtape.replay.changes import Entry, diff_trees
    from benchtape.sandbox.treediff import diff_trees as agent_diff_of
    from benchtape.sandbox.treediff import read_tree

    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "tests" / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n")
    before = read_tree(work)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", "tests"], cwd=work, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(work)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    after = read_tree(work)
    cache = sorted(p for p in after if p.startswith(".pytest_cache/"))
    assert ".pytest_cache/CACHEDIR.TAG" in cache and len(cache) >= 3, cache  # what the real pytest wrote
    diff = agent_diff_of(before, after)
    assert [c.path for c in diff.changes] == ["calc.py"] and (diff.lines_added, diff.lines_removed) == (1, 1)
    entries = lambda tree: {p: Entry("file", data) for p, data in tree.items()}  # noqa: E731
    changes = diff_trees(entries(before), entries(after))
    assert changes.modified == ["calc.py"] and changes.added == [] and ".pytest_cache" not in changes.patch
    assert set(cache) <= set(changes.caches)
    tag = after[".pytest_cache/CACHEDIR.TAG"]
    # run from inside a protected folder, pytest puts its cache there: not a guard violation any more
    inside = agent_diff_of(before, {**after, "tests/.pytest_cache/CACHEDIR.TAG": tag, "tests/.pytest_cache/v/cache/nodeids": b"[]\n"})
    assert inside.touching(["tests/"]) == [] and [c.path for c in inside.changes] == ["calc.py"]
    # what a tag cannot hide
    had = agent_diff_of({**before, ".pytest_cache/README.md": b"old\n"}, after)  # the staged tree had the folder
    assert ".pytest_cache/README.md" in [c.path for c in had.changes]
    shown = agent_diff_of(before, {**before, "build/CACHEDIR.TAG": tag, "build/out.txt": b"x\n"})  # not a hidden folder
    assert [c.path for c in shown.changes] == ["build/CACHEDIR.TAG", "build/out.txt"]
    forged = agent_diff_of(before, {**before, ".hide/CACHEDIR.TAG": b"nothing\n", ".hide/x.py": b"x\n"})  # no signature
    assert [c.path for c in forged.changes] == [".hide/CACHEDIR.TAG", ".hide/x.py"]
    moved = agent_diff_of(before, {**{k: v for k, v in before.items() if k != "calc.py"}, ".c/CACHEDIR.TAG": tag, ".c/calc.py": before["calc.py"]})
    assert [c.path for c in moved.changes] == ["calc.py"]  # a file removed shows, wherever a copy went


def test_the_example_database_a_real_hypothesis_run_leaves_is_not_the_agents_change(tmp_path):
    """Hypothesis keeps its examples in .hypothesis/ beside the code, tagged neither by a
    CACHEDIR.TAG nor by a `.gitignore` of its own: attrs' solver patches carried 22 of its files
    (compare's lines/cell 46.5 against the oracle's 6.5, and a false "did not carry the known
    fix"). A new one is test-tool state, as a new .tox/ or .coverage is; one the staged tree had
    stays the agent's to change."""
    pytest.importorskip("hypothesis")
    from benchtape.sandbox.treediff import diff_trees as agent_diff_of
    from benchtape.sandbox.treediff import read_tree

    work = tmp_path / "work"
    (work / "tests").mkdir(parents=True)
    (work / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (work / "tests" / "test_calc.py").write_text("from hypothesis import given, strategies as st\nfrom calc import add\n\n\n@given(st.integers())\ndef test_add(a):\n    assert add(a, 0) == a\n")
    before = read_tree(work)
    (work / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    ran = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:xdist", "-p", "no:randomly", "-p", "no:cacheprovider", "tests"], cwd=work, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(work)})
    assert ran.returncode == 0, ran.stdout + ran.stderr
    after = read_tree(work)
    assert any(p.startswith(".hypothesis/") for p in after), sorted(after)  # what the real Hypothesis wrote
    assert [c.path for c in agent_diff_of(before, after).changes] == ["calc.py"]
    tox = {**after, "sub/.tox/py311/bin/python": b"x", ".coverage": b"sqlite", ".coverage.host.1.2": b"x"}
    assert [c.path for c in agent_diff_of(before, tox).changes] == ["calc.py"]
    had = agent_diff_of({**before, ".hypothesis/examples/old": b"1"}, {**after, ".hypothesis/examples/old": b"2"})
    assert ".hypothesis/examples/old" in [c.path for c in had.changes]  # the staged tree had the folder


def test_an_imported_session_says_it_never_had_a_workspace_to_diff_or_export(tmp_path):
    """benchtape saw only the transcript: the diff and export say so, not that a snapshot failed,
    and export writes nothing (its reparse, which keeps where it came from, says the same)."""
    from realdatakit import REALDATA

    transcript = REALDATA / "claude-transcripts" / "spotter__tool-heavy-webfetch-websearch__v2.1.38.jsonl"
    db = tmp_path / "s.db"
    assert cli("import", "claude-code", transcript, "--db", db).code == 0
    [sid] = [r.id for r in Store(db).session_rows()]
    assert cli("reparse", sid, "--db", db).code == 0
    for session in (sid, "latest"):
        out = cli("show", session, "--diff", "--db", db)
        assert out.code == 1 and out.stdout == ""
        assert "was imported from a transcript" in out.stderr and transcript.name in out.stderr and "never its workspace" in out.stderr
        for staged in ([], ["--staged"]):
            out = cli("export", session, tmp_path / "ws", *staged, "--db", db)
            assert out.code == 2 and "was imported from a transcript" in out.stderr and "benchtape run" in out.stderr
            assert not (tmp_path / "ws").exists()


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
    # the bytecode caches the tests left: named, not patched
    assert "left out: 2 file(s) of bytecode caches" in html and "GIT binary patch\nliteral" not in html


def test_the_timeline_reads_a_harness_float_sum_at_six_decimals():
    """Claude's own cost arrives as 0.009600000000000001: the timeline line says 0.0096, the
    stored metrics (and `query`) keep the number exactly as the harness gave it."""
    from benchtape.core.model import project
    from benchtape.replay.timeline import steps

    metrics = {"tokens_in": 1200, "tokens_out": 240, "cost_usd": 0.009600000000000001, "duration_ms": 1234567.0}
    session = project([Action("session.started", {"scenario": "s"}), Action("metrics", metrics)])
    [line] = [s.text for s in steps(session) if s.kind == "metrics"]
    assert line == "tokens_in=1200, tokens_out=240, cost_usd=0.0096, duration_ms=1234567.0"
    assert session.metrics.cost_usd == 0.009600000000000001


def test_the_timeline_shows_a_codex_tool_inputs_main_field():
    """codex's exec_command ({cmd}) and apply_patch ({input}) show the command and the patch,
    as a Claude Bash or Read shows its command or path, not the input's JSON."""
    from benchtape.core.model import project
    from benchtape.replay.timeline import steps

    calls = [
        Action("tool.call", {"call_id": "c1", "tool": "exec_command", "input": {"cmd": "cat -- calc.py", "yield_time_ms": 1000}}),
        Action("tool.call", {"call_id": "c2", "tool": "apply_patch", "input": {"input": "*** Begin Patch\n*** End Patch\n"}}),
    ]
    rows = [s for s in steps(project([Action("session.started", {"scenario": "s"}), *calls])) if s.kind == "tool.call"]
    assert [(s.text, s.detail) for s in rows] == [("cat -- calc.py", '{"cmd":"cat -- calc.py","yield_time_ms":1000}'), ("*** Begin Patch\n*** End Patch\n", None)]


def test_the_go_module_cache_a_go_test_leaves_is_not_the_agents_change():
    """HOME is the workspace, and Go's GOPATH defaults to $HOME/go: the first `go test` of a
    module with a dependency wrote the module cache (the dependency's source, its zip, the
    checksum database) into `go/pkg/mod/`, and the candidate carried it as files it added (a
    command agent on a Go task, `show --diff`: 8 added for a one-line fix). Left out where the
    staged tree had nothing there, even beside a project's own top `go/` folder; a file the staged
    tree had under it stays a change."""
    from benchtape.sandbox.treediff import diff_trees as agent_diff_of

    cache = {
        "go/pkg/mod/example.com/dep@v1.0.0/dep.go": b"package dep\n",
        "go/pkg/mod/cache/download/example.com/dep/@v/v1.0.0.zip": b"PK\x03\x04",
        "go/pkg/sumdb/sum.golang.org/latest": b"go.sum database tree\n",
    }
    assert agent_diff_of({"calc.go": b"a\n"}, {"calc.go": b"a\n", **cache}).empty
    fixed = agent_diff_of({"calc.go": b"a\n", "go/client.go": b"package client\n"}, {"calc.go": b"b\n", "go/client.go": b"package client\n", **cache})
    assert [c.path for c in fixed.changes] == ["calc.go"]
    own = agent_diff_of({"go/pkg/mod/x.go": b"a\n"}, {"go/pkg/mod/x.go": b"b\n"})  # the repository's own go/pkg/mod/
    assert [c.path for c in own.changes] == ["go/pkg/mod/x.go"]
