"""Secret detection: known values in every form, credential shapes nobody declared, JSON kept valid."""

from __future__ import annotations

import base64
import json
import urllib.parse

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from secretkit import (
    AWS_KEY_ID,
    AWS_SECRET,
    DEPLOY_KEY,
    GITHUB_TOKEN,
    JWT,
    OPENAI_KEY,
    SLACK_TOKEN,
    STRIPE_KEY,
)

from benchtape.core.redact import REDACTED, forms, redact_argv, redact_params, redactor, secret_params, secret_values, shapes_only

SHAPED = {
    "aws key id": AWS_KEY_ID,
    "github": GITHUB_TOKEN,
    "github fine-grained": "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFGHIJ",
    "gitlab": "glpat-Xy7Qm2Zp9Rt4Lk8Wn3Vb",
    "slack": SLACK_TOKEN,
    "slack webhook": "https://hooks.slack.com/services/T0000AAAA/B0000BBBB/XXXXXXXXXXXXXXXXXXXXXXXX",
    "stripe": STRIPE_KEY,
    "openai": OPENAI_KEY,
    "anthropic": "sk-ant-api03-Qw8Er7Ty6Ui5Op4As3Df2Gh1JkLz",
    "google": "AIzaSyD3x8Qm2Zp9Rt4Lk8Wn3Vb7Cq1Ej5Hu6Io",
    "npm": "npm_Ab3De6Gh9Jk2Mn5Pq8St1Vw4Yz7Bc0Ef3Hi6",
    "huggingface": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789",
    "jwt": JWT,
}


@pytest.mark.parametrize("kind", sorted(SHAPED))
def test_a_credential_shape_is_redacted_without_being_declared_and_json_stays_valid(kind):
    line = json.dumps({"output": f"here: {SHAPED[kind]} (done)", "n": 1})
    out = shapes_only()(line)
    assert SHAPED[kind] not in out and REDACTED in out
    assert json.loads(out)["output"].startswith("here: ") and json.loads(out)["output"].endswith(" (done)")


def test_contextual_shapes_keep_their_context():
    red = shapes_only()
    assert red(f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}") == "AWS_SECRET_ACCESS_KEY=[REDACTED]"
    assert red(json.dumps({"aws_secret_access_key": AWS_SECRET})) == '{"aws_secret_access_key": "[REDACTED]"}'
    assert red("git clone https://bob:hunter2hunter@example.com/r.git") == "git clone https://bob:[REDACTED]@example.com/r.git"
    assert red("Authorization: Bearer abcdefghijklmnop1234") == "Authorization: Bearer [REDACTED]"
    assert red("Authorization: Basic dXNlcjpwYXNzd29yZA==") == "Authorization: Basic [REDACTED]"
    pem = json.dumps({"k": DEPLOY_KEY + "\ntrailing text"})
    assert json.loads(red(pem))["k"] == "[REDACTED]\ntrailing text"
    cut = json.dumps({"k": "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\"and more"})
    assert json.loads(red(cut))["k"] == '[REDACTED]"and more'


def test_ordinary_text_and_code_are_left_alone():
    text = (
        "def check_disk-space(): basic implementation of the internationalization sk-learn "
        "token counting bearer of news AWS region us-east-1 aws s3 ls eyJhbGci ghp_short "
        "https://example.com/path?x=1 user@example.com sk_live_short key: value"
    )
    assert shapes_only()(text) == text


def test_a_known_value_is_redacted_in_every_form_it_is_printed_in():
    secret = "s3cr3t-Passphrase/With+Odd=Chars"
    red = redactor([secret])
    raw = secret.encode()
    forms = [
        secret,
        json.dumps(secret)[1:-1],
        base64.b64encode(raw).decode(),
        base64.urlsafe_b64encode(raw).decode().rstrip("="),
        base64.b64encode(b"user:" + raw).decode(),  # inside a longer base64 text (basic auth)
        base64.b64encode(b"xy:" + raw + b":z").decode(),
        urllib.parse.quote(secret, safe=""),
        urllib.parse.quote_plus(secret),
        raw.hex(),
    ]
    for form in forms:
        out = red(f"printed: {form} end")
        assert REDACTED in out, form
        assert secret not in out and (form not in out), form


def test_which_values_are_secrets():
    env = {"GITHUB_TOKEN": GITHUB_TOKEN, "AWS_SECRET_ACCESS_KEY": AWS_SECRET, "DEPLOY_KEY": "x" * 20, "DB_PASSWORD": "hunter22hunter", "SORT_KEY": "name", "PATH": "/usr/bin", "NOTE": f"uses {STRIPE_KEY}", "MINE": "opaque-value-1"}
    assert set(secret_values(env, ["MINE"])) == {GITHUB_TOKEN, AWS_SECRET, "x" * 20, "hunter22hunter", f"uses {STRIPE_KEY}", "opaque-value-1"}
    assert secret_params({"stripe": STRIPE_KEY, "api_key": "plain-looking-key", "name": "demo", "n": 3}) == [STRIPE_KEY, "plain-looking-key"]


