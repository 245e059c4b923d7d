"""`benchtape run --model scripted`: the real Claude Code and Codex binaries, started exactly as
for a real run, with only their model endpoint pointed at benchtape's scripted server.

The fixtures-red benches fix (PASS) and break (FAIL) the demo calculator through the real
tools; each session records its endpoint, script hash and binary version, and stores the
tool's own on-disk record beside the stream; the negative control runs through the real
binary with the no-op script; a timeout kills the real process tree; nothing outside the
sandbox is installed or changed.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from cli import benchtape

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from realagents import need, npm_global  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BENCHES = ROOT / "fixtures-red" / "scripted"


def _results(report: Path) -> dict[str, dict]:
    return {r["scenario_id"]: r for r in json.loads(report.read_text())["results"]}


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_the_real_tool_fixes_and_breaks_through_the_scripted_model(tool, tmp_path):
    binary = need(tool)
    before = npm_global()
    db, report = tmp_path / "s.db", tmp_path / "r.json"
    out = benchtape("run", BENCHES / f"{tool}.yaml", "--db", db, "--report-json", report, cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr  # one scenario fails, as the bench means it to
    results = _results(report)
    assert results["fixes-the-bug"]["status"] == "pass", results["fixes-the-bug"]["checks"]
    assert results["breaks-it-differently"]["status"] == "fail"
    for r in results.values():
        started = r["session"]["actions"][0]["data"]
        assert started["model_endpoint"]["kind"] == "scripted" and len(started["model_endpoint"]["script_sha256"]) == 64
        assert started["binary"]["version"] == {"claude-code": "2.1.328", "codex": "0.169.0"}[tool]
        assert Path(started["binary"]["path"]).resolve() == binary.resolve()
        kinds = [a["kind"] for a in r["session"]["actions"]]
        assert "transcript" in kinds and not [a for a in r["session"]["actions"] if a["kind"] == "error"]
        assert r["session"]["metrics"]["tokens_in"]  # the script's usage numbers: cost is known, not guessed
    assert npm_global() == before  # nothing installed or updated outside the sandbox
    _snapshots_leave_out_the_tools_bookkeeping(db, tool)
    # the agent's changes are its own: not the config benchtape wrote for the scripted model, nor
    # the tool's state folders; claude rewrites .claude.json at every start, so the snapshots
    # keep it (an agent may be asked to add an MCP server there) and the patch names it instead
    shown = benchtape("show", "latest", "--diff", "--db", db, cwd=tmp_path)
    diff = shown.stdout
    assert "calc.py" in diff and not [line for line in diff.splitlines() if line.startswith("diff --git") and (".codex/" in line or ".claude" in line)], diff
    left_out = "left out of the patch: .claude.json, the tool's own state"
    assert (left_out in shown.stderr) == (tool == "claude-code"), shown.stderr


def _snapshots_leave_out_the_tools_bookkeeping(db: Path, tool: str) -> None:
    """HOME is the workspace at level home: the final snapshot holds the agent's work and the
    tool's configuration, not the tool's session file, state databases or bundled skills."""
    import io
    import tarfile

    from benchtape.adapters.base import get_adapter
    from benchtape.sandbox.treediff import covers
    from benchtape.store.database import Store

    store = Store(db, readonly=True)
    own = get_adapter(tool).bookkeeping
    for row in store.session_rows():
        session = store.load_session(row.id)
        names = tarfile.open(fileobj=io.BytesIO(store.get_blob(session.snapshot["sha256"]))).getnames()
        assert "calc.py" in names and {"claude-code": ".claude/settings.json", "codex": ".codex/config.toml"}[tool] in names
        assert not [n for n in names if any(covers(p, n) for p in own)]
        # nothing else of the tool's: no random ids, locks or per-session folders (each one was
        # an "agent change" in `show --diff`, and made every run's workspace differ)
        tool_state = sorted(n for n in names if n.startswith((".claude", ".codex")))
        assert tool_state == {"claude-code": [".claude.json", ".claude/plugins", ".claude/settings.json"], "codex": [".codex/config.toml", ".codex/skills"]}[tool], tool_state
        assert session.snapshot["left_out"]["patterns"] == list(own) and session.snapshot["left_out"]["entries"] >= 1
        assert session.staged_snapshot.get("own_state", []) == {"claude-code": [".claude.json"], "codex": []}[tool]  # what the patch names, not patches


def test_the_stored_transcript_holds_the_same_calls_as_the_stream(tmp_path):
    need("claude-code")
    db = tmp_path / "s.db"
    assert benchtape("run", BENCHES / "claude-code.yaml", "--db", db, "--scenario", "fixes-the-bug", cwd=tmp_path).returncode == 0
    from benchtape.adapters.claude_disk import ClaudeDiskParser
    from benchtape.store.database import Store

    store = Store(db, readonly=True)
    [row] = list(store.session_rows())
    session = store.load_session(row.id)
    [transcript] = [a for a in session.actions if a.kind == "transcript"]
    parser = ClaudeDiskParser()
    disk = [a for line in store.get_blob(transcript.data["sha256"]).decode().splitlines() for a in parser.feed(line)] + parser.finish()
    stream_calls = [(c.tool, c.outcome) for c in session.calls]
    disk_calls = [(a.data["tool"], None) for a in disk if a.kind == "tool.call"]
    assert [t for t, _ in stream_calls] == [t for t, _ in disk_calls] == ["Read", "Edit", "Bash"]


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_the_negative_control_runs_through_the_real_binary(tool, tmp_path):
    need(tool)
    out = benchtape("check", BENCHES / f"{tool}.yaml", "--harness", tool, "--model", "scripted", "--db", tmp_path / "c.db", "--json", cwd=tmp_path)
    doc = json.loads(out.stdout)
    assert out.returncode == 0, out.stdout + out.stderr  # every gradable check failed under the no-op model
    con = sqlite3.connect(tmp_path / "c.db")
    harnesses = {h for (h,) in con.execute("SELECT harness FROM sessions")}
    assert harnesses == {tool}
    noops = [json.loads(d)["model_endpoint"]["noop"] for (d,) in con.execute("SELECT data FROM actions WHERE kind = 'session.started'")]
    assert noops and all(noops) and doc["totals"]["WRONGLY PASSED"] == 0


def test_the_negative_control_through_a_harness_asks_for_the_scripted_model_and_names_an_unknown_one(tmp_path):
    """A real harness without --model scripted is refused before anything runs (it would spend);
    a harness that does not exist is named as such (preflight, exit 3), not asked for a model."""
    bench = BENCHES / "codex.yaml"
    out = benchtape("check", bench, "--harness", "codex", "--db", tmp_path / "c.db", cwd=tmp_path)
    assert out.returncode == 2 and "needs --model scripted" in out.stderr
    out = benchtape("check", bench, "--harness", "nope", "--db", tmp_path / "c.db", cwd=tmp_path)
    assert out.returncode == 3 and "harness 'nope' is not known" in out.stdout + out.stderr and "--model scripted" not in out.stderr


def _hanging_bench(tmp_path: Path, marker: str, timeout: str) -> Path:
    """A bench whose real claude runs a Bash call that sleeps 300 s, `marker` on its command line."""
    (tmp_path / "td").mkdir()
    (tmp_path / "td" / "wait.py").write_text("import time\ntime.sleep(300)\n")
    bench = tmp_path / "slow.yaml"
    bench.write_text(yaml.safe_dump({
        "harness": "claude-code",
        "harness_config": {"model": "scripted", "args": ["--permission-mode", "bypassPermissions"]},
        "defaults": {"interactive": False, "timeout": timeout},
        "scenarios": [{"name": "hangs", "prompt": "wait", "testdata": "td", "mock": {"steps": [{"tool": "Bash", "input": {"command": f"python3 wait.py {marker}"}}, {"say": "never"}]}}],
    }))
    return bench


def test_a_timeout_kills_the_real_process_tree(tmp_path):
    need("claude-code")
    marker = f"marker-{os.getpid()}-{tmp_path.name}"
    bench = _hanging_bench(tmp_path, marker, "4s")
    out = benchtape("run", bench, "--db", tmp_path / "t.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    assert out.returncode == 1, out.stdout + out.stderr
    r = _results(tmp_path / "r.json")["hangs"]
    assert r["session"]["status"] == "timeout" and r["session"]["timed_out"] is True
    left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    subprocess.run(["pkill", "-f", marker])
    assert left == [], "the agent's children outlived the session"


@pytest.mark.parametrize("how", ["ctrl-c", "kill-9"])
def test_ctrl_c_and_kill_9_of_benchtape_end_the_real_process_tree(tmp_path, how):
    """benchtape stopped mid-session with the real claude in a long Bash call: Ctrl-C records the
    session `interrupted` (exit 130); a kill -9 leaves it to `recover`, which finishes it as
    `interrupted`. Either way nothing the agent started outlives it."""
    import signal
    import time

    from cli import popen

    need("claude-code")
    marker = f"marker-{how}-{os.getpid()}-{tmp_path.name}"
    bench = _hanging_bench(tmp_path, marker, "120s")
    db = tmp_path / "t.db"
    proc = popen("run", bench, "--db", db, cwd=tmp_path)
    try:
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode != 0:
            time.sleep(0.2)  # until the agent is inside its Bash call
        proc.send_signal(signal.SIGINT if how == "ctrl-c" else signal.SIGKILL)
        proc.communicate(timeout=60)
        if how == "kill-9":
            recovered = benchtape("recover", "--db", db, cwd=tmp_path)
            assert recovered.returncode == 0, recovered.stdout + recovered.stderr
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
            time.sleep(0.2)
        left = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout.split()
    finally:
        proc.kill()
        subprocess.run(["pkill", "-9", "-f", marker])
    assert left == [], "the agent's children outlived benchtape"
    if how == "ctrl-c":
        assert proc.returncode == 130
    with sqlite3.connect(db) as c:
        statuses = [json.loads(d)["status"] for (d,) in c.execute("SELECT data FROM actions WHERE kind = 'session.finished'")]
        calls = [json.loads(d)["tool"] for (d,) in c.execute("SELECT data FROM actions WHERE kind = 'tool.call'")]
    assert statuses == ["interrupted"] and calls == ["Bash"]


def test_a_scripted_run_refuses_a_level_that_uses_your_home(tmp_path):
    """`none` leaves your HOME as the tool's; `workspace` puts your ~/.claude back after a Claude
    Code session (tests/e2e/test_interactive_workspace.py), not codex's ~/.codex."""
    need("claude-code")
    bench = tmp_path / "b.yaml"
    bench.write_text("harness: claude-code\nharness_config: {model: scripted}\ndefaults: {interactive: false}\nscenarios:\n  - {name: a, prompt: p, sandbox: none}\n")
    out = benchtape("preflight", bench)
    assert out.returncode == 3 and "needs a private HOME, and level 'none' uses yours" in out.stderr
    out = benchtape("preflight", bench, "--harness", "codex", "--sandbox", "workspace")
    assert out.returncode == 3 and "needs a private HOME, and level 'workspace' uses yours" in out.stderr


