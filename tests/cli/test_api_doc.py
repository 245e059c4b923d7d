"""docs/api.md's notebook runs as written: record the demo, grade it again with a weaker bench,
compare the gradings, through the public API (a fresh interpreter, a real store)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _notebook() -> str:
    blocks = re.findall(r"```python\n(.*?)```", (ROOT / "docs" / "api.md").read_text(encoding="utf-8"), re.S)
    assert len(blocks) == 1, "docs/api.md holds one runnable example"
    return blocks[0]


def test_the_api_notebook_records_grades_and_compares(tmp_path: Path):
    (tmp_path / "notebook.py").write_text(_notebook(), encoding="utf-8")
    out = subprocess.run([sys.executable, "notebook.py"], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "flipped: ['weakens-the-test']" in out.stdout
    assert (tmp_path / "notebook.db").is_file()


def test_every_name_the_doc_tables_is_public():
    """The table's functions (a row's first cell) and its types (the last row) are `benchtape.<name>`."""
    import benchtape

    table = [line for line in (ROOT / "docs" / "api.md").read_text(encoding="utf-8").split("## Record")[0].splitlines() if line.startswith("| `")]
    functions = [re.match(r"\| `(\w+)\(", line) for line in table]
    named = [m.group(1) for m in functions if m] + re.findall(r"`(\w+)`", table[-1].split("|")[1])
    assert len(named) > 15
    assert [n for n in named if n not in benchtape.__all__] == []
