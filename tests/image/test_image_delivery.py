"""`image:` on a scenario, as a madbench user writes it, delivered to the agent so
`session:image-sent` can pass: the mock (no keys), the real Claude Code in print mode and the
real Codex against the scripted model (whose request log must carry the picture's bytes),
refusals at preflight where a harness cannot take it, and bad pictures as bad input."""

from __future__ import annotations

import base64
import json
import struct
import subprocess
import sys
import textwrap
import uuid
import zlib
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from cli import benchtape  # noqa: E402
from realagents import base_env, need  # noqa: E402

from benchtape.adapters.base import Launch, get_adapter  # noqa: E402
from benchtape.core.errors import BadInput  # noqa: E402
from benchtape.models.server import serve  # noqa: E402
from benchtape.spec.bench import load_bench  # noqa: E402


def png(width: int = 2, height: int = 2) -> bytes:
    """A real (tiny, red) PNG: what a user's screenshot is, byte for byte in format."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")


def write(tmp: Path, text: str, name: str = "bench.yaml") -> Path:
    path = tmp / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return path


BENCH = """
    description: the agent is shown a screenshot
    harness: {harness}
    scenarios:
      - name: describe-the-picture
        prompt: "What colour is this picture?"
        image: shot.png
        interactive: false
        checks:
          - type: session:image-sent
          - {{type: "session:image-sent", value: 2}}
