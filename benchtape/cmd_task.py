"""`benchtape task scan|create|lint|validate|list|export|controls|envs`: tasks from the repository's own history
(and `envs`: the project environments cached for them).

Each command finds the project (the git repository holding the current folder), calls one
function of benchtape.tasks and hands the result to benchtape/render_tasks.py (or prints it
as one JSON document with `--json`).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from benchtape.options import Db, Json

if TYPE_CHECKING:  # imported where used: `benchtape --help` loads no task code
    from benchtape.app.evaluations import Project


def register(app: typer.Typer) -> None:
    from benchtape.guard import command

    task = typer.Typer(name="task", help="Tasks from the repository's own history: scan, create, lint, validate, list, export; envs: their cached environments.", no_args_is_help=True, add_completion=False, rich_markup_mode=None)

    @task.command("scan")
    @command()
    def scan_cmd(
        json_out: Json = False,
        limit: int = typer.Option(20, "--limit", help="Show the best N candidates (1-200)."),
        since: str | None = typer.Option(None, "--since", help="Only changes since a date (2024-01-31) or an age (90d, 6w, 3m, 1y)."),
        max_files: int = typer.Option(10, "--max-files", help="Skip changes whose fix touches more implementation files than this."),
    ) -> int:
        """Rank the merged changes of the LOCAL history (merge commits, squash merges, plain commits) as task candidates; say why the others are skipped. Offline; --json is one document and never prompts.

        Example: benchtape task scan --limit 10 --since 1y
        """
        return _scan(json_out, limit, since, max_files)

    @task.command("create")
    @command()
    def create_cmd(
        refs: list[str] = typer.Argument(..., metavar="PR | COMMIT…", help="A PR number (`task scan` lists them), or a commit."),
        json_out: Json = False,
    ) -> int:
        """Write an UNVALIDATED task per change: .benchtape/tasks/<id>/{task.yaml, prompt.md, tests.patch, reference.patch}. Never overwrites a task.

        Example: benchtape task create 603
        """
        return _create(refs, json_out)

    @task.command("lint")
    @command()
    def lint_cmd(
        ids: list[str] | None = typer.Argument(None, metavar="[ID…]", help="Tasks to lint (default: every task)."),
        fix: bool = typer.Option(False, "--fix", help="Redact every finding in prompt.md as [redacted]."),
        json_out: Json = False,
    ) -> int:
        """Find where a prompt tells the agent where the answer is: the PR URL, owner/repo, forge hosts, the task's own #N or pull/N, prefixes of its base or fix commit. Exit 1 while any finding remains.

        Example: benchtape task lint --fix
        """
        return _lint(ids, fix, json_out)

    @task.command("validate")
    @command()
    def validate_cmd(
        ids: list[str] | None = typer.Argument(None, metavar="[ID…]", help="Tasks to validate (default: every task)."),
        sandbox: str = typer.Option("auto", "--sandbox", help="auto (container when an engine answers, else home), home or container."),
        json_out: Json = False,
        db: Db = None,
    ) -> int:
        """Prove each task's hidden verifier in clean sandboxes: base + tests.patch must FAIL with tests that ran, base + reference.patch + tests.patch must PASS; only then write `validation:`. Exit 0 all validated, 1 otherwise.

        Example: benchtape task validate 603 551 --sandbox home
        """
        return _validate(ids, sandbox, json_out, db)

    @task.command("export")
    @command()
    def export_cmd(
        ids: list[str] = typer.Argument(..., metavar="ID…", help="Tasks to export."),
        fmt: str = typer.Option("harbor", "--format", "-f", help="harbor: a Harbor task folder each (what `harbor run -p DIR` takes)."),
        output: Path = typer.Option(..., "--output", "-o", help="A new (or empty) folder to write the task folders into."),
        json_out: Json = False,
    ) -> int:
        """Write tasks mined from history as Harbor task folders: instruction, environment (the tree at the base commit), tests with the hidden verifier, solution from the reference patch.

        Example: benchtape task export 603 551 --format harbor -o harbor-tasks/ && harbor run -p harbor-tasks/603 -a oracle
        """
        return _export(ids, fmt, output, json_out)

    @task.command("list")
    @command()
    def list_cmd(json_out: Json = False) -> int:
        """Every task's state (unvalidated, valid, stale, leaking, broken) and the command that moves it on.

        Example: benchtape task list
        """
        return _list(json_out)

    @task.command("controls")
    @command()
    def controls_cmd(
        ids: list[str] | None = typer.Argument(None, metavar="[ID…]", help="Tasks to check (default: every valid task)."),
        json_out: Json = False,
    ) -> int:
        """The controls on every valid task, through the same verdict an agent's candidate gets: the oracle (reference.patch, or the task's solution script) must pass, the no-op agent must not. Stale and unvalidated tasks are skipped, by name. Exit 0 when every control holds, 1 otherwise.

        Example: benchtape task controls 603 551
        """
        return _controls(ids, json_out)

    @task.command("envs")
    @command()
    def envs_cmd(
        prune: bool = typer.Option(False, "--prune", help="Remove the environments unused for --unused-for, and builds that never finished."),
        unused_for: str = typer.Option("30d", "--unused-for", help="With --prune: an age (30d, 6w, 3m, 1y); 0d removes every environment no running benchtape uses."),
        json_out: Json = False,
    ) -> int:
        """The project environments cached for validation and grading (~/.cache/benchtape/envs, or $BENCHTAPE_ENV_CACHE): each one's project, Python, size and last use. --prune frees the ones unused for a while; one a running benchtape uses is never removed. Exit 1 when one could not be removed.

        Example: benchtape task envs --prune --unused-for 30d
        """
        return _envs(prune, unused_for, json_out)

    app.add_typer(task, name="task")


def _project(*, history: bool = False) -> Project:
    """`history`: the command mines the repository's history (scan, create, export), so only a git work tree will do."""
    from benchtape.app.evaluations import load_project
    from benchtape.app.tasks import project_root

    return load_project(project_root(Path.cwd(), history=history))


