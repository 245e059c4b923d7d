"""`session:*` — how the agent worked, not what it said. Every type scores 0/1.

The types do not all read the same thing, on purpose (the spec's gotcha):
`session:tool-used` reads `Session.invocations` (tool calls, MCP calls, skills and
subagent spawns, each under the tool name that started it), while `tool-args-match`,
`tool-sequence`, `tools-only` and `file-read` read only `Session.calls`, the lossy view
that holds tool and MCP calls and never a skill or a spawn.

Every check here that takes tool names (tool-used, tool-args-match, tool-sequence, tools-only,
file-read's args.tools) takes them in either form: a native name (`Edit`, `command_execution`)
matches that tool exactly, as it always did; a canonical one (`action:edit`, `action:read`,
`action:mcp:server/tool`; benchtape.core.canonical) matches every harness's calls of that action.

Two scoping keys recur:
- `args.thread`: `main`, a subagent's type or thread id, or omitted for every thread.
  A spawn row carries the subagent's own thread, so `tool-used Task` with `thread: main`
  is always false.
- `args.outcome`: `any` (default), `ok`, `error`. An unknown outcome (no result, or a
  result that did not say) satisfies neither `ok` nor `error`: a good `Read` records none
  (madbench's rule: claude-code says a call succeeded only by `is_error`, a Bash exit, or a
  `structuredPatch`). Under a native name that is the whole rule, as in madbench (`outcome: ok`
  fails on a good Read), and the reason counts the calls left out for it. A canonical name
  promises one verdict for one behaviour on every harness, and Codex reports every command's
  exit where Claude Code reports nothing for a good Read: so when the calls whose outcome went
  unrecorded could turn the verdict either way, a canonical name's verdict is ERROR (could not
  be graded on this harness), naming them, never a FAIL (or PASS) that rests on them.

Every `session:<verb>` also loads as `trajectory:<verb>`, and `skill-used` as
`session:skill-used`, so pre-rename bench files keep loading under the canonical type.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Iterable

from benchtape.checks.bounds import SPELLINGS, Bound, parse_bound
from benchtape.checks.common import args_of, family_register, no_value, richer_call_ids, short, text_value, tool_calls
from benchtape.checks.matchers import Matcher, MatcherError, compile_matcher, value_matches
from benchtape.checks.registry import CheckConfigError, CheckContext, Evaluator, alias
from benchtape.core.canonical import PREFIX, is_canonical, matches, spelling_problem
from benchtape.core.model import MAIN, Call, Invocation, Session
from benchtape.core.results import CheckSpec, Result

OUTCOMES = ("any", "ok", "error")
READ_TOOLS = ("Read", "NotebookRead", "View", "read_file")
READ_DEFAULT = (*READ_TOOLS, PREFIX + "read")  # file-read's default: the read tools, and a read in any harness (a plain `cat` of a shell command)
PATH_KEYS = ("file_path", "path", "notebook_path")
VERBS = (
    "tool-used",
    "tool-args-match",
    "tool-sequence",
    "tools-only",
    "file-read",
    "step-count",
    "turn-count",
    "turn-step-count",
    "subagent-used",
    "subagent-count",
    "skill-used",
    "image-sent",
    "goal-success",
)

THREAD_ARG = "main, a subagent's type or thread id (default: every thread)"
OUTCOME_ARG = "any | ok | error; unknown satisfies neither ok nor error (default any)"
BOUND_ARGS = {
    "gte": "a floor (alias min)",
    "lte": "a ceiling (alias max)",
    "eq": "an exact count (alone)",
}
BOUND_ALIASES = tuple(s for s in SPELLINGS if s not in BOUND_ARGS)  # `min`, `max`: read as gte, lte (the unknown-args warning knows them)


# ---------------------------------------------------------------- argument readers


def _admits(outcome_arg: str, outcome: str | None) -> bool:
    """Whether a call's recorded outcome passes the filter: unknown (None) passes only `any`."""
    return outcome_arg == "any" or outcome == outcome_arg


