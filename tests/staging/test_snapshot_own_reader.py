"""`restore` reads the tars benchtape writes without tarfile (`_own_entries`): for any bytes,
it reads them exactly as tarfile does, or declines and tarfile reads them, so a restore and
each of its refusals are the same either way."""

from __future__ import annotations

import io
import os
import random
import stat
import tarfile
from pathlib import Path
from typing import Any

import pytest
from test_snapshot_restore import CRAFTED, tar_of

from benchtape.core.errors import BadInput
from benchtape.sandbox import snapshot as snap
from benchtape.sandbox.snapshot import _BoundedInfo, _own_entries, restore, snapshot

ODD_NAMES = ["a", "calc.py", "sp ace", "é.py", "naïve", "new\nline", "tab\there", "#!", "-dash", ".hidden", "x" * 99, "y" * 100, "z" * 101, "w" * 250]


def key(m: tarfile.TarInfo) -> tuple[Any, ...]:
    return (m.name, m.type, m.mode, m.size, m.linkname, m.offset, m.offset_data)


def tarfile_entries(data: bytes) -> list[tuple[Any, ...]] | Exception:
    """What tarfile reads (as restore opens it), or the error it stops with."""
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=_BoundedInfo) as tar:
            return [key(m) for m in tar]
    except Exception as exc:  # noqa: BLE001 - compared, not handled
        return exc


def random_tree(root: Path, rng: random.Random) -> None:
    """Odd names, empty and big files, folders deep enough to need pax paths, links inside the tree."""
    root.mkdir()
    folders = [root]
    files: list[Path] = []
    for _ in range(rng.randint(1, 25)):
        parent = rng.choice(folders)
        name = rng.choice(ODD_NAMES) + rng.choice(["", str(rng.randint(0, 9))])
        path = parent / name
        if path.exists() or len(os.fsencode(str(path.relative_to(root)))) > 2000:
            continue
        kind = rng.choice(["file", "file", "file", "dir", "link"])
        if kind == "dir":
            path.mkdir()
            folders.append(path)
        elif kind == "file":
            path.write_bytes(rng.choice([b"", b"x", os.urandom(511), os.urandom(512), os.urandom(513), os.urandom(rng.randint(0, 3 << 20))]))
            path.chmod(rng.choice([0o644, 0o755, 0o600, 0o400]))
            files.append(path)
        elif files or folders[1:]:
            target = rng.choice(files + folders[1:])
            os.symlink(os.path.relpath(target, path.parent), path)


def restored(data: bytes, dest: Path) -> dict[str, Any]:
    """The tree restore makes, entry by entry, or the error it refused with."""
    try:
        restore(data, dest)
    except (BadInput, ValueError) as exc:
        return {"refused": (type(exc), str(exc))}
    tree: dict[str, Any] = {}
    for dirpath, dirnames, filenames in os.walk(dest):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            rel = str(path.relative_to(dest))
            st = path.lstat()
            if stat.S_ISLNK(st.st_mode):
                tree[rel] = ("link", os.readlink(path))
            elif stat.S_ISDIR(st.st_mode):
                tree[rel] = ("dir",)
            else:
                tree[rel] = ("file", stat.S_IMODE(st.st_mode), path.read_bytes())
    return tree


def with_tarfile(monkeypatch: pytest.MonkeyPatch, data: bytes, dest: Path) -> dict[str, Any]:
    with monkeypatch.context() as m:
        m.setattr(snap, "_own_entries", lambda data: None)
        return restored(data, dest)


def test_every_snapshot_is_read_as_tarfile_reads_it(tmp_path, monkeypatch):
    rng = random.Random(16)
    for i in range(40):
        root = tmp_path / f"tree{i}"
        random_tree(root, rng)
        data, _ = snapshot(root)
        own = _own_entries(data)
        assert own is not None, f"tree {i}: a snapshot benchtape wrote is left to tarfile"
        assert [key(m) for m in own] == tarfile_entries(data)
        assert restored(data, tmp_path / f"own{i}") == with_tarfile(monkeypatch, data, tmp_path / f"ref{i}")


def test_long_names_and_links_come_from_their_pax_headers(tmp_path):
    root = tmp_path / "w"
    deep = root / ("d" * 80) / ("e" * 80)
    deep.mkdir(parents=True)
    (deep / ("f" * 120)).write_bytes(b"long")
    os.symlink(os.path.relpath(deep / ("f" * 120), root), root / "l")
    data, _ = snapshot(root)
    own = {m.name: m for m in _own_entries(data) or []}
    assert own["l"].linkname == os.path.relpath(deep / ("f" * 120), root)
    assert f"{'d' * 80}/{'e' * 80}/{'f' * 120}" in own
    assert b"path=" in data and b"linkpath=" in data


def test_a_name_that_is_not_utf8_is_left_to_tarfile(tmp_path, monkeypatch):
    """Its pax header says hdrcharset=BINARY: tarfile decodes it in its own way."""
    root = tmp_path / "w"
    root.mkdir()
    (root / os.fsdecode(b"\xff.bin")).write_bytes(b"x")
    data, _ = snapshot(root)
    assert _own_entries(data) is None
    assert restored(data, tmp_path / "a") == with_tarfile(monkeypatch, data, tmp_path / "b") == {os.fsdecode(b"\xff.bin"): ("file", 0o644, b"x")}


