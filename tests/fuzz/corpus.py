"""The fuzz corpus, generated with hypothesis: three kinds of hostile input, each a mutation
of something real (issue 15).

- `bench`: bench and Eval files, mutated as YAML (a value replaced by one of the wrong type
  or shape, a key dropped or added) and as text (a line repeated, so a key is duplicated;
  an alias bomb, deep nesting or an alias cycle spliced in; the text cut or garbled);
- `lines`: small transcripts in the four native formats, lines mutated as JSON (a `type`
  that is a list, a field of the wrong type) and as text (cut, U+2028 inserted, joined);
- `tar`: crafted snapshot tars (hostile names, types, links, pax headers), some garbled;
- `harbor`: Harbor task folders with wrong task.toml values, links out of the folder, and
  hostile reward files (issue 44);
- `repo`: git repositories whose changed files have hostile names (issue 44).

Only hypothesis's generate phase is used: the corpus is data (a seed makes it repeatable),
run by fuzzkit against any checkout, so the same corpus measures before and after.
"""

from __future__ import annotations

import copy
import functools
import gzip
import io
import json
import tarfile
from pathlib import Path
from typing import Any

import orjson
import yaml
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st
from realdatakit import find_realdata

ROOT = Path(__file__).resolve().parents[2]
REALDATA = find_realdata() or ROOT / "tests" / "realdata"

# ---------------------------------------------------------------- seeds

RICH_BENCH = """\
description: every part of a bench, to mutate
harness: mock
params: {variant: a, limit: 3}
harness_config: {system_prompt: be brief, environment: {probe: true}}
metrics:
  - {name: spend, source: session.cost, aggregate: sum, better: lower}
budget: 1.5
token_estimate: 1000
defaults: {sandbox: home, interactive: false, timeout: 60s}
defaultScenario:
  checks:
    - {type: contains, value: done}
scenarios:
  - name: one
    prompt: "do {{variant}}"
    testdata: td
    cwd: .
    vars: {answer: 42, list: [1, 2]}
    metadata: {owner: me}
    options: {transform: output.trim()}
    sandbox:
      level: home
      env: {A: "1"}
      share: {env: [HOME], secret_env: [TOKEN], paths: [{from: td, to: shared, access: copy}]}
    mock:
      steps:
        - {tool: Write, input: {file_path: a.txt, content: x}}
        - {subagent: {agent: helper, prompt: p, steps: [{say: hi}]}}
        - {say: done}
      metrics: {cost_usd: 0.01, tokens_in: 10}
    checks:
      - type: assert-set
        checks:
          - {type: exec, args: {cmd: [test, -f, a.txt]}, weight: 2}
          - {type: regex, value: "d.ne", threshold: 0.5}
      - {type: cost, threshold: 0.05, readout: true}
  - name: two
    prompt: p
    timeout: 5m
    staging_timeout: 30s
    sandbox: {level: container, image: python:3.12-slim, network: none, resources: {memory: 512m, cpus: 1, pids: 64}}
    follow_ups: []
    checks: [{type: session:tool-used, value: Edit}]
"""
EVAL = """\
description: an Eval over the bench beside it
bench: bench.yaml
control: {baseline: a, varies: [testdata/a.txt]}
runs:
  - {name: a, params: {variant: a}}
  - {name: b, params: {variant: b}}
  - {}
"""


@functools.cache
def seed_benches() -> list[str]:
    demo = (ROOT / "fixtures-red" / "demo" / "bench.yaml").read_text().replace("testdata: calc", "testdata: td")
    claude = RICH_BENCH.replace("harness: mock", "harness: claude-code").replace(
        "harness_config: {system_prompt: be brief, environment: {probe: true}}",
        "harness_config: {binary: claude, args: [--verbose], model: sonnet, system_prompt: be brief, settings: {}, env: {A: b}, plugins: [], mcp_servers: {}}",
    )
    codex = RICH_BENCH.replace("harness: mock", "harness: codex").replace(
        "harness_config: {system_prompt: be brief, environment: {probe: true}}", "harness_config: {binary: codex, args: [], model: o3, config: {}}"
    )
    return [RICH_BENCH, demo, claude, codex]


