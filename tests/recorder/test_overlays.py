"""The tool registry: built-in tools, overlays (user, then project), workflows, and their refusals."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit import write

from benchtape.core.errors import BadInput
from benchtape.spec.overlays import load_registry


def tool_file(folder: Path, name: str, body: str) -> Path:
    return write(folder / ".benchtape" / "tools" / f"{name}.yaml", "apiVersion: benchtape/v1alpha1\nkind: Tool\n" + body)


def user_file(user: Path, name: str, body: str) -> Path:
    return write(user / "tools" / f"{name}.yaml", "apiVersion: benchtape/v1alpha1\nkind: Tool\n" + body)


def test_builtin_registry(tmp_path):
    reg = load_registry(tmp_path, tmp_path / "user")
    assert {"claude-code", "codex", "mock"} <= set(reg.tools) and "plan-build" in reg.workflows
    claude = reg.tools["claude-code"]
    assert claude.harness == "claude-code" and claude.install == {"npm": "@anthropic-ai/claude-code", "binary": "claude"}
    assert claude.models["sonnet-4.6"].id == "claude-sonnet-4-6"
    assert set(claude.options["agents_md"].values) == {"default", "none"} and claude.options["agents_md"].default == "default"
    assert reg.tools["codex"].options["agents_md"].values["none"].args == ("-c", "project_doc_max_bytes=0")
    assert reg.tools["mock"].install is None and reg.tools["mock"].version_problem("1.0.0")


def test_overlay_replaces_model_and_option_entries_wholesale(tmp_path):
    tool_file(
        tmp_path,
        "claude-code",
        """
tool: claude-code
extends: builtin
version: "2.1.328"
models:
  sonnet-4.6: {id: claude-sonnet-4-6, effort: [low]}
options:
  agents_md:
    default: none
    values:
      none: {pre: ["rm -f {workdir}/CLAUDE.md"], env: {X_MODE: "1"}, require_env: {ANTHROPIC_API_KEY: "export it"}}
