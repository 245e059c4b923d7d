"""`task scan` over a real history: the hand-checked valid PRs rank among the top candidates,
the others are skipped with a reason, and `--json` is one document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from e2e.cli import benchtape
from harvestkit import VALID, clone_toolz

from benchtape.spec.project import load_project
from benchtape.tasks.harvest import parse_since, scan


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return clone_toolz(tmp_path_factory.mktemp("scan") / "toolz")


def test_the_valid_prs_are_among_the_top_candidates(toolz: Path):
    done = benchtape("task", "scan", "--json", "--limit", "30", cwd=toolz)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)  # the whole output is one document: nothing else printed
    ids = [c["id"] for c in doc["candidates"]]
    assert len(ids) == 30 and doc["more_candidates"] > 0
    assert set(VALID) <= set(ids), set(VALID) - set(ids)
    assert ids[0] == "603"  # the newest small fix with tests ranks first
    first = doc["candidates"][0]
    assert first["kind"] == "squash" and first["fix_commit"].startswith("5a7e078c94") and first["base_commit"].startswith("1fb2b9f1b6")
    assert first["tests"] == ["toolz/tests/test_itertoolz.py"] and first["implementation"] == ["toolz/itertoolz.py"]
    merge = next(c for c in doc["candidates"] if c["id"] == "551")
    assert merge["kind"] == "merge" and merge["fix_commit"].startswith("386c75033d") and merge["base_commit"].startswith("1aa72df3a7")
    assert doc["scanned"] == 377 + 20 and doc["head"].startswith("568c2b8393")  # the mainline, and 20 PRs merged elsewhere in its history


def test_what_cannot_be_a_task_is_skipped_with_a_reason(toolz: Path):
    result = scan(load_project(toolz), limit=200)
    reasons = {c.landing.id: c.skipped for c in result.skipped}
    assert reasons["611"].startswith("no test changed") or reasons["611"].startswith("tests only")
    assert "no test changed" in result.reasons and "tests only: no implementation changed" in result.reasons
    assert any(r.startswith("no tests and no implementation changed") for r in result.reasons)
    assert sum(result.reasons.values()) == len(result.skipped) and len(result.skipped) + len(result.candidates) == result.scanned
    narrow = scan(load_project(toolz), limit=200, max_files=1)
    assert "534" not in [c.landing.id for c in narrow.candidates]  # three implementation files
    assert any(c.landing.id == "534" and c.skipped.startswith("too many implementation files") for c in narrow.skipped)


def test_since_narrows_to_recent_history(toolz: Path):
    recent = scan(load_project(toolz), limit=200, since="2025-01-01")
    assert [c.landing.id for c in recent.candidates] == ["603", "592", "607"]  # the 2025 PRs, best first
    assert recent.scanned < 40 and all(c.landing.fix.time >= parse_since("2025-01-01") for c in recent.candidates + recent.skipped)
    assert parse_since("90d", now=100 * 86400) == 10 * 86400
    done = benchtape("task", "scan", "--since", "last tuesday", cwd=toolz)
    assert done.returncode == 2 and "--since" in done.stderr


def test_a_limit_out_of_range_is_refused(toolz: Path):
    done = benchtape("task", "scan", "--limit", "0", cwd=toolz)
    assert done.returncode == 2 and "--limit" in done.stderr


def test_outside_a_repository_scan_says_so(tmp_path: Path):
    done = benchtape("task", "scan", cwd=tmp_path)
    assert done.returncode == 2 and "not inside a git repository" in done.stderr


def test_prs_merged_off_the_first_parent_chain_are_found_and_created(toolz: Path, tmp_path: Path):
    """toolz's #113 ("sliding window aborts if iterator is too short") was merged into another
    branch that was merged later: it is not on HEAD's first-parent chain, yet it is a merged PR
    that changed code and tests."""
    import shutil
    import subprocess

    result = scan(load_project(toolz), limit=200)
    elsewhere = {c.landing.id: c for c in result.candidates if not c.landing.fix.mainline}
    assert {"113", "108", "78", "1"} <= set(elsewhere), sorted(elsewhere)
    pr = elsewhere["113"]
    assert pr.landing.kind == "merge" and pr.landing.fix.sha.startswith("6283e82ce") and pr.split.tests == ["toolz/itertoolz/tests/test_core.py"]
    first_parent = subprocess.run(["git", "rev-list", "--first-parent", "HEAD"], cwd=toolz, capture_output=True, text=True, check=True).stdout.split()
    assert pr.landing.fix.sha not in first_parent
    repo = tmp_path / "toolz"
    shutil.copytree(toolz, repo)
    made = benchtape("task", "create", "113", cwd=repo)
    assert made.returncode == 0, made.stderr  # before: "no merged pull request #113 on the mainline"


def test_release_and_merge_only_commits_are_never_proposed(toolz: Path, tmp_path: Path):
    """Commits on the real tree whose titles are a release or a merge of one branch into
    another, each touching code and tests, are skipped with that reason."""
    import shutil
    import subprocess

    repo = tmp_path / "toolz"
    shutil.copytree(toolz, repo)

    def commit(subject: str) -> str:
        for path in ("toolz/itertoolz.py", "toolz/tests/test_itertoolz.py"):
            (repo / path).write_text((repo / path).read_text() + f"\n# {subject}\n")
        subprocess.run(["git", "commit", "-qam", subject], cwd=repo, check=True)
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True, check=True).stdout.strip()

    release = commit("Release v7.0.3")
    squash = commit("Bump version to 0.8.2 (#900)")
    merge_only = commit("Merge branch 'main' into dev")
    fix = commit("Make partition_all faster")
    result = scan(load_project(repo), limit=200)
    skipped = {c.landing.fix.sha: c.skipped or "" for c in result.skipped}
    assert skipped[release].startswith("a release commit") and skipped[squash].startswith("a release commit")
    assert skipped[merge_only].startswith("a merge-only commit")
    assert fix in {c.landing.fix.sha for c in result.candidates}  # an ordinary change still is one


def test_a_sweep_over_many_test_files_ranks_below_a_focused_fix(toolz: Path, tmp_path: Path):
    """commander.js's 'Switch from Jest to Node.js built-in test runner' (one implementation
    file, 114 test files, thousands of test lines) ranked first of 194 candidates: the test
    lines it added outweighed everything. A change of many test files is a sweep, not a fix's tests."""
    import shutil
    import subprocess

    repo = tmp_path / "toolz"
    shutil.copytree(toolz, repo)
    for i in range(20):
        test = repo / "toolz" / "tests" / f"test_sweep_{i}.py"
        test.write_text("".join(f"def test_{i}_{n}():\n    assert {n} == {n}\n" for n in range(40)))
    (repo / "toolz" / "itertoolz.py").write_text((repo / "toolz" / "itertoolz.py").read_text() + "\n# the runner moved\n")
    subprocess.run(["git", "add", "-A"], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "Switch the tests to another runner (#950)"], cwd=repo, check=True)
    ranked = [c.landing.id for c in scan(load_project(repo), limit=200).candidates]
    assert ranked.index("950") > max(ranked.index(v) for v in VALID), ranked[:20]  # below every hand-checked valid PR


