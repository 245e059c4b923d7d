"""Evaluation files: the spec's worked examples resolve to the counts it states, every axis
value is checked against the registry, and each refusal names the file, the line and the fix."""

from __future__ import annotations

from pathlib import Path

import pytest
from evalkit import evaluation, make_project, write

from benchtape.core.errors import BadInput
from benchtape.spec.evaluation import find_evaluation, load_evaluation


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


@pytest.fixture
def user(tmp_path: Path) -> Path:
    return tmp_path / "user-config"


def load(project: Path, user: Path, body: str, name: str = "e"):
    evaluation(project, name, body)
    return load_evaluation(name, project, user=user)


def refused(project: Path, user: Path, body: str) -> BadInput:
    path = evaluation(project, "bad", body)
    with pytest.raises(BadInput) as info:
        load_evaluation("bad", project, user=user)
    assert info.value.file == str(path), info.value.render()
    return info.value


# ---------------------------------------------------------------- the spec's worked examples


def test_spec_example_resolves_to_twelve_cells_per_task(project, user):
    ev = load(
        project,
        user,
        """
        attempts: 3

        tools:
          - tool: claude-code
            model: [sonnet-5, opus-5]
            effort: medium

          - tool: codex
            model: gpt-5.6-terra
            effort: [medium, high]
        """,
    )
    assert [a.label for a in ev.arms] == [
        "claude-code@latest sonnet-5/medium",
        "claude-code@latest opus-5/medium",
        "codex@latest gpt-5.6-terra/medium",
        "codex@latest gpt-5.6-terra/high",
    ]
    assert ev.cells_per_task == 12
    assert len(ev.cells()) == 12 * 3  # three tasks in the bench
    assert [s.model_id for a in ev.arms for s in a.steps] == ["claude-sonnet-5", "claude-opus-5", "gpt-5.6-terra", "gpt-5.6-terra"]


def test_spec_option_example_isolates_one_axis(project, user):
    ev = load(
        project,
        user,
        """
        attempts: 3
        tools:
          - tool: codex
            model: gpt-5.6-terra
            effort: high
            options:
              agents_md: [default, none]
        """,
    )
    assert ev.cells_per_task == 6
    a, b = ev.arms
    assert dict(a.steps[0].options)["agents_md"] == "default" and dict(b.steps[0].options)["agents_md"] == "none"
    # every other option stays at its default in both arms
    assert {k: v for k, v in a.steps[0].options if k != "agents_md"} == {k: v for k, v in b.steps[0].options if k != "agents_md"} == {"sandbox": "workspace-write"}
    assert b.steps[0].effects.args == ("-c", "project_doc_max_bytes=0", "--sandbox", "workspace-write")
    assert a.label.endswith("agents_md=default") and b.label.endswith("agents_md=none")


def test_spec_tool_version_example_is_an_axis(project, user):
    ev = load(
        project,
        user,
        """
        attempts: 3
        tools:
          - tool: claude-code
            tool_version: [latest, "2.1.0"]
            model: sonnet-5
            effort: medium
        """,
    )
    assert [a.steps[0].tool_version for a in ev.arms] == ["latest", "2.1.0"]
    assert ev.cells_per_task == 6


@pytest.mark.parametrize(("tool", "pinned"), [("aider", "0.86.2"), ("mini-swe-agent", "2.4.6")])
def test_a_pypi_tool_takes_a_pinned_version_and_it_resolves_to_that_release(project, user, tool, pinned, tmp_path, monkeypatch):
    """A PyPI agent is pinned as an npm one is: the release benchtape ships by its number (it was
    refused as "only `latest`"), and an older one, which resolves as pinned and would install
    into a venv of its own."""
    from benchtape.recorder.toolversions import VersionResolver
    from benchtape.tools import binaries

    monkeypatch.setenv(binaries.ENV_TOOLS, str(tmp_path / "tools"))  # nothing installed: no PATH or machine folder answers
    ev = load(project, user, f"tools:\n  - tool: {tool}\n    tool_version: [latest, '{pinned}', '0.1.0']\n    model: scripted\n")
    assert [a.steps[0].tool_version for a in ev.arms] == ["latest", pinned, "0.1.0"]
    resolver = VersionResolver()
    latest, same, older = (resolver.resolve(tool, asked) for asked in ("latest", pinned, "0.1.0"))
    assert (latest.version, latest.source) == (pinned, "pypi")
    assert (same.version, same.source) == (pinned, "pinned") and (older.version, older.source) == ("0.1.0", "pinned")
    assert older.needs_install and str(binaries.folder(tool, "0.1.0")) in older.describe()


