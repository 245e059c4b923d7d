"""`kind: Task`, `kind: Project`, `kind: UserConfig`: strict loading with file:line errors, the
fingerprint and the states; the leak findings; credential routes by name only."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchtape.core.errors import BadInput
from benchtape.spec.credentials import forwarded_names, presence
from benchtape.spec.project import load_project, load_user_config
from benchtape.spec.prompt_leaks import LeakContext, find_leaks, redact, repository_names
from benchtape.spec.task import Validation, find_task, load_task, task_dirs, with_validation

BASE = "1fb2b9f1b69ab664a264944f4eafc290acce127d"
FIX = "5a7e078c941c990dcaca53ac6920e5d5c0b1475f"
TASK = f"""apiVersion: benchtape/v1alpha1
kind: Task
source:
  remote: git@github.com:pytoolz/toolz.git
  pull_request: https://github.com/pytoolz/toolz/pull/603
  base_commit: "{BASE}"
  fix_commit: "{FIX}"
prompt: prompt.md
verify:
  command: python3 -m pytest -q toolz/tests/test_itertoolz.py
  protected_paths: [toolz/tests/]
  tests_patch: tests.patch
reference_patch: reference.patch
"""


def write_task(root: Path, task_id: str = "603", text: str = TASK, prompt: str = "# Raise in partition_all when length is invalid\n", layout: str = ".benchtape") -> Path:
    folder = root / layout / "tasks" / task_id
    folder.mkdir(parents=True)
    (folder / "task.yaml").write_text(text)
    (folder / "prompt.md").write_text(prompt)
    (folder / "tests.patch").write_text("diff --git a/t b/t\n")
    (folder / "reference.patch").write_text("diff --git a/r b/r\n")
    return folder


def test_a_task_loads_with_its_files(tmp_path: Path):
    task = load_task(write_task(tmp_path))
    assert task.id == "603" and task.source.base_commit == BASE and task.source.number == 603
    assert task.verify.network is False and task.verify.protected_paths == ("toolz/tests/",) and task.verify.timeout == 900
    assert task.prompt().startswith("# Raise") and task.validation is None


@pytest.mark.parametrize(
    ("edit", "line", "words"),
    [
        (lambda t: t.replace("prompt: prompt.md", "prompt: prompt.md\nreference: x"), 9, "unknown key `reference`"),
        (lambda t: t.replace(f'base_commit: "{BASE}"', "base_commit: 1234567890123456789012345678901234567890"), 6, "quoted 40-hex"),
        (lambda t: t.replace(f'base_commit: "{BASE}"', 'base_commit: "1fb2b9f"'), 6, "full 40-hex"),
        (lambda t: t.replace("tests_patch: tests.patch", "tests_patch: missing.patch"), 12, "does not exist"),
        (lambda t: t.replace("tests_patch: tests.patch", "tests_patch: ../../x.patch"), 12, "outside the task's folder"),
        (lambda t: t.replace("  command: python3 -m pytest -q toolz/tests/test_itertoolz.py\n", "  network: maybe\n  command: x\n"), 10, "`network:` must be true or false"),
        (lambda t: t.replace("  command: python3 -m pytest -q toolz/tests/test_itertoolz.py\n", "  timeout: 15 minutes\n  command: x\n"), 10, "`timeout: 15 minutes` is not a duration"),
        (lambda t: t.replace("kind: Task", "kind: Evaluation"), 2, "does not belong here"),
    ],
)
def test_a_bad_task_names_file_line_and_fix(tmp_path: Path, edit, line: int, words: str):
    folder = write_task(tmp_path, text=edit(TASK))
    with pytest.raises(BadInput) as err:
        load_task(folder)
    assert err.value.file == str(folder / "task.yaml") and err.value.line == line and words in err.value.what, err.value.render()
    assert err.value.fix, err.value.render()


@pytest.mark.parametrize(("written", "fix"), [("15 minutes", '"15m"'), ("1.5 hours", '"1.5h"'), ("2 secs", '"2s"'), ("15", '"15s"'), ("soon", '"300s"')])
def test_a_duration_without_a_unit_gets_a_fix_that_parses(tmp_path: Path, written: str, fix: str):
    """The fix names a duration that loads: `15 minutes` is `"15m"`, never `"15 minutess"`."""
    folder = write_task(tmp_path, text=TASK.replace("  command: python3", f"  timeout: {written}\n  command: python3"))
    with pytest.raises(BadInput) as err:
        load_task(folder)
    assert f"`timeout: {fix}`" in (err.value.fix or ""), err.value.render()
    (folder / "task.yaml").write_text(TASK.replace("  command: python3", f"  timeout: {fix}\n  command: python3"))
    assert load_task(folder).verify.timeout > 0


def test_a_quoted_network_reads_as_the_bench_loader_reads_it(tmp_path: Path):
    folder = write_task(tmp_path, text=TASK.replace("  command: python3", '  network: "false"\n  command: python3'))
    assert load_task(folder).verify.network is False


def test_the_fingerprint_binds_every_input(tmp_path: Path):
    folder = write_task(tmp_path)
    first = load_task(folder).fingerprint("image-a")
    assert first == load_task(folder).fingerprint("image-a") and first.startswith("sha256:")
    assert load_task(folder).fingerprint("image-b") != first
    for name, change in (("prompt.md", "# other\n"), ("tests.patch", "x"), ("reference.patch", "y")):
        old = (folder / name).read_text()
        (folder / name).write_text(change)
        assert load_task(folder).fingerprint("image-a") != first, name
        (folder / name).write_text(old)
    (folder / "task.yaml").write_text(TASK.replace("-q toolz", "-x -q toolz"))
    assert load_task(folder).fingerprint("image-a") != first
    (folder / "task.yaml").write_text(TASK + "# a comment binds nothing\n")
    assert load_task(folder).fingerprint("image-a") == first


def test_states_move_from_unvalidated_to_valid_to_stale(tmp_path: Path):
    folder = write_task(tmp_path)
    task = load_task(folder)
    state = task.state("img")
    assert state.state == "unvalidated" and state.next == "benchtape task validate 603"
    v = Validation(at="2026-01-01T00:00:00Z", fingerprint=task.fingerprint("img"), base_failed=True, reference_passed=True, level="home", runner="pytest", base={"ran": 50, "failed": 1}, reference={"ran": 50, "failed": 0})
    (folder / "task.yaml").write_text(with_validation((folder / "task.yaml").read_text(), v))
    validated = load_task(folder)
    assert validated.validation == v and validated.state("img").state == "valid"
    assert validated.state("another image").state == "stale"
    (folder / "prompt.md").write_text("# Raise in partition_all when length is invalid!\n")
    assert load_task(folder).state("img").state == "stale"
    (folder / "prompt.md").write_text("See https://github.com/pytoolz/toolz/pull/603\n")
    leaking = load_task(folder).state("img")
    assert leaking.state == "leaking" and leaking.next == "benchtape task lint --fix 603"
    again = with_validation((folder / "task.yaml").read_text(), v)
    assert again.count("validation:") == 1  # replaced, not appended twice


def test_validation_rewrites_the_unvalidated_header_of_task_create_and_no_other_comment(tmp_path: Path):
    """A newcomer's validated task.yaml still opened "Unvalidated: review prompt.md …, then run
    `benchtape task validate`": that one line of task create's now says what the task is."""
    from benchtape.spec.task import UNVALIDATED_NOTE

    folder = write_task(tmp_path)
    header = f"# {UNVALIDATED_NOTE.format(id='603')}\n# my own note: Unvalidated is a word\n"
    (folder / "task.yaml").write_text(header + (folder / "task.yaml").read_text())
    task = load_task(folder)
    v = Validation(at="2026-01-01T00:00:00Z", fingerprint=task.fingerprint("img"), base_failed=True, reference_passed=True, level="home", runner="pytest", base={"ran": 50, "failed": 1}, reference={"ran": 50, "failed": 0})
    text = with_validation((folder / "task.yaml").read_text(), v, "603")
    assert "Unvalidated: review prompt.md" not in text and "# Validated: see `validation:` below" in text and "benchtape task validate 603` proves it again" in text
    assert "# my own note: Unvalidated is a word" in text
    (folder / "task.yaml").write_text(text)
    assert load_task(folder).fingerprint("img") == task.fingerprint("img")  # a comment binds nothing: still valid


