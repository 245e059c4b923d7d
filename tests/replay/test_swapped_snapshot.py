"""A swapped report-folder tar is refused, not graded (issue 15): restore checks the sha256
recorded with the session."""

from __future__ import annotations

from replaykit import cli, write_bench

from benchtape.sandbox.snapshot import snapshot

REPORTED = """
description: a workspace check graded again from a report folder
harness: mock
defaults: {sandbox: home, timeout: 30s}
scenarios:
  - name: writes
    prompt: "write ok.txt"
    mock:
      steps:
        - tool: Write
          input: {file_path: ok.txt, content: "ok"}
    checks:
      - type: exec
        args: {cmd: [test, -f, ok.txt]}
"""


def test_a_swapped_report_folder_tar_is_not_graded(tmp_path):
    bench = write_bench(tmp_path / "bench", REPORTED)
    folder = tmp_path / "reports"
    assert cli("run", bench, "--db", tmp_path / "r.db", "--report-dir", folder).code == 0
    [report] = folder.glob("*.json")
    [tar] = (folder / report.stem / "snapshots").glob("*.tar")
    empty = tmp_path / "empty"
    empty.mkdir()
    tar.write_bytes(snapshot(empty)[0])  # a valid tar of another tree, under the recorded name
    for f in tmp_path.glob("r.db*"):
        f.unlink()  # the report folder is the only input (with its database, grade would use the store)
    out = cli("grade", report)
    assert "do not match the sha256 recorded" in out.stdout, out.stdout
    assert "REPRODUCED" not in out.stdout and "DIVERGED " not in out.stdout
