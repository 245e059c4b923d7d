"""Workspace snapshots: a deterministic tar of the final tree, and a restore that cannot escape.

A snapshot is what lets a session be graded later without its sandbox; restoring one
is reading untrusted input (an agent wrote that tree), so every entry is checked.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from pathlib import Path, PurePosixPath
from typing import Any, Iterable, Sequence

from benchtape.core.errors import BadInput
from benchtape.core.payloads import TreeFacts
from benchtape.sandbox.inodes import InodePool
from benchtape.sandbox.nofollow import walk
from benchtape.sandbox.treediff import covering
from benchtape.spec.yamlsrc import shorten

MAX_SNAPSHOT_BYTES = 256 * 1024 * 1024  # the files' bytes
MAX_MEMBERS = 100_000  # entries: restoring each costs a file creation (~70 µs here)
MAX_DEPTH = 256  # folders deep; deeper paths break PATH_MAX and recursive tools
MAX_HEADER_BYTES = 64 * 1024  # one pax or GNU long-name header (a path is at most 4 KiB)
MAX_HEADER_CHAIN = 8  # extended headers in a row before one entry
MAX_TAR_BYTES = MAX_SNAPSHOT_BYTES + MAX_MEMBERS * 3 * 512 + 10240  # files + a header (and pax header) per entry
PATH_MAX = 4096
NAME_MAX = 255
MAX_REL_DIR = 3000  # a snapshotted folder's path, so it and its names restore under any temp folder


def snapshot(root: Path, redact: Any = None, leave_out: Sequence[str] = ()) -> tuple[bytes, TreeFacts]:
    """Tar the tree under root (sorted, timestamps kept); returns the bytes and {files, bytes}.

    Nothing is followed: folders and files are opened relative to their parent folder's
    descriptor without following links (benchtape.sandbox.nofollow), so a process that swaps a
    folder for a link to /etc while this runs cannot make it store host files. Modes keep only
    the permission bits (no setuid, setgid or sticky). Devices, FIFOs and sockets are left out
    and counted in `skipped`.

    A symlink pointing out of the tree (a venv's `bin/python -> /usr/bin/python3`, say) is left
    out and listed in `links_out`: `restore` refuses such links, and one of them must not make
    the whole workspace ungradable.

    `redact` (a benchtape.core.redact.Redactor): files holding a known secret value, in any of its
    forms, are stored with it replaced by [REDACTED] and listed in `redacted`.

    `leave_out`: globs (benchtape.sandbox.treediff.covers) of the harness's own bookkeeping, left out
    with everything under them and counted in `left_out` ({patterns, entries}).
    """
    tar = _TarWriter()
    files = total = skipped = 0
    links_out: list[str] = []
    redacted: list[str] = []
    left: list[str] = []
    skip = None
    if leave_out:
        covered = covering(tuple(leave_out))

        def skip(rel: str) -> bool:
            if covered(rel):
                left.append(rel)
                return True
            return False

    for folder in walk(root, skip):
        _restorable(folder.rel or ".", tar.members + len(folder.entries))
        if folder.rel and not folder.entries:
            tar.add(folder.rel, tarfile.DIRTYPE, folder.st)
        for e in folder.entries:
            if e.kind == "file":
                data = e.read(MAX_SNAPSHOT_BYTES - total)
                if data is None:
                    skipped += 1  # swapped for something else since it was listed
                    continue
                if redact is not None:
                    data, hits = redact.known_in_bytes(data)
                    if hits:
                        redacted.append(e.rel)
                total += len(data)
                if total > MAX_SNAPSHOT_BYTES:
                    raise OSError(f"workspace is larger than {MAX_SNAPSHOT_BYTES} bytes; not snapshotted")
                tar.add(e.rel, tarfile.REGTYPE, e.st, data)
                files += 1
            elif e.kind == "link":
                target = os.path.normpath(os.path.join(os.path.dirname(e.rel), e.link or ""))
                if os.path.isabs(e.link or "") or target == ".." or target.startswith("../"):
                    links_out.append(f"{e.rel} -> {e.link}")
                    continue
                tar.add(e.rel, tarfile.SYMTYPE, e.st, linkname=e.link or "")
            elif e.kind == "other":
                skipped += 1
    facts: TreeFacts = {"files": files, "bytes": total}
    if links_out:
        facts["links_out"] = links_out[:100]
        facts["links_out_count"] = len(links_out)
    if skipped:
        facts["skipped"] = skipped
    if redacted:
        facts["redacted"] = redacted[:100]
        facts["redacted_count"] = len(redacted)
    if left:
        facts["left_out"] = {"patterns": list(leave_out), "entries": len(left)}
    return tar.close(), facts


class _TarWriter:
    """A PAX-format tar as tarfile writes one (each header as `TarInfo.tobuf` makes it, `_header`; data padded to
    512-byte blocks, two zero blocks and padding to a 10 KiB record at the end), gathered as a
    list of parts joined once: tarfile's own writer copied every file through a BytesIO in
    16 KiB reads and writes (a quarter of a snapshot of a codex home)."""

    def __init__(self) -> None:
        self.parts: list[bytes] = []
        self.size = 0
        self.members = 0

    def add(self, name: str, kind: bytes, st: os.stat_result, data: bytes = b"", linkname: str = "") -> None:
        header = _header(name, kind, st, len(data), linkname)
        self.parts.append(header)
        self.size += len(header)
        if data:
            pad = _padded(len(data)) - len(data)
            self.parts += (data, b"\0" * pad) if pad else (data,)
            self.size += len(data) + pad
        self.members += 1

    def close(self) -> bytes:
        end = 2 * tarfile.BLOCKSIZE
        end += -(self.size + end) % tarfile.RECORDSIZE
        self.parts.append(b"\0" * end)
        return b"".join(self.parts)


def _restorable(rel_dir: str, entries: int) -> None:
    """What `restore` would refuse is not snapshotted: the run says why, instead of a grading failing later."""
    depth = 0 if rel_dir == "." else len(PurePosixPath(rel_dir).parts)
    if depth > MAX_DEPTH or len(os.fsencode(rel_dir)) > MAX_REL_DIR:
        raise OSError(f"the workspace nests deeper than {MAX_DEPTH} folders or {MAX_REL_DIR} bytes of path ({shorten(rel_dir)}); not snapshotted")
    if entries > MAX_MEMBERS:
        raise OSError(f"the workspace holds more than {MAX_MEMBERS:,} files and folders; not snapshotted")


_ROOM = 8**11  # what a 12-byte octal field holds (size, mtime)
_TAIL = tarfile.POSIX_MAGIC + b"\0" * (32 + 32 + 8 + 8 + 155 + 12)  # magic, uname, gname, devmajor, devminor, prefix, padding to 512


def _header(name: str, kind: bytes, st: os.stat_result, size: int = 0, linkname: str = "") -> bytes:
    """The header `_info(...).tobuf(PAX_FORMAT, "utf-8", "surrogateescape")` writes, byte for byte
    (a test compares them), built directly in the common case, an ASCII name and link of at
    most 100 bytes and a size and whole-second time that fit their fields: then tarfile writes
    no pax header, and its field-by-field checks were half of a small workspace's snapshot."""
    mtime = int(st.st_mtime)
    path = name + "/" if kind == tarfile.DIRTYPE and not name.endswith("/") else name
    if not (path.isascii() and len(path) <= 100 and linkname.isascii() and len(linkname) <= 100 and 0 <= size < _ROOM and 0 <= mtime < _ROOM):
        info = _info(name, kind, st)
        info.size, info.linkname = size, linkname
        return info.tobuf(tarfile.PAX_FORMAT, "utf-8", "surrogateescape")
    head = b"".join((
        path.encode().ljust(100, b"\0"),
        b"%07o\0" % (stat.S_IMODE(st.st_mode) & 0o777),
        b"0000000\0" b"0000000\0",  # uid, gid: root
        b"%011o\0" % size,
        b"%011o\0" % mtime,
        b"        ",  # the checksum, counted as spaces
        kind,
        linkname.encode().ljust(100, b"\0"),
        _TAIL,
    ))
    return head[:148] + b"%06o\0" % sum(head) + head[155:]


def _info(name: str, kind: bytes, st: os.stat_result) -> tarfile.TarInfo:
    """A tar header as the snapshot stores it: owner root, permission bits only, the
    modification time in whole seconds (a fraction needs a pax header per entry, which doubled
    the headers a snapshot writes and a restore parses; restore does not set times anyway)."""
    info = tarfile.TarInfo(name)
    info.type = kind
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mode = stat.S_IMODE(st.st_mode) & 0o777
    info.mtime = int(st.st_mtime)
    return info


def restore(data: bytes, dest: Path, sha256: str | None = None, pool: InodePool | None = None) -> None:
    """Unpack a snapshot into dest (a new or empty folder); nothing is ever written outside it.

    `sha256`, the hash recorded with the session: bytes that do not match it (a swapped blob,
    a replaced report-folder tar) are refused before anything is read. The tar is untrusted
    (an agent wrote that tree), so everything is bounded first (extended headers, entries,
    bytes, depth, name lengths) and every entry is checked before anything is written.
    Refused with a clear error: `..`, absolute paths, hard links, devices, FIFOs, sparse
    files, links pointing out of the tree (also when an escape only appears once later
    entries exist), and any entry that would be written through a link (a snapshot never
    holds one). What is written is tracked in memory, so each entry costs its own syscalls
    only and no link on the way can redirect a write. `pool`: the run's empty files and
    folders made ahead (benchtape.sandbox.inodes), taken instead of creating entries.
    """
    if sha256 is not None and hashlib.sha256(data).hexdigest() != sha256:
        raise BadInput(
            f"the snapshot's bytes do not match the sha256 recorded for it ({sha256[:12]}…); refusing to restore a swapped or corrupted snapshot",
            fix="the store or report folder was altered; re-run the session",
        )
    if len(data) > MAX_TAR_BYTES:
        raise BadInput(f"the snapshot is {len(data):,} bytes, more than a snapshot can be ({MAX_TAR_BYTES:,}); refusing to restore it", fix=_HOSTILE)
    if pool is None or not pool.dir(str(dest)):
        dest.mkdir(parents=True, exist_ok=True)
    if any(dest.iterdir()):
        raise ValueError(f"restore needs a new or empty folder, and {dest} is not empty")
    dest = dest.resolve()
    own = _own_entries(data)
    if own is not None:
        _Writer(memoryview(data), dest, pool).write(_members(own, dest))
        return
    try:
        with tarfile.open(fileobj=io.BytesIO(data), mode="r:", tarinfo=_BoundedInfo) as tar:
            members = _members(tar, dest)
            _Writer(memoryview(data), dest, pool).write(members)
    except tarfile.TarError as exc:
        raise BadInput(f"the snapshot is not a readable uncompressed tar ({exc}); refusing to restore it", fix=_HOSTILE) from None


_HOSTILE = "the snapshot is corrupt or hostile; re-run the session"


class _BoundedInfo(tarfile.TarInfo):
    """tarfile reads a pax or GNU long-name header whole, and a chain of them recursively:
    bound both before tarfile does either (a 1 GiB pax header took 3 GB and 35 s)."""

    def _proc_member(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        try:
            return self._bounded(tarfile_)
        except (ValueError, OverflowError, UnicodeError) as exc:  # tarfile applies pax values with int(), decode(), ...
            raise BadInput(f"the snapshot has a malformed tar header ({exc}); refusing to restore it", fix=_HOSTILE) from None

    def _tarfiles_own(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        member: tarfile.TarInfo = super()._proc_member(tarfile_)  # type: ignore[misc]  # typeshed leaves out TarInfo's private _proc_member
        return member

    def _bounded(self, tarfile_: tarfile.TarFile) -> tarfile.TarInfo:
        if self.type == tarfile.GNUTYPE_SPARSE:
            raise BadInput(f"snapshot entry {shorten(self.name)!r} is a sparse file; refusing to restore it", fix=_HOSTILE)
        if self.type not in _EXTENDED:
            return self._tarfiles_own(tarfile_)
        if self.size > MAX_HEADER_BYTES:
            raise BadInput(f"the snapshot has an extended tar header of {self.size:,} bytes (at most {MAX_HEADER_BYTES:,}); refusing to restore it", fix=_HOSTILE)
        chain = getattr(tarfile_, "_benchtape_chain", 0) + 1
        if chain > MAX_HEADER_CHAIN:
            raise BadInput(f"the snapshot has more than {MAX_HEADER_CHAIN} extended tar headers in a row; refusing to restore it", fix=_HOSTILE)
        tarfile_._benchtape_chain = chain  # type: ignore[attr-defined]
        try:
            return self._tarfiles_own(tarfile_)
        finally:
            tarfile_._benchtape_chain = chain - 1  # type: ignore[attr-defined]


_EXTENDED = (tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE, tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK)


def _members(entries: Iterable[tarfile.TarInfo], dest: Path) -> list[tarfile.TarInfo]:
    """Every entry (read by tarfile, or by `_own_entries`), each checked, with the bounds on
    their number and total size."""
    members: list[tarfile.TarInfo] = []
    total = 0
    room = PATH_MAX - len(os.fsencode(str(dest))) - 2
    for m in entries:
        members.append(m)
        if len(members) > MAX_MEMBERS:
            raise BadInput(f"snapshot holds more than {MAX_MEMBERS:,} entries; refusing to restore it", fix="a workspace this large cannot be graded from its snapshot; keep generated files (node_modules, build output) out of the workspace")
        _check_member(m, dest, room)
        total += m.size if m.isreg() else 0
        if total > MAX_SNAPSHOT_BYTES:
            raise BadInput(f"snapshot holds more than {MAX_SNAPSHOT_BYTES} bytes; refusing to restore it", fix=_HOSTILE)
    return members


def _check_member(m: tarfile.TarInfo, dest: Path, room: int) -> None:
    name = m.name
    shown = shorten(name)
    if "\0" in name or "\0" in m.linkname:
        raise BadInput(f"snapshot entry {shown!r} has a NUL character in its name or link; refusing to restore it", fix=_HOSTILE)
    if os.path.isabs(name) or name.startswith(("/", "\\")):
        raise BadInput(f"snapshot entry {shown!r} is an absolute path; refusing to restore it", fix=_HOSTILE)
    parts = PurePosixPath(name).parts
    if ".." in parts:
        raise BadInput(f"snapshot entry {shown!r} climbs out of the tree with '..'; refusing to restore it", fix=_HOSTILE)
    if len(parts) > MAX_DEPTH:
        raise BadInput(f"snapshot entry {shown!r} is {len(parts):,} folders deep (at most {MAX_DEPTH}); refusing to restore it", fix=_HOSTILE)
    if len(os.fsencode(name)) > room or any(len(os.fsencode(p)) > NAME_MAX for p in parts):
        raise BadInput(f"snapshot entry {shown!r} has a name too long to restore ({len(name):,} characters); refusing to restore it", fix=_HOSTILE)
    if m.islnk():
        raise BadInput(f"snapshot entry {shown!r} is a hard link (to {shorten(m.linkname)!r}); refusing to restore it", fix=_HOSTILE)
    if m.ischr() or m.isblk():
        raise BadInput(f"snapshot entry {shown!r} is a device file; refusing to restore it", fix=_HOSTILE)
    if m.isfifo():
        raise BadInput(f"snapshot entry {shown!r} is a FIFO; refusing to restore it", fix=_HOSTILE)
    if getattr(m, "sparse", None):
        raise BadInput(f"snapshot entry {shown!r} is a sparse file; refusing to restore it", fix=_HOSTILE)
    if not (m.isreg() or m.isdir() or m.issym()):
        raise BadInput(f"snapshot entry {shown!r} is not a file, folder or symlink; refusing to restore it", fix=_HOSTILE)
    if m.isreg() and not parts:
        raise BadInput(f"snapshot entry {shown!r} is a file with no name; refusing to restore it", fix=_HOSTILE)
    if m.issym():
        link = m.linkname
        if not link:
            raise BadInput(f"snapshot entry {shown!r} is a link to nothing (an empty target); refusing to restore it", fix=_HOSTILE)
        resolved = Path(os.path.normpath(os.path.join(dest, os.path.dirname(name), link)))
        if os.path.isabs(link) or not _inside(resolved, dest) or len(os.fsencode(link)) > PATH_MAX:
            raise BadInput(f"snapshot entry {shown!r} is a link pointing out of the tree ({shorten(link)}); refusing to restore it", fix=_HOSTILE)


# ---------------------------------------------------------------- reading benchtape's own tars

_OWN_TYPES = (tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.XHDTYPE)
_OWN_PAX = (b"path", b"linkpath", b"size", b"mtime")  # what `_header` (tarfile's PAX writer) puts in a pax header for our entries
_ZERO_BLOCK = bytes(tarfile.BLOCKSIZE)
_NUMBERS = ((100, 108), (108, 116), (116, 124), (124, 136), (136, 148), (329, 337), (337, 345))  # mode, uid, gid, size, mtime, devmajor, devminor


def _own_entries(data: bytes) -> list[tarfile.TarInfo] | None:
    """The entries of a tar as benchtape's snapshots write it (`_header`: ustar headers, a pax
    header before an entry whose name, link or size does not fit them), read without tarfile,
    whose header-by-header reading was a third of restoring a small workspace for grading
    (~0.35 of ~1 ms). Each entry is a TarInfo with what restore uses (name, type, mode, size,
    link, where its data is) set as tarfile sets it, checked by the same `_members`.

    None for anything it does not read exactly as tarfile would: another writer's fields,
    GNU, global or chained headers, a hard link, a device, a bad checksum, a header or data
    cut short. `restore` then reads the tar with tarfile, so an odd or hostile tar keeps the
    members and the errors it has always had. At most MAX_MEMBERS + 1 entries are read
    (`_members` refuses more)."""
    members: list[tarfile.TarInfo] = []
    at = 0
    while len(members) <= MAX_MEMBERS:
        if data[at : at + tarfile.BLOCKSIZE] == _ZERO_BLOCK:
            return members  # tarfile ends at the first zero block too
        entry = _own_entry(data, at)
        if entry is None:
            return None
        member, at = entry
        members.append(member)
    return members


def _own_entry(data: bytes, at: int) -> tuple[tarfile.TarInfo, int] | None:
    """The entry whose header (or pax header) is at `at`, and where the next header starts."""
    info = _own_header(data, at)
    if info is None:
        return None
    pax: dict[bytes, str] = {}
    if info.type == tarfile.XHDTYPE:
        if info.size > MAX_HEADER_BYTES:
            return None
        records = _pax_records(data[at + tarfile.BLOCKSIZE : at + tarfile.BLOCKSIZE + _padded(info.size)], info.size)
        entry = _own_header(data, at + tarfile.BLOCKSIZE + _padded(info.size))
        if records is None or entry is None or entry.type == tarfile.XHDTYPE:
            return None
        pax, entry.offset, info = records, at, entry
    if info.size and not info.isreg():
        return None  # tarfile would read the next header where this one's data is
    if b"path" in pax:
        info.name = pax[b"path"].rstrip("/")
    if b"linkpath" in pax:
        info.linkname = pax[b"linkpath"]
    if b"size" in pax:
        info.size = int(pax[b"size"])
    following = info.offset_data + (_padded(info.size) if info.isreg() else 0)
    return info, following


def _own_header(data: bytes, at: int) -> tarfile.TarInfo | None:
    """One ustar header as `_header` writes it (None for any other): every number field octal
    digits (tarfile ends the tar, or refuses it, at one that is not), the checksum tarfile
    checks, no name prefix, one of our entry types."""
    block = data[at : at + tarfile.BLOCKSIZE]
    if len(block) < tarfile.BLOCKSIZE or block[257:265] != tarfile.POSIX_MAGIC or block[345] or block[156:157] not in _OWN_TYPES:
        return None
    numbers = [n for start, end in _NUMBERS if (n := _octal(block[start:end])) is not None]
    if len(numbers) < len(_NUMBERS) or _octal(block[148:156]) != 256 + sum(block[:148]) + sum(block[156:]):
        return None
    info = tarfile.TarInfo(_text(block[0:100]))
    info.type = block[156:157]
    info.mode, info.size = numbers[0], numbers[3]
    info.linkname = _text(block[157:257])
    info.offset, info.offset_data = at, at + tarfile.BLOCKSIZE
    if info.isdir():
        info.name = info.name.rstrip("/")
    return info if info.offset_data + (_padded(info.size) if info.type != tarfile.XHDTYPE else 0) <= len(data) else None


def _pax_records(buf: bytes, size: int) -> dict[bytes, str] | None:
    """A pax header's records (`LEN KEY=VALUE\n`, LEN counting the whole record), the keys
    `_header` writes only, filling the header exactly and followed by zeros; values in strict
    UTF-8 (tarfile falls back to another encoding, and honours `hdrcharset`: not ours)."""
    if len(buf) < size or buf.count(0, size) != len(buf) - size or b"hdrcharset=" in buf:
        return None
    records: dict[bytes, str] = {}
    pos = 0
    while pos < size:
        space = buf.find(b" ", pos, pos + 20)
        length = int(buf[pos:space]) if space > pos and buf[pos:space].isdigit() else 0
        end = pos + length
        if not length or end > size or buf[end - 1] != 0x0A:
            return None
        key, eq, value = buf[space + 1 : end - 1].partition(b"=")
        if not eq or key not in _OWN_PAX or (key in (b"size", b"mtime") and not value.isdigit()):
            return None
        try:
            records[key] = value.decode("utf-8")
        except UnicodeDecodeError:
            return None
        pos = end
    return records


def _octal(field: bytes) -> int | None:
    """A number field as tarfile's `nti` reads it (up to its first NUL), when that is octal digits only."""
    digits = field.partition(b"\0")[0]
    return None if digits.strip(b"01234567") else int(digits or b"0", 8)


def _text(field: bytes) -> str:
    """A name field as tarfile's `nts` reads it: up to its first NUL, in tarfile's encoding."""
    return field.partition(b"\0")[0].decode(tarfile.ENCODING, "surrogateescape")


def _padded(size: int) -> int:
    return -(-size // tarfile.BLOCKSIZE) * tarfile.BLOCKSIZE


class _Writer:
    """Writes checked entries, knowing what it wrote: `kinds` maps each relative path made so
    far to dir, file or link (dest starts empty), so no entry needs a stat of its path."""

    def __init__(self, data: memoryview, dest: Path, pool: InodePool | None = None):
        self.data, self.dest, self.pool = data, dest, pool
        self.root = str(dest)
        self.kinds: dict[str, str] = {"": "dir"}
        self.links: list[tuple[str, str]] = []  # (entry name, absolute path)
        self.files = self.dirs = 0

    def write(self, members: list[tarfile.TarInfo]) -> None:
        for m in members:
            parts = PurePosixPath(m.name).parts
            if not parts:
                continue  # the root itself
            parent = self.folder(parts[:-1], m.name)
            rel = f"{parent}/{parts[-1]}" if parent else parts[-1]
            if m.isdir():
                self.folder(parts, m.name)
                continue
            self.clear(rel, m.name)
            target = os.path.join(self.root, rel)
            if m.issym():
                # judged where it lands, links resolved: `s -> .` makes `s/l -> ..` point at the parent
                if not _inside(Path(os.path.realpath(os.path.join(os.path.dirname(target), m.linkname))), self.dest):
                    raise BadInput(f"snapshot entry {shorten(m.name)!r} is a link that points out of the tree where it lands ({shorten(m.linkname)}); refusing to restore it", fix=_HOSTILE)
                os.symlink(m.linkname, target)
                self.kinds[rel] = "link"
                self.links.append((m.name, target))
            else:
                _write_file(self.data, m, target, self.pool)
                self.kinds[rel] = "file"
                self.files += 1
        self.judge_links()
        if self.pool is not None:
            self.pool.refill_later(self.files, self.dirs + 2)  # as many for the next restore (+ its grading folder and work/)

    def folder(self, parts: tuple[str, ...], name: str) -> str:
        """The folder `parts` (relative), made where missing; a file or link on the way is refused."""
        rel = ""
        for part in parts:
            rel = f"{rel}/{part}" if rel else part
            kind = self.kinds.get(rel)
            if kind == "dir":
                continue
            if kind == "link":
                raise BadInput(f"snapshot entry {shorten(name)!r} would be written through the link {shorten(rel)!r} (a snapshot never holds entries under a link); refusing to restore it", fix=_HOSTILE)
            if kind == "file":
                raise BadInput(f"snapshot entry {shorten(name)!r} needs {part!r} to be a folder, and it is a file; refusing to restore it", fix=_HOSTILE)
            made = os.path.join(self.root, rel)
            if self.pool is None or not self.pool.dir(made):
                os.mkdir(made)
            self.kinds[rel] = "dir"
            self.dirs += 1
        return rel

    def clear(self, rel: str, name: str) -> None:
        """A later entry replaces an earlier file or link of the same name (never writing through the link)."""
        kind = self.kinds.get(rel)
        if kind == "dir":
            raise BadInput(f"snapshot entry {shorten(name)!r} would replace a folder; refusing to restore it", fix=_HOSTILE)
        if kind is not None:
            os.unlink(os.path.join(self.root, rel))
            del self.kinds[rel]

    def judge_links(self) -> None:
        """`l -> x/..` is inside until a later `x -> .` makes it `..`: judge links on the finished tree,
        and remove every link that escapes before refusing, so none is left behind."""
        escaped = [(name, link) for name, link in self.links if os.path.islink(link) and not _inside(Path(os.path.realpath(link)), self.dest)]
        for _, link in escaped:
            os.unlink(link)
        if escaped:
            name, link = escaped[0]
            raise BadInput(f"snapshot entry {shorten(name)!r} is a link that points out of the tree once restored; refusing to restore it", fix=_HOSTILE)


def _write_file(data: memoryview, m: tarfile.TarInfo, target: str, pool: InodePool | None) -> None:
    """One regular entry's bytes, written straight from the tar in memory (a member of an
    uncompressed tar is `size` bytes at `offset_data`; sparse members were refused)."""
    end = m.offset_data + m.size
    if end > len(data):
        raise BadInput(f"snapshot entry {shorten(m.name)!r} runs past the end of the tar; refusing to restore it", fix=_HOSTILE)
    fd = pool.file(target) if pool is not None else None  # an empty file made ahead (benchtape.sandbox.inodes), or a new one
    if fd is None:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, (stat.S_IMODE(m.mode) & 0o777) | stat.S_IRUSR | stat.S_IWUSR)  # never setuid, always ours to write
        at = m.offset_data
        while at < end:
            at += os.write(fd, data[at:end])
    finally:
        os.close(fd)


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents
