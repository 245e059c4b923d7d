"""Cell identity: every input that can change a session changes the id; nothing else does
(a moved project, an edited check); setup effects that cannot be content-addressed make a
cell never reusable."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from evalkit import evaluation, make_project, write

from benchtape.spec.bench import load_bench
from benchtape.spec.evaluation import Cell, load_evaluation
from benchtape.spec.identity import PreEffects, SandboxPolicy, canonical, cell_identity, sandbox_policy, step_config, task_hash, workspace_manifest

VERSIONS = {"claude-code": "2.1.328", "codex": "0.169.0", "mock": "0.1.0"}
BLOCKS = """
attempts: 2
tools:
  - tool: claude-code
    model: [sonnet-5, opus-5]
    effort: [medium, high]
    options: {agents_md: [default, none]}
  - tool: codex
    model: gpt-5.6-terra
    effort: medium
"""


def ids(project: Path, body: str = BLOCKS, versions: dict | None = None, user: Path | None = None) -> list[str]:
    """Every cell's id (pre effects: none captured, i.e. the pre commands changed nothing)."""
    evaluation(project, "e", body)
    ev = load_evaluation("e", project, user=user or project / "no-user")
    out = []
    for cell in ev.cells():
        pre = PreEffects.between({}, {}) if cell.arm.all_pre() else None
        out.append(cell_identity(cell, versions=versions or VERSIONS, task_digest=task_hash(cell.task), sandbox=sandbox_policy(cell.task.scenario), pre=pre).id)
    return out


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def test_every_cell_has_its_own_stable_id(project):
    first = ids(project)
    assert len(first) == len(set(first)) == 3 * (8 + 1) * 2
    assert ids(project) == first
    assert all(len(i) == 64 for i in first)


def test_location_and_checks_are_not_inputs(project, tmp_path):
    before = ids(project)
    moved = tmp_path / "elsewhere" / "proj"
    shutil.copytree(project, moved)
    assert ids(moved) == before
    bench = moved / "madbench.yaml"
    bench.write_text(bench.read_text().replace('value: "calc"', 'value: "calculator"'))
    assert ids(moved) == before  # a new check re-grades; it never re-runs


@pytest.mark.parametrize(
    ("edit", "tasks_changed"),
    [
        (lambda p: (p / "madbench.yaml").write_text((p / "madbench.yaml").read_text().replace("make add() return the sum", "make add() return a+b")), 1),
        (lambda p: (p / "calc" / "calc.py").write_text("def add(a, b):\n    return 0\n"), 3),
        (lambda p: (p / "calc" / "NOTES.md").write_text("a new testdata file\n"), 3),
    ],
    ids=["prompt", "testdata-content", "testdata-new-file"],
)
def test_task_inputs_change_the_id(project, edit, tasks_changed):
    before = set(ids(project))
    edit(project)
    after = set(ids(project))
    assert len(before - after) == tasks_changed * (8 + 1) * 2  # every arm and attempt of the edited task(s)


def test_a_setup_change_changes_only_its_cells(project):
    base = ids(project)
    changed = ids(project, BLOCKS.replace("effort: medium\n", "effort: high\n"))  # codex's block only
    assert len(set(base) - set(changed)) == 3 * 2  # the codex arm's cells, every task and attempt
    assert ids(project, versions={**VERSIONS, "codex": "0.170.0"}) != base
    assert len(set(base) & set(ids(project, versions={**VERSIONS, "codex": "0.170.0"}))) == 3 * 8 * 2


def test_option_env_is_an_input(project, tmp_path):
    base = ids(project)
    write(
        project / ".benchtape" / "tools" / "codex.yaml",
        (project / ".benchtape" / "tools" / "codex.yaml").read_text()
        + "options:\n  agents_md:\n    default: default\n    values:\n      default: {env: {CODEX_FLAVOUR: bedrock}}\n      none: {args: [-c, project_doc_max_bytes=0]}\n",
    )
    assert len(set(base) - set(ids(project))) == 3 * 2


