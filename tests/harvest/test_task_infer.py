"""What `task create` reads from a change without running anything: the verify command of each
runner (naming only the changed tests), the prompt from the change's words, the file split."""

from __future__ import annotations

import json

from benchtape.spec.project import DEFAULT_NOISE_PATTERNS, DEFAULT_TEST_PATTERNS
from benchtape.tasks.classify import split
from benchtape.tasks.gitlog import Commit, Landing
from benchtape.tasks.infer import infer_command
from benchtape.tasks.prompt_text import prompt_for


def files(**texts: str):
    return lambda name: texts.get(name)


def test_python_tests_run_with_pytest_naming_the_changed_files():
    got = infer_command({"toolz/tests/test_a.py": b"+def test_x(): pass\n", "toolz/tests/conftest.py": b""}, files(**{"pyproject.toml": "[tool.pytest.ini_options]\n"}))
    assert (got.command, got.runner) == ("python3 -m pytest -q toolz/tests/test_a.py", "pytest")
    only_helpers = infer_command({"tests/helpers.py": b""}, files())
    assert only_helpers.command == "python3 -m pytest -q tests"  # no test module changed: its folder


def test_unittest_when_nothing_mentions_pytest():
    got = infer_command({"pkg/tests/test_a.py": b"+import unittest\n+class T(unittest.TestCase): ...\n"}, files(**{"setup.py": "setup()"}))
    assert (got.command, got.runner) == ("python3 -m unittest -v pkg.tests.test_a", "unittest")
    assert infer_command({"pkg/tests/test_a.py": b"+import unittest\n"}, files(**{"tox.ini": "commands = pytest"})).runner == "pytest"


def test_a_module_named_tests_py_is_named_to_the_runner():
    """itsdangerous keeps its tests in tests.py, which pytest collects only when it is named: the
    folder (`pytest -q .`) collected nothing and its tasks were tests_not_collected."""
    unittest_block = b"+import unittest\n+class T(unittest.TestCase): ...\n"
    assert infer_command({"tests.py": unittest_block}, files(**{"setup.py": "setup()"})).command == "python3 -m unittest -v tests"
    assert infer_command({"app/tests.py": b"+def test_x(): pass\n"}, files(**{"pytest.ini": ""})).command == "python3 -m pytest -q app/tests.py"
    assert infer_command({"pkg/tests/helpers.py": b"+X = 1\n"}, files(**{"pytest.ini": ""})).command == "python3 -m pytest -q pkg/tests"  # a helper is no test module: its folder


def test_go_names_the_packages_and_the_test_functions():
    block = b"@@ -10,3 +10,9 @@ func TestOld(t *testing.T) {\n+func TestNew(t *testing.T) {\n+}\n"
    got = infer_command({"pkg/a/a_test.go": block, "b_test.go": b"+func TestB(t *testing.T) {}\n"}, files())
    assert (got.command, got.runner) == ("go test -v . ./pkg/a -run '^(TestB|TestNew)$'", "go")  # files in name order; TestOld only heads the hunk


def test_go_names_the_function_a_changed_line_is_in_not_the_hunks_header():
    """google/uuid #150: the hunk's context began at `func TestVersion7`, so git headed it with
    the function before (TestVersion6, a flaky test the fix never touched), and TestVersion7,
    whose loop the patch changed, was never run."""
    block = (
        b"--- a/uuid_test.go\n+++ b/uuid_test.go\n"
        b"@@ -825,7 +825,7 @@ func TestVersion6(t *testing.T) {\n func TestVersion7(t *testing.T) {\n \tSetRand(nil)\n"
        b"-\tfor x := 1; x < 32; x++ {\n+\tfor x := 1; x < 128; x++ {\n \t\tuuid, err := NewV7()\n"
        b"@@ -900,3 +900,12 @@ func TestVersion7FromReader(t *testing.T) {\n \t}\n }\n+\n+func BenchmarkV7(b *testing.B) {\n+\tNewV7()\n+}\n"
        b"+\n+func contains(s []string, x string) bool {\n+\treturn false\n+}\n+\n+func ExampleNewV7() {\n+}\n"
    )
    assert infer_command({"uuid_test.go": block}, files()).command == "go test -v . -run '^(TestVersion7|ExampleNewV7)$'"  # a new benchmark and a new helper name nothing
    # a change to a top-level table or a helper that was there: whichever tests share it, so all of them
    shared = b"--- a/json_test.go\n+++ b/json_test.go\n@@ -10,3 +10,3 @@ import (\n )\n \n-var testUUID = Must(Parse(\"f47a\"))\n+var testUUID = MustParse(\"f47a\")\n"
    got = infer_command({"json_test.go": shared, "sql_test.go": b"--- a/sql_test.go\n+++ b/sql_test.go\n@@ -1,3 +1,3 @@ func TestScan(t *testing.T) {\n-\ta := 1\n+\ta := 2\n"}, files())
    assert got.command == "go test -v ." and "all of their tests" in got.note