def test_spec_workflow_example_resolves_to_fifteen_cells_per_task(project, user):
    ev = load(
        project,
        user,
        """
        attempts: 3
        tools:
          - tool: plan-build
            steps:
              plan:
                model: [opus-5, sonnet-5]
                effort: [medium, high]
              build:
                model: sonnet-5
                effort: medium
          - tool: claude-code
            model: sonnet-5
            effort: medium
        """,
    )
    assert ev.cells_per_task == 15
    workflows = [a for a in ev.arms if a.workflow]
    assert len(workflows) == 4
    plans = sorted((a.steps[0].model, a.steps[0].effort) for a in workflows)
    assert plans == [("opus-5", "high"), ("opus-5", "medium"), ("sonnet-5", "high"), ("sonnet-5", "medium")]
    assert {(a.steps[1].model, a.steps[1].effort) for a in workflows} == {("sonnet-5", "medium")}
    assert workflows[0].steps[0].prompt and "{handover}" in workflows[0].steps[0].prompt


def test_workflow_step_resolution_weakest_to_strongest(project, user):
    write(
        project / ".benchtape" / "tools" / "review.yaml",
        """
        apiVersion: benchtape/v1alpha1
        kind: Workflow
        tool: review
        type: workflow
        steps:
          - {name: draft, tool: claude-code, model: opus-5}
          - {name: check, tool: claude-code}
        """,
    )
    ev = load(
        project,
        user,
        """
        tools:
          - tool: review
            model: sonnet-5          # a fallback: only `check` has no model of its own
            effort: medium
            steps:
              check: {effort: high}
        """,
    )
    (arm,) = ev.arms
    assert [(s.name, s.model, s.effort) for s in arm.steps] == [("draft", "opus-5", "medium"), ("check", "sonnet-5", "high")]


def test_a_scalar_and_a_one_item_list_are_the_same(project, user):
    a = load(project, user, "tools:\n  - {tool: claude-code, model: sonnet-5, effort: medium}\n", "a")
    b = load(project, user, "tools:\n  - {tool: claude-code, model: [sonnet-5], effort: [medium]}\n", "b")
    assert [x.key for x in a.arms] == [x.key for x in b.arms]


def test_blocks_are_unioned_and_a_repeated_arm_counts_once(project, user):
    ev = load(
        project,
        user,
        """
        attempts: 2
        tools:
          - {tool: claude-code, model: [sonnet-5, opus-5], effort: medium}
          - {tool: claude-code, model: sonnet-5, effort: [medium, high]}
        """,
    )
    assert len(ev.arms) == 3 and ev.cells_per_task == 6
    (dup,) = ev.duplicates()
    assert dup[0] == 2 and dup[1].label == "claude-code@latest sonnet-5/medium"


def test_cross_product_includes_option_axes(project, user):
    ev = load(
        project,
        user,
        """
        tools:
          - tool: claude-code
            model: [sonnet-5, opus-5]
            effort: [low, high]
            options: {agents_md: [default, none], skills: [default, none]}
        """,
    )
    assert len(ev.arms) == 2 * 2 * 2 * 2
    assert len({a.key for a in ev.arms}) == 16


def test_pre_commands_and_option_effects_are_carried(project, user):
    ev = load(
        project,
        user,
        """
        tools:
          - tool: claude-code
            model: sonnet-5
            options: {agents_md: none}
            pre: ["touch {workdir}/.ready"]
        """,
    )
    (arm,) = ev.arms
    assert arm.pre == ("touch {workdir}/.ready",)
    assert arm.all_pre()[0] == "touch {workdir}/.ready" and "CLAUDE.md" in arm.all_pre()[1]
    assert arm.steps[0].effort is None  # omitted: the CLI's default


# ---------------------------------------------------------------- refusals by name, with the closest valid value


