"""Pinned binaries: found per version, installed only with consent, never half-installed, versions named.

npm itself is stood in for by a small program on PATH (the real install is `make agents`,
which needs the registry); it writes what `npm install --prefix` writes: node_modules/.bin/<bin>.
"""

from __future__ import annotations

import pytest
from npmkit import fake_npm

from benchtape.core.errors import BadInput, ExitCode
from benchtape.tools import binaries
from benchtape.tools.binaries import VERIFIED, Unresolvable, binary_path, identify, latest_version, resolve


@pytest.fixture
def npm(tmp_path, monkeypatch):
    return fake_npm(tmp_path, monkeypatch)


def test_not_installed_without_consent_names_the_folder_and_the_command(tmp_path):
    with pytest.raises(BadInput) as err:
        resolve("claude-code", root=tmp_path)
    assert str(binary_path("claude-code", "2.1.328", tmp_path)) in err.value.what
    assert "make agents" in err.value.fix
    assert not (tmp_path / "claude-code").exists()


def test_install_with_consent_into_the_version_folder(tmp_path, npm):
    binary = resolve("claude-code", root=tmp_path, install=True)
    assert binary.path == tmp_path / "claude-code" / "2.1.328" / "node_modules" / ".bin" / "claude"
    assert binary.verified and binary.note is None
    assert sorted(p.name for p in (tmp_path / "claude-code").iterdir()) == ["2.1.328"]  # no scratch left
    assert resolve("claude-code", root=tmp_path).path == binary.path  # found again, no install


def test_a_failed_install_leaves_nothing_half_written(tmp_path, npm, monkeypatch):
    monkeypatch.setenv("NPM_FAILS", "1")
    with pytest.raises(BadInput) as err:
        resolve("codex", "0.999.0", root=tmp_path, install=True)
    assert "404" in err.value.what and "npm view @openai/codex versions" in err.value.fix
    assert not (tmp_path / "codex").exists()  # not even the tool's folder, made for the install


def test_another_version_than_verified_resolves_and_is_named(tmp_path, npm):
    binary = resolve("claude-code", "2.1.330", root=tmp_path, install=True)
    assert not binary.verified
    assert "2.1.330" in binary.note and VERIFIED["claude-code"].version in binary.note


def test_a_binary_reporting_another_version_than_its_folder_is_refused(tmp_path, npm):
    path = resolve("claude-code", root=tmp_path, install=True).path
    path.write_text("#!/bin/sh\necho '2.0.1 (Claude Code)'\n")
    with pytest.raises(BadInput) as err:
        resolve("claude-code", root=tmp_path)
    assert "reports version 2.0.1, not 2.1.328" in err.value.what
    assert identify("claude-code", path).version == "2.0.1" and not identify("claude-code", path).verified


def test_no_npm_and_an_unknown_tool_are_bad_input(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(BadInput) as err:
        resolve("codex", root=tmp_path, install=True)
    assert "npm is not on PATH" in err.value.what and "apt-get install nodejs npm" in err.value.fix
    with pytest.raises(BadInput) as err:
        resolve("gemini", root=tmp_path)
    assert "claude-code, codex" in err.value.fix


def test_the_env_var_moves_the_tools_folder(tmp_path, npm, monkeypatch):
    monkeypatch.setenv("BENCHTAPE_TOOLS", str(tmp_path / "elsewhere"))
    assert resolve("codex", install=True).path.is_relative_to(tmp_path / "elsewhere" / "codex" / "0.169.0")


def test_latest_is_what_npm_says_today_asked_once(tmp_path, npm):
    assert latest_version("claude-code") == "2.1.999"
    assert latest_version("claude-code") == "2.1.999"
    assert (tmp_path / "npm.log").read_text().splitlines() == ["view @anthropic-ai/claude-code version"]
    assert binaries.resolve_version("codex", "latest") == "0.999.0" and binaries.resolve_version("codex", "0.169.0") == "0.169.0"
    assert binaries.installed("codex", "0.999.0") is None  # resolving installs nothing


def test_latest_without_a_registry_stops_before_anything_runs(tmp_path, npm, monkeypatch):
    monkeypatch.setenv("NPM_FAILS", "1")
    with pytest.raises(Unresolvable) as err:
        latest_version("codex")
    assert err.value.exit_code == ExitCode.BLOCKED
    text = err.value.render()
    assert "ENOTFOUND" in text and 'tool_version: "0.169.0"' in text and "nothing ran" in text


def test_an_npm_packages_version_is_read_from_its_package_json_never_by_starting_it(tmp_path):
    """`--version` starts the whole agent for some CLIs (Gemini CLI: ~2 s of CPU, twice a run):
    a `node_modules/.bin` link into a package says its version in the package's package.json."""
    import json

    modules = tmp_path / "node_modules"
    package = modules / "@acme" / "agent"
    (package / "dist").mkdir(parents=True)
    (package / "package.json").write_text(json.dumps({"name": "@acme/agent", "version": "1.2.3", "bin": {"agent": "dist/cli.js"}}))
    (package / "dist" / "package.json").write_text('{"type": "module"}')  # a nested manifest with no bin is passed over
    started = tmp_path / "started"
    script = package / "dist" / "cli.js"
    script.write_text(f"#!/bin/sh\ntouch {started}\necho 9.9.9\n")
    script.chmod(0o755)
    (modules / ".bin").mkdir()
    (modules / ".bin" / "agent").symlink_to("../@acme/agent/dist/cli.js")
    assert binaries.reported_version(modules / ".bin" / "agent") == "1.2.3" and not started.exists()
    (modules / ".bin" / "copied").write_bytes(script.read_bytes())  # no link into a package: asked
    (modules / ".bin" / "copied").chmod(0o755)
    assert binaries.reported_version(modules / ".bin" / "copied") == "9.9.9" and started.exists()