def test_cargo_names_integration_tests_else_runs_the_crate():
    assert infer_command({"tests/parse.rs": b""}, files()).command == "cargo test --no-fail-fast --test parse"
    assert infer_command({"src/tests/mod.rs": b""}, files()).command == "cargo test --no-fail-fast"


def test_javascript_takes_the_runner_package_json_names():
    vitest = files(**{"package.json": json.dumps({"devDependencies": {"vitest": "^1"}})})
    assert infer_command({"src/a.test.ts": b""}, vitest).command == 'npx vitest run --reporter=default --reporter=json --outputFile.json="${BENCHTAPE_REPORTS:-/tmp}/vitest.json" src/a.test.ts'
    jest = files(**{"package.json": json.dumps({"scripts": {"test": "jest"}})})
    assert infer_command({"src/a.spec.js": b""}, jest).command == 'npx jest --json --outputFile="${BENCHTAPE_REPORTS:-/tmp}/jest.json" src/a.spec.js'
    none = infer_command({"src/a.spec.js": b""}, files(**{"package.json": "{}"}))
    assert none.command == "false" and none.runner is None and "placeholder" in none.note
    # a file under __tests__/ is a test whatever its name, as jest's default match has it (immer's __tests__/regressions.js)
    assert infer_command({"__tests__/regressions.js": b""}, vitest).command.endswith(" __tests__/regressions.js")
    helped = infer_command({"__tests__/regressions.js": b"", "__tests__/helpers.js": b"", "__tests__/__fixtures__/a.js": b"", "src/__tests__/utils/make.ts": b""}, vitest).command
    assert helped.endswith(" __tests__/regressions.js")  # a helper or fixture there is no suite of its own
    node = files(**{"package.json": json.dumps({"scripts": {"test": "node --test && npm run lint"}})})
    assert infer_command({"test/a.test.mjs": b""}, node).command.startswith("node --test --test-reporter=spec")
    # the runner reached through a scripts package (pillarjs/path-to-regexp: @borderless/ts-scripts), seen by its config file or a plugin of its
    through = {"devDependencies": {"@borderless/ts-scripts": "^0.15.0", "typescript": "^5"}, "scripts": {"test": "ts-scripts test"}}
    assert infer_command({"src/index.spec.ts": b""}, files(**{"package.json": json.dumps(through), "vitest.config.mts": "export default {}"})).runner == "vitest"
    assert infer_command({"src/index.spec.ts": b""}, files(**{"package.json": json.dumps({**through, "devDependencies": {"@vitest/coverage-v8": "^1"}})})).runner == "vitest"
    assert infer_command({"src/a.test.js": b""}, files(**{"package.json": json.dumps({"jest": {"testEnvironment": "node"}})})).runner == "jest"
    assert infer_command({"src/a.test.js": b""}, files(**{"package.json": "{}", "jest.config.js": "module.exports = {}"})).runner == "jest"
    assert infer_command({"src/index.spec.ts": b""}, files(**{"package.json": json.dumps({**through, "devDependencies": {"@types/jest": "^27"}})})).runner == "jest"  # path-to-regexp in 2022
    # a changed spec file that defines no test is a table of cases the suites import (path-to-regexp's src/cases.spec.ts): never named to the runner
    cases = {"src/cases.spec.ts": "export const PARSER_TESTS = [{ path: '/', expected: [] }];\n", "src/index.spec.ts": "import { describe, it } from 'vitest';\ndescribe('parse', () => { it('works', () => {}); });\n"}
    tree = files(**{"package.json": json.dumps(through), "vitest.config.mts": "export default {}", **cases})
    alone = infer_command({"src/cases.spec.ts": b"+  { path: '/\\\\', expected: [] },\n"}, tree)
    assert alone.command.endswith('vitest.json"') and "whole suite" in alone.note  # no importer known: the whole suite
    users = {"src/cases.spec.ts": ["src/index.spec.ts", "src/redos.ts", "README.md"]}
    imported = infer_command({"src/cases.spec.ts": b"+  { path: '/\\\\', expected: [] },\n"}, tree, lambda p: users.get(p, []))
    assert imported.command.endswith('vitest.json" src/index.spec.ts') and "import" in imported.note
    both = infer_command({"src/cases.spec.ts": b"", "src/index.spec.ts": b""}, tree)
    assert both.command.endswith('vitest.json" src/index.spec.ts') and "src/cases.spec.ts" in both.note