@dataclass(frozen=True)
class _Scope:
    """`args.thread` and `args.outcome`, read once for every check that narrows by them."""

    thread: str | None  # None: every thread
    outcome: str = "any"
    declared_outcome: str | None = None  # as written; None when args.outcome was absent

    @classmethod
    def of(cls, spec: CheckSpec, *, outcome: bool = True) -> _Scope:
        args = args_of(spec)
        thread = args.get("thread")
        if thread is not None:
            if not isinstance(thread, str) or not thread.strip():
                raise CheckConfigError(f"{spec.type}: args.thread must be main, a subagent's type or its thread id, got {thread!r}")
            thread = thread.strip()
        if not outcome:
            return cls(thread)
        value = args.get("outcome", "any")
        if value not in OUTCOMES:
            raise CheckConfigError(f"{spec.type}: args.outcome must be one of any, ok, error; got {value!r}")
        return cls(thread, value, value if "outcome" in args else None)

    def evidence(self) -> dict[str, Any]:
        """The scoping keys, only when declared: an absent key means not narrowed."""
        ev: dict[str, Any] = {}
        if self.thread is not None:
            ev["thread"] = self.thread
        if self.declared_outcome is not None:
            ev["outcome"] = self.declared_outcome
        return ev

    def phrase(self) -> str:
        """" with outcome ok in thread main", the parts that narrow, for a reason line."""
        qualifier = f" with outcome {self.outcome}" if self.outcome != "any" else ""
        return qualifier + (f" in thread {self.thread}" if self.thread else "")

    def calls(self, session: Session) -> list[Call]:
        """Tool and MCP calls in scope: never a skill or a spawn, whatever the adapter recorded."""
        return [c for c in tool_calls(session) if session.in_thread(c.thread, self.thread) and _admits(self.outcome, c.outcome)]

    def unrecorded(self, session: Session) -> list[Call]:
        """The thread's calls that `args.outcome` left out only because the harness recorded no
        outcome for them (none under `any`): what a verdict must name rather than count as 0."""
        if self.outcome == "any":
            return []
        return [c for c in tool_calls(session) if session.in_thread(c.thread, self.thread) and c.outcome is None]


def _names(spec: CheckSpec, what: str = "tool") -> list[str]:
    """`value` as a non-empty list of names: one string, or a list of strings."""
    value = spec.value
    names = [value] if isinstance(value, str) else value
    if not isinstance(names, list) or not names:
        raise CheckConfigError(f"{spec.type}: value must name a {what} or list {what}s, e.g. value: [Read, Edit]; got {value!r}")
    bad = [n for n in names if not isinstance(n, str) or not n.strip()]
    if bad:
        raise CheckConfigError(f"{spec.type}: every entry of value must be a {what} name (a non-empty string); got {bad[0]!r}")
    names = [n.strip() for n in names]
    _canonical_spellings(spec, names)
    return names


def _canonical_spellings(spec: CheckSpec, names: list[str]) -> None:
    """Refuse an `action:…` name that names no canonical action (a typo would never match)."""
    for name in names:
        problem = spelling_problem(name) if is_canonical(name) else None
        if problem:
            raise CheckConfigError(f"{spec.type}: {problem}")


def _matcher(names: list[str]) -> Any:
    """A predicate (tool, canonical) -> bool: a native name matches its tool exactly, a
    canonical one (`action:edit`) every harness's calls of that action."""
    native = frozenset(n for n in names if not is_canonical(n))
    canonical = [n for n in names if is_canonical(n)]
    if not canonical:
        return lambda tool, c: tool in native
    return lambda tool, c: tool in native or any(matches(n, tool, c) for n in canonical)


def _invocations(session: Session) -> list[Invocation]:
    """Every invocation once: a plain tool call that a skill or spawn row also recorded is
    dropped, so tool-used counts it under the spawn row's thread (the subagent's)."""
    invocations = session.invocations
    richer = richer_call_ids(session)
    if not richer:
        return invocations
    return [i for i in invocations if not (i.kind in ("tool", "mcp") and i.call_id in richer)]


def _whole_number_value(spec: CheckSpec, what: str) -> int:
    """`value` as a whole number ≥ 1 (default 1): the fewest spawns or images that pass."""
    n = 1 if spec.value is None else spec.value
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise CheckConfigError(f"{spec.type}: value must be {what}; got {spec.value!r}")
    return n


def _counted(n: int, bound: Bound, said: str, evidence: dict[str, Any]) -> Result:
    """A count against its bound: `<said>, wanted <bound>[: why it broke]`."""
    broken = bound.violation(n)
    verdict = f"{said}, wanted {bound.describe()}"
    return Result.of(broken is None, verdict + (f": {broken}" if broken else ""), evidence)


_reg = family_register("session", "session")


def _times(n: int) -> str:
    return "once" if n == 1 else f"{n} times"


def _decided(bound: Bound, low: int, high: int) -> bool:
    """Whether every count from `low` to `high` gets the same verdict: a bound is one interval,
    so all pass when both ends do, and all fail when the range lies wholly beyond one end."""
    if bound.test(low) and bound.test(high):
        return True
    floor, ceiling = bound.floor, bound.ceiling
    return (floor is not None and high < floor) or (ceiling is not None and low > ceiling)


def _native_census(tools: list[str]) -> str:
    """`Read ×10, Glob ×3`: which native tools' calls these were, busiest first."""
    seen: dict[str, int] = {}
    for t in tools:
        seen[t] = seen.get(t, 0) + 1
    return ", ".join(f"{t} ×{n}" for t, n in sorted(seen.items(), key=lambda kv: (-kv[1], kv[0])))


def _unrecorded(tools: list[str]) -> str:
    """`, 15 with no recorded outcome: Read ×10, …`: why the count is low (unknown ≠ ok), so a
    good Read under `outcome: ok` never fails as a silent 0."""
    return f", {len(tools)} with no recorded outcome ({_native_census(tools)}): unknown satisfies neither ok nor error" if tools else ""


def _ungradable(name: str, outcome: str, n: int, tools: list[str], harness: str | None, why: str) -> str:
    """An ERROR's reason: a canonical name asked for an outcome the harness did not record."""
    who = harness or "the harness"
    return (
        f"{name}: cannot be graded with outcome {outcome} on {who}: {n} call(s) had outcome {outcome} and {len(tools)} "
        f"had none recorded ({_native_census(tools)}; {who} does not say whether they succeeded), so {why}. "
        f"A canonical name grades alike on every harness; use outcome: any, or the native tool name for madbench's rule "
        f"(unknown satisfies neither ok nor error)"
    )


# ---------------------------------------------------------------- tool-used


@_reg(
    "tool-used",
    summary="every named tool was invoked, counted per tool (no bound: each at least once)",
    reads="session.invocations: tool calls, MCP calls, skills and subagent spawns under the tool that started them",
    args={"thread": THREAD_ARG, "outcome": OUTCOME_ARG, **BOUND_ARGS},
    accepts=BOUND_ALIASES,
    example="- type: session:tool-used\n  value: [Read, Edit]\n  args: {gte: 1, thread: main}",
    errors=["value missing or not a name/list", "a bound that has no single reading", "args.outcome not any|ok|error"],
)
def tool_used(spec: CheckSpec) -> Evaluator:
    tools = _names(spec)
    declared = parse_bound(args_of(spec), spec.type)
    bound = declared or Bound(gte=1)
    scope = _Scope.of(spec)
    outcome = scope.outcome
    # what the evidence and reason say of the scope and bound: the same for every session
    narrowed = {**scope.evidence(), **(declared.evidence() if declared else {})}
    phrase, wanted = scope.phrase(), bound.describe()
    canonical = [t for t in dict.fromkeys(tools) if is_canonical(t)]

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        everything = _invocations(session)
        in_scope = everything if scope.thread is None else [i for i in everything if session.in_thread(i.thread, scope.thread)]
        attempted = {t: 0 for t in tools if not is_canonical(t)}  # native names first: a call's own tool is looked up
        counts = dict(attempted)
        attempted.update((t, 0) for t in canonical)
        counts.update((t, 0) for t in canonical)
        census = {"ok": 0, "error": 0, "unknown": 0}
        unknown: dict[str, list[str]] = {t: [] for t in attempted}  # per name: the native tools of its calls with no outcome
        for inv in in_scope:
            tool = inv.tool
            if not canonical:  # native names only (most benches): a call's own tool, or nothing
                if tool not in attempted:
                    continue
                hits = [tool]
            else:
                hits = [tool] if tool in attempted else []
                hits += [t for t in canonical if matches(t, tool, inv.canonical)]
                if not hits:
                    continue
            # inv.outcome, inlined: a session has a hundred of these
            got = ("error" if inv.is_error else "ok") if inv.has_result and inv.is_error is not None else None
            census[got or "unknown"] += 1
            for hit in hits:
                attempted[hit] += 1
                if outcome == "any" or got == outcome:
                    counts[hit] += 1
                elif got is None:
                    unknown[hit].append(tool)
        evidence = {
            "counts": counts,
            "counts_attempted": attempted,
            "calls_in_scope": len(in_scope),
            "outcome_census": census,
            **narrowed,
        }
        for tool in tools:
            n, unsaid = counts[tool], unknown[tool]
            if unsaid and is_canonical(tool) and not _decided(bound, n, n + len(unsaid)):
                return Result.error(_ungradable(tool, outcome, n, unsaid, session.harness, f"the count is somewhere from {n} to {n + len(unsaid)}, wanted {wanted}"), evidence)
            broken = bound.violation(n)
            if broken:
                tried = f" ({attempted[tool]} attempted{_unrecorded(unsaid)})" if outcome != "any" else ""
                return Result.of(False, f"{tool}: invoked {_times(n)}{phrase}{tried}, wanted {wanted}: {broken}", evidence)
        used = ", ".join(f"{t} {_times(counts[t])}" for t in tools)
        return Result.of(True, f"{used}{phrase} (each {wanted})", evidence)

    return evaluate


# ---------------------------------------------------------------- tool-args-match


