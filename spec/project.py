"""The project layer (berbench §1.3, §1.4, §4.1): `kind: Project` and `kind: UserConfig`.

A project is a git checkout with a `.benchtape/` folder (or berbench's `.ber/bench/`, read
beside it). Its `config.yaml` (`kind: Project`) says where the code came from (`source:`,
which the leak lint needs: the prompt must not name it), how tasks are harvested (which
changed files are tests, which are noise), the project image's Dockerfile, and the defaults
of every evaluation. The user's `~/.config/benchtape/config.yaml` (`kind: UserConfig`) holds
defaults the project overrides and credential hints (the NAME of a variable or a file,
never a secret).

Both are optional: a project without a config file gets the defaults below.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchtape.spec.documents import HEADER_KEYS, DocLoader, load_document
from benchtape.spec.overlays import PROJECT_LAYOUTS, project_config_dirs, user_config_dirs
from benchtape.spec.run_settings import RunSettings, load_run_settings
from benchtape.spec.yamlsrc import LineDict

CONFIG_FILE = "config.yaml"
DEFAULT_DOCKERFILES = ("Dockerfile.benchtape", "Dockerfile.berbench")
WHEELHOUSE_DIR = "wheelhouse"  # .benchtape/wheelhouse/*.whl: test dependencies for an image-less project, offline
# Changed files that are tests (→ tests.patch); `harvest.test_patterns` replaces them.
DEFAULT_TEST_PATTERNS = (
    "tests/**", "test/**", "**/tests/**", "**/test/**", "**/__tests__/**", "testing/**",
    "**/test_*.py", "**/*_test.py", "**/tests.py", "**/conftest.py", "**/*_test.go", "**/*.test.*", "**/*.spec.*", "**/*.test-d.ts",  # tests.py: a Django app's, markupsafe's; *.test-d.ts: tsd's type tests
    "spec/**/*_spec.rb",
    "test.js", "test.mjs", "test.cjs", "test.ts", "test.mts", "test.cts",  # one test file beside the code (ava's convention: sindresorhus's packages)
)


def _any_case(glob: str) -> str:
    """`glob` with each letter matching either case. tasks/classify's globs are case-sensitive
    (a test pattern such as `**/__tests__/**` means that spelling), so only the changelog
    patterns below that need it say so: Python-Markdown's `docs/changelog.md` is a changelog as
    much as `CHANGELOG.md` is."""
    return "".join(f"[{c.lower()}{c.upper()}]" if c.isalpha() else c for c in glob)


# A changelog's name in any case, in any folder: with no extension or a documentation one only,
# because a lowercase name is also code's (commitizen's changelog.py, a news app's news.py) and a
# test's data file (`tests/data/history.txt`, which noise would take out of tests.patch).
_NOTES_NAMES = ("changelog", "changes", "history", "news")
_NOTES_SUFFIXES = ("", ".md", ".markdown", ".rst", ".adoc", ".rdoc")
# Folders of release notes (Python-Markdown's docs/change_log/release-3.5.md, pytest's
# changelog/1234.bugfix.rst): their documents, not a package's modules of the same name.
_NOTES_FOLDERS = ("change_log", "changelog", "changes")
_NOTES_EXTENSIONS = ("md", "markdown", "rst", "txt", "adoc")
# towncrier's news fragments, `<issue or +name>.<type>[.<ext>]` (pip's news/343.feature.md). news/
# and changes/ are also names of packages and of a site's articles, so there only that shape
# counts; newsfragments/, changelog.d/ and CPython's NEWS.d/ hold nothing else.
_FRAGMENT_FOLDERS = ("news", "changes")
_FRAGMENT_TYPES = (
    "feature", "bugfix", "doc", "removal", "misc", "breaking", "deprecation",
    "added", "changed", "fixed", "removed", "security", "trivial", "vendor", "improvement",
)


def _changelog_patterns() -> tuple[str, ...]:
    """The globs of changelogs and release notes beyond the literal ones (see the comments above)."""
    names = [_any_case(f"**/{n}{s}") for n in _NOTES_NAMES for s in _NOTES_SUFFIXES]
    folders = [_any_case(f"**/{d}/**/*.{e}") for d in _NOTES_FOLDERS for e in _NOTES_EXTENSIONS]
    whole = [_any_case(f"**/{d}/**") for d in ("changelog.d", "newsfragments", "news.d")]
    fragments = [f"**/{d}/*.{t}{x}" for d in _FRAGMENT_FOLDERS for t in _FRAGMENT_TYPES for x in ("", ".*")]
    return (*names, *folders, *whole, *fragments)


# Changed files dropped from both patches: lock files, generated files, changelogs, the list of
# contributors a PR adds its author to (marshmallow's AUTHORS.rst: no prompt asks for it); reno's
# releasenotes/notes/*.yaml (OpenStack's tool; tenacity's PRs each add one). An uppercase
# changelog name takes any extension (no module is named CHANGES.py); the rest are
# _changelog_patterns().
DEFAULT_NOISE_PATTERNS = (
    "CHANGELOG*", "CHANGES*", "HISTORY*", "NEWS*", "**/CHANGELOG*", "release-notes/**", "releasenotes/**",
    "AUTHORS*", "CONTRIBUTORS*", ".mailmap",
    "docs/release*", "doc/release*", "docs/whatsnew/**", "docs/changes*",
    "*.lock", "**/*.lock", "package-lock.json", "**/package-lock.json", "pnpm-lock.yaml", "yarn.lock", "go.sum", "Cargo.lock", "poetry.lock", "uv.lock", "Pipfile.lock",
    "**/*.min.js", "**/*.min.css", "**/*.map", "**/*_pb2.py", "**/*.pb.go", "**/generated/**", "**/__snapshots__/**",
    *_changelog_patterns(),
)
PROMPT_SOURCES = ("issue", "pull_request", "auto")
PROVIDERS = ("github", "gitlab")

PROJECT_KEYS = HEADER_KEYS | {"defaults", "source", "dockerfile", "results", "harvest", "agent", "runs", "env"}
USER_KEYS = HEADER_KEYS | {"defaults", "agent", "credentials"}
DEFAULTS_KEYS = {"attempts", "concurrency", "cell_timeout", "resources"}
RESOURCES_KEYS = {"cpus", "memory", "pids"}
SOURCE_KEYS = {"provider", "host", "owner", "repo", "remote"}
HARVEST_KEYS = {"prompt_source", "test_patterns", "noise_patterns"}
AGENT_KEYS = {"allow_hosts"}
CREDENTIAL_KEYS = {"env", "file"}
ENV_KEYS = {"build", "python", "extras", "groups", "requirements", "install", "overrides", "exclude", "setup", "variables", "package", "tools", "resolve"}
RESOLVE = ("commit", "today")  # `env.resolve`: a Python project's packages as published at the task's commit (envs/recipe.resolution_date), or today's


@dataclass(frozen=True)
class Source:
    provider: str | None = None
    host: str | None = None
    owner: str | None = None
    repo: str | None = None
    remote: str | None = None

    @property
    def full_name(self) -> str | None:
        return f"{self.owner}/{self.repo}" if self.owner and self.repo else None

    def pull_request_url(self, number: int) -> str | None:
        """The PR's URL on its forge, when the project names one."""
        if not self.full_name:
            return None
        host = self.host or {"github": "github.com", "gitlab": "gitlab.com"}.get(self.provider or "github", "github.com")
        path = "-/merge_requests" if self.provider == "gitlab" else "pull"
        return f"https://{host}/{self.full_name}/{path}/{number}"