def test_an_unknown_runner_is_the_placeholder_and_says_so():
    got = infer_command({"spec/models/user_spec.rb": b""}, files())
    assert (got.command, got.runner) == ("false", None) and "write the command" in got.note


def _landing(kind: str, subject: str, body: str, number: int | None) -> Landing:
    return Landing(kind, number, Commit("a" * 40, ["b" * 40], 0, subject, body), "b" * 40, branch="alice/fix")


def test_a_github_squash_body_loses_its_separator_and_the_bullet_that_repeats_the_title():
    """structlog's #807: GitHub's squash body repeats the title as the first `* ` bullet and
    ends in `---------` before the Co-authored-by lines the prompt drops."""
    body = "* Use WeakKeyDictionary for WRITE_LOCKS\n\nFile objects were never released.\n\n* tests: adapt style\n\n---------\n\nCo-authored-by: H <h@x>\n"
    text, _ = prompt_for(_landing("squash", "Use WeakKeyDictionary for WRITE_LOCKS (#807)", body, 807), [])
    assert text == "# Use WeakKeyDictionary for WRITE_LOCKS\n\nFile objects were never released.\n\n* tests: adapt style\n"


def test_a_squash_body_loses_the_bullets_that_say_how_the_pr_was_made():
    """tenacity #640's prompt ended "* Apply suggestions from code review": the squash's list of
    the PR's commits holds review and housekeeping subjects no agent can act on."""
    body = "When reraise=True, the cause is raised.\n\n* Apply suggestions from code review\n\n* Update tenacity/__init__.py\n* [pre-commit.ci] auto fixes from pre-commit.com hooks\n* address review comments\n* Merge branch 'main' into fix\n* fix lint\n* keep TryAgain without a cause\n"
    text, _ = prompt_for(_landing("squash", "fix: reraise the cause (#640)", body, 640), [])
    assert text == "# fix: reraise the cause\n\nWhen reraise=True, the cause is raised.\n\n* keep TryAgain without a cause\n", text


def test_a_squash_body_loses_what_pre_commit_ci_wrote():
    """tomli #135's real squash message: each "[pre-commit.ci] auto fixes" bullet came with the
    bot's "for more information" line, which stayed in the prompt twice."""
    body = (
        "* Make TOMLDecodeError show 'tomli' as its module\n\n* [pre-commit.ci] auto fixes from pre-commit.com hooks\n\n"
        "for more information, see https://pre-commit.ci\n\n* Move __module__ assignment to __init__, add test\n\n"
        "* [pre-commit.ci] auto fixes from pre-commit.com hooks\n\nfor more information, see https://pre-commit.ci\n\n"
        "Co-authored-by: pre-commit-ci[bot] <66853113+pre-commit-ci[bot]@users.noreply.github.com>\n"
    )
    text, _ = prompt_for(_landing("squash", "Make TOMLDecodeError show 'tomli' as its module (#135)", body, 135), [])
    assert text == "# Make TOMLDecodeError show 'tomli' as its module\n\n* Move __module__ assignment to __init__, add test\n", text


