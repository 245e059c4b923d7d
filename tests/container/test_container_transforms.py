"""A container session's output transforms run in its grading container, as its code checks
do: the image's python3 (or bun/node), the container's workspace and environment, never
benchtape's process or the host; an image without the runtime is a preflight block."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli import benchtape  # noqa: E402

pytestmark = pytest.mark.docker
ROOT = Path(__file__).resolve().parents[2]


def _bun() -> str | None:
    found = shutil.which("bun")
    ci = ROOT / ".ci" / "tools" / "node_modules" / ".bin" / "bun"
    return found or (str(ci) if ci.exists() else None)


BENCH = """
harness: mock
defaults: {{interactive: false, timeout: 120s{bun}}}
scenarios:
  - name: boxed
    prompt: p
    sandbox: {{level: container{image}}}
    mock: {{steps: [{{say: hi}}]}}
    transform: {scenario}
    checks:
      - {{type: equals, value: "{expect}"}}
      - type: equals
        value: nothing
        transform: {{python: "json.codecs.sys.modules['os'].environ.get('BENCHTAPE_TEST_PLANTED', 'nothing')"}}
"""

WHERE_PY = "{python: \"json.codecs.sys.modules['os'].getcwd() + ':' + output\"}"
WHERE_JS = "\"process.cwd() + ':' + (typeof Bun === 'undefined' ? 'node' : 'bun') + ':' + output\""


def _run(tmp_path: Path, text: str) -> dict:
    (tmp_path / "bench.yaml").write_text(text)
    db = tmp_path / "c.db"
    out = benchtape("run", tmp_path / "bench.yaml", "--db", db, "--report-json", tmp_path / "r.json", env={"BENCHTAPE_TEST_PLANTED": "leaked"})
    assert out.returncode == 0, out.stdout + out.stderr
    graded = benchtape("grade", "--all", "--db", db, env={"BENCHTAPE_TEST_PLANTED": "leaked"})  # in a fresh grading container
    assert graded.returncode == 0 and "DIVERGED" not in graded.stdout, graded.stdout + graded.stderr
    return json.loads((tmp_path / "r.json").read_text())["results"][0]


def test_a_python_transform_runs_in_the_grading_container(tmp_path, base_image):
    result = _run(tmp_path, BENCH.format(bun="", image="", scenario=WHERE_PY, expect="/workspace:hi"))
    assert [c["result"]["pass"] for c in result["checks"]] == [True, True], result["checks"]  # the container's cwd, not benchtape's env


@pytest.fixture(scope="module")
def image_with_bun(docker_client, base_image):
    """The base image with bun: a user's image with a JavaScript runtime."""
    bun = _bun()
    if bun is None:
        pytest.skip("bun is not installed (.ci/run installs it with npm)")
    tag = "benchtape-test-bun:1"
    with tempfile.TemporaryDirectory() as context:
        shutil.copy(Path(bun).resolve(), Path(context) / "bun")
        (Path(context) / "Dockerfile").write_text(f"FROM {base_image['tag']}\nCOPY bun /usr/local/bin/bun\n")
        docker_client.images.build(path=context, tag=tag, pull=False, rm=True, network_mode="none")
    yield tag
    docker_client.images.remove(tag, force=True)


def test_a_javascript_transform_runs_in_the_grading_container(tmp_path, image_with_bun):
    result = _run(tmp_path, BENCH.format(bun=", bun: latest", image=f", image: '{image_with_bun}'", scenario=WHERE_JS, expect="/workspace:bun:hi"))
    assert [c["result"]["pass"] for c in result["checks"]] == [True, True], result["checks"]


def test_preflight_blocks_a_javascript_transform_whose_image_has_no_runtime(tmp_path, base_image):
    (tmp_path / "bench.yaml").write_text(BENCH.format(bun="", image="", scenario="output.trim()", expect="hi"))
    out = benchtape("preflight", tmp_path / "bench.yaml")
    assert out.returncode == 3, out.stdout + out.stderr
    assert f"scenario 'boxed': its JavaScript transform runs with node, which the image {base_image['tag']} does not have: give the scenario an image with node" in out.stderr
