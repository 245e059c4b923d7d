"""How the store encodes what it keeps: JSON (orjson) for actions and every JSON column, raw
harness lines as zstd chunks of one frame per session stream, blobs as one zstd frame each.

Pure functions and value types: nothing here opens a connection or composes SQL, so the
writer, the reader and the migrations share one encoding of each thing.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Sequence

import orjson

from benchtape.core.errors import BadInput

if TYPE_CHECKING:  # the domain model loads with the first encode, not with every store open (`sessions` starts faster)
    from benchtape.core.model import Action


def dumps(value: Any) -> str:
    return orjson.dumps(value, default=str).decode()


def loads(text: str | bytes | None) -> Any:
    return None if text is None else orjson.loads(text)


# A verdict as an element of its set's JSON array (verdict_sets.verdicts), by position.
VERDICT_FIELDS = ("check_path", "type", "metric", "spec_id", "spec_sha256", "status", "pass", "score", "reason", "evidence", "readout")


# ---------------------------------------------------------------- raw lines, compressed

# zstd level of raw chunks and blobs. Over every real transcript in shared/realdata, level 1
# against 3: 672 against 449 MB/s in one piece (a blob), 396 against 317 MB/s in 64 kB chunks
# each flushed (raw lines), 5.03x against 5.34x smaller. Compression was ~20% of importing a
# transcript whose text does not repeat (benchmarks/store_import.py); the store of the real
# transcripts grows 0.934x -> 0.941x their size (with the chunks below).
ZSTD_LEVEL = 1
# How much text a batch writer (import, migration) puts in one chunk: each is flushed to a
# block boundary on its own, and 256 kB against 64 kB made a 50 MB import ~4% faster and its
# raw ~1% smaller (1 MB gained nothing more).
RAW_CHUNK_BYTES = 256 * 1024


class RawStream:
    """One session's raw lines as one zstd frame, cut at block flushes into chunks.

    A chunk is stored as soon as it is cut (a live line is durable when its append returns) yet
    compresses against the lines before it; a reader decompresses a session's chunks in order,
    starting a new frame at each chunk marked fresh (a new process, or after a failed write).
    zstd over zlib: per line 5.1× at ~140 MB/s against zlib's 4.8× at ~30 MB/s on the real
    transcripts, which is most of an import's time (measured in benchmarks/store_import.py)."""

    __slots__ = ("compressor", "_z", "_flush", "_fresh")

    def __init__(self, level: int = ZSTD_LEVEL, compressor: Any = None):
        import zstandard  # only the commands that write or read raw lines pay for the import

        # `compressor`: a finished stream's, reused (compressobj() starts a new frame on it)
        self.compressor = compressor if compressor is not None else zstandard.ZstdCompressor(level=level)
        self._z = self.compressor.compressobj()
        self._flush = zstandard.COMPRESSOBJ_FLUSH_BLOCK
        self._fresh = 1

    def rows(self, session_id: str, lines: Iterable[tuple[int, str]], encoded: Sequence[bytes] | None = None) -> list[tuple[str, int, int, int, bytes]]:
        """The rows for these lines (see raw_groups); `encoded`: their UTF-8, if the caller has it."""
        return [self.chunk(session_id, *group) for group in raw_groups(lines, encoded)]

    def chunk(self, session_id: str, first: int, count: int, text: bytes) -> tuple[str, int, int, int, bytes]:
        """The row of one group of lines: its text compressed and flushed to a block boundary."""
        data = self._z.compress(text) + self._z.flush(self._flush)
        fresh, self._fresh = self._fresh, 0
        return (session_id, first, count, fresh, data)


def raw_groups(lines: Iterable[tuple[int, str]], encoded: Sequence[bytes] | None = None) -> list[tuple[int, int, bytes]]:
    """Lines as chunks' texts (first line_no, lines, UTF-8 each ending in a newline):
    consecutive line numbers share a chunk; a line holding a newline gets a chunk of its own,
    so splitting a chunk on newlines is always exact.

    Each line is encoded on its own and the bytes joined (`encoded`: already done by the
    caller): joining the texts first would widen the whole chunk to 4 bytes a character as
    soon as one emoji is in it, and encoding that costs more than encoding the lines (1.5x
    over the real transcripts' 64 kB chunks, 6x over a whole 10 MB file)."""
    out: list[tuple[int, int, bytes]] = []
    group: list[bytes] = []
    first = last = 0
    pairs = list(lines)
    datas = encoded if encoded is not None else [t.encode("utf-8", "surrogatepass") for _, t in pairs]
    for (n, _), text in zip(pairs, datas):
        alone = b"\n" in text
        if group and (n != last + 1 or alone):
            out.append((first, len(group), b"\n".join(group) + b"\n"))
            group = []
        if not group:
            first = n
        group.append(text)
        last = n
        if alone:
            out.append((first, len(group), b"\n".join(group) + b"\n"))
            group = []
    if group:
        out.append((first, len(group), b"\n".join(group) + b"\n"))
    return out