def test_a_short_title_alone_is_a_thin_prompt_and_anything_more_is_not():
    """cachetools' mined prompts were 7-word titles ("Change exact time of expiration in
    TTLCache."): which way the limit moves only the hidden tests knew. `task create` and
    `task validate` say so; a body, or a title that says enough, is left alone."""
    from benchtape.tasks.prompt_text import thin_warning

    said = thin_warning("# Change exact time of expiration in TTLCache.\n")
    assert said.startswith("prompt.md is the change's title alone (7 words)") and "or keep it knowingly" in said
    assert thin_warning("# Make TOMLDecodeError show 'tomli' as its module\n\n* Move __module__ assignment to __init__, add test\n") == ""
    assert thin_warning("# Raise a friendly TypeError, naming the mode, when load() is given a file opened in text mode\n") == ""


def test_a_squash_prompt_drops_its_number_closing_references_and_trailers():
    landing = _landing("squash", "Raise in partition_all when length is invalid (#603)", "It gave bad output. Fixes #602.\n\nSigned-off-by: A <a@x>", 603)
    text, source = prompt_for(landing, [])
    assert text == "# Raise in partition_all when length is invalid\n\nIt gave bad output.\n" and source == "pull_request"


def test_a_merge_prompt_is_its_title_and_the_branchs_messages():
    landing = _landing("merge", "Merge pull request #551 from alice/fix", "Revert the faster isiterable", 551)
    text, _ = prompt_for(landing, ["Revert the faster isiterable", "Add test cases\n\nfor __getitem__ objects", "Merge branch 'master' into fix"])
    assert text == "# Revert the faster isiterable\n\nNotes from the change's commits:\n\n- Add test cases for __getitem__ objects\n"


def test_a_long_commit_note_is_cut_at_a_word_and_says_so():
    """dateutil #1024's prompt ended "…properties that are expected to": a note was cut at 500
    characters mid-sentence, read as the author's words. Now at a word, with an ellipsis."""
    long = "This change makes the parser keep the properties that are expected to " * 10
    landing = _landing("merge", "Merge pull request #7 from a/b", "Keep parser properties", 7)
    text, _ = prompt_for(landing, ["Keep parser properties", long.strip()])
    note = text.split("\n- ", 1)[1].rstrip("\n")
    assert note.endswith(" …") and len(note) <= 500 and long.startswith(note[:-2]) and long[len(note) - 2] == " "


def test_an_issue_text_in_the_message_is_the_prompt():
    landing = _landing("squash", "Fix the parser (#12)", "Issue:\nThe parser crashes on empty input.\nIt should return [].\n\nThe fix checks the length first.", 12)
    text, source = prompt_for(landing, [], "auto")
    assert source == "issue" and text == "# Fix the parser\n\nThe parser crashes on empty input.\nIt should return [].\n"
    assert prompt_for(landing, [], "pull_request")[1] == "pull_request"


def test_changed_files_split_into_tests_code_other_and_noise():
    parts = split(["toolz/itertoolz.py", "toolz/tests/test_itertoolz.py", "CHANGELOG.md", "doc/api.rst", "poetry.lock", "x_test.go", "AUTHORS.rst"], DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS)
    assert parts.tests == ["toolz/tests/test_itertoolz.py", "x_test.go"] and parts.code == ["toolz/itertoolz.py"]
    # a contributor list the PR added its author to (marshmallow #2102) is no part of the fix
    assert parts.other == ["doc/api.rst"] and parts.noise == ["CHANGELOG.md", "poetry.lock", "AUTHORS.rst"] and parts.reference == ["toolz/itertoolz.py", "doc/api.rst"]
    # reno's release notes (tenacity's PRs each add one): no part of the fix, no "other" file in the scan
    assert split(["tenacity/__init__.py", "releasenotes/notes/retry-with-a-b3c0.yaml"], DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS).noise == ["releasenotes/notes/retry-with-a-b3c0.yaml"]


