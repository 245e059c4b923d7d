"""`model:current`: are the model ids the agent wrote ones a provider serves today?

madbench asks the `claudish` CLI for its live catalog. benchtape asks the providers
themselves: `ctx.catalog` lists the models of the bench's judge providers (Anthropic's
`GET /v1/models`, any OpenAI-compatible `GET …/models`), once per grading. A check names
one with `args.provider`, else every configured provider whose key is set is listed.

Each id found gets a standing: `current` (listed, and no newer model of its family is),
`superseded` (listed, but a newer one of its family is), `retired` (no longer listed, and
known to have existed: the table below), or `unknown` (never seen: likely invented).
Utility: current 1, superseded ⅔, retired ⅓, unknown 0, halved for a routing address
(`vendor/model`, `model@region`) unless `allow_routes`. The score is the mean utility;
the check passes when every id is at least the `require`d standing and at least
`min_count` ids were found. An unreachable catalog FAILS: nothing could be confirmed.
"""

from __future__ import annotations

import re
import threading
from pathlib import Path
from typing import Any

from benchtape.checks.common import args_of, as_bool, loads_json, output_of, parse_duration, short
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, register
from benchtape.core.model import Session
from benchtape.core.results import CheckSpec, Result

TYPE = "model:current"
STANDINGS = ("current", "superseded", "retired", "unknown")
UTILITY = {"current": 1.0, "superseded": 2 / 3, "retired": 1 / 3, "unknown": 0.0}
REQUIRE = ("current", "superseded", "retired")
# Ids that were served once and are gone: "retired", not "unknown".
RETIRED = frozenset(
    """claude-instant-1.2 claude-2.0 claude-2.1 claude-3-sonnet-20240229 claude-3-opus-20240229
    claude-3-haiku-20240307 claude-3-5-sonnet-20240620 claude-3-5-sonnet-20241022 claude-3-5-haiku-20241022
    claude-3-7-sonnet-20250219 claude-sonnet-4-20250514 claude-opus-4-20250514 gpt-3.5-turbo gpt-3.5-turbo-0301 gpt-3.5-turbo-0613
    gpt-3.5-turbo-16k gpt-4 gpt-4-0314 gpt-4-0613 gpt-4-32k gpt-4-turbo gpt-4-turbo-preview gpt-4-1106-preview
    gpt-4-vision-preview gpt-4.5-preview text-davinci-003 text-davinci-002 code-davinci-002 o1-preview o1-mini
    gemini-pro gemini-1.0-pro gemini-1.5-pro gemini-1.5-flash gemini-2.0-flash-exp""".split()
)
# What an id looks like when no catalog lists it (to find ids in free text).
ID_PREFIXES = ("claude-", "gpt-", "o1", "o3", "o4", "gemini-", "grok-", "glm-", "minimax-", "kimi-", "deepseek-", "mistral-", "qwen-", "text-davinci-", "code-davinci-")
_TOKEN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@/-]*[A-Za-z0-9]")


def base_id(model_id: str) -> tuple[str, bool]:
    """(the model id inside a routing address, whether it was one)."""
    routed = "/" in model_id or "@" in model_id
    base = model_id.rsplit("/", 1)[-1].split("@", 1)[0]
    return base, routed


def family(model_id: str) -> str:
    """The alphabetic words of an id (`claude-sonnet-4-5-20250929` → `claude-sonnet`), what
    a newer release of the same line shares."""
    words = [w for w in re.split(r"[-_.:]", model_id.lower()) if w.isalpha() and w not in ("latest", "preview")]
    return "-".join(words)


def _version(model_id: str) -> tuple[int, ...]:
    return tuple(int(n) for n in re.findall(r"\d+", model_id))


def standing(model_id: str, listed: dict[str, dict[str, Any]]) -> str:
    base, _ = base_id(model_id)
    if base in listed:
        mine = listed[base]
        fam = family(base)
        for other_id, other in listed.items():
            if other_id == base or family(other_id) != fam:
                continue
            a: Any = mine.get("created")  # JSON from the catalog: compared only when _comparable
            b: Any = other.get("created")
            newer = (a < b) if _comparable(a, b) else _version(base) < _version(other_id)
            if newer:
                return "superseded"
        return "current"
    return "retired" if base in RETIRED else "unknown"


def _comparable(a: Any, b: Any) -> bool:
    return a is not None and b is not None and type(a) is type(b) and not isinstance(a, bool)


def find_ids(spec_args: dict[str, Any], session: Session, work_dir: Path | None, listed: set[str]) -> list[str] | str:
    """The ids to judge: from `file` (+ `path`) in the workspace, else the final output (JSON
    read like a file, text scanned for id-shaped words). A str return is why none could be read."""
    file, path = spec_args.get("file"), spec_args.get("path")
    if file is not None:
        if work_dir is None:
            return f"args.file {file} needs the session's workspace, and there is none"
        target = (Path(work_dir) / str(file)).resolve()
        if not target.is_file():
            return f"args.file {file} is not in the workspace"
        try:
            doc = loads_json(target.read_text(encoding="utf-8"))
        except (ValueError, UnicodeDecodeError) as exc:
            return f"args.file {file} is not JSON: {short(str(exc), 120)}"
        return _ids_in(_dig(doc, path))
    text = output_of(session)
    try:
        doc = loads_json(text)
    except ValueError:
        doc = None
    if isinstance(doc, (dict, list)):
        return _ids_in(_dig(doc, path))
    out = []
    for tok in _TOKEN.findall(text):
        base, _ = base_id(tok)
        if base in listed or base.lower().startswith(ID_PREFIXES):
            out.append(tok)
    return list(dict.fromkeys(out))