@dataclass(frozen=True)
class Defaults:
    attempts: int | None = None
    concurrency: int | None = None
    cell_timeout: float | None = None
    resources: dict[str, Any] = field(default_factory=dict)

    def under(self, weaker: Defaults) -> Defaults:
        """These defaults, each unset one taken from `weaker` (the project wins over the user)."""
        return Defaults(
            self.attempts if self.attempts is not None else weaker.attempts,
            self.concurrency if self.concurrency is not None else weaker.concurrency,
            self.cell_timeout if self.cell_timeout is not None else weaker.cell_timeout,
            {**weaker.resources, **self.resources},
        )


@dataclass(frozen=True)
class EnvConfig:
    """`env:`: what a project's test environment needs beyond what benchtape detects (envs/).

    Every key is optional; what is named here is added to (never replaces) what the tree
    declares. `setup` runs in the verifier after the patches, before `verify.setup`, on every
    task (humanize's `bash scripts/generate-translation-binaries.sh`). It is all part of the
    environment's recipe, so changing it makes the project's tasks stale."""

    build: bool = True  # false: no environment, the verifier runs the host's tools as they are
    python: str | None = None  # the interpreter to build with (`3.12`, or a path)
    extras: tuple[str, ...] = ()
    groups: tuple[str, ...] = ()
    requirements: tuple[str, ...] = ()  # requirements files, relative to the repository root
    install: tuple[str, ...] = ()  # more requirement specifiers (`pytest-xdist`, `numpy<2`)
    overrides: tuple[str, ...] = ()  # specifiers installed in place of what the project pins (uv's --override): `pytest==7.4.0` over a requirements file's pytest==3.0.7
    # distributions a dev group or tool list declares that are left out (`mypy`, `black`: a linter
    # whose old pin cannot build here, which no test needs); what requirements files and extras
    # name is installed as declared
    exclude: tuple[str, ...] = ()
    setup: tuple[str, ...] = ()
    variables: tuple[tuple[str, str], ...] = ()  # set at build time and when the verifier runs
    package: str | None = None  # the import name of the package under test, when detection misses it
    tools: tuple[str, ...] = ()  # host programs `setup` needs (msgfmt): mounted into a container with their libraries
    resolve: str = "commit"  # RESOLVE

    def bound(self) -> dict[str, Any]:
        bound = {
            "build": self.build, "python": self.python, "extras": list(self.extras), "groups": list(self.groups),
            "requirements": list(self.requirements), "install": list(self.install), "setup": list(self.setup),
            "variables": dict(self.variables), "package": self.package, "tools": list(self.tools),
        }
        if self.resolve != "commit":  # only then: the tasks of every other config keep their fingerprints
            bound["resolve"] = self.resolve
        if self.overrides:  # the same
            bound["overrides"] = list(self.overrides)
        if self.exclude:  # the same
            bound["exclude"] = list(self.exclude)
        return bound


