"""DESIGN's arrows, enforced: an import that points the wrong way fails here, not in review.

Every room imports as `benchtape.<room>`; the folders stay at the top of the repository and
pyproject's package-dir maps them in. The floors, from the bottom:

    core                      the event model and its payloads, results, errors, the command runner
    spec                      what a user wrote: bench, evaluation, tool, script, pricing documents
    store  checks  adapters   the event store; the check catalog; one module per harness
    models  sandbox  envs     what speaks to a model; the sandbox levels (run loop and grading); project environments
    recorder  replay          the write side; the read side (neither imports the other)
    tasks                     tasks from a repository's history: harvest, create, lint, validate, doctor
    formats                   the interchange formats at the edge (ATIF, Inspect logs): nothing inside imports it
    view                      the live web viewer over the read side (never the write side)
    benchtape                 the front door: CLI, public API, preflight, composition

ALLOWED below is that drawing, literally: no exceptions. Every import is checked, including
those inside functions (lazy imports are still arrows), and so is the absence of cycles.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# room -> its folder
FOLDERS = {
    "core": "core",
    "spec": "spec",
    "store": "store",
    "checks": "checks",
    "adapters": "adapters",
    "models": "models",
    "sandbox": "sandbox",
    "envs": "envs",
    "recorder": "recorder",
    "replay": "replay",
    "tasks": "tasks",
    "formats": "formats",
    "view": "view",
    "front": "benchtape",
}
# room -> the rooms it may import besides itself
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "spec": {"core"},
    "store": {"core"},
    "checks": {"core", "spec"},
    "adapters": {"core", "spec"},
    "models": {"core", "spec", "adapters"},
    "sandbox": {"core", "spec", "adapters"},
    "envs": {"core", "spec"},
    "recorder": {"core", "spec", "store", "adapters", "models", "sandbox"},
    "replay": {"core", "spec", "store", "checks", "models", "sandbox", "envs"},
    "tasks": {"core", "spec", "store", "sandbox", "envs", "adapters", "models", "recorder"},
    "formats": {"core", "spec", "store", "adapters", "replay"},
    "view": {"core", "spec", "store", "checks", "models", "sandbox", "replay"},
    "front": {"core", "spec", "store", "checks", "adapters", "models", "sandbox", "envs", "recorder", "replay", "tasks", "formats", "view"},
}
ROOMS_OF_MODULES = {f"benchtape.{room}": room for room in FOLDERS if room != "front"}


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


def room_of(module: str) -> str | None:
    """The room a dotted name belongs to; None when it is not benchtape's."""
    if module != "benchtape" and not module.startswith("benchtape."):
        return None
    parts = module.split(".")
    if len(parts) >= 2 and f"benchtape.{parts[1]}" in ROOMS_OF_MODULES:
        return ROOMS_OF_MODULES[f"benchtape.{parts[1]}"]
    return "front"


def _module(path: Path, room: str) -> str:
    rel = path.relative_to(ROOT / FOLDERS[room]).with_suffix("").parts
    rel = rel[:-1] if rel[-1] == "__init__" else rel
    base = "benchtape" if room == "front" else f"benchtape.{room}"
    return ".".join((base, *rel))


def _sources() -> list[tuple[str, Path]]:
    out = []
    for room, folder in FOLDERS.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            out.append((room, path))
    return out


def allowed(src_room: str, target: str) -> bool:
    to = room_of(target)
    return to is None or to == src_room or to in ALLOWED[src_room]


def test_every_import_follows_the_arrows():
    wrong = []
    for room, path in _sources():
        for line, target in _imports(path):
            if not allowed(room, target):
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {room} imports {target} ({room_of(target)})")
    assert not wrong, "imports against DESIGN's arrows:\n" + "\n".join(wrong)


def test_no_old_top_level_names_remain():
    """Nothing imports `recorder.…`, `checks.…` and the rest outside the namespace."""
    old = ("recorder", "replay", "checks", "adapters", "models", "core", "spec", "store", "sandbox", "benchtape_fixtures")
    wrong = [
        f"{path.relative_to(ROOT)}:{line}: {target}"
        for _, path in _sources()
        for line, target in _imports(path)
        if target.split(".")[0] in old
    ]
    assert not wrong, wrong


def _graph() -> dict[str, set[str]]:
    """Module -> the benchtape modules it imports (each dotted name resolved to a module that exists)."""
    modules = {_module(path, room): path for room, path in _sources()}
    graph: dict[str, set[str]] = defaultdict(set)
    for mod, path in modules.items():
        for _, target in _imports(path):
            name = target
            while name and name not in modules:
                name = name.rpartition(".")[0]
            if name and name != mod and not mod.startswith(name + "."):
                graph[mod].add(name)
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one member (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in list(graph):
        if v not in index:
            visit(v)
    return out


def test_no_package_level_cycles():
    rooms: dict[str, set[str]] = defaultdict(set)
    for mod, targets in _graph().items():
        for t in targets:
            a, b = room_of(mod), room_of(t)
            if a and b and a != b:
                rooms[a].add(b)
    assert _cycles(rooms) == []


def test_no_file_level_cycles():
    """A package's `__init__` re-exporting its own modules is not a cycle; two files importing each other is."""
    assert _cycles(_graph()) == []


def test_no_file_name_repeats_across_rooms():
    """Each file says what it holds: no two rooms have a module of the same name (`__init__`, `__main__` aside)."""
    seen: dict[str, list[str]] = defaultdict(list)
    for room, path in _sources():
        if path.stem not in ("__init__", "__main__"):
            seen[path.stem].append(f"{room}:{path.relative_to(ROOT)}")
    repeats = {name: where for name, where in seen.items() if len({w.split(':')[0] for w in where}) > 1}
    assert not repeats, repeats


def test_the_public_api_imports_from_benchtape_alone():
    import benchtape

    for name in benchtape.__all__:
        assert getattr(benchtape, name) is not None, name


@pytest.mark.parametrize(
    ("room", "target", "ok"),
    [
        ("recorder", "benchtape.replay.grading", False),
        ("replay", "benchtape.recorder.runner", False),
        ("checks", "benchtape.store.database", False),
        ("checks", "benchtape.sandbox.levels", False),
        ("adapters", "benchtape.recorder.runner", False),
        ("core", "benchtape.spec.bench", False),
        ("spec", "benchtape.adapters.base", False),
        ("front", "benchtape.checks.registry", True),
        ("replay", "benchtape.sandbox.levels", True),
        ("sandbox", "benchtape.adapters.lines", True),
        ("tasks", "benchtape.replay.grading", False),
        ("tasks", "benchtape.checks.registry", False),
        ("replay", "benchtape.tasks.validate", False),
        ("tasks", "benchtape.sandbox.verifier", True),
        ("replay", "benchtape.formats.atif_export", False),
        ("formats", "benchtape.recorder.importer", False),
        ("front", "benchtape.formats.exports", True),
        ("view", "benchtape.recorder.runner", False),
        ("view", "benchtape.replay.timeline", True),
    ],
)
def test_the_arrows_test_can_fail(room: str, target: str, ok: bool):
    """The rule itself can fail: an import against the drawing is refused."""
    assert allowed(room, target) is ok


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