def _synthetic_lines() -> dict[str, list[str]]:
    return {
        "claude-stream-json": [
            '{"type":"system","subtype":"init","session_id":"s","tools":["Read"],"model":"m","cwd":"/w"}',
            '{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"a"}}],"usage":{"input_tokens":3,"output_tokens":2}},"session_id":"s"}',
            '{"type":"user","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"x"}]},"session_id":"s"}',
            '{"type":"result","subtype":"success","is_error":false,"result":"done","total_cost_usd":0.1,"num_turns":1,"session_id":"s"}',
        ],
        "claude-transcript": [
            '{"type":"user","message":{"role":"user","content":"hi"},"uuid":"u1","sessionId":"s","timestamp":"2025-01-01T00:00:00Z","cwd":"/w"}',
            '{"type":"assistant","message":{"id":"m1","role":"assistant","model":"m","content":[{"type":"text","text":"ok"}],"usage":{"input_tokens":3}},"uuid":"u2","sessionId":"s","timestamp":"2025-01-01T00:00:01Z"}',
            '{"type":"summary","summary":"s","leafUuid":"u2"}',
        ],
        "codex-exec-json": [
            '{"type":"thread.started","thread_id":"t"}',
            '{"type":"turn.started"}',
            '{"type":"item.started","item":{"id":"i1","type":"command_execution","command":"ls","status":"in_progress"}}',
            '{"type":"item.completed","item":{"id":"i1","type":"command_execution","command":"ls","exit_code":0,"aggregated_output":"a","status":"completed"}}',
            '{"type":"turn.completed","usage":{"input_tokens":3,"output_tokens":2}}',
        ],
        "codex-rollout": [
            '{"timestamp":"2025-01-01T00:00:00Z","type":"session_meta","payload":{"id":"s","cwd":"/w","cli_version":"0.1"}}',
            '{"timestamp":"2025-01-01T00:00:01Z","type":"event_msg","payload":{"type":"user_message","message":"hi"}}',
            '{"timestamp":"2025-01-01T00:00:02Z","type":"response_item","payload":{"type":"function_call","name":"exec_command","arguments":"{\\"cmd\\":\\"ls\\"}","call_id":"c1"}}',
            '{"timestamp":"2025-01-01T00:00:03Z","type":"response_item","payload":{"type":"function_call_output","call_id":"c1","output":"Process exited with code 0"}}',
            '{"timestamp":"2025-01-01T00:00:04Z","type":"event_msg","payload":{"type":"token_count","info":{"total_token_usage":{"input_tokens":3}}}}',
        ],
        # an ATIF document is one JSON value: one compact line, which the "json" mutation reaches into
        "atif": [json.dumps(ATIF_SEED), json.dumps({**ATIF_SEED, "extra": {"benchtape": {"started": {"scenario": "s"}, "after": [{"kind": "hook", "data": {}}]}}, "final_metrics": {"total_prompt_tokens": 9, "total_cached_tokens": 12}})],
    }


ATIF_SEED = {
    "schema_version": "ATIF-v1.8", "session_id": "s", "agent": {"name": "a", "version": "1", "tool_definitions": [{"function": {"name": "bash"}}]},
    "steps": [
        {"step_id": 1, "source": "user", "message": "hi"},
        {"step_id": 2, "source": "agent", "message": [{"type": "text", "text": "ok"}], "tool_calls": [{"tool_call_id": "c1", "function_name": "task", "arguments": {"prompt": "p"}}],
         "observation": {"results": [{"source_call_id": "c1", "content": "done", "subagent_trajectory_ref": [{"trajectory_id": "t1"}], "extra": {"tool_result_is_error": True}}]},
         "metrics": {"prompt_tokens": 3, "cached_tokens": 1, "extra": {"cache_creation_input_tokens": "x"}}, "extra": {"is_sidechain": True, "agent_id": 5}},
    ],
    "subagent_trajectories": [{"schema_version": "ATIF-v1.8", "trajectory_id": "t1", "agent": {"name": "b", "version": "1"}, "steps": [{"step_id": 1, "source": "agent", "message": "x", "extra": {"benchtape": {"kind": "final_output", "before": [{"kind": "metrics", "data": {"x": 1}}]}}}]}],
}


