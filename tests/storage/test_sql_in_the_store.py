"""All SQL lives in the store (DESIGN: "The store has a writer and a reader; all SQL lives
there"): no module outside `store/` composes a statement or reaches into the store's
connection. The read side asks `benchtape.store.reader`'s methods, the write side
`benchtape.store.writer`'s; a new query is a new named method there, never a string here.
Like tests/test_layout.py for imports: no exceptions."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROOMS = ("core", "spec", "checks", "adapters", "models", "sandbox", "recorder", "replay", "tasks", "formats", "view", "benchtape")
# A statement (upper-case verbs, as every query here is written): its verb first, then what it works on (a keyword list, as checks/sqltext.py holds
# to read an agent's SQL, is words, not a statement: no verb is followed by its object there).
STATEMENT = re.compile(
    r"^\s*(?:SELECT\s+(?!FROM\b)[\w*(].*?\bFROM\s+\w|INSERT\s+(?:OR\s+\w+\s+)?INTO\s+\w|UPDATE\s+\w+\s+SET\b|DELETE\s+FROM\s+\w"
    r"|CREATE\s+(?:UNIQUE\s+)?(?:TABLE|VIEW|INDEX|TRIGGER)\s+\w|DROP\s+(?:TABLE|VIEW|INDEX|TRIGGER)\s+\w|PRAGMA\s+\w)",
    re.S,
)
# Reaching into a Store's connection: `store.db.execute(…)`, `.db.conn`, `.db["table"]`, `.db.query(…)`, `store.conn`.
CONNECTION = frozenset({"execute", "executemany", "executescript", "conn", "query", "table"})


def _text(node: ast.AST) -> str | None:
    """A string constant, or an f-string's literal parts joined (placeholders as `x`)."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(v.value if isinstance(v, ast.Constant) and isinstance(v.value, str) else "x" for v in node.values)
    return None


def findings(source: str, name: str) -> list[str]:
    """Where a module composes SQL or reaches into the store's connection."""
    out = []
    tree = ast.parse(source)
    parts = {id(v) for node in ast.walk(tree) if isinstance(node, ast.JoinedStr) for v in node.values}  # read with their f-string
    for node in ast.walk(tree):
        text = None if id(node) in parts else _text(node)
        if text is not None and STATEMENT.search(text):
            out.append(f"{name}:{node.lineno}: SQL {text.strip()[:60]!r}")
        elif isinstance(node, ast.Attribute) and isinstance(node.value, ast.Attribute) and node.value.attr == "db" and node.attr in CONNECTION:
            out.append(f"{name}:{node.lineno}: reaches into the store's connection (.db.{node.attr})")
        elif isinstance(node, ast.Subscript) and isinstance(node.value, ast.Attribute) and node.value.attr == "db":
            out.append(f"{name}:{node.lineno}: reaches into the store's tables (.db[…])")
        elif isinstance(node, ast.Attribute) and node.attr == "conn" and not (isinstance(node.value, ast.Attribute) and node.value.attr == "db"):
            out.append(f"{name}:{node.lineno}: reaches into the store's connection (.conn)")
    return out


def test_no_module_outside_the_store_composes_sql():
    found = []
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            found += findings(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
    assert not found, "SQL outside store/ (add a named method to benchtape.store.reader or .writer):\n" + "\n".join(found)


def test_the_finder_finds_what_compare_and_cellrun_used_to_run():
    """The rule can fail: the call sites this test replaced are each found."""
    before = '''
rows = store.db.execute(f"SELECT s.id, s.run_id FROM sessions s JOIN runs r ON r.id = s.run_id WHERE {where} ORDER BY s.id", params)
rows = runner.store.db.execute("SELECT id FROM sessions WHERE run_id = ?", [run]).fetchall()
print(schema_version(store.db.conn))
store.db["sessions"].count
sql = "INSERT INTO outcomes (grading_id) VALUES (?)"
conn.execute("PRAGMA user_version")
n = store.conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
'''
    assert sorted(int(f.split(":")[1]) for f in findings(before, "x")) == [2, 2, 3, 3, 4, 5, 6, 7, 8, 8]


def test_sql_words_in_prose_and_keyword_lists_are_not_statements():
    prose = '''
KEYWORDS = "SELECT FROM WHERE GROUP ORDER BY HAVING LIMIT"
doc = "Select the newest session from the store"
VERBS = "SELECT WITH INSERT UPDATE DELETE CREATE ALTER DROP"
'''
    assert findings(prose, "x") == []
