"""The tool registry an Evaluation picks setups from: `kind: Tool` definitions and overlays,
and `kind: Workflow` pipelines.

A Tool is a harness (an adapter: mock, claude-code, codex) plus the models it may run
(key → API id and the efforts it accepts) and named options whose values each carry
effects (`args`, `env`, `pre`, `post`, `require_env`), so "claude-code with and without
CLAUDE.md" is one axis of an evaluation rather than two hand-edited bench files.

Registry order: built-in (shipped with benchtape) → user (~/.config/benchtape/tools) →
project (.benchtape/tools). An overlay says `extends: builtin` to change the tool of its
own name, or `extends: OTHER` to define a new tool from another; its model and option
entries replace the same keys wholesale (no field merge). Overlays cannot replace how a
tool is installed or which harness runs it.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from benchtape.core.errors import BadInput, closest
from benchtape.core.harnesses import harness_names
from benchtape.spec.documents import HEADER_KEYS, DocLoader, load_document
from benchtape.spec.yamlsrc import LineDict

BUILTIN_DIR = Path(__file__).resolve().parent / "builtin"
LATEST = "latest"
PINNED = re.compile(r"^\d+\.\d+\.\d+(?:[-+][0-9A-Za-z.-]+)?$")

TOOL_KEYS = HEADER_KEYS | {"tool", "description", "extends", "harness", "version", "install", "models", "options", "protected_paths", "state_paths"}
MODEL_KEYS = {"id", "effort", "cutoff", "cutoff_source"}
CUTOFF = re.compile(r"^\d{4}-(0[1-9]|1[0-2])(-\d{2})?$")  # a model's training-data cutoff: YYYY-MM or YYYY-MM-DD
OPTION_KEYS = {"default", "values", "args", "description"}
EFFECT_KEYS = {"args", "env", "pre", "post", "require_env", "description"}
INSTALL_KEYS = {"npm", "pypi", "binary"}  # the registry package a pinned version installs from (npm, or PyPI into a venv of its own), and its executable
WORKFLOW_KEYS = HEADER_KEYS | {"tool", "type", "description", "steps"}
WORKFLOW_STEP_KEYS = {"name", "tool", "model", "effort", "options", "prompt", "timeout"}


@dataclass(frozen=True)
class Effects:
    """What choosing one option value does to a session. `env` is part of the cell identity."""

    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    pre: tuple[str, ...] = ()
    post: tuple[str, ...] = ()
    require_env: tuple[tuple[str, str], ...] = ()  # host variable → hint when it is unset

    def plus(self, other: Effects) -> Effects:
        env = dict(self.env)
        env.update(other.env)
        need = dict(self.require_env)
        need.update(other.require_env)
        return Effects(self.args + other.args, tuple(sorted(env.items())), self.pre + other.pre, self.post + other.post, tuple(sorted(need.items())))

    def to_dict(self) -> dict[str, Any]:
        return {"args": list(self.args), "env": dict(self.env), "pre": list(self.pre), "post": list(self.post), "require_env": dict(self.require_env)}


@dataclass(frozen=True)
class Option:
    name: str
    default: str
    values: dict[str, Effects]


@dataclass(frozen=True)
class Model:
    key: str
    id: str
    efforts: tuple[str, ...]
    cutoff: str | None = None  # training-data cutoff where published (YYYY-MM[-DD]): tasks fixed before it may have been seen
    cutoff_source: str | None = None  # the vendor's page that publishes it (https://…), said beside every flag it raises


@dataclass
class ToolDef:
    name: str
    harness: str
    models: dict[str, Model] = field(default_factory=dict)
    options: dict[str, Option] = field(default_factory=dict)
    version: str = LATEST
    install: dict[str, str] | None = None  # {npm|pypi: package, binary: name}: pinned versions can be installed
    protected_paths: tuple[str, ...] = ()  # the agent must not change these (guard_violation)
    state_paths: tuple[str, ...] = ()  # the harness's own files under HOME (= the workspace at level home): not the agent's change
    description: str | None = None
    sources: tuple[str, ...] = ()  # the files that defined it, in registry order

    def version_problem(self, version: str) -> str | None:
        """Why `version` cannot be asked of this tool, or None."""
        if version == LATEST:
            return None
        if self.install is None:
            return f"{self.name} runs the version benchtape ships; only `latest` is valid"
        if not PINNED.match(version):
            return "a pinned version is MAJOR.MINOR.PATCH (e.g. 2.1.0); quote it in YAML so 2.10 does not become a number"
        return None

    def option_values(self, chosen: dict[str, str]) -> dict[str, str]:
        """Every option's value: the chosen ones, the default for the rest (omitted options never vary)."""
        return {name: chosen.get(name, opt.default) for name, opt in sorted(self.options.items())}

    def effects(self, values: dict[str, str]) -> Effects:
        out = Effects()
        for name in sorted(values):
            out = out.plus(self.options[name].values[values[name]])
        return out