def _scan(json_out: bool, limit: int, since: str | None, max_files: int) -> int:
    from benchtape.app.tasks import scan
    from benchtape.render_tasks import print_json, scan_table

    result = scan(_project(history=True), limit=limit, since=since, max_files=max_files)
    if json_out:
        print_json(result.to_dict())
    else:
        scan_table(result)
    return 0


def _create(refs: list[str], json_out: bool) -> int:
    from benchtape.app.tasks import create_task
    from benchtape.render_tasks import created_lines, print_json

    project = _project(history=True)
    done = [create_task(project, ref) for ref in refs]
    if json_out:
        print_json({"created": [c.to_dict() for c in done]})
    else:
        for c in done:
            created_lines(c)
    return 0


def _lint(ids: list[str] | None, fix: bool, json_out: bool) -> int:
    from benchtape.app.tasks import lint
    from benchtape.render_tasks import lint_lines, print_json

    results = lint(_project(), ids, fix)
    remaining = [r for r in results if not r.clean]
    if json_out:
        print_json({"ok": not remaining, "tasks": [r.to_dict() for r in results]})
    else:
        lint_lines(results)
    return 1 if remaining else 0


def _validate(ids: list[str] | None, sandbox: str, json_out: bool, db: Path | None) -> int:
    from benchtape.app.tasks import validate
    from benchtape.options import db_path, open_store
    from benchtape.render_tasks import print_json, validated_lines

    project = _project()
    store = open_store(db)
    logs = db_path(db).resolve().parent / "validate"
    progress = None if json_out else (lambda text: print(text, file=sys.stderr, flush=True))
    result = validate(project, ids, store=store, level=sandbox, logs=logs, progress=progress, argv=sys.argv[1:])
    if json_out:
        print_json(result.to_dict())
    else:
        validated_lines(result)
    return 0 if result.ok else 1


