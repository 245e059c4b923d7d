"""The import check: where would the verifier's Python import the package under test from?

Run in the box, with the verifier's own environment, after the patches and before the tests:
`importlib.util.find_spec` finds each package without executing it, and each answer is one
line `BENCHTAPE-IMPORT {"package", "origin", "inside"}`; `inside` says whether it is in the tree
(the command's working directory). A package found elsewhere (another copy of it installed on
the host, as pytest's own pluggy shadows a pluggy checkout) or not at all means the run would
test something other than the tree: the verifier's diagnosis `project_not_installed`.
"""

from __future__ import annotations

import shlex

import orjson

MARK = "BENCHTAPE-IMPORT "
_CODE = (
    "import importlib.util as u, json, os, sys\n"
    "here = os.path.realpath(os.getcwd()) + os.sep\n"
    "for n in sys.argv[1:]:\n"
    "    try:\n"
    "        s = u.find_spec(n)\n"
    "    except Exception:\n"
    "        s = None\n"
    "    o = s.origin if s is not None and s.origin not in (None, 'namespace', 'built-in', 'frozen') else None\n"
    "    if o is None and s is not None and s.submodule_search_locations:\n"
    "        o = list(s.submodule_search_locations)[0]\n"
    "    print('" + MARK + "' + json.dumps({'package': n, 'origin': o, 'inside': bool(o) and os.path.realpath(o).startswith(here)}))\n"
)


def probe_command(packages: tuple[str, ...]) -> str | None:
    """The shell command that reports where each of `packages` imports from (None: nothing to check)."""
    if not packages:
        return None
    return "python3 -c " + shlex.quote(_CODE) + " " + " ".join(shlex.quote(p) for p in packages)


def read_probe(output: str) -> list[dict[str, object]]:
    """The probe's answers, one per package, from its output (other lines ignored)."""
    found = []
    for line in output.splitlines():
        if line.startswith(MARK):
            try:
                doc = orjson.loads(line[len(MARK):])
            except orjson.JSONDecodeError:
                continue
            if isinstance(doc, dict):
                found.append(doc)
    return found