@dataclass(frozen=True)
class WorkflowStep:
    name: str
    tool: str
    model: str | None = None
    effort: str | None = None
    options: tuple[tuple[str, str], ...] = ()
    prompt: str | None = None  # template; empty or absent means the task prompt
    timeout: float | None = None  # nested inside the cell timeout, never extending it


@dataclass
class WorkflowDef:
    name: str
    steps: tuple[WorkflowStep, ...]
    description: str | None = None
    sources: tuple[str, ...] = ()


class Unavailable(BadInput):
    """A tool whose harness is not installed here (a plugin's), or a tool or workflow built on
    one. Loading keeps it aside rather than failing: a Tool file for a plugin must not stop
    commands that never use it on a machine without the plugin. Raised when it is picked."""


@dataclass
class Registry:
    tools: dict[str, ToolDef] = field(default_factory=dict)
    workflows: dict[str, WorkflowDef] = field(default_factory=dict)
    unavailable: dict[str, Unavailable] = field(default_factory=dict)  # name → why it cannot run here (file:line)

    def names(self) -> list[str]:
        """Every name an evaluation may pick, the unavailable ones too: picking one says why it
        cannot run (`get`), not that it does not exist."""
        return sorted(set(self.tools) | set(self.workflows) | set(self.unavailable))

    def get(self, name: str) -> ToolDef | WorkflowDef | None:
        """The tool or workflow of that name; Unavailable when its harness is not installed."""
        if name in self.unavailable:
            raise self.unavailable[name]
        return self.tools.get(name) or self.workflows.get(name)


# ---------------------------------------------------------------- where they live


# A project's documents live in `.benchtape/` (benchtape writes there) or in berbench's own
# layout, `.ber/bench/` (read beside it, found by name like its own); the user's likewise.
PROJECT_LAYOUTS = (".benchtape", ".ber/bench")
USER_LAYOUTS = ("benchtape", "ber/bench")


def user_config_dir() -> Path:
    """~/.config/benchtape (or $XDG_CONFIG_HOME/benchtape): the user's overlays and pricing."""
    return _user_base() / USER_LAYOUTS[0]


def user_config_dirs(user: Path | None = None) -> list[Path]:
    """The user's config folders in precedence order, weakest first: berbench's, then benchtape's
    (`user`, when given, is the one folder a caller or a test chose)."""
    if user is not None:
        return [user]
    base = _user_base()
    return [base / USER_LAYOUTS[1], base / USER_LAYOUTS[0]]