@dataclass(frozen=True)
class Project:
    """A project's `kind: Project` (its defaults when it has no config file)."""

    root: Path
    path: Path | None = None  # the config file, when there is one
    source: Source = Source()
    defaults: Defaults = Defaults()
    dockerfile: Path | None = None  # the project image's Dockerfile, when one is named or present
    results: Path | None = None
    prompt_source: str = "auto"
    test_patterns: tuple[str, ...] = DEFAULT_TEST_PATTERNS
    noise_patterns: tuple[str, ...] = DEFAULT_NOISE_PATTERNS
    allow_hosts: tuple[str, ...] = ()
    runs: RunSettings = RunSettings()  # where an evaluation's cells run (`runs:`), under the evaluation's own
    env: EnvConfig = EnvConfig()  # the test environment's declared needs (`env:`; envs/)

    @property
    def config_dir(self) -> Path:
        """Where benchtape writes: `.benchtape/` (even when the config came from `.ber/bench/`)."""
        return self.root / PROJECT_LAYOUTS[0]

    def wheelhouse(self) -> Path | None:
        """`.benchtape/wheelhouse/` (or `.ber/bench/wheelhouse/`) when it holds wheels."""
        for folder in reversed(project_config_dirs(self.root)):
            wheels = folder / WHEELHOUSE_DIR
            if wheels.is_dir() and any(wheels.glob("*.whl")):
                return wheels
        return None

    def task_recipe(self, base_commit: str) -> str:
        """What a history task's verifier runs in, as one string its fingerprint binds: the
        project image's recipe and the environment's (its dependency declarations at the base
        commit and `env:`; spec/project_tree.py). A changed dependency makes the task stale."""
        from benchtape.spec.project_tree import environment_recipe_at

        return f"{self.image_recipe()}+env:{environment_recipe_at(self.root, base_commit, self.env.bound())}"

    def image_recipe(self) -> str:
        """What the project image is made from, as one hash: the Dockerfile's text, or (with
        none) benchtape's base image plus the wheelhouse's wheels by name and content. It is
        a bound input of every task's fingerprint: a changed image makes every task stale."""
        h = hashlib.sha256()
        if self.dockerfile is not None and self.dockerfile.is_file():
            h.update(b"dockerfile\0" + self.dockerfile.read_bytes())
        else:
            h.update(b"base\0")
            wheels = self.wheelhouse()
            for wheel in sorted(wheels.glob("*.whl")) if wheels else []:
                h.update(wheel.name.encode() + b"\0" + hashlib.sha256(wheel.read_bytes()).digest())
        return h.hexdigest()


