"""Switches read from the environment under both names a user may set: benchtape's own
(`BENCHTAPE_ALLOW_HOST_WRITES=1`) and madbench's (`MADBENCH_ALLOW_HOST_WRITES=1`), so a
shell, CI file or `.env` written for madbench keeps working."""

from __future__ import annotations

import os
from typing import Mapping

PREFIXES = ("BENCHTAPE_", "MADBENCH_")


def flag(name: str, env: Mapping[str, str] | None = None) -> bool:
    """Whether `BENCHTAPE_<name>=1` or `MADBENCH_<name>=1` is set."""
    env = os.environ if env is None else env
    return any(env.get(prefix + name) == "1" for prefix in PREFIXES)


def spelled(name: str) -> str:
    """How a message names the switch: both spellings."""
    return " or ".join(f"{prefix}{name}=1" for prefix in PREFIXES)