"""


def _report(path: Path) -> dict:
    return json.loads(path.read_text())["results"][0]


def test_the_mock_is_sent_the_image_and_the_check_passes(tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    bench = write(tmp_path, BENCH.format(harness="mock"))
    out = benchtape("run", bench, "--db", tmp_path / "s.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    result = _report(tmp_path / "r.json")
    verdicts = [c["status"] for c in result["checks"]]
    assert verdicts == ["PASS", "FAIL"], out.stdout + out.stderr  # one image was sent, not two
    users = [a for a in result["session"]["actions"] if a["kind"] == "message.user"]
    sent = users[0]["data"]["attachments"]
    assert [(a["media_type"], a["name"], a["bytes"]) for a in sent] == [("image/png", "shot.png", len(png()))]
    assert not [a for a in result["session"]["actions"] if a["kind"] == "error"]


def test_a_scenario_without_an_image_fails_the_check(tmp_path):
    bench = write(
        tmp_path,
        """
        description: no picture
        harness: mock
        scenarios:
          - name: words-only
            prompt: "hello"
            interactive: false
            checks: [{type: "session:image-sent"}]
        """,
    )
    benchtape("run", bench, "--db", tmp_path / "s.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    assert [c["status"] for c in _report(tmp_path / "r.json")["checks"]] == ["FAIL"]


@pytest.mark.parametrize(
    ("setup", "value", "said"),
    [
        (lambda t: None, "missing.png", "does not exist"),
        (lambda t: (t / "pics").mkdir(), "pics", "is not a file"),
        (lambda t: (t / "notes.png").write_text("not a picture"), "notes.png", "is not a PNG, JPEG, GIF or WebP"),
        (lambda t: (t / "huge.png").write_bytes(png() + b"\0" * (5 * 1024 * 1024)), "huge.png", "over the 5242880 bytes"),
    ],
)
def test_a_bad_picture_is_bad_input_naming_file_line_and_fix(tmp_path, setup, value, said):
    setup(tmp_path)
    bench = write(tmp_path, BENCH.format(harness="mock").replace("shot.png", value))
    with pytest.raises(BadInput) as err:
        load_bench(bench)
    assert said in err.value.what and err.value.line == 6 and str(err.value.file) == str(bench) and "PNG, JPEG, GIF or WebP" in (err.value.fix or "")


def test_a_picture_outside_the_benchs_folder_is_never_sent(tmp_path):
    """A bench from elsewhere naming this host's files (a path, or a link in its folder that
    points out) would hand them to a third-party model: refused at load, naming file, line
    and the fix; a folder the bench allows by name (`x-benchtape-allow-outside:`) is sent."""
    private, bench_dir = tmp_path / "private", tmp_path / "bench"
    private.mkdir(), bench_dir.mkdir()
    (private / "photo.png").write_bytes(png())
    (bench_dir / "linked.png").symlink_to(private / "photo.png")
    for value in (str(private / "photo.png"), "linked.png", "../private/photo.png"):
        bench = write(bench_dir, BENCH.format(harness="mock").replace("shot.png", value))
        with pytest.raises(BadInput) as err:
            load_bench(bench)
        assert "outside the bench's folder" in err.value.what and err.value.line == 6 and "x-benchtape-allow-outside" in (err.value.fix or ""), value
    out = benchtape("run", bench, "--db", tmp_path / "s.db", cwd=bench_dir)
    assert out.returncode == 2 and "outside the bench's folder" in out.stderr and not (tmp_path / "s.db").exists()
    allowed = write(bench_dir, f"x-benchtape-allow-outside: [{private}]\n" + textwrap.dedent(BENCH.format(harness="mock")).lstrip().replace("shot.png", "linked.png"))
    assert load_bench(allowed).scenarios[0].image == (bench_dir / "linked.png",)


def test_a_file_that_is_no_picture_is_never_echoed(tmp_path):
    (tmp_path / "shot.png").write_text("root:x:0:0:root:/root:/bin/bash\n")
    with pytest.raises(BadInput) as err:
        load_bench(write(tmp_path, BENCH.format(harness="mock")))
    assert "is not a PNG" in err.value.what and "root:x" not in err.value.render()


def test_a_bad_picture_stops_run_with_exit_2_and_nothing_written(tmp_path):
    (tmp_path / "shot.png").write_text("not a picture")
    bench = write(tmp_path, BENCH.format(harness="mock"))
    out = benchtape("run", bench, "--db", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 2 and "is not a PNG, JPEG, GIF or WebP" in out.stderr and "bench.yaml:6" in out.stderr, out.stderr
    assert not (tmp_path / "s.db").exists()


def test_images_plural_and_a_non_path_are_load_errors(tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    with pytest.raises(BadInput, match="the key is `image:`"):
        load_bench(write(tmp_path, BENCH.format(harness="mock").replace("image:", "images:")))
    with pytest.raises(BadInput, match="must be a path or a list of paths"):
        load_bench(write(tmp_path, BENCH.format(harness="mock").replace("image: shot.png", "image: {path: shot.png}")))


def test_refused_at_preflight_where_the_picture_cannot_reach_the_model(tmp_path):
    """Before any spend: the terminal UI in a container (it is given a host path), a generated
    picture with no program to write it, codex in a container (it is given a host path)."""
    (tmp_path / "shot.png").write_bytes(png())
    scripted = "\n    harness_config: {model: scripted}"
    cases = [
        (BENCH.format(harness="claude-code" + scripted).replace("interactive: false", "sandbox: container"), "set `interactive: false` (print mode sends the bytes)"),
        (BENCH.format(harness="mock").replace("image: shot.png", "image: generated:chart.png"), "has no `generate:`"),
        (BENCH.format(harness="codex" + scripted).replace("interactive: false", "interactive: false\n        sandbox: container"), "a container cannot open"),
    ]
    for i, (text, said) in enumerate(cases):
        bench = write(tmp_path, text, f"b{i}.yaml")
        out = benchtape("preflight", bench, cwd=tmp_path)
        assert out.returncode == 3, out.stdout + out.stderr
        assert "describe-the-picture" in out.stdout + out.stderr and said in out.stdout + out.stderr


GENERATED = """
    description: the agent is shown the chart its generator drew
    harness: mock
    scenarios:
      - name: describe-the-picture
        prompt: "What colour is this picture?"
        generate: ./draw.py
        image: [shot.png, "generated:chart.png"]
        interactive: false
        checks:
          - {{type: "session:image-sent", value: 2}}
