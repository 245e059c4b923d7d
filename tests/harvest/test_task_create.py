"""`task create` from a real history: the landing proven, the diff split into hidden tests and
reference fix, the prompt from the change's words, the runner inferred, nothing overwritten;
`task lint` finds what a prompt must not say and `--fix` redacts it."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from e2e.cli import benchtape
from harvestkit import clone_toolz

from benchtape.sandbox.patches import changed_paths
from benchtape.spec.project import load_project
from benchtape.spec.task import load_task
from benchtape.tasks.harvest import scan

REMOTE = "git@github.com:pytoolz/toolz.git"


@pytest.fixture(scope="module")
def toolz(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repo = clone_toolz(tmp_path_factory.mktemp("create") / "toolz")
    subprocess.run(["git", "-C", str(repo), "remote", "set-url", "origin", REMOTE], check=True)
    done = benchtape("init", "--tasks", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and "pytoolz/toolz" in done.stdout and "benchtape task create 603" in done.stdout
    return repo


def test_init_tasks_writes_the_project_from_the_remote_and_never_again(toolz: Path):
    config = (toolz / ".benchtape" / "config.yaml").read_text()
    assert "kind: Project" in config and "owner: pytoolz" in config and "repo: toolz" in config and "provider: github" in config
    binaries = [".benchtape/tools/node_modules/.bin/claude", ".benchtape/tools/venvs/aider/bin/aider"]
    ignored = subprocess.run(["git", "-C", str(toolz), "check-ignore", ".benchtape/benchtape.db", ".benchtape/validate/603/base.log", *binaries], capture_output=True, text=True).stdout.split()
    assert ignored == [".benchtape/benchtape.db", ".benchtape/validate/603/base.log", *binaries]
    # tasks are committed, and the project's Tool overlays beside the pinned binaries in tools/
    for kept in (".benchtape/tasks/603/task.yaml", ".benchtape/tools/shellagent.yaml", ".benchtape/tools/review.yml"):
        assert subprocess.run(["git", "-C", str(toolz), "check-ignore", "-q", kept]).returncode == 1, kept
    again = benchtape("init", "--tasks", cwd=toolz)
    assert again.returncode == 0 and "already exists; nothing written" in again.stdout
    assert (toolz / ".benchtape" / "config.yaml").read_text() == config


def test_a_squash_merge_becomes_an_unvalidated_task(toolz: Path):
    done = benchtape("task", "create", "603", "--json", cwd=toolz)
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)["created"][0]
    assert doc["state"] == "unvalidated" and doc["leaks"] == []
    folder = toolz / ".benchtape" / "tasks" / "603"
    assert sorted(p.name for p in folder.iterdir()) == ["prompt.md", "reference.patch", "task.yaml", "tests.patch"]
    task = load_task(folder)
    assert task.source.base_commit.startswith("1fb2b9f1b6") and task.source.fix_commit.startswith("5a7e078c94")
    assert task.source.remote == REMOTE and task.source.pull_request == "https://github.com/pytoolz/toolz/pull/603"
    assert task.verify.command == "python3 -m pytest -q toolz/tests/test_itertoolz.py" and task.verify.protected_paths == ("toolz/tests/",)
    assert changed_paths(task.tests_patch()) == ["toolz/tests/test_itertoolz.py"] and changed_paths(task.reference()) == ["toolz/itertoolz.py"]
    prompt = task.prompt()
    assert prompt.startswith("# Raise in partition_all when length is invalid\n") and "__len__" in prompt
    assert "#603" not in prompt and "#602" not in prompt and "diff --git" not in prompt  # the change's words, its numbers gone, never the diff
    # the tests patch is the PR's own test change, applied by the verifier at the base
    assert b"ListWithBadLength" in task.tests_patch() and b"LookupError" not in task.reference().split(b"+++")[0]


def test_a_task_whose_tests_need_a_name_only_the_fix_defines_says_so(toolz: Path):
    """toolz #308's tests import PY33 from toolz.compatibility, which its fix adds and its prompt
    never says: an agent that fixes the bug any other way fails them. `task create` says so; once
    the prompt names it, nothing is left to guess."""
    done = benchtape("task", "create", "308", cwd=toolz)
    assert done.returncode == 0, done.stderr
    assert "! the hidden tests use names only reference.patch defines, which prompt.md never says: PY33 (toolz/tests/test_inspect_args.py)" in done.stdout
    assert "name them in prompt.md, or drop the task" in done.stdout
    (toolz / ".benchtape" / "tasks" / "308" / "prompt.md").write_text("Inspect properties; expose PY33 in toolz.compatibility.\n")
    from benchtape.tasks.interface import unnamed_interface

    task = load_task(toolz / ".benchtape" / "tasks" / "308")
    assert unnamed_interface(task.tests_patch().decode(), task.reference().decode(), task.prompt()) == []  # said in the prompt: nothing to guess


def test_a_merge_commit_takes_its_first_parent_as_base(toolz: Path):
    done = benchtape("task", "create", "551", cwd=toolz)
    assert done.returncode == 0, done.stderr
    assert "created task 551" in done.stdout and "next: review" in done.stdout
    task = load_task(toolz / ".benchtape" / "tasks" / "551")
    assert task.source.base_commit.startswith("1aa72df3a7") and task.source.fix_commit.startswith("386c75033d")
    assert task.prompt().startswith('# Revert "Faster isiterable when x isn\'t iterable." and add test cases for isiterable\n')
    assert "Notes from the change's commits" in task.prompt()  # the merged branch's own messages


def test_a_task_is_never_overwritten(toolz: Path):
    folder = toolz / ".benchtape" / "tasks" / "603"
    if not folder.is_dir():  # this test may run alone, or on another worker than the one that created it
        assert benchtape("task", "create", "603", cwd=toolz).returncode == 0
    (folder / "prompt.md").write_text("# edited by hand\n")
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    done = benchtape("task", "create", "603", cwd=toolz)
    assert done.returncode == 2 and "never overwritten" in done.stderr and "rm -r" in done.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_plain_commit_and_refusals(toolz: Path):
    # a commit on the mainline that is no PR: its 12-hex prefix is the id, its parent the base
    plain = next(c for c in scan(load_project(toolz), limit=200).candidates if c.landing.kind == "commit")
    done = benchtape("task", "create", plain.landing.fix.sha[:10], "--json", cwd=toolz)
    assert done.returncode == 0, done.stderr
    created = json.loads(done.stdout)["created"][0]
    assert created["id"] == plain.landing.fix.sha[:12] and created["pull_request"] is None and created["base_commit"] == plain.landing.fix.parents[0]
    assert load_task(toolz / ".benchtape" / "tasks" / created["id"]).source.pull_request is None
    missing = benchtape("task", "create", "9999", cwd=toolz)
    assert missing.returncode == 2 and "no merged pull request #9999" in missing.stderr
    docs_only = benchtape("task", "create", "609", cwd=toolz)  # CI files only
    assert docs_only.returncode == 2 and "changes no test file" in docs_only.stderr
    only = next(c for c in scan(load_project(toolz), limit=200).skipped if c.landing.number and c.split.tests and not c.split.reference)
    tests_only = benchtape("task", "create", only.landing.id, cwd=toolz)
    assert tests_only.returncode == 2 and "changes only tests" in tests_only.stderr
    assert not (toolz / ".benchtape" / "tasks" / "609").exists() and not (toolz / ".benchtape" / "tasks" / only.landing.id).exists()
    # a fix of configuration alone (#610: tests and pyproject.toml) is made on request, saying
    # what scan says of it (a newcomer on jshttp/content-type: #66 was created silently, scan
    # skipped it, and only validation found its base already passing)
    config = next(c for c in scan(load_project(toolz), limit=200).skipped if (c.skipped or "").startswith("tests only") and c.split.other)
    made = benchtape("task", "create", config.landing.id, "--json", cwd=toolz)
    assert made.returncode == 0, made.stderr
    doc = json.loads(made.stdout)["created"][0]
    assert doc["no_code"] and "changes no implementation code" in doc["no_code"] and config.split.other[0] in doc["no_code"]


def test_lint_finds_leaks_and_fix_redacts_them(toolz: Path):
    folder = toolz / ".benchtape" / "tasks" / "551"
    if not folder.exists():  # made by an earlier test of this module, unless the workers split it
        assert benchtape("task", "create", "551", cwd=toolz).returncode == 0
    leaky = "# Fix isiterable\n\nSee https://github.com/pytoolz/toolz/pull/551 (pytoolz/toolz#551), base 1aa72df3a7.\n"
    (folder / "prompt.md").write_text(leaky)
    done = benchtape("task", "lint", "551", "--json", cwd=toolz)
    assert done.returncode == 1
    kinds = [f["kind"] for f in json.loads(done.stdout)["tasks"][0]["findings"]]
    assert kinds == ["pr_url", "owner_repo", "self_reference", "commit"]
    listed = json.loads(benchtape("task", "list", "--json", cwd=toolz).stdout)
    assert next(t for t in listed["tasks"] if t["id"] == "551")["state"] == "leaking"
    refused = benchtape("task", "validate", "551", "--sandbox", "home", "--json", cwd=toolz)
    assert refused.returncode == 1
    report = json.loads(refused.stdout)["tasks"][0]
    assert report["refused"].startswith("the prompt leaks") and report["phases"] == {} and report["next"] == "benchtape task lint --fix 551"
    fixed = benchtape("task", "lint", "551", "--fix", cwd=toolz)
    assert fixed.returncode == 0, fixed.stdout
    assert (folder / "prompt.md").read_text() == "# Fix isiterable\n"  # "See [redacted] ([redacted][redacted]), base [redacted]." said nothing: dropped
    assert benchtape("task", "lint", cwd=toolz).returncode == 0


def test_a_line_of_punctuation_a_redaction_left_is_a_stray_fragment(toolz: Path):
    """Python-Markdown's "Fixes #918." left a prompt whose body was "." alone, and lint called it
    clean: `task create` removes a closing reference without a marker, so the line is found by
    what it is, and `--fix` drops it."""
    folder = toolz / ".benchtape" / "tasks" / "551"
    if not folder.exists():
        assert benchtape("task", "create", "551", cwd=toolz).returncode == 0
    (folder / "prompt.md").write_text("# Fix isiterable\n\n.\n")
    found = benchtape("task", "lint", "551", cwd=toolz)
    assert found.returncode == 1 and "line 3: a stray fragment of a redaction" in found.stdout, found.stdout
    fixed = benchtape("task", "lint", "551", "--fix", cwd=toolz)
    assert fixed.returncode == 0, fixed.stdout
    assert (folder / "prompt.md").read_text() == "# Fix isiterable\n"


def test_punctuation_left_alone_is_a_fragment_but_markdown_without_words_is_not():
    """What a removed reference leaves ("." "," "- ." "()" a dash) is found and dropped, a gap
    between paragraphs kept single; a rule, an ellipsis, an empty list item's hyphen and
    anything inside a code fence are the text's own."""
    from benchtape.tasks.lint import fragments, without_fragments

    text = "# Fix lists\n\nNested lists.\n\n.\n\nTables too.\n,\n- .\n()\n\u2014\n\n---\n\n...\n\n-\n\n```\nf(\n);\n.\n```\n"
    assert [(f.line, f.text) for f in fragments(text)] == [(5, "."), (8, ","), (9, "- ."), (10, "()"), (11, "\u2014")]
    fixed = without_fragments(text)
    assert fixed == "# Fix lists\n\nNested lists.\n\nTables too.\n\n---\n\n...\n\n-\n\n```\nf(\n);\n.\n```\n"
    assert fragments(fixed) == [] and without_fragments(fixed) == fixed


