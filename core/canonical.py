"""One vocabulary of actions across harnesses: a tool call's canonical action.

Claude Code reads a file with `Read`; Codex runs `cat -- file` as a `command_execution`; a
check written against one harness's names can never match the other's. Every tool call
therefore carries, beside its native name and input, a canonical action (`canonical()`, the
one mapping, pure: native name + input + harness):

  read      a file's content (Read, NotebookRead, a plain `cat`/`head`/`tail`/`nl`/`sed -n`)
  write     a new or wholly replaced file (Write, apply_patch's Add File)
  edit      a change to a file (Edit, MultiEdit, NotebookEdit, apply_patch's Update/Delete File)
  shell     a command (Bash, command_execution, exec_command, shell); `command` holds it; or input
            or a signal sent to a running one (codex's write_stdin with chars, KillShell)
  poll      a look at a running command's output that sends it nothing (BashOutput, codex's
            write_stdin with no chars): no new action, so `action:shell` does not count it
  search    glob or grep (Glob, Grep, LS, a plain `rg`/`grep`/`ls`/`find`)
  web       WebFetch, WebSearch, codex's web_search
  subagent  Task, Agent, codex's spawn_agent and its collab tools
  plan      TodoWrite, ExitPlanMode, codex's todo_list / update_plan
  mcp:<server>/<tool>   an MCP call (mcp__server__tool in both harnesses)
  other     anything else (AskUserQuestion, Skill, request_user_input, …)

with the files it touched (`files`: each path and what was done to it) and the command it ran.
A command is recognised as a read (or a search) only when that is unambiguous: one plain
reader (or a `&&`/`;` chain of them, or a reader piped into plain filters) with no
redirection, substitution or other command; anything else is a shell action only.

A check names a tool either natively (`Edit`: exactly that harness's tool, as before) or
canonically (`action:edit`: every harness); `matches()` is the one reading of that spelling.
"""

from __future__ import annotations

import os
import re
import shlex
from typing import Any, Iterable, NamedTuple

from benchtape.core.payloads import ToolCall

PREFIX = "action:"
KINDS = ("read", "write", "edit", "shell", "poll", "search", "web", "subagent", "plan", "mcp", "other")
FILE_KINDS = ("read", "write", "edit", "search")


class Canonical(NamedTuple):
    """A call's canonical action. A named tuple, not a frozen dataclass: a reader derives one
    for every call of an older store's session, and a frozen dataclass's __init__ (a setattr
    per field) was over half of deriving it."""

    action: str  # one of KINDS, an MCP call as mcp:<server>/<tool>
    files: tuple[tuple[str, str], ...] = ()  # (path, what was done: read, write, edit, search), in call order
    command: str | None = None  # the shell command, as the harness ran it

    def fields(self) -> dict[str, Any]:
        """The tool-call payload's fields (core/payloads.ToolCall: action, files, command)."""
        out: dict[str, Any] = {"action": self.action}
        if self.files:
            out["files"] = [{"path": p, "action": a} for p, a in self.files]
        if self.command is not None:
            out["command"] = self.command
        return out

    @property
    def paths(self) -> list[str]:
        files = self.files
        if len(files) < 2:  # most calls: no file or one (a reader asks for every call's)
            return [files[0][0]] if files else []
        return list(dict.fromkeys(p for p, _ in files))


OTHER = Canonical("other")
SUBAGENT = Canonical("subagent")


def from_fields(data: Any) -> Canonical | None:
    """A stored call's canonical action (its payload's fields), or None when it was recorded
    before calls carried one (the reader then derives it: never rewriting history)."""
    action = data.get("action") if isinstance(data, dict) else None
    if not isinstance(action, str):
        return None
    files = data.get("files")
    pairs = tuple((str(f.get("path")), str(f.get("action"))) for f in files if isinstance(f, dict)) if isinstance(files, list) else ()
    command = data.get("command")
    return Canonical(action, pairs, command if isinstance(command, str) else None)