def test_a_stale_task_says_which_bound_input_changed(tmp_path: Path):
    """The validation keeps each bound input's own hash beside the fingerprint: a stale task names
    what changed (prompt.md), not every input it could be; one validated before says the list."""
    folder = write_task(tmp_path)
    task = load_task(folder)
    v = Validation(at="2026-01-01T00:00:00Z", fingerprint=task.fingerprint("img"), base_failed=True, reference_passed=True, inputs=task.bound_inputs("img"))
    (folder / "task.yaml").write_text(with_validation((folder / "task.yaml").read_text(), v))
    assert load_task(folder).validation == v and load_task(folder).state("img").state == "valid"
    (folder / "prompt.md").write_text("# Raise in partition_all when length is invalid!\n")
    assert load_task(folder).state("img").why == "changed since it was validated: prompt.md"
    assert load_task(folder).state("other").why == "changed since it was validated: prompt.md, the project image or the environment's recipe (.benchtape/config.yaml `env:`, the dependency declarations)"
    older = Validation(at=v.at, fingerprint=v.fingerprint, base_failed=True, reference_passed=True)
    (folder / "task.yaml").write_text(with_validation((folder / "task.yaml").read_text(), older))
    assert load_task(folder).state("img").why.startswith("a bound input changed since it was validated (prompt, a patch")