@functools.cache
def seed_lines() -> dict[str, list[str]]:
    """Real lines where the real transcripts are present (up to 40 per format, each under 20 kB), else synthetic."""
    out = _synthetic_lines()
    folders = {"claude-stream-json": "claude-stream-json", "claude-transcript": "claude-transcripts", "codex-exec-json": "codex-exec-json", "codex-rollout": "codex-rollout"}
    for fmt, folder in folders.items():
        real: list[str] = []
        for path in sorted((REALDATA / folder).rglob("*.jsonl")) if (REALDATA / folder).is_dir() else []:
            real += [line for line in path.read_text(errors="replace").split("\n") if 2 < len(line) < 20_000][:10]
        out[fmt] += real[:40]
    return out


# ---------------------------------------------------------------- hostile values

DEEP_LIST: Any = 1
for _ in range(150):
    DEEP_LIST = [DEEP_LIST]
BOMB = "{a: &a [l,l,l,l,l,l,l,l,l], b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b], d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c], e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d], f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e], g: &g [*f,*f,*f,*f,*f,*f,*f,*f,*f], h: &h [*g,*g,*g,*g,*g,*g,*g,*g,*g]}"
SPLICES = {"__BOMB__": BOMB, "__DEEP__": "[" * 2000 + "]" * 2000, "__CYCLE__": "&c [*c]", "__UNDEFINED__": "*nope", "__TAG__": "!!python/object:os.system x", "__BINARY__": "!!binary aGk="}
SCALARS = [
    0, -1, 7, 10**400, 1.5, float("inf"), True, False, None, "", " ", "x" * 5000, "/etc", "/", "../../..", "/dev/zero", "~",
    "{{undeclared}}", "{{variant}}", "5", "300", "1h2m", "a\0b", "line\u2028sep", "2021-02-30", "file:///etc/passwd", "file://../x",
    "container", "none", "copy", "ro", "sum", "session.cost", "claude-code", "codex", *SPLICES,
]
_scalar = st.sampled_from(SCALARS) | st.integers() | st.text(max_size=12)
hostile_value = st.one_of(
    st.sampled_from(SCALARS),
    _scalar,
    st.lists(_scalar, max_size=3),
    st.dictionaries(st.sampled_from(["level", "type", "checks", "from", "to", "steps", "name", "x"]) | st.text(max_size=6), _scalar, max_size=3),
    st.sampled_from([[], {}, DEEP_LIST, [{"type": 7}], {"level": [1]}]),
)

KEYS = ["type", "checks", "value", "args", "sandbox", "level", "share", "paths", "env", "image", "steps", "subagent", "source", "aggregate", "testdata", "prompt", "name", "timeout", "mock", "vars", "repo", "x-y", "bogus"]


def _paths(node: Any, prefix: tuple = ()) -> list[tuple]:
    """Every place in a document a value can be replaced or a key dropped."""
    out = [prefix]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, prefix + (k,))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, prefix + (i,))
    return out


def _at(doc: Any, path: tuple) -> Any:
    for p in path:
        doc = doc[p]
    return doc


@st.composite
def mutated_yaml(draw: Any, text: str) -> str:
    doc = yaml.safe_load(text)
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(doc)
        keyed = [p for p in paths if p and p[-1] in KEYS]  # half the time, a key the loader reads closely
        pool = keyed if keyed and draw(st.booleans()) else paths
        path = pool[draw(st.integers(0, len(pool) - 1))]
        op = draw(st.sampled_from(["replace", "replace", "replace", "drop", "add"]))
        if not path:
            continue
        parent, key = _at(doc, path[:-1]), path[-1]
        if op == "replace":
            parent[key] = copy.deepcopy(draw(hostile_value))
        elif op == "drop":
            del parent[key]
        elif isinstance(parent, dict):
            parent[draw(st.sampled_from(KEYS))] = copy.deepcopy(draw(hostile_value))
        else:
            parent.append(copy.deepcopy(draw(hostile_value)))
    out = yaml.safe_dump(doc, sort_keys=False, allow_unicode=True, width=10_000)
    for marker, splice in SPLICES.items():
        out = out.replace(marker, splice)
    return out


@st.composite
def garbled_text(draw: Any, text: str) -> str:
    lines = text.split("\n")
    for _ in range(draw(st.integers(1, 3))):
        i = draw(st.integers(0, len(lines) - 1))
        op = draw(st.sampled_from(["repeat", "repeat", "drop", "cut", "insert", "splice"]))
        if op == "repeat":  # a repeated `key:` line is a duplicate key
            lines.insert(i, lines[i])
        elif op == "drop":
            del lines[i]
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, len(lines[i])))]
        elif op == "insert":
            lines.insert(i, draw(st.text(max_size=30)))
        else:
            indent = len(lines[i]) - len(lines[i].lstrip())
            lines.insert(i, " " * indent + f"x{i}: " + draw(st.sampled_from(list(SPLICES.values()))))
        if not lines:
            lines = [""]
    return "\n".join(lines)


@st.composite
def bench_input(draw: Any) -> dict[str, Any]:
    text = draw(st.sampled_from(seed_benches()))
    if draw(st.integers(0, 3)) > 0:
        text = draw(mutated_yaml(text))
    if draw(st.integers(0, 3)) == 0:
        text = draw(garbled_text(text))
    evalf = None
    if draw(st.integers(0, 3)) == 0:  # an Eval over the (mutated) bench, itself mutated
        evalf = EVAL
        if draw(st.booleans()):
            evalf = draw(mutated_yaml(evalf))
        else:
            evalf = draw(garbled_text(evalf))
    return {"bench": text, "eval": evalf}


# ---------------------------------------------------------------- transcript lines

_json_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(max_size=12) | st.sampled_from(["x" * 5000, "a\u2028b\u2029c\x85d", "assistant", "result", "tool_use"])
JSON_VALUES = st.one_of(
    _json_scalar,
    st.lists(_json_scalar, max_size=3),
    st.dictionaries(st.sampled_from(["type", "content", "text", "id", "name", "input", "payload", "item"]) | st.text(max_size=5), _json_scalar, max_size=3),
)


@st.composite
def mutated_line(draw: Any, line: str) -> str:
    op = draw(st.sampled_from(["json", "json", "type", "cut", "separator", "garbage", "deep"]))
    if op in ("json", "type"):
        try:
            obj = orjson.loads(line)
        except orjson.JSONDecodeError:
            return line
        paths = _paths(obj)
        path = ("type",) if op == "type" and isinstance(obj, dict) else paths[draw(st.integers(0, len(paths) - 1))]
        value = draw(JSON_VALUES | st.just(["assistant"]) | st.just({"a": 1}))
        if not path:
            obj = value
        else:
            try:
                _at(obj, path[:-1])[path[-1]] = value
            except (KeyError, IndexError, TypeError):
                pass
        return json.dumps(obj, ensure_ascii=False)  # stdlib: big ints too; separators raw, as the CLIs write them
    if op == "cut":
        return line[: draw(st.integers(0, len(line)))]
    if op == "separator":
        i = draw(st.integers(0, len(line)))
        return line[:i] + draw(st.sampled_from(["\u2028", "\u2029", "\x85", "\r", "\x00", "\ufeff"])) + line[i:]
    if op == "deep":
        return '{"type": "assistant", "message": ' + "[" * 3000 + "]" * 3000 + "}"
    return draw(st.text(max_size=40))


