"""The project image (berbench §4.4): `Dockerfile.benchtape` at the repository root, built
from an export of a base commit's tree (no `.git`) with the network off, `FROM` a local image
(benchtape's base, `benchtape sandbox build`, or one loaded with `docker load`).

The Dockerfile copies the source to /workspace and installs everything the tests need: the
verifier runs with no network. Agent CLIs are never installed in it. One image per (base
commit, Dockerfile, the images it starts FROM), tagged `benchtape-project:<hash>`, so a task
set sharing a base builds once and an edited Dockerfile builds anew.

With no Dockerfile the verifier runs in benchtape's base image, its test dependencies from
the wheelhouse (sandbox/wheelhouse.py).
"""

from __future__ import annotations

import contextlib
import hashlib
import re
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from benchtape.sandbox.baseimage import BASE_REPOSITORY, ImageBuildError, _image_or_none, ensure_base_image

if TYPE_CHECKING:
    from benchtape.spec.project import Project
    from benchtape.spec.task import TaskSpec

PROJECT_REPOSITORY = "benchtape-project"
_FROM = re.compile(r"^\s*FROM\s+(?:--platform=\S+\s+)?(\S+)", re.IGNORECASE | re.MULTILINE)


def project_image_tag(client: Any, dockerfile: Path, base_commit: str) -> str:
    """The tag of the project image for this Dockerfile at this base commit."""
    text = dockerfile.read_text(encoding="utf-8")
    h = hashlib.sha256(b"project\0" + text.encode() + b"\0" + base_commit.encode())
    for ref in _FROM.findall(text):
        if ref.lower() == "scratch":
            continue
        if ref.split(":")[0] == BASE_REPOSITORY:
            ensure_base_image(client)
        image = _image_or_none(client, ref)
        if image is None:
            raise ImageBuildError(
                f"{dockerfile}: FROM {ref} is not a local image and benchtape does not pull; start FROM {BASE_REPOSITORY} "
                "(`benchtape sandbox build`) or load the image with `docker load` first"
            )
        h.update(b"from\0" + ref.encode() + b"\0" + image.id.encode())
    return f"{PROJECT_REPOSITORY}:{h.hexdigest()[:12]}"


def build_project_image(client: Any, dockerfile: Path, context: Path, base_commit: str) -> str:
    """Build (or reuse) the project image from `context` (the exported base tree)."""
    import docker.errors

    tag = project_image_tag(client, dockerfile, base_commit)
    if _image_or_none(client, tag) is not None:
        return tag
    try:
        client.images.build(
            path=str(context),
            dockerfile=str(dockerfile.resolve()),
            tag=tag,
            pull=False,
            rm=True,
            forcerm=True,
            network_mode="none",
            labels={"benchtape": "1", "benchtape.project": str(dockerfile.resolve()), "benchtape.base_commit": base_commit},
        )
    except docker.errors.BuildError as exc:
        tail = "".join(str(chunk.get("stream") or chunk.get("error") or "") for chunk in exc.build_log)[-2000:]
        raise ImageBuildError(f"building {dockerfile} failed: {exc.msg}\n{tail}") from exc
    except docker.errors.APIError as exc:
        raise ImageBuildError(f"building {dockerfile} failed: {exc}") from exc
    return tag


@contextlib.contextmanager
def verifier_image(project: Project, task: TaskSpec, level: str, base_tree: Path | None = None, notes: list[str] | None = None) -> Iterator[str | None]:
    """The image a history-mined task's verifier runs in at `level`: the project image built
    from the exported base tree (`base_tree`, exported here when None) at level container when
    the project has a Dockerfile.benchtape; None otherwise (benchtape's base image, its test
    dependencies from the wheelhouse, or level home). What validation and grading both use, so
    a task is graded where it was validated. `notes` gets a line saying which."""
    said = notes if notes is not None else []
    if level != "container" or project.dockerfile is None:
        if level == "container":
            said.append("no Dockerfile.benchtape: benchtape's base image" + (f", test dependencies from {project.wheelhouse()}" if project.wheelhouse() else " (a Python and its standard library only: put test dependencies' wheels in .benchtape/wheelhouse/)"))
        yield None
        return
    from benchtape.sandbox.checkout import export_commit
    from benchtape.sandbox.container import connect

    scratch = None
    try:
        if base_tree is None:
            scratch = Path(tempfile.mkdtemp(prefix=f"benchtape-image-{task.id}-"))
            base_tree = scratch / "tree"
            export_commit(project.root, task.source.base_commit, base_tree)
        tag = build_project_image(connect(), project.dockerfile, base_tree, task.source.base_commit)
        said.append(f"project image {tag} from {project.dockerfile.name}")
        yield tag
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
