"""`benchtape sandbox build`: benchtape's own container base image, built locally."""

from __future__ import annotations

import typer

from benchtape.guard import command

sandbox_app = typer.Typer(help="The container sandbox.", no_args_is_help=True)


@sandbox_app.command("build")
@command()
def build_cmd(rebuild: bool = typer.Option(False, "--rebuild", help="Build again even if the image exists.")) -> int:
    """Build (or reuse) the base image the `container` level uses when a bench names none.

    Example: benchtape sandbox build
    """
    from benchtape.app.maintenance import build_base_image

    print(f"base image: {build_base_image(rebuild)}")
    return 0


def register(app: typer.Typer) -> None:
    app.add_typer(sandbox_app, name="sandbox")
