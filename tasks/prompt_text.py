"""A task's prompt, from the change's own words: the PR's title and description (a merge's
message, a squash's subject and body, the merged branch's commit messages), never its diff.

What names where the fix is goes: the "Merge pull request #N from …" line, a squash's
"(#N)", closing references ("Fixes #602"), and trailers (Signed-off-by, Co-authored-by). The
leak lint (spec/prompt_leaks.py) then checks what is left. A linked issue's text is used
when the message carries it (`harvest.prompt_source: issue`); the forge is never asked.
"""

from __future__ import annotations

import re

from benchtape.tasks.gitlog import Landing

MAX_PROMPT = 6000
_KEYWORD = r"(?:close[sd]?|fix(?:e[sd])?|resolve[sd]?|see|refs?|related(?: to)?|part of|addresses)\s*:?\s+"
_REFERENCES = r"(?:[\w.-]+/[\w.-]+)?#\d+(?:\s*(?:,|and)\s*(?:[\w.-]+/[\w.-]+)?#\d+)*"
# A reference that is a clause of its own takes its punctuation with it: one that opens a line,
# after a list marker ("fix #544: Correctly pass …", Python-Markdown's body "Fixes #918." whose
# "." stayed as a line), one after a sentence ("It gave bad output. Fixes #602."), one in
# parentheses. One inside a sentence ("Improve X, see #12.") takes the separator before it, and
# the sentence keeps its end.
_OWN_PUNCTUATION = r"[ \t]*[.,;:\u2013\u2014-]*"
_LEADING = re.compile(rf"^([ \t]*(?:(?:[-*+]|\d+[.)])[ \t]+)?)(?:{_KEYWORD}{_REFERENCES}{_OWN_PUNCTUATION}[ \t]*)+", re.IGNORECASE)
_AFTER_SENTENCE = re.compile(rf"(?<=[.!?])(?:[ \t]+{_KEYWORD}{_REFERENCES}{_OWN_PUNCTUATION})+", re.IGNORECASE)
_WRAPPED = re.compile(rf"[ \t]*\([ \t]*{_KEYWORD}{_REFERENCES}{_OWN_PUNCTUATION}[ \t]*\)", re.IGNORECASE)
_LIST_MARKER = re.compile(r"^[ \t]*(?:[-*+]|\d+[.)])(?=[ \t]|$)")
_IN_SENTENCE = re.compile(rf"(?<=\S)[ \t]*[,;:\u2013\u2014-]?[ \t]*\b{_KEYWORD}{_REFERENCES}", re.IGNORECASE)
_TRAILER = re.compile(r"^(?:Signed-off-by|Co-authored-by|Reviewed-by|Acked-by|Tested-by|Reported-by|Suggested-by|Change-Id|Cc):.*$", re.IGNORECASE | re.MULTILINE)
_ISSUE_BLOCK = re.compile(r"^(?:Issue|Original issue|Issue text)\s*:\s*\n(.+?)(?:\n\n(?=\S)|\Z)", re.IGNORECASE | re.MULTILINE | re.DOTALL)


# A merged PR is no longer a draft: "WIP: Fix X" (pallets/click #3434) asks for "Fix X"
_DRAFT = re.compile(r"^\s*(?:\[(?:WIP|Draft)\]|\((?:WIP|Draft)\)|(?:WIP|Draft)\s*:)\s*", re.IGNORECASE)


def prompt_for(landing: Landing, branch_messages: list[str], prompt_source: str = "auto") -> tuple[str, str]:
    """(prompt.md text, where it came from: `issue`, `pull_request` or `commit`)."""
    title, body = _title_body(landing)
    title = _DRAFT.sub("", title) or title
    issue = _ISSUE_BLOCK.search(landing.fix.body)
    if issue and prompt_source in ("issue", "auto"):
        return _finish(title, issue.group(1)), "issue"
    body = _without_own_number(body, landing.number)
    parts = [body] if body else []
    notes = [_without_own_number(_clean(m), landing.number) for m in branch_messages]
    notes = [n for n in notes if n and n.lower() != title.lower() and not n.lower().startswith("merge ")]
    if notes and len(notes) <= 20:
        parts.append("Notes from the change's commits:\n\n" + "\n".join(f"- {_one_paragraph(n)}" for n in notes))
    return _finish(title, "\n\n".join(parts)), "pull_request" if landing.number is not None else "commit"


def _without_own_number(text: str, number: int | None) -> str:
    """`text` without the PR's own number where a line ends with it, as a squash's "(#N)" goes:
    marshmallow #2102's branch commit reads "fix: unhandled OSError ... #2102". One inside a
    sentence stays, for the leak lint to name."""
    if number is None:
        return text
    return re.sub(rf"[ \t]*(?:\(#{number}\)|#{number})(?![0-9])[ \t.]*$", "", text, flags=re.MULTILINE)


