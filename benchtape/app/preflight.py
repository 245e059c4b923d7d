"""Preflight: could this bench run? Every run asks first; a blocking finding stops it (exit 3).

It lives on the write side because it asks what recording needs (a harness binary, keys,
testdata, a sandbox engine); it also builds every check, so a refused check stops the run
before any spend (the one arrow from recorder to the check catalog).
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Callable, Iterator

from benchtape.adapters.base import get_adapter
from benchtape.adapters.endpoints import is_scripted
from benchtape.checks import CheckConfigError, build
from benchtape.checks.output_transforms import python_note, transform_problems, transforms_in
from benchtape.checks.registry import PreflightContext, preflight_problems, unknown_args
from benchtape.core.envflags import flag as env_flag
from benchtape.core.envflags import spelled
from benchtape.core.errors import BadInput, PreflightBlocked, closest
from benchtape.core.harnesses import harness_names
from benchtape.core.judgments import JudgeError
from benchtape.core.results import CheckSpec
from benchtape.models.demo_judge import rich_mode
from benchtape.recorder.runner import RunOptions
from benchtape.spec.bench import BenchSpec, ScenarioSpec
from benchtape.spec.evalfile import EvalSpec
from benchtape.spec.judge_config import JUDGE_TYPE_NAMES, JudgesConfig
from benchtape.spec.solver import SOLVER_MODELS


@dataclass
class Preflight:
    blocking: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Blocking findings --skip-preflight never skips: gates that protect this machine (your real
    # directory, your HOME, the network) and what benchtape could not run at all (an unknown
    # harness, a check that cannot be built). Each is in `blocking` too.
    essential: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.blocking

    def gate(self, finding: str) -> None:
        """A blocking finding that --skip-preflight does not skip."""
        self.blocking.append(finding)
        self.essential.append(finding)

    def merge(self, other: Preflight) -> None:
        self.blocking.extend(other.blocking)
        self.notes.extend(other.notes)
        self.essential.extend(other.essential)


def enforce(pf: Preflight, skip: bool = False) -> None:
    """Stop the run on a blocking finding (PreflightBlocked, exit 3). With `skip`
    (--skip-preflight), the findings that only save spend become notes and the run goes on;
    the essential ones still stop it."""
    if skip and pf.blocking:
        essential = set(pf.essential)
        pf.notes.extend(f"--skip-preflight: not checked, the run may fail on it: {f}" for f in pf.blocking if f not in essential)
        pf.blocking = [f for f in pf.blocking if f in essential]
    if not pf.ok:
        raise PreflightBlocked(pf.blocking)


def _key_line(path: Any, key: str) -> str | None:
    """`FILE:LINE` of a top-level key of a bench file, for a finding about its value."""
    try:
        lines = Path(path).read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    found = next((n for n, line in enumerate(lines, start=1) if re.match(rf"^{re.escape(key)}\s*:", line)), None)
    return f"{path}:{found}" if found else None


def known_harness(name: str) -> bool:
    """Whether a harness of this name exists; an unknown one is a blocking finding of preflight."""
    return name in harness_names()


def preflight(bench: BenchSpec, *, harness: str | None = None, sandbox: str | None = None, allow_host_writes: bool = False, allow_network: bool = False, concurrency: int = 4, noop: bool = False, env: dict[str, str] | None = None, model: str | None = None, who: str | None = None) -> Preflight:
    env = dict(os.environ if env is None else env)
    pf = Preflight()
    name = harness or bench.harness or "mock"
    where = str(bench.path)
    if not known_harness(name):
        near = closest(name, harness_names())
        hint = f"did you mean {near!r}? " if near else ""
        if harness is None and bench.harness:  # the bench's own `harness:`: its line
            where = _key_line(bench.path, "harness") or where
        else:
            where = f"{where}: --harness"
        pf.gate(f"{where}: harness {name!r} is not known: {hint}(harnesses: {', '.join(harness_names())}; a plugin's is there once its package is installed: `benchtape tools list`)")
        return pf
    adapter = get_adapter(name)
    scripted = is_scripted(model or bench.harness_config.get("model")) and name != "mock"
    config_at = _key_line(bench.path, "harness_config")
    # a finding about the bench's harness_config names where it is written (it said only "claude-code harness_config: model must be a string")
    pf.blocking.extend(f"{config_at}: {f}" if config_at and "harness_config" in f and not f.startswith(str(bench.path)) else f for f in adapter.preflight(None, bench.harness_config, env, scripted=scripted))
    args = bench.harness_config.get("args")
    if harness is not None and bench.harness and bench.harness != name and args:
        # a flag of one CLI's is often unknown to another, which exits at once: every session an error
        pf.notes.append(f"{config_at or where}: harness_config.args {' '.join(map(str, args))} were written for the bench's harness {bench.harness}; --harness {name} passes them to {name} as they are, and a flag it does not take ends each session at once: drop them here, or compare the tools in an Evaluation, whose setups each take their own args")
    if name == "oracle":
        pf.blocking.extend(_oracle(bench))
    if scripted:
        pf.merge(_scripted(bench, name, sandbox, noop, env))
        if not noop and who is None:  # an evaluation's setups are said by its preview, which knows each task's kind (evaluation_run._nothing_to_play)
            pf.notes.extend(_nothing_to_play(bench))
    for finding in bench.not_built:
        pf.notes.append(f"not supported in this version, ignored: {finding}")
    pf.notes.extend(native_tool_warnings(bench, name, who))
    pf.notes.extend(arg_warnings(bench))
    if name == "mock" and rich_mode():
        if any(spec.type in JUDGE_TYPE_NAMES for sc in bench.scenarios for spec in _walk(sc.checks)):
            pf.notes.append(f"{where}: MADBENCH_MOCK_RICH=1: AI checks are answered by the offline demo evaluator (provider demo, model mock-rich), not a judge model")
    else:
        pf.blocking.extend(judge_problems(bench, env))
    none_scenarios = 0
    solver = noop or (model or bench.harness_config.get("model")) in SOLVER_MODELS  # the task's own solver script plays (or nothing: the no-op), not the scenario's `mock:`
    for sc in bench.scenarios:
        level = sandbox or sc.sandbox.level
        pf.merge(_scenario(sc, level, name, allow_host_writes, allow_network, PreflightContext(bench.dir, env, sc.runtimes, **_graded_in(sc, level)), solver=solver))
        none_scenarios += level == "none"
        if name == "codex" and level == "container":
            pf.blocking.extend(_codex_in_container(bench, sc))
        if level == "container" and name not in ("mock", "oracle"):
            pf.blocking.extend(_host_binary_in_container(bench, sc))
    if any((sandbox or sc.sandbox.level) != "container" for sc in bench.scenarios):
        from benchtape.sandbox.pidfence import unconfined_note

        note = unconfined_note()
        if note:
            pf.notes.append(note)
    pf.merge(_images(bench, name, adapter, sandbox))
    if name == "claude-code":
        pf.merge(_interactive(bench, [sc for sc in bench.scenarios if sc.interactive]))
        pf.merge(_private_home(bench, sandbox))
        if who is None:  # an evaluation's setup is said by its own preview, with its own fix (evaluation_run._cannot_edit)
            pf.notes.extend(_print_mode_edits(bench))
    else:
        pf.notes.extend(f"{sc.where}: scenario {sc.name!r}: follow_ups are typed into Claude Code's terminal UI only; under {name} the session has the prompt alone" for sc in bench.scenarios if sc.follow_ups)
        if name == "codex" and any(sc.interactive for sc in bench.scenarios):
            pf.notes.append(f"{where}: codex runs `codex exec` whatever `interactive:` says (benchtape drives only Claude Code's terminal UI)")
    if name != "mock":
        pf.notes.extend(
            f"{sc.where}: scenario {sc.name!r}: providers {', '.join(sc.providers)}: under {name} each label runs the same harness config (as madbench's claude-code does); only the mock reads a label (`mock:<payload>`)"
            for sc in bench.scenarios if len(sc.providers) > 1
        )
    if none_scenarios and concurrency > 1 and len(bench.scenarios) > 1:
        pf.gate(f"{where}: `sandbox: none` runs in your real directory and cannot run concurrently; pass --concurrency 1 (it is refused, not downgraded)")
    return pf

def few(names: list[str]) -> str:
    """Up to five names of a finding, and how many more: a note stays one line on a large bench."""
    return ", ".join(names[:5]) + (f" and {len(names) - 5} more" if len(names) > 5 else "")


def _nothing_to_play(bench: BenchSpec) -> list[str]:
    """Said before a bench run: the scripted model (and the solver, which plays only a history
    task's fix) plays a scenario's `mock:` steps, and one without any plays the no-op, so the
    real binary only answers and changes nothing."""
    bare = [sc.name for sc in bench.scenarios if not sc.mock]
    if not bare:
        return []
    return [f"{bench.path}: the scripted model has no `mock:` steps to play for {few([repr(n) for n in bare])}: it says the prompt back and changes nothing; to script a scenario, give it `mock: {{steps: [...]}}`"]


def _print_mode_edits(bench: BenchSpec) -> list[str]:
    """Said before any spend: Claude Code in print mode (`interactive: false`) with no permission
    to edit asks before every edit, and nobody answers, so each Edit and Write is refused ("Claude
    requested permissions to write …") and a check of the files fails. madbench's reference says
    print mode ignores the mode (CLI 2.1.234); the CLI benchtape runs does not. Not refused: the
    repository's own .claude/settings.json may allow edits, and a scenario may need none."""
    from benchtape.adapters.claude_code import edits_allowed

    printed = [sc.name for sc in bench.scenarios if not sc.interactive]
    if not printed or edits_allowed([str(a) for a in bench.harness_config.get("args") or ()]):
        return []
    where = _key_line(bench.path, "harness_config") or str(bench.path)
    return [
        f"{where}: Claude Code in print mode asks before every edit and nobody answers: unless the repository's .claude/settings.json allows edits, "
        f"the Edit and Write calls of {few([repr(n) for n in printed])} are refused and a check of the files fails; add `args: [--permission-mode, bypassPermissions]` to harness_config "
        "(benchtape's sandbox is the fence; madbench's reference says print mode ignores the mode, which Claude Code no longer does)"
    ]


def _oracle(bench: BenchSpec) -> list[str]:
    """The oracle applies a task's known fix: a bench scenario has none (refused, with the fix)."""
    from benchtape.adapters.oracle import NO_FIX

    return [f"{sc.where}: scenario {sc.name!r}: {NO_FIX}; use --harness mock (or a real tool) here, or run the oracle over tasks: `benchtape run DIR --harness oracle` on Harbor task folders, or an evaluation with `tasks:`" for sc in bench.scenarios if not sc.raw.get("oracle")]


def _graded_in(sc: ScenarioSpec, level: str) -> dict[str, Any]:
    """Where a container scenario's code checks will find their runtimes: its image, asked once
    per runtime (a throwaway container, network none). Other levels grade on this host."""
    if level != "container" or sc.sandbox.dockerfile is not None:
        return {}
    from benchtape.sandbox.baseimage import BASE_IMAGE

    image = sc.sandbox.image or BASE_IMAGE
    return {"interpreter": _ImageInterpreters.of(image), "where": f"the image {image}"}


class _ImageInterpreters:
    """`command -v` inside an image, cached per image and name for the whole preflight."""

    _cache: dict[tuple[str, str], list[str] | None] = {}

    def __init__(self, image: str):
        self.image = image

    @classmethod
    def of(cls, image: str) -> _ImageInterpreters:
        return cls(image)

    def __call__(self, name: str) -> list[str] | None:
        exe = {"python": "python3"}.get(name, name)
        key = (self.image, exe)
        if key not in self._cache:
            self._cache[key] = _probe_image(self.image, exe)
        return self._cache[key]


def _probe_image(image: str, exe: str) -> list[str] | None:
    try:
        from benchtape.sandbox.container import connect

        out = connect().containers.run(image, ["/bin/sh", "-c", f"command -v {exe} || true"], network_mode="none", remove=True)
    except Exception:  # noqa: BLE001 - no engine or no image: _container() reports that finding
        return [exe]
    found = out.decode("utf-8", "replace").strip().splitlines()
    return [found[-1]] if found else None


def _host_binary_in_container(bench: BenchSpec, sc: ScenarioSpec) -> list[str]:
    """`harness_config.binary: ./wrap.sh` is a file of this machine: a container runs its own
    filesystem, where it is not (madbench refuses such a binary at container too). benchtape's
    pinned binaries are mounted in, so they are fine."""
    binary = bench.harness_config.get("binary")
    if not isinstance(binary, str) or os.sep not in binary:
        return []
    from benchtape.tools.binaries import search_roots

    real = Path(binary).resolve()
    if any(root.resolve() in real.parents for root in search_roots() if root.is_dir()):
        return []
    return [f"{sc.where}: scenario {sc.name!r}: harness_config.binary {binary} is a file on this machine, and `sandbox: container` runs the agent in the container's own filesystem, where it is not; drop `binary:` (benchtape's pinned binary is mounted in), or use level home"]


def _codex_in_container(bench: BenchSpec, sc: ScenarioSpec) -> list[str]:
    """Codex's own sandbox cannot run in benchtape's container: refused before any spend, not
    found out from a session whose every command failed."""
    from benchtape.adapters.codex import own_sandbox_in_container

    chosen = own_sandbox_in_container(bench.harness_config)
    if chosen is None:
        return []
    return [
        f"{sc.where}: scenario {sc.name!r}: codex's own sandbox ({chosen}) cannot run inside benchtape's container (bwrap cannot make namespaces there), "
        "so every command the agent ran would fail; there the container is the fence: choose `--sandbox danger-full-access` in harness_config.args, "
        "or in an evaluation `options: {sandbox: danger-full-access}` for codex"
    ]


def _scripted(bench: BenchSpec, harness: str, sandbox: str | None, noop: bool, env: dict[str, str]) -> Preflight:
    """What a real binary with the scripted model needs: a script the server can play for this
    harness, a HOME whose files are put back after (Claude Code at `workspace`: your ~/.claude
    is, sandbox/home_guard.py; codex's ~/.codex is not) and whose own settings do not send the
    model's requests elsewhere, and the binary the recipes were verified on (another version is
    named, not refused)."""
    from benchtape.core.errors import BadInput
    from benchtape.models.tools import unmapped_for_codex
    from benchtape.spec.script import script_from
    from benchtape.tools.binaries import VERIFIED, identify

    pf = Preflight()
    for sc in bench.scenarios:
        label = f"{sc.where}: scenario {sc.name!r}"
        level = sandbox or sc.sandbox.level
        if level == "none" or (level == "workspace" and harness != "claude-code"):
            pf.gate(f"{label}: a scripted model run needs a private HOME, and level {level!r} uses yours; use `sandbox: home` or `container`")
        elif level == "workspace":
            for why in _routes_elsewhere(Path(env.get("HOME") or Path.home())):
                pf.gate(f"{label}: {why}; use `sandbox: home` or `container`")
        if noop or not sc.mock:
            continue
        try:
            script = script_from(sc.mock, str(sc.where))
        except BadInput as exc:
            pf.blocking.append(f"{label}: its mock: steps cannot be played by the scripted model: {exc.what}")
            continue
        if harness in ("codex", "gemini-cli", "qwen-code", "mini-swe-agent", "opencode", "aider"):
            pf.blocking.extend(f"{label}: {harness} has no tool for {call.tool!r} ({what}); script it as a Bash/Edit step, or run it under claude-code" for call, what in unmapped_for_codex(script))
    binary = bench.harness_config.get("binary")
    if harness in VERIFIED:
        from benchtape.adapters.claude_code import binary_of as claude_binary
        from benchtape.adapters.claude_code import parse_config as claude_config
        from benchtape.adapters.codex import binary_of as codex_binary
        from benchtape.adapters.codex import parse_config as codex_config

        own = getattr(get_adapter(harness), "binary", None)
        path = own(bench.harness_config) if own is not None else claude_binary(claude_config(bench.harness_config)) if harness == "claude-code" else codex_binary(codex_config(bench.harness_config))
        try:
            found = identify(harness, path)
        except BadInput:
            found = None
        if found is not None and found.note:
            pf.notes.append(f"{bench.path}: {found.note}" + (f" (harness_config.binary {binary})" if binary else ""))
    return pf


# Variables that, in the `env` block of your own ~/.claude settings, send Claude Code's model
# requests somewhere other than the scripted server (Claude Code applies that block over its
# process environment): a scripted run at `workspace` would then reach a real model.
MODEL_ROUTES = ("ANTHROPIC_BASE_URL", "ANTHROPIC_BEDROCK_BASE_URL", "ANTHROPIC_VERTEX_BASE_URL", "CLAUDE_CODE_USE_BEDROCK", "CLAUDE_CODE_USE_VERTEX")


def _routes_elsewhere(home: Path) -> list[str]:
    """Why your own ~/.claude settings would route a scripted run's model requests elsewhere."""
    import orjson

    found = []
    for path in sorted((home / ".claude").glob("settings*.json")):
        try:
            doc = orjson.loads(path.read_bytes())
        except (OSError, orjson.JSONDecodeError):
            continue
        block = doc.get("env") if isinstance(doc, dict) else None
        names = [k for k in MODEL_ROUTES if isinstance(block, dict) and k in block]
        if names:
            found.append(f"level 'workspace' uses your own ~/.claude, and {path} sets {', '.join(names)} in its `env`, which would send the scripted model's requests elsewhere")
    return found


def _private_home(bench: BenchSpec, sandbox: str | None) -> Preflight:
    """What Claude Code writes into HOME before it starts -- the first-run answers of an
    interactive session, staged plugins, an agent_env -- needs a HOME that is put back: at
    `none` HOME is yours, untouched by benchtape; at `workspace` your ~/.claude and
    ~/.claude.json are snapshotted and restored (madbench §1.8, §2.3), so the terminal UI's
    first-run answers may go there, but staged plugins may not (plugins/ changes are reported,
    not undone)."""
    pf = Preflight()
    hc = bench.harness_config or {}
    staged = [k for k in ("plugins", "agent_env") if hc.get(k)]
    for sc in bench.scenarios:
        level = sandbox or sc.sandbox.level
        if level not in ("none", "workspace"):
            continue
        what = (["the interactive terminal UI's first-run answers"] if sc.interactive and level == "none" else []) + [f"harness_config.{k}" for k in staged]
        if what:
            pf.gate(f"{sc.where}: scenario {sc.name!r}: {' and '.join(what)} are written into the sandbox HOME, and level {level!r} uses your own; use `sandbox: home` or `container`" + (" (or `interactive: false`)" if sc.interactive and level == "none" else ""))
    return pf


_PROBES: dict[tuple[str, ...], Any] | None = None  # inside probes_once(): what each host probe answered


@contextmanager
def probes_once() -> Iterator[None]:
    """Inside, each probe of the host (tmux's version, the version a binary reports) runs once,
    not once per setup: an evaluation preflights every setup, and 100 setups of one tool asked
    `claude --version` and `tmux -V` 100 times each (4 s of a 100-setup `run --dry-run`).
    Scoped to one preflight: a later one (a binary installed since) asks again."""
    global _PROBES
    outer = _PROBES
    _PROBES = {} if outer is None else outer
    try:
        yield
    finally:
        _PROBES = outer


def _probed(key: tuple[str, ...], probe: Callable[[], Any]) -> Any:
    if _PROBES is None:
        return probe()
    if key not in _PROBES:
        _PROBES[key] = probe()
    return _PROBES[key]


def _identified(tool: str, path: Any) -> Any:
    """The binary `identify` finds, or the BadInput it raises (kept, so a repeated probe says the same)."""
    from benchtape.tools.binaries import identify

    try:
        return identify(tool, path)
    except BadInput as exc:
        return exc


def _interactive(bench: BenchSpec, scenarios: list[ScenarioSpec]) -> Preflight:
    """What Claude Code's terminal UI needs: a terminal host (tmux), and a binary whose version
    is the one whose screens and dialogs benchtape was verified on (another is named, not refused)."""
    pf = Preflight()
    if not scenarios:
        return pf
    from benchtape.sandbox.terminal import tmux_problem

    problem = _probed(("tmux",), tmux_problem)
    if problem:
        names = ", ".join(repr(sc.name) for sc in scenarios[:3]) + (" …" if len(scenarios) > 3 else "")
        pf.blocking.append(f"{bench.path}: interactive scenario(s) {names} (`interactive:` unset means interactive): {problem}; or set `interactive: false` to run them with `claude --print`")
    from benchtape.adapters.base import on_path
    from benchtape.adapters.claude_code import binary_of, parse_config

    try:
        path = binary_of(parse_config(bench.harness_config))
    except BadInput:
        return pf  # the adapter's own preflight names the bad config
    if not on_path(path, dict(os.environ)):
        return pf  # the adapter's own preflight names the missing binary
    found = _probed(("identify", "claude-code", str(path)), lambda: _identified("claude-code", path))
    if isinstance(found, BadInput):
        pf.blocking.append(f"{bench.path}: interactive scenarios drive Claude Code's screens, and {found.what}")
        return pf
    if found.note:
        pf.notes.append(f"{bench.path}: {found.note}; interactive sessions read its screens and dialogs, which may differ")
    return pf


def _images(bench: BenchSpec, name: str, adapter: object, sandbox: str | None) -> Preflight:
    """Whether each `image:` scenario's pictures can reach the model under this harness: the
    ones it cannot send are refused here, before any spend, never at run time. madbench sends
    images under claude-code print mode only; benchtape also sends them under codex (`--image`)
    and the mock (a note says so)."""
    pf = Preflight()
    for sc in bench.scenarios:
        if not sc.image and not sc.generated_images:
            continue
        label = f"{sc.where}: scenario {sc.name!r}"
        if sc.generated_images and sc.generate is None and sc.setup is None:
            pf.blocking.append(f"{label}: `image: generated:{sc.generated_images[0]}` is a picture a staging program writes into $MADBENCH_IMAGE_DIR, and this scenario has no `generate:` (or `setup:`); add one, or point `image:` at a file next to the bench")
        if not getattr(adapter, "takes_images", False):
            pf.blocking.append(f"{label}: harness {name!r} cannot deliver an image; run it under claude-code (print mode), codex or the mock, or drop `image:`")
        elif name == "claude-code" and sc.interactive and (sandbox or sc.sandbox.level) == "container":
            pf.blocking.append(f"{label}: an interactive session attaches the picture by pasting its host path into Claude Code's terminal UI, which a container cannot open; set `interactive: false` (print mode sends the bytes) or use `sandbox: home`")
        elif name == "codex" and (sandbox or sc.sandbox.level) == "container":
            pf.blocking.append(f"{label}: codex is given the picture as a host path (`codex exec --image FILE`), which a container cannot open; use `sandbox: home`, or claude-code, which sends the bytes")
        elif name == "claude-code" and sc.interactive:
            pf.notes.append(f"{label}: madbench refuses `image:` in an interactive scenario (0.37); benchtape pastes the picture's path into Claude Code's terminal UI, which attaches it")
        elif name != "claude-code":
            pf.notes.append(f"{label}: madbench sends `image:` under claude-code only; benchtape sends it under {name} too" + (" (`codex exec --image`)" if name == "codex" else " (the mock checks it received the bytes)"))
    return pf


def _scenario(sc: ScenarioSpec, level: str, harness: str, allow_host_writes: bool, allow_network: bool = False, where: PreflightContext | None = None, solver: bool = False) -> Preflight:
    pf = Preflight()
    label = f"{sc.where}: scenario {sc.name!r}"
    if level == "none":
        if sc.sandbox.level != "none":
            pf.gate(f"{label}: --sandbox none needs the bench itself to name `sandbox: none` as well")
        if not allow_host_writes and not env_flag("ALLOW_HOST_WRITES"):
            pf.gate(f"{label}: `sandbox: none` writes to your real directory; pass --allow-host-writes (or {spelled('ALLOW_HOST_WRITES')}) to consent")
        if sc.testdata is not None:
            pf.gate(f"{label}: `testdata:` cannot be used with sandbox none")
    if level == "container":
        pf.merge(_container(sc, label, allow_network))
    if sc.testdata is not None and not sc.testdata.is_dir():
        what = "is a file, not a folder" if sc.testdata.exists() else "does not exist"
        pf.blocking.append(f"{label}: testdata {sc.testdata} {what} (resolved against the bench file's folder); create it or fix `testdata:`")
    elif sc.cwd and sc.testdata is not None and sc.repo is None and sc.setup is None and sc.generate is None and not (sc.testdata / sc.cwd).is_dir():
        pf.blocking.append(f"{label}: `cwd: {sc.cwd}` does not exist in the testdata ({sc.testdata / sc.cwd}); create it or fix cwd:")
    for key, path in (("setup", sc.setup), ("generate", sc.generate)):
        if path is not None and not os.access(path, os.X_OK):
            pf.blocking.append(f"{label}: `{key}:` {path} is not executable (chmod +x it)")
    if harness == "mock" and sc.mock is None and not solver:
        pf.notes.append(f"{label}: no `mock:` script; the mock echoes the prompt and calls no tools")
    transforms = ([sc.transform] if sc.transform is not None else []) + [t for spec in sc.checks for t in transforms_in(spec)]
    pf.blocking.extend(f"{label}: {m}" for m in transform_problems(transforms, where or PreflightContext(env=dict(os.environ), runtimes=sc.runtimes)))
    pf.notes.extend(f"{label}: {note}" for note in [python_note(transforms)] if note)
    for i, spec in enumerate(sc.checks):
        try:
            build(spec)
        except CheckConfigError as exc:  # no run can grade it: not a finding --skip-preflight skips
            pf.gate(f"{label}: checks[{i}] ({spec.where}): {exc}")
            continue
        pf.blocking.extend(f"{label}: checks[{i}] ({spec.where}): {m}" for m in check_problems(spec, where))
    return pf

def _container(sc: ScenarioSpec, label: str, allow_network: bool = False) -> Preflight:
    pf = Preflight()
    network = sc.sandbox.network or "none"
    if network != "none":
        reach = "the host's own network stack" if network == "host" else f"network {network!r} (and through it, likely the internet)"
        asked = sc.raw.get("network_from") or f"`network: {network}`"  # a Harbor task's: the task.toml key and line
        if allow_network or env_flag("ALLOW_NETWORK"):
            pf.notes.append(f"{label}: {asked} gives the agent {reach}; confirmed by --allow-network")
        else:
            pf.gate(f"{label}: {asked} gives the agent {reach} instead of none; pass --allow-network (or {spelled('ALLOW_NETWORK')}) to confirm")
    try:
        from benchtape.sandbox.container import ContainerError, available, resource_limits
    except ImportError:
        pf.blocking.append(f"{label}: the container sandbox is not available in this build")
        return pf
    try:
        resource_limits(sc.sandbox.resources or None)
    except ContainerError as exc:
        pf.blocking.append(f"{label}: sandbox.resources: {exc}")
        return pf
    ok, why = available()
    if not ok:
        pf.blocking.append(f"{label}: sandbox container needs a running Docker engine: {why}")
        return pf
    from benchtape.sandbox.baseimage import BASE_IMAGE, _image_or_none
    from benchtape.sandbox.container import connect

    image = sc.sandbox.image
    client = connect()
    if image is not None and _image_or_none(client, image) is None:
        pf.blocking.append(f"{label}: image {image!r} is not on this machine and benchtape never pulls; build or load it (docker build / docker load), or drop `image:` to use benchtape's own base image")
    elif image is None and sc.sandbox.dockerfile is None and _image_or_none(client, BASE_IMAGE) is None:
        pf.notes.append(f"{label}: the base image {BASE_IMAGE} is not built yet; the first session builds it (about a second), or run `benchtape sandbox build` now")
    elif sc.sandbox.resources:
        refused = _limits_refused(client, image or BASE_IMAGE, sc.sandbox.resources)
        if refused:
            pf.blocking.append(f"{label}: sandbox.resources: {refused}")
    return pf


_TRIED: dict[str, str | None] = {}


def _limits_refused(client: object, image: str, resources: dict) -> str | None:
    """The engine's verdict on these limits, tried once per process (a throwaway container)."""
    import orjson

    from benchtape.sandbox.container import limits_refused

    key = image + orjson.dumps(resources, option=orjson.OPT_SORT_KEYS, default=str).decode()
    if key not in _TRIED:
        _TRIED[key] = limits_refused(client, image, resources)
    return _TRIED[key]


def check_problems(spec: CheckSpec, where: PreflightContext | None = None) -> list[str]:
    """Construct the check (and any children): a refusal is a blocking finding; so is what its
    type's own preflight finds missing (a runtime, a grader file, a source that does not build)."""
    if where is None:
        try:
            build(spec)
        except CheckConfigError as exc:
            return [str(exc)]
        return []
    return preflight_problems(spec, where)


def native_tool_warnings(bench: BenchSpec, harness: str, who: str | None = None) -> list[str]:
    """A check naming a native tool that `harness` never emits can never match there (a codex
    session has no `Read`): one warning per check and name, with the canonical spelling that
    matches every harness. A harness that declares no names (the mock) is never warned of.
    The one owner of this finding: preflight, `run --dry-run` and `evaluation validate` ask it."""
    from benchtape.checks.common import tool_names
    from benchtape.core.canonical import PREFIX, actions_of, is_canonical, spelling_for

    label = f"{who} ({harness})" if who else f"harness {harness}"
    if harness == "command" and not (bench.harness_config or {}).get("transcript"):
        return _blind_to_calls(bench, label)
    adapter = get_adapter(harness) if known_harness(harness) else None
    emitted = getattr(adapter, "native_tools", None)
    if not emitted:
        return []
    performs = actions_of(emitted, harness)
    silent: frozenset[str] = getattr(adapter, "silent_success", frozenset())
    unknowable = silent | {spelling_for(t) for t in silent}  # what `outcome: ok|error` cannot count on this harness
    out = []
    for sc in bench.scenarios:
        for spec in _walk(sc.checks):
            asked = (spec.args or {}).get("outcome") if isinstance(spec.args, dict) else None
            for name in tool_names(spec):
                if asked in ("ok", "error") and name in unknowable:
                    out.append(
                        f"warning: {spec.where}: {spec.type} counts {name!r} calls with outcome {asked}, and {label} records no outcome for a good {', '.join(sorted(silent))} result "
                        "(madbench's rule: unknown is neither ok nor error): where those calls could change the verdict it is ERROR there; count attempts (drop `outcome:`) to compare harnesses"
                    )
                if is_canonical(name):
                    action = name[len(PREFIX) :].split(":", 1)[0]  # action:mcp:server/tool → mcp
                    if action not in performs and action != "other":
                        out.append(
                            f"warning: {spec.where}: {spec.type} names {name!r}, an action {label} never performs: its calls only ever read as "
                            f"{', '.join(PREFIX + a for a in sorted(performs))} (what else it does goes through them: an edit made by a shell command reads as action:shell), "
                            "so it can never match there"
                        )
                    continue
                if name in emitted or name.startswith("mcp__"):
                    continue
                fit = spelling_for(name)
                lacking = harnesses_without(fit[len(PREFIX) :])
                every = f"every harness but {', '.join(lacking)} (whose calls never read as {fit})" if lacking else "every harness"
                out.append(
                    f"warning: {spec.where}: {spec.type} names the tool {name!r}, which {label} never emits, so it can never match there; "
                    f"write {fit!r} to match {every} (or the {harness} tool's own name)"
                )
    return out


def _blind_to_calls(bench: BenchSpec, label: str) -> list[str]:
    """The checks that read tool calls, under a `command` agent with no `transcript:`, which
    records none: each is NA after the run (checks/registry.py), said before it instead."""
    from benchtape.checks.registry import lookup, reads_calls

    out = []
    for sc in bench.scenarios:
        for spec in _walk(sc.checks):
            try:
                blind = reads_calls(lookup(spec.type).reads)
            except Exception:  # noqa: BLE001 - an unknown type is refused by its own finding
                continue
            if blind:
                out.append(
                    f"warning: {spec.where}: {spec.type} reads the agent's tool calls, and {label} records none without `transcript:`: "
                    "it will be NA (not graded) in every session; give harness_config a `transcript: {path, format}` the agent writes, or drop the check"
                )
    return out


def harnesses_without(action: str) -> list[str]:
    """The known harnesses whose declared tools never read as `action` (mini-swe-agent has no
    edit: its edits are shell commands; aider neither reads nor runs anything): a check on it
    cannot match there, which advice to write it must not hide."""
    from benchtape.core.canonical import actions_of

    out = []
    for name in harness_names():
        if name == "oracle":  # a control that plays the reference fix: advice on checks is for agents
            continue
        try:
            adapter = get_adapter(name) if known_harness(name) else None
        except BadInput:  # a plugin that cannot load is not this bench's harness: `tools list` says why, never this advice
            continue
        tools = getattr(adapter, "native_tools", None)
        if tools and action not in actions_of(tools, name):
            out.append(name)
    return out


def arg_warnings(bench: BenchSpec) -> list[str]:
    """Every `args:` key a check's type never reads (a typo grades with the default, silently):
    one warning each, with the file and line of its check. The one owner of this finding:
    preflight, `list` and `evaluation validate` ask it."""
    return [f"warning: {spec.where}: {finding}" for sc in bench.scenarios for spec in _walk(sc.checks) for finding in unknown_args(spec)]


def judge_problems(bench: BenchSpec, env: dict[str, str]) -> list[str]:
    """Every judge a check will ask must be usable here: a provider that resolves, with its
    key set (an explicit default whose key is unset is an error at run start, as madbench's)."""
    config = bench.judges or JudgesConfig(models=bench.models)
    asked: dict[str | None, CheckSpec] = {}
    for sc in bench.scenarios:
        for spec in _walk(sc.checks):
            if spec.type in JUDGE_TYPE_NAMES:
                args = spec.args if isinstance(spec.args, dict) else {}
                model = args.get("model")
                pid = args.get("judge") if isinstance(args.get("judge"), str) else None
                if pid is None and isinstance(model, str) and model in config.models:
                    pid = f"models:{model}"
                asked.setdefault(pid, spec)
    out = []
    for pid, spec in asked.items():
        try:
            if pid is not None and pid.startswith("models:"):
                m = config.models[pid[len("models:"):]]
                if m.key_missing(env):
                    raise JudgeError(f"model {m.id!r} of models: needs {m.api_key_env}, which is not set")
            else:
                config.provider(pid, env)
        except JudgeError as exc:
            out.append(f"{spec.where}: {spec.type} needs a judge: {exc}")
    return out


def _walk(specs: tuple[CheckSpec, ...] | list[CheckSpec]):
    for spec in specs:
        yield spec
        yield from _walk(spec.checks)


def unwritable(path: Path, *, folder: bool = False) -> str | None:
    """Why `path` (a file, or with `folder` a directory) could not be written, or None.

    Asked before anything runs, so a report that could not be written is found before the
    agents spend, not after. A file goes into a folder that exists (a typo in a folder name
    is not a reason to make new folders, as `cp` and shells agree); a folder (`--report-dir`)
    is made, and its nearest existing ancestor must be a writable directory."""
    if path.exists():
        if folder != path.is_dir():
            return "it exists and is not a folder" if folder else "it is a folder, not a file"
        where = path if folder else path.parent  # a file is replaced through a temporary file beside it
        return None if os.access(where, os.W_OK | os.X_OK) else f"{where} is not writable"
    if not folder and not path.parent.exists():
        near = path.parent
        while not near.exists() and near != near.parent:
            near = near.parent
        if near.is_dir():  # under a file, the message below says so
            return f"its folder {path.parent} does not exist (benchtape makes no folders for a file; create it first)"
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if not parent.is_dir():
        return f"{parent} is a file, not a folder"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"{parent} is not writable"
    return None


def check_outputs(outputs: dict[str, Path | None]) -> None:
    """Every output path named (`--report-json` → its path, …) can be written; else bad input (exit 2), before any spend.
    A name ending in `/` (`--report-dir/`) is a folder."""
    for flag, path in outputs.items():
        if path is None:
            continue
        why = unwritable(Path(path), folder=flag.endswith("/"))
        if why:
            name = flag.rstrip("/")
            raise BadInput(f"{name} {path} cannot be written: {why}", file=str(path), fix=f"pass a writable path to {name} (or fix the folder's permissions)")


def preflight_all(benches: list[BenchSpec], options: RunOptions, ev: EvalSpec | None = None, outputs: dict[str, Path | None] | None = None) -> Preflight:
    """Every bench's findings, deduplicated (an Eval's runs share one bench), and the Eval's unbuilt keys as notes.
    The output paths (`outputs`, flag → path) are checked first: one that cannot be written is bad input."""
    check_outputs(outputs or {})
    total = Preflight()
    for bench in benches:
        if options.scenarios:  # only what will run: a gate of a scenario --scenario left out blocks nothing
            bench = replace(bench, scenarios=[s for s in bench.scenarios if s.name in options.scenarios])
        total.merge(preflight(bench, harness=options.harness, sandbox=options.sandbox, allow_host_writes=options.allow_host_writes, allow_network=options.allow_network, concurrency=options.concurrency, noop=options.noop, model=options.model))
    if ev is not None:
        total.notes.extend(f"not supported in this version, ignored: {f}" for f in ev.not_built)
    total.blocking, total.notes = list(dict.fromkeys(total.blocking)), list(dict.fromkeys(total.notes))  # an Eval's runs share one bench
    total.essential = list(dict.fromkeys(total.essential))
    return total
