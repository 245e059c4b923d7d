"""A bundle: what one attempt recorded away from the run's store (a worker's node-local shard),
as it crosses the wire and waits in the spool folder before it is folded into the store.

It holds the attempt's rows as the shard stored them, nothing decoded or re-encoded: session
rows, actions (their JSON text, redacted on the worker), raw chunks (zstd, as written), and the
blobs its actions name (compressed as stored), less the ones the run's store holds already
(content-addressed: sent once). `blob_names` lists every blob the actions name, shipped or not,
so a fold can refuse a bundle whose blobs are neither in it nor in the store.

`key` is the attempt's place in the run (scenario, cell id, attempt): the fold adds a bundle
only when the run holds no bundle of that place yet, so a retried or duplicated attempt adds
nothing (Writer.fold_bundle). Export is Reader.export_bundle.

The byte form (`to_bytes`, `from_bytes`): a magic line, an 8-byte header length, the header
(JSON: every row with its byte fields as lengths), then the byte fields in row order. No
pickle: `benchtape recover` reads spooled bundles from disk.
"""

from __future__ import annotations

import re
import struct
from dataclasses import dataclass, field
from typing import Any

import orjson

from benchtape.core.errors import BadInput

MAGIC = b"benchtape-bundle 1\n"
FOLDED_SOURCE = "worker:"  # a folded session's `source`: worker:<the attempt's token>
SHA_IN_JSON = re.compile(rb'"([0-9a-f]{64})"')  # a blob named anywhere in an action's JSON
SESSION_FIELDS = ("id", "scenario", "cell_id", "attempt", "harness", "model", "params", "workdir", "started_at", "parent_session")

ActionRow = tuple[str, int, float, str, str, bytes]  # session_id, seq, at, thread, kind, data (JSON text)
RawRow = tuple[str, int, int, int, bytes]  # session_id, line_no, lines, fresh, data (zstd)
BlobRow = tuple[str, int, "str | None", bytes]  # sha256, size, codec, data as stored


@dataclass
class Bundle:
    run_id: str  # the run it is folded into
    key: dict[str, Any]  # {scenario, cell_id, attempt}: its place in the run
    token: str  # the attempt that recorded it
    sessions: list[dict[str, Any]] = field(default_factory=list)  # SESSION_FIELDS (params as JSON text)
    actions: list[ActionRow] = field(default_factory=list)
    raw: list[RawRow] = field(default_factory=list)
    blobs: list[BlobRow] = field(default_factory=list)  # shipped
    blob_names: list[str] = field(default_factory=list)  # every blob the actions name
    facts: dict[str, Any] = field(default_factory=dict)  # where and when it was recorded (informational)

    @property
    def session_ids(self) -> list[str]:
        return [s["id"] for s in self.sessions]

    def to_bytes(self) -> bytes:
        payloads: list[bytes] = []

        def out(data: bytes) -> int:
            payloads.append(data)
            return len(data)

        header = {
            "run_id": self.run_id,
            "key": self.key,
            "token": self.token,
            "sessions": self.sessions,
            "actions": [[sid, seq, at, thread, kind, out(data)] for sid, seq, at, thread, kind, data in self.actions],
            "raw": [[sid, n, lines, fresh, out(data)] for sid, n, lines, fresh, data in self.raw],
            "blobs": [[sha, size, codec, out(data)] for sha, size, codec, data in self.blobs],
            "blob_names": self.blob_names,
            "facts": self.facts,
        }
        head = orjson.dumps(header, default=str)
        return b"".join([MAGIC, struct.pack(">Q", len(head)), head, *payloads])

    @classmethod
    def from_bytes(cls, data: bytes, where: str = "a bundle") -> Bundle:
        """The bundle these bytes hold; anything else (cut short, another format) is a BadInput naming `where`."""
        view = memoryview(data)
        try:
            if bytes(view[: len(MAGIC)]) != MAGIC:
                raise ValueError("it does not start as a benchtape bundle")
            start = len(MAGIC) + 8
            (size,) = struct.unpack(">Q", view[len(MAGIC) : start])
            header = orjson.loads(view[start : start + size])
            at = start + size

            def take(n: int) -> bytes:
                nonlocal at
                if at + n > len(view):
                    raise ValueError("it is cut short")
                chunk = bytes(view[at : at + n])
                at += n
                return chunk

            bundle = cls(
                run_id=header["run_id"],
                key=header["key"],
                token=header["token"],
                sessions=header["sessions"],
                actions=[(sid, seq, at_, thread, kind, take(n)) for sid, seq, at_, thread, kind, n in header["actions"]],
                raw=[(sid, line_no, lines, fresh, take(n)) for sid, line_no, lines, fresh, n in header["raw"]],
                blobs=[(sha, bsize, codec, take(n)) for sha, bsize, codec, n in header["blobs"]],
                blob_names=header["blob_names"],
                facts=header.get("facts") or {},
            )
            if at != len(view):
                raise ValueError("it has bytes after its last row")
            return bundle
        except (ValueError, KeyError, TypeError, struct.error, orjson.JSONDecodeError) as exc:
            raise BadInput(f"{where} is not a readable bundle: {exc}", file=where, fix="it was cut short or is not a bundle: move it out of the spool folder") from None


def named_blobs(action_json: list[bytes]) -> list[str]:
    """Every sha256 an action's JSON names (a snapshot's, a transcript's, a cell's baseline), in
    order, once each: the candidates a bundle ships (the reader keeps the ones its store holds)."""
    return list(dict.fromkeys(m.decode() for data in action_json for m in SHA_IN_JSON.findall(data)))