@st.composite
def lines_input(draw: Any) -> dict[str, Any]:
    seeds = seed_lines()
    fmt = draw(st.sampled_from(sorted(seeds)))
    pool = seeds[fmt]
    picked = draw(st.lists(st.sampled_from(pool), min_size=1, max_size=6))
    lines = [draw(mutated_line(line)) if draw(st.booleans()) else line for line in picked]
    return {"fmt": fmt, "lines": lines}


# ---------------------------------------------------------------- tars

NAMES = ["a.txt", "d", "d/f.txt", "../evil", "a/../../evil", "/abs", "./x", ".", "", "a//b", "l", "l/x", "s", "s/l", "x" * 300, "é/ü.txt", "\\\\win"]
TYPES = [tarfile.REGTYPE, tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE, tarfile.LNKTYPE, tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE, tarfile.CONTTYPE, b"S", b"Z", b"7"]
LINKS = ["a.txt", ".", "..", "/etc", "/etc/passwd", "d/..", "s/..", "x/../..", "l", "", "../outside.txt"]
PAX = st.dictionaries(
    st.sampled_from(["path", "linkpath", "size", "comment", "mtime", "uid", "GNU.sparse.map", "GNU.sparse.size", "hdrcharset"]),
    st.sampled_from(["../x", "/etc", "-1", "99999999999999999999", "abc", "1.5", "x" * 70_000, "0,1,2", "BINARY", ""]),
    max_size=2,
)


@st.composite
def tar_entry(draw: Any) -> tarfile.TarInfo:
    if draw(st.integers(0, 9)) == 0:
        name = "/".join(["d"] * draw(st.sampled_from([100, 300, 2500])))
    else:
        name = draw(st.sampled_from(NAMES) | st.text(alphabet="ab./", max_size=10))
    info = tarfile.TarInfo(name)
    info.type = draw(st.sampled_from(TYPES))
    info.linkname = draw(st.sampled_from(LINKS))
    info.mode = draw(st.sampled_from([0o644, 0o755, 0o4755, 0o7777, 0]))
    info.size = draw(st.integers(0, 40))
    if draw(st.integers(0, 4)) == 0:
        info.pax_headers = draw(PAX)
    return info


@st.composite
def tar_input(draw: Any) -> bytes:
    fmt = draw(st.sampled_from([tarfile.PAX_FORMAT, tarfile.GNU_FORMAT, tarfile.USTAR_FORMAT]))
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as tar:
        for info in draw(st.lists(tar_entry(), max_size=8)):
            data = b"x" * info.size
            try:
                tar.addfile(info, io.BytesIO(data) if info.isreg() else None)
            except (ValueError, OverflowError, UnicodeError, tarfile.TarError):
                pass  # not writable in this format
    data = buf.getvalue()
    post = draw(st.sampled_from(["none", "none", "flip", "cut", "append", "gzip", "chain"]))
    if post == "flip" and data:
        i = draw(st.integers(0, len(data) - 1))
        data = data[:i] + bytes([draw(st.integers(0, 255))]) + data[i + 1 :]
    elif post == "cut":
        data = data[: draw(st.integers(0, len(data)))]
    elif post == "append":
        data += draw(st.binary(max_size=600))
    elif post == "gzip":
        data = gzip.compress(data)
    elif post == "chain":  # extended headers in a row before the entries
        block = tarfile.TarInfo("././@PaxHeader")
        block.type, record = tarfile.XHDTYPE, b"11 a=bcde\n"
        block.size = len(record)
        data = (block.tobuf(format=tarfile.USTAR_FORMAT) + record + b"\0" * (512 - len(record))) * draw(st.integers(1, 3000)) + data
    return data


# ---------------------------------------------------------------- hostile Harbor task folders and repositories (issue 44)

