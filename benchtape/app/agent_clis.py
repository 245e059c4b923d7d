"""The agent CLIs in the project's tools folder and the harnesses this benchtape can run: what
`benchtape tools install|list` and `doctor` ask (tools/binaries.py does the work)."""

from __future__ import annotations

from benchtape.tools.binaries import Binary, harness_listing, pins, resolve, resolve_version

__all__ = ["Binary", "harness_listing", "install", "pins"]


def install(spec: str) -> Binary:
    """`NAME` or `NAME@VERSION` installed into the tools folder (found, not installed again, when it is there)."""
    tool, _, version = spec.partition("@")
    return resolve(tool, resolve_version(tool, version) if version else None, install=True)
