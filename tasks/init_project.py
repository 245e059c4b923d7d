"""`benchtape init --tasks`: a project config (`kind: Project`) for the repository here.

The remote names the forge and `owner/repo` (what the leak lint keeps out of prompts); the
harvest keys are written commented out with their defaults, so what a scan counts as tests
and noise is visible and editable. A `.benchtape/.gitignore` keeps the results (the store,
validation logs, agent binaries) out of the history, while tasks and config are committed.
Never overwrites an existing file.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path

from benchtape.core.errors import BadInput
from benchtape.spec.documents import API_VERSION
from benchtape.spec.project import CONFIG_FILE, DEFAULT_NOISE_PATTERNS, DEFAULT_TEST_PATTERNS, find_config
from benchtape.spec.task import TASKS_DIR
from benchtape.tasks.gitlog import remote_url, repo_root


@dataclass
class Initialised:
    root: Path
    config: Path
    written: bool
    remote: str | None
    owner_repo: str | None


def parse_remote(url: str | None) -> dict[str, str]:
    """provider/host/owner/repo from a forge remote (ssh or https); {} for a local path."""
    if not url:
        return {}
    m = re.match(r"^(?:[a-z+]+://(?:[^@/]+@)?([^/:]+)(?::\d+)?/|[^@\s]+@([^:\s]+):)([^\s]+?)/([^/\s]+?)(?:\.git)?/?$", url.strip())
    if not m:
        return {}
    host = m.group(1) or m.group(2)
    provider = "gitlab" if "gitlab" in host else "github" if "github" in host else None
    out = {"host": host, "owner": m.group(3), "repo": m.group(4), "remote": url.strip()}
    if provider:
        out["provider"] = provider
    return out


def declared_source(root: Path) -> dict[str, str]:
    """provider/host/owner/repo as the project's own manifest declares them, for a clone whose
    remote is a local path (a mirror): package.json's `repository` (`owner/repo`, `github:owner/repo`,
    or `{url}`: jshttp/cookie's said `jshttp/cookie` and the leak lint knew only the mirror's path),
    pyproject's `[project.urls]` or poetry's `repository`/`homepage`/`urls`, setup.cfg's `url`. {} when none names a forge."""
    import configparser
    import tomllib

    import orjson

    urls: list[str] = []
    try:
        repository = orjson.loads((root / "package.json").read_bytes()).get("repository")
    except (OSError, orjson.JSONDecodeError, AttributeError):
        repository = None
    if isinstance(repository, dict):
        repository = repository.get("url")
    if isinstance(repository, str):
        short = re.fullmatch(r"(?:(github|gitlab):)?([\w.-]+)/([\w.-]+)", repository.strip())
        urls.append(f"https://{short.group(1) or 'github'}.com/{short.group(2)}/{short.group(3)}" if short else re.sub(r"^git\+", "", repository.strip()))
    try:
        pyproject = tomllib.loads((root / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        pyproject = {}
    project_urls = (pyproject.get("project") or {}).get("urls", {}) if isinstance(pyproject.get("project"), dict) else {}
    urls += [str(u) for u in (project_urls.values() if isinstance(project_urls, dict) else [])]
    # poetry's own table (litl/backoff: `[tool.poetry] repository = "https://github.com/litl/backoff"`)
    poetry = (pyproject.get("tool") or {}).get("poetry") if isinstance(pyproject.get("tool"), dict) else None
    if isinstance(poetry, dict):
        urls += [str(poetry[k]) for k in ("repository", "homepage") if isinstance(poetry.get(k), str)]
        urls += [str(u) for u in (poetry.get("urls") or {}).values()] if isinstance(poetry.get("urls"), dict) else []
    cfg = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        cfg.read(root / "setup.cfg", encoding="utf-8")
        urls.append(cfg.get("metadata", "url", fallback=""))
    except (configparser.Error, UnicodeDecodeError):
        pass
    for url in urls:
        found = parse_remote(re.sub(r"(github\.com|gitlab\.com)/([^/]+)/([^/#?]+).*$", r"\1/\2/\3", url))
        if found.get("provider"):
            found.pop("remote", None)
            return found
    return {}


def init_tasks(cwd: Path) -> Initialised:
    root = repo_root(cwd)
    existing = find_config(root)
    remote = remote_url(root)
    source = parse_remote(remote)
    declared = {} if source else declared_source(root)
    source = source or declared
    owner_repo = f"{source['owner']}/{source['repo']}" if source.get("owner") else None
    if existing is not None:
        return Initialised(root, existing, False, remote, owner_repo)
    path = root / ".benchtape" / CONFIG_FILE
    lines = [f"apiVersion: {API_VERSION}", "kind: Project", "# Where the code came from: the leak lint keeps these out of every task's prompt."]
    if declared:
        lines.append("# (as the project's manifest declares it" + (f"; its remote is {remote}" if remote else "") + ")")
    if source:
        lines.append("source:")
        lines += [f"  {k}: {source[k]}" for k in ("provider", "host", "owner", "repo", "remote") if k in source]
    else:
        lines += ["# source: {provider: github, host: github.com, owner: OWNER, repo: REPO}" + (f"   # remote: {remote}" if remote else "")]
    lines += [
        "# dockerfile: Dockerfile.benchtape   # the project image (docs/tasks.md); without one: benchtape's base image + .benchtape/wheelhouse/",
        "harvest:",
        "  prompt_source: auto",
        "  # test_patterns (replace the defaults): " + ", ".join(DEFAULT_TEST_PATTERNS[:6]) + ", …",
        "  # noise_patterns (dropped from both patches): " + ", ".join(DEFAULT_NOISE_PATTERNS[:5]) + ", …",
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    (path.parent / TASKS_DIR).mkdir(exist_ok=True)
    ignore = path.parent / ".gitignore"
    if not ignore.exists():  # tasks and config are committed; results never are
        # the pinned binaries share tools/ with the project's Tool overlays (tools/NAME.yaml), which are committed
        ignore.write_text("# results stay out of the history: the store, validation logs, pinned agent binaries\nbenchtape.db*\nvalidate/\ntools/*\n!tools/*.yaml\n!tools/*.yml\n")
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    except FileExistsError:
        return Initialised(root, path, False, remote, owner_repo)
    except OSError as exc:
        raise BadInput(f"cannot write the project config: {exc.strerror or exc}", file=str(path)) from None
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return Initialised(root, path, True, remote, owner_repo)