def test_changelogs_are_noise_in_any_case_folder_or_towncrier_fragment_and_code_of_the_same_name_is_not():
    """Python-Markdown's fixes put docs/changelog.md and docs/change_log/release-3.5.md into
    reference.patch: the patterns were uppercase and rooted. towncrier's fragments are
    `<issue or +name>.<type>[.<ext>]` in news/, newsfragments/, changelog.d/ or changes/; a
    package or module of the same name (changes.py, a news/ of modules) is code, and a test's
    data file stays in tests.patch."""
    noise = [
        "docs/changelog.md", "Changelog.rst", "ChangeLog", "Changes", "docs/history.rst", "History.rdoc", "docs/News.md", "pkg/CHANGES.txt",
        "docs/change_log/release-3.5.md", "docs/change_log/index.md", "changelog/1234.bugfix.rst", "docs/Changes/2.0.rst",
        "news/343.feature.md", "news/+a1b2.trivial.rst", "news/12.bugfix.1.md", "newsfragments/123.bugfix.rst", "src/twisted/newsfragments/9876.misc",
        "changelog.d/20240101_120000_alice.md", "changes/123.feature", "Misc/NEWS.d/next/Library/2023-05-01.gh-issue-1.abc.rst",
    ]
    code = [
        "src/pkg/changes.py", "tests/test_news.py", "news/__init__.py", "news/models.py", "news/templates/news/detail.html", "news/feature.py",
        "changes/__init__.py", "commitizen/changelog.py", "src/history.py", "src/changelog/render.py", "features/news.feature", "site/content/news/2023-01-01-launch.md",
    ]
    parts = split(noise + code, DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS)
    assert parts.noise == noise and "tests/test_news.py" in parts.tests
    assert split(["tests/data/history.txt", "tests/fixtures/news.txt"], DEFAULT_TEST_PATTERNS, DEFAULT_NOISE_PATTERNS).tests == ["tests/data/history.txt", "tests/fixtures/news.txt"]


def test_a_gitlab_merge_prompt_loses_its_merge_request_line():
    landing = _landing("merge", "Merge branch 'fix-parser' into 'main'", "Fix the parser on empty input\n\nIt crashed.\n\nSee merge request group/project!42", 42)
    text, _ = prompt_for(landing, [])
    assert text == "# Fix the parser on empty input\n\nIt crashed.\n"


def test_test_file_names_never_reach_the_shell_unquoted(tmp_path):
    """Issue 44 item 4: a test module named `tests/test_m5b;echo INJECTED;.py` ran `echo INJECTED`
    in both validation phases. Every inferred command, run by /bin/sh, passes each name as one
    argument and runs nothing else."""
    import shlex
    import subprocess

    evil = "tests/test_m5b;echo INJECTED;.py"
    unittest_block = b"+import unittest\n+class T(unittest.TestCase): ...\n"
    commands = [
        infer_command({evil: unittest_block}, files(**{"setup.py": "setup()"})).command,
        infer_command({evil: b"+def test_x(): pass\n"}, files(**{"pytest.ini": ""})).command,
        infer_command({"pkg/$(echo INJECTED)/a_test.go": b"+func TestA(t *testing.T) {}\n", "x;echo INJECTED;/b_test.go": b""}, files()).command,
        infer_command({"tests/a;echo INJECTED;b.rs": b""}, files()).command,
        infer_command({"src/a;echo INJECTED;.test.js": b""}, files(**{"package.json": json.dumps({"devDependencies": {"jest": "1"}})})).command,
    ]
    for command in commands:
        words = [w.replace("${BENCHTAPE_REPORTS:-/tmp}", "/tmp") for w in shlex.split(command)]  # the one expansion meant
        shown = subprocess.run(["/bin/sh", "-c", "printf '%s\\n' " + command.split(" ", 1)[1]], capture_output=True, text=True, cwd=tmp_path, env={"PATH": "/usr/bin:/bin"})
        assert shown.stdout.splitlines() == words[1:], command  # every word one argument, nothing else ran
        assert any("INJECTED" in w for w in words), command  # the name is kept whole


