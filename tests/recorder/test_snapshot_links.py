"""Links an agent leaves in its workspace: inside the tree they round-trip, out of it they are
left out of the snapshot (and listed), so one venv symlink never makes a workspace ungradable."""

from __future__ import annotations

import io
import os
import tarfile

from benchtape.checks import build
from benchtape.core.model import Action
from benchtape.core.results import CheckSpec
from benchtape.replay.grading import GradingContext, StoredSnapshot, grade_session
from benchtape.sandbox.snapshot import restore, snapshot
from benchtape.store.database import Store


def test_links_out_of_the_tree_are_left_out_and_listed(tmp_path):
    root = tmp_path / "ws"
    (root / ".venv" / "bin").mkdir(parents=True)
    (root / "src").mkdir()
    (root / "src" / "a.py").write_text("x = 1\n")
    os.symlink("/usr/bin/python3", root / ".venv" / "bin" / "python")
    os.symlink("../src/a.py", root / ".venv" / "a_link.py")
    os.symlink("../../outside", root / "src" / "up")
    data, facts = snapshot(root)
    assert facts["links_out"] == [".venv/bin/python -> /usr/bin/python3", "src/up -> ../../outside"]
    restore(data, tmp_path / "back")
    back = tmp_path / "back"
    assert (back / ".venv" / "a_link.py").read_text() == "x = 1\n" and os.path.islink(back / ".venv" / "a_link.py")
    assert not os.path.lexists(back / ".venv" / "bin" / "python") and not os.path.lexists(back / "src" / "up")


def test_an_unrestorable_snapshot_errors_only_the_checks_that_read_the_workspace(tmp_path):
    store = Store(tmp_path / "s.db")
    run = store.new_run("run")
    sid = store.new_session(run, "sc")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        evil = tarfile.TarInfo("../escape.txt")
        evil.size = 2
        tar.addfile(evil, io.BytesIO(b"no"))
    sha = store.put_blob(buf.getvalue())
    store.append(sid, [
        Action("session.started", {"scenario": "sc", "prompt": "p"}),
        Action("message.assistant", {"text": "done"}),
        Action("workspace.snapshot", {"sha256": sha, "files": 1, "bytes": 2}),
        Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 1.0}),
    ])
    checks = [build(CheckSpec(type="exec", args={"cmd": ["ls"]})), build(CheckSpec(type="equals", value="done"))]
    session = store.load_session(sid)
    verdicts = grade_session(session, checks, StoredSnapshot(store, session), GradingContext(bench_dir=tmp_path))
    assert [v.result.status for v in verdicts] == ["ERROR", "PASS"]
    assert "could not be restored" in verdicts[0].result.reason and "'..'" in verdicts[0].result.reason
    assert not (tmp_path / "escape.txt").exists()