def annotate(call: ToolCall, harness: str | None) -> ToolCall:
    """The tool-call payload with its canonical fields added (what every adapter writes)."""
    call.update(canonical(str(call.get("tool") or ""), call.get("input"), harness).fields())  # type: ignore[typeddict-item]
    return call


def of_call(data: Any, harness: str | None) -> Canonical:
    """A stored call's canonical action: as recorded, or derived now for an older store's call."""
    if data.__class__ is dict and ("action" not in data or data.get("tool") in _REDERIVED):  # an older store's call: derived
        tool = data.get("tool")
        return canonical(tool if tool.__class__ is str else str(tool or ""), data.get("input"), harness)
    stored = from_fields(data)
    if stored is not None:
        return stored
    if not isinstance(data, dict):
        return OTHER
    return canonical(str(data.get("tool") or ""), data.get("input"), harness)


# ---------------------------------------------------------------- the mapping

_READ = {"Read": ("file_path", "path"), "NotebookRead": ("notebook_path", "file_path"), "View": ("file_path", "path"), "read_file": ("path", "file_path"), "view_image": ("path",), "read_many_files": ("paths",), "read": ("filePath", "file_path", "path")}
_WRITE = {"Write": ("file_path", "path"), "write_file": ("path", "file_path"), "create_file": ("path", "file_path"), "write": ("filePath", "file_path", "path")}
_EDIT = {"Edit": ("file_path", "path"), "MultiEdit": ("file_path", "path"), "NotebookEdit": ("notebook_path", "file_path"), "str_replace_based_edit_tool": ("path",), "edit_file": ("path", "file_path"), "replace": ("file_path", "path"), "edit": ("file_path", "filePath", "path"), "apply_edit": ("file_path",)}
_SEARCH = {"Glob": ("path",), "Grep": ("path",), "LS": ("path",), "list_dir": ("dir_path", "path"), "grep_files": ("path",), "glob": ("path", "dir_path"), "grep": ("path",), "grep_search": ("dir_path", "path"), "search_file_content": ("dir_path", "path"), "list_directory": ("dir_path", "path")}  # search_file_content: Gemini CLI's grep_search before 0.2x
_SHELL = {"Bash": "command", "command_execution": "command", "exec_command": "cmd", "shell": "command", "local_shell": "command", "run_shell_command": "command", "bash": "command"}
_SHELL_ONLY = {"KillShell", "KillBash"}  # a signal to a running command: acts on it, with no command of its own
_POLL = {"BashOutput"}  # a running command's output, read: nothing sent, nothing run
_STDIN = {"write_stdin"}  # codex: input to a running command (shell), or with no chars a poll of its output
# Tools whose stored action an older mapping wrote as `shell` (a poll was counted as a command):
# of_call derives theirs again, so a regrade of an older import counts as a fresh import does.
_REDERIVED = frozenset(_POLL | _STDIN)
_WEB = {"WebFetch", "WebSearch", "web_search", "web_fetch", "google_web_search", "webfetch"}
_SUBAGENT = {"Task", "task", "Agent", "spawn_agent", "wait", "wait_agent", "send_input", "close_agent", "resume_agent", "delegate_to_agent"}  # delegate_to_agent: Gemini CLI's subagents (codebase_investigator)
_PLAN = {"TodoWrite", "TodoRead", "ExitPlanMode", "EnterPlanMode", "todo_list", "update_plan", "write_todos", "todowrite", "todo_write"}
_PATCH = {"apply_patch", "file_change"}


# A plugin harness's own tool names (core/harnesses.py): harness → native name → (kind, the
# argument holding the path, or the command of a shell call). Registered when its adapter is
# made (adapters/base.get_adapter), read before the shared tables for that harness only.
_NAMES: dict[str, dict[str, tuple[str, tuple[str, ...]]]] = {}


