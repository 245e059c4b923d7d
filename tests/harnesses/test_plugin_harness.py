"""A harness from a third-party package: built and pip-installed from tests/plugins/example_harness,
found through the `benchtape.harnesses` entry point group, listed with its version, and run
through a bench with its own tool names read as canonical actions. Nothing in benchtape names it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugins" / "example_harness"
CALC = ROOT / "fixtures-red" / "demo" / "calc"


@pytest.fixture(scope="module")
def site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The plugin pip-installed (a real wheel build, its build backend fetched by pip as for any
    package) into a folder of its own, put on PYTHONPATH."""
    tmp = tmp_path_factory.mktemp("plugin")
    source = tmp / "src"
    shutil.copytree(PLUGIN, source)  # the build's own files stay out of the checkout
    target = tmp / "site"
    done = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--no-deps", "--disable-pip-version-check", "-q", "--target", str(target), str(source)],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert list(target.glob("benchtape_example_harness-0.3.1.dist-info/entry_points.txt"))
    return target


def benchtape(*args: str, cwd: Path, site: Path | None) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    if site is not None:
        env["PYTHONPATH"] = str(site)
    return subprocess.run([sys.executable, "-m", "benchtape", *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def write_bench(tmp: Path) -> Path:
    shutil.copytree(CALC, tmp / "calc")
    doc = {
        "description": "a plugin harness",
        "harness": "example-echo",
        "defaults": {"sandbox": "home", "timeout": "60s"},
        "scenarios": [{
            "name": "fix",
            "testdata": "calc",
            "prompt": "Fix calc.py.",
            "checks": [
                {"type": "exec", "args": {"cmd": ["python3", "-m", "unittest", "-q"], "timeout": "30s"}},
                {"type": "session:tool-used", "value": "action:edit"},
                {"type": "session:tool-used", "value": "Patch"},
            ],
        }],
    }
    path = tmp / "bench.yaml"
    path.write_text(json.dumps(doc))
    return path


def test_an_installed_plugin_harness_is_listed_with_its_version(site: Path, tmp_path: Path) -> None:
    helped = benchtape("--help", cwd=tmp_path, site=site)
    assert "example-echo" in helped.stdout and "plugin benchtape-example-harness 0.3.1" in helped.stdout
    listed = json.loads(benchtape("tools", "list", "--json", cwd=tmp_path, site=site).stdout)
    row = next(r for r in listed if r["harness"] == "example-echo")
    assert row["package"] == "benchtape-example-harness" and row["version"] == "0.3.1" and "problem" not in row
    assert row["target"] == "benchtape_example_harness:EchoHarness"
    doctor = json.loads(benchtape("doctor", "--json", cwd=tmp_path, site=site).stdout)
    check = next(c for c in doctor["checks"] if c["check"] == "harness example-echo")
    assert check["status"] == "ok" and "benchtape-example-harness 0.3.1" in check["detail"]


def test_a_plugin_harness_runs_a_bench_and_its_calls_are_canonical(site: Path, tmp_path: Path) -> None:
    bench = write_bench(tmp_path)
    done = benchtape("run", str(bench), "--db", str(tmp_path / "s.db"), cwd=tmp_path, site=site)
    assert done.returncode == 0, done.stdout + done.stderr
    session = json.loads(benchtape("show", "latest", "--db", str(tmp_path / "s.db"), "--json", cwd=tmp_path, site=site).stdout)
    calls = [(a["data"]["tool"], a["data"]["action"], [f["path"] for f in a["data"].get("files", [])]) for a in session["actions"] if a["kind"] == "tool.call"]
    assert calls == [("Peek", "read", ["calc.py"]), ("Patch", "edit", ["calc.py"]), ("Sh", "shell", [])]
    assert [v["status"] for v in session["verdicts"]] == ["PASS", "PASS", "PASS"]
    assert session["metrics"]["tokens_in"] == 120


def test_without_the_package_the_harness_is_unknown(tmp_path: Path) -> None:
    bench = write_bench(tmp_path)
    done = benchtape("run", str(bench), "--db", str(tmp_path / "s.db"), cwd=tmp_path, site=None)
    assert done.returncode == 3
    assert "harness 'example-echo' is not known" in done.stdout + done.stderr


def plugin_dist(site: Path, module: str, entry: str, code: str) -> Path:
    """A plugin package as `pip install` leaves it in `site`: its dist-info (METADATA, the
    `benchtape.harnesses` entry point `entry`) and its module's code; returns `site`."""
    dist = site / f"{module}-1.0.dist-info"
    dist.mkdir(parents=True)
    (dist / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {module.replace('_', '-')}\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text(f"[benchtape.harnesses]\n{entry}\n")
    (site / f"{module}.py").write_text(code)
    return site


def test_a_plugin_that_raises_on_import_is_bad_input_naming_it(tmp_path: Path) -> None:
    """Its code is not benchtape's: a plugin raising on import ended `run` in a traceback (exit 1)."""
    site = plugin_dist(tmp_path / "site", "broken_harness", "broken = broken_harness:Harness", "raise RuntimeError('broken on import')\n")
    out = benchtape("run", str(write_bench(tmp_path)), "--harness", "broken", "--db", str(tmp_path / "b.db"), cwd=tmp_path, site=site)
    assert out.returncode == 2 and "the harness plugin 'broken' (broken_harness:Harness) cannot load: RuntimeError: broken on import" in out.stderr, out.stdout + out.stderr
    assert "Traceback" not in out.stderr


def test_a_plugin_whose_tool_names_name_no_canonical_kind_is_bad_input_naming_it(tmp_path: Path) -> None:
    """`tool_names = {"Peek": "look:path"}` (a kind that is not read/edit/shell/...): `run` ended in
    a ValueError traceback (exit 1) from core/canonical.register_names, and `tools list` said the
    plugin was fine. Both say it now, naming the tool and the kinds there are."""
    code = "from benchtape.adapters.base import Harness as Base\nclass Harness(Base):\n    name = 'bad-kind'\n    tool_names = {'Peek': 'look:path'}\n"
    site = plugin_dist(tmp_path / "site", "kind_harness", "bad-kind = kind_harness:Harness", code)
    out = benchtape("run", str(write_bench(tmp_path)), "--harness", "bad-kind", "--db", str(tmp_path / "k.db"), cwd=tmp_path, site=site)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert "the harness plugin 'bad-kind' (kind_harness:Harness) cannot load: ValueError: harness 'bad-kind': tool 'Peek' names the action 'look'" in out.stderr
    listed = json.loads(benchtape("tools", "list", "--json", cwd=tmp_path, site=site).stdout)
    assert "names the action 'look'" in next(r for r in listed if r["harness"] == "bad-kind")["problem"]


def test_a_plugin_whose_command_raises_is_bad_input_naming_it(tmp_path: Path) -> None:
    """A plugin's `command(launch)` raising (a missing harness_config key, a typo) ended `run`
    in the plugin's traceback (exit 1), from recorder/runner.record."""
    code = "from benchtape.adapters.base import Harness as Base\nclass Harness(Base):\n    name = 'boom'\n    def command(self, launch):\n        raise RuntimeError('command exploded')\n"
    site = plugin_dist(tmp_path / "site", "boom_harness", "boom = boom_harness:Harness", code)
    out = benchtape("run", str(write_bench(tmp_path)), "--harness", "boom", "--db", str(tmp_path / "c.db"), cwd=tmp_path, site=site)
    assert out.returncode == 2 and "Traceback" not in out.stderr, out.stdout + out.stderr
    assert "the harness plugin 'boom' (boom_harness:Harness) failed to make its command: RuntimeError: command exploded" in out.stderr


def test_a_plugin_that_cannot_load_never_stops_a_bench_of_another_harness(site: Path, tmp_path: Path) -> None:
    """A newcomer's second, broken package (an entry point naming a class that is not there)
    stopped preflight of a bench on the working plugin: the advice on a check's tool name asked
    every installed harness for its tools. Only the bench's own harness is loaded now."""
    both = plugin_dist(shutil.copytree(site, tmp_path / "site"), "bad_harness", "bad-one = bad_harness:Missing", "class Harness:\n    pass\n")
    bench = write_bench(tmp_path)
    doc = json.loads(bench.read_text())
    doc["scenarios"][0]["checks"].append({"type": "session:tool-used", "value": "Edit"})  # a name example-echo never emits: the advice names harnesses
    bench.write_text(json.dumps(doc))
    checked = benchtape("preflight", str(bench), cwd=tmp_path, site=both)
    assert checked.returncode == 0 and "bad-one" not in checked.stdout + checked.stderr, checked.stdout + checked.stderr
    assert "names the tool 'Edit', which" in checked.stdout + checked.stderr
    done = benchtape("run", str(bench), "--db", str(tmp_path / "s.db"), cwd=tmp_path, site=both)
    assert done.returncode == 1 and "cannot load" not in done.stderr, done.stdout + done.stderr  # it ran: only the Edit check fails
    listed = json.loads(benchtape("tools", "list", "--json", cwd=tmp_path, site=both).stdout)
    assert "has no attribute 'Missing'" in next(r for r in listed if r["harness"] == "bad-one")["problem"]  # where it is said


def test_a_plugin_whose_entry_point_is_no_harness_name_is_never_used_and_says_so(tmp_path: Path) -> None:
    """An entry point named "Bad Name" was taken as a harness (gptme newcomer): its name goes into
    bench files, command lines, the store and tool folders. It is listed with the rule and never
    used: `--harness 'Bad Name'` is an unknown harness."""
    site = plugin_dist(tmp_path / "site", "spaced_harness", "Bad Name = spaced_harness:Harness", "from benchtape.adapters.base import Harness as Base\nclass Harness(Base):\n    name = 'Bad Name'\n")
    listed = json.loads(benchtape("tools", "list", "--json", cwd=tmp_path, site=site).stdout)
    assert "is no harness name" in next(r for r in listed if r["harness"] == "Bad Name")["problem"]
    out = benchtape("run", str(write_bench(tmp_path)), "--harness", "Bad Name", "--db", str(tmp_path / "n.db"), cwd=tmp_path, site=site)
    assert out.returncode == 3 and "harness 'Bad Name' is not known" in out.stdout + out.stderr, out.stdout + out.stderr  # blocked at preflight, as any unknown harness
