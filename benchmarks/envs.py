"""Project environments (issue 43): what building, reusing and verifying in one costs.

On the real histories in shared/realrepos (toolz: setuptools, flat layout; humanize: hatchling +
hatch-vcs, src layout, its `tests` extra):
- build: the environment of a base commit made from nothing in a fresh cache (uv's own download
  cache as this host has it), one sample;
- cache hit: a second task's environment of the same recipe (its declarations read through git,
  the cache's manifest found), median of 5, target <= 0.2 s;
- validation per task with the environment warm (`task validate` of one task: every run it makes,
  both phases, the reference's repeats and the base's whole suite, each a fresh export, the
  patches, the import check, the tests) against a bare run of the same commands with the venv's
  Python in trees already patched, median of 3, target <= 1.5x.

Run by `make bench` (`python benchmarks/envs.py`). Not a test: it prints numbers.
"""

from __future__ import annotations

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "harvest"))
sys.path.insert(0, str(ROOT / "benchmarks"))
CASES = (("toolz.bundle", "434"), ("humanize.bundle", "318"))


def median(fn, n: int) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples)


def main() -> int:
    scratch = Path(tempfile.mkdtemp(prefix="benchtape-bench-envs-"))
    os.environ["BENCHTAPE_ENV_CACHE"] = str(scratch / "cache")
    try:
        for bundle_name, ref in CASES:
            case(bundle_name, ref, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    return 0


def case(bundle_name: str, ref: str, scratch: Path) -> None:
    from figures import record
    from harvestkit import find_bundle

    from benchtape.envs.build import ensure_env
    from benchtape.envs.project_env import recipe_at
    from benchtape.sandbox.checkout import export_commit
    from benchtape.sandbox.patches import apply_patch
    from benchtape.spec.project import load_project
    from benchtape.spec.task import load_task
    from benchtape.store.database import Store
    from benchtape.tasks.create import create_task
    from benchtape.tasks.validate import validate

    bundle = find_bundle(bundle_name)
    if bundle is None:
        print(f"envs: SKIPPED: shared/realrepos/{bundle_name} not found")
        return
    name = bundle_name.split(".")[0]
    repo = scratch / name
    subprocess.run(["git", "clone", "-q", str(bundle), str(repo)], check=True)
    project = load_project(repo)
    task = load_task(create_task(project, ref).folder)
    base = scratch / f"{name}-base"
    export_commit(repo, task.source.base_commit, base)

    t0 = time.perf_counter()
    env = ensure_env(recipe_at(project, task.source.base_commit), base)
    build_s = time.perf_counter() - t0
    assert env.built and env.venv is not None
    hit_s = median(lambda: ensure_env(recipe_at(project, task.source.base_commit), base), 5)
    print(f"envs: {name} (PR {ref}): environment built in {build_s:.1f} s ({env.installer}, {len(env.installed)} distributions); cache hit {hit_s * 1000:.0f} ms (median of 5)")
    record(f"envs: {name} environment build", f"{build_s:.1f} s", "one sample, uv's download cache as found", "(none)", None)
    record(f"envs: {name} environment cache hit", f"{hit_s * 1000:.0f} ms", "recipe read through git + manifest", "<= 200 ms", hit_s <= 0.2)

    store = Store(scratch / f"{name}.db")
    logs = scratch / f"{name}-logs"
    done = validate(project, [task.id], store=store, level="home", logs=logs)
    assert done.ok, done.to_dict()
    validate_s = median(lambda: validate(project, [task.id], store=store, level="home", logs=logs), 3)
    # the same runs bare: each run validation made (both phases, the reference's repeats, the
    # base's whole suite), its command with the venv's Python, in a tree patched as it was
    runs = []
    for phase, report in done.tasks[0].phases.items():
        tree = scratch / f"{name}-bare-{phase}"
        shutil.copytree(base, tree, symlinks=True)
        env.materialize(tree)
        if phase.startswith("reference"):
            apply_patch(tree, task.reference())
        apply_patch(tree, task.tests_patch())
        for step in env.setup:
            subprocess.run(["/bin/sh", "-c", step], cwd=tree, capture_output=True, check=True)
        command = str(report.evidence.steps[-1]["command"])
        runs.append((tree, command))

    def bare() -> None:
        for tree, command in runs:
            variables = {**os.environ, **env.run_env(str(tree), os.environ.get("PATH", "")), "PYTEST_ADDOPTS": "-p no:cacheprovider"}
            subprocess.run(["/bin/sh", "-c", command], cwd=tree, capture_output=True, env=variables)

    bare_s = median(bare, 3)
    ratio = validate_s / bare_s
    print(f"envs: {name} validation of PR {ref} with the environment warm: {validate_s * 1000:.0f} ms ({len(runs)} runs: {', '.join(done.tasks[0].phases)}); bare pytest of the same runs: {bare_s * 1000:.0f} ms; {ratio:.2f}x")
    record(f"envs: {name} validation per task, env warm", f"{validate_s * 1000:.0f} ms ({ratio:.2f}x)", f"bare pytest, the same {len(runs)} runs: {bare_s * 1000:.0f} ms", "<= 1.5x", ratio <= 1.5)


if __name__ == "__main__":
    sys.exit(main())
