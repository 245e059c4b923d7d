"""A stand-in for npm on PATH (the real one needs the registry): `npm view PACKAGE version`
answers a fixed `latest`, and `npm install --prefix DIR PACKAGE@VERSION` writes what npm
would, node_modules/.bin/<bin>, a program that reports VERSION."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from benchtape.tools import binaries

FAKE_NPM = '''#!/usr/bin/env python3
import os, sys
args = sys.argv[1:]
if args[0] == "view":  # npm view PACKAGE version: what the registry's `latest` tag names
    if os.environ.get("NPM_FAILS"):
        print("npm error code ENOTFOUND: request to https://registry.npmjs.org failed", file=sys.stderr)
        sys.exit(1)
    with open(os.environ["NPM_LOG"], "a") as log:
        log.write(" ".join(args) + "\\n")
    package, _, version = args[1].rpartition("@")
    if package:  # npm view PACKAGE@VERSION version: the version when published (9.9.9 never is)
        if version == "9.9.9":
            print("npm error code E404\\nnpm error 404 No match found for version 9.9.9", file=sys.stderr)
            sys.exit(1)
        print(version)
        sys.exit(0)
    print("2.1.999" if "claude" in args[1] else "0.999.0")
    sys.exit(0)
prefix = args[args.index("--prefix") + 1]
package, _, version = args[-1].rpartition("@")
if os.environ.get("NPM_FAILS"):
    print("npm error 404 Not Found - GET https://registry.npmjs.org/" + package, file=sys.stderr)
    sys.exit(1)
bin_name = "claude" if "claude" in package else "codex"
bindir = os.path.join(prefix, "node_modules", ".bin")
os.makedirs(bindir)
path = os.path.join(bindir, bin_name)
with open(path, "w") as f:
    f.write("#!/bin/sh\\necho '" + version + " (Claude Code)'\\n")
os.chmod(path, 0o755)
'''


def fake_npm(tmp_path: Path, monkeypatch: Any) -> Path:
    """Put the stand-in first on PATH (its `view` calls logged to tmp_path/npm.log); forget any `latest` asked before."""
    monkeypatch.setattr(binaries, "_LATEST", {})
    monkeypatch.setenv("NPM_LOG", str(tmp_path / "npm.log"))
    bindir = tmp_path / "bin"
    bindir.mkdir(exist_ok=True)
    (bindir / "npm").write_text(FAKE_NPM)
    (bindir / "npm").chmod(0o755)
    monkeypatch.setenv("PATH", f"{bindir}{os.pathsep}{os.environ['PATH']}")
    return bindir
