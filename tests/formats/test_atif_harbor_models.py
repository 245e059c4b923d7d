"""Issue 47: ATIF both ways checked by the REAL Harbor 0.25's own trajectory models (its venv,
tests/formats/harborkit.py): benchtape's export (ATIF-v1.8, the newest Harbor writes) validates
as a Harbor `Trajectory`; a multimodal trajectory Harbor's models build (ATIF-v1.7 and v1.8:
image and audio content parts) and older documents (v1.0 … v1.6) import: the text kept, the
media named with their paths in a warning, never dropped silently."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from formatskit import benchtape, write_mock_bench
from harborkit import harbor_script

from benchtape.store.database import Store

VALIDATE = """
import json, sys
from harbor.models.trajectories import Trajectory
for path in sys.argv[1:]:
    t = Trajectory.model_validate(json.load(open(path)))
    print(t.schema_version, len(t.steps), len(t.subagent_trajectories or []))
"""
BUILD = """
import json, sys
from harbor.models.trajectories import Agent, Step, Trajectory
from harbor.models.trajectories.content import ContentPart, ImageSource, AudioSource
version = sys.argv[1]
parts = [ContentPart(type="text", text="Here is the screen."), ContentPart(type="image", source=ImageSource(media_type="image/png", path="screens/step1.png"))]
if version == "ATIF-v1.8":
    parts.append(ContentPart(type="audio", source=AudioSource(media_type="audio/wav", path="voice/note.wav", duration_sec=1.5)))
steps = [
    Step(step_id=1, source="user", message=parts),
    Step(step_id=2, source="agent", message="I see a login form.", model_name="claude-sonnet-4-6"),
]
t = Trajectory(schema_version=version, session_id="s-" + version, agent=Agent(name="claude-code", version="2.1.0"), steps=steps)
print(json.dumps(t.model_dump(mode="json", exclude_none=True)))
"""


def _harbor_python(code: str, *args: str) -> str:
    python = harbor_script().with_name("python")
    done = subprocess.run([str(python), "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_benchtapes_export_is_a_trajectory_harbors_own_models_accept(tmp_path: Path) -> None:
    db = tmp_path / "r.db"
    assert benchtape("run", write_mock_bench(tmp_path), "--db", db, cwd=tmp_path).returncode == 1
    assert benchtape("export", "--format", "atif", "--run", "latest", "-o", tmp_path / "atif", "--db", db).returncode == 0
    files = sorted(str(p) for p in (tmp_path / "atif").glob("*.json"))
    said = _harbor_python(VALIDATE, *files).splitlines()
    docs = [json.loads(Path(f).read_text()) for f in files]
    assert said == [f"ATIF-v1.8 {len(d['steps'])} {len(d.get('subagent_trajectories') or [])}" for d in docs]
    assert any(d.get("subagent_trajectories") for d in docs)  # the delegating session's subagents, embedded


@pytest.mark.parametrize("version", ["ATIF-v1.7", "ATIF-v1.8"])
def test_a_multimodal_trajectory_harbor_builds_imports_with_its_media_named(version: str, tmp_path: Path) -> None:
    doc = tmp_path / "trajectory.json"
    doc.write_text(_harbor_python(BUILD, version))
    db = tmp_path / "i.db"
    done = benchtape("import", "atif", doc, "--db", db)
    assert done.returncode == 0, done.stdout + done.stderr
    store = Store(db, readonly=True)
    (row,) = list(store.session_rows())
    session = store.load_session(row.id)
    store.close()
    users = [a.data.get("text") for a in session.actions if a.kind == "message.user"]
    assert users == ["Here is the screen."] and session.final_output == "I see a login form."
    media = json.dumps(list(session.warnings), default=str)
    assert "screens/step1.png" in media and ("voice/note.wav" in media) == (version == "ATIF-v1.8")


@pytest.mark.parametrize("version", ["ATIF-v1.0", "ATIF-v1.3", "ATIF-v1.5", "ATIF-v1.6"])
def test_older_versions_still_import(version: str, tmp_path: Path) -> None:
    doc = {"schema_version": version, "session_id": "old", "agent": {"name": "codex", "version": "0.1"}, "steps": [{"step_id": 1, "source": "user", "message": "hi"}, {"step_id": 2, "source": "agent", "message": "hello"}]}
    path = tmp_path / "old.json"
    path.write_text(json.dumps(doc))
    assert _harbor_python(VALIDATE, str(path)).startswith(version)  # Harbor takes it too
    db = tmp_path / "o.db"
    assert benchtape("import", "atif", path, "--db", db).returncode == 0
    store = Store(db, readonly=True)
    (row,) = list(store.session_rows())
    assert store.load_session(row.id).final_output == "hello"
    store.close()
