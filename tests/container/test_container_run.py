"""`sandbox: container` end to end: the mock agent runs inside a container and fixes a red
test; the exec checks grade inside another container; network none and ro shares hold."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli import DEMO, benchtape  # noqa: E402

pytestmark = pytest.mark.docker

BENCH = """
harness: mock
defaults: {interactive: false, timeout: 120s}
scenarios:
  - name: in-a-box
    prompt: fix add()
    testdata: calc
    sandbox:
      level: container
      share:
        paths: [{from: shared, to: /data, access: ro}]
    mock:
      steps:
        - {tool: Edit, input: {file_path: calc.py, old_string: "return a - b", new_string: "return a + b"}}
        - {tool: Bash, input: {command: "python3 -m unittest -q"}}
        - {tool: Bash, input: {command: "echo nope > /data/x.txt"}}
        - {tool: Bash, input: {command: "test ! -e /work && test -d /workspace && echo inside"}}
        - {say: fixed}
    checks:
      - {type: exec, args: {cmd: [python3, -m, unittest, -q]}}
      - type: exec
        args:
          cmd: [python3, -c, "import socket,sys\\nfor host in ('127.0.0.1','10.255.255.1'):\\n  s=socket.socket(); s.settimeout(1)\\n  try:\\n    s.connect((host, 9)); sys.exit(1)\\n  except OSError: pass\\nprint('no network')"]
      - {type: exec, args: {cmd: [sh, -c, "test ! -e /data"]}}
"""


def test_container_scenario_fixes_and_grades_inside(tmp_path, base_image):
    shutil.copytree(DEMO.parent / "calc", tmp_path / "calc")
    (tmp_path / "shared").mkdir()
    (tmp_path / "shared" / "keep.txt").write_text("read only\n")
    (tmp_path / "bench.yaml").write_text(BENCH)
    out = benchtape("run", tmp_path / "bench.yaml", "--db", tmp_path / "c.db", "--report-json", tmp_path / "r.json")
    assert out.returncode == 0, out.stdout + out.stderr
    r = json.loads((tmp_path / "r.json").read_text())["results"][0]
    assert r["status"] == "pass"
    by_cmd = [c["result"] for c in r["checks"]]
    assert "no network" in by_cmd[1]["evidence"].get("output_tail", by_cmd[1]["reason"])
    bash = [c for c in r["session"]["calls"] if c["tool"] == "Bash"]
    assert bash[0]["outcome"] == "ok"  # the agent's own test run inside the container
    assert bash[1]["outcome"] == "error" and "Read-only" in bash[1]["output"]  # the ro share held
    assert bash[2]["outcome"] == "ok" and "inside" in bash[2]["output"]
    assert (tmp_path / "shared" / "keep.txt").read_text() == "read only\n"
    assert not (tmp_path / "shared" / "x.txt").exists()
    assert (tmp_path / "calc" / "calc.py").read_text().count("a - b") == 1  # testdata untouched


def test_grade_and_regrade_run_container_exec_checks_in_a_container(tmp_path, base_image):
    """A check that can only pass inside a container (no /work/main on the host side is
    visible there) reproduces under `grade` and `regrade`: they did not run it on the host."""
    shutil.copytree(DEMO.parent / "calc", tmp_path / "calc")
    (tmp_path / "bench.yaml").write_text(
        "harness: mock\ndefaults: {interactive: false}\nscenarios:\n  - name: boxed\n    prompt: p\n    testdata: calc\n"
        "    sandbox: {level: container}\n    mock: {steps: [{say: hi}]}\n"
        "    checks:\n      - {type: exec, args: {cmd: [sh, -c, 'test -d /workspace && test ! -e /work']}}\n"
    )
    db = tmp_path / "c.db"
    run = benchtape("run", tmp_path / "bench.yaml", "--db", db)
    assert run.returncode == 0, run.stdout + run.stderr
    graded = benchtape("grade", "--all", "--db", db)
    assert graded.returncode == 0 and "DIVERGED" not in graded.stdout, graded.stdout + graded.stderr
    regraded = benchtape("regrade", "--bench", tmp_path / "bench.yaml", "--all", "--db", db)
    assert regraded.returncode == 0, regraded.stdout + regraded.stderr
    import re

    assert re.search(r"boxed\s+1\s+1\s+0\s+0", regraded.stdout), regraded.stdout  # sessions pass fail error


def test_preflight_blocks_an_image_that_is_not_here(tmp_path, base_image):
    (tmp_path / "b.yaml").write_text("harness: mock\nscenarios:\n  - {name: a, prompt: p, sandbox: {level: container, image: 'benchtape-no-such-image:1'}}\n")
    out = benchtape("preflight", tmp_path / "b.yaml")
    assert out.returncode == 3 and "never pulls" in out.stderr


PYTHON_EVERYWHERE = """
harness: mock
defaults: {{interactive: false, timeout: 120s}}
scenarios:
  - name: py-{level}
    prompt: p
    testdata: calc
    sandbox: {{level: {level}}}
    mock: {{steps: [{{tool: Write, input: {{file_path: answer.txt, content: "42"}}}}, {{say: "the answer is 42"}}]}}
    checks:
      - type: python
        value: |
          def evaluate(output, context):
              return "42" in output and open("answer.txt").read() == "42"
      - type: python
        value: file://grader.py
