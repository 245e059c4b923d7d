"""Test dependencies without a network and without pip: a folder of wheels, unpacked.

A project with no `Dockerfile.benchtape` verifies in benchtape's base image (a Python and its
standard library, nothing else), or at level home on this host. Its test dependencies come
from `.benchtape/wheelhouse/*.whl` (fill it once, where there is a network: `pip download
-d .benchtape/wheelhouse pytest`). A pure-Python wheel is a zip of what site-packages
would hold, so unpacking it into one folder and putting that folder on PYTHONPATH is an
install; each wheel's console scripts (`pytest`) become small launchers in its `bin/`.
The unpacked folder is cached by the wheels' content, so it is made once per wheelhouse.
"""

from __future__ import annotations

import configparser
import hashlib
import os
import shutil
import tempfile
import zipfile
from pathlib import Path

SITE_AT = "/opt/benchtape-site"  # where a container sees the unpacked folder (read-only)


class WheelhouseError(Exception):
    """A wheel could not be unpacked; the message names it."""


def wheelhouse_key(wheelhouse: Path) -> str:
    h = hashlib.sha256()
    for wheel in sorted(wheelhouse.glob("*.whl")):
        h.update(wheel.name.encode() + b"\0" + hashlib.sha256(wheel.read_bytes()).digest())
    return h.hexdigest()[:16]


def site_for(wheelhouse: Path, cache: Path | None = None, python: str = "python3") -> Path:
    """The unpacked folder of `wheelhouse` (made on first use): modules at its top, launchers in bin/.

    `python`: the interpreter the launchers start (as it is named where they run)."""
    cache = cache or Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "benchtape" / "site"
    key = hashlib.sha256(f"{wheelhouse_key(wheelhouse)}\0{python}".encode()).hexdigest()[:16]
    dest = cache / key
    if (dest / ".complete").is_file():
        return dest
    cache.mkdir(parents=True, exist_ok=True)
    scratch = Path(tempfile.mkdtemp(prefix=f".{key}-", dir=cache))
    try:
        for wheel in sorted(wheelhouse.glob("*.whl")):
            _unpack(wheel, scratch, python)
        (scratch / ".complete").write_text("ok\n")
        try:
            os.replace(scratch, dest)
        except OSError:  # another process made it meanwhile
            shutil.rmtree(scratch, ignore_errors=True)
    except BaseException:
        shutil.rmtree(scratch, ignore_errors=True)
        raise
    return dest


def _unpack(wheel: Path, dest: Path, python: str) -> None:
    try:
        with zipfile.ZipFile(wheel) as z:
            for info in z.infolist():
                name = info.filename
                if name.startswith("/") or ".." in Path(name).parts:
                    raise WheelhouseError(f"{wheel.name}: member {name!r} points outside the wheel")
                parts = Path(name).parts
                if len(parts) > 2 and parts[0].endswith(".data") and parts[1] in ("purelib", "platlib"):
                    target = dest.joinpath(*parts[2:])
                elif parts and parts[0].endswith(".data"):
                    continue  # scripts, headers, data: not needed to import and run tests
                else:
                    target = dest / name
                if info.is_dir():
                    target.mkdir(parents=True, exist_ok=True)
                    continue
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
            for name in z.namelist():
                if name.endswith(".dist-info/entry_points.txt"):
                    _launchers(z.read(name).decode("utf-8", "replace"), dest / "bin", python)
    except zipfile.BadZipFile:
        raise WheelhouseError(f"{wheel}: not a wheel (a zip file)") from None


def _launchers(entry_points: str, bin_dir: Path, python: str) -> None:
    parser = configparser.ConfigParser(delimiters=("=",), interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]
    parser.read_string(entry_points)
    if not parser.has_section("console_scripts"):
        return
    bin_dir.mkdir(parents=True, exist_ok=True)
    for script, target in parser.items("console_scripts"):
        module, _, func = target.partition(":")
        func = func.split("[")[0].strip()
        code = f"import sys; from {module.strip()} import {func.split('.')[0]} as _m; sys.argv[0] = {script!r}; sys.exit(_m{''.join('.' + p for p in func.split('.')[1:])}())"
        path = bin_dir / script
        path.write_text(f'#!/bin/sh\nexec {python} -c "{code}" "$@"\n')
        path.chmod(0o755)
