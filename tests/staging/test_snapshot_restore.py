"""Restoring a snapshot is reading untrusted input: crafted tars are refused, clearly, and
nothing is ever written outside the restore folder."""

from __future__ import annotations

import io
import os
import stat
import tarfile
from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.sandbox import snapshot as snap
from benchtape.sandbox.snapshot import restore, snapshot


def tar_of(*entries: tuple) -> bytes:
    """entries: (name, "file", content) | (name, "dir") | (name, "sym", target) | (name, "hard", target) | (name, "chr") | (name, "fifo")."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as tar:
        for name, kind, *rest in entries:
            info = tarfile.TarInfo(name)
            if kind == "file":
                data = rest[0].encode()
                info.size = len(data)
                info.mode = rest[1] if len(rest) > 1 else 0o644
                tar.addfile(info, io.BytesIO(data))
                continue
            info.type = {"dir": tarfile.DIRTYPE, "sym": tarfile.SYMTYPE, "hard": tarfile.LNKTYPE, "chr": tarfile.CHRTYPE, "fifo": tarfile.FIFOTYPE}[kind]
            if rest:
                info.linkname = rest[0]
            tar.addfile(info)
    return buf.getvalue()


def listing(root: Path, skip: Path) -> set[str]:
    out = set()
    for dirpath, dirnames, filenames in os.walk(root):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            if p != skip and skip not in p.parents:
                out.add(str(p.relative_to(root)))
    return out


@pytest.fixture
def box(tmp_path: Path):
    """tmp/box/dest is the restore folder; tmp/box/outside.txt is a file an attack would aim at."""
    (tmp_path / "box").mkdir()
    (tmp_path / "box" / "outside.txt").write_text("original\n")
    dest = tmp_path / "box" / "dest"
    before = listing(tmp_path, dest)
    yield dest
    assert listing(tmp_path, dest) == before, "something was written outside the restore folder"
    assert (tmp_path / "box" / "outside.txt").read_text() == "original\n"


CRAFTED = {
    "dotdot": ([("../evil.txt", "file", "x")], "climbs out of the tree with '..'"),
    "dotdot-inner": ([("a/../../evil.txt", "file", "x")], "climbs out of the tree with '..'"),
    "absolute": ([("/tmp/benchtape-evil.txt", "file", "x")], "is an absolute path"),
    "link-absolute": ([("l", "sym", "/etc")], "is a link pointing out of the tree"),
    "link-up": ([("l", "sym", "../outside.txt")], "is a link pointing out of the tree"),
    "hardlink": ([("h", "hard", "/etc/passwd")], "is a hard link"),
    "hardlink-inside": ([("a", "file", "x"), ("h", "hard", "a")], "is a hard link"),
    "device": ([("dev", "chr")], "is a device file"),
    "fifo": ([("pipe", "fifo")], "is a FIFO"),
    # `s -> .` makes `s/l -> ..` look like `l -> .` on paper, and really point at the parent;
    # a snapshot never holds an entry under a link, so `s/l` is refused before it can
    "link-chain-then-dir": ([("s", "sym", "."), ("s/l", "sym", ".."), ("l/evil", "dir")], "would be written through the link 's'"),
    "link-chain-then-file": ([("s", "sym", "."), ("s/l", "sym", ".."), ("l/evil.txt", "file", "x")], "would be written through the link 's'"),
    "link-chain-then-overwrite": ([("s", "sym", "."), ("s/l", "sym", "../outside.txt"), ("l", "file", "pwned")], "would be written through the link 's'"),
    "link-lands-out": ([("s", "sym", "."), ("l", "sym", "s/..")], "points out of the tree where it lands"),
    "link-to-nothing": ([("l", "sym", "")], "a link to nothing"),
    "link-into-link": ([("d", "dir"), ("s", "sym", "d"), ("s/f", "file", "x")], "would be written through the link 's'"),
    # a link that only escapes once a later entry exists
    "late-escape": ([("l", "sym", "x/.."), ("x", "sym", ".")], "points out of the tree once restored"),
    "dir-over-file": ([("a", "file", "x"), ("a/b.txt", "file", "y")], "needs 'a' to be a folder"),
    "replace-folder": ([("d", "dir"), ("d", "sym", ".")], "would replace a folder"),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_tar_is_refused_clearly(box, name):
    entries, message = CRAFTED[name]
    with pytest.raises(BadInput, match="refusing to restore it") as err:
        restore(tar_of(*entries), box)
    assert message in str(err.value)
    assert "corrupt or hostile" in str(err.value)
    # no link left in the restore folder points outside it
    for dirpath, dirnames, filenames in os.walk(box):
        for n in dirnames + filenames:
            p = Path(dirpath) / n
            if p.is_symlink():
                real = Path(os.path.realpath(p))
                assert real == box.resolve() or box.resolve() in real.parents, f"{p} -> {os.readlink(p)} escapes"


def test_a_later_file_replaces_a_link_instead_of_writing_through_it(box):
    restore(tar_of(("target.txt", "file", "keep me"), ("l", "sym", "target.txt"), ("l", "file", "new")), box)
    assert (box / "target.txt").read_text() == "keep me"
    assert not (box / "l").is_symlink() and (box / "l").read_text() == "new"


def test_too_many_bytes_are_refused(box, monkeypatch):
    monkeypatch.setattr(snap, "MAX_SNAPSHOT_BYTES", 10)
    with pytest.raises(BadInput, match="more than 10 bytes"):
        restore(tar_of(("a", "file", "0123456789abc")), box)


def test_setuid_bits_are_dropped(box):
    restore(tar_of(("run.sh", "file", "#!/bin/sh\n", 0o4755)), box)
    assert stat.S_IMODE((box / "run.sh").stat().st_mode) == 0o755


def test_a_real_snapshot_round_trips(tmp_path_factory, box):
    src = tmp_path_factory.mktemp("src")
    (src / "pkg" / "empty").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    (src / "run.sh").write_text("#!/bin/sh\n")
    (src / "run.sh").chmod(0o755)
    (src / "link-to-mod").symlink_to("pkg/mod.py")
    (src / "link-to-pkg").symlink_to("pkg")
    data, facts = snapshot(src)
    assert facts["files"] == 2
    restore(data, box)
    assert (box / "pkg" / "mod.py").read_text() == "x = 1\n"
    assert (box / "pkg" / "empty").is_dir()
    assert os.readlink(box / "link-to-mod") == "pkg/mod.py" and os.readlink(box / "link-to-pkg") == "pkg"
    assert os.access(box / "run.sh", os.X_OK)


def test_a_snapshot_leaves_out_the_harness_bookkeeping_it_is_given(tmp_path, monkeypatch):
    """Globs as covers() reads them: a folder matched is not entered at all, a file glob
    matches at any depth, and what is left out is counted, never silently dropped."""
    root = tmp_path / "ws"
    for rel, text in {
        "app.py": "x = 1\n",
        ".codex/config.toml": "model = 'm'\n",
        ".codex/skills/mine/SKILL.md": "# mine\n",
        ".codex/skills/.system/bundled/SKILL.md": "# bundled\n",
        ".codex/sessions/2026/12/01/rollout-1.jsonl": "{}\n",
        ".codex/state_5.sqlite": "db",
        ".codex/state_5.sqlite-wal": "wal",
    }.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    entered: list[str] = []
    real_listing = snap.walk.__globals__["_listing"]
    monkeypatch.setitem(snap.walk.__globals__, "_listing", lambda fd, rel: entered.append(rel) or real_listing(fd, rel))
    data, facts = snapshot(root, leave_out=(".codex/sessions/**", ".codex/*.sqlite", ".codex/*.sqlite-*", ".codex/skills/.system/**"))
    names = tarfile.open(fileobj=io.BytesIO(data)).getnames()
    assert sorted(n for n in names if not n.endswith("/")) == [".codex/config.toml", ".codex/skills/mine/SKILL.md", "app.py"]
    assert facts["left_out"] == {"patterns": [".codex/sessions/**", ".codex/*.sqlite", ".codex/*.sqlite-*", ".codex/skills/.system/**"], "entries": 4}
    assert ".codex/sessions" not in entered and ".codex/skills/.system" not in entered
    restore(data, tmp_path / "back")
    assert (tmp_path / "back" / ".codex" / "skills" / "mine" / "SKILL.md").read_text() == "# mine\n"
    assert not (tmp_path / "back" / ".codex" / "sessions").exists()
    assert "left_out" not in snapshot(root)[1]  # nothing is left out unless asked


def test_claude_codes_own_state_is_left_out_and_what_an_agent_may_write_there_is_kept(tmp_path):
    """2.1.328's retention sweep writes `.claude/.last-cleanup` when it ends before the tool
    exits (some sessions, not others): never the agent's change. Settings, skills and agents
    under .claude are what an agent may be asked to write: kept."""
    from benchtape.adapters.base import get_adapter

    root = tmp_path / "ws"
    for rel in (".claude/.last-cleanup", ".claude/projects/p/s.jsonl", ".claude/sessions/4242.json", ".claude/session-env/0b1c-uuid/env", ".claude/history.jsonl", ".claude/file-history/0b1c-uuid/f@v1", ".claude/benchtape/stop.jsonl", ".local/share/applications/claude-code-url-handler.desktop", ".claude/settings.json", ".claude/skills/mine/SKILL.md", ".claude/agents/a.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    data, facts = snapshot(root, leave_out=get_adapter("claude-code").bookkeeping)
    names = sorted(m.name for m in tarfile.open(fileobj=io.BytesIO(data)).getmembers() if m.isfile())
    assert names == [".claude/agents/a.md", ".claude/settings.json", ".claude/skills/mine/SKILL.md"]


def test_codexs_own_state_is_left_out_and_its_config_and_skills_kept(tmp_path):
    """What 0.169.0 makes in a new home at every start (a random installation id, a migration
    marker, shell snapshots, writer locks, arg0 links) is not the agent's change."""
    from benchtape.adapters.base import get_adapter

    root = tmp_path / "ws"
    for rel in (".codex/installation_id", ".codex/.sandbox_migration", ".codex/shell_snapshots/s.sh", ".codex/thread-writer-locks/.coordination.lock", ".codex/tmp/arg0-linux/codex", ".codex/config.toml", ".codex/skills/mine/SKILL.md", ".codex/AGENTS.md"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("x\n")
    data, facts = snapshot(root, leave_out=get_adapter("codex").bookkeeping)
    names = sorted(m.name for m in tarfile.open(fileobj=io.BytesIO(data)).getmembers() if m.isfile())
    assert names == [".codex/AGENTS.md", ".codex/config.toml", ".codex/skills/mine/SKILL.md"]
    assert facts["left_out"]["entries"] == 5


def test_bookkeeping_is_left_out_only_where_home_is_the_workspace(tmp_path):
    """The level decides where HOME is; the run loop and `recover` read it from there."""
    from benchtape.adapters.base import get_adapter
    from benchtape.recorder.recording import home_paths_of

    ws = tmp_path / "ws"
    assert home_paths_of("codex", ws, ws) == get_adapter("codex").bookkeeping != ()
    assert home_paths_of("codex", str(ws), ws) == get_adapter("codex").bookkeeping  # as session.json gives it
    assert home_paths_of("codex", tmp_path / "real-home", ws) == ()  # levels none and workspace
    assert home_paths_of("codex", None, ws) == ()  # a session folder written before `home` was noted
    assert home_paths_of("no-such-harness", ws, ws) == () and home_paths_of(None, ws, ws) == ()
    # the files a tool rewrites at every start, which the staged snapshot names: likewise only there
    assert home_paths_of("claude-code", ws, ws, "own_state") == (".claude.json",)
    assert home_paths_of("claude-code", tmp_path / "real-home", ws, "own_state") == () == home_paths_of("codex", ws, ws, "own_state")
