"""Planted secrets of several kinds, and every artefact a run leaves grepped for them (and for
their base64 and URL-encoded forms)."""

from __future__ import annotations

import json

import pytest
from secretkit import AWS_KEY_ID, AWS_SECRET, GITHUB_TOKEN, artefacts, leaks


@pytest.fixture(scope="module")
def found(tmp_path_factory: pytest.TempPathFactory) -> dict[str, bytes]:
    """One run of the planted bench, every artefact it left."""
    return artefacts(tmp_path_factory.mktemp("secrets"))


def test_no_planted_secret_reaches_any_artefact_in_clear(found):
    """Before: 65 (artefact, secret) pairs in clear across 16 artefacts: AWS keys in actions, raw,
    reports, HTML and show/query; the --param key in runs.argv and params; the check value in
    verdicts.spec; base64/URL forms; the agent's .env and key file in the snapshot and the
    report folder's tar."""
    assert leaks(found) == []
    # the run really produced what is grepped, and redacted rather than dropped it
    names = set(found)
    for expected in ("report.json", "junit.xml", "report.html", "query actions output"):
        assert expected in names, sorted(names)
    assert any(n.startswith("report dir tar ") and n.endswith(":.env") for n in names), sorted(names)
    assert any(n.startswith("raw lines of ") for n in names) and any(n.startswith("show ") for n in names)
    assert b"[REDACTED]" in found["report.json"] and b"[REDACTED]" in found["query actions output"]
    snapshot = next(a for a in json.loads(found["query actions output"].decode().splitlines()[0])["result"] if a["kind"] == "workspace.snapshot" and "stage" not in a["data"])  # the final one
    assert set(snapshot["data"]["redacted"]) >= {".env", "id_ed25519", "key.b64", "payment.txt"}
    env_tar = next(v for n, v in found.items() if n.endswith(":.env"))
    assert env_tar == b"AWS_SECRET_ACCESS_KEY=[REDACTED]\n"


def test_agent_written_code_run_by_a_check_never_sees_the_host_secrets(found):
    """An exec check runs leak.py, written by the agent: it gets the scrubbed grading
    environment, without the host's GITHUB_TOKEN or AWS keys (which the agent never had either)."""
    seen = found["what agent-written code saw when a check ran it"].decode()
    names = {line.split("=", 1)[0] for line in seen.splitlines() if "=" in line}
    assert {"BENCHTAPE", "MADBENCH", "PATH"} <= names
    assert not names & {"GITHUB_TOKEN", "AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "DEPLOY_KEY"}
    for value in (GITHUB_TOKEN, AWS_KEY_ID, AWS_SECRET):
        assert value not in seen