@dataclass(frozen=True)
class UserConfig:
    path: Path | None = None
    defaults: Defaults = Defaults()
    allow_hosts: tuple[str, ...] = ()
    credentials: dict[str, dict[str, str]] = field(default_factory=dict)  # tool → {env: NAME, file: PATH} (hints)


def find_config(root: Path) -> Path | None:
    """The project's config.yaml: `.benchtape/`'s, else `.ber/bench/`'s."""
    for folder in reversed(project_config_dirs(root)):
        if (folder / CONFIG_FILE).is_file():
            return folder / CONFIG_FILE
    return None


def load_project(root: Path) -> Project:
    """The project at `root` (its config file read strictly; defaults when it has none)."""
    root = root.resolve()
    path = find_config(root)
    if path is None:
        return Project(root=root, dockerfile=_default_dockerfile(root))
    ld, doc, _ = load_document(path, ("Project",))
    top = ld.strict(doc, PROJECT_KEYS, "the Project", extra_hint={"tasks": "tasks live in .benchtape/tasks/<id>/, not in config.yaml"})
    harvest = ld.strict(ld.mapping(top.get("harvest"), "`harvest:`", top, "harvest"), HARVEST_KEYS, "`harvest:`")
    prompt_source = str(harvest.get("prompt_source", "auto"))
    if prompt_source == "pr_description":  # berbench G1/G2 spelling
        prompt_source = "pull_request"
    ld.choose(prompt_source, list(PROMPT_SOURCES), "prompt_source", harvest, "prompt_source")
    agent = ld.strict(ld.mapping(top.get("agent"), "`agent:`", top, "agent"), AGENT_KEYS, "`agent:`")
    return Project(
        root=root,
        path=path,
        source=_source(ld, top),
        defaults=_defaults(ld, top),
        dockerfile=_dockerfile(ld, top, root),
        results=_results(ld, top, root),
        prompt_source=prompt_source,
        test_patterns=tuple(ld.strings(harvest, "test_patterns", "`harvest.test_patterns`")) if "test_patterns" in harvest else DEFAULT_TEST_PATTERNS,
        noise_patterns=tuple(ld.strings(harvest, "noise_patterns", "`harvest.noise_patterns`")) if "noise_patterns" in harvest else DEFAULT_NOISE_PATTERNS,
        allow_hosts=_allow_hosts(ld, agent),
        runs=load_run_settings(ld, top),
        env=_env(ld, top),
    )