def test_tasks_are_found_in_both_layouts(tmp_path: Path):
    write_task(tmp_path, "603")
    write_task(tmp_path, "551", layout=".ber/bench")
    write_task(tmp_path, "1000", layout=".ber/bench")
    assert list(task_dirs(tmp_path)) == ["551", "603", "1000"]  # numbers in numeric order
    assert find_task(tmp_path, "551").parts[-4:] == (".ber", "bench", "tasks", "551")
    with pytest.raises(BadInput) as err:
        find_task(tmp_path, "5511")
    assert "'551'" in (err.value.fix or "")


def test_every_kind_of_leak_is_found_and_redacted():
    ctx = LeakContext(number=603, pull_request_url="https://github.com/pytoolz/toolz/pull/603", repositories=("pytoolz/toolz",), commits=(BASE, FIX))
    text = (
        "Fix it (see https://github.com/pytoolz/toolz/pull/603).\n"
        "Upstream is pytoolz/toolz, also gitlab.com and https://gist.githubusercontent.com/x.\n"
        "This is #603, pull/603 and !603; #6030 and #60 are other numbers.\n"
        "Parent 1fb2b9f1b6, fix 5a7e078; deadbeefcafe is no commit of ours.\n"
    )
    found = find_leaks(text, ctx)
    kinds = [(f.kind, f.text) for f in found]
    assert kinds == [
        ("pr_url", "https://github.com/pytoolz/toolz/pull/603"),
        ("owner_repo", "pytoolz/toolz"),
        ("forge_host", "gitlab.com"),
        ("forge_url", "https://gist.githubusercontent.com/x"),  # the sentence's full stop is not the URL's
        ("self_reference", "#603"),
        ("self_reference", "pull/603"),
        ("self_reference", "!603"),
        ("commit", "1fb2b9f1b6"),
        ("commit", "5a7e078"),
    ]
    assert found[1].line == 2 and found[4].line == 3
    clean = redact(text, found)
    assert find_leaks(clean, ctx) == [] and "#6030 and #60" in clean and "deadbeefcafe" in clean and clean.count("[redacted]") == 9
    assert repository_names("git@github.com:pytoolz/toolz.git", "https://gitlab.com/g/p/-/merge_requests/3", "/work/x.bundle") == ("pytoolz/toolz", "g/p")


