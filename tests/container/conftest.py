"""Fixtures for the container sandbox tests: one engine check and one base-image build per session.

Without a Docker engine these tests are skipped LOUDLY on a developer machine, and fail
in CI (CI=true), where `.ci/docker.sh` is expected to have started one: a silent skip
there would hide that the only real confinement was never exercised.
"""

from __future__ import annotations

import os
import time
import warnings
from typing import Any

import pytest

_SKIPPED: list[str] = []


def _no_engine(reason: str) -> None:
    message = f"NO DOCKER ENGINE: container sandbox tests NOT RUN: {reason}"
    if os.environ.get("CI") == "true":
        pytest.fail(message + " (CI=true, so this is a failure; run .ci/docker.sh first)", pytrace=False)
    if not _SKIPPED:
        _SKIPPED.append(message)
        # Under xdist the summary hook runs in the controller, not here: a warning travels.
        warnings.warn(message, UserWarning, stacklevel=2)
    pytest.skip(message)


@pytest.fixture(scope="session")
def docker_client() -> Any:
    from benchtape.sandbox.container import _probe

    ok, why, client = _probe(timeout=30)
    if not ok:
        _no_engine(why)
    yield client
    client.close()


@pytest.fixture(scope="session")
def base_image(docker_client: Any) -> dict[str, Any]:
    """The base image, built (or reused) once per session, with how long that took."""
    from benchtape.sandbox.baseimage import ensure_base_image

    started = time.monotonic()
    tag = ensure_base_image(docker_client)
    return {"tag": tag, "seconds": time.monotonic() - started}


def pytest_terminal_summary(terminalreporter: Any) -> None:
    for message in _SKIPPED:
        terminalreporter.write_sep("!", message, red=True, bold=True)