def register_names(harness: str, names: dict[str, Any]) -> None:
    """Add a harness's native tool names: `{"ReadIt": "read:path", "Run": "shell:cmd", "Plan": "plan"}`
    (kind, then after a colon the arguments, comma-separated, that hold the path or the command)."""
    table: dict[str, tuple[str, tuple[str, ...]]] = {}
    for tool, spelled in names.items():
        kind, _, keys = str(spelled).partition(":")
        if kind not in KINDS:
            raise ValueError(f"harness {harness!r}: tool {tool!r} names the action {kind!r}, not one of {', '.join(KINDS)}")
        table[str(tool)] = (kind, tuple(k for k in keys.split(",") if k))
    _NAMES[harness] = table


def canonical(tool: str, input: Any, harness: str | None = None) -> Canonical:
    """The canonical action of one native tool call. `harness` names whose vocabulary `tool`
    is in: a plugin harness's own names (register_names) come first; the shared tables hold
    no native name that means two things across harnesses."""
    args = input if isinstance(input, dict) else {}
    names = _NAMES.get(harness or "")
    own = names.get(tool) if names is not None else None
    if own is not None:
        kind, named = own
        if kind == "shell":
            return shell(_first(args, named or ("command", "cmd")))
        if kind in FILE_KINDS:
            path = _first(args, named or ("path", "file_path"))
            return Canonical(kind, ((path, kind),) if path else ())
        return Canonical(kind)
    entry = _BY_TOOL.get(tool)  # no shared name starts with mcp__
    if entry is None and tool.startswith("mcp__") and "__" in tool[5:]:
        server, name = tool[5:].split("__", 1)
        return Canonical(f"mcp:{server}/{name}")
    if entry is None:
        return OTHER
    kind, keys = entry
    if kind in FILE_KINDS:
        path = _first(args, keys)
        return Canonical(kind, ((path, kind),) if path else ())
    if kind == "shell":
        return shell(args.get(keys, args.get("command", args.get("cmd"))))
    if kind == "patch":
        return _patch(tool, args, input)
    if kind == "stdin":
        return _stdin(args)
    return _ONLY[kind]


# Every shared table in one lookup (a reader derives this for every call of an older store's
# session: the tables one after another were ~a third of it), the first table naming a tool
# winning as when they were tried in order: file tables, shell, then the rest.
_ORDER: tuple[tuple[str, dict[str, Any]], ...] = (
    ("read", _READ),
    ("write", _WRITE),
    ("edit", _EDIT),
    ("search", _SEARCH),
    ("shell", _SHELL),
    ("shell-only", dict.fromkeys(_SHELL_ONLY)),
    ("poll", dict.fromkeys(_POLL)),
    ("stdin", dict.fromkeys(_STDIN)),
    ("patch", dict.fromkeys(_PATCH)),
    ("web", dict.fromkeys(_WEB)),
    ("subagent", dict.fromkeys(_SUBAGENT)),
    ("plan", dict.fromkeys(_PLAN)),
)
_BY_TOOL: dict[str, tuple[str, Any]] = {}
for _kind, _table in reversed(_ORDER):
    _BY_TOOL.update((_tool, (_kind, _keys)) for _tool, _keys in _table.items())
_ONLY = {"shell-only": Canonical("shell"), "poll": Canonical("poll"), "web": Canonical("web"), "subagent": SUBAGENT, "plan": Canonical("plan")}  # immutable: shared


def _stdin(args: dict[str, Any]) -> Canonical:
    """codex's write_stdin: with chars it sends a running command input (a line to a shell, a
    Ctrl-C), which can run or stop anything, so a shell action as KillShell is; with none it
    only waits for the command's output, a poll as Claude's BashOutput is (codex 0.125 polls
    every long command a dozen times: counted as commands, they swamped `action:shell`)."""
    chars = args.get("chars")
    return _ONLY["shell-only"] if isinstance(chars, str) and chars else _ONLY["poll"]


