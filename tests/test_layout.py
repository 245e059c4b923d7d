"""DESIGN's arrows, enforced: an import that points the wrong way fails here, not in review.

Every room imports as `benchtape.<room>`; the folders stay at the top of the repository and
pyproject's package-dir maps them in. The floors, from the bottom:

    core                      the event model and its payloads, results, errors, the command runner
    spec  tools               what a user wrote: bench, evaluation, tool, script, pricing documents; the pinned agent CLIs (where each version lives, how it is installed)
    store  checks  adapters   the event store; the check catalog; one module per harness
    models  sandbox  envs     what speaks to a model; the sandbox levels (run loop and grading); project environments:
                              none of them knows a harness by name (a harness hands the sandbox a launch plan)
    recorder  replay          the write side; the read side (neither imports the other)
    tasks                     tasks from a repository's history: harvest, create, lint, validate, doctor
    formats                   the interchange formats at the edge (ATIF, Inspect logs, OTLP, Harbor folders): nothing inside imports it
    app                       the application layer (benchtape/app/, and the public API in benchtape/__init__):
                              the use cases every front end calls
    render                    the CLI's terminal renderers (benchtape/render*.py)
    view                      the live web viewer: pages over the app layer, read-only
    cli                       the command line (benchtape/cmd_*.py and its core: cli, options, guard, …)

The front ends (cli, view) reach the domain through the app layer only: a command parses, calls
the app and renders; a page asks the app and renders. Besides the app and core, each may use
renderers: the CLI its own (render) and the HTML ones in the read side (RENDERERS), the viewer
the HTML ones.

ALLOWED below is that drawing, literally: no exceptions. Every import is checked, including
those inside functions (lazy imports are still arrows), those under TYPE_CHECKING, and those made
by name: a string that spells a benchtape module (`"benchtape.adapters.mock:MockAdapter"`,
`import_module("benchtape.x.y")`, an f-string starting `"benchtape.x."`) is an arrow too. So is
the absence of cycles.
"""

from __future__ import annotations

import ast
import functools
import re
from collections import defaultdict
from pathlib import Path

import pytest

# one worker parses every source file once for all the tests that walk them
pytestmark = pytest.mark.xdist_group("layout")

