"""`benchtape tools install|list`: the agent CLIs in the project's tools folder, and the harnesses
this benchtape can run (built-in, or added by an installed plugin package)."""

from __future__ import annotations

import typer

from benchtape.options import Json


def register(app: typer.Typer) -> None:
    tools_app = typer.Typer(help="Agent CLIs pinned in the project's tools folder, and the installed harnesses.", no_args_is_help=True, rich_markup_mode=None)
    tools_app.command("install")(install_cmd)
    tools_app.command("list")(list_cmd)
    app.add_typer(tools_app, name="tools")


def install_cmd(
    names: list[str] | None = typer.Argument(None, help="NAME or NAME@VERSION (default: every harness with an install recipe, at its verified version)."),
) -> None:
    """Install pinned agent CLIs into the tools folder ($BENCHTAPE_TOOLS, else .benchtape/tools): npm packages with `npm install --prefix`, PyPI ones into a venv of their own; never a global install. An installed version is found, not installed again.

    Example: benchtape tools install claude-code codex gemini-cli
    Example: benchtape tools install codex@0.170.0
    """
    from benchtape.guard import guarded

    def body() -> int:
        from benchtape.app.agent_clis import install, pins

        code = 0
        for spec in names or sorted(pins()):
            try:
                binary = install(spec)
            except Exception as exc:  # noqa: BLE001 - each tool on its own: one failure does not stop the rest
                render = getattr(exc, "render", None)
                typer.echo(f"error: {render() if render else exc}", err=True)
                code = 2
                continue
            typer.echo(f"{binary.tool} {binary.version}: {binary.path}")
            if binary.note:
                typer.echo(f"  note: {binary.note}", err=True)
        return code

    guarded(body)


def list_cmd(json_out: Json = False) -> None:
    """Every harness this benchtape can run (built-in or from a plugin package, with its version) and the agent CLI versions in the tools folder, with where they live.

    Example: benchtape tools list --json
    """
    from benchtape.guard import guarded

    def body() -> int:
        from benchtape.app.agent_clis import harness_listing

        rows = harness_listing()
        if json_out:
            import json

            typer.echo(json.dumps(rows, indent=2))
            return 0
        for row in rows:
            source = "built-in" if row["package"] == "benchtape" else f"plugin {row['package']} {row['version']}"
            pin = row.get("install")
            recipe = f"  pinned {pin['package']}@{pin['version']} ({pin['kind']})" if pin else ""
            typer.echo(f"{row['harness']:<14} {source}{recipe}")
            if row.get("problem"):
                typer.echo(f"    cannot load: {row['problem']}")
            for found in row.get("installed", []):
                mark = "" if found["verified"] else "  (not the verified version)"
                typer.echo(f"    {found['version']}: {found['path']}{mark}")
        return 0

    guarded(body)
