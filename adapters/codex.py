"""The codex harness: OpenAI Codex CLI run as `codex exec --json`, parsed item by item.

The prompt goes on stdin (the `-` prompt argument), so it is never subject to argv
length limits or shell quoting, and piped stdin is not appended to a positional
prompt as newer CLIs do. `codex exec` defaults to a read-only sandbox, in which an
agent cannot fix anything; unless the config's `args` choose a sandbox, benchtape
asks for `--sandbox workspace-write` (benchtape's own sandbox is the outer fence), and in
benchtape's container for `--sandbox danger-full-access`: there the container is the fence,
and codex's own sandbox (bwrap) cannot make the namespaces it needs, so every command the
agent ran failed ("bwrap: No permissions to create a new namespace").
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchtape.adapters.base import Command, Launch, files_below, host_credentials, preflight_prologue
from benchtape.adapters.codex_exec import CodexExecParser
from benchtape.adapters.config import ConfigReader
from benchtape.adapters.endpoints import codex_config, codex_env, is_scripted
from benchtape.core.errors import BadInput

HARNESS = "codex"
EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh")
AUTH_ENV = ("OPENAI_API_KEY", "CODEX_API_KEY")
SANDBOX_FLAGS = ("--sandbox", "-s", "--full-auto", "--dangerously-bypass-approvals-and-sandbox", "--yolo")


@dataclass(frozen=True)
class CodexConfig:
    binary: str | None = None  # None: the pinned binary when installed, else `codex` on PATH
    model: str | None = None
    effort: str | None = None
    args: tuple[str, ...] = ()


def parse_config(harness_config: dict[str, Any] | None) -> CodexConfig:
    """Check and type the codex `harness_config` (binary, model, effort, args); unknown keys are ignored."""
    r = ConfigReader(HARNESS, harness_config)
    return CodexConfig(
        binary=r.string("binary", empty_ok=False),
        model=r.string("model"),
        effort=r.level("effort", EFFORTS, "CLI"),
        args=tuple(r.strings("args")),
    )


CODEX_DIR = ".codex"  # CODEX_HOME under the sandbox HOME: private to the session


def binary_of(cfg: CodexConfig) -> str:
    from benchtape.tools.binaries import default_binary

    return cfg.binary or default_binary(HARNESS)


def _chosen_sandbox(args: tuple[str, ...]) -> str | None:
    """The sandbox of its own that `args` choose for codex, by the first of SANDBOX_FLAGS they
    hold (a bypass flag reads as danger-full-access; a flag without its value as ""); None
    when they choose none, and benchtape asks for one (CodexAdapter.command)."""
    for i, a in enumerate(args):
        if a.startswith("--sandbox="):
            return a.split("=", 1)[1]
        if a not in SANDBOX_FLAGS:
            continue
        if a in ("--sandbox", "-s"):
            return args[i + 1] if i + 1 < len(args) else ""
        return "workspace-write (--full-auto)" if a == "--full-auto" else "danger-full-access"
    return None


def own_sandbox_in_container(harness_config: dict[str, Any] | None) -> str | None:
    """The sandbox of codex's own that `args` choose and that cannot work inside benchtape's
    container (bwrap cannot make namespaces there: every command the agent ran would fail),
    or None. Unchosen, the run loop asks for danger-full-access there; an evaluation's
    `sandbox` option always chooses, so its default (workspace-write) is refused here."""
    try:
        chosen = _chosen_sandbox(parse_config(harness_config).args)
    except BadInput:
        return None  # the adapter's own preflight names a bad config
    return None if chosen in (None, "", "danger-full-access") else chosen


def mcp_overrides(servers: list[dict[str, Any]] | None) -> list[str]:
    """A Harbor task's MCP servers (McpServer.to_dict) as Codex takes them: one `-c
    mcp_servers.<name>={…}` each, the table Harbor's codex agent writes into config.toml (a
    stdio server's command and args, else its url), over the user's own config (a server of
    the same name is the task's)."""
    out: list[str] = []
    for server in servers or []:
        if server["transport"] == "stdio":
            table = f"{{command = {_toml_value(server['command'])}, args = {_toml_value(list(server.get('args') or []))}}}"
        else:
            table = f"{{url = {_toml_value(server['url'])}}}"
        out += ["-c", f"mcp_servers.{server['name']}={table}"]
    return out


def _toml_value(value: Any) -> str:
    """A string or a list of strings as TOML: JSON's form is TOML's but for DEL, which TOML
    forbids unescaped in a string (orjson leaves it as it is): Codex would read the whole `-c`
    value as a plain string, and the server would be lost."""
    return orjson.dumps(value).decode().replace("\x7f", "\\u007f")


class CodexAdapter:
    name = HARNESS
    # the tool names its calls carry, from `codex exec --json` items and rollout function calls
    # (and every mcp__<server>__<tool>): a check naming another native name never matches here
    native_tools: frozenset[str] | None = frozenset({
        "command_execution", "file_change", "web_search", "todo_list", "request_user_input",
        "exec_command", "write_stdin", "shell", "local_shell", "apply_patch", "update_plan", "view_image", "tool_search",
        "spawn_agent", "wait", "wait_agent", "send_input", "close_agent", "resume_agent",
    })
    # its rollout (stored as the session's transcript), its state databases (~1.4 MB a run),
    # the skills bundled with the binary (unpacked again at every start), and what 0.169.0
    # makes at every start of a new home: a random installation id, its migration marker, its
    # shell snapshots, writer locks and arg0 links (each was a file "the agent added" in
    # `show --diff`, and `| git apply` put it in the user's tree)
    bookkeeping = (
        f"{CODEX_DIR}/sessions/**", f"{CODEX_DIR}/*.sqlite", f"{CODEX_DIR}/*.sqlite-*", f"{CODEX_DIR}/skills/.system/**", f"{CODEX_DIR}/.tmp/**", f"{CODEX_DIR}/log/**",
        f"{CODEX_DIR}/installation_id", f"{CODEX_DIR}/.sandbox_migration", f"{CODEX_DIR}/shell_snapshots/**", f"{CODEX_DIR}/thread-writer-locks/**", f"{CODEX_DIR}/tmp/**",
    )
    own_state: tuple[str, ...] = ()  # config.toml is benchtape's, written before the staged tree; 0.169.0 leaves it as it is
    home_json: dict[str, dict[str, Any]] = {}
    takes_images = True  # `image:` reaches the model (benchtape.app.preflight refuses it under a harness without this)

    def command(self, launch: Launch) -> Command:
        """`codex exec --json [--skip-git-repo-check] [--sandbox workspace-write|danger-full-access] [-m] [-c effort] <args> -`.

        With a scripted model the argv is the same; a private CODEX_HOME holds the config
        that points Codex at the endpoint (it ignores OPENAI_BASE_URL and needs a custom
        provider with `wire_api = "responses"`). `--skip-git-repo-check` only outside git.
        """
        cfg = parse_config(launch.harness_config)
        argv = [binary_of(cfg), "exec", "--json"]
        if not (launch.root / ".git").exists():
            argv.append("--skip-git-repo-check")
        if _chosen_sandbox(cfg.args) is None:
            argv += ["--sandbox", "danger-full-access" if launch.in_container else "workspace-write"]
        model = launch.model or cfg.model
        if model and not is_scripted(model):
            argv += ["-m", model]
        if cfg.effort:
            argv += ["-c", f"model_reasoning_effort={cfg.effort}"]
        # Codex runs each command in a login shell (`bash -lc`), whose /etc/profile sets PATH anew:
        # a task's project environment (its venv's bin first on PATH) was lost to Codex's shell
        # alone, so `python3 -m pytest` found no pytest where Claude's and Gemini's found it. A
        # plain shell keeps the environment benchtape gives every harness alike.
        if not any(a.startswith("allow_login_shell") for a in cfg.args):
            argv += ["-c", "allow_login_shell=false"]
        # `image:`: `codex exec -i FILE` attaches each picture to the first message (0.169.0 sends
        # it as an input_image data URL); a host path, so preflight keeps codex images out of containers
        for image in launch.images:
            argv += ["--image", str(image)]
        argv += [*mcp_overrides(launch.scenario.get("mcp_servers")), *cfg.args, "-"]
        env: dict[str, str] = host_credentials(AUTH_ENV, launch.endpoint)
        files: dict[str, str] = {}
        if launch.endpoint:
            home = str(launch.home) if launch.home is not None else "."
            env = codex_env(f"{home}/{CODEX_DIR}")
            env.pop("HOME", None)
            files = {f"{CODEX_DIR}/config.toml": codex_config(launch.endpoint.rstrip("/") + "/v1")}
        from benchtape.spec.bench_images import attachments

        return Command(argv=argv, env=env, stdin=launch.prompt.encode(), home_files=files, attachments=attachments(launch.images))

    def transcript(self, home: Path, launch: Launch, thread_id: str | None = None) -> Path | None:
        """The rollout of this session, by the thread id `thread.started` announced."""
        if not thread_id:
            return None
        end = f"-{thread_id}.jsonl"
        found = files_below(home / CODEX_DIR / "sessions", 3, lambda name: name.startswith("rollout-") and name.endswith(end) and len(name) >= len("rollout-") + len(end))
        return found[0] if found else None

    def parser(self) -> CodexExecParser:
        return CodexExecParser()

    def preflight(self, launch: Launch | None, harness_config: dict[str, Any], env: dict[str, str], scripted: bool = False) -> list[str]:
        """Blocking findings: a bad config, the binary not on PATH, no API key and no `codex login`."""
        cfg, findings = preflight_prologue(self.name, harness_config, env, parse_config, binary_of)
        if cfg is None:
            return findings
        if scripted:
            return findings  # the scripted model needs no key
        if not any(env.get(name) for name in AUTH_ENV):
            home = env.get("HOME") or (str(launch.home) if launch is not None and launch.home else "")
            codex_home = env.get("CODEX_HOME") or (str(Path(home) / ".codex") if home else "")
            if not (codex_home and (Path(codex_home) / "auth.json").is_file()):
                findings.append(
                    "codex: no way to authenticate: OPENAI_API_KEY is not set and there is no login at "
                    f"{codex_home or '$HOME/.codex (HOME unset)'}/auth.json; export OPENAI_API_KEY or run `codex login`"
                )
        return findings