def test_project_config_is_strict_and_its_results_live_outside(tmp_path: Path):
    cfg = tmp_path / ".benchtape" / "config.yaml"
    cfg.parent.mkdir()
    cfg.write_text("apiVersion: bench.ber.run/v1alpha1\nkind: Project\nsource: {provider: github, owner: pytoolz, repo: toolz}\nharvest:\n  prompt_source: pr_description\n  test_patterns: ['spec/**']\n")
    project = load_project(tmp_path)
    assert project.source.pull_request_url(603) == "https://github.com/pytoolz/toolz/pull/603"
    assert project.prompt_source == "pull_request" and project.test_patterns == ("spec/**",)
    cfg.write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nresults: results\n")
    with pytest.raises(BadInput) as err:
        load_project(tmp_path)
    assert err.value.line == 3 and "must be absolute" in err.value.what
    cfg.write_text(f"apiVersion: benchtape/v1alpha1\nkind: Project\nresults: {tmp_path / 'inside'}\n")
    with pytest.raises(BadInput, match="inside the repository"):
        load_project(tmp_path)
    cfg.write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nharvest: {prompt_source: issues}\n")
    with pytest.raises(BadInput) as err:
        load_project(tmp_path)
    assert "'issue'" in (err.value.fix or "")


def test_a_forge_is_never_an_agents_allowed_host(tmp_path: Path):
    """berbench: forge hosts are always rejected (the agent could read the PR a task came from)."""
    cfg = tmp_path / ".benchtape" / "config.yaml"
    cfg.parent.mkdir()
    cfg.write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nagent: {allow_hosts: [pypi.org, files.pythonhosted.org]}\n")
    assert load_project(tmp_path).allow_hosts == ("pypi.org", "files.pythonhosted.org")
    for forge in ("api.github.com", "GitHub.com.", "gitlab.com"):
        cfg.write_text(f"apiVersion: benchtape/v1alpha1\nkind: Project\nagent:\n  allow_hosts: [pypi.org, {forge}]\n")
        with pytest.raises(BadInput) as err:
            load_project(tmp_path)
        assert err.value.line == 4 and "a forge" in err.value.what and forge in (err.value.fix or ""), err.value.render()


def test_a_ber_bench_config_is_read_and_benchtapes_wins(tmp_path: Path):
    ber = tmp_path / ".ber" / "bench" / "config.yaml"
    ber.parent.mkdir(parents=True)
    ber.write_text("apiVersion: bench.ber.run/v1alpha1\nkind: Project\nsource: {owner: a, repo: b}\n")
    assert load_project(tmp_path).source.full_name == "a/b"
    own = tmp_path / ".benchtape" / "config.yaml"
    own.parent.mkdir()
    own.write_text("apiVersion: benchtape/v1alpha1\nkind: Project\nsource: {owner: c, repo: d}\n")
    assert load_project(tmp_path).source.full_name == "c/d"


def test_credentials_are_reported_by_name_and_only_the_tools_own(tmp_path: Path):
    env = {"ANTHROPIC_API_KEY": "sk-ant-SECRET", "OPENAI_API_KEY": ""}
    claude = presence("claude-code", env=env, home=tmp_path)
    assert [r.name for r in claude.present] == ["ANTHROPIC_API_KEY"] and claude.ok
    assert "SECRET" not in repr(claude.to_dict())
    codex = presence("codex", env=env, home=tmp_path)
    assert not codex.ok and codex.present == ()
    (tmp_path / ".codex").mkdir()
    (tmp_path / ".codex" / "auth.json").write_text("{}")
    assert presence("codex", env=env, home=tmp_path).ok
    assert forwarded_names("codex", {**env, "OPENAI_API_KEY": "k"}) == ["OPENAI_API_KEY"]  # never Anthropic's
    assert presence("mock", env=env).ok and not presence("mock", env=env).needed
    cfg = tmp_path / "user" / "config.yaml"
    cfg.parent.mkdir()
    cfg.write_text("apiVersion: benchtape/v1alpha1\nkind: UserConfig\ncredentials:\n  claude-code: {env: CLAUDE_CODE_OAUTH_TOKEN}\n  codex: {env: MY_KEY}\n")
    hints = load_user_config(tmp_path / "user").credentials
    both = presence("claude-code", env={**env, "CLAUDE_CODE_OAUTH_TOKEN": "t"}, home=tmp_path, hint=hints["claude-code"])
    assert both.present[0].name == "CLAUDE_CODE_OAUTH_TOKEN"  # the hinted route first
    with pytest.raises(BadInput, match="does not accept"):
        presence("codex", env=env, home=tmp_path, hint=hints["codex"])
    cfg.write_text("apiVersion: benchtape/v1alpha1\nkind: UserConfig\ncredentials:\n  codex: {value: sk-123}\n")
    with pytest.raises(BadInput) as err:
        load_user_config(tmp_path / "user")
    assert err.value.line == 4 and "never goes in a config file" in (err.value.fix or "")


