"""The gemini-cli harness: Google's Gemini CLI (`@google/gemini-cli`, verified on 0.61.0) run as
`gemini -p PROMPT --output-format stream-json`, parsed event by event (adapters/gemini_stream.py).

The recipe is ../shared/spec/more-agents-offline.md §1:
- `--skip-trust` (else yolo is downgraded to "default" in an untrusted folder, and every tool
  call waits for an approval nobody gives) and `--approval-mode=yolo`;
- `security.auth.selectedType: gemini-api-key` in `~/.gemini/settings.json` (0.61.0 refuses a
  base URL with only the environment: "Invalid auth method selected.", exit 41), usage
  statistics off (its only outside call in print mode), telemetry and auto-update off, and the
  two web tools excluded. These are merged into the private HOME's settings before the start
  (`home_json`), as Claude Code's first-run answers are;
- with `--model scripted`, `GOOGLE_GEMINI_BASE_URL` is benchtape's server (the host root: the CLI
  adds `/v1beta/models/…`), the key is the server's, and `-m gemini-2.5-flash` is always given
  (without a model the `auto` router makes a classifier call first).
Only GEMINI_API_KEY / GOOGLE_API_KEY reach it (a real run), never another tool's key.
Project instructions: the CLI reads GEMINI.md from the workspace on its own.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.adapters.base import Command, Launch, files_below, host_credentials, preflight_prologue
from benchtape.adapters.config import CliConfig, cli_binary, cli_config
from benchtape.adapters.endpoints import SCRIPTED_KEY, is_scripted
from benchtape.adapters.gemini_stream import GeminiStreamParser

HARNESS = "gemini-cli"
AUTH_ENV = ("GEMINI_API_KEY", "GOOGLE_API_KEY")
SCRIPTED_MODEL = "gemini-2.5-flash"
GEMINI_DIR = ".gemini"
APPROVAL_FLAGS = ("--approval-mode", "--yolo", "-y")
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "gemini-api-key"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
    "tools": {"exclude": ["web_fetch", "google_web_search"]},
}


def parse_config(harness_config: dict[str, Any] | None) -> CliConfig:
    return cli_config(HARNESS, harness_config)


def binary_of(cfg: CliConfig) -> str:
    return cli_binary(HARNESS, cfg.binary)


class GeminiCliAdapter:
    name = HARNESS
    # 0.61.0's tools (`tools.exclude` drops the two web ones) and every mcp__<server>__<tool>
    native_tools: frozenset[str] | None = frozenset({
        "activate_skill", "enter_plan_mode", "exit_plan_mode", "glob", "google_web_search", "grep_search", "invoke_agent",
        "list_background_processes", "list_directory", "read_background_output", "read_file", "read_many_files", "replace",
        "run_shell_command", "save_memory", "update_topic", "web_fetch", "write_file", "write_todos",
    })
    # its chats (stored as the session's transcript), per-project history and temp folders, and
    # the project registry it rewrites at every start
    bookkeeping = (f"{GEMINI_DIR}/tmp/**", f"{GEMINI_DIR}/history/**", f"{GEMINI_DIR}/projects.json", f"{GEMINI_DIR}/installation_id", f"{GEMINI_DIR}/user_id")
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {f"{GEMINI_DIR}/settings.json": SETTINGS}

    def binary(self, harness_config: dict[str, Any] | None) -> str:
        return binary_of(parse_config(harness_config))

    def command(self, launch: Launch) -> Command:
        """`gemini --skip-trust --approval-mode=yolo --output-format stream-json [-m M] <args> -p PROMPT`."""
        cfg = parse_config(launch.harness_config)
        argv = [binary_of(cfg), "--skip-trust", "--output-format", "stream-json"]
        if not any(a == flag or a.startswith(flag + "=") for a in cfg.args for flag in APPROVAL_FLAGS):
            argv.append("--approval-mode=yolo")
        model = launch.model or cfg.model
        if launch.endpoint:
            argv += ["-m", cfg.model if cfg.model and not is_scripted(cfg.model) else SCRIPTED_MODEL]
        elif model and not is_scripted(model):
            argv += ["-m", model]
        argv += [*cfg.args, "-p", launch.prompt]
        if launch.endpoint:
            env = {"GEMINI_API_KEY": SCRIPTED_KEY, "GOOGLE_GEMINI_BASE_URL": launch.endpoint.rstrip("/")}
        else:
            env = host_credentials(AUTH_ENV, None)
        return Command(argv=argv, env=env)

    def transcript(self, home: Path, launch: Launch, thread_id: str | None = None) -> Path | None:
        """This session's chat file, `~/.gemini/tmp/<project>/chats/session-<date>-<id8>.jsonl`."""
        if not thread_id:
            return None
        end = f"-{thread_id[:8]}.jsonl"
        found = files_below(home / GEMINI_DIR / "tmp", 2, lambda name: name.startswith("session-") and name.endswith(end))
        return found[-1] if found else None

    def parser(self) -> GeminiStreamParser:
        return GeminiStreamParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        """Blocking findings: a bad config, the binary missing, no key (unless the model is scripted)."""
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if not scripted and not any(env.get(name) for name in AUTH_ENV):
            findings.append("gemini-cli: no way to authenticate: neither GEMINI_API_KEY nor GOOGLE_API_KEY is set; export one (only these reach the CLI), or run with --model scripted")
        return findings