def _title_body(landing: Landing) -> tuple[str, str]:
    msg = landing.fix
    if landing.kind == "merge" and msg.subject.startswith("Merge "):  # a merge titled as its PR ("Fix X (#286)") reads as a squash does
        lines = msg.body.strip().splitlines()
        title = lines[0].strip() if lines else ""
        body = "\n".join(lines[1:]).strip()
        if not title:
            title = f"Merge {landing.branch.split('/', 1)[-1]}" if landing.branch else msg.subject
        return _clean(title), _clean(body)
    title = _clean(re.sub(r"\s*\(#\d+\)\s*$", "", msg.subject))
    # GitHub's squash body lists the PR's commits as `* subject`: the one that repeats the title says nothing twice
    body = "\n".join(line for line in _clean(msg.body).splitlines() if line.strip().lstrip("*- ").strip() != title or not line.lstrip().startswith(("*", "-")))
    return title, _clean(body)


_MR_LINE = re.compile(r"^See merge request \S+!\d+\s*$", re.MULTILINE)
# A squash body's `* subject` lines that say how the PR was made, not what it changes
# (tenacity #640's prompt ended "* Apply suggestions from code review")
_PROCESS_LINE = re.compile(
    r"^[ \t]*[*-][ \t]+(?:apply suggestions? (?:from|to)\b.*|merge (?:branch|remote-tracking branch|pull request)\b.*|update \S+\.\w+|\[pre-commit\.ci\].*|pre-commit\b.*"
    r"|(?:fix|run|apply) (?:lint(?:ing)?|format(?:ting)?|typos?|mypy|ruff|black)|address(?:ed|ing)? (?:the )?(?:code )?(?:review )?(?:comments?|feedback|suggestions?)\b.*|wip|format(?:ting)?|lint(?:ing)?)[ \t.]*$",
    re.IGNORECASE | re.MULTILINE,
)


# the body pre-commit.ci gives its "[pre-commit.ci] auto fixes" commits, which a squash keeps
# under that bullet (tomli #135's prompt held it twice)
_BOT_LINE = re.compile(r"^[ \t]*for more information, see https?://pre-commit\.ci/?[ \t]*$", re.IGNORECASE | re.MULTILINE)


def _clean(text: str) -> str:
    text = _MR_LINE.sub("", text)
    text = _PROCESS_LINE.sub("", text)
    text = _BOT_LINE.sub("", text)
    text = _TRAILER.sub("", text)
    text = re.sub(r"(?:\n[ \t]*-{3,}[ \t]*)+\s*\Z", "", "\n" + text.strip())  # the separator GitHub puts before a squash's co-authors, left alone at the end
    text = _without_references(text)
    text = re.sub(r"[ \t]+$", "", text, flags=re.MULTILINE)
    return re.sub(r"\n{3,}", "\n\n", text).strip()


def _without_references(text: str) -> str:
    """`text` without its closing references ("Fixes #918."). A line they leave with no word
    goes: a "." or a bare list marker alone is no line of a prompt (Python-Markdown's was)."""
    kept = []
    for line in text.split("\n"):
        bare = _LEADING.sub(r"\1", line)
        for pattern in (_WRAPPED, _AFTER_SENTENCE, _IN_SENTENCE):
            bare = pattern.sub("", bare)
        if bare == line or re.search(r"\w", _LIST_MARKER.sub("", bare)):
            kept.append(bare)
    return "\n".join(kept)


NOTE_CHARS = 500  # a commit note's length in the prompt's list


def _one_paragraph(text: str) -> str:
    """A commit note on one line, at most NOTE_CHARS: a longer one is cut at a word and says so
    (a dateutil note ended "properties that are expected to", read as the author's words)."""
    line = re.sub(r"\s*\n\s*", " ", text.strip())
    if len(line) <= NOTE_CHARS:
        return line
    return line[: NOTE_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + " …"


def _finish(title: str, body: str) -> str:
    text = f"# {title}\n" + (f"\n{body.strip()}\n" if body.strip() else "")
    if len(text) > MAX_PROMPT:
        text = text[:MAX_PROMPT].rsplit("\n", 1)[0] + "\n"
    return text


THIN_WORDS = 12  # fewer words than this, and nothing but a title: a newcomer's cachetools tasks were all 7-word titles


def thin_warning(prompt: str) -> str:
    """What `task create` and `task validate` say of a prompt that is a short title and nothing
    more (cachetools' "Change exact time of expiration in TTLCache.": which way, and for what
    key, only the hidden tests know), '' otherwise. Advice, never a refusal: the change's own
    words are all an offline harvest has."""
    lines = [line for line in prompt.strip().splitlines() if line.strip()]
    words = len(re.findall(r"\w[\w.'-]*", prompt))
    if len(lines) > 1 or words >= THIN_WORDS:
        return ""
    return (
        f"prompt.md is the change's title alone ({words} words): the hidden tests may check what it does not say "
        "(an error's type, an edge case, which way a limit moves); say what is wanted in prompt.md (the PR's description or its issue), or keep it knowingly"
    )