def encode_actions(actions: Sequence[Action]) -> list[bytes]:
    """Each action's data as the JSON stored for it (not yet redacted), once its payload is
    found to match its kind (PayloadError otherwise: the batch is refused, nothing written)."""
    from benchtape.core.payloads import check_payloads

    check_payloads(actions)
    return [orjson.dumps(a.data, default=str) for a in actions]


Head = tuple[str, str, float]  # an action's (kind, thread, at): what its row holds besides its JSON


@dataclass(slots=True)
class Batch:
    """A batch of a session's raw lines and the actions parsed from them, ready to write: the
    lines as chunks' texts (raw_groups), each action's JSON encoded (not yet redacted).

    Bytes and tuples only, made where the lines were parsed: an import of a large transcript
    parses in a child process (benchtape.recorder.parse_worker), which sends batches, not Action objects."""

    groups: list[tuple[int, int, bytes]]
    heads: list[Head]
    encoded: list[bytes]

    @classmethod
    def of(cls, lines: list[tuple[int, str]], actions: Sequence[Action]) -> Batch:
        return cls(raw_groups(lines), [(a.kind, a.thread, a.at) for a in actions], encode_actions(actions))

    def lines(self) -> list[tuple[int, str]]:
        """The batch's lines (line_no, text) again, read back from its groups (a line holding a
        newline has a group of its own, so the split is exact); only a redaction needs them."""
        out: list[tuple[int, str]] = []
        for first, count, text in self.groups:
            out.extend(zip(range(first, first + count), chunk_lines(text, count)))
        return out

    def warnings(self) -> int:
        return sum(kind == "adapter.warning" for kind, _, _ in self.heads)



def inflate_raw(rows: Iterable[tuple[int, int, bytes]]) -> Iterator[str]:
    """The lines of a session's raw chunks (lines, fresh, data), in order."""
    import zstandard

    inflate = None
    for lines, fresh, data in rows:
        if fresh or inflate is None:
            inflate = zstandard.ZstdDecompressor().decompressobj()
        yield from chunk_lines(inflate.decompress(data), lines)


def raw_problem(rows: Iterable[tuple[int, int, int, bytes]]) -> str | None:
    """What is wrong with a session's raw chunks (line_no, lines, fresh, data) as stored, or
    None: each must decompress in its stream and hold exactly its count of lines."""
    import zstandard

    inflate = None
    for line_no, lines, fresh, data in rows:
        if fresh or inflate is None:
            inflate = zstandard.ZstdDecompressor().decompressobj()
        try:
            text = inflate.decompress(data)
        except zstandard.ZstdError as exc:
            return f"the chunk from line {line_no} does not decompress ({exc})"
        if not text.endswith(b"\n") or (lines > 1 and text.count(b"\n") != lines):
            return f"the chunk from line {line_no} does not hold the {lines} line(s) it says"
        try:
            text.decode("utf-8", "surrogatepass")
        except UnicodeDecodeError:
            return f"the chunk from line {line_no} is not UTF-8 text"
    return None


def chunk_lines(text: bytes, count: int) -> list[str]:
    """The `count` lines of a chunk's text (raw_groups): a chunk of one line is that line whole
    (it may hold a newline), a longer one splits on its newlines exactly."""
    body = text.decode("utf-8", "surrogatepass")[:-1]
    return [body] if count == 1 else body.split("\n")


@dataclass(frozen=True)
class Blob:
    """Bytes ready to store (Store.prepare_blob): `data` as the row holds them (compressed by
    `codec`), or None when the store has them already."""

    sha256: str
    data: bytes | None
    codec: str | None
    size: int


def compress_blob(data: bytes, pool: list[Any]) -> tuple[bytes, str | None]:
    """`data` as a blob row holds it: (bytes, codec). `pool`: the store's idle compressors (raw
    streams return theirs there too), each used by one thread at a time (popping and appending
    a list is atomic), so sessions storing snapshots at once neither wait for each other nor
    make a ~1 MB context each time."""
    if len(data) < 512:
        return data, None
    import zstandard

    compressor = pool.pop() if pool else zstandard.ZstdCompressor(level=ZSTD_LEVEL)
    try:
        packed = compressor.compress(data)
    finally:
        pool.append(compressor)
    return (packed, "zstd") if len(packed) < len(data) else (data, None)


def inflate_blob(data: bytes, codec: str, size: int, path: Path, sha: str) -> bytes:
    """A compressed blob's bytes; a codec this version does not know, or a frame that does not
    hold exactly `size` bytes, is a damaged store (a frame is never trusted to size its output)."""
    import zstandard

    if codec == "zstd" and zstandard.frame_content_size(data) == size:
        try:
            out = zstandard.ZstdDecompressor().decompress(data, max_output_size=size)
        except zstandard.ZstdError:
            out = None
        if out is not None and len(out) == size:
            return out
    raise BadInput(
        f"blob {sha[:12]}… is damaged or in a form this version cannot read (codec {codec!r}, {size:,} bytes expected)",
        file=str(path),
        fix="upgrade benchtape if a newer one wrote this store; otherwise restore the store from a copy",
    )

