"""Contamination, dated, on the real toolz history: each task's fix commit date is read from
the repository, the registry carries a model's training cutoff, a task fixed before it is
flagged "may have been seen" for that setup, and --after-cutoff keeps only the tasks every
setup meets fresh."""

from __future__ import annotations

from pathlib import Path

import pytest
from e2e.cli import benchtape
from harvestkit import clone_toolz

from benchtape.core.errors import BadInput
from benchtape.replay.contamination import after_cutoff, arm_cutoff_sources, arm_cutoffs, commit_dates, contamination, fix_dates
from benchtape.spec.evaluation import load_evaluation
from benchtape.spec.task import find_task, load_task


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = clone_toolz(tmp_path_factory.mktemp("contamination") / "toolz")
    for task_id in ("603", "398"):
        done = benchtape("task", "create", task_id, cwd=repo)
        assert done.returncode == 0, done.stderr
    return repo


def test_fix_dates_come_from_the_history_and_cutoffs_flag_what_may_have_been_seen(toolz: Path, tmp_path: Path):
    tasks = [load_task(find_task(toolz, t)) for t in ("603", "398")]
    dates = fix_dates(toolz, tasks)
    # the shared README's hand-checked landings: PR 603 squashed in October 2025, PR 398 merged in July 2019
    assert dates == {"603": "2025-10-16", "398": "2019-07-09"}
    assert commit_dates(toolz, ["0" * 40]) == {}  # a commit the history does not hold is undated, not an error
    (toolz / ".benchtape" / "evaluations").mkdir(parents=True, exist_ok=True)
    (toolz / "madbench.yaml").write_text("description: x\nharness: mock\nscenarios:\n  - {name: s, prompt: p, checks: [{type: contains, value: x}]}\n")
    (toolz / ".benchtape" / "evaluations" / "c.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {tool: claude-code, model: [sonnet-4.5, opus-4.6], effort: medium}\n  - {tool: codex, model: gpt-5.4-mini, effort: medium}\n")
    ev = load_evaluation("c", toolz, user=tmp_path / "user")
    by_label = {a.label: a.key for a in ev.arms}
    cutoffs = arm_cutoffs(ev)
    sonnet = next(k for label, k in by_label.items() if "sonnet-4.5" in label)
    opus = next(k for label, k in by_label.items() if "opus-4.6" in label)
    mini = next(k for label, k in by_label.items() if "gpt-5.4-mini" in label)
    # the shipped registry: Anthropic's models overview publishes Sonnet 4.5's (July 2025) and Opus 4.6's
    # (August 2025) training-data cutoffs; no OpenAI page for gpt-5.4-mini was checked, so none is recorded
    assert cutoffs == {sonnet: "2025-07", opus: "2025-08", mini: None}
    sources = arm_cutoff_sources(ev)
    assert sources[sonnet] == sources[opus] == "https://platform.claude.com/docs/en/about-claude/models/overview" and sources[mini] is None
    found = contamination(dates, cutoffs, sources)
    assert found.seen == {sonnet: ["398"], opus: ["398"]}  # fixed in 2019, before the cutoffs: may have been seen; 603 (Oct 2025) not
    assert found.to_dict()["cutoff_sources"] == sources
    with pytest.raises(BadInput, match="none is published for"):
        after_cutoff(dates, cutoffs, {v: k for k, v in by_label.items()})
    assert after_cutoff(dates, {sonnet: "2025-07"}, {}) == ["603"]
    assert after_cutoff(dates, {sonnet: "2025-10"}, {}) == []  # a month-precision cutoff covers its whole month


def test_a_cutoff_that_is_not_a_date_is_refused_with_the_line(tmp_path: Path):
    root = tmp_path / "p"
    (root / ".benchtape" / "tools").mkdir(parents=True)
    (root / ".benchtape" / "evaluations").mkdir(parents=True)
    (root / "madbench.yaml").write_text("description: x\nharness: mock\nscenarios:\n  - {name: s, prompt: p, checks: [{type: contains, value: x}]}\n")
    (root / ".benchtape" / "tools" / "claude-code.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: claude-code\nextends: builtin\nmodels:\n  sonnet-5: {id: claude-sonnet-5, effort: [low], cutoff: July 2025}\n")
    (root / ".benchtape" / "evaluations" / "c.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {tool: claude-code, model: sonnet-5, effort: low}\n")
    done = benchtape("evaluation", "validate", "c", cwd=root, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    assert done.returncode == 2 and "is not a date" in done.stderr and "claude-code.yaml" in done.stderr and "Traceback" not in done.stderr


def test_a_cutoff_source_must_be_a_web_address_beside_a_cutoff(tmp_path: Path):
    """Where a cutoff comes from is recorded as the vendor's page; a source without a date, or a
    source that is not an https address, is refused naming the file and the line."""
    root = tmp_path / "p"
    (root / ".benchtape" / "tools").mkdir(parents=True)
    (root / ".benchtape" / "evaluations").mkdir(parents=True)
    (root / "madbench.yaml").write_text("description: x\nharness: mock\nscenarios:\n  - {name: s, prompt: p, checks: [{type: contains, value: x}]}\n")
    (root / ".benchtape" / "evaluations" / "c.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools:\n  - {tool: claude-code, model: sonnet-5, effort: low}\n")
    tool = root / ".benchtape" / "tools" / "claude-code.yaml"
    head = "apiVersion: benchtape/v1alpha1\nkind: Tool\ntool: claude-code\nextends: builtin\nmodels:\n"
    for model, said in [("{id: claude-sonnet-5, effort: [low], cutoff_source: 'https://example.invalid/models'}", "no `cutoff`"), ("{id: claude-sonnet-5, effort: [low], cutoff: '2026-01', cutoff_source: 'the docs'}", "is not a web address")]:
        tool.write_text(head + f"  sonnet-5: {model}\n")
        done = benchtape("evaluation", "validate", "c", cwd=root, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
        assert done.returncode == 2 and said in done.stderr and "claude-code.yaml" in done.stderr and ":6" in done.stderr and "Traceback" not in done.stderr, done.stderr