# (table, key) of task.toml that take numbers or strings; a value from TOML_VALUES is put at one
TOML_PLACES = [
    ("verifier", "timeout_sec"), ("agent", "timeout_sec"), ("agent", "setup_timeout_sec"), ("environment", "build_timeout_sec"),
    ("environment", "cpus"), ("environment", "memory_mb"), ("environment", "memory"), ("environment", "workdir"),
    ("environment", "network_mode"), ("verifier", "network_mode"), ("environment", "allow_internet"), ("metadata", "x"),
    ("verifier", "env"), ("solution", "env"), ("environment", "docker_image"), ("task", "name"),
]
TOML_VALUES = [
    "inf", "-inf", "nan", "+nan", "1e308", "1e309", "0", "-1", "600.0", "9" * 40, '"600"', "true", "[]", "{}", '"x"', '""',
    '{ PATH = "/nonexistent" }', '{ A = "${UNSET_VAR_BENCHTAPE}" }', "[" * 3000 + "]" * 3000, "{a = " * 800 + "1" + "}" * 800,
    '"\u001b[2J"', '"/app/\u0000"', '"public"', '"allowlist"', "2G", '"512Z"',
]
LINK_TARGETS = [None, None, "outside", "outside", "inside", "dangling", "folder"]
REWARDS = ["1", "0", "0.5", "1e309", "inf", "nan", "-inf", "1" + " " * 5000, "", "abc", '{"reward": 1}', '{"reward": 1e999}', '{"a": 1, "b": 2}', '{"reward": true}', "[1]", '{"reward": 1, "reward": 0}']
REWARD_SHAPES = ["txt", "json", "link-txt", "link-json", "link-folder", "fifo", "dir", "big", "none"]


@st.composite
def harbor_input(draw: Any) -> dict[str, Any]:
    """A Harbor task folder made hostile: task.toml with wrong values put in (or garbled,
    cut, not UTF-8), links out of the folder where the loader reads, and what a verifier might
    leave in /logs/verifier (a link to a host file, a FIFO, a huge or infinite reward)."""
    lines = ['version = "1.0"']
    tables: dict[str, list[str]] = {}
    for _ in range(draw(st.integers(0, 3))):
        table, key = draw(st.sampled_from(TOML_PLACES))
        tables.setdefault(table, []).append(f"{key} = {draw(st.sampled_from(TOML_VALUES))}")
    for table, body in tables.items():
        lines += [f"[{table}]", *body]
    text = ("\n".join(lines) + "\n").encode()
    post = draw(st.sampled_from(["none", "none", "none", "latin1", "cut", "flip", "dup"]))
    if post == "latin1":
        text += b'[metadata]\nauthor = "caf\xe9"\n'
    elif post == "cut" and text:
        text = text[: draw(st.integers(0, len(text)))]
    elif post == "flip" and text:
        i = draw(st.integers(0, len(text) - 1))
        text = text[:i] + bytes([draw(st.integers(0, 255))]) + text[i + 1 :]
    elif post == "dup":
        text += text
    links = {}
    if draw(st.booleans()):  # one of the files the loader reads made a link, half the time
        links[draw(st.sampled_from(["instruction.md", "instruction.md", "task.toml", "tests", "solution/solve.sh", "environment/Dockerfile"]))] = draw(st.sampled_from(LINK_TARGETS[2:]))
    return {"toml": text, "links": links, "reward": draw(st.sampled_from(REWARDS)), "shape": draw(st.sampled_from(REWARD_SHAPES))}


NAME_ALPHABET = list("ab_.é日 -\"\\'$*?[]#~") + ["\n", "\t", "\x1b", "\x07", "\u202e", "\r", "\x7f"]


def _name_ok(name: str) -> bool:
    return name not in (".", "..", ".git") and not name.startswith(".git") and "/" not in name and "\0" not in name


@st.composite
def repo_input(draw: Any) -> dict[str, Any]:
    """A repository change whose file names are hostile (control characters, quotes,
    backslashes, newlines, spaces, bidi overrides), in and out of tests/: changed, added,
    deleted or renamed from a base commit to a fix commit."""
    files = []
    for _ in range(draw(st.integers(1, 5))):
        name = draw(st.text(alphabet=NAME_ALPHABET, min_size=1, max_size=10).filter(_name_ok))
        folder = draw(st.sampled_from(["", "tests", "src", "tests/sub\nline", "t e\"s\\t"]))
        files.append({"path": f"{folder}/{name}" if folder else name, "change": draw(st.sampled_from(["modify", "add", "delete", "rename", "binary"]))})
    return {"files": files}


