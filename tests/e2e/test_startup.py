"""Start-up: `benchtape version`, `--version` and bare `--help` are answered without importing
typer (or anything heavy), and the cached top-level help is exactly what typer prints, so a
new or renamed command cannot leave it stale. `benchtape NAME` imports only NAME's module:
every command's `--help`, and `sessions` on an empty store, import none of the heavy modules
(a new top-level import on their path fails here by name). Timing itself is measured in
`make bench` (benchmarks/startup.py), not asserted here."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from cli import benchtape

from benchtape import _help
from benchtape.command_table import ALWAYS, COMMANDS, MODULES
from benchtape.core.version import VERSION
from benchtape.helpgen import typer_help
from benchtape.store.database import Store

PROBE = """
import sys
sys.argv = ["benchtape", *{args!r}]
from benchtape.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
heavy = sorted(m for m in ("typer", "pydantic", "rich", "sqlite_utils", "benchtape.checks", "jsonschema", "benchtape.store.database", "benchtape.core.errors") if m in sys.modules)
print("HEAVY", heavy, code, file=sys.stderr)
"""


def _probe(*args: str, columns: str = "100") -> subprocess.CompletedProcess:
    env = {**os.environ, "COLUMNS": columns}
    return subprocess.run([sys.executable, "-c", PROBE.format(args=list(args))], env=env, capture_output=True, text=True, timeout=60)


# What a command's start-up must not pay for unless it uses it: pydantic (typer builds its
# coercion with it), sqlite-utils (it imports numpy and pandas), numpy, rich, YAML, JMESPath,
# the docker SDK, jsonschema, the web viewer's server, and benchtape's grading, checks,
# sandbox, adapters and bench loader.
HEAVY = ("pydantic", "sqlite_utils", "numpy", "pandas", "rich", "yaml", "jmespath", "docker", "jsonschema", "wasmtime", "starlette", "uvicorn", "benchtape.checks", "benchtape.replay.grading", "benchtape.replay.query", "benchtape.sandbox", "benchtape.adapters", "benchtape.spec.bench", "benchtape.recorder")

LOADED = """
import json, sys
sys.argv = ["benchtape", *{args!r}]
from benchtape.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
import gc
print(json.dumps({{"code": code, "modules": sorted(sys.modules), "gc": gc.isenabled()}}), file=sys.stderr)
"""


def _loaded(*args: str, cwd: Path | None = None) -> tuple[int, set[str]]:
    """The exit code of `benchtape ARGS` and every module it imported, in a fresh interpreter."""
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("BENCHTAPE_DB", None)
    done = subprocess.run([sys.executable, "-c", LOADED.format(args=list(args))], env=env, cwd=cwd, capture_output=True, text=True, timeout=60)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    assert found["gc"], f"`benchtape {' '.join(args)}` left the cycle collector off"  # the start-up pause ends with the command
    return found["code"], set(found["modules"])


def _heavy(modules: set[str]) -> list[str]:
    return sorted(h for h in HEAVY if h in modules or any(m.startswith(h + ".") for m in modules))


def test_cached_help_is_typers_help():
    assert _help.TEXT == typer_help(), "benchtape/_help.py is stale: run `python -m benchtape.helpgen`"


@pytest.mark.parametrize("args", [["version"], ["--version"]])
def test_version_imports_nothing_heavy(args):
    out = _probe(*args)
    assert out.stdout == f"benchtape {VERSION}\n"
    assert "HEAVY [] 0" in out.stderr, out.stderr


def test_help_is_the_cached_text_and_imports_nothing_heavy():
    out = _probe("--help")
    assert out.stdout.startswith(_help.TEXT)
    assert out.stdout[len(_help.TEXT):].startswith("\nHarnesses") and "built-in: aider, claude-code, codex, command, gemini-cli, mini-swe-agent, mock, opencode, oracle, qwen-code" in out.stdout
    assert "HEAVY [] 0" in out.stderr, out.stderr


def test_no_arguments_prints_help_on_stderr_and_exits_2():
    out = benchtape()
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(_help.TEXT) and "\nHarnesses" in out.stderr


def test_a_narrow_terminal_gets_typers_own_layout():
    """The cache is the 80-column layout; narrower, typer wraps it itself."""
    out = _probe("--help", columns="50")
    assert out.stdout != _help.TEXT and "Usage: " in out.stdout and "run" in out.stdout
    assert "'typer'" in out.stderr


def test_a_real_command_still_goes_through_typer():
    out = benchtape("version", "--help")
    assert out.returncode == 0 and "Print benchtape's version" in out.stdout


def test_the_command_table_names_what_each_module_registers():
    """COMMANDS (what `benchtape NAME` imports) is what the modules register, hidden names included."""
    found: dict[str, str] = {}
    for name in MODULES:
        app = typer.Typer()
        __import__(f"benchtape.{name}", fromlist=["register"]).register(app)
        names = [c.name for c in app.registered_commands] + [g.name for g in app.registered_groups]
        assert None not in names, f"{name} registers a command without an explicit name"
        for command in names:
            assert command not in found, f"{command} registered by {found.get(command)} and {name}"
            found[command] = name
    assert {k: v for k, v in COMMANDS.items() if k != "version"} == found
    assert COMMANDS["version"] == ALWAYS and set(COMMANDS.values()) | {ALWAYS} == set(MODULES)


@pytest.mark.parametrize("command", sorted(COMMANDS))
def test_each_commands_help_imports_its_module_and_nothing_heavy(command):
    code, modules = _loaded(command, "--help")
    assert code == 0
    assert _heavy(modules) == [], f"`benchtape {command} --help` imported {_heavy(modules)}"
    commands = {m.removeprefix("benchtape.") for m in modules if m.startswith("benchtape.cmd_")}
    assert commands <= {COMMANDS[command], ALWAYS}, f"`benchtape {command} --help` imported {sorted(commands)}"


def _subcommands() -> list[tuple[str, str]]:
    from benchtape.cli import build

    return sorted({(g.name, c.name) for g in build().registered_groups if g.typer_instance is not None and g.name for c in g.typer_instance.registered_commands if c.name})


@pytest.mark.parametrize("group,command", _subcommands())
def test_each_subcommands_help_imports_nothing_heavy(group, command):
    code, modules = _loaded(group, command, "--help")
    assert code == 0
    assert _heavy(modules) == [], f"`benchtape {group} {command} --help` imported {_heavy(modules)}"


def test_sessions_on_an_empty_store_imports_nothing_heavy(tmp_path):
    Store(tmp_path / ".benchtape" / "benchtape.db").close()
    code, modules = _loaded("sessions", cwd=tmp_path)
    assert code == 0
    assert _heavy(modules) == [], f"`benchtape sessions` imported {_heavy(modules)}"
    assert "benchtape.store.database" in modules  # it did open the store (and checked its schema)
    assert "benchtape.core.model" not in modules  # no session is read: the domain model (~8 ms, a third of the 4x budget) stays unloaded
    assert "_hashlib" not in modules and "random" not in modules  # OpenSSL (~3 ms) and the retry jitter's generator: the schema check hashes with CPython's own SHA-256


def test_a_mistyped_command_still_gets_clicks_suggestion():
    """No module holds the name: the full app is built, and click names the near miss."""
    out = benchtape("sesions")
    assert out.returncode == 2 and "No such command 'sesions'" in out.stderr and "sessions" in out.stderr.split("No such command")[1]


def test_an_app_built_again_in_one_process_prints_the_same_help():
    """A sub-app is a module-level object (cmd_report's), registered on every app built: its
    examples are marked for click once, not once per app."""
    from typer.testing import CliRunner

    from benchtape.cli import build

    runner = CliRunner()
    first = runner.invoke(build("report"), ["report", "list", "--help"]).output
    again = runner.invoke(build("report"), ["report", "list", "--help"]).output
    assert "Example: benchtape report list" in first
    assert first == again == runner.invoke(build(), ["report", "list", "--help"]).output


# What a command's own work needs is loaded; what it does not is not. Each list is what that
# command imported before the start-up work (issue 48) and needs for nothing it does here.
NOT_FOR_REGRADE = ("pydantic", "sqlite_utils", "numpy", "pandas", "docker", "jsonschema", "urllib3", "starlette", "uvicorn", "wasmtime", "benchtape.recorder", "benchtape.replay.reproduce", "benchtape.replay.task_controls", "rich", "benchtape.models.providers", "email")
NOT_FOR_QUERY = ("pydantic", "sqlite_utils", "numpy", "pandas", "docker", "jsonschema", "yaml", "benchtape.checks", "benchtape.replay.grading", "benchtape.sandbox")
NOT_FOR_CHECKS = ("pydantic", "sqlite_utils", "numpy", "pandas", "docker", "jsonschema", "urllib3", "starlette", "uvicorn", "benchtape.models.server", "benchtape.store")


def _any_of(names: tuple[str, ...], modules: set[str]) -> list[str]:
    return sorted(n for n in names if n in modules or any(m.startswith(n + ".") for m in modules))


def test_regrade_of_a_stored_session_loads_what_grading_needs_and_no_more(tmp_path):
    from benchtape.core.model import Action

    (tmp_path / "bench.yaml").write_text('description: start-up\nharness: mock\nscenarios:\n  - name: bench\n    prompt: "fix the thing"\n    checks:\n      - {type: contains, value: "done"}\n')
    store = Store(tmp_path / "one.db")
    run_id = store.new_run("run", bench_path="bench.yaml", harness="mock")
    store.append(
        store.new_session(run_id, "bench", harness="mock"),
        [
            Action("session.started", {"scenario": "bench", "harness": "mock", "model": "m", "prompt": "fix the thing", "work_dir": "/tmp/w"}),
            Action("message.assistant", {"text": "done: changed 1 file"}),
            Action("final_output", {"text": "done: changed 1 file"}),
            Action("session.finished", {"status": "ok", "exit_code": 0, "timed_out": False, "wall_ms": 10.0}),
        ],
    )
    store.close()
    code, modules = _loaded("regrade", "--bench", "bench.yaml", "--all", "--plain", "--db", "one.db", cwd=tmp_path)
    assert code == 0
    assert "benchtape.replay.grading" in modules and "benchtape.checks" in modules  # it did grade
    assert _any_of(NOT_FOR_REGRADE, modules) == []
    again = Store(tmp_path / "one.db", readonly=True)
    assert len(again.gradings()) == 1  # the new grading was written (through the connection, not sqlite-utils)
    again.close()


def test_query_on_an_empty_store_loads_no_grading(tmp_path):
    Store(tmp_path / ".benchtape" / "benchtape.db").close()
    code, modules = _loaded("query", "length(calls)", "--all", cwd=tmp_path)
    assert code == 0 and "jmespath" in modules
    assert _any_of(NOT_FOR_QUERY, modules) == []


def test_the_check_catalog_loads_no_store_server_or_schema_library(tmp_path):
    code, modules = _loaded("checks", cwd=tmp_path)
    assert code == 0 and "benchtape.checks.registry" in modules
    assert _any_of(NOT_FOR_CHECKS, modules) == []


def test_a_command_making_a_new_store_imports_sqlite_utils_without_numpy(tmp_path):
    """The migrations need sqlite-utils, which imports numpy (and pandas) when installed only to
    store their values: the command line hands it none, so they stay out of its process."""
    pytest.importorskip("numpy")  # installed with the test tools: else there is nothing to keep out
    transcript = tmp_path / "t.jsonl"
    transcript.write_text('{"type":"user","message":{"role":"user","content":"hi"},"sessionId":"s1","uuid":"u1","timestamp":"2026-01-01T00:00:00Z"}\n')
    code, modules = _loaded("import", "claude-code", str(transcript), "--db", "new.db", cwd=tmp_path)
    assert code == 0 and (tmp_path / "new.db").is_file()
    assert "sqlite_utils" in modules and "benchtape.store.migrations" in modules  # the store was made by the migrations
    assert _any_of(("numpy", "pandas"), modules) == []


def test_outside_the_command_line_sqlite_utils_keeps_its_numpy_support():
    """The Python API may run beside the user's own use of sqlite-utils: imported as it is there."""
    pytest.importorskip("numpy")
    probe = "import sys; from benchtape.store.sqlite_utils_db import sqlite_utils; import sqlite_utils.db as d; print(d.np is not None, 'numpy' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "True"], done.stderr


def test_a_store_opened_without_sqlite_utils_keeps_its_connection_as_it_was(tmp_path):
    """Wrapping the connection in sqlite-utils' Database turned recursive_triggers on (a
    REPLACE's implicit delete then meets the DELETE guards); the store, which no longer wraps
    it on open, turns it on itself, for a writer and a reader alike."""
    for readonly in (False, True):
        store = Store(tmp_path / "s.db", readonly=readonly)
        assert "db" not in vars(store)  # not made on open
        assert store.conn.execute("PRAGMA recursive_triggers").fetchone()[0] == 1
        assert store.db.conn is store.conn  # made on first use, over the same connection
        store.close()



GC_PROBE = """
import gc, json, sys
sys.argv = ["benchtape", *{args!r}]
import benchtape.guard as guard
seen = []
real = guard.guarded


def watched(body):
    def run():
        seen.append(gc.isenabled())  # as the guard starts: before the store opens
        try:
            return body()
        finally:
            seen.append(gc.isenabled())  # as the body ends
    return real(run)


guard.guarded = watched
from benchtape.cli import main
try:
    main()
except SystemExit as exc:
    code = exc.code
print(json.dumps({{"code": code, "seen": seen, "after": gc.isenabled()}}), file=sys.stderr)
"""


@pytest.mark.parametrize("args", [("sessions",), ("checks",), ("sessions", "--help"), ("sessions", "--no-such-option")])
def test_the_collector_is_off_while_a_command_starts_and_on_for_its_body_and_after(args, tmp_path):
    """The start-up pause (core/gcpause.py) ends where the body starts (after the store opens)
    and, for a command that never reaches its body (help, a usage error), as main returns."""
    Store(tmp_path / ".benchtape" / "benchtape.db").close()
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1"}
    env.pop("BENCHTAPE_DB", None)
    done = subprocess.run([sys.executable, "-c", GC_PROBE.format(args=list(args))], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    found = json.loads(done.stderr.strip().splitlines()[-1])
    assert found["after"] is True
    if args[-1] in ("--help", "--no-such-option"):
        assert found["seen"] == [] and found["code"] in (0, 2)
    else:
        assert found["code"] == 0 and found["seen"] == [False, True]
