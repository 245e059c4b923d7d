"""The qwen-code harness: Qwen Code (`@qwen-code/qwen-code`, verified on 0.24.4), a Gemini CLI
fork that speaks OpenAI Chat Completions, run as `qwen -o stream-json PROMPT`.

Its stream-json stdout is shaped like Claude Code's (`system/init`, `assistant` / `user` lines
with tool_use / tool_result blocks, one `result` with the turn count and usage), so Claude's
stream parser reads it; its tools (read_file, write_file, edit, run_shell_command, glob,
grep_search, …) map to canonical actions in core/canonical.py. The recipe is
../shared/spec/more-agents-offline.md §3: `--auth-type openai`, `--approval-mode yolo`, web_fetch
excluded, usage statistics off (settings and QWEN_USAGE_STATISTICS_ENABLED=false), the yolo
warning suppressed. With `--model scripted` the endpoint and key go in the environment
(OPENAI_BASE_URL / OPENAI_API_KEY), never in argv. Only OPENAI_API_KEY (and the OpenAI base URL
and model variables) reach it in a real run. Project instructions: QWEN.md / AGENTS.md in the
workspace, read by the CLI itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchtape.adapters.base import Command, Launch, files_below, host_credentials, preflight_prologue
from benchtape.adapters.claude_stream import ClaudeStreamParser
from benchtape.adapters.config import CliConfig, cli_binary, cli_config
from benchtape.adapters.endpoints import SCRIPTED_KEY, is_scripted
from benchtape.core.jsonobjects import decode
from benchtape.core.model import Action

HARNESS = "qwen-code"
AUTH_ENV = ("OPENAI_API_KEY",)
ROUTE_ENV = ("OPENAI_BASE_URL", "OPENAI_MODEL")  # where a real run's model is: not secrets, passed when set
SCRIPTED_MODEL = "qwen3-coder-plus"
QWEN_DIR = ".qwen"
SETTINGS: dict[str, Any] = {
    "security": {"auth": {"selectedType": "openai"}},
    "privacy": {"usageStatisticsEnabled": False},
    "telemetry": {"enabled": False},
    "general": {"enableAutoUpdate": False},
}


def parse_config(harness_config: dict[str, Any] | None) -> CliConfig:
    return cli_config(HARNESS, harness_config)


def binary_of(cfg: CliConfig) -> str:
    return cli_binary(HARNESS, cfg.binary)


class QwenStreamParser(ClaudeStreamParser):
    """Claude's stream parser, naming the session id as the transcript's key (`thread_id`).
    Qwen Code sets `is_error` on every tool result, false included (Claude Code's `false` says
    nothing, so Claude's parser leaves it unknown): here it is taken as said."""

    @property
    def thread_id(self) -> str | None:
        return self.session_id

    def _line(self, line: str) -> list[Action]:
        actions = super()._line(line)
        if '"tool_result"' not in line:
            return actions
        event = decode(line) or {}
        content = (event.get("message") or {}).get("content") if isinstance(event.get("message"), dict) else None
        said = {b.get("tool_use_id"): b["is_error"] for b in content or [] if isinstance(b, dict) and b.get("type") == "tool_result" and isinstance(b.get("is_error"), bool)}
        for a in actions:
            if a.kind == "tool.result" and a.data.get("is_error") is None and a.data.get("call_id") in said:
                a.data["is_error"] = said[a.data["call_id"]]  # type: ignore[typeddict-unknown-key]
        return actions


class QwenCodeAdapter:
    name = HARNESS
    native_tools: frozenset[str] | None = frozenset({
        "agent", "edit", "get_goal", "glob", "grep_search", "list_agents", "notebook_edit", "read_file", "run_shell_command",
        "skill", "tool_call", "tool_search", "update_goal", "write_file", "web_fetch", "send_message", "monitor", "zoom_image",
        "read_mcp_resource", "report_findings", "enter_worktree", "exit_worktree", "record_artifact", "task_stop", "loop_wakeup",
        "cron_create", "cron_list", "cron_delete", "todo_write",
    })
    # its chats (the transcript), temp and usage records, and what 0.24.4 writes at every start
    bookkeeping = (
        f"{QWEN_DIR}/projects/**", f"{QWEN_DIR}/tmp/**", f"{QWEN_DIR}/usage_record.jsonl", f"{QWEN_DIR}/installation_id", f"{QWEN_DIR}/*.json",
        f"{QWEN_DIR}/.openai-logs-cleanup-*", f"{QWEN_DIR}/extension-store/**", f"{QWEN_DIR}/output-language.md",
    )
    own_state: tuple[str, ...] = ()
    home_json: dict[str, dict[str, Any]] = {f"{QWEN_DIR}/settings.json": SETTINGS}

    def binary(self, harness_config: dict[str, Any] | None) -> str:
        return binary_of(parse_config(harness_config))

    def command(self, launch: Launch) -> Command:
        """`qwen --auth-type openai --approval-mode yolo --exclude-tools web_fetch -o stream-json [-m M] <args> -- PROMPT`."""
        cfg = parse_config(launch.harness_config)
        argv = [binary_of(cfg), "--auth-type", "openai", "--approval-mode", "yolo", "--exclude-tools", "web_fetch", "-o", "stream-json"]
        model = launch.model or cfg.model
        env = {"QWEN_CODE_SUPPRESS_YOLO_WARNING": "1", "QWEN_USAGE_STATISTICS_ENABLED": "false"}
        if launch.endpoint:
            argv += ["-m", cfg.model if cfg.model and not is_scripted(cfg.model) else SCRIPTED_MODEL]
            env.update({"OPENAI_BASE_URL": launch.endpoint.rstrip("/") + "/v1", "OPENAI_API_KEY": SCRIPTED_KEY})
        else:
            if model and not is_scripted(model):
                argv += ["-m", model]
            import os

            env.update(host_credentials(AUTH_ENV, None))
            env.update({k: os.environ[k] for k in ROUTE_ENV if os.environ.get(k)})
        argv += [*cfg.args, launch.prompt]
        return Command(argv=argv, env=env)

    def transcript(self, home: Path, launch: Launch, thread_id: str | None = None) -> Path | None:
        """This session's chat file, `~/.qwen/projects/<cwd slug>/chats/<session id>.jsonl`."""
        if not thread_id:
            return None
        name = f"{thread_id}.jsonl"
        found = files_below(home / QWEN_DIR / "projects", 2, lambda n: n == name)
        return found[0] if found else None

    def parser(self) -> QwenStreamParser:
        return QwenStreamParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if not scripted and not env.get("OPENAI_API_KEY"):
            findings.append("qwen-code: no way to authenticate: OPENAI_API_KEY is not set (with OPENAI_BASE_URL for a non-OpenAI endpoint); export it, or run with --model scripted")
        return findings
