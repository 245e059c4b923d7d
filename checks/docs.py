"""`docs/checks.md`, generated from the registry: the page cannot drift from the code
because it is the code's own registrations, rendered.

Regenerate with `python -m benchtape.checks.docs > docs/checks.md`; a test fails when the
committed page is stale.
"""

from __future__ import annotations

import sys

from benchtape.checks.registry import ALIASES, REFUSED, CheckInfo, catalog

# Families in the order the spec presents them; any other family follows, by name.
FAMILY_ORDER = ("String", "Structured", "Numeric", "NLP", "session", "environment", "Mastra", "Exec", "Model", "Script", "Composite", "Judge", "Custom")
REGENERATE = "python -m benchtape.checks.docs > docs/checks.md"


def _title(family: str) -> str:
    return family if any(ch.isupper() for ch in family) else family.capitalize()


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _families(infos: list[CheckInfo]) -> list[tuple[str, list[CheckInfo]]]:
    by: dict[str, list[CheckInfo]] = {}
    for info in infos:
        by.setdefault(info.family, []).append(info)
    known = [f for f in FAMILY_ORDER if f in by]
    rest = sorted(f for f in by if f not in FAMILY_ORDER)
    return [(f, sorted(by[f], key=lambda i: i.type)) for f in known + rest]


def _render_check(info: CheckInfo) -> list[str]:
    flags = [f"kind: {info.kind}", f"reads: {info.reads}"]
    if info.prefix:
        flags.append(f"prefix: also matches `{info.type}:…`")
    if info.control_na:
        flags.append("not applicable under the negative control")
    if info.reads_workspace:
        flags.append("reads the workspace")
    lines = [f"### `{info.type}`", "", info.summary, "", "- " + "\n- ".join(flags), ""]
    if info.args:
        lines += ["| argument | meaning (default) |", "|---|---|"]
        lines += [f"| `{_cell(name)}` | {_cell(meaning)} |" for name, meaning in info.args.items()]
        lines.append("")
    if info.example:
        lines += ["```yaml", info.example.rstrip(), "```", ""]
    if info.errors:
        lines += ["Refused or errors on:", ""] + [f"- {e}" for e in info.errors] + [""]
    if info.kind == "AI":
        from benchtape.checks.judge import BY_NAME, template_of

        lines += [f"<details><summary>The prompt (checks/judge_prompts/{BY_NAME[info.type].family}.md)</summary>", "", "```text", template_of(info.type).rstrip(), "```", "", "</details>", ""]
    return lines


def _tool_names_intro() -> list[str]:
    """Native and canonical tool names: which checks read which (issue 34)."""
    from benchtape.core.canonical import KINDS

    return [
        "#### Tool names: native or canonical",
        "",
        "Every tool call is recorded with its native name (Claude Code's `Read`, Codex's `command_execution`)",
        "and its **canonical action**, the same word in every harness (benchtape.core.canonical):",
        f"{', '.join(f'`{k}`' for k in KINDS if k != 'mcp')}, and `mcp:<server>/<tool>`, with the files it touched and the command it ran.",
        "A check that takes tool names takes either form:",
        "",
        "- a native name (`Edit`) matches exactly that tool of that harness, as it always did;",
        "- a canonical one, `action:<kind>` (`action:read`, `action:edit`, `action:shell`, `action:mcp:github/create_issue`,",
        "  `action:mcp:github` for any tool of that server, `action:mcp` for any MCP call), matches every harness's calls",
        "  of that action. A call matches each action it did: a codex `cat -- calc.py` is `action:read` and `action:shell`;",
        "  an apply_patch that adds one file and updates another is `action:write` and `action:edit`.",
        "",
        "Claude Code's Read/NotebookRead, a plain `cat`/`head`/`tail`/`nl`/`sed -n` of a file (alone, chained with `&&`/`;`, or",
        "piped into plain filters; no redirection or substitution) are reads; Write and apply_patch's Add File are writes;",
        "Edit/MultiEdit/NotebookEdit and apply_patch's Update/Delete File (codex's `file_change` add = write, update = edit)",
        "are edits; Glob/Grep/LS and a plain `rg`/`grep`/`ls`/`find` are searches; every other command is `shell` only.",
        "",
        "| check | reads | native name | `action:` spelling |",
        "|---|---|---|---|",
        "| `session:tool-used` | invocations (calls, MCP calls, skills, spawns) | yes | yes (a spawn is `action:subagent`, a skill `action:other`) |",
        "| `session:tool-args-match` | calls | yes | yes (the args are the harness's own, but an action's `file_path`/`path`/`notebook_path` is read as a path: the input's, else the files the call acted on, resolved against the work dir as `file-read` does) |",
        "| `session:tool-sequence` | calls | yes | yes |",
        "| `session:tools-only` | calls | yes | yes |",
        "| `session:file-read` (`args.tools`) | calls: a native read tool's path argument, an `action:` read's files | yes | yes (default: the read tools and `action:read`) |",
        "| `code-tool-call-accuracy` | calls | yes | yes |",
        "| `environment:tool-available` | the tool's init roster | yes | no: a roster lists native names |",
        "| `llm-tool-call-accuracy` | calls, as text for the judge | (text) | (text): the judge reads names, it does not match them |",
        "",
        "`benchtape preflight`, `run --dry-run` and `evaluation validate` warn when a check names a native tool that an",
        "arm's harness never emits (each adapter declares its `native_tools`), naming the check, the harness and the",
        "`action:` spelling to write instead, and the harnesses where even that spelling cannot match. They also warn when",
        "a check names an action the harness never performs: mini-swe-agent's edits are shell commands (`action:shell`,",
        "never `action:edit`), and aider neither reads nor runs anything (its calls are `action:edit`).",
        "",
    ]


