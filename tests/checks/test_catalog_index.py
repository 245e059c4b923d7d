"""The generated check index (checks/_index.py) says which family module registers each type,
so a bench loads only the families it uses; it must agree with the modules, and a partly
loaded registry must answer as the whole catalog does."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str) -> str:
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_index_is_what_the_modules_register():
    fresh = _run("from benchtape.checks._indexgen import build_index, module_text; print(module_text(build_index()), end='')")
    assert fresh == (ROOT / "checks" / "_index.py").read_text(), "checks/_index.py is stale: run `python -m benchtape.checks._indexgen`"


def test_a_bench_of_string_checks_loads_neither_jsonschema_nor_the_judges():
    out = _run(
        "import sys\n"
        "from benchtape.checks import build\n"
        "from benchtape.core.results import CheckSpec\n"
        "build(CheckSpec(type='contains', value='x')); build(CheckSpec(type='regex', value='x'))\n"
        "print(sorted(m for m in ('jsonschema', 'benchtape.checks.judge', 'benchtape.checks.structured', 'urllib.request') if m in sys.modules))"
    )
    assert out.strip() == "[]"


@pytest.mark.parametrize(
    "name",
    ["contains", "trajectory:tool-used", "skill-used", "custom:wasm", "javascript", "no-such-check", "contians", "session:nope"],
)
def test_a_lookup_in_a_fresh_process_answers_as_the_whole_catalog(name):
    """The same CheckInfo (or the same error, with its suggestion) whether the registry was
    loaded for this one type or entirely."""
    probe = (
        "import sys\n"
        "from benchtape.checks import registry\n"
        "def ask():\n"
        "    try:\n"
        "        return 'ok ' + registry.lookup(sys.argv[1]).type\n"
        "    except registry.CheckConfigError as exc:\n"
        "        return 'error ' + str(exc)\n"
        "first = ask()\n"
        "registry.catalog()\n"
        "print(first == ask(), first)\n"
    )
    done = subprocess.run([sys.executable, "-c", probe, name], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("True "), done.stdout
