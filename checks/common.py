"""Small helpers the check families share: reading values, thresholds, durations, JSON.

They live in one place so every family refuses a bad argument with the same words, and
reads a missing output the same way (as "", never as a crash).
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Mapping, overload

# re-exported (the redundant aliases say so): the families read them from here
from benchtape.checks.json_text import dumps_json as dumps_json
from benchtape.checks.json_text import loads_json as loads_json
from benchtape.checks.registry import Builder, CheckConfigError, register
from benchtape.core.model import Call, Session
from benchtape.core.results import CheckSpec

TAIL_BYTES = 2048


def family_register(prefix: str, family: str) -> Callable[..., Callable[[Builder], Builder]]:
    """`register` for a family whose types are `<prefix>:<name>` (session:*, environment:*)."""

    def reg(name: str, **kw: Any) -> Callable[[Builder], Builder]:
        return register(f"{prefix}:{name}", family=family, **kw)

    return reg


def tool_calls(session: Session) -> list[Call]:
    """The Calls view: tool and MCP calls only, never a skill or a subagent spawn.

    An adapter may record both the `tool.call` for `Task`/`Skill` and the richer
    `subagent.spawned`/`skill.invoked` row for one invocation; the plain call is dropped
    wherever both exist, so every check reading Calls sees the same list."""
    richer = richer_call_ids(session)
    return [c for c in session.calls if c.call_id not in richer] if richer else list(session.calls)


def richer_call_ids(session: Session) -> set[str]:
    """Call ids that a skill or subagent-spawn row also recorded."""
    if not session.skills and not session.subagents:  # no such row: every session without skills or subagents
        return set()
    return {i.call_id for i in session.invocations if i.kind in ("skill", "subagent") and i.call_id}


def output_of(session: Session) -> str:
    """The text string checks grade: the final output, with None read as ""."""
    return session.final_output if isinstance(session.final_output, str) else ""


def as_text(value: Any, *, type: str, name: str = "value", required: bool = True) -> str:
    """A scalar argument as a string; YAML numbers and booleans keep their written form.

    A missing value is refused when `required`, because a check with no needle would
    grade every output the same way and so measure nothing.
    """
    if value is None:
        if required:
            raise CheckConfigError(f"{type}: '{name}' is required")
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (str, int, float)):
        return str(value)
    raise CheckConfigError(f"{type}: '{name}' must be a string, got {_kind(value)}")


def as_list(value: Any, *, type: str, name: str = "value") -> list[str]:
    """A list argument: a YAML list, or one string split on commas (blank items dropped)."""
    if value is None:
        raise CheckConfigError(f"{type}: '{name}' is required (a list, or one comma-separated string)")
    if isinstance(value, str):
        items = [part.strip() for part in value.split(",")]
    elif isinstance(value, (list, tuple)):
        items = [as_text(v, type=type, name=name) for v in value]
    else:
        raise CheckConfigError(f"{type}: '{name}' must be a list or a comma-separated string, got {_kind(value)}")
    items = [i for i in items if i != ""]
    if not items:
        raise CheckConfigError(f"{type}: '{name}' names nothing to look for")
    return items


def as_bool(value: Any, *, type: str, name: str, default: bool) -> bool:
    if value is None:
        return default
    if isinstance(value, bool):
        return value
    raise CheckConfigError(f"{type}: 'args.{name}' must be true or false, got {value!r}")


def as_number(value: Any, *, type: str, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise CheckConfigError(f"{type}: '{name}' must be a number, got {value!r}")
    return float(value)


def no_value(spec: CheckSpec) -> None:
    """Refuse a `value` on a check that reads none: it was meant for something, and
    ignoring it would grade a different question than the author asked."""
    if spec.value is not None:
        raise CheckConfigError(f"{spec.type}: takes no 'value' (got {spec.value!r})")


def args_of(spec: CheckSpec) -> Mapping[str, Any]:
    """`args`, refused when it is not a mapping (a YAML list there is a typo, not a choice)."""
    if spec.args is None:
        return {}
    if not isinstance(spec.args, Mapping):
        raise CheckConfigError(f"{spec.type}: 'args' must be a mapping, got {_kind(spec.args)}")
    return spec.args


def text_value(spec: CheckSpec, what: str) -> str:
    """`value` as a non-blank string, else refused with `<type>: value must <what>; got …`."""
    value = spec.value
    if not isinstance(value, str) or not value.strip():
        raise CheckConfigError(f"{spec.type}: value must {what}; got {value!r}")
    return value


@overload
def score_threshold(spec: CheckSpec, default: float) -> float: ...
@overload
def score_threshold(spec: CheckSpec, default: None) -> float | None: ...
def score_threshold(spec: CheckSpec, default: float | None) -> float | None:
    """The score bar (`threshold:`) for a continuous check: a number in [0, 1]; `default`
    (None for a check whose bar is optional) when none is written."""
    if spec.threshold is None:
        return default
    t = as_number(spec.threshold, type=spec.type, name="threshold")
    if not 0.0 <= t <= 1.0:
        raise CheckConfigError(f"{spec.type}: 'threshold' is a score bar in [0, 1], got {spec.threshold!r}")
    return t


_DURATION_PART = re.compile(r"(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


def parse_duration(value: Any, *, type: str, name: str = "args.timeout", default: str) -> float:
    """A duration with a unit, Go style ("300s", "2m", "1500ms", "1m30s"), in seconds.

    A bare number is refused rather than guessed: "30" could mean seconds or
    milliseconds, and a wrong guess is a timeout 1000 times too short or too long.
    """
    text = default if value is None else value
    if isinstance(text, bool) or isinstance(text, (int, float)):
        raise CheckConfigError(f'{type}: {name} {text!r} has no unit: write it with one, e.g. "{text}s" or "{text}ms"')
    if not isinstance(text, str):
        raise CheckConfigError(f"{type}: {name} must be a duration like \"30s\", got {_kind(text)}")
    s = text.strip()
    if re.fullmatch(r"\d+(\.\d*)?", s):
        raise CheckConfigError(f'{type}: {name} "{s}" has no unit: write it with one, e.g. "{s}s" or "{s}ms"')
    pos, total = 0, 0.0
    for m in _DURATION_PART.finditer(s):
        if m.start() != pos:
            break
        total += float(m.group(1)) * _UNIT_SECONDS[m.group(2)]
        pos = m.end()
    if pos != len(s) or not s:
        raise CheckConfigError(f'{type}: {name} "{s}" is not a duration (write e.g. "300s", "2m", "1500ms")')
    if total <= 0:
        raise CheckConfigError(f'{type}: {name} "{s}" must be longer than zero')
    return total


def grader_file(spec: CheckSpec, type: str, ext: str) -> str | None:
    """A grader file named by `value` or by the type suffix (`custom:wasm:./g.wasm`), with
    any `file://` dropped; None when neither names one. Refused when it is not a `ext` file."""
    path = spec.value if isinstance(spec.value, str) and spec.value.strip() else None
    if path is None and spec.type.startswith(type + ":"):
        path = spec.type[len(type) + 1 :]
    if path is None:
        return None
    if path.startswith("file://"):
        path = path[len("file://") :]
    if not path.endswith(ext):
        raise CheckConfigError(f"{type}: {path!r} is not a {ext} file")
    return path


def bench_relative(path: str, bench_dir: Path | str | None) -> Path | None:
    """A grader path as the bench file sees it (None: relative, with no bench folder known)."""
    p = Path(path)
    if p.is_absolute():
        return p
    return None if bench_dir is None else Path(bench_dir) / p


def format_seconds(seconds: float) -> str:
    return f"{seconds:g}s"


def tail(text: str, limit: int = TAIL_BYTES) -> str:
    """The last `limit` bytes of text (cut on a character boundary): where errors usually are."""
    data = text.encode("utf-8", "replace")
    if len(data) <= limit:
        return text
    return "…" + data[-limit:].decode("utf-8", "ignore")


def short(text: str, limit: int = 200) -> str:
    """A bounded excerpt for a reason line."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


_KIND_NAMES: dict[type, str] = {dict: "a mapping", list: "a list", tuple: "a list"}


def _kind(value: Any) -> str:
    return _KIND_NAMES.get(type(value), type(value).__name__)


# Where each check that takes tool names holds them (checks/session.py, checks/mastra.py):
# preflight reads them through `tool_names` to warn of a native name a harness never emits.
_TOOL_NAMES_IN = {
    "session:tool-used": ("value",),
    "session:tool-args-match": ("value",),
    "session:tool-sequence": ("value",),
    "session:tools-only": ("value",),
    "session:file-read": ("args.tools",),  # its default names the read tools of every harness
    "code-tool-call-accuracy": ("args.expectedTool", "args.expectedToolOrder"),
}


def tool_names(spec: CheckSpec) -> list[str]:
    """The tool names a check spec names (native or `action:…`), as written; [] for a check that names none."""
    out: list[str] = []
    for where in _TOOL_NAMES_IN.get(spec.type, ()):
        value = spec.value if where == "value" else (spec.args.get(where[len("args."):]) if isinstance(spec.args, dict) else None)
        for name in [value] if isinstance(value, str) else value if isinstance(value, list) else []:
            if isinstance(name, str) and name.strip():
                out.append(name.strip())
    return out
