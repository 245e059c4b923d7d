"""Which language a written `transform:` is: JavaScript unless marked, an unmarked one that
reads as Python refused (with the fix) rather than run as JavaScript."""

from __future__ import annotations

import re

import pytest

from benchtape.spec.transform_source import Transform, TransformRefused, python_evidence, python_problem, transform_of

# madbench benches as written: each must load as JavaScript, whatever Python would make of it
JAVASCRIPT = [
    "output.toUpperCase()",
    "output.trim()",
    "JSON.parse(output).answer",
    "output.match(/\\d+/)[0]",
    "output.length > 0 ? 'yes' : 'no'",
    "output.split('\\n')[0]",
    "output",
    "output.includes('x')",
    "Math.max(1, output.length)",
    "!output.includes('x')",
    "const x = output.trim();\nreturn x.toUpperCase();",
    "return output.trim()",
    "output.slice(-10)",
    "String(output).trim()",
    "output.split('\\n').filter(l => l).join(' ')",
    "`${output}!`",
    "output\n  .trim()\n  .toUpperCase()",
    "context.vars.name + output",
    "null",
    "'answer' in JSON.parse(output)",  # `in` is JavaScript too
    "output.trim() // a comment",
]

# Python transforms as benchtape used to read them: each refused, naming what gave it away
PYTHON = {
    "output.upper()": "`.upper()`",
    "output.strip()": "`.strip()`",
    "output[::-1]": "a slice",
    "re.sub(r'\\s+', ' ', output)": "`re`",
    "output.split()[0]": "`.split()` with no separator",
    "len(output)": "`len`",
    "'yes' not in output": "`not in`",
    "output is None": "`not in`/`is`",
    "output[-1]": "a negative index",
    "output if output else 'empty'": "`x if c else y`",
    "not output": "`not`",
    "output == None": "`None`",
    "', '.join(output.split(','))": "`str.join`",
    "x = output.strip()\nreturn x": "`.strip()`",
    "output  # note": "a `#` comment",
    "f'{output}!'": "an f-string",
    "0 < output.length < 5": "a chained comparison",
}


@pytest.mark.parametrize("source", JAVASCRIPT)
def test_a_madbench_transform_is_javascript(source):
    assert python_evidence(source) is None
    assert transform_of(source) == Transform("js", source=source)


@pytest.mark.parametrize("source,evidence", PYTHON.items())
def test_an_unmarked_python_transform_is_refused_with_the_fix(source, evidence):
    with pytest.raises(TransformRefused) as caught:
        transform_of(source)
    assert "reads as Python" in str(caught.value) and evidence in str(caught.value)
    assert "output.toUpperCase()" in caught.value.fix and "{python: " in caught.value.fix


def test_the_marker_makes_it_python_and_compiles_it_without_running_it():
    assert transform_of({"python": "output.upper()"}) == Transform("python", source="output.upper()")
    assert transform_of({"python": "x = output.strip()\nreturn x"}).language == "python"  # a function body
    assert transform_of({"python": "__import__('os')._exit(3)"}).language == "python"  # compiled, never evaluated here
    with pytest.raises(TransformRefused, match="does not compile: line 1"):
        transform_of({"python": "output.("})
    assert python_problem("output.upper()") is None


@pytest.mark.parametrize(
    "value,language,path,function",
    [
        ("file://t/answer.js", "js", "t/answer.js", None),
        ("file://t/answer.mjs:pick", "js", "t/answer.mjs", "pick"),
        ("file://answer.py", "python", "answer.py", None),
        ("file://answer.py:clean", "python", "answer.py", "clean"),
        ({"python": "file://answer.py"}, "python", "answer.py", None),
    ],
)
def test_a_file_transform_takes_its_language_from_its_extension(value, language, path, function):
    t = transform_of(value)
    assert (t.language, t.path, t.function) == (language, path, function)
    assert transform_of(t.value()) == t  # the canonical form reads back the same


@pytest.mark.parametrize(
    "value,message",
    [
        ("file://answer.txt", "is JavaScript (.js, .mjs, .cjs) or Python (.py)"),
        ({"python": "file://a.js"}, "names a JavaScript file"),
        ({"js": "output"}, "takes one key, `python:`"),
        ({"python": 3}, "needs the Python source"),
        (["x"], "must be a string (JavaScript) or {python: ...}, got a list"),
        ("  ", "is empty"),
    ],
)
def test_what_cannot_run_as_written_is_refused(value, message):
    with pytest.raises(TransformRefused, match=re.escape(message)):
        transform_of(value)