def test_argv_and_params_are_stored_without_their_secrets():
    red = redactor([])
    argv = ["run", "b.yaml", "--param", f"stripe={STRIPE_KEY}", "--param", "api_key=opaque123456", "--param", "name=demo"]
    assert redact_argv(argv, red) == ["run", "b.yaml", "--param", "stripe=[REDACTED]", "--param", "api_key=[REDACTED]", "--param", "name=demo"]
    assert redact_params({"stripe": STRIPE_KEY, "api_key": "opaque123456", "name": "demo", "n": 3}, red) == {"stripe": REDACTED, "api_key": REDACTED, "name": "demo", "n": 3}


def test_real_transcripts_have_nothing_shaped_like_a_credential():
    """No false positives on what agents really print: every line of the real transcripts
    passes through the shapes unchanged."""

    from realdatakit import find_realdata

    realdata = find_realdata()
    if realdata is None:
        pytest.skip("REAL TRANSCRIPTS NOT FOUND (BENCHTAPE_REALDATA)")
    lines = [line for f in sorted(realdata.rglob("*.jsonl")) for line in f.read_text(errors="replace").splitlines()]
    red = shapes_only()
    assert len(lines) > 500 and [line[:200] for line in lines if red(line) != line] == []


# Pieces a text is built from to test the RE2 probe: every shape, its context, near misses, and
# what makes bytes differ from characters (Unicode spaces, multi-byte letters, a lone surrogate).
_PIECES = [
    *SHAPED.values(), AWS_SECRET, DEPLOY_KEY, "-----BEGIN RSA PRIVATE KEY-----", "AWS_SECRET_ACCESS_KEY=", "aws_key: ", "AwS-Secret\u00a0",
    "Authorization: Bearer ", "bearer\u2003", "Authorization:\u00a0Basic\u2002", "dXNlcjpwYXNzd29yZA==", "://bob:", "://", "hunter2hunter", "@",
    "sk-", "task-", "sk-ant-", "k_live_", "r", "s", "eyJ", "abcdefghij0123456789", ".", "\n", "\\n", " ", "\"", "é", "İ", "€", "\U0001f600", "\ud800",
    "s3cr3t-Passphrase/With+Odd=Chars", "czNjcjN0LVBhc3NwaHJhc2UvV2l0aCtPZGQ9Q2hhcnM", "pässwörd-ü€😀x", "p\\u00e4ssw\\u00f6rd", "ghp_", "AKIA", "0123456789ABCDEF", "npm_", "hf_", "xoxb-",
]


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=6)), max_size=12))
def test_the_probe_never_lets_through_what_the_patterns_redact(pieces):
    """A text the RE2 probe passes unscanned is one every exact pattern leaves as it is: the fast
    path returns exactly what the slow one does, for shapes and for known values alike."""
    text = "".join(pieces)
    for red in (shapes_only(), redactor(["s3cr3t-Passphrase/With+Odd=Chars", "hunter2hunter", "pässwörd-ü€😀x"])):
        assert red(text) == red.exact(text)


def test_the_probe_agrees_with_the_patterns_on_every_context_and_separator():
    """Every context a shape keys on, every separator (ASCII and Unicode spaces, which are one
    char but several bytes), every tail: the probe's verdict never differs from the patterns'."""
    heads = ["", "x", "_", "-", "é", "AWS_SECRET_ACCESS_KEY", "aws key", "Authorization: Bearer", "bearer", "Authorization: Basic", "Authorization:", "https://bob", "sk", "task", "eyJhbGciOiJIUzI1NiIs", "\ud800"]
    seps = ["", " ", "=", ":", "\t", "\n", "\\n", "\u00a0", "\u2003", "\u3000", "\x0b", "\x1c", ": \u00a0", "é", "-", "\ud800", "\U0001f600"]
    tails = [AWS_SECRET, "abcdefghijklmnop1234", "dXNlcjpwYXNzd29yZA==", "hunter2hunter@example.com", "-ant-api03-Qw8Er7Ty6Ui5Op4As3Df2Gh1JkLz", ".eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "Basic dXNlcjpwYXNzd29yZA==", "s3cr3t-Passphrase/With+Odd=Chars"]
    red = redactor(["s3cr3t-Passphrase/With+Odd=Chars"])
    for head in heads:
        for sep in seps:
            for tail in tails:
                text = head + sep + tail
                assert red(text) == red.exact(text), text


def test_the_probe_flags_every_shape_and_known_form():
    """Each credential (and each form of a known value) alone is found by the probe, not only by
    the exact patterns behind it."""
    red = redactor(["s3cr3t-Passphrase/With+Odd=Chars"])
    for text in [*SHAPED.values(), f"AWS_SECRET_ACCESS_KEY={AWS_SECRET}", "Authorization: Bearer abcdefghijklmnop1234", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "https://bob:hunter2hunter@example.com", DEPLOY_KEY, *forms("s3cr3t-Passphrase/With+Odd=Chars")]:
        assert red._probe.search(text.encode("utf-8", "surrogatepass")) is not None, text
