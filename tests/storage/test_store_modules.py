"""The store is split by job (docs/architecture.md, "One module per job"): the numbered
migrations, the codecs, the writer (every append) and the reader (every query the read side
runs), with `Store` composed from the reader and the writer and holding no SQL of its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from test_sql_in_the_store import STATEMENT, findings

STORE = Path(__file__).resolve().parents[2] / "store"


def statements(module: str) -> list[str]:
    """The SQL statements a store module writes as literals (f-strings' literal parts joined)."""
    tree = ast.parse((STORE / f"{module}.py").read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and STATEMENT.search(node.value):
            out.append(node.value.strip())
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x" for v in node.values)
            if STATEMENT.search(text):
                out.append(text.strip())
    return out


def test_store_is_the_reader_and_the_writer_composed():
    from benchtape import Store
    from benchtape.store.reader import Reader
    from benchtape.store.writer import Writer

    assert Store.__bases__ == (Reader, Writer)
    reads = {"actions", "load_session", "verdicts", "verdict_briefs", "get_blob", "judgments", "outcomes", "latest_outcomes", "cell_sessions", "measurement_roots", "schema_version"}
    writes = {"append", "append_line", "new_run", "new_session", "put_blob", "new_grading", "add_verdicts_many", "add_judgment", "add_outcome", "transaction"}
    assert reads <= set(vars(Reader)) and not reads & set(vars(Writer))
    assert writes <= set(vars(Writer)) and not writes & set(vars(Reader))


def test_each_module_holds_the_sql_of_its_job():
    assert not findings((STORE / "codecs.py").read_text(encoding="utf-8"), "codecs")  # pure encodings: no statement, no connection
    assert [s for s in statements("database") if not s.startswith("PRAGMA")] == []  # the composition: only how it opens
    assert not [s for s in statements("reader") if re.match(r"(INSERT|UPDATE|DELETE|CREATE|DROP)\b", s)]  # the reader only reads
    assert not [s for s in statements("writer") if re.match(r"(UPDATE|DELETE|CREATE)\b", s)]  # the writer appends (and lifts its own guards)
    assert [s for s in statements("writer") if s.startswith("INSERT")]
    for module in ("reader", "writer", "database", "codecs"):  # the schema is made in one place
        assert not [s for s in statements(module) if re.search(r"\bCREATE\s+(TABLE|VIEW|INDEX|TRIGGER)\b", s)], module
    assert any(re.search(r"\bCREATE TABLE outcomes\b", s) for s in statements("migrations"))
