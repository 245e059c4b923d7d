"""A Node project's environment: its package manager read from package.json and the lock file,
its dependencies installed once per lock file into a cached node_modules (npm, for real, from the
registry), linked into each verifier tree; so a task whose code `require`s a dependency is
validated and graded, where with the toolchain as it is both phases failed to load it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from benchtape.envs.detect import detect
from benchtape.envs.node import link_modules, modules_in
from benchtape.replay.task_verdict import grade_candidate
from benchtape.spec.project import load_project
from benchtape.spec.project_tree import FolderTree
from benchtape.spec.task import find_task, load_task
from benchtape.store.database import Store
from benchtape.tasks.create import create_task
from benchtape.tasks.validate import validate

PACKAGE = {"name": "tally", "version": "1.0.0", "private": True, "scripts": {"test": "node --test"}, "dependencies": {"is-number": "7.0.0"}}
LOCK = {
    "name": "tally",
    "version": "1.0.0",
    "lockfileVersion": 3,
    "requires": True,
    "packages": {
        "": {"name": "tally", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}},
        "node_modules/is-number": {
            "version": "7.0.0",
            "resolved": "https://registry.npmjs.org/is-number/-/is-number-7.0.0.tgz",
            "integrity": "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==",
            "license": "MIT",
            "engines": {"node": ">=0.12.0"},
        },
    },
}
BUGGY = 'const isNumber = require("is-number");\nexports.total = (xs) => xs.reduce((a, b) => a + Number(b), 0);\nexports.numeric = (xs) => xs.filter(isNumber);\n'
FIXED = 'const isNumber = require("is-number");\nexports.total = (xs) => xs.filter(isNumber).reduce((a, b) => a + Number(b), 0);\nexports.numeric = (xs) => xs.filter(isNumber);\n'
TEST_BASE = 'const test = require("node:test");\nconst assert = require("node:assert");\nconst { total } = require("..");\ntest("sums numbers", () => assert.strictEqual(total([1, 2, "3"]), 6));\n'
TEST_FIX = TEST_BASE + 'test("skips words", () => assert.strictEqual(total([1, "x"]), 1));\n'


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=root, capture_output=True, text=True, check=True).stdout.strip()


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture(scope="module")
def tally(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """A repository of a small Node package whose code needs a dependency from npm, one squash
    merge (#3) fixing a bug with a test; the task made from it validated with one environment
    cache for the module."""
    top = tmp_path_factory.mktemp("node-env")
    root = top / "tally"
    root.mkdir()
    _git(root, "init", "-q", "-b", "main")
    _git(root, "config", "user.email", "dev@example.com")
    _git(root, "config", "user.name", "dev")
    _write(root, {"package.json": json.dumps(PACKAGE, indent=2) + "\n", "package-lock.json": json.dumps(LOCK, indent=2) + "\n", "index.js": BUGGY, "test/total.test.js": TEST_BASE, ".gitignore": "node_modules/\n"})
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "tally: sum a list")
    _write(root, {"index.js": FIXED, "test/total.test.js": TEST_FIX})
    _git(root, "commit", "-qam", "Skip words when totalling (#3)\n\ntotal() added NaN for every word in the list; it now sums the numbers only.")
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHTAPE_ENV_CACHE", str(top / "env-cache"))
    mp.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)
    task_id = create_task(project, "3").id
    store = Store(root / ".benchtape" / "benchtape.db")
    done = validate(project, [task_id], store=store, level="home", logs=root / ".benchtape" / "validate")
    yield {"root": root, "top": top, "project": project, "id": task_id, "done": done}
    store.close()
    mp.undo()


def test_the_package_manager_is_read_from_package_json_and_the_lock_file(tmp_path: Path):
    def detected(files: dict[str, str]) -> tuple[Any, ...]:
        folder = tmp_path / str(len(list(tmp_path.iterdir())))
        folder.mkdir()
        _write(folder, files)
        det = detect(FolderTree(folder))
        return det.language, det.manager, det.manager_version, det.lock, det.unbuilt

    pkg = json.dumps({"name": "x"})
    assert detected({"package.json": json.dumps({"packageManager": "pnpm@9.5.0+sha512.abc"}), "pnpm-lock.yaml": "lockfileVersion: '9.0'\n"}) == ("node", "pnpm", "9.5.0", "pnpm-lock.yaml", None)
    assert detected({"package.json": pkg, "pnpm-lock.yaml": "lockfileVersion: '6.0'\n"}) == ("node", "pnpm", "8.15.9", "pnpm-lock.yaml", None)
    assert detected({"package.json": pkg, "yarn.lock": "# THIS IS AN AUTOGENERATED FILE.\n# yarn lockfile v1\n"}) == ("node", "yarn", "1.22.22", "yarn.lock", None)
    assert detected({"package.json": pkg, "package-lock.json": "{}"}) == ("node", "npm", None, "package-lock.json", None)
    assert detected({"package.json": pkg}) == ("node", "npm", None, None, None)
    # what benchtape does not build says why, and the verifier runs the toolchain as it is
    berry = detected({"package.json": json.dumps({"packageManager": "yarn@4.1.0"}), "yarn.lock": "__metadata:\n  version: 8\n"})
    assert berry[:3] == ("node", "yarn", "4.1.0") and "not built" in berry[4]
    assert "not built" in detected({"package.json": pkg, "bun.lockb": ""})[4]
    assert "lockfileVersion benchtape does not know" in detected({"package.json": pkg, "pnpm-lock.yaml": "lockfileVersion: '42.0'\n"})[4]


def test_a_task_whose_code_needs_a_dependency_is_valid_in_its_node_environment(tally: dict[str, Any]):
    [report] = tally["done"].tasks
    assert report.validated, report.to_dict()
    base, reference = report.phases["base"].evidence, report.phases["reference"].evidence
    assert base.tests is not None and reference.tests is not None
    assert base.tests.tests["test::skips words"].outcome == "failed" and base.tests.tests["test::sums numbers"].outcome == "passed"
    task = load_task(find_task(tally["root"], tally["id"]))
    assert task.verify.command.startswith("node --test") and task.validation is not None
    assert list(task.validation.fail_to_pass) == ["test::skips words"] and list(task.validation.pass_to_pass) == ["test::sums numbers"]
    env = report.environment
    assert env["detected"]["manager"] == "npm" and env["detected"]["lock"] == "package-lock.json" and env["generated"] == ["node_modules"]
    assert "package-lock.json" in env["declarations"] and env["node"] and env["installed"] == ["is-number==7.0.0"]
    assert any("node_modules linked into each verifier tree" in n for n in report.notes), report.notes
    # the cache's node_modules is installed from the lock file, and no test run wrote into it
    folder = Path(env["folder"])
    assert (folder / "tree" / "node_modules" / "is-number" / "package.json").is_file()
    assert not (tally["root"] / "node_modules").exists()  # nothing installed into the user's checkout


def test_a_candidate_is_graded_in_the_same_environment(tally: dict[str, Any]):
    project, task = tally["project"], load_task(find_task(tally["root"], tally["id"]))
    passed = grade_candidate(project, task, task.reference() or b"")
    assert passed.outcome == "passed", passed.reason
    wrong = (task.reference() or b"").replace(b"xs.filter(isNumber).reduce", b"xs.slice(1).reduce")
    failed = grade_candidate(project, task, wrong)
    assert failed.outcome == "failed" and "skips words" in failed.reason, failed.reason


def test_without_the_environment_neither_phase_loads_the_dependency(tally: dict[str, Any], tmp_path: Path):
    """`env.build: false`: the verifier runs the toolchain as it is, as before Node environments
    were built: the reference fails too (no is-number), so the task is not valid."""
    root = tally["root"]
    (root / ".benchtape" / "config.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nenv:\n  build: false\n")
    try:
        project = load_project(root)
        store = Store(tmp_path / "bare.db")
        [report] = validate(project, [tally["id"]], store=store, level="home", logs=tmp_path / "logs").tasks
        store.close()
        assert not report.validated
        assert "Cannot find module 'is-number'" in report.phases["reference"].evidence.log
    finally:
        (root / ".benchtape" / "config.yaml").unlink()


def test_the_linked_node_modules_are_the_trees_own_folders(tmp_path: Path):
    """Each verifier tree gets hard links of the built node_modules: a file a test adds there is
    the tree's own, and a workspace package's node_modules goes with the top one."""
    built, fresh = tmp_path / "built", tmp_path / "fresh"
    _write(built, {"node_modules/a/index.js": "x", "packages/p/node_modules/b/index.js": "y", "packages/p/package.json": "{}"})
    (built / "node_modules" / ".bin").mkdir()
    (built / "node_modules" / ".bin" / "a").symlink_to("../a/index.js")
    _write(fresh, {"packages/p/package.json": "{}"})
    folders = modules_in(built)
    assert folders == ("node_modules", "packages/p/node_modules")
    assert link_modules(built, fresh, folders) == list(folders)
    assert (fresh / "node_modules" / "a" / "index.js").stat().st_ino == (built / "node_modules" / "a" / "index.js").stat().st_ino
    assert (fresh / "node_modules" / ".bin" / "a").is_symlink() and (fresh / "node_modules" / ".bin" / "a").read_text() == "x"
    (fresh / "node_modules" / ".vite").mkdir()
    assert not (built / "node_modules" / ".vite").exists()
    assert link_modules(built, fresh, folders) == []  # a tree that has them keeps its own


def test_a_failed_install_reads_line_by_line(capsys: pytest.CaptureFixture[str]):
    """A refused task's reason holds the install's output (yarn's engine error, as immer's first
    build gave it): each line on its own, escaped as any other, not one line of `\\n`s."""
    from types import SimpleNamespace

    from benchtape.render_tasks import validated_lines

    refused = "the project's environment could not be built: installing the Node dependencies failed: `yarn install …`\nyarn install v1.22.22\nerror semantic-release@25.0.3: The engine \"node\" is incompatible with this module.\n\x1b[31merror\x1b[0m Found incompatible module.\n"
    task = SimpleNamespace(id="1262", refused=refused, next="fix what the message names")
    validated_lines(SimpleNamespace(level="home", run_id="r1", why="", tasks=[task]))
    out = capsys.readouterr().out.splitlines()
    assert out[1] == "  1262: refused — the project's environment could not be built: installing the Node dependencies failed: `yarn install …`"
    assert out[3] == '      | error semantic-release@25.0.3: The engine "node" is incompatible with this module.'
    assert "\\x1b" in out[4] and "\x1b" not in out[4]  # a control character from the build's output is shown, never sent
    assert out[-1] == "      next: fix what the message names"


def test_what_would_run_the_repositorys_code_at_install_is_taken_out(tmp_path: Path):
    """The install runs on this host: a repository's pnpm hooks file and the .npmrc settings that
    name a program (git=, script-shell=, node-options=…) are dropped from the build's copy; the
    layout's settings stay, and every one of these files is part of the environment's key."""
    from benchtape.envs.node import tame_configs
    from benchtape.envs.recipe import recipe_for

    _write(tmp_path, {".pnpmfile.cjs": "require('child_process').execSync('touch /tmp/owned')", ".npmrc": "# layout\nshamefully-hoist=true\ngit=./evil.sh\nnode-options=--require ./evil.js\nlegacy-peer-deps = true\n"})
    dropped = tame_configs(tmp_path)
    assert not (tmp_path / ".pnpmfile.cjs").exists() and dropped == [".pnpmfile.cjs", ".npmrc git", ".npmrc node-options"]
    assert (tmp_path / ".npmrc").read_text() == "# layout\nshamefully-hoist=true\nlegacy-peer-deps = true\n"

    def key(npmrc: str) -> str:
        folder = tmp_path / f"k{len(npmrc)}"
        _write(folder, {"package.json": json.dumps(PACKAGE), "package-lock.json": json.dumps(LOCK), ".npmrc": npmrc})
        return recipe_for(FolderTree(folder)).key()

    assert key("legacy-peer-deps=true\n") != key("legacy-peer-deps=false\n")  # the same lock file, another install


def test_a_cache_changed_in_place_is_never_linked_again_and_is_built_anew(tally: dict[str, Any]):
    """Each tree's node_modules shares the cache's files (hard links): a run that rewrote one in
    place (a patch-package step, code writing to a dependency) would change every later tree.
    The next tree is refused, naming the fix, and the next use builds the entry anew."""
    from benchtape.envs.build import ensure_env
    from benchtape.envs.project_env import recipe_at
    from benchtape.envs.recipe import EnvError
    from benchtape.sandbox.checkout import export_commit

    project, task = tally["project"], load_task(find_task(tally["root"], tally["id"]))
    base = tally["top"] / "digest-base"
    if not base.exists():
        export_commit(project.root, task.source.base_commit, base)
    env = ensure_env(recipe_at(project, task.source.base_commit), base)
    assert not env.built and env.folder is not None
    dependency = env.folder / "tree" / "node_modules" / "is-number" / "index.js"
    original = dependency.read_text()
    with dependency.open("a") as handle:  # in place: the same inode every linked tree holds
        handle.write("\nmodule.exports = () => true;\n")
    with pytest.raises(EnvError, match="changed in place by an earlier run"):
        env.materialize(tally["top"] / "digest-tree")
    again = ensure_env(recipe_at(project, task.source.base_commit), base)
    assert again.built and (again.folder / "tree" / "node_modules" / "is-number" / "index.js").read_text() == original


def test_a_task_whose_last_validation_did_not_hold_says_so_in_the_list(tally: dict[str, Any]):
    """`task list` named a task whose validation had failed "never validated", sending the user
    to run the same validation again; it gives the last one's conclusion and its next step."""
    import shutil

    from benchtape.tasks.listing import task_rows

    root = tally["root"]
    folder = root / ".benchtape" / "tasks" / "3-wrong"
    shutil.copytree(root / ".benchtape" / "tasks" / tally["id"], folder)
    text = (folder / "task.yaml").read_text()
    (folder / "task.yaml").write_text(text[: text.index("\nvalidation:")].replace("test/total.test.js", "test/missing.test.js") + "\n")
    try:
        store = Store(root / ".benchtape" / "list.db")
        [report] = validate(tally["project"], ["3-wrong"], store=store, level="home", logs=root / ".benchtape" / "validate").tasks
        store.close()
        assert not report.validated
        [row] = [r for r in task_rows(load_project(root)) if r.id == "3-wrong"]
        assert row.state == "unvalidated" and row.why.startswith("its last validation (") and "did not hold" in row.why, row.why
        assert row.next == report.next
    finally:
        shutil.rmtree(folder)


# a history task's agent (a shell script through the command harness) in its workspace: the
# dependency resolved, the fix made, the project's own test script run, nothing installed there
NODE_AGENT = """\
set -e
node -e "console.log('is-number says', require('is-number')(5))"
test ! -e node_modules && echo "no node_modules in the workspace"
sed -i 's/xs\\.reduce(/xs.filter(isNumber).reduce(/' index.js
npm test
git status --porcelain --untracked-files=all | sed 's/^/status: /'
"""
NODE_TOOL = {"apiVersion": "benchtape/v1alpha1", "kind": "Tool", "tool": "fixer", "extends": "command", "options": {"run": {"default": "default", "values": {"default": {"args": ["sh", "-c", NODE_AGENT]}}}}}
NODE_EVALUATION = "apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntasks: [3]\n{extra}tools:\n  - tool: fixer\n    model: default\n"


def _agent_cell(tally: dict[str, Any], name: str, extra: str, *flags: str) -> dict[str, Any]:
    """One cell of the fixer on task #3 through the real `benchtape run` (at level home, unless `flags` say)."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from e2e.cli import benchtape

    from benchtape.replay.changes import workspace_changes

    root = tally["root"]
    _write(root, {".benchtape/tools/fixer.yaml": json.dumps(NODE_TOOL), f".benchtape/evaluations/{name}.yaml": NODE_EVALUATION.format(extra=extra)})
    done = benchtape("run", name, *flags, "--yes", "--json", cwd=root, env={"BENCHTAPE_ENV_CACHE": str(tally["top"] / "env-cache")}, timeout=600)
    assert done.returncode in (0, 1), done.stderr[-3000:]  # 1: a cell did not pass
    ran = json.loads(done.stdout)
    store = Store(root / ".benchtape" / "benchtape.db", readonly=True)
    try:
        [row] = store.session_rows(run_id=ran["run_id"])
        session = store.load_session(row.id)
        expected = next(a.data for a in store.actions(row.id) if a.kind == "environment.expected")["project_environment"]
        changes = workspace_changes(store, session)
    finally:
        store.close()
    said = (session.final_output or "") + "\n" + json.dumps([a.data for a in session.actions if a.kind == "error"])
    return {"outcomes": ran["outcomes"], "said": said, "expected": expected, "changes": changes}


def test_the_agent_resolves_the_dependencies_from_beside_its_workspace_and_runs_the_tests(tally: dict[str, Any]):
    """The cached node_modules is copied into the workspace's parent folder (the agent's own copy),
    its .bin on PATH: `require('is-number')` and `npm test` work in the workspace, which holds no
    node_modules, and the candidate patch is the fix alone (no npm log under HOME either)."""
    got = _agent_cell(tally, "node-given", "")
    assert got["outcomes"] == {"fixer@latest default": {"passed": 1}}, got
    assert "is-number says true" in got["said"] and "no node_modules in the workspace" in got["said"] and "# pass 1" in got["said"], got["said"]
    assert [line for line in got["said"].splitlines() if line.startswith("status: ")] == ["status:  M index.js"], got["said"]  # the workspace's git: the fix alone
    record = got["expected"]
    assert record["given"] is True and record["language"] == "node" and record["manager"] == "npm" and record["node"]
    assert record["node_modules"].startswith("../node_modules") and {"PATH", "npm_config_logs_max"} <= set(record["variables"])
    changes = got["changes"]
    assert (changes.modified, changes.added, changes.removed) == (["index.js"], [], []), changes.to_dict()
    assert "node_modules" not in changes.patch


def test_opted_out_the_agent_cannot_resolve_the_dependency(tally: dict[str, Any]):
    got = _agent_cell(tally, "node-withheld", "project_environment: false\n")
    assert got["outcomes"] == {"fixer@latest default": {"adapter_error": 1}}, got
    assert "Cannot find module 'is-number'" in got["said"], got["said"]
    assert got["expected"]["given"] is False


@pytest.mark.docker
@pytest.mark.xdist_group("docker")
def test_in_a_container_the_dependencies_are_beside_the_workspace_read_only(tally: dict[str, Any]):
    """At level container the workspace is /workspace and its parent the root: the cache's
    node_modules is bound read-only at /node_modules, node and npm mounted as the verifier has them."""
    from benchtape.sandbox.container import available

    ok, why = available()
    if not ok:
        pytest.skip(f"NO DOCKER ENGINE: container level NOT RUN: {why}")
    got = _agent_cell(tally, "node-container", "", "--sandbox", "container")
    assert got["outcomes"] == {"fixer@latest default": {"passed": 1}}, got
    assert "is-number says true" in got["said"] and "no node_modules in the workspace" in got["said"] and "# pass 1" in got["said"], got["said"]
    assert got["expected"]["given"] is True and got["expected"]["node_modules"] == "/node_modules (read-only)"
    assert (got["changes"].modified, got["changes"].added) == (["index.js"], []), got["changes"].to_dict()