def _user_base() -> Path:
    return Path(os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config"))


def project_config_dir(project: Path) -> Path:
    """Where benchtape writes a project's documents: `.benchtape/`."""
    return project / PROJECT_LAYOUTS[0]


def project_config_dirs(project: Path) -> list[Path]:
    """Every folder a project's documents are read from, weakest first: `.ber/bench/`, then
    `.benchtape/` (a name found in both is `.benchtape/`'s)."""
    return [project / PROJECT_LAYOUTS[1], project / PROJECT_LAYOUTS[0]]


def registry_sources(project: Path | None, user: Path | None) -> list[tuple[str, Path]]:
    """(source label, tools folder) in registry order."""
    out = [("builtin", BUILTIN_DIR / "tools")]
    out.extend(("user", folder / "tools") for folder in user_config_dirs(user))
    if project is not None:
        out.extend(("project", folder / "tools") for folder in project_config_dirs(project))
    return out


def load_registry(project: Path | None = None, user: Path | None = None) -> Registry:
    """Every tool and workflow, built-in first, then the user's overlays, then the project's."""
    reg = Registry()
    pending_workflows: list[tuple[DocLoader, LineDict]] = []
    for source, folder in registry_sources(project, user):
        docs = []
        paths = sorted(folder.glob("*.yaml")) + sorted(folder.glob("*.yml")) if folder.is_dir() else []
        for path in paths:
            ld, doc, kind = load_document(path, ("Tool", "Workflow"))
            if kind == "Workflow":
                pending_workflows.append((ld, doc))
            else:
                docs.append((ld, ld.strict(doc, TOOL_KEYS, "a Tool", extra_hint={"type": "a workflow is `kind: Workflow`", "invoke": "how a tool is invoked is its harness's; overlays cannot replace it"})))
        _apply_tools(reg, docs, source)
    for ld, doc in pending_workflows:
        try:
            wf = _workflow(ld, doc, reg)
        except Unavailable as missing:  # a step runs a tool whose harness is not installed here
            reg.unavailable[str(doc.get("tool"))] = missing
            continue
        if wf.name in reg.tools:
            raise ld.err(f"workflow {wf.name!r} has the name of a tool", doc, "tool", "give the workflow its own name")
        reg.workflows[wf.name] = wf
    return reg


# ---------------------------------------------------------------- tools


def _apply_tools(reg: Registry, docs: list[tuple[DocLoader, LineDict]], source: str) -> None:
    """Apply one source's documents; an overlay may extend a tool another file of the same source defines."""
    waiting = list(docs)
    while waiting:
        progressed = False
        for ld, doc in list(waiting):
            base = doc.get("extends")
            if base not in (None, "builtin") and str(base) not in reg.tools and str(base) not in reg.unavailable:
                continue
            _register(reg, ld, doc, source)
            waiting.remove((ld, doc))
            progressed = True
        if not progressed:
            ld, doc = waiting[0]
            base = str(doc.get("extends"))
            near = closest(base, sorted(reg.tools))
            raise ld.err(f"`extends: {base}` names no tool", doc, "extends", f"did you mean {near!r}?" if near else f"tools: {', '.join(sorted(reg.tools))}")


def _register(reg: Registry, ld: DocLoader, doc: LineDict, source: str) -> None:
    """Add one Tool document's tool, or keep it aside as unavailable when its harness (or the
    tool it extends) is not installed here; a later definition of the name replaces either."""
    try:
        tool = _tool(ld, doc, reg, source)
    except Unavailable as missing:
        reg.tools.pop(str(doc.get("tool")), None)
        reg.unavailable[str(doc.get("tool"))] = missing
        return
    reg.unavailable.pop(tool.name, None)
    reg.tools[tool.name] = tool


def _unknown_harness(ld: DocLoader, doc: LineDict, harness: str, known: list[str]) -> Unavailable:
    """Why a tool whose harness is not installed cannot run, at its `harness:` line, with the
    plugin to install (or the built-in harness a typo meant)."""
    near = closest(harness, known)
    fix = f"install the plugin that provides harness {harness!r} (a package with a `benchtape.harnesses` entry point named {harness}; `benchtape doctor` lists the installed ones)"
    if near:
        fix = f"did you mean {near!r}? Or {fix}"
    err = ld.err(f"unknown harness {harness!r}", doc, "harness", fix)
    return Unavailable(err.what, file=err.file, line=err.line, fix=err.fix)


def _tool(ld: DocLoader, doc: LineDict, reg: Registry, source: str) -> ToolDef:
    name = doc.get("tool")
    if not isinstance(name, str) or not name.strip():
        raise ld.err("a Tool needs `tool:` (its name)", doc, None, "e.g. `tool: claude-code`")
    if "/" in name or name != name.strip():
        raise ld.err(f"tool name {name!r} may not contain `/` or surrounding spaces", doc, "tool")
    if "install" in doc and source != "builtin":
        raise ld.err("an overlay cannot replace how a tool is installed", doc, "install", "drop `install:`; pin a version with `version:` instead")
    extends = doc.get("extends")
    if extends is not None and str(name if extends == "builtin" else extends) in reg.unavailable:
        raise reg.unavailable[str(name if extends == "builtin" else extends)]  # changes or derives from a tool that cannot run here
    if extends == "builtin":
        if name not in reg.tools:
            near = closest(name, sorted(reg.tools))
            raise ld.err(f"`extends: builtin` but no tool is named {name!r}", doc, "tool", f"did you mean {near!r}?" if near else "drop `extends:` and give `harness:` to define a new tool")
        if "harness" in doc:
            raise ld.err("an overlay cannot change which harness runs the tool", doc, "harness", "drop `harness:`, or define a new tool with `extends: <tool>` and its own name")
        base = reg.tools[name]
    elif extends is not None:
        if name in reg.tools:
            raise ld.err(f"a tool named {name!r} already exists", doc, "tool", "to change it, write `extends: builtin`; to derive a new tool, give it a new name")
        if "harness" in doc:
            raise ld.err("a tool that extends another runs that tool's harness", doc, "harness", "drop `harness:`")
        base = replace(reg.tools[str(extends)], name=name, sources=())
    else:
        if name in reg.tools:
            raise ld.err(f"a tool named {name!r} already exists", doc, "tool", "to change it, add `extends: builtin`")
        harness = doc.get("harness")
        known = harness_names()
        if harness is None:
            raise ld.err(f"tool {name!r} names no `harness:` and extends nothing", doc, None, f"add `harness:` ({', '.join(known)}), or `extends: <tool>`")
        base = ToolDef(name=name, harness=str(harness))
    tool = replace(base, models=dict(base.models), options=dict(base.options), sources=base.sources + (ld.file,))
    if doc.get("description") is not None:
        tool.description = str(doc["description"])
    if "install" in doc:
        inst = ld.strict(ld.mapping(doc["install"], "`install:`", doc, "install"), INSTALL_KEYS, "`install:`")
        tool.install = {k: str(v) for k, v in inst.items()}
    for key, node in (ld.mapping(doc.get("models"), "`models:`", doc, "models")).items():
        tool.models[str(key)] = _model(ld, str(key), node, doc.get("models"))
    for key, node in (ld.mapping(doc.get("options"), "`options:`", doc, "options")).items():
        tool.options[str(key)] = _option(ld, str(key), node, doc.get("options"))
    if "protected_paths" in doc:
        tool.protected_paths = tuple(ld.strings(doc, "protected_paths", "`protected_paths:`"))
    if "state_paths" in doc:
        tool.state_paths = tuple(ld.strings(doc, "state_paths", "`state_paths:`"))
    if "version" in doc:
        version = str(doc["version"])
        problem = tool.version_problem(version)
        if problem:
            raise ld.err(f"version {version!r}: {problem}", doc, "version")
        tool.version = version
    if tool.harness not in harness_names():  # the rest of the file is checked first: only the missing plugin is deferred
        raise _unknown_harness(ld, doc, tool.harness, harness_names())
    return tool


def _model(ld: DocLoader, key: str, node: Any, parent: Any) -> Model:
    spec = ld.strict(ld.mapping(node, f"model {key!r}", parent, key), MODEL_KEYS, f"model {key!r}")
    api_id = spec.get("id")
    if not isinstance(api_id, str) or not api_id.strip():
        raise ld.err(f"model {key!r} needs `id:` (the API model id the harness is given)", spec, None, f"e.g. `{key}: {{id: claude-sonnet-4-6, effort: [low, medium, high]}}`")
    efforts = ld.axis(spec, "effort", f"model {key!r} `effort`") or []
    cutoff = spec.get("cutoff")
    if cutoff is not None and (not isinstance(cutoff, str) or not CUTOFF.match(cutoff)):
        raise ld.err(f"model {key!r} `cutoff: {cutoff!r}` is not a date", spec, "cutoff", 'quote it as YYYY-MM or YYYY-MM-DD: `cutoff: "2025-07"`')
    source = spec.get("cutoff_source")
    if source is not None and (not isinstance(source, str) or not source.startswith("https://")):
        raise ld.err(f"model {key!r} `cutoff_source: {source!r}` is not a web address", spec, "cutoff_source", "the https:// address of the vendor's page that publishes the cutoff")
    if source is not None and cutoff is None:
        raise ld.err(f"model {key!r} names a `cutoff_source` but no `cutoff`", spec, "cutoff_source", 'add `cutoff: "YYYY-MM"` as that page gives it, or drop `cutoff_source`')
    return Model(key=key, id=api_id, efforts=tuple(efforts), cutoff=cutoff, cutoff_source=source)


def _option(ld: DocLoader, name: str, node: Any, parent: Any) -> Option:
    spec = ld.strict(ld.mapping(node, f"option {name!r}", parent, name), OPTION_KEYS, f"option {name!r}")
    values_node = spec.get("values")
    values: dict[str, Effects] = {}
    if isinstance(values_node, list):  # the enum form: one `args:` template with `{value}`
        template = ld.strings(spec, "args", f"option {name!r} `args`")
        for value in ld.axis(spec, "values", f"option {name!r} `values`") or []:
            values[value] = Effects(args=tuple(a.replace("{value}", value) for a in template))
    else:
        if "args" in spec:
            raise ld.err(f"option {name!r}: option-level `args:` needs `values:` as a list (the `{{value}}` form)", spec, "args", "move the args under each value")
        for value, effect in ld.mapping(values_node, f"option {name!r} `values`", spec, "values").items():
            values[str(value)] = _effects(ld, f"option {name}={value}", effect, values_node, str(value))
    if not values:
        raise ld.err(f"option {name!r} has no values", spec, "values", "list its values, e.g. `values: {default: {}, none: {pre: [...]}}`")
    default = spec.get("default")
    if default is None:
        raise ld.err(f"option {name!r} has no `default:`", spec, None, f"add `default:` naming one of {', '.join(values)} (the value used when an evaluation does not list the option)")
    ld.choose(str(default), list(values), "default", spec, "default", of=f"for option {name!r}")
    return Option(name=name, default=str(default), values=values)


def _effects(ld: DocLoader, what: str, node: Any, parent: Any, key: str) -> Effects:
    spec = ld.strict(ld.mapping(node, what, parent, key), EFFECT_KEYS, what, extra_hint={"network": "remove it: extra egress (berbench's `network.allow`) is not built, and benchtape's containers run with network none"})
    return Effects(
        args=tuple(ld.strings(spec, "args", f"{what} `args`")),
        env=tuple(sorted(ld.string_map(spec, "env", f"{what} `env`").items())),
        pre=tuple(ld.strings(spec, "pre", f"{what} `pre`")),
        post=tuple(ld.strings(spec, "post", f"{what} `post`")),
        require_env=tuple(sorted(ld.string_map(spec, "require_env", f"{what} `require_env`").items())),
    )


# ---------------------------------------------------------------- workflows


def _workflow(ld: DocLoader, doc: LineDict, reg: Registry) -> WorkflowDef:
    doc = ld.strict(doc, WORKFLOW_KEYS, "a Workflow")
    name = doc.get("tool")
    if not isinstance(name, str) or not name.strip():
        raise ld.err("a Workflow needs `tool:` (the name evaluations use)", doc, None, "e.g. `tool: plan-build`")
    if doc.get("type") != "workflow":
        raise ld.err("a Workflow needs `type: workflow`", doc, "type" if "type" in doc else None, "add `type: workflow`")
    steps_node = doc.get("steps")
    if not isinstance(steps_node, list) or not steps_node:
        raise ld.err("a Workflow needs a non-empty `steps:` list", doc, "steps", "e.g. `steps: [{name: plan, tool: claude-code}, {name: build, tool: claude-code}]`")
    steps: list[WorkflowStep] = []
    for i, node in enumerate(steps_node):
        spec = ld.strict(ld.mapping(node, f"step #{i + 1}", steps_node), WORKFLOW_STEP_KEYS, f"workflow step #{i + 1}")
        step_name = spec.get("name")
        if not isinstance(step_name, str) or not step_name.strip():
            raise ld.err(f"workflow step #{i + 1} needs `name:`", spec, None, "a stable key that evaluations override under `steps:`")
        if any(s.name == step_name for s in steps):
            raise ld.err(f"two steps are named {step_name!r}", spec, "name", "give each step a unique name")
        tool_name = spec.get("tool")
        if not isinstance(tool_name, str):
            raise ld.err(f"step {step_name!r} needs `tool:`", spec, None, f"one of {', '.join(sorted(reg.tools))}")
        if tool_name in reg.workflows or tool_name == name:
            raise ld.err(f"step {step_name!r}: a workflow step runs a tool, not a workflow", spec, "tool")
        if tool_name in reg.unavailable:
            raise reg.unavailable[tool_name]
        tool = reg.tools[ld.choose(tool_name, sorted(reg.tools), "tool", spec, "tool")]
        model = str(spec["model"]) if spec.get("model") is not None else None
        if model is not None:
            ld.choose(model, sorted(tool.models), "model", spec, "model", of=f"for {tool.name}")
        effort = str(spec["effort"]) if spec.get("effort") is not None else None
        if effort is not None and model is not None:
            ld.choose(effort, list(tool.models[model].efforts), "effort", spec, "effort", of=f"for {model}")
        options = {}
        for opt, value in ld.string_map(spec, "options", f"step {step_name!r} `options`").items():
            known = ld.choose(opt, sorted(tool.options), "option", spec.get("options"), opt, of=f"of {tool.name}")
            options[known] = ld.choose(value, list(tool.options[known].values), "value", spec.get("options"), opt, of=f"for option {opt}")
        prompt = spec.get("prompt")
        if prompt is not None and not isinstance(prompt, str):
            raise ld.err(f"step {step_name!r}: `prompt:` must be a string (a template with {{prompt}}, {{workdir}}, {{handover}})", spec, "prompt")
        timeout = ld.duration(spec.get("timeout"), spec, "timeout", None)
        steps.append(WorkflowStep(step_name, tool.name, model, effort, tuple(sorted(options.items())), prompt or None, timeout))
    return WorkflowDef(name=name, steps=tuple(steps), description=doc.get("description"), sources=(ld.file,))

