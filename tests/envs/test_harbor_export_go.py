"""A Go task exported as a Harbor task folder: its image is benchtape's base image (a Python
only) unless the project has a Dockerfile.benchtape, and its test.sh runs `go test`, so
`harbor run -a oracle` would score 0 (go: command not found). The export says so."""

from __future__ import annotations

from pathlib import Path

from repokit import commit, init_repo

GO = {
    "go.mod": "module example.com/calc\n\ngo 1.19\n",
    "calc.go": "package calc\n\nfunc Quad(x int) int { return 2 * x }\n",
    "calc_test.go": 'package calc\n\nimport "testing"\n\nfunc TestZero(t *testing.T) {\n\tif Quad(0) != 0 {\n\t\tt.Fatal("zero")\n\t}\n}\n',
}


def test_a_go_task_exported_without_a_dockerfile_says_its_image_has_no_go(tmp_path: Path, monkeypatch):
    from benchtape.app.tasks import export_harbor
    from benchtape.spec.project import load_project
    from benchtape.tasks.create import create_task

    root = init_repo(tmp_path / "calc")
    commit(root, GO, "calc")
    commit(root, {"calc.go": "package calc\n\nfunc Quad(x int) int { return 4 * x }\n", "calc_test.go": GO["calc_test.go"] + '\nfunc TestThree(t *testing.T) {\n\tif Quad(3) != 12 {\n\t\tt.Fatal("three")\n\t}\n}\n'}, "Quad multiplies by four (#2)")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    project = load_project(root)
    task = create_task(project, "2")
    [exported] = export_harbor(project, [task.id], tmp_path / "harbor")
    assert "go test" in (tmp_path / "harbor" / task.id / "tests" / "test.sh").read_text()
    assert "runs Go, which benchtape's base image does not have" in exported.dependencies and "Dockerfile.benchtape" in exported.dependencies, exported.dependencies
