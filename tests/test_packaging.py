"""`pip install .` ships every file benchtape reads at run time, quietly: each folder of data
files inside a room is a listed package (else setuptools warns, twenty lines apiece, "Package
'…' is absent from the `packages` configuration", ~200 lines in all), and each listed
package's data files are declared. Checked by hand once: a fresh venv's `pip install -v .`
prints no such warning, and its `benchtape demo` runs."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def _folder(package: str, dirs: dict[str, str]) -> Path:
    """Where a package's files are, by package-dir (a subpackage of a mapped one is below it)."""
    parts = package.split(".")
    for n in range(len(parts), 0, -1):
        head = ".".join(parts[:n])
        if head in dirs:
            return ROOT / dirs[head] / Path(*parts[n:])
    raise AssertionError(f"{package} has no package-dir")


def test_every_folder_package_data_reaches_is_a_listed_package():
    """setuptools warns for a data file in a folder below a package when that folder is not a
    listed package (`"benchtape.spec" = ["builtin/*.yaml"]` warned so)."""
    config = _config()
    packages, dirs = set(config["packages"]), config["package-dir"]
    unlisted = set()
    for package, globs in config["package-data"].items():
        folder = _folder(package, dirs)
        for glob in globs:
            for found in folder.glob(glob):
                rel = found.parent.relative_to(folder)
                if rel.parts and f"{package}.{'.'.join(rel.parts)}" not in packages:
                    unlisted.add(f"{package}.{'.'.join(rel.parts)}")
    assert sorted(unlisted) == [], f"not in [tool.setuptools] packages (setuptools warns for each): {sorted(unlisted)}"


def test_every_data_file_benchtape_reads_is_declared():
    config = _config()
    dirs, data = config["package-dir"], config["package-data"]
    for package, globs in data.items():
        folder = _folder(package, dirs)
        assert package in config["packages"], package
        assert all(list(folder.glob(g)) for g in globs), (package, globs)
    for needed in ("benchtape.spec.builtin", "benchtape.spec.builtin.tools", "benchtape.checks.judge_prompts"):
        assert needed in data