def _first(args: dict[str, Any], keys: tuple[str, ...]) -> str | None:
    for key in keys:
        value = args.get(key)
        if isinstance(value, str) and value:
            return value
    return None


# ---------------------------------------------------------------- patches

_PATCH_LINE = re.compile(r"^\*\*\* (Add|Update|Delete) File: (.+?)\s*$|^\*\*\* Move to: (.+?)\s*$", re.M)
_CHANGE_KINDS = {"add": "write", "create": "write", "update": "edit", "modify": "edit", "delete": "edit", "remove": "edit"}


def _patch(tool: str, args: dict[str, Any], raw: Any) -> Canonical:
    """apply_patch (its patch text) or codex's file_change (its list of changes): each file
    added is a write, each updated, moved or deleted an edit; the call is an edit if any is."""
    files: list[tuple[str, str]] = []
    changes = args.get("changes")
    if isinstance(changes, list):
        for change in changes:
            if not isinstance(change, dict) or not isinstance(change.get("path"), str):
                continue
            kind = change.get("kind")
            kind = kind.get("type") if isinstance(kind, dict) else kind
            files.append((change["path"], _CHANGE_KINDS.get(str(kind).lower(), "edit")))
    elif isinstance(changes, dict):  # {path: {type|add|update: …}}, as older codex wrote it
        for path, change in changes.items():
            kind = change.get("type") if isinstance(change, dict) and "type" in change else (next(iter(change)) if isinstance(change, dict) and change else "update")
            files.append((str(path), _CHANGE_KINDS.get(str(kind).lower(), "edit")))
    else:
        text = raw if isinstance(raw, str) else next((v for v in (args.get("input"), args.get("patch")) if isinstance(v, str)), "")
        for m in _PATCH_LINE.finditer(text):
            if m.group(3):
                files.append((m.group(3).strip(), "edit"))
            else:
                files.append((m.group(2).strip(), "write" if m.group(1) == "Add" else "edit"))
    kinds = {k for _, k in files}
    action = "write" if kinds == {"write"} else "edit"
    return Canonical(action, tuple(files))


# ---------------------------------------------------------------- shell commands

_WRAPPERS = {"bash", "sh", "zsh", "dash"}
_READERS = {"cat", "head", "tail", "nl", "sed"}
_SEARCHERS = {"rg", "grep", "ls", "find"}
_FILTERS = {"head", "tail", "nl", "sed", "grep", "rg", "wc", "sort", "uniq", "cut", "cat"}
_VALUED = {  # options whose value is the next word (not a path)
    "head": {"-n", "-c"},
    "tail": {"-n", "-c"},
    "nl": {"-b", "-n", "-w", "-s", "-v", "-i"},
    "sed": {"-e", "-f"},
    "rg": {"-e", "-g", "--glob", "-t", "--type", "-m", "-A", "-B", "-C", "--max-count"},
    "grep": {"-e", "-f", "-m", "-A", "-B", "-C", "--include", "--exclude"},
    "find": set(),
}
_SED_PRINT = re.compile(r"^(\d+|\$)?(,(\d+|\$))?p$")
_OPERATORS = {"&&", ";"}
_MAY_READ = _READERS | _SEARCHERS | _FILTERS
# A first word both shlex splits (shlex.split, and shlex.shlex with punctuation_chars) read
# exactly as written: leading whitespace, then characters that are no quote, escape, comment,
# operator or expansion, ended by whitespace or the end. Anything else takes the slow path.
_FIRST_WORD = re.compile(r"[ \t\r\n]*([A-Za-z0-9_./+,:=@%^~-]+)(?:[ \t\r\n]|\Z)")


_SHELL_PLAIN = Canonical("shell")