def test_a_misspelt_harness_in_a_bench_is_named_by_its_line_with_the_closest(tmp_path):
    """`harness: codx` said only "not known (want one of …)", with no line and no guess."""
    bench = tmp_path / "b.yaml"
    bench.write_text("description: one scenario\n\nharness: codx\nscenarios:\n  - name: a\n    prompt: hi\n    checks: [{type: contains, value: hi}]\n")
    out = benchtape("preflight", bench, cwd=tmp_path)
    assert out.returncode == 3 and f"{bench}:3: harness 'codx' is not known: did you mean 'codex'?" in out.stdout + out.stderr, out.stdout + out.stderr
    out = benchtape("check", BENCHES / "codex.yaml", "--harness", "cdex", "--db", tmp_path / "c.db", cwd=tmp_path)
    assert out.returncode == 3 and ": --harness: harness 'cdex' is not known: did you mean 'codex'?" in out.stdout + out.stderr


def test_preflight_takes_model_and_checks_a_scripted_run_as_it_will_run(tmp_path):
    """`preflight` had no --model, so a scripted run's own gates (a private HOME, its steps
    playable) could not be checked before `run --model scripted`."""
    bench = BENCHES / "codex.yaml"
    scripted = benchtape("preflight", bench, "--harness", "codex", "--model", "scripted", "--sandbox", "none", cwd=tmp_path)
    assert scripted.returncode == 3 and "a scripted model run needs a private HOME" in scripted.stdout + scripted.stderr, scripted.stdout + scripted.stderr
    demo = benchtape("preflight", ROOT / "fixtures-red" / "demo" / "bench.yaml", "--harness", "codex", "--model", "scripted", "--sandbox", "none", cwd=tmp_path)
    assert demo.returncode == 3 and "a scripted model run needs a private HOME" in demo.stdout + demo.stderr, demo.stdout + demo.stderr  # a bench that names no model: --model's


