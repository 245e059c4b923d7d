"""Planted secrets of several kinds, one `benchtape run` that handles all of them, and a grep of
every artefact it leaves: the database file bytes (and its -wal), the report JSON, JUnit, the
report folder (its JSON and every snapshot tar, unpacked), the HTML report, `show` and
`query` output, and the run's own stdout/stderr. Shared by the test and `make bench`."""

from __future__ import annotations

import base64
import io
import os
import subprocess
import sys
import tarfile
import textwrap
import urllib.parse
from pathlib import Path

# Fake credentials in the shapes real ones have (none of them is valid anywhere).
AWS_KEY_ID = "AKIAQ3EGRT5X7ZLM2N4P"
AWS_SECRET = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq8Hd2Lk9T"
GITHUB_TOKEN = "ghp_R8dK2mXq7LpT4vNz9WcB3yHs6JfA1uEo5GiQ"  # the host's: the agent never has it
STRIPE_KEY = "sk_live_51HxQm2eZvKYlo2C9aT3sRq8W"  # passed as --param
OPENAI_KEY = "sk-proj-Tq3XbN8vLm2KcR7wYh5JdP9sF4gZ1aE6uV0oI"  # a check's value
DEPLOY_KEY = (
    "-----BEGIN OPENSSH PRIVATE KEY-----\n"
    "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\n"
    "QyNTUxOQAAACDq1Xx9mQ7v2Lr8Kp3NwZt5Yb0Hc6Ja4Fs1Gd2Ue7TgAAAAJgQ2tHt0Nrb\n"
    "-----END OPENSSH PRIVATE KEY-----"
)
JWT = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"
SLACK_TOKEN = "xoxb-2913846271-5830192837465-Qm8RtY2uVb6NcX4zLp9KwJ3d"  # printed by the agent, known to nobody

PLANTED = {
    "aws key id": AWS_KEY_ID,
    "aws secret": AWS_SECRET,
    "github token": GITHUB_TOKEN,
    "stripe key (--param)": STRIPE_KEY,
    "openai key (check value)": OPENAI_KEY,
    "private key block": DEPLOY_KEY.splitlines()[1],  # its body: a line of it is enough to leak it
    "jwt": JWT,
    "slack token": SLACK_TOKEN,
}


def encodings() -> dict[str, str]:
    """Encoded forms of known values the agent prints: they leak the value just as well."""
    return {
        "aws secret, base64": base64.b64encode(AWS_SECRET.encode()).decode(),
        "aws secret, url-encoded": urllib.parse.quote(AWS_SECRET, safe=""),
        "aws key id, base64": base64.b64encode(AWS_KEY_ID.encode()).decode().rstrip("="),
    }


def bench_text(leak_out: Path) -> str:
    return textwrap.dedent(
        f"""\
        harness: mock
        params: {{stripe: none}}
        scenarios:
          - name: secrets-everywhere
            prompt: "use the payment key {{{{stripe}}}}"
            sandbox:
              level: home
              share: {{env: [AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY], secret_env: [DEPLOY_KEY]}}
            mock:
              steps:
                - tool: Bash
                  input: {{command: "env | grep -E '^(AWS|DEPLOY)' ; echo {SLACK_TOKEN} {JWT}"}}
                - tool: Bash
                  input: {{command: "printf %s \\"$AWS_SECRET_ACCESS_KEY\\" | base64; printf %s \\"$AWS_ACCESS_KEY_ID\\" | base64; python3 -c 'import os, urllib.parse; print(urllib.parse.quote(os.environ[\\"AWS_SECRET_ACCESS_KEY\\"], safe=\\"\\"))'"}}
                - tool: Bash
                  input: {{command: "printf 'AWS_SECRET_ACCESS_KEY=%s\\\\n' \\"$AWS_SECRET_ACCESS_KEY\\" > .env; printf '%s\\\\n' \\"$DEPLOY_KEY\\" > id_ed25519; printf %s \\"$AWS_ACCESS_KEY_ID\\" | base64 > key.b64; echo {{{{stripe}}}} > payment.txt"}}
                - tool: Write
                  input:
                    file_path: leak.py
                    content: |
                      import os
                      dump = "\\n".join(f"{{k}}={{v}}" for k, v in sorted(os.environ.items()))
                      open({str(leak_out)!r}, "w").write(dump)
                      print(dump)
                - say: "done; the payment key is {{{{stripe}}}}"
            checks:
              - type: exec
                args: {{cmd: [python3, leak.py]}}
              - type: contains
                value: {OPENAI_KEY}
              - type: exec
                args: {{cmd: [sh, -c, 'cat .env id_ed25519 payment.txt; exit 1']}}
        """
    )