def _dig(doc: Any, path: Any) -> Any:
    if not path:
        return doc
    for part in str(path).split("."):
        if isinstance(doc, dict):
            doc = doc.get(part)
        elif isinstance(doc, list) and part.isdigit() and int(part) < len(doc):
            doc = doc[int(part)]
        else:
            return None
    return doc


def _ids_in(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        for key in ("id", "model", "model_id"):
            if isinstance(value.get(key), str):
                return [value[key]]
        return []
    if isinstance(value, list):
        return [i for v in value for i in _ids_in(v)]
    return []


def _catalog(ctx: CheckContext, provider: str | None, timeout: float) -> list[dict[str, Any]] | str:
    """The listing, or why there is none; a hung provider is given up on after `timeout`."""
    box: dict[str, Any] = {}

    def ask() -> None:
        try:
            box["listed"] = ctx.catalog(provider)  # type: ignore[misc]
        except Exception as exc:  # noqa: BLE001 - any failure means: unreachable
            box["error"] = str(exc) or type(exc).__name__

    worker = threading.Thread(target=ask, daemon=True)
    worker.start()
    worker.join(timeout)
    if worker.is_alive():
        return f"the model catalog did not answer within {timeout:g}s"
    if "error" in box:
        return f"the model catalog is unreachable: {box['error']}"
    listed: list[dict[str, Any]] = box["listed"]  # ask() put the provider's listing there
    return listed


@register(
    TYPE,
    family="Model",
    summary="the model ids the agent wrote are ones a provider lists today (the live catalog through the providers' models listings): current 1, superseded ⅔, retired ⅓, unknown 0",
    reads="final_output (or args.file in the workspace); the live model catalog",
    args={
        "args.file": "a JSON file relative to the workspace (default: the final output)",
        "args.path": "dotted path inside the JSON to the id, list of ids, or objects with `id`/`model`",
        "args.ignore": "sentinel strings that are not ids (e.g. [unknown, n/a])",
        "args.require": "the worst standing accepted: current (default) | superseded | retired",
        "args.allow_routes": "true: a routing address (vendor/model, model@region) keeps its full utility (default false: halved)",
        "args.min_count": "at least this many ids must be found (default 1)",
        "args.provider": "list only this provider's models (default: every provider configured whose key is set)",
        "args.timeout": 'how long to wait for the catalog (default "60s")',
    },
    example="type: model:current\nargs: {file: config.json, path: model, require: superseded}",
    errors=(
        "args.require not one of current, superseded, retired; args.min_count not a whole number ≥ 0; args.ignore not a list of strings",
        "FAIL: the catalog is unreachable or too slow; fewer ids than min_count; an id below the required standing",
        "ERROR: no catalog configured; args.file missing or not JSON",
    ),
    kind="Service",
    reads_workspace=True,
)
def model_current(spec: CheckSpec) -> Evaluator:
    args = dict(args_of(spec))
    require = args.get("require", "current")
    if require not in REQUIRE:
        raise CheckConfigError(f"{TYPE}: args.require must be one of {', '.join(REQUIRE)}, got {require!r}")
    allow_routes = as_bool(args.get("allow_routes"), type=TYPE, name="allow_routes", default=False)
    min_count = args.get("min_count", 1)
    if isinstance(min_count, bool) or not isinstance(min_count, int) or min_count < 0:
        raise CheckConfigError(f"{TYPE}: args.min_count must be a whole number ≥ 0, got {min_count!r}")
    ignore = args.get("ignore") or []
    if not isinstance(ignore, list) or not all(isinstance(i, str) for i in ignore):
        raise CheckConfigError(f"{TYPE}: args.ignore must be a list of strings")
    provider = args.get("provider")
    if provider is not None and not isinstance(provider, str):
        raise CheckConfigError(f"{TYPE}: args.provider must be a provider id")
    timeout = parse_duration(args.get("timeout"), type=TYPE, default="60s")
    worst = REQUIRE.index(require)
    ignored = {i.lower() for i in ignore}

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        if ctx.catalog is None:
            return Result.error(f"{TYPE}: no model catalog configured (the grading has no judge providers to list models from)")
        listing = _catalog(ctx, provider, timeout)
        if isinstance(listing, str):
            return Result.of(False, listing, {"catalog": "unreachable"})
        listed = {str(m["id"]): m for m in listing if isinstance(m, dict) and m.get("id")}
        found = find_ids(args, session, Path(ctx.work_dir) if ctx.work_dir else None, set(listed))
        if isinstance(found, str):
            return Result.error(f"{TYPE}: {found}")
        ids = [i for i in found if i.strip() and i.lower() not in ignored]
        rows: list[dict[str, Any]] = []
        for model_id in ids:
            st = standing(model_id, listed)
            _, routed = base_id(model_id)
            utility = UTILITY[st] * (0.5 if routed and not allow_routes else 1.0)
            rows.append({"id": model_id, "standing": st, "utility": round(utility, 4), "route": routed})
        evidence = {"ids": rows, "catalog_size": len(listed), "require": require, "min_count": min_count}
        if len(ids) < min_count:
            return Result.of(False, f"found {len(ids)} model id(s), fewer than min_count {min_count}", evidence, score=0.0)
        score = sum(r["utility"] for r in rows) / len(rows) if rows else 1.0
        below = [r for r in rows if STANDINGS.index(r["standing"]) > worst]
        if below:
            names = ", ".join(f"{r['id']} ({r['standing']})" for r in below[:5])
            return Result.of(False, f"{len(below)} of {len(rows)} id(s) below {require}: {names}", evidence, score=score)
        return Result.of(True, f"{len(rows)} id(s), all at least {require}: " + ", ".join(f"{r['id']} ({r['standing']})" for r in rows[:5]), evidence, score=score)

    return evaluate