def _export(ids: list[str], fmt: str, output: Path, json_out: bool) -> int:
    from benchtape.app.tasks import export_harbor
    from benchtape.core.errors import BadInput
    from benchtape.render_tasks import print_json

    if fmt != "harbor":
        raise BadInput(f"unknown task export format {fmt!r}", fix="use --format harbor")
    from benchtape.app.tasks import task_rows

    project = _project(history=True)
    done = export_harbor(project, ids, output)
    # a task exported as it is, whatever its state: one never validated (or stale, or whose last
    # validation did not hold) was exported without a word, though its tests were never proven
    states = {r.id: r for r in task_rows(project) if r.id in ids}
    if json_out:
        print_json({"exported": [{**e.to_dict(), "state": states[e.id].state if e.id in states else None} for e in done]})
    else:
        for e in done:
            print(f"{e.id}: {e.folder} (environment {e.environment}, working directory {e.workdir})")
            if e.dependencies:
                print(f"  test dependencies: {e.dependencies}")
    for e in done:
        row = states.get(e.id)
        if row is not None and row.state != "valid":
            print(f"note: task {e.id} is {row.state} ({row.why}): exported as it is, its hidden tests not proven to fail before the fix and pass after it; next: {row.next}", file=sys.stderr)
    return 0


def _list(json_out: bool) -> int:
    from benchtape.app.tasks import counts, task_rows
    from benchtape.render_tasks import print_json, task_table

    rows = task_rows(_project())
    if json_out:
        print_json({"counts": counts(rows), "tasks": [r.to_dict() for r in rows]})
    else:
        task_table(rows)
    return 0


def _controls(ids: list[str] | None, json_out: bool) -> int:
    from benchtape.app.gradings import run_controls
    from benchtape.app.tasks import runnable
    from benchtape.core.errors import BadInput
    from benchtape.render_tasks import print_json

    project = _project()
    valid, others = runnable(project)
    if ids:
        known = {t.id for t in valid} | {r.id for r in others}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise BadInput(f"no task {unknown[0]!r} in {project.config_dir / 'tasks'}", fix="benchtape task list shows the tasks")
        valid = [t for t in valid if t.id in ids]
        others = [r for r in others if r.id in ids]
    results = run_controls(project, valid)
    ok = bool(results) and all(r.holds for r in results)
    if json_out:
        print_json({"ok": ok, "level": "home", "tasks": [r.to_dict() for r in results], "skipped": [{"id": r.id, "state": r.state, "why": r.why, "next": r.next} for r in others]})
    else:
        for r in results:
            print(f"{r.task}: {'holds' if r.holds else 'DOES NOT HOLD'} — oracle {r.oracle.outcome} ({r.oracle.reason}); no-op {r.noop.outcome}")
        for row in others:
            print(f"{row.id}: skipped ({row.state}: {row.why}) — {row.next}")
        if not results:
            print("no valid task to check: benchtape task validate", file=sys.stderr)
    return 0 if ok else 1


def _envs(prune: bool, unused_for: str, json_out: bool) -> int:
    from benchtape.app.tasks import cached_envs, prune_envs
    from benchtape.render_tasks import env_lines, print_json, pruned_lines

    if prune:
        cache, pruned = prune_envs(unused_for)
        if json_out:
            print_json({"cache": str(cache), "unused_for": unused_for, **pruned.to_dict()})
        else:
            pruned_lines(cache, unused_for, pruned)
        return 1 if pruned.failed else 0  # what could not be removed is still taking the space
    cache, found = cached_envs()
    if json_out:
        print_json({"cache": str(cache), "environments": [e.to_dict() for e in found], "bytes": sum(e.bytes for e in found)})
    else:
        env_lines(cache, found)
    return 0
