"""`benchtape sandbox build`: benchtape's own container base image, built locally."""

from __future__ import annotations

import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command

sandbox_app = typer.Typer(help="The container sandbox.", no_args_is_help=True)


@sandbox_app.command("build")
@command()
def build_cmd(rebuild: bool = typer.Option(False, "--rebuild", help="Build again even if the image exists.")) -> int:
    """Build (or reuse) the base image the `container` level uses when a bench names none.

    Example: benchtape sandbox build
    """

    from benchtape.sandbox.baseimage import ensure_base_image
    from benchtape.sandbox.container import ContainerError, available, connect

    ok, why = available()
    if not ok:
        raise BadInput(f"no Docker engine answers: {why}", fix="start dockerd (or install docker.io), then run this again")
    try:
        tag = ensure_base_image(connect(), rebuild=rebuild)
    except ContainerError as exc:
        raise BadInput(str(exc)) from None
    print(f"base image: {tag}")
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
