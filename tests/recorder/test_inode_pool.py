"""Restoring from files and folders made ahead (benchtape.sandbox.inodes) gives the tree a creation would."""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from functools import partial

import pytest

from benchtape.sandbox import inodes
from benchtape.sandbox import snapshot as snapshots
from benchtape.sandbox.snapshot import snapshot
from benchtape.sandbox.trees import Cleanup, wait_later


@pytest.fixture
def pool(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))
    (tmp_path / "tmp").mkdir()
    cleanup = Cleanup()  # not recording: a refill is not parked for a next harness
    pool = inodes.InodePool(cleanup)
    yield pool
    pool.discard()
    cleanup.close()
    wait_later()


@pytest.fixture
def restore(pool):
    """`restore` from the run's pool, as a run's grading restores."""
    return partial(snapshots.restore, pool=pool)


def _tree(root):
    root.mkdir(exist_ok=True)
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("a = 1\n")
    (root / "pkg" / "sub" / "b.txt").write_bytes(b"\x00bytes")
    (root / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(root / "run.sh", 0o755)
    (root / "empty").write_bytes(b"")
    os.symlink("pkg/a.py", root / "link")


def _listing(root):
    out = {}
    for top, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(top, name)
            st = os.lstat(path)
            rel = os.path.relpath(path, root)
            kind = "link" if stat.S_ISLNK(st.st_mode) else "dir" if stat.S_ISDIR(st.st_mode) else "file"
            body = os.readlink(path) if kind == "link" else open(path, "rb").read() if kind == "file" else None
            out[rel] = (kind, stat.S_IMODE(st.st_mode) if kind != "link" else None, st.st_nlink if kind == "file" else None, body)
    return out


def test_a_pooled_restore_is_the_tree_a_plain_restore_makes(tmp_path, pool, restore):
    src = tmp_path / "src"
    src.mkdir()
    _tree(src)
    data, _ = snapshot(src)
    sha = hashlib.sha256(data).hexdigest()
    restore(data, tmp_path / "plain", sha256=sha)  # nothing pooled yet: made the ordinary way; fills the pool
    wait_later()
    assert len(pool.files) >= 4 and len(pool.dirs) >= 2
    pooled = list(pool.files)
    restore(data, tmp_path / "pooled", sha256=sha)
    assert _listing(tmp_path / "pooled") == _listing(tmp_path / "plain")
    assert sum(not os.path.exists(name) for name in pooled) >= 4  # its files came from the pool


def test_a_pooled_file_with_another_name_or_bytes_is_not_used(tmp_path, pool, restore):
    src = tmp_path / "src"
    src.mkdir()
    (src / "f.txt").write_text("mine")
    data, _ = snapshot(src)
    restore(snapshot(_tree(tmp_path / "big") or tmp_path / "big")[0], tmp_path / "first")
    wait_later()
    assert len(pool.files) >= 2
    for i, name in enumerate(pool.files):  # an agent with the same uid reached the pool
        if i % 2:
            os.link(name, tmp_path / f"alias{i}")
        else:
            with open(name, "wb") as f:
                f.write(b"planted")
    for name in pool.dirs:
        os.mkdir(os.path.join(name, "planted"))
    restore(data, tmp_path / "second")
    assert (tmp_path / "second" / "f.txt").read_text() == "mine" and os.lstat(tmp_path / "second" / "f.txt").st_nlink == 1
    assert os.listdir(tmp_path / "second") == ["f.txt"]
    assert all(p.read_bytes() != b"mine" for p in tmp_path.glob("alias*"))  # nothing restored through an outside name


def test_the_grading_folder_comes_from_the_pool_private_and_empty(tmp_path, pool, restore):
    restore(snapshot(_made(tmp_path))[0], tmp_path / "first")
    wait_later()
    got = pool.temp_dir("benchtape-grade-")
    assert os.path.dirname(got) == tempfile.gettempdir() and os.path.basename(got).startswith("benchtape-grade-")
    assert stat.S_IMODE(os.lstat(got).st_mode) == 0o700 and os.listdir(got) == []


def test_without_a_pool_restore_creates_as_before(tmp_path, pool, restore):
    pool.discard()
    src = _made(tmp_path)
    restore(snapshot(src)[0], tmp_path / "out")
    assert (tmp_path / "out" / "f.txt").read_text() == "x" and pool.files == [] and pool.folder is None


def test_discard_removes_the_pool_folder(tmp_path, pool, restore):
    restore(snapshot(_made(tmp_path))[0], tmp_path / "first")
    wait_later()
    folder = pool.folder.path
    assert folder.exists()
    pool.discard()
    wait_later()
    assert not folder.exists()


def _made(tmp_path):
    src = tmp_path / "src"
    src.mkdir(exist_ok=True)
    (src / "f.txt").write_text("x")
    return src


def test_a_member_cut_short_by_the_end_of_the_tar_is_refused(tmp_path):
    from benchtape.core.errors import BadInput

    src = tmp_path / "src"
    src.mkdir()
    (src / "big.bin").write_bytes(b"x" * 5000)
    data, _ = snapshot(src)
    with pytest.raises(BadInput, match="past the end|not a readable"):
        snapshots.restore(data[: 512 * 3], tmp_path / "out")  # the header and part of its bytes
