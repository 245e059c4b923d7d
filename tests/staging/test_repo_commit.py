"""The commit a scenario's `repo.ref` names today: part of its cells' identity, so a branch
that moved makes new cells (and a task measured at the old commit is not reused)."""

from __future__ import annotations

import pytest
from evalkit import write
from stagekit import git

from benchtape.recorder.matrix import Matrix, Staging
from benchtape.recorder.toolversions import VersionResolver
from benchtape.sandbox.checkout import CheckoutFailed, resolve_commit
from benchtape.spec.evaluation import load_evaluation


def test_a_ref_resolves_to_its_commit_without_cloning(repo):
    local = {"url": str(repo["path"]), "ref": "main"}
    assert resolve_commit(local, timeout=30) == repo["second"]
    assert resolve_commit({**local, "ref": "v1"}, timeout=30) == repo["first"]
    assert resolve_commit({**local, "ref": repo["first"][:10]}, timeout=30) == repo["first"]  # a local repo resolves a short sha
    assert resolve_commit({"url": f"file://{repo['path']}", "ref": "main"}, timeout=30) == repo["second"]  # a remote asks ls-remote
    assert resolve_commit({"url": f"file://{repo['path']}", "ref": repo["first"].upper()}, timeout=30) == repo["first"]
    with pytest.raises(CheckoutFailed, match="no branch or tag"):
        resolve_commit({"url": f"file://{repo['path']}", "ref": "nope"}, timeout=30)
    with pytest.raises(CheckoutFailed, match="names no commit"):
        resolve_commit({**local, "ref": "nope"}, timeout=30)


def test_a_moved_branch_makes_new_cells(tmp_path, repo):
    project = tmp_path / "proj"
    write(project / "madbench.yaml", f"x-benchtape-allow-outside: [{repo['path']}]\ndescription: r\nharness: mock\nscenarios:\n  - {{name: t, prompt: p, repo: {{url: {repo['path']}, ref: main}}}}\n")
    write(project / ".benchtape" / "evaluations" / "e.yaml", "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools: [{tool: mock, model: scripted}]\n")

    def plan() -> str:
        ev = load_evaluation("e", project, user=tmp_path / "no-user")
        (cell,) = Matrix(ev, ev.tasks(), VersionResolver(), Staging()).plan()
        assert cell.problem is None
        return cell.identity.id

    before = plan()
    assert plan() == before
    (repo["path"] / "a.txt").write_text("version three\n")
    git(repo["path"], "commit", "-qam", "third")
    assert plan() != before