def test_a_candidate_touching_protected_paths_is_named(tmp_path: Path):
    from benchtape.sandbox.verifier import guarded_paths

    task = load_task(write_task(tmp_path))
    candidate = b"diff --git a/toolz/itertoolz.py b/toolz/itertoolz.py\n--- a/toolz/itertoolz.py\n+++ b/toolz/itertoolz.py\n" b"diff --git a/toolz/tests/test_itertoolz.py b/toolz/tests/test_itertoolz.py\n"
    assert guarded_paths(candidate, task) == ["toolz/tests/test_itertoolz.py"]
    assert guarded_paths(candidate.split(b"diff --git a/toolz/tests")[0], task) == []


def test_a_candidate_adding_the_test_runners_own_files_is_named(tmp_path: Path):
    """A root conftest.py that marks every result passed, a .mocharc whose setup skips test
    bodies: tests pass with no code changed. The hidden tests own the runner's files wherever
    they are, unless the reference fix itself changes one."""
    from benchtape.sandbox.verifier import guarded_paths

    task = load_task(write_task(tmp_path))

    def adding(*paths: str) -> bytes:
        return b"".join(f"diff --git a/{p} b/{p}\nnew file mode 100644\n--- /dev/null\n+++ b/{p}\n@@ -0,0 +1 @@\n+x\n".encode() for p in paths)

    owned = ["conftest.py", "toolz/conftest.py", "pytest.ini", "sitecustomize.py", ".mocharc.js", ".mocharc", "jest.config.ts", "vitest.config.mts", "cheat.pth"]
    # vitest reads vite.config.ts's `test:` (its setupFiles can stub assert), npx an .npmrc's
    # node-options (`--require ./cheat.cjs`), mocha < 8 test/mocha.opts
    owned += ["vite.config.ts", ".npmrc", "packages/a/.npmrc", "spec/mocha.opts"]
    # babel-jest compiles the tests through the babel config (a plugin can drop every expect), @swc/jest through .swcrc
    owned += ["babel.config.js", ".babelrc", ".babelrc.json", ".swcrc"]
    # pytest's hidden .pytest.ini and pytest 9's (.)pytest.toml are read as pytest.ini is; node-tap's .taprc
    owned += [".pytest.ini", "pytest.toml", ".pytest.toml", ".taprc"]
    assert guarded_paths(adding("toolz/itertoolz.py", *owned), task) == owned
    assert guarded_paths(adding("toolz/itertoolz.py", "docs/conftest_notes.md", "setup.py"), task) == []
    reference = task.reference_patch
    assert reference is not None
    reference.write_bytes(reference.read_bytes() + adding("conftest.py"))  # the real fix changed it: a candidate may too
    assert guarded_paths(adding("conftest.py", "pytest.ini"), load_task(task.dir)) == ["pytest.ini"]


def test_a_candidate_adding_a_go_testmain_is_named(tmp_path: Path):
    """Go's conftest.py: a new `zz_test.go` whose TestMain prints `--- PASS:` for every test and
    exits 0 without running one graded PASS (hashicorp/golang-lru #156). A test file adding
    TestMain or an init decides how the test binary runs: the hidden tests own it; a plain new
    test, or code that defines an init, is the candidate's."""
    from benchtape.sandbox.verifier import guarded_paths

    task = load_task(write_task(tmp_path))

    def adding(path: str, body: str) -> bytes:
        lines = "".join(f"+{line}\n" for line in body.splitlines())
        return f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n@@ -0,0 +1,{len(body.splitlines())} @@\n{lines}".encode()

    cheat = adding("expirable/zz_main_test.go", 'package expirable\n\nfunc TestMain(m *testing.M) {\n\tfmt.Println("--- PASS: TestLoadingExpired (0.00s)")\n\tos.Exit(0)\n}\n')
    hook = adding("zz_test.go", "package lru\n\nfunc init() {\n\tflag.Set(\"test.run\", \"^$\")\n}\n")
    honest = adding("extra_test.go", "package lru\n\nfunc TestMore(t *testing.T) {}\n") + adding("lru.go", "package lru\n\nfunc init() {}\n")
    assert guarded_paths(cheat + hook + honest, task) == ["expirable/zz_main_test.go", "zz_test.go"]
    assert guarded_paths(honest, task) == []