def test_the_placeholder_command_is_refused_until_written(toolz: Path):
    assert benchtape("task", "create", "534", cwd=toolz).returncode == 0
    task_yaml = toolz / ".benchtape" / "tasks" / "534" / "task.yaml"
    text = task_yaml.read_text()
    task_yaml.write_text(text.replace('command: "python3 -m pytest -q toolz/tests/test_curried.py"', "command: false"))
    row = next(t for t in json.loads(benchtape("task", "list", "--json", cwd=toolz).stdout)["tasks"] if t["id"] == "534")
    assert row["state"] == "unvalidated" and "placeholder" in row["why"]
    done = benchtape("task", "validate", "534", "--sandbox", "home", "--json", cwd=toolz)
    report = json.loads(done.stdout)["tasks"][0]
    assert done.returncode == 1 and report["refused"] == "verify.command is the placeholder `false`" and report["phases"] == {}
    unknown = benchtape("task", "validate", "5344", cwd=toolz)
    assert unknown.returncode == 2 and "did you mean '534'" in unknown.stderr


def test_the_owner_repo_a_prompt_must_not_carry_comes_from_the_remote_and_package_json(tmp_path: Path):
    """A clone from a local path has no forge in its tasks' source: the git remote set later, or
    package.json's `repository` (jshttp/cookie's `"jshttp/cookie"`), still names the repository."""
    from benchtape.spec.project import load_project
    from benchtape.tasks.lint import repositories

    repo = tmp_path / "cookie"
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    assert repositories(load_project(repo)) == []
    (repo / "package.json").write_text('{"name": "cookie", "repository": "jshttp/cookie"}\n')
    assert repositories(load_project(repo)) == ["jshttp/cookie"]
    (repo / "package.json").write_text('{"repository": {"type": "git", "url": "git+https://github.com/jshttp/cookie.git"}}\n')
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "git@github.com:someone/cookie-fork.git"], check=True)
    assert repositories(load_project(repo)) == ["someone/cookie-fork", "jshttp/cookie"]