def shell(command: Any) -> Canonical:
    """A shell command's canonical action: a read or search when it is unambiguously one.

    A command whose first word is plainly neither a reader, searcher or filter nor a wrapper
    (`git log`, `python -m pytest`, a 1 kB `bd create --description=…`) is a shell action
    whatever follows, found without splitting it: shlex reads a character at a time in Python,
    and its two passes over every command were ~40% of parsing a Claude transcript (py-spy,
    the 50 MB one of benchmarks/store_import.py)."""
    text = _command_text(command)
    if text is None:
        return _SHELL_PLAIN
    first = _FIRST_WORD.match(text)
    if first is not None and first.group(1) not in _MAY_READ and os.path.basename(first.group(1)) not in _WRAPPERS:
        return Canonical("shell", (), text)
    return _split_shell(text)


def _split_shell(text: str) -> Canonical:
    """`shell` of a command text the long way, splitting it as the shell would (what `shell`'s
    shortcut is tested against)."""
    inner = _unwrap(text)
    files = _plain(inner) if inner is not None else None
    if not files:
        return Canonical("shell", (), text)
    kinds = {k for _, k in files}
    return Canonical("read" if "read" in kinds else "search", tuple(files), text)


def _command_text(command: Any) -> str | None:
    if isinstance(command, str):
        return command
    if isinstance(command, list) and command and all(isinstance(w, str) for w in command):
        return shlex.join(command)
    return None


def _unwrap(text: str) -> str | None:
    """`bash -lc 'cat x'` → `cat x` (codex wraps every command so); None when it cannot be split."""
    try:
        words = shlex.split(text)
    except ValueError:
        return None
    while len(words) == 3 and os.path.basename(words[0]) in _WRAPPERS and words[1] in ("-c", "-lc", "-cl"):
        text = words[2]
        try:
            words = shlex.split(text)
        except ValueError:
            return None
    return text


