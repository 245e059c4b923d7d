"""A script's tool calls in each harness's own tools.

A script names tools the way the `mock:` harness does (Claude Code's names). Each
harness gets them in the tools it offers:

| script                                  | claude-code                 | codex (gpt-5.5 tools)                                  |
|-----------------------------------------|-----------------------------|--------------------------------------------------------|
| Bash {command}                          | Bash                        | exec_command {"cmd": command}                          |
| Read {file_path}                        | Read                        | exec_command `cat -- <file>`                           |
| Write {file_path, content}              | Write                       | apply_patch: `*** Add File` (`*** Update File` of every line when it exists) |
| Edit {file_path, old_string, new_string}| Edit                        | apply_patch `*** Update File` of the whole lines holding old_string |
| MultiEdit {file_path, edits}            | MultiEdit                   | apply_patch, one hunk per edit                         |
| Glob {pattern, path}                    | Glob; Bash (the same command as codex) when Glob is not offered (2.1.3xx's default) | exec_command `shopt -s globstar nullglob; printf` |
| Grep {pattern, path}                    | Grep; Bash `grep -rnE` when Grep is not offered | exec_command `grep -rnE`                   |
| mcp__server__tool {args}                | the same (a direct call)    | tool_search, then function_call namespace mcp__server  |
| Task / Agent (a `subagent:` step)       | whichever of the two is offered | not mapped (refused)                              |
| Skill (a `skill:` step)                 | Skill                       | not mapped (refused)                                   |
| exec_command {cmd}                      | Bash {command}              | exec_command                                           |
| apply_patch {patch}                     | not mapped (passed as is)   | apply_patch (a custom tool: the patch text)            |
| any other name                          | passed as is                | a function_call of that name                           |

Gemini CLI (0.61.0's tools): Read → read_file {file_path}, Write → write_file {file_path, content},
Edit → replace {file_path, old_string, new_string, instruction}, MultiEdit → one replace per edit,
Bash / exec_command → run_shell_command {command}, Glob → glob {pattern, dir_path}, Grep →
grep_search {pattern, dir_path}; any other name is sent as it is. A `subagent:` or `skill:` step
has no Gemini tool (refused before the run, as under codex).

Over Chat Completions (Qwen Code, opencode, mini-swe-agent, a harness plugin, a `command`
agent), the tools a request offers decide: a script name the request offers itself (`Read`,
`Edit`, a custom tool's name) is sent as it is; an agent offering only `bash` gets every call as
a shell command (an Edit a small python3 replace, a Write a here-document); one offering `read`,
`write`, `edit`, `bash` gets opencode's names (camelCase arguments); an `edit` without `replace`
gets Qwen Code's edit; anything else gets Gemini CLI's names, as above.

A name the harness does not offer is still sent: the harness then answers it with its
own "no such tool" error, which is a real outcome worth recording. Codex needs the file
to turn an Edit into whole-line patch hunks; the model reads it from the workspace the
request's `<cwd>` names, as a model would have read it before editing.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from benchtape.spec.script import Block, Script

CLAUDE = "claude-code"
CODEX = "codex"
GEMINI = "gemini-cli"
HARNESSES = (CLAUDE, CODEX, GEMINI)
SPAWN_ALIASES = ("Agent", "Task")
CODEX_UNMAPPED = {"Skill": "a `skill:` step", "Agent": "a `subagent:` step", "Task": "a `subagent:` step"}


# ---------------------------------------------------------------- claude-code


def for_claude(call: Block, offered: set[str]) -> tuple[str, dict[str, Any]]:
    """(tool name, input) of one scripted call for Claude Code, given the tools it offered."""
    name, args = call.tool, dict(call.input)
    if name in SPAWN_ALIASES and name not in offered:
        other = next((a for a in SPAWN_ALIASES if a in offered), None)
        name = other or name
    if name == "exec_command" and "exec_command" not in offered:
        return "Bash", {"command": str(args.get("cmd", ""))}
    if name in ("Glob", "Grep") and name not in offered and "Bash" in offered:
        return "Bash", {"command": shell_command(name, args)}
    if name in ("Edit", "MultiEdit"):  # as a model writes them after Read: Claude Code matches a CRLF file's lines with LF strings, and never with CRLF ones
        return name, _lf_edits(name, args)
    return name, args


def _lf_edits(name: str, args: dict[str, Any]) -> dict[str, Any]:
    """An Edit's (a MultiEdit's edits') strings with CRLF written LF (tomli's benchmark/run.py, a
    CRLF file: Claude Code 2.1.328 answered "String to replace not found" to the patch's own \\r\\n)."""
    def lf(edit: dict[str, Any]) -> dict[str, Any]:
        return {k: v.replace("\r\n", "\n") if k in ("old_string", "new_string") and isinstance(v, str) else v for k, v in edit.items()}

    if name == "MultiEdit" and isinstance(args.get("edits"), list):
        return {**args, "edits": [lf(e) if isinstance(e, dict) else e for e in args["edits"]]}
    return lf(args)


def shell_command(name: str, args: dict[str, Any]) -> str:
    """The shell command that does what a Read, Glob or Grep call asks (for harnesses without those tools)."""
    if name == "Read":
        return f"cat -- {shlex.quote(str(args.get('file_path', '')))}"
    base = shlex.quote(str(args.get("path") or "."))
    if name == "Glob":
        return f"shopt -s globstar nullglob; cd {base} && printf '%s\\n' {args.get('pattern', '*')}"
    return f"grep -rnE -- {shlex.quote(str(args.get('pattern', '')))} {base}"


# ---------------------------------------------------------------- gemini-cli

GEMINI_UNMAPPED = CODEX_UNMAPPED  # no subagent or skill tool a script could name


def for_gemini(call: Block, offered: set[str]) -> list[tuple[str, dict[str, Any]]]:
    """The functionCall parts (name, args) that make Gemini CLI run one scripted call."""
    name, args = call.tool, dict(call.input)
    path = str(args.get("file_path") or args.get("path") or "")
    if name == "Read":
        return [("read_file", {"file_path": path})]
    if name == "Write":
        return [("write_file", {"file_path": path, "content": str(args.get("content", ""))})]
    if name in ("Edit", "MultiEdit"):
        edits = args.get("edits") if name == "MultiEdit" else [args]
        return [
            ("replace", {"file_path": path, "instruction": "Apply the scripted edit.", "old_string": str(e.get("old_string", "")), "new_string": str(e.get("new_string", "")), **({"allow_multiple": True} if e.get("replace_all") else {})})
            for e in edits or [] if isinstance(e, dict)
        ]
    if name in ("Bash", "exec_command"):
        return [("run_shell_command", {"command": str(args.get("command", args.get("cmd", "")))})]
    if name == "Glob":
        return [("glob", {"pattern": str(args.get("pattern", "*")), **({"dir_path": str(args["path"])} if args.get("path") else {})})]
    if name == "Grep":
        if "grep_search" not in offered and "run_shell_command" in offered:
            return [("run_shell_command", {"command": shell_command("Grep", args)})]
        return [("grep_search", {"pattern": str(args.get("pattern", "")), **({"dir_path": str(args["path"])} if args.get("path") else {})})]
    return [(name, args)]


# ---------------------------------------------------------------- chat-completions agents (qwen-code)

QWEN = "qwen-code"


def for_chat(call: Block, offered: set[str], cwd: str | None = None) -> list[tuple[str, dict[str, Any]]]:
    """The tool_calls (name, arguments) that make a Chat Completions agent run one scripted call:
    Qwen Code's tools are Gemini CLI's but for its edit tool (`edit`, no instruction) and its
    paths (absolute only: made so from `cwd`, the folder its context names); an agent with only
    `bash` (mini-swe-agent) gets each call as a shell command."""
    name, args = call.tool, dict(call.input)
    if cwd and isinstance(args.get("file_path"), str) and not args["file_path"].startswith("/") and offered != {"bash"}:
        args["file_path"] = cwd.rstrip("/") + "/" + args["file_path"]
        call = Block(call.kind, call.text, call.tool, args, call.subagent, call.line)
    if name in offered and offered != {"bash"}:  # the agent offers the script's own name (Read, Edit, a custom tool): sent as it is
        return [(name, args)]
    if offered == {"bash"}:
        if name == "Bash":
            return [("bash", {"command": str(args.get("command", ""))})]
        if name == "Write":
            content = str(args.get("content", ""))
            content = content[:-1] if content.endswith("\n") else content  # the here-document ends its last line
            return [("bash", {"command": f"cat > {shlex.quote(str(args.get('file_path', '')))} <<'BENCHTAPE_EOF'\n{content}\nBENCHTAPE_EOF"})]
        if name in ("Read", "Glob", "Grep"):
            return [("bash", {"command": shell_command(name, args)})]
        if name in ("Edit", "MultiEdit"):
            edits = args.get("edits") if name == "MultiEdit" else [args]
            return [("bash", {"command": replace_command(str(args.get("file_path", "")), e)}) for e in edits or [] if isinstance(e, dict)]
        return [(name, args)]
    if {"read", "write", "edit", "bash"} <= offered:  # opencode: its own names, camelCase arguments
        path = str(args.get("file_path") or args.get("path") or "")
        if name == "Read":
            return [("read", {"filePath": path})]
        if name == "Write":
            return [("write", {"filePath": path, "content": str(args.get("content", ""))})]
        if name in ("Edit", "MultiEdit"):
            edits = args.get("edits") if name == "MultiEdit" else [args]
            return [("edit", {"filePath": path, "oldString": str(e.get("old_string", "")), "newString": str(e.get("new_string", "")), **({"replaceAll": True} if e.get("replace_all") else {})}) for e in edits or [] if isinstance(e, dict)]
        if name in ("Bash", "exec_command"):
            return [("bash", {"command": str(args.get("command", args.get("cmd", ""))), "description": "scripted command"})]
        if name in ("Glob", "Grep"):
            return [(name.lower(), {"pattern": str(args.get("pattern", "")), **({"path": str(args["path"])} if args.get("path") else {})})]
        return [(name, args)]
    if name in ("Edit", "MultiEdit") and "edit" in offered and "replace" not in offered:
        path = str(args.get("file_path") or args.get("path") or "")
        edits = args.get("edits") if name == "MultiEdit" else [args]
        return [("edit", {"file_path": path, "old_string": str(e.get("old_string", "")), "new_string": str(e.get("new_string", "")), **({"replace_all": True} if e.get("replace_all") else {})}) for e in edits or [] if isinstance(e, dict)]
    return for_gemini(call, offered)


def replace_command(path: str, edit: dict[str, Any]) -> str:
    """A shell command that makes one Edit (old_string → new_string, once unless replace_all) and
    fails, as the Edit tool would, when old_string is not in the file."""
    program = (
        "import pathlib, sys\n"
        f"p = pathlib.Path({path!r}); old = {str(edit.get('old_string', ''))!r}; new = {str(edit.get('new_string', ''))!r}\n"
        "t = p.read_bytes().decode()\n"  # as written: read_text() turns a CRLF file's \r\n into \n, and the edit's own \r\n never matched
        "if old not in t: sys.exit('old_string not found in ' + str(p))\n"
        f"p.write_bytes(t.replace(old, new{'' if edit.get('replace_all') else ', 1'}).encode())\n"
    )
    return f"python3 - <<'BENCHTAPE_EOF'\n{program}BENCHTAPE_EOF"


# ---------------------------------------------------------------- aider (edit blocks, no tools)


def aider_blocks(call: Block, files: dict[str, str] | None = None) -> list[str]:
    """The SEARCH/REPLACE blocks (aider's `diff` edit format) that make one scripted Edit or Write:
    the file name on its own line, then a fenced block; an empty SEARCH makes a new file.

    aider matches a SEARCH section as whole lines, an Edit a substring: when `files` (the
    contents aider sent, see `aider_files`) holds the file, each edit is widened to the whole
    lines its old text sits in (each match's, for replace_all); without it the edit is sent as
    written."""
    return [block for group in aider_block_groups(call, files) for block in group]


def aider_block_groups(call: Block, files: dict[str, str] | None = None) -> list[list[str]]:
    """`aider_blocks`, one list for each edit of the call: widened, one edit may be several blocks."""
    args = call.input
    path = str(args.get("file_path") or args.get("path") or "")
    if call.tool == "Write":
        groups = [[("", str(args.get("content", "")))]]
    elif call.tool in ("Edit", "MultiEdit"):
        edits = args.get("edits") if call.tool == "MultiEdit" else [args]
        groups = _whole_line_edits([e for e in edits or [] if isinstance(e, dict)], _file_in(files or {}, path))
    else:
        return []

    def body(text: str) -> str:
        return text if not text or text.endswith("\n") else text + "\n"

    return [[f"{path}\n```\n<<<<<<< SEARCH\n{body(old)}=======\n{body(new)}>>>>>>> REPLACE\n```" for old, new in pairs] for pairs in groups]


AIDER_FILE = re.compile(r"^(\S[^\n]*)\n(```+|<\w+>)\n", re.M)