def test_a_typo_or_style_sweep_ranks_below_a_focused_fix(toolz: Path):
    """inflect's "Fix typos found by codespell" and "apply updated black v23 style rules" ranked
    among its first candidates (tests and code changed, no behaviour did): such titles rank
    lower, and are never skipped (a title is not proof). toolz's own "Fix typos" (#526) is one,
    and not a task (README: base_already_passes)."""
    from benchtape.tasks.harvest import _SWEEP

    result = scan(load_project(toolz), limit=200)
    ranked = [c.landing.id for c in result.candidates]
    assert "526" in ranked and ranked.index("526") > max(ranked.index(v) for v in VALID), ranked[:20]
    assert all(_SWEEP.search(t) for t in ("Fix typos found by codespell", "Code style: apply updated black v23 style rules", "Fix lint", "Reformat with ruff"))
    assert not any(_SWEEP.search(t) for t in ("Fix: AP style for 0 is 'zero'", "Handle a single apostrophe more gracefully", "Add format parameter to naturalsize"))


def test_a_change_that_says_no_behaviour_changed_ranks_lower():
    """wooorm/markdown-table's "Refactor code-style" ranked first of its 22 candidates, tomlkit
    #517 ("No behaviour change … pure optimisation") and boltons #446 ("cover … branch") were in
    their top five: each passes at its base. Their own words rank them lower (never skipped);
    "refactor" and "faster" alone do not (toolz #434 and #425 are tasks)."""
    from benchtape.tasks.harvest import _NO_BEHAVIOUR, _NO_BEHAVIOUR_SAID, _SWEEP

    assert _SWEEP.search("Refactor code-style")
    assert all(_NO_BEHAVIOUR.search(t) for t in ("setutils: cover _ComplementSet __ge__'s double-complement branch", "Improve test coverage", "Cleanup the parser"))
    assert all(_NO_BEHAVIOUR_SAID.search(b) for b in ("No behaviour change; this is a pure optimisation.", "This is purely a refactoring.", "No functional changes."))
    fixes = ("Fix a parser hang", "Rename `pad` option to `alignDelimiters`", "Discover plugins in site-packages", "refactor parallel.fold", "Faster dissoc", "Add format parameter to naturalsize", "fix IndexedSet slicing after removals")
    assert not any(_NO_BEHAVIOUR.search(t) for t in fixes)
    assert not _NO_BEHAVIOUR_SAID.search("The behaviour changes: a closing bracket now ends the array.")