def _family_intro(family: str) -> list[str]:
    """What a family's checks share, where one page of prose says it better than each check."""
    if family == "session":
        return _tool_names_intro()
    if family != "Judge":
        return []
    from benchtape.checks.judge import prompt_files

    lines = [
        "A judge check renders its prompt from the session, asks the grading's judge, and parses the reply.",
        "It never opens a connection itself: the judge comes with the grading (`CheckContext.judge`), which",
        "records every request and reply in the `judgments` table. `regrade` answers a byte-identical request",
        "(same transport, model, parameters, prompt text and vote) from that table and sends nothing, unless",
        "`--rejudge`; `grade` (the positive control) always asks again, so a verdict that flips there is the",
        "judge disagreeing with itself (DIVERGED). Under `check` (the negative control) judge checks are graded",
        "like any other check: against the no-op agent's output each must fail.",
        "",
        "- Inputs: `{{OUTPUT}}` (the final output), `{{PROMPT}}` (`args.prompt`, else vars `prompt`/`query`/`question`,",
        "  else the session's prompt), `{{CONTEXT}}` (`args.context`, else vars `context`; a list is numbered),",
        "  `{{REFERENCE}}` and `{{TOOLS}}` (the session's tool calls) are wrapped in XML tags, with every closing tag",
        "  of those five names stripped from the values. `{{RUBRIC}}` (your criterion) goes in unwrapped.",
        "- The reply: the last balanced JSON object in it, `{reason, score, pass}`. A reply with no JSON object,",
        "  a refusal, or an object with neither `pass` nor `score` is an undecided vote: the check ERRORs.",
        "- Scoring: the judge's `score` (risk types: 1 − its rating, the rating kept as `raw_<type>`). With no bar",
        "  (`llm-rubric`, `factuality`, `model-graded-closedqa`, `g-eval`, `answer-relevance`, `context-faithfulness`,",
        "  `context-recall`) and no `threshold:`, the judge's own `pass` decides; otherwise `score ≥ threshold`.",
        "  `threshold: 0` means the type's default.",
        "- `args.votes: N` (odd) asks N times; the score is the fraction of passing votes and the check passes when",
        "  most pass.",
        "- Evidence: `judge_provider`, `judge_model`, `judge_input_tokens`, `judge_output_tokens`, `judge_cost_usd`",
        "  (null when unknown), `judge_latency_ms`, `judge_reused`, `judgments` (their ids), `judge_reasoning`,",
        "  `threshold`, and `votes` when there are several.",
        "- Which judge: `args.judge` (a provider of the bench's `judges:` block, or a built-in provider such as",
        "  `anthropic`, `openai`, `claude-code`), else `judges.default`; `args.model` (a model id, or a key of",
        "  `models:`), else the provider's model. See the README's judges section for the block's forms.",
        "",
    ]
    for name, (intro, _templates) in prompt_files().items():
        lines += [f"**Prompt family `{name}`** (checks/judge_prompts/{name}.md): " + " ".join(intro.split()), ""]
    return lines


TRANSFORMS = [
    "## Output transforms",
    "",
    "Any check (and a scenario, or its `options:`) may take `transform:`, which rewrites the output before "
    "the check reads it. A string is JavaScript, as in madbench: an expression over `output` and `context` "
    "(`{vars, prompt}`), a function body that `return`s, or `file://path.js[:function]`. Python is marked: "
    "`transform: {python: \"output.strip()\"}`, or `file://path.py[:function]`. An unmarked transform that "
    "reads as Python is refused at load, with the fix. A check's transform overrides the scenario's. "
    "Transforms run where the session is graded (node, or bun when `defaults.bun:` pins it; python3), never "
    "inside benchtape, one process per language per session; one that fails errors only the checks that read "
    "its output. See [transforms.md](transforms.md).",
    "",
]


def render_markdown() -> str:
    """The whole page: every registered type by family, then the refused types and aliases."""
    infos = list(catalog().values())
    families = _families(infos)
    out = [
        "# Check catalog",
        "",
        f"<!-- generated by checks/docs.py: regenerate with `{REGENERATE}`; do not edit by hand -->",
        "",
        f"{len(infos)} check types are built in"
        + (f", {len(REFUSED)} more are named by the spec and refused with the reason," if REFUSED else ",")
        + f" and {len(ALIASES)} alias spellings load as their canonical type.",
        "Every check returns a score in [0, 1], higher is better, with raw values in its evidence. "
        "Statuses: PASS, FAIL, ERROR (could not measure), NA (not applicable: `latency` and `cost` under the negative control, and a check of what the harness could not record, such as tool calls under a `command` agent with no `transcript:`, said before the run). An NA check is out of the verdict and of the session's score.",
        "",
        "## Families",
        "",
        "| family | types |",
        "|---|---|",
    ]
    out += [f"| {_title(f)} | {', '.join(f'`{i.type}`' for i in items)} |" for f, items in families]
    out.append("")
    out += TRANSFORMS
    for family, items in families:
        out += [f"## {_title(family)}", ""] + _family_intro(family)
        for info in items:
            out += _render_check(info)
    if REFUSED:
        out += ["## Refused in this version", "", "| type | why |", "|---|---|"]
        out += [f"| `{t}` | {_cell(REFUSED[t])} |" for t in sorted(REFUSED)]
        out.append("")
    out += ["## Aliases", "", "| spelling | loads as |", "|---|---|"]
    out += [f"| `{a}` | `{ALIASES[a]}` |" for a in sorted(ALIASES)]
    out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
