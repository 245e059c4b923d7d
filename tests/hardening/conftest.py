"""The hardening reproductions: kill -9, runaway output, secrets, the container boundary. The
container ones use the sandbox tests' engine fixtures (skipped loudly without an engine)."""

from container.conftest import base_image, docker_client  # noqa: F401 - fixtures, shared
