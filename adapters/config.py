"""Type checks for a harness's `harness_config`, with errors that name the key and the fix.

Unknown keys are ignored (madbench's rule: `temperature:` in a claude-code config is
not an error); a known key of the wrong type is, because running with a silently
dropped setting would benchmark something other than what the bench file says.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from benchtape.core.errors import BadInput, type_name


class ConfigReader:
    """Reads typed values out of one harness's config, failing with `<harness> harness_config: ...`."""

    def __init__(self, harness: str, config: Any):
        self.harness = harness
        if config is None:
            config = {}
        if not isinstance(config, dict):
            raise BadInput(f"{harness} harness_config must be a map, got {type_name(config)}")
        self.config = config

    def fail(self, what: str, fix: str | None = None) -> BadInput:
        return BadInput(f"{self.harness} harness_config: {what}", fix=fix)

    def string(self, key: str, *, empty_ok: bool = True) -> str | None:
        """A string value; None when absent or null. `""` is None when `empty_ok` (it omits the flag)."""
        value = self.config.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise self.fail(f"{key} must be a string, got {type_name(value)}")
        if value == "":
            if empty_ok:
                return None
            raise self.fail(f"{key} must not be empty", fix=f"omit `{key}` for the default")
        return value

    def strings(self, key: str) -> list[str]:
        value = self.config.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            got = type_name(value) if not isinstance(value, list) else "a list with " + ", ".join(
                sorted({type_name(v) for v in value if not isinstance(v, str)})
            )
            raise self.fail(f"{key} must be a list of strings, got {got}")
        return list(value)

    def boolean(self, value: Any, key: str) -> bool | None:
        if value is None:
            return None
        if not isinstance(value, bool):
            raise self.fail(f"{key} must be a bool, got {type_name(value)}")
        return value

    def integer(self, value: Any, key: str) -> int | None:
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(f"{key} must be an int, got {type_name(value)}")
        return value

    def level(self, key: str, levels: tuple[str, ...], cli: str) -> str | None:
        """A value the CLI accepts only from a fixed list (checked here so a typo fails before any spend)."""
        value = self.string(key, empty_ok=False)
        if value is not None and value not in levels:
            raise self.fail(
                f'{key} "{value}" is not a level the CLI accepts',
                fix=f"use one of {', '.join(levels)} (or omit `{key}` for the {cli} default)",
            )
        return value


@dataclass(frozen=True)
class CliConfig:
    """The `harness_config` of a CLI harness that takes only its binary, a model and extra args
    (Gemini CLI, Qwen Code, opencode, aider): read one way for all of them."""

    binary: str | None = None  # None: the pinned binary when installed, else the CLI on PATH
    model: str | None = None
    args: tuple[str, ...] = ()


def cli_config(harness: str, harness_config: dict[str, Any] | None) -> CliConfig:
    r = ConfigReader(harness, harness_config)
    return CliConfig(binary=r.string("binary", empty_ok=False), model=r.string("model"), args=tuple(r.strings("args")))


def cli_binary(harness: str, binary: str | None) -> str:
    """The binary a harness runs: the one its config names, else the pinned one (or its name on PATH)."""
    from benchtape.tools.binaries import default_binary

    return binary or default_binary(harness)