ROOT = Path(__file__).resolve().parents[1]
# room -> its folder (the front door's folder holds three rooms: see room_of_path)
FOLDERS = {
    "core": "core",
    "spec": "spec",
    "store": "store",
    "checks": "checks",
    "adapters": "adapters",
    "models": "models",
    "sandbox": "sandbox",
    "envs": "envs",
    "tools": "tools",
    "recorder": "recorder",
    "replay": "replay",
    "tasks": "tasks",
    "formats": "formats",
    "view": "view",
    "app": "benchtape/app",
    "front": "benchtape",
}
BELOW_APP = {"core", "spec", "tools", "store", "checks", "adapters", "models", "sandbox", "envs", "recorder", "replay", "tasks", "formats"}
# room -> the rooms it may import besides itself
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "spec": {"core"},
    "store": {"core"},
    "checks": {"core", "spec"},
    "tools": {"core"},
    "adapters": {"core", "spec", "tools"},
    "models": {"core", "spec", "tools"},  # no adapters: a model knows no harness
    "sandbox": {"core", "spec", "tools"},  # no adapters: it starts what a launch plan says
    "envs": {"core", "spec", "tools"},  # tools: a Node project's package manager is installed pinned, as an agent CLI is
    "recorder": {"core", "spec", "store", "tools", "adapters", "models", "sandbox", "envs"},  # envs: a history task's agent gets its project's environment
    "replay": {"core", "spec", "store", "checks", "models", "sandbox", "envs"},
    "tasks": {"core", "spec", "store", "tools", "sandbox", "envs", "adapters"},
    "formats": {"core", "store", "adapters", "replay", "sandbox"},  # sandbox: a Harbor export writes a task's tree at its base commit and its patches' files
    "app": BELOW_APP,
    "render": {"core", "store", "replay", "app"},
    "view": {"core", "app"},
    "cli": {"core", "app", "render", "view"},
}
# the read side's HTML renderers: modules (not rooms) the front ends may use to draw a page
RENDERERS = {"benchtape.replay.html", "benchtape.replay.compare_html"}
RENDERER_USERS = {"cli", "view"}
ROOMS_OF_MODULES = {f"benchtape.{room}": room for room in FOLDERS if room != "front"}
MODULE_NAME = re.compile(r"benchtape(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


def _top_names() -> set[str]:
    """`benchtape.<name>` for every room and every front module or package: what a string must
    start with to name code (`benchtape.db`, a docker label `benchtape.keep` or the data package
    `benchtape.fixtures` name no code)."""
    front = {p.stem for p in (ROOT / "benchtape").glob("*.py")} | {p.name for p in (ROOT / "benchtape").iterdir() if (p / "__init__.py").exists()}
    return set(ROOMS_OF_MODULES) | {f"benchtape.{name}" for name in front if name != "__init__"}


def _named(text: str) -> str | None:
    """The module a string names (`benchtape.a.b`, `benchtape.a.b:Class`), or None."""
    module = text.partition(":")[0]
    if not MODULE_NAME.fullmatch(module):
        return None
    return module if ".".join(module.split(".")[:2]) in TOP_NAMES else None


TOP_NAMES = _top_names()


@functools.cache
def _tree(path: Path) -> ast.Module:
    """A source file parsed once for the module's tests (six of them walk every file: ~2 s each)."""
    return ast.parse(path.read_text(encoding="utf-8"))


@functools.cache
def _imports(path: Path) -> tuple[tuple[int, str], ...]:
    tree = _tree(path)
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found.extend((node.lineno, f"{node.module}.{a.name}") for a in node.names)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and (named := _named(node.value)):
            found.append((node.lineno, named))  # an import by name: importlib, __import__, a `module:Class` table
        elif isinstance(node, ast.JoinedStr) and node.values and isinstance(first := node.values[0], ast.Constant) and isinstance(first.value, str):
            prefix = first.value.rstrip(".")
            if first.value.endswith(".") and _named(prefix):
                found.append((node.lineno, prefix))  # f"benchtape.room.{name}": at least that room
    return tuple(found)


def room_of(module: str) -> str | None:
    """The room a dotted name belongs to; None when it is not benchtape's."""
    if module != "benchtape" and not module.startswith("benchtape."):
        return None
    parts = module.split(".")
    if len(parts) >= 2 and f"benchtape.{parts[1]}" in ROOMS_OF_MODULES:
        return ROOMS_OF_MODULES[f"benchtape.{parts[1]}"]
    if len(parts) == 1:
        return "app"  # the public API (benchtape/__init__.py)
    return "render" if parts[1].startswith("render") else "cli"


def room_of_path(path: Path) -> str:
    rel = path.relative_to(ROOT)
    for room, folder in FOLDERS.items():
        if room != "front" and rel.parts[: len(Path(folder).parts)] == Path(folder).parts:
            return room
    assert rel.parts[0] == "benchtape", rel
    if rel.name == "__init__.py":
        return "app"
    return "render" if rel.name.startswith("render") else "cli"


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT)
    for room, folder in FOLDERS.items():
        if room != "front" and rel.parts[: len(Path(folder).parts)] == Path(folder).parts:
            inner = rel.relative_to(folder).with_suffix("").parts
            base = ("benchtape", *Path(folder).parts[1:]) if folder.startswith("benchtape/") else ("benchtape", room)
            break
    else:
        inner, base = rel.relative_to("benchtape").with_suffix("").parts, ("benchtape",)
    parts = (*base, *inner)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _sources() -> list[tuple[str, Path]]:
    """Every source file once, with its room (the front door's folder minus the app's)."""
    out = []
    for path in sorted((ROOT / "benchtape").rglob("*.py")):
        out.append((room_of_path(path), path))
    for room, folder in FOLDERS.items():
        if not folder.startswith("benchtape"):
            out.extend((room, path) for path in sorted((ROOT / folder).rglob("*.py")))
    return out