""",
    )
    reg = load_registry(tmp_path, tmp_path / "user")
    claude = reg.tools["claude-code"]
    assert claude.models["sonnet-4.6"].efforts == ("low",)  # replaced, not merged
    assert "opus-4.6" in claude.models  # other entries stay
    assert list(claude.options["agents_md"].values) == ["none"]
    assert claude.version == "2.1.328"
    effects = claude.effects(claude.option_values({}))
    assert effects.env == (("X_MODE", "1"),) and effects.require_env == (("ANTHROPIC_API_KEY", "export it"),)
    assert claude.sources[-1].endswith(".benchtape/tools/claude-code.yaml")


def test_user_then_project_order_and_a_new_tool_from_another(tmp_path):
    user = tmp_path / "user"
    user_file(user, "claude-code", "tool: claude-code\nextends: builtin\nmodels:\n  fast: {id: user-id}\n")
    tool_file(tmp_path, "claude-code", "tool: claude-code\nextends: builtin\nmodels:\n  fast: {id: project-id}\n")
    tool_file(tmp_path, "claude-plain", "tool: claude-plain\nextends: claude-code\noptions:\n  agents_md: {default: none, values: {none: {pre: ['true']}}}\n")
    reg = load_registry(tmp_path, user)
    assert reg.tools["claude-code"].models["fast"].id == "project-id"
    plain = reg.tools["claude-plain"]
    assert plain.harness == "claude-code" and plain.models["fast"].id == "project-id" and plain.options["agents_md"].default == "none"
    assert plain.install == reg.tools["claude-code"].install  # installs like the tool it extends


def test_enum_form_substitutes_the_value(tmp_path):
    tool_file(tmp_path, "codex", "tool: codex\nextends: builtin\noptions:\n  approval:\n    default: never\n    values: [never, on-request]\n    args: [-c, 'approval_policy={value}']\n")
    opt = load_registry(tmp_path, tmp_path / "user").tools["codex"].options["approval"]
    assert opt.values["on-request"].args == ("-c", "approval_policy=on-request")


@pytest.mark.parametrize(
    ("name", "body", "what", "fix"),
    [
        ("claude-code", "tool: claude-code\nextends: builtin\ninstall: {npm: x}\n", "cannot replace how a tool is installed", "pin a version"),
        ("claude-code", "tool: claude-code\nextends: builtin\nharness: codex\n", "cannot change which harness", None),
        ("x", "tool: x\nextends: claude-cod\n", "`extends: claude-cod` names no tool", "did you mean 'claude-code'?"),
        ("x", "tool: x\n", "names no `harness:` and extends nothing", "add `harness:`"),
        ("y", "tool: codex\nharness: codex\n", "a tool named 'codex' already exists", "extends: builtin"),
        ("z", "tool: zz\nextends: builtin\n", "no tool is named 'zz'", None),
        ("c", "tool: codex\nextends: builtin\noptions:\n  o: {default: c, values: {a: {}, b: {}}}\n", "unknown default 'c' for option 'o'", "valid: a, b"),
        ("c", "tool: codex\nextends: builtin\noptions:\n  o: {default: a, values: {a: {network: {allow: [x]}}}}\n", "unknown key `network`", "remove it: extra egress (berbench's `network.allow`) is not built"),
        ("c", "tool: codex\nextends: builtin\nmodels:\n  m: {effort: [low]}\n", "model 'm' needs `id:`", None),
        ("c", "tool: codex\nextends: builtin\nversion: 1.2\n", "version '1.2'", None),
        ("c", "tool: codex\nextends: builtin\ninvoke: [x]\n", "unknown key `invoke`", "overlays cannot replace it"),
    ],
)
def test_overlay_refusals(tmp_path, name, body, what, fix):
    path = tool_file(tmp_path, name, body)
    with pytest.raises(BadInput) as info:
        load_registry(tmp_path, tmp_path / "user")
    assert what in info.value.what and info.value.file == str(path), info.value.render()
    assert info.value.line is not None
    if fix:
        assert fix in (info.value.fix or ""), info.value.render()


def test_a_tool_whose_harness_is_not_installed_is_refused_only_when_picked(tmp_path):
    """A Tool file for a plugin's harness loads on a machine without the plugin (so commands
    that never use it still run); picking it, or what extends or runs it, says why at its line."""
    path = tool_file(tmp_path, "tiny", "tool: tiny\nharness: tiny\nmodels:\n  default: {id: tiny-default}\n")
    tool_file(tmp_path, "tiny-plus", "tool: tiny-plus\nextends: tiny\n")
    tool_file(tmp_path, "typo", "tool: typo\nharness: claude\n")
    write(tmp_path / ".benchtape" / "tools" / "w.yaml", "apiVersion: benchtape/v1alpha1\nkind: Workflow\ntool: w\ntype: workflow\nsteps: [{name: a, tool: tiny}]\n")
    reg = load_registry(tmp_path, tmp_path / "user")
    assert {"tiny", "tiny-plus", "w"} <= set(reg.unavailable) and "tiny" not in reg.tools and "w" not in reg.workflows
    assert reg.get("claude-code") is reg.tools["claude-code"] and "tiny" in reg.names()
    for name in ("tiny", "tiny-plus", "w"):
        with pytest.raises(BadInput) as info:
            reg.get(name)
        assert (info.value.what, info.value.file, info.value.line) == ("unknown harness 'tiny'", str(path), 4), info.value.render()
        assert "install the plugin that provides harness 'tiny'" in (info.value.fix or "")
    with pytest.raises(BadInput) as info:
        reg.get("typo")
    assert "did you mean 'claude-code'?" in (info.value.fix or "")


def test_a_malformed_tool_file_for_a_missing_harness_still_fails_to_load(tmp_path):
    tool_file(tmp_path, "tiny", "tool: tiny\nharness: tiny\nmodels:\n  default: {effort: [low]}\n")
    with pytest.raises(BadInput, match="model 'default' needs `id:`"):
        load_registry(tmp_path, tmp_path / "user")


@pytest.mark.parametrize(
    ("body", "what"),
    [
        ("tool: w\nsteps: [{name: a, tool: claude-code}]\n", "needs `type: workflow`"),
        ("tool: w\ntype: workflow\nsteps: [{name: a, tool: claud-code}]\n", "unknown tool 'claud-code'"),
        ("tool: w\ntype: workflow\nsteps: [{name: a, tool: claude-code, model: gpt-5.5}]\n", "unknown model 'gpt-5.5' for claude-code"),
        ("tool: w\ntype: workflow\nsteps: [{name: a, tool: claude-code}, {name: a, tool: codex}]\n", "two steps are named 'a'"),
        ("tool: w\ntype: workflow\nsteps: [{name: a, tool: plan-build}]\n", "runs a tool, not a workflow"),
        ("tool: w\ntype: workflow\nsteps: [{name: a, tool: claude-code, timeout: 30}]\n", "has no unit"),
        ("tool: w\ntype: workflow\nsteps: []\n", "non-empty `steps:`"),
    ],
)
def test_workflow_refusals(tmp_path, body, what):
    path = write(tmp_path / ".benchtape" / "tools" / "w.yaml", "apiVersion: benchtape/v1alpha1\nkind: Workflow\n" + body)
    with pytest.raises(BadInput) as info:
        load_registry(tmp_path, tmp_path / "user")
    assert what in info.value.what and info.value.file == str(path), info.value.render()


def test_only_an_evaluation_that_uses_a_missing_plugin_is_refused(tmp_path):
    from evalkit import evaluation, make_project

    from benchtape.spec.evaluation import load_evaluation

    project = make_project(tmp_path / "proj")
    path = tool_file(project, "tiny", "tool: tiny\nharness: tiny\nmodels:\n  default: {id: tiny-default}\n")
    evaluation(project, "plain", "tools:\n  - {tool: codex, model: gpt-5.5, effort: medium}\n")
    evaluation(project, "small", "tools:\n  - {tool: tiny, model: default}\n")
    assert [a.label for a in load_evaluation("plain", project, user=tmp_path / "user").arms] == ["codex@latest gpt-5.5/medium"]
    with pytest.raises(BadInput) as info:
        load_evaluation("small", project, user=tmp_path / "user")
    assert (info.value.what, info.value.file, info.value.line) == ("unknown harness 'tiny'", str(path), 4), info.value.render()