def test_a_title_that_opens_with_its_reference_loses_the_separator_too():
    """pluggy's PR #545, "fix #544: Correctly pass StopIteration trough wrappers", gave a prompt
    titled "# : Correctly pass …" (and a note "- : …"): the reference went, its colon stayed."""
    landing = _landing("merge", "Merge pull request #545 from a/fix-544", "fix #544: Correctly pass StopIteration trough wrappers", 545)
    text, _ = prompt_for(landing, ["fix #544: Correctly pass StopIteration trough wrappers\n\nRaising a StopIteration in a generator triggers a RuntimeError.", "Closes #7 - keep the wrapper order"])
    assert text.startswith("# Correctly pass StopIteration trough wrappers\n")
    assert "- Correctly pass StopIteration trough wrappers Raising a StopIteration" in text and "- keep the wrapper order" in text and "#" not in text[1:]
    plain, _ = prompt_for(_landing("squash", "Keep the order (#9)", "This fixes #8: the wrappers ran backwards.", 9), [])
    assert plain.startswith("# Keep the order\n\nThis") and "#8" not in plain and "the wrappers ran backwards." in plain  # mid-sentence: the reference goes


def test_a_closing_reference_takes_its_own_punctuation_and_leaves_no_line_of_it():
    """Python-Markdown's commit "Fix complex scenarios with definition, ordered, and unordered
    lists" with the body "Fixes #918." gave a prompt whose body was "." alone: the reference went,
    its period stayed. A sentence before it keeps its own end."""
    landing = _landing("commit", "Fix complex scenarios with definition, ordered, and unordered lists", "Fixes #918.", None)
    assert prompt_for(landing, []) == ("# Fix complex scenarios with definition, ordered, and unordered lists\n", "commit")
    bodies = {
        "This fixes the parser. Fixes #12.": "This fixes the parser.",
        "Closes #3, #4.": "",
        "Fixes #3; closes #4. The list now nests.": "The list now nests.",
        "Done. Fixes #1. Closes #2. Then more.": "Done. Then more.",
        "The list nests (fixes #7).": "The list nests.",
        "The list nests, see #7.": "The list nests.",
        "Lists nest, fixes #7, and tables too.": "Lists nest, and tables too.",
        "Nested lists.\n\n(Fixes #918)\n\nTables too.": "Nested lists.\n\nTables too.",
        "* nest lists\n* Closes #3.\n- Fixes #4: keep tables": "* nest lists\n- keep tables",
        "1. Fixes #3.\n2. keep tables": "2. keep tables",
        "Fixes #918 \u2014 nested lists": "nested lists",
    }
    for body, kept in bodies.items():
        text, _ = prompt_for(_landing("commit", "Fix lists", body, None), [])
        assert text == "# Fix lists\n" + (f"\n{kept}\n" if kept else ""), (body, text)


def test_a_merge_titled_as_its_pull_request_keeps_the_number():
    """pallets/click merges with the PR's own title, "Add FAQ entry (#3778)", not GitHub's
    "Merge pull request #N from ...": the number is the task's, as a squash's is."""
    from benchtape.tasks.gitlog import landing_of

    titled = landing_of(Commit("a" * 40, ["b" * 40, "c" * 40], 0, "Add FAQ entry about `UnicodeEncodeError` on Windows (#3778)", ""))
    assert (titled.kind, titled.number, titled.base) == ("merge", 3778, "b" * 40)
    prompt, source = prompt_for(titled, [])
    assert source == "pull_request" and prompt.startswith("# Add FAQ entry about `UnicodeEncodeError` on Windows\n") and "3778" not in prompt
    plain = landing_of(Commit("a" * 40, ["b" * 40, "c" * 40], 0, "Merge branch 'stable'", ""))
    assert (plain.kind, plain.number) == ("merge", None)
    github = landing_of(Commit("a" * 40, ["b" * 40, "c" * 40], 0, "Merge pull request #12 from a/b", ""))
    assert (github.number, github.branch) == (12, "a/b")


def test_a_merged_drafts_marker_leaves_the_title():
    """pallets/click #3434 merged as "WIP: Fix `HelpFormatter.write_usage` ...": the task asks
    for the fix, and the branch's commit saying the same is not repeated beneath it."""
    for subject in ("WIP: Fix the usage line (#3434)", "[WIP] Fix the usage line (#3434)", "Draft: Fix the usage line (#3434)"):
        text, _ = prompt_for(_landing("squash", subject, "", 3434), ["Fix the usage line"])
        assert text == "# Fix the usage line\n", (subject, text)
    kept, _ = prompt_for(_landing("squash", "Wipe the cache on exit (#9)", "", 9), [])
    assert kept == "# Wipe the cache on exit\n"


