"""aider's chat history: its echoed command line (the `--message` prompt, over as many lines as
the prompt has) is never the assistant's text."""

from __future__ import annotations

from benchtape.adapters.aider_history import AiderHistoryParser

PROMPT = ["# Key rotate", "", "Notes from the change's commits:", "- rotate keys", "> a quoted line", "then more"]

HISTORY = [
    "",
    "# aider chat started at 2026-12-06 16:47:05",
    "",
    f"> /tools/aider/bin/aider --edit-format diff --yes-always --message {PROMPT[0]}",
    *PROMPT[1:-1],
    PROMPT[-1] + "  ",
    "> Aider v0.86.2  ",
    "> Model: openai/scripted with diff edit format  ",
    "",
    *[f"#### {line}  " for line in PROMPT],
    "",
    "I will make the change.",
    "",
    "> Tokens: 12 sent, 3 received.  ",
    "> Applied edit to calc.py  ",
]


def parse(lines: list[str]) -> list[tuple[str, dict]]:
    parser = AiderHistoryParser()
    for line in lines:
        parser.feed(line)
    return [(a.kind, a.data) for a in parser.finish()]


def test_a_multi_line_message_echoed_in_the_command_line_is_not_the_answer():
    actions = parse(HISTORY)
    said = [data["text"] for kind, data in actions if kind == "message.assistant"]
    assert said == ["I will make the change."]
    assert ("metrics", {"tokens_in": 12, "tokens_out": 3}) in actions
    assert [data["tool"] for kind, data in actions if kind == "tool.call"] == ["apply_edit"]


def test_without_a_matching_user_message_the_echo_runs_to_aiders_line_break():
    history = [line for line in HISTORY if not line.startswith("####")]
    history.insert(history.index("I will make the change."), "#### something else  ")
    said = [data["text"] for kind, data in parse(history) if kind == "message.assistant"]
    assert said == ["I will make the change."]


def test_a_one_line_message_leaves_the_answer_alone():
    history = ["# aider chat started at 2026-12-06 16:47:05", "", "> /bin/aider --message fix it  ", "> Aider v0.86.2  ", "", "#### fix it  ", "", "Done.", ""]
    assert parse(history)[0] == ("message.assistant", {"text": "Done."})


def test_a_rounded_token_count_is_unknown_and_the_exact_one_is_kept():
    """aider prints a count of thousands rounded (`2.4k sent`): that one is unknown, never a
    guess; the exact `758 received` beside it was dropped with it (attrs, newcomer pass)."""
    history = [line if not line.startswith("> Tokens") else "> Tokens: 2.4k sent, 758 received. Cost: $0.00 message, $0.00 session.  " for line in HISTORY]
    assert ("metrics", {"tokens_out": 758}) in parse(history)
    both = [*history, "> Tokens: 1,204 sent, 12 received.  "]
    assert ("metrics", {"tokens_out": 770}) in parse(both)  # the sent side stays unknown: one of its counts was rounded