def test_a_clone_of_a_local_mirror_takes_its_source_from_the_projects_manifest(tmp_path: Path):
    """jshttp/cookie cloned from a mirror folder: its remote names no forge, and `init --tasks`
    said the source was unknown although package.json says `"repository": "jshttp/cookie"`, so
    the leak lint knew only the mirror's path. The manifest's forge is the source now, said so."""
    from repokit import commit, init_repo

    mirror = init_repo(tmp_path / "mirror")
    commit(mirror, {"package.json": '{"name": "cookie", "repository": "jshttp/cookie"}\n', "index.js": "module.exports = 1\n"}, "cookie")
    subprocess.run(["git", "clone", "-q", str(mirror), str(tmp_path / "cookie")], check=True)
    done = benchtape("init", "--tasks", cwd=tmp_path / "cookie")
    assert done.returncode == 0, done.stderr
    config = (tmp_path / "cookie" / ".benchtape" / "config.yaml").read_text()
    assert "owner: jshttp" in config and "repo: cookie" in config and "provider: github" in config and f"its remote is {mirror}" in config, config
    from benchtape.tasks.init_project import declared_source

    (tmp_path / "py").mkdir()
    (tmp_path / "py" / "pyproject.toml").write_text('[project]\nname = "x"\n[project.urls]\nSource = "https://github.com/hukkin/tomli/tree/master"\n')
    assert declared_source(tmp_path / "py") == {"host": "github.com", "owner": "hukkin", "repo": "tomli", "provider": "github"}
    (tmp_path / "py" / "pyproject.toml").write_text('[project]\nname = "x"\n[project.urls]\nDocs = "https://x.readthedocs.io"\n')
    assert declared_source(tmp_path / "py") == {}
    # poetry's own table (litl/backoff's pyproject names its repository there, and no [project])
    (tmp_path / "py" / "pyproject.toml").write_text('[tool.poetry]\nname = "backoff"\nhomepage = "https://backoff.readthedocs.io"\nrepository = "https://github.com/litl/backoff"\n')
    assert declared_source(tmp_path / "py") == {"host": "github.com", "owner": "litl", "repo": "backoff", "provider": "github"}
