"""A yarn 2+ (berry) project's environment, for real: yarn 4.1.0 from npm (`@yarnpkg/cli-dist`),
the version read from the checked-in release .yarnrc.yml's `yarnPath` names, installing with
the node-modules linker though the project asks for Plug'n'Play (its node_modules is what each
verifier tree links); and what the repository's .yarnrc.yml would have yarn run on this host (its
`plugins`, its own `yarnPath` release) never runs. Before, a yarn 2+ project got the toolchain
as it is, and reduxjs/reselect's tasks could not load vitest."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
from repokit import commit, init_repo, write_files

from benchtape.spec.project import load_project
from benchtape.spec.task import find_task, load_task
from benchtape.store.database import Store
from benchtape.tasks.create import create_task
from benchtape.tasks.validate import validate

YARN = "4.1.0"
PACKAGE = {"name": "tally", "version": "1.0.0", "private": True, "scripts": {"test": "node --test"}, "dependencies": {"is-number": "7.0.0"}}
BUGGY = 'const isNumber = require("is-number");\nexports.total = (xs) => xs.reduce((a, b) => a + Number(b), 0);\n'
FIXED = 'const isNumber = require("is-number");\nexports.total = (xs) => xs.filter(isNumber).reduce((a, b) => a + Number(b), 0);\n'
TEST_BASE = 'const test = require("node:test");\nconst assert = require("node:assert");\nconst { total } = require("..");\ntest("sums numbers", () => assert.strictEqual(total([1, 2, "3"]), 6));\n'
TEST_FIX = TEST_BASE + 'test("skips words", () => assert.strictEqual(total([1, "x"]), 1));\n'


def _hostile(marker: Path) -> str:
    return f"require('fs').writeFileSync({json.dumps(str(marker))}, 'ran');\nmodule.exports = {{name: 'evil', factory: () => ({{}})}};\n"


@pytest.fixture(scope="module")
def berry(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    if shutil.which("npm") is None:
        pytest.fail("npm is needed: a yarn 2+ environment is installed from the npm registry")
    top = tmp_path_factory.mktemp("berry")
    cache = top / "env-cache"
    mp = pytest.MonkeyPatch()
    mp.setenv("BENCHTAPE_ENV_CACHE", str(cache))
    mp.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    # the lock file as yarn 4.1.0 itself writes it (the same pinned install the build uses)
    from benchtape.envs.node import BERRY_SETTINGS, _manager_binary

    yarn = _manager_binary("yarn", YARN, cache)
    scratch = top / "lock"
    write_files(scratch, {"package.json": json.dumps(PACKAGE)})
    made = subprocess.run([str(yarn), "install"], cwd=scratch, env={**os.environ, **BERRY_SETTINGS, "YARN_CACHE_FOLDER": str(top / "yc")}, capture_output=True, text=True, timeout=300)
    assert made.returncode == 0 and (scratch / "yarn.lock").is_file(), made.stdout[-2000:] + made.stderr[-2000:]
    markers = {"plugin": top / "plugin-ran", "release": top / "release-ran", "postinstall": top / "postinstall-ran"}
    root = init_repo(top / "tally")
    commit(
        root,
        {
            "package.json": json.dumps({**PACKAGE, "scripts": {**PACKAGE["scripts"], "postinstall": f"touch {markers['postinstall']}"}}, indent=2) + "\n",
            "yarn.lock": (scratch / "yarn.lock").read_text(),
            ".yarnrc.yml": f"nodeLinker: pnp\nplugins:\n  - path: .yarn/plugins/evil.cjs\n    spec: evil\nyarnPath: .yarn/releases/yarn-{YARN}.cjs\n",
            ".yarn/plugins/evil.cjs": _hostile(markers["plugin"]),
            f".yarn/releases/yarn-{YARN}.cjs": _hostile(markers["release"]),
            "index.js": BUGGY,
            "test/total.test.js": TEST_BASE,
            ".gitignore": "node_modules/\n.pnp.*\n",
        },
        "tally: sum a list",
    )
    commit(root, {"index.js": FIXED, "test/total.test.js": TEST_FIX}, "Skip words when totalling (#3)\n\ntotal() added NaN for every word in the list; it now sums the numbers only.")
    project = load_project(root)
    task_id = create_task(project, "3").id
    store = Store(root / ".benchtape" / "benchtape.db")
    done = validate(project, [task_id], store=store, level="home", logs=root / ".benchtape" / "validate")
    yield {"root": root, "id": task_id, "done": done, "markers": markers, "project": project}
    store.close()
    mp.undo()


def test_a_yarn_berry_task_is_validated_in_its_environment(berry: dict[str, Any]):
    [report] = berry["done"].tasks
    assert report.validated, report.to_dict()
    env = report.environment
    assert (env["detected"]["manager"], env["detected"]["manager_version"], env["detected"]["lock"]) == ("yarn", YARN, "yarn.lock")
    assert env["installed"] == ["is-number==7.0.0"] and (Path(env["folder"]) / "tree" / "node_modules" / "is-number" / "package.json").is_file()
    assert any(f"yarn {YARN} from yarn.lock" in n for n in report.notes), report.notes
    task = load_task(find_task(berry["root"], berry["id"]))
    assert task.validation is not None and list(task.validation.fail_to_pass) == ["test::skips words"]


def test_the_repositorys_yarn_plugins_release_and_install_scripts_never_run(berry: dict[str, Any]):
    """Its plugins and its checked-in release, and its own postinstall, which yarn's
    `enableScripts: false` alone would still run (a workspace's scripts are "assumed safe")."""
    assert [name for name, marker in berry["markers"].items() if marker.exists()] == []
    assert not (berry["root"] / "node_modules").exists() and not (berry["root"] / ".pnp.cjs").exists()  # the user's checkout untouched


def test_a_yarnrc_is_tamed_to_its_layout(tmp_path: Path):
    from benchtape.envs.node import tame_configs

    rc = "nodeLinker: node-modules\nplugins:\n  - path: .yarn/plugins/x.cjs\nyarnPath: .yarn/releases/yarn-3.2.4.cjs\nenableTransparentWorkspaces: false\nnpmRegistryServer: https://evil.example\ncacheFolder: /root/.ssh\n"
    write_files(tmp_path, {".yarnrc.yml": rc})
    assert tame_configs(tmp_path) == [".yarnrc.yml plugins", ".yarnrc.yml yarnPath", ".yarnrc.yml npmRegistryServer", ".yarnrc.yml cacheFolder"]
    assert (tmp_path / ".yarnrc.yml").read_text() == "nodeLinker: node-modules\nenableTransparentWorkspaces: false\n"
    (tmp_path / ".yarnrc.yml").write_text("plugins: [\n")
    assert tame_configs(tmp_path) == [".yarnrc.yml (unreadable)"] and not (tmp_path / ".yarnrc.yml").exists()
