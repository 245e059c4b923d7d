"""A scenario's `image:` pictures: what a file must be to be sent, and how it is described.

madbench sends each picture in the first user message, its media type sniffed from the bytes
(png, jpeg, gif, webp), never seeded into the workspace. The bench loader checks each file
once (`check_image`), so a run never starts with a picture the model would refuse; the
adapters encode the same bytes for their harness (base64 content blocks, `codex -i FILE`) and
the session records what was sent (`attachment`), which `session:image-sent` counts.
"""

from __future__ import annotations

import base64
import hashlib
from pathlib import Path
from typing import Any

# The Messages API's limit for one base64 image (5 MB); the Responses API takes more, but a
# bench must run the same under every harness that can take it.
MAX_IMAGE_BYTES = 5 * 1024 * 1024
MEDIA_TYPES = ("image/png", "image/jpeg", "image/gif", "image/webp")
GENERATED = "generated:"


def sniff(head: bytes) -> str | None:
    """The media type the file's first bytes declare (png/jpeg/gif/webp), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if len(head) >= 12 and head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def check_image(path: Path) -> str | None:
    """Why `path` cannot be sent as an image (missing, a folder, too large, not png/jpeg/gif/webp), or None."""
    if not path.exists():
        return f"{path} does not exist (resolved against the bench file's folder)"
    if not path.is_file():
        return f"{path} is not a file"
    size = path.stat().st_size
    if size > MAX_IMAGE_BYTES:
        return f"{path} is {size} bytes, over the {MAX_IMAGE_BYTES} bytes (5 MB) a model accepts for one image"
    with path.open("rb") as f:
        head = f.read(16)
    if sniff(head) is None:
        return f"{path} is not a PNG, JPEG, GIF or WebP picture (its first bytes say none of them)"  # never echoed: the file may be anything of this host's
    return None


def attachment(path: Path, data: bytes | None = None) -> dict[str, Any]:
    """What the session records of one image it sent: media type, file name, size, digest (never the bytes)."""
    data = path.read_bytes() if data is None else data
    return {"media_type": sniff(data[:16]) or "application/octet-stream", "name": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest()}


def attachments(paths: tuple[Path, ...]) -> tuple[dict[str, Any], ...]:
    """What a command records of the pictures it sends (adapters' `Command.attachments`)."""
    return tuple(attachment(p) for p in paths)


def base64_block(path: Path) -> dict[str, Any]:
    """The Messages API content block carrying the picture (`{"type": "image", "source": base64}`)."""
    data = path.read_bytes()
    return {"type": "image", "source": {"type": "base64", "media_type": sniff(data[:16]), "data": base64.b64encode(data).decode("ascii")}}
