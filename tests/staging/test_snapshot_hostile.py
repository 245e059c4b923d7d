"""Hostile snapshots (issue 15): deep paths, huge or chained tar headers, too many entries and
swapped bytes are refused with a clear error, in bounded time and memory, leaving nothing
behind; a workspace too deep or too large to restore is not snapshotted."""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import tarfile
from pathlib import Path

import pytest

from benchtape.core.command_runner import Unavailable
from benchtape.core.errors import BadInput
from benchtape.replay.grading import SnapshotFile
from benchtape.sandbox import snapshot as snap
from benchtape.sandbox.snapshot import restore, snapshot
from benchtape.sandbox.trees import remove_tree, walk


def tar_bytes(*infos: tuple[tarfile.TarInfo, bytes], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for info, data in infos:
            info.size = len(data) if info.isreg() else 0
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def entry(name: str, data: bytes = b"x") -> tuple[tarfile.TarInfo, bytes]:
    return tarfile.TarInfo(name), data


def deep_dir(root: Path, levels: int) -> None:
    """`levels` nested folders, made relative to each parent (no path is ever PATH_MAX long)."""
    root.mkdir()
    fd = os.open(root, os.O_RDONLY)
    for _ in range(levels):
        os.mkdir("d", dir_fd=fd)
        inner = os.open("d", os.O_RDONLY, dir_fd=fd)
        os.close(fd)
        fd = inner
    os.close(fd)


def test_a_2500_level_path_is_refused_before_anything_is_written(tmp_path):
    data = tar_bytes(entry("/".join(["d"] * 2500) + "/f.txt"))
    dest = tmp_path / "work"
    with pytest.raises(BadInput, match=r"is 2,501 folders deep \(at most 256\)"):
        restore(data, dest)
    assert list(dest.iterdir()) == []


def test_a_deep_workspace_is_not_snapshotted_and_is_removed_without_recursion(tmp_path):
    root = tmp_path / "ws"
    deep_dir(root, 2500)
    with pytest.raises(OSError, match="nests deeper than 256 folders"):
        snapshot(root)  # an OSError the runner records, not a RecursionError that ends the run
    remove_tree(root)
    assert not root.exists()


def test_walk_matches_os_walk_order(tmp_path):
    for rel in ("b/y", "a/x/deep", "a/w", "c"):
        (tmp_path / rel).mkdir(parents=True)
    (tmp_path / "a" / "f.txt").write_text("f")
    (tmp_path / "link").symlink_to("a")
    expected = []
    for top, dirs, files in os.walk(tmp_path):
        dirs.sort()
        expected.append((top, dirs[:], sorted(files)))
    assert list(walk(tmp_path)) == expected


def test_remove_tree_never_follows_a_link(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (tmp_path / "t" / "a").mkdir(parents=True)
    (tmp_path / "t" / "a" / "out").symlink_to(outside)
    remove_tree(tmp_path / "t")
    assert not (tmp_path / "t").exists() and (outside / "keep.txt").read_text() == "keep"


def test_a_huge_pax_header_is_refused_before_it_is_read(tmp_path):
    info = tarfile.TarInfo("a.txt")
    info.pax_headers = {"comment": "x" * (snap.MAX_HEADER_BYTES + 1)}
    with pytest.raises(BadInput, match="extended tar header of"):
        restore(tar_bytes((info, b"a")), tmp_path / "work")


def test_a_compressed_tar_is_not_decompressed(tmp_path):
    """The 4.7 MB gzip of a 1 GiB pax header took 3.1 GB and 35 s; snapshots are never compressed."""
    with pytest.raises(BadInput, match="not a readable uncompressed tar"):
        restore(gzip.compress(tar_bytes(entry("a.txt"))), tmp_path / "work")


def test_a_chain_of_extended_headers_is_bounded(tmp_path):
    block = tarfile.TarInfo("././@PaxHeader")
    block.type = tarfile.XHDTYPE
    record = b"11 a=bcde\n"
    block.size = len(record)
    header = block.tobuf(format=tarfile.USTAR_FORMAT) + record + b"\0" * (512 - len(record))
    data = header * 50 + tar_bytes(entry("a.txt"), fmt=tarfile.USTAR_FORMAT)
    # refused by benchtape's bound; a tarfile before 3.11.4 (Debian 12's 3.11.2) stops at the
    # chain's second header first, and the restore refuses the tar as unreadable
    with pytest.raises(BadInput, match="extended tar headers in a row|not a readable uncompressed tar"):
        restore(data, tmp_path / "work")
    assert not list((tmp_path / "work").iterdir())


def test_too_many_entries_are_refused_and_not_snapshotted(tmp_path, monkeypatch):
    monkeypatch.setattr(snap, "MAX_MEMBERS", 50)
    with pytest.raises(BadInput, match="more than 50 entries"):
        restore(tar_bytes(*(entry(f"f{i}") for i in range(60))), tmp_path / "work")
    ws = tmp_path / "ws"
    ws.mkdir()
    for i in range(60):
        (ws / f"f{i}").write_text("")
    with pytest.raises(OSError, match="more than 50 files and folders"):
        snapshot(ws)


def test_restore_checks_the_recorded_sha256(tmp_path):
    data = tar_bytes(entry("a.txt", b"mine"))
    restore(data, tmp_path / "ok", sha256=hashlib.sha256(data).hexdigest())
    assert (tmp_path / "ok" / "a.txt").read_bytes() == b"mine"
    swapped = tar_bytes(entry("a.txt", b"theirs"))
    with pytest.raises(BadInput, match="do not match the sha256 recorded"):
        restore(swapped, tmp_path / "swapped", sha256=hashlib.sha256(data).hexdigest())
    assert not (tmp_path / "swapped").exists()


def test_grading_restores_only_the_snapshot_it_recorded(tmp_path):
    data = tar_bytes(entry("a.txt", b"mine"))
    sha = hashlib.sha256(data).hexdigest()
    tar = tmp_path / "snap.tar"
    tar.write_bytes(data)
    assert SnapshotFile(tar, sha).restore(tmp_path / "one")
    assert (tmp_path / "one" / "a.txt").read_bytes() == b"mine"
    tar.write_bytes(tar_bytes(entry("a.txt", b"theirs")))  # a report folder's tar swapped
    with pytest.raises(Unavailable, match="do not match"):
        SnapshotFile(tar, sha).restore(tmp_path / "two")
    assert not (tmp_path / "two" / "a.txt").exists()