def _plain(text: str) -> list[tuple[str, str]] | None:
    """The files a chain of plain readers/searchers names, or None when anything else runs."""
    lexer = shlex.shlex(text, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    try:
        tokens = list(lexer)
    except ValueError:
        return None
    if not tokens or any(t.startswith(("$", "`")) or "$(" in t or "`" in t for t in tokens):
        return None
    files: list[tuple[str, str]] = []
    for part in _split(tokens, _OPERATORS):
        stages = _split(part, {"|"})
        if any(not stage for stage in stages) or any(t in ("(", ")") or set(t) <= set("<>&|;()") for stage in stages for t in stage):
            return None  # a redirection, a subshell, a background job: not plainly a read
        found = _reader(stages[0])
        if found is None or not found[1]:
            return None  # no plain reader, or one reading its stdin
        for stage in stages[1:]:
            later = _reader(stage) if stage[0] in _FILTERS else None
            if later is None or later[1]:
                return None  # no plain filter, or one naming files of its own
        files.extend((path, found[0]) for path in found[1])
    return files or None


def _split(tokens: list[str], on: set[str]) -> list[list[str]]:
    parts: list[list[str]] = [[]]
    for t in tokens:
        if t in on:
            parts.append([])
        else:
            parts[-1].append(t)
    if len(parts) > 1 and not parts[-1] and on == _OPERATORS:
        parts.pop()  # a trailing `;`
    return parts


def _reader(words: list[str]) -> tuple[str, list[str]] | None:
    """(read | search, the paths) of one plain reader or searcher, or None."""
    if not words:
        return None
    name = words[0]
    if name not in _READERS and name not in _SEARCHERS and name not in _FILTERS:
        return None
    valued = _VALUED.get(name, set())
    operands: list[str] = []
    options: list[str] = []
    rest = iter(words[1:])
    ended = False
    for w in rest:
        if not ended and w == "--":
            ended = True
        elif not ended and w.startswith("-") and w != "-":
            options.append(w)
            if w in valued:
                value = next(rest, None)
                if value is None:
                    return None
                options.append(value)
        else:
            operands.append(w)
    if name == "sed":
        if "-i" in options or any(o.startswith(("-i", "--in-place")) for o in options) or "-n" not in options:
            return None
        script = options[options.index("-e") + 1] if "-e" in options else (operands.pop(0) if operands else "")
        if not all(_SED_PRINT.match(s.strip()) for s in script.split(";") if s.strip()):
            return None
        return "read", operands
    if name in ("rg", "grep"):
        if not any(o in ("-e", "--files") for o in options):  # else no operand is the pattern
            if not operands:
                return None
            operands = operands[1:]  # the pattern
        if not operands and name == "rg":
            operands = ["."]  # rg searches the working directory
        return "search", operands
    if name == "find":
        if any(o in ("-exec", "-execdir", "-delete", "-ok", "-fprint") for o in options):
            return None
        return "search", operands[:1]  # where it looked; the rest are its expression's values
    if name == "ls":
        return "search", operands or ["."]
    if name in _READERS:
        return "read", operands
    if operands:
        return None  # wc, sort, … of a file: what it shows is not the file
    return "read", []  # a plain filter of its stdin


# ---------------------------------------------------------------- how a check names an action


def is_canonical(name: str) -> bool:
    return name.startswith(PREFIX)


def spelling_problem(name: str) -> str | None:
    """Why an `action:…` spelling names no action (None: it is one)."""
    kind = name[len(PREFIX):]
    if kind in KINDS:
        return None
    if kind.startswith("mcp:") and kind[4:] and not kind.endswith("/"):
        return None
    return f"{name!r} names no action: want action:<{'|'.join(KINDS)}>, or action:mcp:<server> / action:mcp:<server>/<tool>"


def kinds_of(c: Canonical) -> frozenset[str]:
    """Every canonical spelling (without its prefix) that matches the call: its action, what it
    did to each of its files, `shell` for any call that ran a command (a `cat` is a read and a
    shell command), and `mcp`, `mcp:<server>` for an MCP call."""
    kinds = {c.action, *(k for _, k in c.files)}
    if c.command is not None:
        kinds.add("shell")
    if c.action.startswith("mcp:"):
        kinds.add("mcp")
        kinds.add(c.action.split("/", 1)[0])
    return frozenset(kinds)


def matches(name: str, tool: str, c: Canonical) -> bool:
    """Whether a check's tool name matches a call: natively (the exact tool) or canonically."""
    if name.startswith(PREFIX):
        return name[len(PREFIX):] in kinds_of(c)
    return name == tool


# What each table's calls can read as: a shell command is shell, or a read or a search by
# what it runs (an edit made through the shell, as mini-swe-agent's `python3 - <<EOF`, stays
# shell); a patch writes or edits; stdin feeds or polls a running command.
_TABLE_ACTIONS = {
    "read": ("read",), "write": ("write",), "edit": ("edit",), "search": ("search",), "shell": ("shell", "read", "search"),
    "shell-only": ("shell",), "poll": ("poll",), "stdin": ("shell", "poll"), "patch": ("write", "edit"),
    "web": ("web",), "subagent": ("subagent",), "plan": ("plan",),
}


def actions_of(tools: Iterable[str], harness: str | None = None) -> frozenset[str]:
    """Every canonical action calls of these native tools can read as (a harness's declared
    tools: what a check naming `action:edit` can ever match there). An MCP tool reads as
    `mcp:…`, which `action:mcp` matches; a name no table holds, as other."""
    names = _NAMES.get(harness or "") or {}
    out: set[str] = set()
    for tool in tools:
        own = names.get(tool)
        kind = own[0] if own is not None else (_BY_TOOL[tool][0] if tool in _BY_TOOL else None)
        if kind is not None:
            out.update(_TABLE_ACTIONS.get(kind, (kind,)))
        elif tool.startswith("mcp__"):
            out.add("mcp")
        else:
            out.add("other")
    return frozenset(out)


def spelling_for(tool: str, harness: str | None = None) -> str:
    """The canonical spelling a check should use instead of a native tool name."""
    c = canonical(tool, {"command": "", "cmd": ""}, harness)
    return PREFIX + c.action