def test_a_scenario_with_nothing_to_play_is_said_before_the_run(tmp_path):
    """The scripted model plays a scenario's `mock:` steps (the solver only a history task's
    fix); one without any played the no-op silently, and its setup was ranked as an agent: said
    before the run, with the way to script it, and not for a scenario that has steps. On Harbor
    tasks (no `mock:`, and no reference patch for the solver) the way out is the oracle."""
    bench = tmp_path / "b.yaml"
    bench.write_text(
        "harness: codex\ndefaults: {sandbox: home}\nscenarios:\n"
        "  - {name: scripted-one, prompt: p, mock: {steps: [{say: done}]}, checks: [{type: contains, value: done}]}\n"
        "  - {name: bare-one, prompt: p, checks: [{type: contains, value: done}]}\n"
    )
    for model in ("scripted", "scripted-solver"):
        said = benchtape("preflight", bench, "--model", model, cwd=tmp_path)
        text = said.stdout + said.stderr
        assert "the scripted model has no `mock:` steps to play for 'bare-one'" in text and "give it `mock:" in text and "'scripted-one'" not in text, (model, text)
    harbor = benchtape("run", ROOT / "fixtures-red" / "harbor", "--harness", "claude-code", "--model", "scripted", "--dry-run", cwd=tmp_path)
    text = " ".join((harbor.stdout + harbor.stderr).split())
    assert harbor.returncode == 0 and "its cells change nothing and are ranked as a setup" in text and "solution/solve.sh, which `--harness oracle` runs" in text, text
    oracle = benchtape("run", ROOT / "fixtures-red" / "harbor", "--harness", "oracle", "--dry-run", cwd=tmp_path)
    assert oracle.returncode == 0 and "change nothing" not in oracle.stdout + oracle.stderr, oracle.stdout + oracle.stderr
