"""The snapshot's tar headers are byte for byte what tarfile writes for the same entry."""

from __future__ import annotations

import os
import random
import tarfile

from benchtape.sandbox.snapshot import _header, _info


def _stat(mode: int, mtime: float) -> os.stat_result:
    return os.stat_result((mode, 0, 0, 1, 0, 0, 0, int(mtime), mtime, int(mtime)))


def test_header_is_tarfiles():
    rng = random.Random(3)
    names = ["a", "calc.py", "dir/sub/file.txt", ".codex/config.toml", "x" * 99, "x" * 100, "y" * 101, "d/" + "z" * 150, "é.py", "naïve/dir", "\udcff.bin", "sp ace", "dir/"]
    kinds = [tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE]
    for _ in range(3000):
        name = rng.choice(names)
        kind = rng.choice(kinds)
        mode = rng.choice([0o100644, 0o100755, 0o40755, 0o120777, 0o104755, 0o101777, 0o100000])
        mtime = rng.choice([0, 1, 1764600000.75, 8**11 - 1, 8**11, -5.5, 2**40 + 0.5, 1e12])
        size = rng.choice([0, 1, 511, 512, 10**6, 8**11 - 1, 8**11]) if kind == tarfile.REGTYPE else 0
        link = rng.choice(["", "target", "../up", "l" * 100, "l" * 101, "ü"]) if kind == tarfile.SYMTYPE else ""
        st = _stat(mode, mtime)
        info = _info(name, kind, st)
        info.size, info.linkname = size, link
        assert _header(name, kind, st, size, link) == info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape"), (name, kind, mode, mtime, size, link)
