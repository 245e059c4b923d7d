"""A project whose test dependencies are only in its noxfile (python-jsonschema/jsonschema's
shape): what `session.install(...)` names is installed, the project's own extras named as
`f"{ROOT}[format]"` are the project's extras, and nothing that is not a requirement (a path, an
option, an f-string's placeholder) reaches the installer, which refused the whole install on
jsonschema's `{ROOT}[format-nongpl]` ("Failed to parse"). Really built: uv, PyPI."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

from repokit import git, init_repo, validate_one

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


# A pull request that adds the test dependency its new test imports (jsonschema #1390 added
# jsonpath-ng to its noxfile beside the test that imports it): the task's environment installs
# what the fix commit declares and the base does not, or the reference's tests cannot import it.
NOX_BASE = 'import nox\n\n\n@nox.session\ndef tests(session):\n    session.install("pytest", ".")\n    session.run("pytest")\n'
NOX_FIX = NOX_BASE.replace('session.install("pytest", ".")', 'session.install("pytest", ".")\n    session.install("iniconfig")')
CODE_BUGGY = "def words(text):\n    return text.split(' ')\n"
CODE_FIXED = "def words(text):\n    return text.split()\n"
TEST_BASE = "from noxy import words\n\n\ndef test_one():\n    assert words('a b') == ['a', 'b']\n"
TEST_FIX = "import iniconfig  # the new test's own dependency\n\n" + TEST_BASE + "\n\ndef test_spaces():\n    assert words('a  b') == ['a', 'b']\n    assert iniconfig.IniConfig\n"


def test_a_fix_that_adds_its_tests_dependency_is_valid_and_graded_with_it(tmp_path: Path, monkeypatch):
    from benchtape.envs.project_env import recipe_at
    from benchtape.replay.task_verdict import grade_candidate
    from benchtape.spec.project import load_project
    from benchtape.spec.task import find_task, load_task

    root = tmp_path / "noxy"
    (root / "noxy").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "pyproject.toml").write_text('[build-system]\nrequires = ["setuptools>=61"]\nbuild-backend = "setuptools.build_meta"\n\n[project]\nname = "noxy"\nversion = "0.1"\n')
    (root / "noxfile.py").write_text(NOX_BASE)
    (root / "noxy" / "__init__.py").write_text(CODE_BUGGY)
    (root / "tests" / "test_words.py").write_text(TEST_BASE)
    init_repo(root)
    git(root, "add", "-A")
    git(root, "commit", "-qm", "noxy: split words")
    base = git(root, "rev-parse", "HEAD")
    (root / "noxfile.py").write_text(NOX_FIX)
    (root / "noxy" / "__init__.py").write_text(CODE_FIXED)
    (root / "tests" / "test_words.py").write_text(TEST_FIX)
    git(root, "commit", "-qam", "Split on any run of spaces (#4)\n\nwords() returned empty words between two spaces.")
    fix = git(root, "rev-parse", "HEAD")
    monkeypatch.setenv("BENCHTAPE_ENV_CACHE", str(tmp_path / "env-cache"))
    monkeypatch.setattr("benchtape.tasks.validate.REFERENCE_RUNS", 1)
    project = load_project(root)

    alone, with_fix = recipe_at(project, base), recipe_at(project, base, fix_commit=fix)
    assert alone.added == () and with_fix.added == ("iniconfig",)
    assert with_fix.key() != alone.key() and recipe_at(project, base, fix_commit=base).key() == alone.key()
    assert any("iniconfig" in n for n in with_fix.notes)

    report = validate_one(project, "4")
    task_id = report.id
    assert report.validated, report.to_dict()
    assert report.environment["added"] == ["iniconfig"] and any(i.startswith("iniconfig==") for i in report.environment["installed"])
    task = load_task(find_task(root, task_id))
    assert task.validation is not None and list(task.validation.fail_to_pass) == ["tests.test_words::test_spaces"]
    # graded in the same environment: the reference passes, the base's code (no change) does not
    assert grade_candidate(project, task, task.reference() or b"").outcome == "passed"
    wrong = (task.reference() or b"").replace(b"text.split()", b"text.split(' ')")
    assert grade_candidate(project, task, wrong).outcome != "passed"