def test_sandbox_attempt_and_pre_are_inputs(project):
    evaluation(project, "p", "tools:\n  - {tool: mock, model: scripted}\n")
    ev = load_evaluation("p", project, user=project / "no-user")
    cell = ev.cells()[0]
    digest = task_hash(cell.task)
    home = cell_identity(cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host"))
    assert cell_identity(cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("container", "none")).id != home.id
    assert cell_identity(cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("container", "bridge")).id != cell_identity(cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("container", "none")).id
    second = Cell(cell.arm, cell.task, 2)
    assert cell_identity(second, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host")).id != home.id
    assert home.reusable and home.inputs["attempt"] == 1

    evaluation(project, "q", "tools:\n  - {tool: mock, model: scripted, pre: ['echo hi > {workdir}/hi.txt']}\n")
    pre_cell = load_evaluation("q", project, user=project / "no-user").cells()[0]
    with pytest.raises(ValueError, match="capture their effects"):
        cell_identity(pre_cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host"))
    wrote = PreEffects.between({"calc.py": "a"}, {"calc.py": "a", "hi.txt": "b"})
    other = PreEffects.between({"calc.py": "a"}, {"calc.py": "a", "hi.txt": "c"})
    one = cell_identity(pre_cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host"), pre=wrote)
    assert one.id != home.id and one.reusable
    assert cell_identity(pre_cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host"), pre=other).id != one.id
    escaped = cell_identity(pre_cell, versions=VERSIONS, task_digest=digest, sandbox=SandboxPolicy("home", "host"), pre=PreEffects.not_capturable("wrote outside the workspace: ~/.npmrc"))
    assert not escaped.reusable and escaped.why_not == "wrote outside the workspace: ~/.npmrc"


def test_pre_effects_are_captured_from_real_trees(tmp_path):
    ws = tmp_path / "ws"
    write(ws / "a.txt", "one\n")
    before = workspace_manifest(ws)
    write(ws / "b.txt", "two\n")
    (ws / "a.txt").unlink()
    effects = PreEffects.between(before, workspace_manifest(ws))
    assert [p for p, _ in effects.changes] == ["a.txt", "b.txt"]
    assert dict(effects.changes)["a.txt"] is None


def test_pinned_and_resolved_versions_are_checked(project):
    evaluation(project, "v", "tools:\n  - {tool: claude-code, tool_version: '2.1.0', model: sonnet-5}\n")
    cell = load_evaluation("v", project, user=project / "no-user").cells()[0]
    with pytest.raises(ValueError, match="pinned to 2.1.0 but resolved to 2.1.328"):
        cell_identity(cell, versions=VERSIONS, task_digest="t", sandbox=SandboxPolicy("home", "host"))
    with pytest.raises(ValueError, match="no resolved version"):
        cell_identity(cell, versions={}, task_digest="t", sandbox=SandboxPolicy("home", "host"))
    ok = cell_identity(cell, versions={"claude-code": "2.1.0"}, task_digest="t", sandbox=SandboxPolicy("home", "host"))
    assert ok.inputs["setup"]["steps"][0]["tool_version"] == {"asked": "2.1.0", "resolved": "2.1.0"}


def test_canonical_json_refuses_what_is_not_json():
    assert canonical({"b": 1, "a": [1, 2]}) == b'{"a":[1,2],"b":1}'
    with pytest.raises(TypeError):
        canonical({"p": Path("/home/x")})
    with pytest.raises(TypeError):
        canonical({"s": {1, 2}})


def test_step_config_applies_the_arm_to_the_bench_harness_config(project):
    write(
        project / "claude.yaml",
        "description: c\nharness: claude-code\nharness_config:\n  model: claude-haiku-4-5\n  effort: low\n  args: [--permission-mode, bypassPermissions]\n  agent_env: calc\nscenarios:\n  - {name: s, prompt: p, checks: [{type: contains, value: p}]}\n",
    )
    evaluation(project, "c", "bench: claude.yaml\ntools:\n  - {tool: claude-code, model: sonnet-5, effort: high, options: {user_settings: project}}\n  - {tool: codex, model: gpt-5.6-terra}\n")
    ev = load_evaluation("c", project, user=project / "no-user")
    bench = load_bench(project / "claude.yaml")
    claude, codex = (arm.steps[0] for arm in ev.arms)
    config = step_config(claude, bench)
    assert config["model"] == "claude-sonnet-5" and config["effort"] == "high"
    assert config["args"] == ["--permission-mode", "bypassPermissions", "--setting-sources", "project,local"]
    assert step_config(codex, bench) == {"model": "gpt-5.6-terra", "args": ["--sandbox", "workspace-write"]}  # a claude bench's config is not given to codex
    before = [cell_identity(c, versions=VERSIONS, task_digest="t", sandbox=SandboxPolicy("home", "host")).id for c in ev.cells()]
    (project / "calc" / "calc.py").write_text("changed\n")  # agent_env is addressed by content
    ev2 = load_evaluation("c", project, user=project / "no-user")
    after = [cell_identity(c, versions=VERSIONS, task_digest="t", sandbox=SandboxPolicy("home", "host")).id for c in ev2.cells()]
    assert before[0] != after[0] and before[1] == after[1]