def aider_files(messages: list[dict[str, Any]]) -> dict[str, str]:
    """The files aider put in its request (path -> content), the latest copy of each: aider shows
    a file added to the chat as its path on a line, a fence, the content, the fence again."""
    files: dict[str, str] = {}
    for message in messages:
        content = message.get("content") if isinstance(message, dict) and message.get("role") == "user" else None
        if isinstance(content, str) and "*added these files to the chat*" in content:
            files.update(_fenced_files(content))
    return files


def _fenced_files(text: str) -> dict[str, str]:
    """Each `path / fence / content / fence` in one of aider's file messages; aider puts the closing
    fence straight after the content, so a file without a final newline ends on the fence's line."""
    out: dict[str, str] = {}
    pos = 0
    while match := AIDER_FILE.search(text, pos):
        fence = match.group(2).replace("<", "</") if match.group(2).startswith("<") else match.group(2)
        close = text.find(fence + "\n", match.end())
        close = text.find(fence, match.end()) if close < 0 else close
        if close < 0:
            break
        out[match.group(1).strip()] = text[match.end():close]
        pos = close + len(fence)
    return out


def _file_in(files: dict[str, str], path: str) -> str | None:
    """The content aider sent for `path` (aider names files relative to its folder; a script may
    name them absolute)."""
    if path in files:
        return files[path]
    return next((text for name, text in files.items() if path.endswith("/" + name) or name.endswith("/" + path)), None)


def _whole_line_edits(edits: list[dict[str, Any]], text: str | None) -> list[list[tuple[str, str]]]:
    """(SEARCH, REPLACE) pairs of each edit, made in order on `text`: the whole lines old_string
    sits in, before and after, so aider's line matching finds them; the edit as written when
    `text` is unknown or does not hold old_string (aider then reports the failed match, as it should)."""
    groups = []
    for edit in edits:
        old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
        lines = _matched_lines(text, old, bool(edit.get("replace_all")), through_newline=True) if text is not None and old else []
        if text is None or not lines:
            groups.append([(old, new)])
            continue
        text, made = _replaced(text, lines, old, new, bool(edit.get("replace_all")))
        groups.append([(before, after or ("" if before.endswith("\n") else "\n")) for before, after in made])  # an emptied line stays, empty
    return groups


def _matched_lines(text: str, old: str, every: bool, *, through_newline: bool) -> list[tuple[int, int]]:
    """The whole lines each match of `old` sits in (the first match only unless `every`: an
    Edit's replace_all), as (start, end) offsets in file order, lines that touch merged: a
    line-matching tool (apply_patch, aider's SEARCH) is sent one hunk for each, where the
    lines around the first match alone left every other occurrence as it was (a rename with
    replace_all changed its definition and none of its uses, under Codex and aider only).
    `through_newline`: a match ending in a newline ends its lines there (aider's), else they
    run to the end of the line after it (apply_patch's)."""
    spans: list[tuple[int, int]] = []
    found = text.find(old)
    while found >= 0:
        start = text.rfind("\n", 0, found) + 1
        end = found + len(old) if through_newline and old.endswith("\n") else text.find("\n", found + len(old))
        end = len(text) if end < 0 else end
        if spans and start <= spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
        if not every:
            break
        found = text.find(old, found + len(old))
    return spans


def _replaced(text: str, spans: list[tuple[int, int]], old: str, new: str, every: bool) -> tuple[str, list[tuple[str, str]]]:
    """`text` with the edit made in each of its matched lines, and each (before, after)."""
    made = [(text[start:end], text[start:end].replace(old, new) if every else text[start:end].replace(old, new, 1)) for start, end in spans]
    for (start, end), (_, after) in zip(reversed(spans), reversed(made)):
        text = text[:start] + after + text[end:]
    return text, made


# ---------------------------------------------------------------- codex


@dataclass(frozen=True)
class CodexCall:
    """One Responses API output item for a scripted call."""

    kind: str  # function_call | custom_tool_call | tool_search_call
    name: str = ""
    arguments: Any = None  # a JSON string (function_call), the raw input (custom), a dict (tool_search)
    namespace: str | None = None


