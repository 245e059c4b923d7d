"""`benchtape checks [TYPE]`: the catalog, from the registry (the same source as docs/checks.md)."""

from __future__ import annotations

import orjson
import typer

from benchtape.core.errors import BadInput
from benchtape.guard import command


@command()
def checks_cmd(
    type_: str | None = typer.Argument(None, metavar="[TYPE]", help="One check type to describe."),
    json_out: bool = typer.Option(False, "--json", help="Machine-readable output."),
) -> int:
    """List every check type by family, or describe one: arguments, defaults, what it reads, an example, errors.

    Example: benchtape checks session:tool-used
    """

    from benchtape.app.catalog import ALIASES, REFUSED, CheckConfigError, CheckInfo, catalog, lookup

    infos = catalog()
    if type_ is None:
        if json_out:
            print(orjson.dumps({"checks": [i.to_dict() for i in infos.values()], "aliases": ALIASES, "refused": REFUSED}).decode())
            return 0
        by_family: dict[str, list[CheckInfo]] = {}
        for info in infos.values():
            by_family.setdefault(info.family, []).append(info)
        for family, members in by_family.items():
            print(f"{family} ({len(members)})")
            for info in sorted(members, key=lambda i: i.type):
                print(f"  {info.type:<34} {info.summary}")
        if REFUSED:
            print(f"not supported in this version ({len(REFUSED)}): {', '.join(sorted(REFUSED))}")
        print(f"aliases: {', '.join(f'{a}→{c}' for a, c in sorted(ALIASES.items()))}")
        print(f"{len(infos)} check types · `benchtape checks TYPE` for one · docs/checks.md")
        return 0
    try:
        info = lookup(type_)
    except CheckConfigError as exc:
        raise BadInput(str(exc), fix="`benchtape checks` lists every type") from None
    if json_out:
        print(orjson.dumps(info.to_dict()).decode())
        return 0
    print(f"{info.type}  ({info.family}, {info.kind})")
    if type_ != info.type:
        print(f"  ({type_} is an alias of {info.type})")
    print(f"  {info.summary}")
    print(f"  reads: {info.reads}")
    if info.args:
        print("  arguments:")
        for name, meaning in info.args.items():
            print(f"    {name}: {meaning}")
    if info.example:
        print("  example:")
        for line in info.example.rstrip().splitlines():
            print(f"    {line}")
    if info.errors:
        print("  refused or errors on:")
        for e in info.errors:
            print(f"    - {e}")
    return 0


def register(app: typer.Typer) -> None:
    app.command("checks")(checks_cmd)
