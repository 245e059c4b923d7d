"""DESIGN's arrows, enforced: an import that points the wrong way fails here, not in review.

    benchtape → replay → checks → recorder.model        (the read side)
    benchtape → recorder → adapters → recorder.model    (the write side)

`recorder.model`, `recorder.kinds` (the log), `recorder.commands` (the neutral runner
interface), `recorder.errors` and `recorder.version` are the shared core every room may use.
Every import is checked, including those inside functions (lazy imports are still arrows).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
ROOMS = ("benchtape", "replay", "checks", "recorder", "adapters", "models")
CORE = ("recorder.model", "recorder.kinds", "recorder.commands", "recorder.errors", "recorder.version", "recorder.judging")

# room → the rooms (or modules) it may import besides itself and the core
ALLOWED: dict[str, tuple[str, ...]] = {
    "benchtape": ("replay", "checks", "recorder", "adapters", "models"),
    "replay": ("checks", "recorder", "models"),
    "checks": (),
    "recorder": ("adapters", "models"),
    "adapters": ("models",),
    "models": ("recorder.spec",),  # a script is a file a user wrote: loaded with the bench's YAML source
}
# single modules allowed one more arrow, with the reason
EXCEPTIONS: dict[str, tuple[str, ...]] = {
    "recorder.preflight": ("checks",),  # a refused check stops a run before any spend
    "models.providers": ("adapters.binaries",),  # the claude-code judge starts the pinned binary
}
FORBIDDEN_FOR_CHECKS = ("recorder.store", "recorder.sandbox", "recorder.runner")


def _imports(path: Path) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
    return found


def _module(path: Path) -> str:
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _allowed(src: str, target: str) -> bool:
    room, to = src.split(".")[0], target.split(".")[0]
    if to not in ROOMS or to == room:
        return True
    if any(target == c or target.startswith(c + ".") for c in CORE):
        return True
    allowed = (*ALLOWED[room], *EXCEPTIONS.get(src, ()))
    return any(target == a or target.startswith(a + ".") for a in allowed)


def test_every_import_follows_the_arrows():
    wrong = []
    for room in ROOMS:
        for path in sorted((ROOT / room).rglob("*.py")):
            src = _module(path)
            for line, target in _imports(path):
                if not _allowed(src, target):
                    wrong.append(f"{path.relative_to(ROOT)}:{line}: {src} imports {target}")
    assert not wrong, "imports against DESIGN's arrows:\n" + "\n".join(wrong)


def test_checks_never_reach_the_store_a_sandbox_or_the_runner():
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for path in sorted((ROOT / "checks").rglob("*.py"))
        for line, target in _imports(path)
        if any(target == f or target.startswith(f + ".") for f in FORBIDDEN_FOR_CHECKS)
    ]
    assert not wrong, wrong


def test_the_arrows_test_catches_a_wrong_import(tmp_path):
    """The rule itself can fail: a recorder module importing replay is refused."""
    assert not _allowed("recorder.runner", "replay.grading")
    assert not _allowed("checks.code", "recorder.store")
    assert not _allowed("adapters.mock", "recorder.runner")
    assert _allowed("recorder.preflight", "checks.build")
    assert _allowed("replay.grading", "recorder.sandbox.levels")
