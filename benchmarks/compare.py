"""Speed of `benchtape compare` on a large evaluation, with every statistic it reports (task-
clustered intervals, paired differences with intervals over all 45 pairs, Holm, cost per
solved task, the sequential evidence) on 10,000 cells: a gate at 1 s (issues 46 and 48); of the
reuse preview `benchtape run NAME --dry-run` on the same store (every cell planned, its identity
computed and looked up, and the power plan from the stored pass rates): target under 5 s; of
the preview with the power planner on 100 setups (`run wide --dry-run`: 4,950 pairs, every
setup's stored per-task rates, attempt correlation and pairwise setup correlations): target
under 2 s (issue 48); and of the planner alone (in process) on 100 setups × 200 tasks × 5
attempts: target under 1 s.

Builds two projects, each with a store holding one measurement of every cell (sessions of ~40
actions each, through the real `Store.append`, with identities, params and outcomes
(`Store.add_outcome`) as the run loop records them): `big`, a bench of 200 tasks and an
evaluation of 10 arms × 5 attempts (10,000 cells); `wide`, a bench of 20 tasks and an
evaluation of 100 arms (5 models × 5 efforts × 2 × 2 option values) × 5 attempts (10,000
cells). Then times the real commands in a fresh process, from start to exit (Python start-up,
loading the evaluation and hashing every task included), a few rounds each.

Run by `make bench`; `--cells 2000` for a quick run (of `big`; `wide` keeps its 100 setups
with fewer tasks). Not a test: it prints numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from benchtape.core.model import Action  # noqa: E402
from benchtape.replay.outcomes import OUTCOMES, Outcome  # noqa: E402
from benchtape.spec.cells import run_fields, session_fields, started_extra  # noqa: E402
from benchtape.spec.evaluation import load_evaluation  # noqa: E402
from benchtape.spec.identity import cell_identity, sandbox_policy, task_hash  # noqa: E402
from benchtape.store.database import Store  # noqa: E402

TARGET_S = 1.0  # the gate (exit 1 past it): issue 46's and 48's target for compare with its statistics
ROUNDS = 3
ARMS_BLOCK = "tools:\n  - {tool: claude-code, tool_version: '2.1.328', model: [sonnet-4.6, opus-4.6, haiku-4.5, sonnet-4.5, opus-4.5], effort: [medium, high]}\n"
WIDE_ARMS_BLOCK = "tools:\n  - {tool: claude-code, tool_version: '2.1.328', model: [sonnet-4.6, opus-4.6, haiku-4.5, sonnet-4.5, opus-4.5], effort: [low, medium, high, xhigh, max], options: {permission_mode: [default, bypass], user_settings: [all, project]}}\n"
PREVIEW_TARGET_S = 5.0
WIDE_TARGET_S = 2.0  # the gate: issue 48's target for `run --dry-run` with the power planner, on 100 setups
PLANNER_TARGET_S = 1.0  # the gate: the planner alone, in process
PLANNER_SETUPS = 100
VERSIONS = {"claude-code": "2.1.328"}
TOOLS = ("Read", "Grep", "Edit", "Bash")


def build_project(folder: Path, tasks: int, attempts: int, name: str = "big", arms: str = ARMS_BLOCK) -> Path:
    (folder / "calc").mkdir(parents=True)
    (folder / "calc" / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    scenarios = "".join(f"  - {{name: task-{i:04d}, prompt: 'fix bug {i} in calc.py', testdata: calc, checks: [{{type: contains, value: fixed}}]}}\n" for i in range(tasks))
    (folder / "madbench.yaml").write_text(f"description: compare benchmark\nharness: claude-code\nscenarios:\n{scenarios}")
    ev = folder / ".benchtape" / "evaluations" / f"{name}.yaml"
    ev.parent.mkdir(parents=True)
    ev.write_text(f"apiVersion: benchtape/v1alpha1\nkind: Evaluation\nattempts: {attempts}\n{arms}")
    return folder


def session_actions(rng: random.Random, prompt: str, started: dict, outcome: str) -> list[Action]:
    """~40 actions shaped like a real session (its outcome is stored beside, with add_outcome)."""
    out = [Action("session.started", started), Action("message.user", {"text": prompt})]
    for call in range(16):
        cid = f"call_{call}"
        out.append(Action("tool.call", {"call_id": cid, "tool": TOOLS[call % 4], "input": {"file_path": f"src/mod_{call}.py"}}))
        out.append(Action("tool.result", {"call_id": cid, "output": "x" * rng.randint(50, 400), "is_error": None if call % 4 != 2 else False}))
    out.append(Action("message.assistant", {"text": "fixed it"}))
    tokens_in, tokens_out = rng.randint(500, 5000), rng.randint(100, 2000)
    metrics = {"tokens_in": tokens_in, "tokens_out": tokens_out, "cache_read_tokens": rng.randint(10_000, 90_000), "cache_write_tokens": rng.randint(1000, 9000), "duration_ms": rng.randint(5000, 90_000), "turns": 9}
    if rng.random() < 0.7:  # most tools report their cost; the rest are priced from tokens
        metrics["cost_usd"] = round(rng.uniform(0.01, 0.5), 4)
    out.append(Action("metrics", metrics))
    out.append(Action("session.finished", {"status": "timeout" if outcome == "timeout" else "ok", "exit_code": 0, "timed_out": outcome == "timeout", "wall_ms": float(metrics["duration_ms"] + 800)}))
    return out


def build_store(project: Path, db: Path, cells: int, name: str = "big") -> int:
    ev = load_evaluation(name, project, user=project / "no-user-config")
    store = Store(db)
    rng = random.Random(7)
    fields = run_fields(ev, argv=["benchtape", "run", name])
    run_id = store.new_run(fields.pop("kind"), **fields)
    digests = {t.id: task_hash(t) for t in ev.tasks()}
    made = 0
    weights = [40, 25, 3, 4, 10, 6, 7, 5]  # passed, failed, patch_apply_failed, guard_violation, no_changes, timeout, adapter_error, infrastructure_error
    for cell in ev.cells()[:cells]:
        identity = cell_identity(cell, versions=VERSIONS, task_digest=digests[cell.task.id], sandbox=sandbox_policy(cell.task.scenario))
        sid = store.new_session(run_id, **session_fields(ev.name, cell, identity, digests[cell.task.id]))
        started = {"scenario": cell.task.id, "harness": "claude-code", "model": cell.arm.steps[0].model_id, "prompt": cell.task.scenario.prompt, "attempt": cell.attempt, "sandbox": "home"}
        started.update(started_extra(ev.name, cell, identity, digests[cell.task.id], 0, VERSIONS))
        outcome = rng.choices(OUTCOMES, weights)[0]
        actions = session_actions(rng, cell.task.scenario.prompt, started, outcome)
        store.append(sid, actions[:20])
        store.append(sid, actions[20:])
        diff = {"files": rng.randint(1, 4), "lines_added": rng.randint(1, 60), "lines_removed": rng.randint(0, 30)}
        store.add_outcome(None, sid, Outcome(outcome, outcome).outcome, outcome, {"diff": diff, "cell_id": identity.id})
        made += 1
    store.close()
    return made


def time_command(project: Path, db: Path, *args: str) -> tuple[list[float], list[float], dict]:
    """Wall seconds and CPU seconds (user + system) of each run of the command, and its last JSON document."""
    env = {**os.environ, "NO_COLOR": "1", "XDG_CONFIG_HOME": str(project / "no-user-config"), "ANTHROPIC_API_KEY": "sk-unused-by-a-preview"}
    walls, cpus = [], []
    for _ in range(ROUNDS):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        out = subprocess.run([sys.executable, "-m", "benchtape", *(args or ("compare", "big")), "--db", str(db), "--json"], cwd=project, env=env, capture_output=True, text=True)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
        if out.returncode != 0:
            raise SystemExit(f"{' '.join(args) or 'compare'} failed: {out.stderr}")
    return walls, cpus, json.loads(out.stdout)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=10_000)
    args = parser.parse_args()
    attempts = 5
    tasks = max(1, -(-args.cells // (10 * attempts)))
    wide_tasks = max(2, tasks // 10)
    with tempfile.TemporaryDirectory(prefix="benchtape-compare-") as tmp:
        project = build_project(Path(tmp) / "project", tasks, attempts)
        db = Path(tmp) / "bench.db"
        started = time.perf_counter()
        made = build_store(project, db, args.cells)
        print(f"built {made} cells (10 arms × {tasks} tasks × {attempts} attempts, ~40 actions each) in {time.perf_counter() - started:.1f}s → {db.stat().st_size / 1e6:.0f} MB")
        wide = build_project(Path(tmp) / "wide", wide_tasks, attempts, "wide", WIDE_ARMS_BLOCK)
        wide_db = Path(tmp) / "wide.db"
        started = time.perf_counter()
        wide_made = build_store(wide, wide_db, PLANNER_SETUPS * wide_tasks * attempts, "wide")
        print(f"built {wide_made} cells ({PLANNER_SETUPS} arms × {wide_tasks} tasks × {attempts} attempts) in {time.perf_counter() - started:.1f}s")
        walls, cpus, doc = time_command(project, db)
        preview_walls, preview_cpus, _ = time_command(project, db, "run", "big", "--dry-run")
        wide_walls, wide_cpus, wide_doc = time_command(wide, wide_db, "run", "wide", "--dry-run")
    load = os.getloadavg()[0]
    # what was timed did all the work: every pair tested and corrected, the planner over every setup
    assert len(doc["pairs"]) == 45 and all(p["p_adjusted"] is not None and p["ci"] for p in doc["pairs"]), "compare did not test every pair"
    plan = wide_doc["plan"]
    assert plan["setups"] == PLANNER_SETUPS and plan["pairs"] == PLANNER_SETUPS * (PLANNER_SETUPS - 1) // 2 and plan["assumptions"]["rates_from"] == "stored measurements", plan
    ok = _report("benchtape compare big --json", walls, cpus, TARGET_S, load)
    ok &= _report("benchtape run big --dry-run --json (plan, identities, reuse lookup)", preview_walls, preview_cpus, PREVIEW_TARGET_S, load)
    ok &= _report(f"benchtape run wide --dry-run --json ({PLANNER_SETUPS} setups, {plan['pairs']} pairs planned from stored rates)", wide_walls, wide_cpus, WIDE_TARGET_S, load)
    ok &= time_planner()
    return 0 if ok else 1


def time_planner() -> bool:
    """The power planner (replay.power.plan) on 100 setups × 200 tasks × 5 attempts of stored
    counts, with --detect: the hardest of 4,950 pairs, the tasks and attempts it needs."""
    from benchtape.replay.power import plan, setups_from

    rng = random.Random(5)
    per_arm = {f"s{i}": {f"t{j}": (5, sum(rng.random() < 0.3 + 0.004 * i for _ in range(5))) for j in range(200)} for i in range(PLANNER_SETUPS)}
    setups = setups_from([(f"s{i}", f"setup {i}") for i in range(PLANNER_SETUPS)], per_arm)
    walls = []
    for _ in range(ROUNDS):
        started = time.perf_counter()
        doc = plan(setups, 200, 5, detect=0.05)
        walls.append(time.perf_counter() - started)
    median = statistics.median(walls)
    verdict = "ok" if median < PLANNER_TARGET_S else "MISSED"
    print(f"planner, {PLANNER_SETUPS} setups ({doc['pairs']} pairs) × 200 tasks × 5 attempts, --detect 5pp (in process): median {median:.3f}s over {ROUNDS} rounds (target < {PLANNER_TARGET_S:g}s) {verdict}")
    return median < PLANNER_TARGET_S


def _report(what: str, walls: list[float], cpus: list[float], target: float, load: float) -> bool:
    median = statistics.median(walls)
    verdict = "ok" if median < target else "MISSED"
    print(f"{what} (fresh process, start to exit): median {median:.2f}s, best {min(walls):.2f}s over {ROUNDS} rounds (target < {target:g}s) {verdict}")
    print(f"  CPU (user + system) per run: median {statistics.median(cpus):.2f}s; load average {load:.1f} on {os.cpu_count()} cores (wall time grows with the load, CPU time does not)")
    return median < target


if __name__ == "__main__":
    sys.exit(main())