@_reg(
    "tool-args-match",
    summary="some call to the tool had arguments matching every expectation (a subset of its keys)",
    reads="session.calls (never skills or subagent spawns)",
    args={
        "args": "map of argument name -> expected value: exact, or a matcher string (exact:, glob:, suffix:, contains:); required",
        "thread": THREAD_ARG,
        "outcome": OUTCOME_ARG,
    },
    example="- type: session:tool-args-match\n  value: Read\n  args:\n    args: {file_path: 'glob:**/src/app.py'}",
    errors=["value is not a tool name", "args.args missing, empty or not a map", "a glob that does not compile"],
)
def tool_args_match(spec: CheckSpec) -> Evaluator:
    tool = text_value(spec, "be the tool's name, e.g. value: Read").strip()
    _canonical_spellings(spec, [tool])
    named = _matcher([tool])
    expected = args_of(spec).get("args")
    if not isinstance(expected, dict) or not expected:
        raise CheckConfigError(
            f"{spec.type}: args.args is required: a map of the arguments to match, e.g. args: {{args: {{file_path: 'suffix:app.py'}}}}; "
            f"got {expected!r}"
        )
    wanted: dict[str, Any] = {}
    for key, want in expected.items():
        if isinstance(want, str):
            try:
                wanted[str(key)] = compile_matcher(want)
            except MatcherError as exc:
                raise CheckConfigError(f"{spec.type}: args.args.{key}: {exc}") from exc
        else:
            wanted[str(key)] = want
    scope = _Scope.of(spec)
    # an action's path argument is read as a path, in every harness: the input's own when it has
    # one (relative or absolute alike), else the files the call acted on (Codex's file_change has
    # no file_path; its paths are absolute), resolved against the work dir as file-read does
    by_path = {k for k, want in wanted.items() if is_canonical(tool) and k in PATH_KEYS and isinstance(want, Matcher)}

    def mismatch(call: Call, root: str | None = None) -> str | None:
        for key, want in wanted.items():
            if key in by_path:
                paths = [call.input[key]] if isinstance(call.input.get(key), str) else [p for p, _ in call.canonical.files]
                if not paths:
                    return f"{key} is absent, and the call acted on no file"
                if not any(_path_hit(want, p, root) for p in paths):
                    return f"{key} was {short(repr(paths[0] if len(paths) == 1 else paths), 120)}, wanted {want}"
                continue
            if key not in call.input:
                return f"{key} is absent"
            if not value_matches(want, call.input[key]):
                return f"{key} was {short(repr(call.input[key]), 120)}, wanted {want}"
        return None

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        root = os.path.realpath(session.work_dir) if session.work_dir else None
        calls = [c for c in scope.calls(session) if named(c.tool, c.canonical)]
        evidence: dict[str, Any] = {
            "tool": tool,
            "expected": {k: (str(v) if isinstance(v, Matcher) else v) for k, v in wanted.items()},
            "calls_of_tool": len(calls),
            "candidates": [{k: _excerpt(c.input.get(k)) for k in wanted} for c in calls[:10]],
            **scope.evidence(),
        }
        misses = []
        for i, call in enumerate(calls, 1):
            why = mismatch(call, root)
            if why is None:
                evidence["matched_call"] = {"seq": call.seq, "thread": call.thread, "index": i}
                return Result.of(True, f"{tool} call {i} of {len(calls)} matched", evidence)
            misses.append(why)
        unsaid = [c.tool for c in scope.unrecorded(session) if named(c.tool, c.canonical) and mismatch(c, root) is None]
        if unsaid and is_canonical(tool):
            return Result.error(_ungradable(tool, scope.outcome, 0, unsaid, session.harness, "whether one matched is unknown"), evidence)
        note = f" ({len(unsaid)} matching call(s) with no recorded outcome ({_native_census(unsaid)}): unknown satisfies neither ok nor error)" if unsaid else ""
        if not calls:
            return Result.of(False, f"no {tool} call{scope.phrase()}{note}", evidence)
        return Result.of(False, f"none of the {len(calls)} {tool} call(s) matched; the first: {misses[0]}{note}", evidence)

    return evaluate


def _excerpt(value: Any, limit: int = 200) -> Any:
    """An argument as evidence: itself when small, else a bounded excerpt of its text
    (a Write's content can be megabytes, and evidence is kept with every verdict)."""
    if isinstance(value, str):
        return short(value, limit)
    if isinstance(value, (dict, list)):
        text = repr(value)
        return value if len(text) <= limit else short(text, limit)
    return value


# ---------------------------------------------------------------- tool-sequence


