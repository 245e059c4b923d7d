"""The host's environment as a project's build gets it: without its secrets.

A build runs on this host: uv runs the mined repository's own code (its setup.py, an in-tree
backend, the extension rebuild), npm and yarn read its configuration. That repository is
someone else's, so what it is handed is the host's environment less what could leak: a
variable whose name says secret (`*_API_KEY`, `*_TOKEN`, …) or whose value is shaped like a
credential is left out, as grading commands leave them out. The installers' own settings
(`UV_*`, `PIP_*`, `npm_config_*`: a private index's credentials) stay.
"""

from __future__ import annotations

import os

from benchtape.core.redact import has_shape, secret_name

INSTALLER_SETTINGS = ("UV_", "PIP_", "npm_config_", "NPM_CONFIG_")


def build_host_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k.startswith(INSTALLER_SETTINGS) or not (secret_name(k) or has_shape(v))}
