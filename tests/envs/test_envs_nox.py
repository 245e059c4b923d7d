"""A project whose test dependencies are only in its noxfile (python-jsonschema/jsonschema's
shape): what `session.install(...)` names is installed, the project's own extras named as
`f"{ROOT}[format]"` are the project's extras, and nothing that is not a requirement (a path, an
option, an f-string's placeholder) reaches the installer, which refused the whole install on
jsonschema's `{ROOT}[format-nongpl]` ("Failed to parse"). Really built: uv, PyPI."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from benchtape.envs.build import ensure_env
from benchtape.envs.detect import detect
from benchtape.envs.recipe import recipe_for
from benchtape.spec.project_tree import FolderTree

NOXFILE = textwrap.dedent(
    '''
    from pathlib import Path

    import nox

    ROOT = Path(__file__).parent
    REQUIREMENTS = dict(docs=ROOT / "docs" / "requirements.txt")
    INSTALLABLE = [nox.param(value, id=name) for name, value in [("plain", str(ROOT)), ("format", f"{ROOT}[format]")]]


    @nox.session
    @nox.parametrize("installable", INSTALLABLE)
    def tests(session, installable):
        session.install("iniconfig>=1.0", installable)
        session.run("python", "-m", "pytest")


    @nox.session
    def licenses(session):
        session.install("-r", REQUIREMENTS["docs"])
        session.install("-r", "docs/requirements.txt")
        session.install("-e", ".")
        session.install(f"{ROOT}[format,nonexistent]")
        session.install("{ROOT}/vendored", "./local-wheel.whl")
    '''
)


def _project(root: Path) -> Path:
    tree = root / "noxy"
    (tree / "noxy").mkdir(parents=True)
    (tree / "noxy" / "__init__.py").write_text("VALUE = 1\n")
    (tree / "pyproject.toml").write_text(
        '[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n'
        '[project]\nname = "noxy"\nversion = "0.1"\n\n[project.optional-dependencies]\nformat = ["packaging>=20"]\ndocs = ["sphinx"]\n'
    )
    (tree / "noxfile.py").write_text(NOXFILE)
    return tree


def test_a_noxfile_gives_its_requirements_and_the_projects_own_extras_never_a_placeholder(tmp_path: Path):
    tree = _project(tmp_path)
    det = detect(FolderTree(tree))
    assert det.extras == ("format",)  # `f"{ROOT}[format]"`, an extra the project declares; `nonexistent` is not one
    assert det.install == ("iniconfig>=1.0",)  # never `{ROOT}[format]`, `-r`, `.`, a path or a wheel file
    env = ensure_env(recipe_for(FolderTree(tree)), tree, cache=tmp_path / "cache")
    assert env.venv is not None
    python = env.venv / "bin" / "python"
    done = subprocess.run([str(python), "-c", "import iniconfig, packaging, noxy; print(noxy.VALUE)"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "1", done.stderr