@_reg(
    "tool-sequence",
    summary="the named tools were called in this order (a subsequence: other calls may come between)",
    reads="session.calls (never skills or subagent spawns)",
    args={"thread": THREAD_ARG},
    example="- type: session:tool-sequence\n  value: [Read, Edit, Bash]",
    errors=["value is not a non-empty list of tool names"],
)
def tool_sequence(spec: CheckSpec) -> Evaluator:
    expected = _names(spec)
    scope = _Scope.of(spec, outcome=False)

    wants = [_matcher([want]) for want in expected]

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        calls = scope.calls(session)
        observed = [c.tool for c in calls]
        positions: list[int] = []
        at = 0
        for want in wants:
            at = next((i + 1 for i in range(at, len(calls)) if want(calls[i].tool, calls[i].canonical)), 0)
            if not at:
                break
            positions.append(at)
        evidence = {"expected": expected, "observed": observed, "matched": len(positions), "positions": positions, **scope.evidence()}
        if len(positions) == len(expected):
            return Result.of(True, f"{' → '.join(expected)} in order (calls {', '.join(map(str, positions))} of {len(observed)})", evidence)
        missing = expected[len(positions)]
        step = f"step {len(positions) + 1} of {len(expected)}"
        after = f" after {expected[len(positions) - 1]} (call {positions[-1]} of {len(observed)})" if positions else ""
        return Result.of(False, f"{missing} ({step}) was never called{after}", evidence)

    return evaluate


# ---------------------------------------------------------------- tools-only


def _with_polls(allowed: list[str]) -> list[str]:
    """A fence that allows commands (`action:shell`) allows waiting on their output too
    (`action:poll`: BashOutput, codex's empty write_stdin): a poll runs nothing of its own,
    and the command it waits on was judged when it started."""
    shell, poll = PREFIX + "shell", PREFIX + "poll"
    return [*allowed, poll] if shell in allowed and poll not in allowed else allowed