def test_an_evaluation_is_found_in_the_berbench_layout(tmp_path: Path):
    from benchtape.spec.evaluation import evaluation_names, find_evaluation, project_of

    folder = tmp_path / ".ber" / "bench" / "evaluations"
    folder.mkdir(parents=True)
    (folder / "baseline.yaml").write_text("apiVersion: bench.ber.run/v1alpha1\nkind: Evaluation\ntools: [{tool: mock}]\n")
    path = find_evaluation("baseline", tmp_path)
    assert path == folder / "baseline.yaml" and project_of(path) == tmp_path.resolve() and evaluation_names(tmp_path) == ["baseline"]
    own = tmp_path / ".benchtape" / "evaluations"
    own.mkdir(parents=True)
    (own / "baseline.yaml").write_text("apiVersion: benchtape/v1alpha1\nkind: Evaluation\ntools: [{tool: mock}]\n")
    assert find_evaluation("baseline", tmp_path) == own / "baseline.yaml"  # benchtape's own wins


def test_a_task_whose_fix_still_fails_tests_broken_before_is_not_exported_to_harbor(tmp_path: Path):
    """Such a task holds in benchtape (its broken-before tests are in neither list), but the
    exported tests/test.sh rewards the verify command's exit status: Harbor's own oracle would
    get 0. Refused before anything is written, with the way to leave those tests out."""
    from dataclasses import replace

    from benchtape.formats.harbor_export import export_tasks

    task = load_task(write_task(tmp_path))
    held = Validation(at="2026-12-06T00:00:00Z", fingerprint="x", base_failed=True, reference_passed=True, runner="pytest", reference={"ran": 6, "passed": 5, "failed": 1}, fail_to_pass=("t::a",))
    with pytest.raises(BadInput) as err:
        export_tasks(None, [replace(task, validation=held)], tmp_path / "out", carry_env=None)  # type: ignore[arg-type]
    assert "fails with its reference fix too (1 failed" in err.value.what and "--deselect" in (err.value.fix or "")
    assert not (tmp_path / "out").exists()


def test_a_babel_section_added_to_package_json_is_the_runners(tmp_path: Path):
    """babel-jest compiles each test file through package.json's "babel" settings as through a
    babel.config.js (a plugin there can drop every expect): the hidden tests own it; the rest
    of package.json is the agent's."""
    import json

    from benchtape.sandbox.verifier import runner_settings_changed

    task = load_task(write_task(tmp_path))
    base = tmp_path / "base"
    base.mkdir()
    (base / "package.json").write_text(json.dumps({"name": "p", "version": "1.0.0"}, indent=2) + "\n")

    def editing(doc: dict) -> bytes:
        old = (base / "package.json").read_text().splitlines()
        new = (json.dumps(doc, indent=2) + "\n").splitlines()
        body = "".join(f"-{line}\n" for line in old) + "".join(f"+{line}\n" for line in new)
        return f"diff --git a/package.json b/package.json\n--- a/package.json\n+++ b/package.json\n@@ -1,{len(old)} +1,{len(new)} @@\n{body}".encode()

    assert runner_settings_changed(base, editing({"name": "p", "version": "1.0.0", "babel": {"plugins": ["./strip-expect.js"]}}), task) == ['package.json "ava", "jest", "mocha", "tap", "babel"']
    assert runner_settings_changed(base, editing({"name": "p", "version": "1.0.1"}), task) == []