"""


@pytest.mark.parametrize("level", ["workspace", "home", "container"])
def test_a_python_check_passes_at_every_level(tmp_path, base_image, level):
    """Code checks take their interpreter from where grading runs: inside a container that is
    the image's python3, never the host's sys.executable (which does not exist in there)."""
    shutil.copytree(DEMO.parent / "calc", tmp_path / "calc")
    (tmp_path / "grader.py").write_text("def evaluate(output, context):\n    return {'pass': output.endswith('42'), 'score': 1.0, 'reason': 'file grader'}\n")
    (tmp_path / "bench.yaml").write_text(PYTHON_EVERYWHERE.format(level=level))
    db = tmp_path / "c.db"
    pre = benchtape("preflight", tmp_path / "bench.yaml")
    assert pre.returncode == 0, pre.stdout + pre.stderr
    run = benchtape("run", tmp_path / "bench.yaml", "--db", db, "--report-json", tmp_path / "r.json")
    assert run.returncode == 0, run.stdout + run.stderr
    checks = json.loads((tmp_path / "r.json").read_text())["results"][0]["checks"]
    assert [c["result"]["pass"] for c in checks] == [True, True], checks
    graded = benchtape("grade", "--all", "--db", db)
    assert graded.returncode == 0 and "DIVERGED" not in graded.stdout, graded.stdout + graded.stderr


@pytest.fixture(scope="module")
def image_without_python(docker_client):
    """A local image with a shell and nothing else: what a user's image may be."""
    import tempfile

    from benchtape.sandbox.baseimage import RootFS, _ldd, _which

    fs = RootFS()
    for tool in ("sh", "ls", "cat", "sleep"):
        fs.add(_which(tool))
    for lib in _ldd(fs.elf_files()):
        fs.add(lib)
    tag = "benchtape-test-nopython:1"
    with tempfile.TemporaryFile() as tmp:
        fs.write_tar(tmp)
        tmp.seek(0)
        docker_client.api.import_image(src=tmp, repository="benchtape-test-nopython", tag="1", changes=['CMD ["sleep", "infinity"]'])
    yield tag
    docker_client.images.remove(tag, force=True)


def test_preflight_names_a_python_check_whose_image_has_no_python(tmp_path, base_image, image_without_python):
    (tmp_path / "b.yaml").write_text(
        "harness: mock\nscenarios:\n"
        f"  - name: a\n    prompt: p\n    sandbox: {{level: container, image: '{image_without_python}'}}\n"
        "    checks:\n      - {type: python, value: \"def evaluate(o, c):\\n    return True\"}\n"
        "  - name: b\n    prompt: p\n    sandbox: {level: container}\n"
        "    checks:\n      - {type: python, value: \"def evaluate(o, c):\\n    return True\"}\n"
    )
    out = benchtape("preflight", tmp_path / "b.yaml")
    assert out.returncode == 3
    assert f"python checks run with python3, which the image {image_without_python} does not have" in out.stderr
    assert "scenario 'b'" not in out.stderr  # benchtape's base image has one