@_reg(
    "tools-only",
    summary="an allowlist fence: every call in scope was to one of the named tools (pair it with an activity check)",
    reads="session.calls, and session.subagents for subagents whose calls were not captured",
    args={"thread": THREAD_ARG, "outcome": OUTCOME_ARG},
    example="- type: session:tools-only\n  value: [Read, Grep, Glob]",
    errors=["value: [] (an empty allowlist; for 'no tool at all' use session:step-count with eq: 0)"],
)
def tools_only(spec: CheckSpec) -> Evaluator:
    if isinstance(spec.value, list) and not spec.value:
        raise CheckConfigError(
            f"{spec.type}: value is an empty list, which allows no tool at all; name the allowed tools, "
            f"or write session:step-count with args: {{eq: 0}} for a run that must call nothing"
        )
    allowed = _names(spec)
    admitted = _matcher(_with_polls(allowed))
    scope = _Scope.of(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        calls = scope.calls(session)
        violations = [
            {"call": i, "of": len(calls), "tool": c.tool, "action": c.canonical.action, "thread": c.thread, "seq": c.seq}
            for i, c in enumerate(calls, 1)
            if not admitted(c.tool, c.canonical)
        ]
        blind = [
            {"thread": sub.thread, "agent": sub.agent}
            for sub in session.subagents.values()
            if session.in_thread(sub.thread, scope.thread) and not sub.calls
        ]
        evidence = {
            "allowed": allowed,
            "calls_seen": len(calls),
            "violations": violations,
            "subagents_without_calls": blind,
            **scope.evidence(),
        }
        if violations:
            first = violations[0]
            where = f" in thread {first['thread']}" if first["thread"] != MAIN else ""
            more = f"; {len(violations)} calls outside the set in all" if len(violations) > 1 else ""
            return Result.of(False, f"{first['tool']} is not allowed (call {first['call']} of {first['of']}){where}{more}", evidence)
        if blind:
            sub = blind[0]
            name = f"{sub['agent']} ({sub['thread']})" if sub["agent"] else sub["thread"]
            return Result.of(
                False,
                f"subagent {name} ran but this capture recorded none of its tool calls: the fence cannot be graded",
                evidence,
            )
        if not calls:
            return Result.of(True, "no tool call in scope: nothing to check (pair this fence with an activity check)", evidence)
        return Result.of(True, f"all {len(calls)} calls in scope were to allowed tools", evidence)

    return evaluate


# ---------------------------------------------------------------- file-read


@_reg(
    "file-read",
    summary="the agent read the file (a path relative to the work dir, absolute, or a matcher; with no work dir recorded, a relative path is compared as written)",
    reads="session.calls: a native read tool's file_path / path / notebook_path argument; an action:read call's files (a plain cat/head/sed -n of a shell command too)",
    args={
        "tools": f"read tools whose path argument counts, native or canonical (default {', '.join(READ_DEFAULT)})",
        "thread": THREAD_ARG,
        "outcome": OUTCOME_ARG,
    },
    example="- type: session:file-read\n  value: src/app.py",
    errors=["value is not a path or matcher", "args.tools empty or not names", "a glob that does not compile"],
)
def file_read(spec: CheckSpec) -> Evaluator:
    """A relative value is resolved against the session's work dir. A session that recorded
    none (a `codex exec --json` capture says nowhere where it ran) is still graded, not an
    ERROR: the value is compared as written, normalized, so `test.js` matches a read of
    `test.js` or `./test.js`. It never matches an absolute `/…/test.js` there, since which
    project that file was in is unknown (a node_modules/x/test.js would pass too); the FAIL
    says how many absolute paths were left uncompared, and `suffix:/test.js` matches them."""
    value = text_value(spec, "be the path read (relative to the work dir) or a matcher")
    try:
        matcher = compile_matcher(value)
    except MatcherError as exc:
        raise CheckConfigError(f"{spec.type}: value: {exc}") from exc
    tools = args_of(spec).get("tools", list(READ_DEFAULT))
    if isinstance(tools, str):
        tools = [tools]
    if not isinstance(tools, list) or not tools or not all(isinstance(t, str) and t for t in tools):
        raise CheckConfigError(f"{spec.type}: args.tools must be a non-empty list of tool names, e.g. [Read]; got {tools!r}")
    _canonical_spellings(spec, tools)
    read_tools = {t for t in tools if not is_canonical(t)}
    read_kinds = {t[len(PREFIX):] for t in tools if is_canonical(t)}
    scope = _Scope.of(spec)

    def paths_read(call: Call) -> list[str]:
        """A native read tool's path argument (as before); a canonical read's files of that kind."""
        if call.tool in read_tools:
            p = _path_arg(call)
            return [p] if p is not None else []
        if read_kinds:
            return [p for p, kind in call.canonical.files if kind in read_kinds]
        return []
    literal = matcher.kind == "exact"

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        work_dir = session.work_dir
        root = os.path.realpath(work_dir) if work_dir else None
        # with no work dir a relative value is compared as written (normalized): _resolve does so
        expected = _resolve(matcher.pattern, root) if literal else str(matcher)

        def hit(path: str) -> bool:
            return _path_hit(matcher, path, root)

        reads = [(c, p) for c in scope.calls(session) for p in paths_read(c)]
        evidence = {
            "work_dir": work_dir,
            "expected_resolved": expected,
            "paths_read": [p for _, p in reads],
            **scope.evidence(),
        }
        for call, path in reads:
            if hit(path):
                evidence["matched"] = {"tool": call.tool, "path": path, "seq": call.seq, "thread": call.thread}
                return Result.of(True, f"{call.tool} read {path}", evidence)
        unsaid = [c for c in scope.unrecorded(session) for p in paths_read(c) if hit(p)]
        if unsaid and all(c.tool not in read_tools for c in unsaid):  # found only through a canonical name
            return Result.error(_ungradable(", ".join(sorted(t for t in tools if is_canonical(t))), scope.outcome, 0, [c.tool for c in unsaid], session.harness, f"whether {value} was read with outcome {scope.outcome} is unknown"), evidence)
        shown = value if not literal else expected
        if not reads and not unsaid:
            return Result.of(False, f"{shown} was not read: no {'/'.join(tools)} call with a path in scope", evidence)
        return Result.of(False, f"{shown} was not read ({_others(reads, unsaid, root, literal and not os.path.isabs(expected))})", evidence)

    return evaluate


def _others(reads: list[tuple[Call, str]], unsaid: list[Call], root: str | None, relative: bool) -> str:
    """What was read instead: distinct paths (a file read twice is one path), the reads of it
    left out for an unrecorded outcome, and, with no work dir to anchor a relative value, the
    absolute paths it was not compared with."""
    distinct = list(dict.fromkeys(p for _, p in reads))
    parts = [f"{len(distinct)} other path(s) read"]
    if unsaid:
        parts.append(f"read {_times(len(unsaid))} with no recorded outcome ({_native_census([c.tool for c in unsaid])}): unknown satisfies neither ok nor error")
    absolute = [p for p in distinct if os.path.isabs(p)]
    if root is None and relative and absolute:
        parts.append(f"the session recorded no work dir, so {len(absolute)} absolute path(s) were not compared with a relative one; write suffix:/<path> to match them")
    return "; ".join(parts)


def _path_hit(want: Matcher, path: str, root: str | None) -> bool:
    """Whether `path` (as a call reported it) is the file `want` names, as file-read compares:
    an exact value resolved against the work dir, a matcher tried on the path as written, real,
    and relative to the work dir."""
    resolved = _resolve(path, root)
    if want.kind == "exact":
        return resolved == _resolve(want.pattern, root)
    forms = {path, resolved}
    if root and (resolved + os.sep).startswith(root + os.sep):
        forms.add(os.path.relpath(resolved, root))
    return any(want.matches(f) for f in forms)


def _path_arg(call: Call) -> str | None:
    for key in PATH_KEYS:
        p = call.input.get(key)
        if isinstance(p, str) and p:
            return p
    return None


def _resolve(path: str, root: str | None) -> str:
    """The real path a reported path names, so `/var/...` and `/private/var/...` compare equal.
    With no root a relative path stays relative, only normalized (`./a.js` is `a.js`): it is
    compared as written, never resolved against the grader's own cwd."""
    if not os.path.isabs(path):
        if root is None:  # nothing to anchor it to; never the grader's own cwd
            return os.path.normpath(path)
        path = os.path.join(root, path)
    return os.path.realpath(path)


# ---------------------------------------------------------------- counts: steps and turns


@_reg(
    "step-count",
    summary="the main thread's tool-call count is inside the bound (subagents' calls excluded)",
    reads="session.metrics.step_count (main-thread tool calls)",
    args=BOUND_ARGS,
    accepts=BOUND_ALIASES,
    example="- type: session:step-count\n  args: {gte: 1, lte: 30}",
    errors=["no bound (a bound is required)", "a bound that has no single reading", "a value (it takes none)"],
)
def step_count(spec: CheckSpec) -> Evaluator:
    no_value(spec)
    bound = parse_bound(args_of(spec), spec.type, required=True)
    assert bound is not None

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        n = session.metrics.step_count
        return _counted(n, bound, f"the main thread made {n} tool call(s)", {"step_count": n, **bound.evidence()})

    return evaluate


@_reg(
    "turn-count",
    summary="the number of exchanges (user turns) is inside the bound (no bound: at least 1)",
    reads="session.turns",
    args=BOUND_ARGS,
    accepts=BOUND_ALIASES,
    example="- type: session:turn-count\n  args: {lte: 3}",
    errors=["a bound that has no single reading", "a value (it takes none)"],
)
def turn_count(spec: CheckSpec) -> Evaluator:
    no_value(spec)
    declared = parse_bound(args_of(spec), spec.type)
    bound = declared or Bound(gte=1)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        n = len(session.turns)
        return _counted(n, bound, f"{n} turn(s)", {"turn_count": n, **(declared.evidence() if declared else {})})

    return evaluate


@_reg(
    "turn-step-count",
    summary="tool calls per turn: the ceiling tested on the busiest turn, the floor on the quietest (no bound: at least 1)",
    reads="session.turns[].steps (main-thread tool calls per turn)",
    args=BOUND_ARGS,
    accepts=BOUND_ALIASES,
    example="- type: session:turn-step-count\n  args: {gte: 1, lte: 15}",
    errors=["a bound that has no single reading", "a value (it takes none)"],
)
def turn_step_count(spec: CheckSpec) -> Evaluator:
    no_value(spec)
    declared = parse_bound(args_of(spec), spec.type)
    bound = declared or Bound(gte=1)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        steps = [t.steps for t in session.turns]
        if not steps:
            return Result.error(f"{spec.type}: the session recorded no turn, so there is no turn to count steps in")
        busiest = max(range(len(steps)), key=lambda i: (steps[i], -i))
        quietest = min(range(len(steps)), key=lambda i: (steps[i], i))
        evidence = {
            "steps_per_turn": steps,
            "busiest": {"turn": busiest + 1, "steps": steps[busiest]},
            "quietest": {"turn": quietest + 1, "steps": steps[quietest]},
            **(declared.evidence() if declared else {}),
        }
        broken = []
        ceiling = bound.ceiling_violation(steps[busiest])
        if ceiling:
            broken.append(f"the ceiling broke on turn {busiest + 1} (the busiest): {ceiling}")
        floor = bound.floor_violation(steps[quietest])
        if floor:
            broken.append(f"the floor broke on turn {quietest + 1} (the quietest): {floor}")
        if broken:
            return Result.of(False, "; ".join(broken), evidence)
        return Result.of(True, f"every one of {len(steps)} turn(s) took {bound.describe()} step(s) (from {steps[quietest]} to {steps[busiest]})", evidence)

    return evaluate


# ---------------------------------------------------------------- subagents


def _agent_arg(spec: CheckSpec) -> str | None:
    agent = args_of(spec).get("agent")
    if agent is not None and (not isinstance(agent, str) or not agent.strip()):
        raise CheckConfigError(f"{spec.type}: args.agent must be a subagent's type or thread id, got {agent!r}")
    return agent.strip() if agent else None


def _spawned(session: Session, agent: str | None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Every subagent seen, and those `agent` names (by type or thread id; None names all)."""
    seen = [{"thread": s.thread, "agent": s.agent} for s in session.subagents.values()]
    matched = [s for s in seen if agent is None or agent in (s["thread"], s["agent"])]
    return seen, matched


@_reg(
    "subagent-used",
    summary="a subagent was spawned (of the named type or id, when args.agent is set)",
    reads="session.subagents",
    args={"agent": "the subagent's type or thread id (default: any subagent)"},
    example="- type: session:subagent-used\n  args: {agent: general-purpose}",
    errors=["args.agent not a non-empty string", "a value (the subagent is named in args.agent)"],
)
def subagent_used(spec: CheckSpec) -> Evaluator:
    if spec.value is not None:
        raise CheckConfigError(f"{spec.type}: takes no 'value' (got {spec.value!r}); to name the subagent, write args: {{agent: {spec.value!r}}}")
    agent = _agent_arg(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        seen, matched = _spawned(session, agent)
        evidence: dict[str, Any] = {"subagents": seen, "matched": len(matched)}
        if agent is not None:
            evidence["agent"] = agent
        what = f"{agent} subagent" if agent else "subagent"
        if matched:
            return Result.of(True, f"a {what} was spawned ({len(matched)} in all)", evidence)
        others = f"; spawned: {', '.join(str(s['agent'] or s['thread']) for s in seen)}" if seen else ""
        return Result.of(False, f"no {what} was spawned{others}", evidence)

    return evaluate


@_reg(
    "subagent-count",
    summary="at least `value` subagents were spawned (of the named type or id, when args.agent is set)",
    reads="session.subagents",
    args={"agent": "the subagent's type or thread id (default: any subagent)"},
    example="- type: session:subagent-count\n  value: 2\n  args: {agent: Explore}",
    errors=["value not a positive whole number"],
)
def subagent_count(spec: CheckSpec) -> Evaluator:
    minimum = _whole_number_value(spec, "a positive whole number (the fewest spawns that pass), e.g. value: 2")
    agent = _agent_arg(spec)

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        seen, matched = _spawned(session, agent)
        evidence: dict[str, Any] = {"spawns": len(matched), "minimum": minimum, "subagents": seen}
        if agent is not None:
            evidence["agent"] = agent
        what = f"{agent} subagent(s)" if agent else "subagent(s)"
        return Result.of(len(matched) >= minimum, f"{len(matched)} {what} spawned, wanted at least {minimum}", evidence)

    return evaluate


# ---------------------------------------------------------------- skills and images


@_reg(
    "skill-used",
    summary="the skill was invoked and the tool did not answer every attempt with an error",
    reads="session.skills",
    example="- type: session:skill-used\n  value: security-review",
    errors=["value not a skill name"],
)
def skill_used(spec: CheckSpec) -> Evaluator:
    name = text_value(spec, "be the skill's name, e.g. value: security-review")
    wanted = name.strip().casefold()

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        attempts = [s for s in session.skills if str(s.get("name") or "").casefold() == wanted]
        failed = [s for s in attempts if s.get("result_ok") is False]
        evidence = {
            "skill": name,
            "skills_seen": [s.get("name") for s in session.skills],
            "attempts": len(attempts),
            "attempts_failed": len(failed),
        }
        if not attempts:
            return Result.of(False, f"skill {name} was never invoked", evidence)
        if len(failed) == len(attempts):
            return Result.of(False, f"skill {name} was invoked {_times(len(attempts))} and every attempt ended in an error", evidence)
        return Result.of(True, f"skill {name} was invoked {_times(len(attempts))}", evidence)

    return evaluate


def _images(session: Session) -> Iterable[str]:
    for action in session.actions:
        if action.kind != "message.user":
            continue
        for att in action.payload("message.user").get("attachments") or []:
            media = att.get("media_type") if isinstance(att, dict) else None
            if isinstance(media, str) and media.startswith("image/"):
                yield media


@_reg(
    "image-sent",
    summary="at least `value` images reached the model as user-message attachments",
    reads="message.user actions' data.attachments[].media_type (image/...)",
    example="- type: session:image-sent\n  value: 1",
    errors=["value not a whole number >= 1"],
)
def image_sent(spec: CheckSpec) -> Evaluator:
    minimum = _whole_number_value(spec, "a whole number of images, at least 1 (default 1)")

    def evaluate(session: Session, ctx: CheckContext) -> Result:
        media = list(_images(session))
        evidence = {"images_sent": len(media), "minimum": minimum, "media_types": sorted(set(media))}
        return Result.of(len(media) >= minimum, f"{len(media)} image(s) sent, wanted at least {minimum}", evidence)

    return evaluate


# ---------------------------------------------------------------- refused


@_reg(
    "goal-success",
    summary="refused: whether the goal was met is a judgment, not a fact in the session; use llm-rubric",
    reads="nothing",
    example="- type: llm-rubric\n  value: The agent fixed the failing test without deleting it.",
    errors=["always refused at construction"],
)
def goal_success(spec: CheckSpec) -> Evaluator:
    raise CheckConfigError(
        f"{spec.type}: refused: whether the goal was met is a judgment no session field records; "
        f"use llm-rubric with a rubric that states the goal"
    )


for _verb in VERBS:
    alias(f"trajectory:{_verb}", f"session:{_verb}")
alias("skill-used", "session:skill-used")