def for_codex(call: Block, cwd: Path | None, namespaces: dict[str, set[str]]) -> CodexCall:
    """The Responses item that makes Codex run one scripted call.

    `namespaces` are the MCP tools Codex has already found by tool_search in this
    conversation (namespace -> tool names); an MCP call before that is a search first.
    """
    name, args = call.tool, call.input
    if name.startswith("mcp__") and name.count("__") >= 2:
        server, tool = name[len("mcp__"):].split("__", 1)
        namespace = f"mcp__{server}"
        if tool not in namespaces.get(namespace, set()):
            return CodexCall("tool_search_call", arguments={"query": tool})
        return CodexCall("function_call", tool, _json(args), namespace)
    if name == "Bash":
        return _exec(str(args.get("command", "")))
    if name in ("Read", "Glob", "Grep"):
        return _exec(shell_command(name, args))
    if name == "Write":
        return CodexCall("custom_tool_call", "apply_patch", write_patch(str(args.get("file_path", "")), str(args.get("content", "")), cwd))
    if name in ("Edit", "MultiEdit"):
        edits = args.get("edits") if name == "MultiEdit" else [args]
        return CodexCall("custom_tool_call", "apply_patch", edit_patch(str(args.get("file_path", "")), list(edits or []), cwd))
    if name == "apply_patch":
        patch = args.get("patch", args.get("input", ""))
        return CodexCall("custom_tool_call", "apply_patch", str(patch))
    return CodexCall("function_call", name, _json(args))


def unmapped_for_codex(script: Script) -> list[tuple[Block, str]]:
    """Calls no Codex (or Gemini CLI) tool can make: (the call, what it was in the script)."""
    out = []
    for turn in [*script.turns, *(t for s in script.subagents() for t in s.turns)]:
        for call in turn.calls:
            if call.tool in CODEX_UNMAPPED:
                out.append((call, CODEX_UNMAPPED[call.tool]))
    return out


# Codex answers a command still running after `yield_time_ms` (10 s by default, 30 s at most)
# with "Process running with session ID N"; the scripted model then polls it
# (models/responses.answer) until it ends, as a model that wants the output does: without that
# the test run a script asked for was cut off when Codex exited, and its cell looked fastest.
EXEC_YIELD_MS = 30000


def _exec(cmd: str) -> CodexCall:
    return CodexCall("function_call", "exec_command", _json({"cmd": cmd, "yield_time_ms": EXEC_YIELD_MS}))


def poll_call(session_id: int) -> CodexCall:
    """Codex's `write_stdin` with nothing to write: wait for more of a running command."""
    return CodexCall("function_call", "write_stdin", _json({"session_id": session_id, "chars": "", "yield_time_ms": EXEC_YIELD_MS}))


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _read(path: str, cwd: Path | None) -> str | None:
    target = Path(path) if Path(path).is_absolute() or cwd is None else cwd / path
    try:
        return target.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def _lines(text: str) -> list[str]:
    return text.split("\n")[:-1] if text.endswith("\n") else text.split("\n")


def write_patch(path: str, content: str, cwd: Path | None) -> str:
    old = _read(path, cwd)
    if old is None:
        body = "".join(f"+{line}\n" for line in _lines(content))
        return f"*** Begin Patch\n*** Add File: {path}\n{body}*** End Patch\n"
    hunk = "".join(f"-{line}\n" for line in _lines(old)) + "".join(f"+{line}\n" for line in _lines(content))
    return f"*** Begin Patch\n*** Update File: {path}\n@@\n{hunk}*** End Patch\n"


def edit_patch(path: str, edits: list[dict[str, Any]], cwd: Path | None) -> str:
    """An Update File patch whose hunks replace the whole lines each old_string sits in.

    apply_patch matches whole lines, an Edit a substring: so the lines around the match
    are taken from the file. When the file or the string is not there, the hunk is the
    edit's own lines, and Codex refuses it as a real Edit would fail.
    """
    text = _read(path, cwd)
    hunks = []
    for edit in edits:
        old, new = str(edit.get("old_string", "")), str(edit.get("new_string", ""))
        lines = _matched_lines(text, old, bool(edit.get("replace_all")), through_newline=False) if text is not None and old else []
        if text is None or not lines:
            made = [(old, new)]
        else:
            text, made = _replaced(text, lines, old, new, bool(edit.get("replace_all")))
        for before, after in made:
            hunk = "".join(f"-{line}\n" for line in before.split("\n")) + "".join(f"+{line}\n" for line in after.split("\n"))
            hunks.append(f"@@\n{hunk}")
    return f"*** Begin Patch\n*** Update File: {path}\n{''.join(hunks)}*** End Patch\n"