def defaults_for(root: Path, user: Path | None = None) -> Defaults:
    """The `defaults:` an evaluation of the project at `root` runs with where it says nothing
    itself: the project's config over the user's (berbench's `defaults.attempts`,
    `concurrency`, `cell_timeout`)."""
    return load_project(root).defaults.under(load_user_config(user).defaults)


def load_user_config(user: Path | None = None) -> UserConfig:
    """`~/.config/benchtape/config.yaml` (or berbench's `~/.config/ber/bench/config.yaml`)."""
    path = next((d / CONFIG_FILE for d in reversed(user_config_dirs(user)) if (d / CONFIG_FILE).is_file()), None)
    if path is None:
        return UserConfig()
    ld, doc, _ = load_document(path, ("UserConfig",))
    top = ld.strict(doc, USER_KEYS, "the UserConfig", extra_hint={"source": "`source:` is a project's (.benchtape/config.yaml)"})
    agent = ld.strict(ld.mapping(top.get("agent"), "`agent:`", top, "agent"), AGENT_KEYS, "`agent:`")
    creds: dict[str, dict[str, str]] = {}
    node = ld.mapping(top.get("credentials"), "`credentials:`", top, "credentials")
    for tool, hint in node.items():
        spec = ld.strict(ld.mapping(hint, f"`credentials.{tool}`", node, str(tool)), CREDENTIAL_KEYS, f"`credentials.{tool}`", extra_hint={"value": "a credential's value never goes in a config file: name the variable (`env:`) or the file (`file:`) holding it"})
        creds[str(tool)] = {k: str(v) for k, v in spec.items()}
    return UserConfig(path=path, defaults=_defaults(ld, top), allow_hosts=_allow_hosts(ld, agent), credentials=creds)


def _allow_hosts(ld: DocLoader, agent: LineDict) -> tuple[str, ...]:
    """`agent.allow_hosts`, a forge host refused (berbench: "forge hosts always rejected"): an
    agent that can reach the forge can read the very pull request a task was mined from."""
    from benchtape.spec.prompt_leaks import FORGE_HOSTS

    hosts = ld.strings(agent, "allow_hosts", "`agent.allow_hosts`")
    for host in hosts:
        name = host.strip().lower().rstrip(".")
        forge = next((f for f in FORGE_HOSTS if name == f or name.endswith("." + f)), None)
        if forge is not None:
            raise ld.err(f"`agent.allow_hosts` names {host!r}, a forge ({forge}): an agent that reaches it can read the pull request a task was mined from", agent, "allow_hosts", f"remove {host!r}; a forge is never an agent's host")
    return tuple(hosts)


def _source(ld: DocLoader, top: LineDict) -> Source:
    node = ld.strict(ld.mapping(top.get("source"), "`source:`", top, "source"), SOURCE_KEYS, "`source:`")
    provider = node.get("provider")
    if provider is not None:
        ld.choose(str(provider), list(PROVIDERS), "provider", node, "provider")
    values = {k: (str(node[k]) if node.get(k) is not None else None) for k in SOURCE_KEYS}
    return Source(**values)


MAX_ATTEMPTS = 1000  # a task's attempts (`defaults.attempts`, an Evaluation's `attempts:`): far past what any comparison reads, and each is a cell planned in memory


def _defaults(ld: DocLoader, top: LineDict) -> Defaults:
    node = ld.strict(ld.mapping(top.get("defaults"), "`defaults:`", top, "defaults"), DEFAULTS_KEYS, "`defaults:`")
    ints = {}
    for key in ("attempts", "concurrency"):
        value = node.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
            raise ld.err(f"`defaults.{key}` must be a whole number of at least 1, got {value!r}", node, key)
        if key == "attempts" and value is not None and value > MAX_ATTEMPTS:
            raise ld.err(f"`defaults.attempts: {value:,}` is more than the {MAX_ATTEMPTS:,} a task may have: every attempt is a cell planned (and run)", node, key, "a few attempts per task measure a setup; add tasks for more power")
        ints[key] = value
    resources = ld.strict(ld.mapping(node.get("resources"), "`defaults.resources`", node, "resources"), RESOURCES_KEYS, "`defaults.resources`")
    return Defaults(ints["attempts"], ints["concurrency"], ld.duration(node.get("cell_timeout"), node, "cell_timeout", None), {k: resources[k] for k in resources})