STRATEGIES = {"bench": bench_input(), "lines": lines_input(), "tar": tar_input(), "harbor": harbor_input(), "repo": repo_input()}


def generate(kind: str, n: int, seed_value: int) -> list[Any]:
    """`n` inputs of one kind from hypothesis (the generate phase only: a corpus, not a test)."""
    out: list[Any] = []

    @seed(seed_value)
    @settings(max_examples=n, database=None, deadline=None, phases=[Phase.generate], suppress_health_check=list(HealthCheck))
    @given(STRATEGIES[kind])
    def collect(value: Any) -> None:
        out.append(value)

    collect()
    return out


def corpus(n_bench: int, n_lines: int, n_tar: int, seed_value: int, *, n_harbor: int = 0, n_repo: int = 0) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    for kind, n in (("bench", n_bench), ("lines", n_lines), ("tar", n_tar), ("harbor", n_harbor), ("repo", n_repo)):
        out += [(kind, value) for value in generate(kind, n, seed_value)] if n > 0 else []
    return out


# ---------------------------------------------------------------- fixed hostile and fault cases (issue 31)

_SCENARIO = "  - {{name: s{i}, prompt: p}}\n"
_RUN = "  - {{name: r{i}, params: {{k: v{i}}}}}\n"
_PARAM_BENCH = "harness: mock\nparams: {k: {default: a}}\nscenarios:\n  - {name: s, prompt: 'p {{k}}'}\n"


def hostile() -> list[tuple[str, Any]]:
    """What a review threw at the release, fixed (not generated): each once per `make fuzz`, in
    the same bounded worker. Bench and Eval files far past any real one, a file the kernel
    cannot read, integers wider than JSON in a mock step; raw bytes at the scripted model
    server (unreadable lengths, HTTP/0.9, a client gone silent); and a kill -9 of a recording
    run followed by `recover` (the fault case)."""
    many = "".join(_SCENARIO.format(i=i) for i in range(100_000))
    wide = "harness: {h}\n{hc}defaults: {{interactive: false}}\nscenarios:\n  - name: a\n    prompt: p\n    mock: {{steps: [{{tool: Bash, input: {{n: 123456789012345678901234567890}}}}]}}\n"
    cases: list[tuple[str, Any]] = [
        ("bench", {"bench": "harness: mock\nscenarios:\n" + many, "eval": None}),
        ("bench", {"bench": "harness: mock\nscenarios:\n" + "".join(_SCENARIO.format(i=i) for i in range(10_001)), "eval": None}),
        ("bench", {"bench": "harness: mock\nscenarios:\n  - name: s\n    prompt: p\n" + "    prompt: p\n" * 100_000, "eval": None}),
        ("bench", {"bench": _PARAM_BENCH, "eval": "bench: bench.yaml\nruns:\n" + "".join(_RUN.format(i=i) for i in range(50_000))}),
        ("bench", {"bench": _PARAM_BENCH, "eval": "bench: bench.yaml\nruns:\n" + "".join(_RUN.format(i=i) for i in range(1_001))}),
        ("bench", {"bench": wide.format(h="mock", hc=""), "eval": None}),
        ("bench", {"bench": wide.format(h="claude-code", hc="harness_config: {model: scripted}\n"), "eval": None}),
        ("path", "/proc/self/mem"),
        ("path", "/dev/zero"),
    ]
    post = b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nContent-Length: %s\r\n\r\n{}"
    for raw in (post % b"99999999999", post % b"-5", post % b"abc", b"GET /\r\n", b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", b"", b"POST /v1/messages HTTP/1.1\r\nContent-Length: 100\r\n\r\n{"):
        cases.append(("server", raw))
    cases.append(("fault", {"level": "workspace", "seed": 31}))
    return cases