"""


def _generator(tmp: Path, body: str) -> None:
    program = tmp / "draw.py"
    program.write_text(f"#!{sys.executable}\nimport os, pathlib\nfolder = pathlib.Path(os.environ['MADBENCH_IMAGE_DIR'])\n{body}\nprint('COLOUR=red')\n")
    program.chmod(0o755)


def test_a_generated_picture_is_the_file_the_generator_wrote_sent_after_the_benchs_own(tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    _generator(tmp_path, f"(folder / 'chart.png').write_bytes({png(3, 1)!r})")
    bench = write(tmp_path, GENERATED.format())
    out = benchtape("run", bench, "--db", tmp_path / "s.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    result = _report(tmp_path / "r.json")
    assert [c["status"] for c in result["checks"]] == ["PASS"], out.stdout + out.stderr
    [user] = [a for a in result["session"]["actions"] if a["kind"] == "message.user"][:1]
    assert [(a["name"], a["bytes"]) for a in user["data"]["attachments"]] == [("shot.png", len(png())), ("chart.png", len(png(3, 1)))]


def test_a_generator_that_leaves_no_picture_stops_the_run_before_any_session(tmp_path):
    (tmp_path / "shot.png").write_bytes(png())
    _generator(tmp_path, "(folder / 'chart.png').write_text('not a picture')")
    bench = write(tmp_path, GENERATED.format())
    out = benchtape("run", bench, "--db", tmp_path / "s.db", cwd=tmp_path)
    assert out.returncode == 3, out.stdout + out.stderr
    said = out.stdout + out.stderr
    assert "generated:chart.png" in said and "$MADBENCH_IMAGE_DIR/chart.png" in said and "nothing ran" in said


# ---------------------------------------------------------------- the real binaries


def _launch(tmp: Path, endpoint: str, image: Path, harness_config: dict) -> Launch:
    work, home = tmp / "work", tmp / "home"
    work.mkdir()
    home.mkdir()
    return Launch(
        prompt="NOTOOL What colour is this picture?",
        work_dir=work,
        root=work,
        home=home,
        model="scripted",
        harness_config=harness_config,
        session_uuid=str(uuid.uuid4()),
        endpoint=endpoint,
        images=(image,),
    )


def _run(cmd, launch: Launch) -> subprocess.CompletedProcess:
    for rel, text in cmd.home_files.items():
        (launch.home / rel).parent.mkdir(parents=True, exist_ok=True)
        (launch.home / rel).write_text(text)
    env = {**base_env(launch.home), **cmd.env}
    return subprocess.run(cmd.argv, cwd=launch.work_dir, env=env, input=cmd.stdin, capture_output=True, timeout=120)


def _images_in(body: object) -> list[str]:
    """Every base64 payload of a picture in a request body, wherever the wire format puts it
    (Messages: source.data; Responses: an input_image's data: URL)."""
    found: list[str] = []
    if isinstance(body, dict):
        if body.get("type") == "image" and isinstance(body.get("source"), dict):
            found.append(str(body["source"].get("data")))
        if body.get("type") == "input_image" and str(body.get("image_url", "")).startswith("data:"):
            found.append(str(body["image_url"]).split(",", 1)[1])
        for v in body.values():
            found += _images_in(v)
    elif isinstance(body, list):
        for v in body:
            found += _images_in(v)
    return found


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_the_real_tool_sends_the_picture_to_the_scripted_model(tool, tmp_path):
    binary = need(tool)
    image = tmp_path / "shot.png"
    image.write_bytes(png(3, 2))
    adapter = get_adapter(tool)
    config = {"binary": str(binary)} | ({"args": ["--permission-mode", "bypassPermissions"]} if tool == "claude-code" else {})
    with serve({"steps": [{"say": "It is red."}]}) as server:
        launch = _launch(tmp_path, server.url if tool == "claude-code" else server.url, image, config)
        cmd = adapter.command(launch)
        done = _run(cmd, launch)
        assert done.returncode == 0, done.stdout.decode()[-2000:] + done.stderr.decode()[-2000:]
        bodies = [e["body"] for e in server.log if e.get("api") in ("messages", "responses")]
    assert "What colour is this picture?" in json.dumps(bodies[-1])  # the prompt came with it (not taken for a second image)
    sent = [data for body in bodies for data in _images_in(body)]
    assert base64.b64encode(png(3, 2)).decode() in sent, [str(b)[:300] for b in bodies]
    assert [a["sha256"] for a in cmd.attachments] and cmd.attachments[0]["media_type"] == "image/png"
    lines = [json.loads(line) for line in done.stdout.decode().splitlines() if line.startswith("{")]
    said = json.dumps(lines)
    assert "It is red." in said


@pytest.mark.parametrize("tool", ["claude-code", "codex"])
def test_a_bench_run_through_the_real_tool_passes_image_sent(tool, tmp_path):
    """`benchtape run` on the bench a madbench user writes, the real binary against the scripted
    model: the session records the picture it sent and the check passes."""
    need(tool)
    (tmp_path / "shot.png").write_bytes(png())
    config = "\n    harness_config: {model: scripted" + (", args: [--permission-mode, bypassPermissions]}" if tool == "claude-code" else "}")
    text = BENCH.format(harness=tool + config).replace('          - {type: "session:image-sent", value: 2}\n', "")
    text = text.replace("        checks:", "        mock: {steps: [{say: It is red.}]}\n        checks:")
    bench = write(tmp_path, text)
    out = benchtape("run", bench, "--db", tmp_path / "s.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    result = _report(tmp_path / "r.json")
    assert [c["status"] for c in result["checks"]] == ["PASS"]
    actions = result["session"]["actions"]
    assert not [a for a in actions if a["kind"] == "error"], actions
    assert [a["data"]["text"] for a in actions if a["kind"] == "message.assistant"][-1] == "It is red."
    assert sum(len(a["data"].get("attachments", [])) for a in actions if a["kind"] == "message.user") == 1  # sent once, counted once


def test_the_terminal_ui_attaches_the_pasted_picture(tmp_path):
    """Interactive (madbench refuses it; benchtape pastes the path, as a file dropped on the
    terminal): the transcript's user entry carries the picture, and the check passes from it."""
    need("claude-code")
    import shutil

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    (tmp_path / "shot.png").write_bytes(png())
    config = "\n    harness_config: {model: scripted, args: [--permission-mode, bypassPermissions]}"
    text = BENCH.format(harness="claude-code" + config).replace('          - {type: "session:image-sent", value: 2}\n', "")
    text = text.replace("        interactive: false\n", "        interactive: true\n        mock: {steps: [{say: It is red.}]}\n")
    bench = write(tmp_path, text)
    out = benchtape("run", bench, "--db", tmp_path / "s.db", "--report-json", tmp_path / "r.json", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    result = _report(tmp_path / "r.json")
    assert [c["status"] for c in result["checks"]] == ["PASS"]
    users = [a["data"] for a in result["session"]["actions"] if a["kind"] == "message.user"]
    assert users[0]["attachments"] == [{"media_type": "image/png", "bytes": len(png())}]
    assert sum(len(u.get("attachments", [])) for u in users) == 1  # the tool's "[Image: source: …]" note is not a second picture
    assert "What colour is this picture?" in users[0]["text"]


def test_the_mock_refuses_a_picture_that_did_not_arrive_intact(tmp_path):
    """The mock's job carries the bytes and the digest the session records: a mismatch is the
    session's error, so a mock pass of `session:image-sent` means the bytes really came."""
    import hashlib

    job = {"prompt": "p", "root": str(tmp_path), "images": [{"sha256": hashlib.sha256(b"other").hexdigest(), "data": base64.b64encode(png()).decode()}]}
    agent = Path(__file__).resolve().parents[2] / "adapters" / "mock_agent.py"
    done = subprocess.run([sys.executable, "-S", str(agent)], input=json.dumps(job), capture_output=True, text=True, timeout=30)
    assert done.returncode == 1 and "did not arrive intact" in done.stdout
    job["images"][0]["sha256"] = hashlib.sha256(png()).hexdigest()
    done = subprocess.run([sys.executable, "-S", str(agent)], input=json.dumps(job), capture_output=True, text=True, timeout=30)
    assert done.returncode == 0 and "did not arrive intact" not in done.stdout