@pytest.mark.parametrize(
    ("body", "line", "what", "fix"),
    [
        ("tools:\n  - {tool: claude-cod, model: sonnet-5}\n", 4, "unknown tool 'claude-cod'", "did you mean 'claude-code'?"),
        ("tools:\n  - tool: claude-code\n    model: sonet-5\n", 5, "unknown model 'sonet-5' for claude-code", "did you mean 'sonnet-5'?"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    effort: hgh\n", 6, "unknown effort 'hgh'", "did you mean 'high'?"),
        ("tools:\n  - tool: claude-code\n    model: [sonnet-5, opus-5]\n    effort: max\n", 6, "model sonnet-5 does not accept effort 'max'", "split the block"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    tool_version: lates\n", 6, "unknown tool_version 'lates' for claude-code", "did you mean 'latest'?"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    tool_version: 2.1\n", 6, "unknown tool_version '2.1'", "MAJOR.MINOR.PATCH"),
        ("tools:\n  - tool: mock\n    model: scripted\n    tool_version: '1.0.0'\n", 6, "unknown tool_version '1.0.0' for mock", "only `latest`"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    options: {agent_md: none}\n", 6, "unknown option 'agent_md' of claude-code", "did you mean 'agents_md'?"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    options:\n      agents_md: non\n", 7, "unknown value 'non' for option 'agents_md'", "did you mean 'none'?"),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    options:\n      agents_md: off\n", 7, "unknown value 'false' for option 'agents_md'", "valid: default, none"),
        ("tools:\n  - tool: claude-code\n", 4, "no `model:` for claude-code", "add `model:`"),
        ("tools:\n  - tool: claude-code\n    models: [sonnet-5]\n", 5, "unknown key `models`", "the key is `model:`"),
        ("tools:\n  - tool: claude-code\n    model: [sonnet-5, sonnet-5]\n", 5, "lists 'sonnet-5' twice", None),
        ("tools:\n  - tool: claude-code\n    model: []\n", 5, "`model` is an empty list", None),
        ("tools:\n  - tool: claude-code\n    model: sonnet-5\n    steps: {plan: {model: opus-5}}\n", 6, "`steps:` is for workflow tools", None),
        ("tools:\n  - tool: plan-build\n", 4, "step 'plan' of workflow plan-build has no model", "steps: {plan: {model: ...}}"),
        ("tools:\n  - tool: plan-build\n    model: sonnet-5\n    steps: {plam: {model: opus-5}}\n", 6, "unknown step 'plam' of workflow plan-build", "did you mean 'plan'?"),
        ("tools:\n  - tool: plan-build\n    model: sonnet-5\n    options: {agents_md: none}\n", 6, "options of workflow plan-build are set per step", None),
        ("atempts: 3\ntools: [{tool: mock, model: scripted}]\n", 3, "unknown key `atempts` in the Evaluation", "did you mean `attempts:`?"),
        ("attempts: 0\ntools: [{tool: mock, model: scripted}]\n", 3, "`attempts:` must be a whole number of at least 1", None),
        ("attempts: true\ntools: [{tool: mock, model: scripted}]\n", 3, "`attempts:` must be a whole number", None),
        # a billion attempts planned 8e9 cells in memory (`run --dry-run`: 3.8 GB in 25 s)
        ("attempts: 1000000000\ntools: [{tool: mock, model: scripted}]\n", 3, "`attempts: 1,000,000,000` is more than the 1,000 a task may have", "add tasks for more power"),
        ("tools: []\n", 3, "non-empty `tools:`", None),
        ("tasks: [1223, 1223]\ntools: [{tool: mock, model: scripted}]\n", 3, "`tasks:` lists '1223' twice", "list each task once"),
        ("runs: [{}]\ntools: [{tool: mock, model: scripted}]\n", 3, "a list of run entries belongs to an Eval file", "runs: {executor: ray"),
        ("runs: {executor: rey}\ntools: [{tool: mock, model: scripted}]\n", 3, "unknown executor 'rey'", "did you mean 'ray'?"),
        ("runs:\n  executor: ray\n  adress: 10.0.0.5:6379\ntools: [{tool: mock, model: scripted}]\n", 5, "unknown key `adress`", "did you mean `address:`?"),
        ("runs: {retries: -1}\ntools: [{tool: mock, model: scripted}]\n", 3, "`runs.retries` must be a whole number of at least 0", None),
        ("tools: [{tool: mock, model: scripted}]\ntools: [{tool: mock, model: noop}]\n", 4, "key `tools` is set twice in one mapping: at line 3 and at line 4", None),
    ],
)
def test_refusals_name_file_line_and_fix(project, user, body, line, what, fix):
    err = refused(project, user, body)
    assert what in err.what, err.render()
    assert err.line == line, err.render()
    if fix:
        assert fix in (err.fix or ""), err.render()


def test_header_is_checked(project, user):
    path = project / ".benchtape" / "evaluations" / "h.yaml"
    write(path, "apiVersion: benchtape/v2\nkind: Evaluation\ntools: [{tool: mock, model: scripted}]\n")
    with pytest.raises(BadInput, match="unsupported apiVersion") as info:
        load_evaluation("h", project, user=user)
    assert info.value.line == 1
    write(path, "apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: x\n")
    with pytest.raises(BadInput, match="does not belong here") as info:
        load_evaluation("h", project, user=user)
    assert "tool overlays live in .benchtape/tools/" in info.value.fix
    write(path, "apiVersion: benchtape/v1alpha1\nkind: Evaluaton\ntools: []\n")
    with pytest.raises(BadInput, match="unknown kind") as info:
        load_evaluation("h", project, user=user)
    assert "Evaluation" in info.value.fix
    write(path, "kind: Evaluation\ntools: []\n")
    with pytest.raises(BadInput, match="no `apiVersion:`"):
        load_evaluation("h", project, user=user)


# ---------------------------------------------------------------- finding, benches, tasks


def test_found_by_name_or_by_path_and_an_unknown_name_is_refused_with_the_closest(project, user, tmp_path):
    evaluation(project, "baseline", "tools: [{tool: mock, model: scripted}]\n")
    assert find_evaluation("baseline", project) == project / ".benchtape" / "evaluations" / "baseline.yaml"
    elsewhere = write(tmp_path / "other" / "cmp.yaml", "apiVersion: benchtape/v1alpha1\nkind: Evaluation\nbench: ../proj/madbench.yaml\ntools: [{tool: mock, model: scripted}]\n")
    ev = load_evaluation(str(elsewhere), project, user=user)
    assert ev.name == "cmp" and ev.bench_paths == [(project / "madbench.yaml").resolve()]
    with pytest.raises(BadInput) as info:
        find_evaluation("baselin", project)
    assert "did you mean 'baseline'?" in info.value.fix


def test_default_bench_is_the_one_in_the_project_folder(project, user):
    ev = load(project, user, "tools: [{tool: mock, model: scripted}]\n")
    assert ev.bench_paths == [(project / "madbench.yaml").resolve()]
    assert [t.id for t in ev.tasks()] == ["fix-add", "fix-sub", "explain"]
    assert [t.id for t in ev.select(["fix-sub"])] == ["fix-sub"]
    with pytest.raises(BadInput, match="no task of this evaluation") as info:
        ev.select(["fix-sbu"])
    assert "did you mean 'fix-sub'?" in info.value.fix
    with pytest.raises(BadInput, match="no task of this evaluation") as info:
        ev.select(["fix-add,fix-sub"])  # berbench G1's comma list
    assert info.value.fix == "give each its own flag: --task fix-add --task fix-sub"


def test_several_benches_and_task_ids_must_be_unique(project, user):
    write(project / "more.yaml", "description: m\nharness: mock\nscenarios:\n  - {name: extra, prompt: p, checks: [{type: contains, value: p}]}\n")
    ev = load(project, user, "bench: [madbench.yaml, more.yaml]\ntools: [{tool: mock, model: scripted}]\n")
    assert [t.id for t in ev.tasks()] == ["fix-add", "fix-sub", "explain", "extra"]
    write(project / "clash.yaml", "description: c\nharness: mock\nscenarios:\n  - {name: explain, prompt: p, checks: [{type: contains, value: p}]}\n")
    ev = load(project, user, "bench: [madbench.yaml, clash.yaml]\ntools: [{tool: mock, model: scripted}]\n", "clash")
    with pytest.raises(BadInput, match="task 'explain' is a scenario of two benches"):
        ev.tasks()


def test_a_missing_bench_or_an_eval_file_as_bench_is_refused(project, user):
    err = refused(project, user, "bench: nope.yaml\ntools: [{tool: mock, model: scripted}]\n")
    assert "does not exist" in err.what and err.line == 3
    write(project / "runs.eval.yaml", "bench: madbench.yaml\nruns: [{}]\n")
    err = refused(project, user, "bench: runs.eval.yaml\ntools: [{tool: mock, model: scripted}]\n")
    assert "is an Eval file" in err.what


def test_runs_says_where_cells_run_over_the_projects_and_leaves_identity_alone(project, user):
    from benchtape.spec.project import load_project

    write(project / ".benchtape" / "config.yaml", "apiVersion: benchtape/v1alpha1\nkind: Project\nruns: {executor: ray, address: 10.0.0.5:6379, retries: 1}\n")
    plain = load(project, user, "tools: [{tool: mock, model: scripted}]\n", name="plain")
    ev = load(project, user, "runs: {address: 'auto', cpus: 2, runtime_env: {env_vars: {A: b}}}\ntools: [{tool: mock, model: scripted}]\n")
    settings = ev.runs.under(load_project(project).runs)
    assert (settings.executor, settings.address, settings.retries, settings.cpus) == ("ray", "auto", 1, 2.0)
    assert settings.runtime_env == {"env_vars": {"A": "b"}} and type(settings.runtime_env["env_vars"]) is dict
    assert plain.runs.under(load_project(project).runs).address == "10.0.0.5:6379"
    assert [a.key for a in ev.arms] == [a.key for a in plain.arms]  # what runs where is no part of a setup (nor of a cell's identity)


def test_the_configs_defaults_are_what_an_evaluation_runs_with_where_it_says_nothing(project, user):
    """berbench's `defaults.attempts`, `concurrency` and `cell_timeout` (the project's over the
    user's) were validated and then ignored: an evaluation with no `attempts:` ran once."""
    from benchtape.app.evaluation_run import EvaluationRequest, concurrency_of
    from benchtape.spec.task_cells import TASK_TIMEOUT

    write(user / "config.yaml", "apiVersion: benchtape/v1alpha1\nkind: UserConfig\ndefaults: {attempts: 5, concurrency: 3, cell_timeout: 2m}\n")
    ev = load(project, user, "tools: [{tool: mock, model: scripted}]\n", name="user")
    assert (ev.attempts, ev.defaults.concurrency, ev.defaults.cell_timeout) == (5, 3, 120.0)
    write(project / ".benchtape" / "config.yaml", "apiVersion: benchtape/v1alpha1\nkind: Project\ndefaults: {attempts: 2, cell_timeout: 45m}\n")
    ev = load(project, user, "tools: [{tool: mock, model: scripted}]\n", name="project")
    assert (ev.attempts, ev.defaults.concurrency, ev.defaults.cell_timeout) == (2, 3, 2700.0)  # the project's over the user's, key by key
    assert load(project, user, "attempts: 1\ntools: [{tool: mock, model: scripted}]\n", name="own").attempts == 1  # the evaluation's own wins
    assert concurrency_of(EvaluationRequest("project"), ev) == 3 and concurrency_of(EvaluationRequest("project", concurrency=1), ev) == 1
    # a task's agent limit: its own, else cell_timeout, else TASK_TIMEOUT
    task = project / "harbor" / "t1"
    (task / "tests").mkdir(parents=True)
    (task / "environment").mkdir()
    write(task / "task.toml", 'version = "1.0"\n')
    write(task / "instruction.md", "fix it\n")
    write(task / "tests" / "test.sh", "#!/bin/sh\nexit 0\n")
    write(task / "environment" / "Dockerfile", "FROM benchtape-base\n")
    def timeouts() -> list[float]:
        ev = load(project, user, "tasks: [harbor/t1]\ntools: [{tool: mock, model: scripted}]\n", name="harbor")
        ev.direct = True  # run unvalidated, as `benchtape run DIR` does
        return [t.scenario.timeout for t in ev.tasks()]

    assert timeouts() == [2700.0] and TASK_TIMEOUT != 2700.0
    write(task / "task.toml", 'version = "1.0"\n[agent]\ntimeout_sec = 90.0\n')
    assert timeouts() == [90.0]


def test_a_harbor_tasks_agent_is_hidden_its_tests_and_solution_and_nothing_else_of_its_folder(project, user):
    """The folder may be where benchtape runs (`benchtape run .` in it: its .benchtape/tools hold
    the agent): only the verifier's and the oracle's files are covered (spec/task_cells.hidden_from_agent)."""
    from benchtape.spec.task_cells import hidden_from_agent

    task = project / "harbor" / "t2"
    for folder in ("tests", "solution", "environment", ".benchtape/tools"):
        (task / folder).mkdir(parents=True)
    write(task / "task.toml", 'version = "1.0"\n')
    write(task / "instruction.md", "fix it\n")
    write(task / "tests" / "test.sh", "#!/bin/sh\nexit 0\n")
    write(task / "solution" / "solve.sh", "#!/bin/sh\ntrue\n")
    write(task / "environment" / "Dockerfile", "FROM benchtape-base\n")
    ev = load(project, user, "tasks: [harbor/t2]\ntools: [{tool: mock, model: scripted}]\n", name="harbor2")
    ev.direct = True
    [t] = ev.tasks()
    assert set(hidden_from_agent(t)) == {str(task / "tests"), str(task / "solution")}