def host_env(tmp: Path) -> dict[str, str]:
    return {
        **os.environ,
        "NO_COLOR": "1",
        "COLUMNS": "240",
        "TMPDIR": str(tmp),
        "AWS_ACCESS_KEY_ID": AWS_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": AWS_SECRET,
        "GITHUB_TOKEN": GITHUB_TOKEN,
        "DEPLOY_KEY": DEPLOY_KEY,
    }


def benchtape(env: dict[str, str], *args: object, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "benchtape", *map(str, args)], env=env, cwd=cwd, capture_output=True, text=True, timeout=300)


def artefacts(base: Path) -> dict[str, bytes]:
    """Run the planted bench and collect every artefact it leaves, by name."""
    base.mkdir(parents=True, exist_ok=True)
    (base / "tmp").mkdir(exist_ok=True)
    leak_out = base / "leaked-env.txt"
    bench = base / "bench.yaml"
    bench.write_text(bench_text(leak_out))
    env = host_env(base / "tmp")
    db = base / "bt.db"
    out: dict[str, bytes] = {}
    ran = benchtape(env, "run", bench, "--db", db, "--plain", "--param", f"stripe={STRIPE_KEY}", "--report-json", base / "report.json", "--report-junit", base / "junit.xml", "--report-dir", base / "reports", cwd=base)
    out["run stdout+stderr"] = (ran.stdout + ran.stderr).encode()
    for f in sorted(base.glob("bt.db*")):
        out[f"database file {f.name}"] = f.read_bytes()
    if db.exists():  # raw lines are stored compressed: read them back as text too
        from benchtape.store.database import Store

        store = Store(db, readonly=True)
        try:
            for row in store.session_rows():
                out[f"raw lines of {row.id[:8]}"] = "\n".join(store.raw_lines(row.id)).encode()
        finally:
            store.close()
    for name in ("report.json", "junit.xml"):
        if (base / name).exists():
            out[name] = (base / name).read_bytes()
    for f in sorted((base / "reports").rglob("*")) if (base / "reports").exists() else []:
        if f.is_file():
            out[f"report dir {f.relative_to(base)}"] = f.read_bytes()
            if f.suffix == ".tar":
                with tarfile.open(fileobj=io.BytesIO(f.read_bytes())) as tar:
                    for m in tar.getmembers():
                        if m.isreg():
                            out[f"report dir tar {f.name}:{m.name}"] = tar.extractfile(m).read()
    if leak_out.exists():
        out["what agent-written code saw when a check ran it"] = leak_out.read_bytes()
    sessions = benchtape(env, "query", "session.id", "--db", db, cwd=base)
    out["query output"] = (sessions.stdout + sessions.stderr).encode()
    out["query actions output"] = benchtape(env, "query", "actions", "--db", db, cwd=base).stdout.encode()
    import json

    for line in sessions.stdout.splitlines():
        sid = json.loads(line)["result"]
        out[f"show {sid[:8]}"] = benchtape(env, "show", sid, "--db", db, "--plain", cwd=base).stdout.encode()
        out[f"show --json {sid[:8]}"] = benchtape(env, "show", sid, "--json", "--db", db, cwd=base).stdout.encode()
        runs = benchtape(env, "query", "session.run_id", "--db", db, cwd=base).stdout
    for line in runs.splitlines()[:1]:
        run_id = json.loads(line)["result"]
        benchtape(env, "report", run_id, "--html", base / "report.html", "--db", db, cwd=base)
        if (base / "report.html").exists():
            out["report.html"] = (base / "report.html").read_bytes()
    return out


def leaks(found: dict[str, bytes]) -> list[tuple[str, str]]:
    """(artefact, secret) for every planted secret, or encoded form, found in clear."""
    needles = {**PLANTED, **encodings()}
    return [(where, what) for where, data in found.items() for what, value in needles.items() if value.encode() in data]