def mutations(data: bytes, rng: random.Random) -> list[bytes]:
    """The tar cut, extended, zeroed, and with bytes of its headers and pax records changed."""
    headers = [m.offset for m in tarfile.open(fileobj=io.BytesIO(data)).getmembers()] or [0]
    out = [data[:n] for n in (0, 100, 511, 512, 1024, len(data) - 1024, len(data) - 1)]
    out += [data + os.urandom(512), data[:512] + bytes(512) + data[512:]]
    types = [b"0", b"1", b"2", b"3", b"4", b"5", b"6", b"7", b"x", b"g", b"L", b"K", b"S", b"X", b"\0", b"Z"]
    for _ in range(400):
        at = rng.choice(headers)
        b = bytearray(data)
        where = rng.choice(["type", "byte", "field", "pax"])
        if where == "type":
            b[at + 156 : at + 157] = rng.choice(types)
        elif where == "byte":
            b[at + rng.randrange(512)] = rng.randrange(256)
        elif where == "field":
            start, end = rng.choice([(0, 100), (100, 108), (108, 116), (124, 136), (136, 148), (148, 156), (157, 257), (257, 265), (329, 345), (345, 500)])
            b[at + start : at + end] = bytes(rng.choice([0, 0x20, 0x30, 0x37, 0x38, 0x2F, 0x80, 0xFF]) for _ in range(end - start))
        else:
            pax = data.find(b" path=", at)
            if pax >= 0:
                b[pax + rng.randrange(-3, 8)] = rng.choice(b"0123456789 =\n\0ah")
        if where != "byte" or rng.random() < 0.5:
            _fix_checksum(b, at)
        out.append(bytes(b))
    return out


def _fix_checksum(b: bytearray, at: int) -> None:
    b[at + 148 : at + 156] = b" " * 8
    b[at + 148 : at + 156] = b"%06o\0 " % sum(b[at : at + 512])


def test_any_tar_is_read_as_tarfile_reads_it_or_left_to_tarfile(tmp_path):
    rng = random.Random(6)
    root = tmp_path / "w"
    (root / ("d" * 90) / ("e" * 30)).mkdir(parents=True)
    (root / ("d" * 90) / ("e" * 30) / "f.txt").write_bytes(b"x" * 700)
    (root / "empty").write_bytes(b"")
    os.symlink("empty", root / "l")
    data, _ = snapshot(root)
    read = declined = 0
    for mutant in mutations(data, rng):
        own = _own_entries(mutant)
        ref = tarfile_entries(mutant)
        if own is None:
            declined += 1
            continue
        read += 1
        assert not isinstance(ref, Exception), f"read a tar tarfile refuses ({ref!r})"
        assert [key(m) for m in own] == ref
    assert read > 50 and declined > 50  # both sides of the line were exercised


def test_tars_of_other_writers_are_left_to_tarfile():
    def tar(fmt: int, name: str, **pax: str) -> bytes:
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w", format=fmt, pax_headers=pax or None) as t:
            info = tarfile.TarInfo(name)
            info.uname = "someone" if fmt == tarfile.USTAR_FORMAT else ""
            t.addfile(info, io.BytesIO(b""))
        return buf.getvalue()

    assert _own_entries(tar(tarfile.PAX_FORMAT, "a")) is not None
    assert _own_entries(tar(tarfile.GNU_FORMAT, "g" * 150)) is None  # GNU long name, GNU magic
    assert _own_entries(tar(tarfile.USTAR_FORMAT, "p" * 90 + "/" + "q" * 90)) is None  # a name prefix
    assert _own_entries(tar(tarfile.PAX_FORMAT, "a", comment="hi")) is None  # a global header


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_each_refusal_is_the_same_on_both_readers(tmp_path, monkeypatch, name):
    entries, _ = CRAFTED[name]
    data = tar_of(*entries)
    ours = {"hardlink", "hardlink-inside", "device", "fifo"}.isdisjoint({name})
    assert (_own_entries(data) is not None) == ours
    fast, slow = restored(data, tmp_path / "a"), with_tarfile(monkeypatch, data, tmp_path / "b")
    assert "refused" in fast and fast == slow


def pax_tar(*entries: tuple[str, bytes]) -> bytes:
    """Files named by pax headers written as tarfile writes them (any name, NUL included)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=tarfile.PAX_FORMAT) as t:
        for name, data in entries:
            info = tarfile.TarInfo("placeholder")
            info.size = len(data)
            info.pax_headers = {"path": name}
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


BOUNDS = {
    "nul-in-name": (pax_tar(("a\0b", b"x")), "NUL character"),
    "too-deep": (pax_tar(("d/" * 300 + "f", b"x")), "folders deep"),
    "name-too-long": (pax_tar(("n" * 300, b"x")), "name too long"),
    "too-many": (pax_tar(*[(f"f{i}", b"") for i in range(6)]), "more than 5 entries"),
    "too-big": (pax_tar(("a", b"x" * 600), ("b", b"y" * 600)), "more than 1000 bytes"),
}


@pytest.mark.parametrize("name", sorted(BOUNDS))
def test_each_bound_is_the_same_on_both_readers(tmp_path, monkeypatch, name):
    data, message = BOUNDS[name]
    monkeypatch.setattr(snap, "MAX_MEMBERS", 5)
    monkeypatch.setattr(snap, "MAX_SNAPSHOT_BYTES", 1000)
    assert _own_entries(data) is not None
    fast, slow = restored(data, tmp_path / "a"), with_tarfile(monkeypatch, data, tmp_path / "b")
    assert fast == slow
    assert message in fast["refused"][1]