def test_files_that_are_tests_or_benchmarks_are_never_the_implementation(tmp_path: Path):
    """Tried on markupsafe, p-map and jshttp/cookie: a root `tests.py` (markupsafe's, and every
    Django app's), tsd's `index.test-d.ts`, vitest's `*.bench.ts` and markupsafe's `bench.py` were
    counted as implementation, so a tests-only change ("stop using unittest") ranked seventh and
    a benchmark's edit went into a reference patch as code. And a change whose only test file is
    a conftest.py (markupsafe #461, "Build Python 3.13 wheels", second of its scan) has no test of
    its own to fail at the base: it ranks below a fix with its test."""
    from repokit import commit, init_repo

    from benchtape.spec.project import DEFAULT_NOISE_PATTERNS, DEFAULT_TEST_PATTERNS
    from benchtape.tasks.classify import split

    parts = split(["tests.py", "app/tests.py", "index.test-d.ts", "src/parse.bench.ts", "bench.py", "src/parse.ts", "markupsafe/__init__.py"], DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS)
    assert set(parts.tests) == {"tests.py", "app/tests.py", "index.test-d.ts"} and set(parts.code) == {"src/parse.ts", "markupsafe/__init__.py"}, parts
    stubs = split(["src/attr/__init__.pyi", "tests/typing_example.py"], DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS)
    assert stubs.code == ["src/attr/__init__.pyi"], stubs  # attrs #1461, a fix of its type stubs, read "tests only: no implementation changed"
    root = init_repo(tmp_path / "escape")
    commit(root, {"escape/__init__.py": "def escape(s):\n    return s\n", "escape/_speedups.c": "int x;\n", "tests/conftest.py": "", "tests/test_escape.py": "from escape import escape\n\n\ndef test_plain():\n    assert escape('a') == 'a'\n"}, "escape")
    commit(root, {"escape/_speedups.c": "int x; int y;\n", "tests/conftest.py": "import pytest\n\n\n@pytest.fixture(params=['py', 'c'])\ndef mod(request):\n    return request.param\n"}, "Build wheels for the new Python (#2)")
    commit(root, {"escape/__init__.py": "def escape(s):\n    return s.replace('<', '&lt;')\n", "tests/test_escape.py": "from escape import escape\n\n\ndef test_plain():\n    assert escape('a') == 'a'\n\n\ndef test_lt():\n    assert escape('<') == '&lt;'\n"}, "Escape the less-than sign (#3)")
    ranked = [c.landing.id for c in scan(load_project(root), limit=10).candidates]
    assert ranked.index("3") < ranked.index("2"), ranked


def test_a_branch_commit_naming_an_issue_is_no_merged_pull_request(tmp_path: Path):
    """prettytable's `fix: autoindex html format (#199)` is a contributor's commit on a branch
    merged later as #345: its `(#199)` names the issue. Taken as PR #199 it was the top
    candidate, a task whose reference was half a change. Off the mainline a squash counts only
    when GitHub committed it (a PR squashed into a release branch, merged on later)."""
    import os
    import subprocess

    from benchtape.tasks.gitlog import history

    root = tmp_path / "repo"
    root.mkdir()

    def git(*args: str, committer: str = "dev@example.com") -> None:
        env = {**os.environ, "GIT_AUTHOR_NAME": "dev", "GIT_AUTHOR_EMAIL": "dev@example.com", "GIT_COMMITTER_NAME": committer.split("@")[0], "GIT_COMMITTER_EMAIL": committer}
        subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args], cwd=root, env=env, check=True, capture_output=True)

    def change(name: str, subject: str, committer: str = "dev@example.com") -> None:
        (root / "pkg").mkdir(exist_ok=True)
        (root / "tests").mkdir(exist_ok=True)
        (root / "pkg" / f"{name}.py").write_text(f"def {name}():\n    return 1\n")
        (root / "tests" / f"test_{name}.py").write_text(f"from pkg.{name} import {name}\n\n\ndef test_{name}():\n    assert {name}() == 1\n")
        git("add", "-A")
        git("commit", "-qm", subject, committer=committer)

    git("init", "-q")
    change("base", "start")
    git("checkout", "-qb", "199-fix-autoindex")
    change("autoindex", "fix: autoindex html format (#199)")  # the contributor's own commit
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "199-fix-autoindex", "-m", "Merge pull request #345 from someone/199-fix-autoindex")
    git("checkout", "-qb", "release")
    change("backport", "Fix the backport (#400)", committer="noreply@github.com")  # squashed by GitHub into the release branch
    git("checkout", "-q", "main")
    git("merge", "-q", "--no-ff", "release", "-m", "Merge branch 'release'")
    elsewhere = [c.subject for c in history(root) if not c.mainline]
    assert elsewhere == ["Fix the backport (#400)"], elsewhere
    assert any(c.subject.startswith("Merge pull request #345") for c in history(root) if c.mainline)