def test_a_branch_commit_ending_with_the_prs_number_loses_it():
    """marshmallow #2102's branch commit ends "... from_timestamp #2102": the number is where
    the answer is, gone from the prompt as a squash's "(#N)" is; one inside a sentence stays, so
    the leak lint still names it."""
    landing = _landing("merge", "Merge pull request #2102 from a/fix", "fix: unhandled OSError", 2102)
    text, _ = prompt_for(landing, ["fix: unhandled OSError and OverflowErrors from utils.from_timestamp #2102", "more cases (#2102)."])
    assert "2102" not in text and "- fix: unhandled OSError and OverflowErrors from utils.from_timestamp\n" in text and "- more cases\n" in text
    said, _ = prompt_for(landing, ["as #2102 says, also #21020 and #210"])
    assert "as #2102 says, also #21020 and #210" in said


def test_a_project_whose_pytest_options_measure_coverage_runs_its_tests_without_it():
    """arrow's tox.ini: `addopts = -v --cov=arrow --cov-fail-under=99 ...`: the changed test
    files alone cover 55%, so every run of them failed with all 225 tests passing and no task
    was valid (0 of 6); `--no-cov` leaves the threshold out, as it does wherever addopts say."""
    block = {"tests/test_locales.py": b"+def test_x(): pass\n"}
    arrow = "[pytest]\naddopts = -v --cov-branch --cov=arrow --cov-fail-under=99 --cov-report=term-missing\ntestpaths = tests\n"
    got = infer_command(block, files(**{"tox.ini": arrow}))
    assert got.command == "python3 -m pytest -q --no-cov tests/test_locales.py" and "--no-cov" in got.note
    continued = "[tool:pytest]\naddopts =\n    --strict-markers\n    --cov src\n"
    assert "--no-cov" in infer_command(block, files(**{"setup.cfg": continued})).command
    listed = '[tool.pytest.ini_options]\naddopts = [\n  "-ra",\n  "--cov=pkg",\n]\n'
    assert "--no-cov" in infer_command(block, files(**{"pyproject.toml": listed})).command
    for plain in ("[pytest]\naddopts = -ra --strict-markers\n", "[pytest]\naddopts = -ra\n[coverage:run]\nsource = --cov-not-an-option\n", "[testenv]\ncommands = pytest --cov\n"):
        assert "--no-cov" not in infer_command(block, files(**{"tox.ini": plain})).command, plain


def test_a_js_runner_configured_to_collect_coverage_runs_without_it():
    """jest's `collectCoverage: true` (package.json or jest.config.*) and vitest's
    `coverage: {enabled: true}` with thresholds fail a run of a few test files as pytest-cov's
    `--cov-fail-under` does: the inferred command turns coverage off; unconfigured, unchanged."""
    jest = {"devDependencies": {"jest": "29"}, "jest": {"collectCoverage": True, "coverageThreshold": {"global": {"lines": 95}}}}
    got = infer_command({"test/a.test.js": b""}, files(**{"package.json": json.dumps(jest)}))
    assert got.command.startswith("npx jest --coverage=false --json ") and "coverage off" in got.note
    configured = files(**{"package.json": json.dumps({"devDependencies": {"jest": "29"}}), "jest.config.js": "module.exports = {\n  collectCoverage: true,\n};\n"})
    assert "--coverage=false" in infer_command({"test/a.test.js": b""}, configured).command
    vitest = files(**{"package.json": json.dumps({"devDependencies": {"vitest": "1"}}), "vitest.config.ts": "export default defineConfig({ test: { coverage: { provider: 'v8', enabled: true, thresholds: { lines: 100 } } } })\n"})
    assert infer_command({"src/a.test.ts": b""}, vitest).command.startswith("npx vitest run --coverage.enabled=false --reporter=default ")
    plain = files(**{"package.json": json.dumps({"devDependencies": {"vitest": "1"}}), "vitest.config.ts": "export default defineConfig({ test: { coverage: { provider: 'v8' } } })\n"})
    assert "coverage" not in infer_command({"src/a.test.ts": b""}, plain).command
    assert "--coverage" not in infer_command({"test/a.test.js": b""}, files(**{"package.json": json.dumps({"devDependencies": {"jest": "29"}})})).command