def allowed(src_room: str, target: str) -> bool:
    to = room_of(target)
    if src_room in RENDERER_USERS and any(target == r or target.startswith(r + ".") for r in RENDERERS):
        return True
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
    modules = {_module(path): path for _, path in _sources()}
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
        ("app", "benchtape.checks.registry", True),
        ("cli", "benchtape.checks.registry", False),
        ("cli", "benchtape.app.sessions", True),
        ("cli", "benchtape.render_replay", True),
        ("cli", "benchtape.replay.html", True),
        ("cli", "benchtape.replay.timeline", False),
        ("cli", "benchtape.store.database", False),
        ("app", "benchtape.render_evaluation", False),
        ("app", "benchtape.cmd_run", False),
        ("app", "benchtape.view.viewer", False),
        ("render", "benchtape.recorder.runner", False),
        ("view", "benchtape.app.sessions", True),
        ("view", "benchtape.store.browse", False),
        ("view", "benchtape.checks.registry", False),
        ("view", "benchtape.models.server", False),
        ("view", "benchtape.sandbox.levels", False),
        ("tasks", "benchtape.models.tools", False),
        ("tasks", "benchtape.recorder.runner", False),
        ("formats", "benchtape.spec.bench", False),
        ("replay", "benchtape.sandbox.levels", True),
        ("sandbox", "benchtape.adapters.lines", False),
        ("sandbox", "benchtape.adapters.claude_tui", False),
        ("models", "benchtape.adapters.binaries", False),
        ("sandbox", "benchtape.tools.binaries", True),
        ("models", "benchtape.tools.binaries", True),
        ("adapters", "benchtape.tools.binaries", True),
        ("tools", "benchtape.adapters.base", False),
        ("tasks", "benchtape.replay.grading", False),
        ("tasks", "benchtape.checks.registry", False),
        ("replay", "benchtape.tasks.validate", False),
        ("tasks", "benchtape.sandbox.verifier", True),
        ("replay", "benchtape.formats.atif_export", False),
        ("formats", "benchtape.recorder.importer", False),
        ("app", "benchtape.formats.exports", True),
        ("view", "benchtape.recorder.runner", False),
        ("view", "benchtape.replay.timeline", False),
        ("view", "benchtape.replay.html", True),
    ],
)
def test_the_arrows_test_can_fail(room: str, target: str, ok: bool):
    """The rule itself can fail: an import against the drawing is refused."""
    assert allowed(room, target) is ok


def test_an_import_by_name_is_an_arrow(tmp_path: Path):
    """A module named in a string (an importlib target, a `module:Class` table, an f-string's
    fixed start) is read as an import; prose that mentions a module is not."""
    source = tmp_path / "by_name.py"
    source.write_text(
        "import importlib\n"
        "TABLE = {'mock': 'benchtape.adapters.mock:MockAdapter'}\n"
        "importlib.import_module('benchtape.recorder.runner')\n"
        "kind = 'x'\n"
        "importlib.import_module(f'benchtape.checks.{kind}')\n"
        "DOC = 'see benchtape.store.database for the store'\n",
        encoding="utf-8",
    )
    assert [t for _, t in _imports(source)] == ["importlib", "benchtape.adapters.mock", "benchtape.recorder.runner", "benchtape.checks"]
    assert not allowed("core", "benchtape.adapters.mock")


def test_every_front_file_has_a_room():
    """The front door's folder holds three rooms; each file lands in exactly one."""
    rooms = {path.relative_to(ROOT).as_posix(): room for room, path in _sources() if path.relative_to(ROOT).parts[0] == "benchtape"}
    assert rooms["benchtape/app/api.py"] == "app" and rooms["benchtape/__init__.py"] == "app"
    assert rooms["benchtape/render_replay.py"] == "render"
    assert rooms["benchtape/cmd_run.py"] == "cli" and rooms["benchtape/guard.py"] == "cli"
    assert len(rooms) == len(list((ROOT / "benchtape").rglob("*.py")))


def test_no_store_is_typed_any():
    """A store is typed by the view its holder needs (benchtape.store.views), never `Any`: a
    parameter, field or variable named store (or *_store) annotated Any is refused."""
    wrong = []
    for _, path in _sources():
        for node in ast.walk(_tree(path)):
            if isinstance(node, ast.arg):
                name, ann = node.arg, node.annotation
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, (ast.Name, ast.Attribute)):
                name, ann = (node.target.id if isinstance(node.target, ast.Name) else node.target.attr), node.annotation
            else:
                continue
            if (name == "store" or name.endswith("_store")) and ann is not None and ast.unparse(ann).strip("'\"") == "Any":
                wrong.append(f"{path.relative_to(ROOT)}:{node.lineno}: {name}: Any")
    assert not wrong, wrong


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
