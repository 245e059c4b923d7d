"""Snapshot creation never follows a link, whatever another process does to the tree meanwhile."""

from __future__ import annotations

import io
import os
import stat
import tarfile
import threading

from benchtape.core.redact import redactor
from benchtape.sandbox.snapshot import restore, snapshot

NAMES = ("passwd", "hosts", "hostname", "group")


def _members(data: bytes) -> dict[str, tarfile.TarInfo]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: m for m in tar.getmembers()}


def _contents(data: bytes) -> dict[str, bytes]:
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}


def test_a_folder_swapped_for_a_link_while_snapshotting_never_stores_what_it_points_at(tmp_path):
    """A racer swaps work/dN with a link to a "host" folder whose files have the same names;
    200 snapshots taken meanwhile hold only the workspace's own bytes."""
    host = tmp_path / "host-etc"
    host.mkdir()
    for name in NAMES + ("shadow", "only-on-host"):
        (host / name).write_text("HOST FILE\n")
    work = tmp_path / "work"
    for d in range(4):
        (work / f"d{d}").mkdir(parents=True)
        for name in NAMES:
            (work / f"d{d}" / name).write_text("ours\n")
    stop = threading.Event()

    def racer() -> None:
        while not stop.is_set():
            for d in range(4):
                folder = work / f"d{d}"
                os.rename(folder, work / f"d{d}.real")
                os.symlink(host, folder)
                os.unlink(folder)
                os.rename(work / f"d{d}.real", folder)

    thread = threading.Thread(target=racer, daemon=True)
    thread.start()
    try:
        stored = [_contents(snapshot(work)[0]) for _ in range(200)]
    finally:
        stop.set()
        thread.join()
    host_bytes = [(name, body) for snap in stored for name, body in snap.items() if body != b"ours\n"]
    assert host_bytes == []
    assert not any(name.rsplit("/", 1)[-1] in ("shadow", "only-on-host") for snap in stored for name in snap)


def test_links_are_stored_as_links_and_links_out_are_left_out(tmp_path):
    work = tmp_path / "work"
    (work / "pkg").mkdir(parents=True)
    (work / "pkg" / "a.py").write_text("x = 1\n")
    (work / "inside").symlink_to("pkg")
    (work / "pkg" / "up").symlink_to("../pkg/a.py")
    (work / "etc").symlink_to("/etc")
    (work / "sneaky").symlink_to("pkg/../../outside")
    data, facts = snapshot(work)
    members = _members(data)
    assert members["inside"].issym() and members["inside"].linkname == "pkg"
    assert members["pkg/up"].issym()
    assert "etc" not in members and "sneaky" not in members
    assert facts["links_out_count"] == 2
    restored = tmp_path / "restored"
    restore(data, restored)
    assert (restored / "inside" / "a.py").read_text() == "x = 1\n"


def test_special_files_and_mode_bits_never_reach_the_snapshot(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    tool = work / "tool"
    tool.write_text("#!/bin/sh\n")
    tool.chmod(0o4755 | stat.S_ISGID)
    os.mkfifo(work / "pipe")
    (work / "empty").mkdir()
    data, facts = snapshot(work)
    members = _members(data)
    assert members["tool"].mode == 0o755  # setuid/setgid dropped
    assert "pipe" not in members and facts["skipped"] == 1
    assert members["empty"].isdir()
    if os.geteuid() == 0:  # only root can make a device node
        os.mknod(work / "disk", 0o600 | stat.S_IFBLK, os.makedev(7, 0))
        assert "disk" not in _members(snapshot(work)[0])


def test_a_known_secret_in_a_workspace_file_is_redacted_in_the_stored_tar_and_noted(tmp_path):
    import base64

    secret = "s3cr3t-Value-0f-A-Key-9931"
    work = tmp_path / "work"
    work.mkdir()
    (work / ".env").write_text(f"KEY={secret}\n")
    (work / "encoded.txt").write_text(base64.b64encode(secret.encode()).decode() + "\n")
    (work / "clean.py").write_text("print('hello')\n")
    data, facts = snapshot(work, redact=redactor([secret]))
    files = _contents(data)
    assert secret.encode() not in data and base64.b64encode(secret.encode()) not in data
    assert files[".env"] == b"KEY=[REDACTED]\n" and files["clean.py"] == b"print('hello')\n"
    assert facts["redacted"] == [".env", "encoded.txt"] and facts["redacted_count"] == 2
    assert facts["bytes"] == sum(len(b) for b in files.values())