def _env(ld: DocLoader, top: LineDict) -> EnvConfig:
    node = ld.strict(ld.mapping(top.get("env"), "`env:`", top, "env"), ENV_KEYS, "`env:`")
    build = node.get("build", True)
    if not isinstance(build, bool):
        raise ld.err(f"`env.build` must be true or false, got {build!r}", node, "build")
    variables = ld.mapping(node.get("variables"), "`env.variables`", node, "variables")
    for name, value in variables.items():
        if not isinstance(value, (str, int, float)) or isinstance(value, bool):
            raise ld.err(f"`env.variables.{name}` must be a string, got {value!r}", variables, str(name))
    for key in ("python", "package"):
        if node.get(key) is not None and not isinstance(node.get(key), (str, float)):
            raise ld.err(f"`env.{key}` must be a string, got {node.get(key)!r}", node, key)
    for req in ld.strings(node, "requirements", "`env.requirements`") if "requirements" in node else []:
        if req.startswith("/") or ".." in Path(req).parts:
            raise ld.err(f"`env.requirements` names {req!r}, outside the repository", node, "requirements", "name a requirements file by its path inside the repository")

    def strings(key: str) -> tuple[str, ...]:
        return tuple(ld.strings(node, key, f"`env.{key}`")) if key in node else ()

    return EnvConfig(
        build=build,
        python=str(node["python"]) if node.get("python") is not None else None,
        extras=strings("extras"),
        groups=strings("groups"),
        requirements=strings("requirements"),
        install=strings("install"),
        overrides=strings("overrides"),
        exclude=strings("exclude"),
        setup=strings("setup"),
        variables=tuple((str(k), str(v)) for k, v in variables.items()),
        package=str(node["package"]) if node.get("package") is not None else None,
        tools=strings("tools"),
        resolve=ld.choose(str(node["resolve"]), list(RESOLVE), "`env.resolve`", node, "resolve") if "resolve" in node else "commit",
    )


def _default_dockerfile(root: Path) -> Path | None:
    return next((root / name for name in DEFAULT_DOCKERFILES if (root / name).is_file()), None)


def _dockerfile(ld: DocLoader, top: LineDict, root: Path) -> Path | None:
    value = top.get("dockerfile")
    if value is None:
        return _default_dockerfile(root)
    if not isinstance(value, str) or not value.strip():
        raise ld.err("`dockerfile:` must be a path relative to the repository root", top, "dockerfile", "e.g. `dockerfile: Dockerfile.benchtape`")
    path = Path(value) if Path(value).is_absolute() else root / value
    if not path.is_file():
        raise ld.err(f"`dockerfile: {value}` does not exist (resolved against the repository root: {path})", top, "dockerfile", "write it (see docs/tasks.md, \"The project image\"), or drop the key to use benchtape's base image")
    return path


def _results(ld: DocLoader, top: LineDict, root: Path) -> Path | None:
    value = top.get("results")
    if value is None:
        return None
    text = str(value)
    if not (text.startswith("/") or text.startswith("~/")):
        raise ld.err(f"`results: {text}` must be absolute or start with ~/", top, "results", "results live outside the repository, e.g. `results: ~/benchtape-results/myrepo`")
    path = Path(text).expanduser().resolve()
    if path == root or root in path.parents:
        raise ld.err(f"`results: {text}` lies inside the repository", top, "results", "results are never committed: name a folder outside the repository")
    return path
