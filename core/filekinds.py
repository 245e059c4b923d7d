"""What kind of file a repository path is: source code, documentation, configuration. One
reading for the harvest (tasks/classify.py: what counts as a change's implementation) and the
scripted solver (spec/solver.py: which edits of a fix are its code).
"""

from __future__ import annotations

from pathlib import PurePosixPath

DOC_SUFFIXES = (".md", ".rst", ".txt", ".adoc", ".rdoc", ".textile")
DOC_DIRS = ("doc/", "docs/", "documentation/", ".github/", ".gitlab/", ".circleci/", "examples/", "bench/", "benchmarks/")
CONFIG_NAMES = (
    ".gitignore", ".gitattributes", ".editorconfig", ".pre-commit-config.yaml", ".travis.yml", ".coveragerc", "tox.ini", "setup.cfg",
    "MANIFEST.in", "LICENSE", "LICENSE.txt", "AUTHORS", "AUTHORS.md", ".readthedocs.yaml", ".readthedocs.yml", "codecov.yml", ".flake8", "appveyor.yml",
)
CODE_SUFFIXES = (
    ".py", ".pyi", ".pyx", ".pxd", ".go", ".rs", ".js", ".jsx", ".ts", ".tsx", ".mjs", ".cjs", ".java", ".kt", ".scala", ".rb", ".php", ".c", ".h",
    ".cc", ".cpp", ".hpp", ".cs", ".swift", ".m", ".ex", ".exs", ".erl", ".hs", ".ml", ".clj", ".lua", ".sh", ".r", ".jl", ".dart", ".vue", ".svelte", ".zig",
)


def is_code(path: str) -> bool:
    """A source file: not documentation (a changelog, docs/), configuration or data."""
    p = PurePosixPath(path)
    if p.name in CONFIG_NAMES or p.suffix.lower() in DOC_SUFFIXES:
        return False
    if any(path.startswith(d) for d in DOC_DIRS) or _benchmark(p):
        return False
    return p.suffix.lower() in CODE_SUFFIXES


def _benchmark(p: PurePosixPath) -> bool:
    """A benchmark beside the code (vitest's `parse.bench.ts`, markupsafe's `bench.py`): it
    measures the code and is no part of it."""
    return ".bench." in p.name or p.stem.lower() in ("bench", "benchmark", "benchmarks")
