"""The mini-swe-agent harness: SWE-agent's minimal agent (`mini-swe-agent` on PyPI, verified on
2.4.6) run as `mini -m openai/MODEL -c mini.yaml … --yolo --exit-immediately -o TRAJ -t PROMPT`.

mini prints a human log, not a record; its record is the trajectory JSON it writes at the end
(`-o`). So it runs through the command harness's wrapper (command_agent.py), which prints that
trajectory after mini exits, as raw lines: the session is read from them (adapters/mini_trajectory.py)
and `reparse` works from the store alone. Its one tool is `bash` (every read, edit and search is a
shell command: canonical `shell`, a plain `cat` a read). The recipe is
../shared/spec/more-agents-offline.md §5: MSWEA_CONFIGURED=true (else its setup wizard aborts),
MSWEA_COST_TRACKING=ignore_errors (else an unpriced model ends the run), litellm's local cost map
(no fetch), a private config dir. A run ends on its submit command; the submission is the final
output. Only OPENAI_API_KEY reaches it (litellm reads OPENAI_API_BASE too, passed when set).
Cost is recorded only when litellm priced it (an unpriced model says 0: unknown, not free).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import orjson

from benchtape.adapters.base import Command, Launch, host_credentials, preflight_prologue
from benchtape.adapters.command import CommandParser
from benchtape.adapters.config import ConfigReader, cli_binary
from benchtape.adapters.endpoints import SCRIPTED_KEY, is_scripted

HARNESS = "mini-swe-agent"
AUTH_ENV = ("OPENAI_API_KEY",)
SCRIPTED_MODEL = "openai/scripted"
CONFIG_DIR = ".config/mini-swe-agent"
FORMAT = "mini-swe-agent"


@dataclass(frozen=True)
class MiniConfig:
    binary: str | None = None
    model: str | None = None
    step_limit: int | None = None
    args: tuple[str, ...] = ()


def parse_config(harness_config: dict[str, Any] | None) -> MiniConfig:
    r = ConfigReader(HARNESS, harness_config)
    return MiniConfig(binary=r.string("binary", empty_ok=False), model=r.string("model"), step_limit=r.integer(r.config.get("step_limit"), "step_limit"), args=tuple(r.strings("args")))


def binary_of(cfg: MiniConfig) -> str:
    return cli_binary(HARNESS, cfg.binary)


class MiniSweAgentAdapter:
    name = HARNESS
    native_tools: frozenset[str] | None = frozenset({"bash"})
    bookkeeping = (f"{CONFIG_DIR}/**",)
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {}

    def binary(self, harness_config: dict[str, Any] | None) -> str:
        return binary_of(parse_config(harness_config))

    def command(self, launch: Launch) -> Command:
        cfg = parse_config(launch.harness_config)
        model = launch.model or cfg.model
        argv = [binary_of(cfg), "-c", "mini.yaml"]
        home = str(launch.home) if launch.home is not None else "{home}"
        env = {
            "MSWEA_CONFIGURED": "true", "MSWEA_SILENT_STARTUP": "1", "MSWEA_COST_TRACKING": "ignore_errors",
            "MSWEA_GLOBAL_CONFIG_DIR": f"{home}/{CONFIG_DIR}", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        }
        if launch.endpoint:
            argv += ["-m", SCRIPTED_MODEL, "-c", f"model.model_kwargs.api_base={launch.endpoint.rstrip('/')}/v1"]
            env["OPENAI_API_KEY"] = SCRIPTED_KEY
        else:
            if model and not is_scripted(model):
                argv += ["-m", model]
            env.update(host_credentials(AUTH_ENV, None))
            if os.environ.get("OPENAI_API_BASE"):
                env["OPENAI_API_BASE"] = os.environ["OPENAI_API_BASE"]
        if cfg.step_limit is not None:
            argv += ["-c", f"agent.step_limit={cfg.step_limit}"]
        argv += [*cfg.args, "--yolo", "--exit-immediately", "-o", "{scratch}/trajectory.json", "-t", "{prompt}"]
        job = {
            "argv": argv, "env": {}, "prompt": launch.prompt, "cwd": str(launch.work_dir), "root": str(launch.root),
            "model": model or "", "timeout": None, "stdin": False,
            "transcript": {"path": "{scratch}/trajectory.json", "format": FORMAT},
            "python_harness": True,  # run isolated from the project's PYTHONPATH (command_agent.isolated)
        }
        return Command(argv=launch.helper("command_agent.py"), env=env, stdin=orjson.dumps(job), facts={"binary": {"path": argv[0]}})

    def parser(self) -> CommandParser:
        return CommandParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if not scripted and not env.get("OPENAI_API_KEY"):
            findings.append("mini-swe-agent: no way to authenticate: OPENAI_API_KEY is not set; export it (only it reaches the agent), or run with --model scripted")
        return findings
