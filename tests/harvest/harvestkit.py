"""The real repository history the task tests harvest: toolz, as a git bundle in shared/realrepos.

BENCHTAPE_REALREPOS when set; else `shared/realrepos` beside the repository (or beside the
worktrees' folder). Missing, the tests skip loudly, and fail in CI (CI=true), where shared/ is
laid beside the clone.
"""

from __future__ import annotations

import atexit
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any, Iterator

import pytest

ROOT = Path(__file__).resolve().parents[2]


def find_bundle(name: str = "toolz.bundle") -> Path | None:
    """A shared bundle (toolz's by default): $BENCHTAPE_REALREPOS, else `shared/realrepos` beside
    this checkout, or beside the checkout it was cloned from (a clean clone in /tmp finds it there)."""
    env = os.environ.get("BENCHTAPE_REALREPOS")
    for top in (ROOT, _cloned_from()):
        for place in (Path(env) if env else None, top.parent / "shared" / "realrepos" if top else None, top.parents[1] / "shared" / "realrepos" if top else None):
            if place is not None and (place / name).is_file():
                return place / name
    return None


def _cloned_from() -> Path | None:
    """The local checkout this one was cloned from (its `origin`), when that is a folder."""
    import subprocess

    done = subprocess.run(["git", "-C", str(ROOT), "remote", "get-url", "origin"], capture_output=True, text=True)
    origin = Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None
    return origin.resolve() if origin is not None and origin.is_dir() else None


BUNDLE = find_bundle()


def clone_toolz(dest: Path) -> Path:
    """A working clone of the toolz history (the bundle is never written)."""
    return clone_bundle("toolz.bundle", dest)


def clone_bundle(name: str, dest: Path) -> Path:
    """A working clone of a shared bundle's history (the bundle is never written)."""
    bundle = find_bundle(name)
    if bundle is None:
        message = f"REAL REPOSITORY NOT FOUND: shared/realrepos/{name}; the tests that need it are SKIPPED"
        if os.environ.get("CI") == "true":
            pytest.fail(message + " (CI=true)", pytrace=False)
        pytest.skip(message)
    subprocess.run(["git", "clone", "-q", str(bundle), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "config", "user.email", "t@example.invalid"], check=True)
    subprocess.run(["git", "-C", str(dest), "config", "user.name", "t"], check=True)
    return dest


FIVE = ("603", "551", "534", "434", "398")  # five of the shared README's hand-checked PRs
_VALIDATED: dict[tuple[str, ...], Path] = {}


def validated_toolz(dest: Path, tasks: tuple[str, ...] = FIVE) -> Path:
    """A clone of toolz with `tasks` created and validated at level home (`task validate
    --sandbox home`), copied from the one this test run made first. Three modules validated
    the same five tasks afresh (~40 s each, the suite's largest repeated cost) for the same
    result; the copy carries the store and the task folders as validation left them. Under
    xdist the workers share it (a folder per test run, made under a lock by whichever worker
    asks first): two modules on two workers validated it twice."""
    made = _VALIDATED.get(tasks)
    if made is None:
        made = _VALIDATED[tasks] = _shared_validation(tasks)
    with _locked(made):
        if not (made / ".validated").is_file():  # removed by a worker that ended first: made again
            _validate_into(made, tasks)
        shutil.copytree(made / "toolz", dest, symlinks=True)
    return dest


def _shared_validation(tasks: tuple[str, ...]) -> Path:
    """The folder the validated clone lives in: one per xdist test run, else per process."""
    run = os.environ.get("PYTEST_XDIST_TESTRUNUID")
    if run is None:
        top = Path(tempfile.mkdtemp(prefix="benchtape-validated-toolz-"))
    else:
        top = Path(tempfile.gettempdir()) / f"benchtape-validated-toolz-{run}-{'-'.join(tasks)}"
        top.mkdir(exist_ok=True)
    atexit.register(_remove, top)
    return top


def _validate_into(top: Path, tasks: tuple[str, ...]) -> None:
    from e2e.cli import benchtape

    shutil.rmtree(top / "toolz", ignore_errors=True)  # what a failed attempt left
    made = clone_toolz(top / "toolz")
    done = benchtape("task", "create", *tasks, cwd=made)
    assert done.returncode == 0, done.stderr
    done = benchtape("task", "validate", *tasks, "--sandbox", "home", "--json", cwd=made, env=cli_env(), timeout=900)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    (top / ".validated").write_text(done.stdout)  # the report, for a module that checks the validation itself


def validation_report(tasks: tuple[str, ...] = FIVE) -> dict[str, Any]:
    """The `task validate --json` report of the validation `validated_toolz(…, tasks)` copied
    (call that first)."""
    made = _VALIDATED[tasks]
    with _locked(made):
        report: dict[str, Any] = json.loads((made / ".validated").read_text())
    return report


@contextlib.contextmanager
def _locked(top: Path) -> Iterator[None]:
    """Held while the clone is made or copied (a lock file beside the folder: flock, released
    when the descriptor closes)."""
    with open(f"{top}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def _remove(top: Path) -> None:
    with _locked(top):
        shutil.rmtree(top, ignore_errors=True)
        Path(f"{top}.lock").unlink(missing_ok=True)  # a worker still waiting on it finds no .validated and makes it again


def cli_env() -> dict[str, str]:
    """The environment a user's shell would give: this interpreter's folder first on PATH, so a
    task's `python3 -m pytest` finds pytest where the test suite runs."""
    return {"PATH": f"{Path(sys.executable).parent}:{os.environ.get('PATH', '')}"}


# Merged PRs the shared README checked by hand: (base+tests, +reference) counts with pytest.
VALID = {"603": (1, 49, 50), "551": (1, 49, 50), "534": (1, 9, 10), "434": (1, 0, 1), "398": (1, 37, 38), "425": (2, 43, 45)}
