"""The aider harness: aider (`aider-chat` on PyPI, verified on 0.86.2) run once on the prompt,
`aider --message PROMPT --yes-always --edit-format diff …`, through the command harness's wrapper.

aider calls no tools: the model writes SEARCH/REPLACE blocks in its answer, and aider applies
them. It prints no JSON; its record is its markdown chat history (`--chat-history-file`, put
in the wrapper's scratch folder and printed into the raw lines after it exits), read here:

    #### <the user's message>
    <the assistant's answer, edit blocks included>
    > Applied edit to calc.py                    an edit aider made: a tool call `apply_edit` (canonical edit)
    > Tokens: 1,234 sent, 56 received.          exact counts only (aider rounds to "1.2k" past a thousand: unknown)

The recipe is ../shared/spec/more-agents-offline.md §4, with `--no-git` (a workspace's history is
benchtape's, never aider's commits) and `--no-auto-lint --no-auto-test`; the model-info lookup is
answered by a local metadata file and litellm's local cost map (no fetch), no update check, no
analytics. Only OPENAI_API_KEY / ANTHROPIC_API_KEY (the model's provider's) reach it. aider's cost
of an unpriced model is 0: never recorded (unknown).
"""

from __future__ import annotations

import os
from typing import Any

import orjson

from benchtape.adapters.aider_history import FORMAT
from benchtape.adapters.base import Command, Launch, host_credentials, preflight_prologue
from benchtape.adapters.command import CommandParser
from benchtape.adapters.config import CliConfig, cli_binary, cli_config
from benchtape.adapters.endpoints import SCRIPTED_KEY, is_scripted

HARNESS = "aider"
SCRIPTED_MODEL = "openai/scripted"
PROVIDER_KEYS = {"openai": ("OPENAI_API_KEY",), "anthropic": ("ANTHROPIC_API_KEY",)}


def parse_config(harness_config: dict[str, Any] | None) -> CliConfig:
    return cli_config(HARNESS, harness_config)


def binary_of(cfg: CliConfig) -> str:
    return cli_binary(HARNESS, cfg.binary)


class AiderAdapter:
    name = HARNESS
    native_tools: frozenset[str] | None = frozenset({"apply_edit"})
    bookkeeping = (".aider*", ".aider.tags.cache.v4/**", ".cache/**")
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {}

    def binary(self, harness_config: dict[str, Any] | None) -> str:
        return binary_of(parse_config(harness_config))

    def command(self, launch: Launch) -> Command:
        cfg = parse_config(launch.harness_config)
        model = SCRIPTED_MODEL if launch.endpoint else (launch.model if launch.model and not is_scripted(launch.model) else cfg.model)
        argv = [binary_of(cfg), "--edit-format", "diff", "--yes-always", "--no-git", "--no-auto-commits", "--no-auto-lint", "--no-auto-test",
                "--no-check-update", "--analytics-disable", "--no-show-release-notes", "--no-detect-urls", "--no-pretty", "--no-fancy-input",
                "--no-show-model-warnings", "--chat-history-file", "{scratch}/chat.md", "--input-history-file", "{scratch}/input.history"]
        env = {"LITELLM_LOCAL_MODEL_COST_MAP": "True"}
        if model:
            argv += ["--model", model]
        if launch.endpoint:
            env.update({"OPENAI_API_BASE": launch.endpoint.rstrip("/") + "/v1", "OPENAI_API_KEY": SCRIPTED_KEY})
            metadata = {SCRIPTED_MODEL: {"max_tokens": 8192, "max_input_tokens": 128000, "max_output_tokens": 8192, "input_cost_per_token": 0, "output_cost_per_token": 0, "litellm_provider": "openai", "mode": "chat"}}
            argv += ["--model-metadata-file", "{scratch}/model-metadata.json"]
        else:
            metadata = None
            provider = (model or "").split("/", 1)[0]
            env.update(host_credentials(PROVIDER_KEYS.get(provider, ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")), None))
            if os.environ.get("OPENAI_API_BASE"):
                env["OPENAI_API_BASE"] = os.environ["OPENAI_API_BASE"]
        argv += [*cfg.args, "--message", "{prompt}"]
        job = {
            "argv": argv, "env": {}, "prompt": launch.prompt, "cwd": str(launch.work_dir), "root": str(launch.root), "model": model or "",
            "timeout": None, "stdin": False, "transcript": {"path": "{scratch}/chat.md", "format": FORMAT},
            "files": {"model-metadata.json": orjson.dumps(metadata).decode()} if metadata else {},
            "python_harness": True,  # run isolated from the project's PYTHONPATH (command_agent.isolated)
        }
        return Command(argv=launch.helper("command_agent.py"), env=env, stdin=orjson.dumps(job), facts={"binary": {"path": argv[0]}})

    def parser(self) -> CommandParser:
        return CommandParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if not scripted and not any(env.get(k) for k in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY")):
            findings.append("aider: no key: set OPENAI_API_KEY or ANTHROPIC_API_KEY (the model's provider's reaches aider, no other), or run with --model scripted")
        return findings
