"""Structured checks (JSON, XML, HTML, SQL, function calls) on real mock sessions."""

from __future__ import annotations

import json

import pytest
from gradekit import grade, spec

from benchtape.checks.registry import CheckConfigError, build, catalog
from benchtape.checks.sqltext import check_sql, find_sql

SCHEMA = {"type": "object", "required": ["status"], "properties": {"status": {"enum": ["ok", "fail"]}}}
WEATHER = [{"name": "get_weather", "parameters": {"type": "object", "required": ["city"], "properties": {"city": {"type": "string"}}}}]


def tools_call(name: str, args: object, *, encode: bool = True) -> str:
    return json.dumps([{"id": "c1", "type": "function", "function": {"name": name, "arguments": json.dumps(args) if encode else args}}])


# (check, output, passes)
CASES = [
    ({"type": "is-json"}, ' {"status": "ok"}\n', True),
    ({"type": "is-json"}, "```json\n{\"status\": \"ok\"}\n```", False),
    ({"type": "is-json"}, "[1, 2, NaN]", False),
    ({"type": "is-json", "value": SCHEMA}, '{"status": "ok"}', True),
    ({"type": "is-json", "value": SCHEMA}, '{"status": "maybe"}', False),
    ({"type": "is-json", "value": json.dumps(SCHEMA)}, '{"status": "fail"}', True),
    ({"type": "contains-json"}, 'Result: {"a": [1, 2]} done', True),
    ({"type": "contains-json"}, "use {braces} and [brackets] freely", False),
    ({"type": "contains-json", "value": SCHEMA}, 'first {"x": 1} then {"status": "ok"}', True),
    ({"type": "contains-json", "value": SCHEMA}, 'only {"x": 1}', False),
    ({"type": "is-xml"}, '<?xml version="1.0"?>\n<root><a href="x">t</a></root>\n', True),
    ({"type": "is-xml"}, "<root><a></root>", False),
    ({"type": "is-xml"}, "text <root/>", False),
    ({"type": "contains-xml"}, "Here: <config><port>80</port></config> as asked", True),
    ({"type": "contains-xml"}, "Here: <config><port>80</config> broken, a < b > c", False),
    ({"type": "contains-xml"}, "self-closing <br/> counts", True),
    ({"type": "is-html"}, "<div class='x'><p>Hello</p></div>", True),
    ({"type": "is-html"}, "Hello <b>world</b>", False),
    ({"type": "is-html"}, "<y>not a known element</y>", False),
    ({"type": "is-html"}, '<?xml version="1.0"?><html></html>', False),
    ({"type": "is-html", "value": {"rootTag": "div", "hasElement": ["ul", "li"]}}, "<div><ul><li>a</li></ul></div>", True),
    ({"type": "is-html", "value": {"rootTag": "section"}}, "<div><ul><li>a</li></ul></div>", False),
    ({"type": "contains-html"}, "Use <strong>bold</strong> here", True),
    ({"type": "contains-html"}, "if a < b and c > d then x<y>z", False),
    ({"type": "contains-html", "value": {"attrHas": {"href": "https://"}}}, 'see <a href="https://x.org">x</a>', True),
    ({"type": "contains-html", "value": {"attrHas": "href"}}, "see <a name=x>x</a>", False),
    ({"type": "contains-html"}, "a custom <my-widget></my-widget>", True),
    ({"type": "is-sql"}, "SELECT id, name FROM users WHERE active = 1 ORDER BY name;", True),
    ({"type": "is-sql"}, "Select the best option from the list, then run it.", False),
    ({"type": "is-sql"}, "SELECT a FROM", False),
    ({"type": "contains-sql"}, "Run this:\n```sql\nselect count(*) from orders\n```", True),
    ({"type": "contains-sql"}, "Run SELECT name FROM users WHERE id = 3 to see it.", True),
    ({"type": "contains-sql"}, "You can select the file from the list.", False),
    ({"type": "is-valid-function-call"}, '{"name": "get_weather", "arguments": {"city": "Oslo"}}', True),
    ({"type": "is-valid-function-call"}, '{"name": "get_weather", "arguments": "{\\"city\\": \\"Oslo\\"}"}', True),
    ({"type": "is-valid-function-call"}, '{"name": "get_weather"}', False),
    ({"type": "is-valid-function-call"}, '{"name": "", "arguments": {}}', False),
    ({"type": "is-valid-function-call", "value": WEATHER}, '{"function_call": {"name": "get_weather", "arguments": {"city": "Oslo"}}}', True),
    ({"type": "is-valid-function-call", "value": WEATHER}, '{"name": "get_weather", "arguments": {"town": "Oslo"}}', False),
    ({"type": "is-valid-function-call", "value": WEATHER}, '{"name": "get_time", "arguments": {}}', False),
    ({"type": "is-valid-openai-tools-call"}, tools_call("search", {"q": "x"}), True),
    ({"type": "is-valid-openai-tools-call"}, tools_call("search", {"q": "x"}, encode=False), False),
    ({"type": "is-valid-openai-tools-call"}, "[]", False),
    ({"type": "is-valid-openai-tools-call"}, json.dumps({"tool_calls": json.loads(tools_call("search", {"q": "x"}))}), True),
    ({"type": "is-valid-openai-tools-call", "value": [{"type": "function", "function": {"name": "search", "parameters": {"type": "object", "required": ["q"]}}}]}, tools_call("search", {}), False),
    ({"type": "is-valid-openai-tools-call"}, '[{"type": "function", "function": {"name": "s", "arguments": "not json"}}]', False),
]


@pytest.mark.parametrize("check,output,passes", CASES, ids=[f"{c['type']}-{i}" for i, (c, _, _) in enumerate(CASES)])
def test_pass_and_fail(said, check, output, passes):
    r = grade(check, said(output))
    assert r.passed is passes, r.reason
    assert r.score == (1.0 if passes else 0.0)


def test_every_structured_type_is_covered():
    mine = {t for t, i in catalog().items() if i.family == "Structured"}
    assert mine == {c["type"] for c, _, _ in CASES}
    assert len(mine) == 10


@pytest.mark.parametrize(
    "check,message",
    [
        ({"type": "is-json", "value": {"type": "objekt"}}, "is-json: 'value' is not a valid JSON Schema"),
        ({"type": "is-json", "value": "{not json"}, "is-json: 'value' is a string but not a JSON Schema document"),
        ({"type": "contains-json", "value": [1, 2]}, "contains-json: 'value' must be a JSON Schema"),
        ({"type": "is-html", "value": {"root": "div"}}, "is-html: unknown schema key(s) ['root']"),
        ({"type": "contains-html", "value": {"hasElement": 3}}, "contains-html: hasElement must be a tag name or a list of them"),
        ({"type": "is-html", "value": {}}, "is-html: the schema is empty"),
        ({"type": "is-html", "value": "div"}, "is-html: 'value' must be a mapping"),
        ({"type": "is-valid-function-call", "value": [{"parameters": {}}]}, "is-valid-function-call: each function in 'value' needs a name"),
        ({"type": "is-valid-openai-tools-call", "value": [{"name": "f", "parameters": {"type": 5}}]}, "is-valid-openai-tools-call: 'parameters of f' is not a valid JSON Schema"),
    ],
)
def test_refused_at_construction(check, message):
    with pytest.raises(CheckConfigError) as exc:
        build(spec(check))
    assert message in str(exc.value)


def test_evidence(said):
    r = grade({"type": "is-json", "value": SCHEMA}, said('{"status": "maybe"}'))
    assert r.evidence["json_type"] == "object" and r.evidence["schema_errors"][0].startswith("status:")
    r = grade({"type": "is-json"}, said("nope"))
    assert r.evidence["json_type"] is None and r.evidence["error"]
    text = 'x {"a": 1} y'
    r = grade({"type": "contains-json"}, said(text))
    assert r.evidence == {"found": True, "start": 2, "end": 10, "candidates_tried": 1, "json_type": "object"}
    r = grade({"type": "is-xml"}, said("<a><b/></a>"))
    assert r.evidence == {"root_tag": "a", "error": None}
    r = grade({"type": "contains-xml"}, said("see <a><b/></a>!"))
    assert r.evidence["root_tag"] == "a" and r.evidence["start"] == 4 and r.evidence["end"] == 15
    r = grade({"type": "is-html", "value": {"hasElement": "table"}}, said("<div><p>x</p></div>"))
    assert r.evidence["schema_problems"] == ["no <table> element"] and r.evidence["root_tag"] == "div" and r.evidence["elements"] == 2
    r = grade({"type": "is-sql"}, said("SELECT 1; DELETE FROM t WHERE id = 2"))
    assert r.evidence == {"statements": 2, "keywords": ["SELECT", "DELETE"], "error": None}
    r = grade({"type": "contains-sql"}, said("try SELECT * FROM t; then rest"))
    assert r.evidence["excerpt"] == "SELECT * FROM t" and r.evidence["start"] == 4
    r = grade({"type": "is-valid-function-call", "value": WEATHER}, said('{"name": "get_weather", "arguments": {"town": "Oslo"}}'))
    assert r.evidence["name"] == "get_weather" and r.evidence["argument_keys"] == ["town"]
    assert any("'city' is a required property" in e for e in r.evidence["errors"])
    r = grade({"type": "is-valid-openai-tools-call"}, said(tools_call("search", {"q": 1})))
    assert r.evidence == {"calls": ["search"], "errors": []}


SQL_YES = [
    "SELECT 1",
    "select * from users where id = 1;",
    "WITH x AS (SELECT 1 AS n) SELECT n FROM x",
    "INSERT INTO t (a, b) VALUES (1, 'it''s'), (2, 'y') RETURNING id;",
    "UPDATE t SET a = a + 1, b = DEFAULT WHERE b IS NOT NULL AND c BETWEEN 1 AND 3",
    "DELETE FROM t WHERE id IN (SELECT id FROM u)",
    "CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, name TEXT NOT NULL);",
    "DROP TABLE IF EXISTS t; CREATE INDEX i ON t (a);",
    "SELECT COUNT(*), EXTRACT(YEAR FROM d) AS y FROM t GROUP BY 2 HAVING COUNT(*) > 1",
    "SELECT CASE WHEN a > 1 THEN 'big' ELSE 'small' END FROM t LEFT JOIN u ON t.id = u.tid",
    "SELECT row_number() OVER (PARTITION BY a ORDER BY b DESC) FROM t -- rank\n",
    "SELECT CAST(a AS VARCHAR(10)) FROM t /* c */ UNION ALL SELECT b FROM u LIMIT 5 OFFSET 2",
    "BEGIN; COMMIT;",
]
SQL_NO = ["", "hello world", "SELECT", "SELECT FROM t", "SELECT a b c FROM t", "SELECT (a FROM t", "INSERT INTO t", "UPDATE t", "DELETE t", "SELECT 'abc", "{\"a\": 1}", "DROP"]


@pytest.mark.parametrize("text", SQL_YES)
def test_sql_recognized(text):
    assert check_sql(text).ok, check_sql(text).error


@pytest.mark.parametrize("text", SQL_NO)
def test_sql_not_recognized(text):
    found = check_sql(text)
    assert not found.ok and found.error


def test_sql_in_prose_needs_more_than_a_capitalized_word():
    assert not find_sql("You can SELECT a few files.").ok
    found = find_sql("I don't know. SELECT * FROM users; is it?")
    assert found.ok and "I don't know. SELECT * FROM users; is it?"[found.start : found.end] == "SELECT * FROM users"


@pytest.mark.parametrize("type", ["is-xml", "contains-xml", "is-sql", "contains-sql"])
def test_value_is_refused_where_none_is_read(type):
    with pytest.raises(CheckConfigError) as exc:
        build(spec({"type": type, "value": "<root/>"}))
    assert f"{type}: takes no 'value' (got '<root/>')" in str(exc.value)


def test_contains_html_evidence(said):
    r = grade({"type": "contains-html", "value": {"hasElement": "a"}}, said('Click <a href="/x">here</a> or <b>there</b>.'))
    assert r.passed
    assert r.evidence == {"elements": 2, "tags": ["a", "b"], "root_tag": "a", "schema_problems": []}
    r = grade({"type": "contains-html"}, said("no tags"))
    assert set(r.evidence) == {"elements", "tags", "root_tag"} and r.evidence["elements"] == 0


PATHOLOGICAL = {
    "unclosed tags": "<a " * 20000,
    "unclosed quotes": '<a title="' * 20000,
    "nested tags": "<a>" * 5000 + "</a>" * 5000,
    "brackets": "[" * 50000,
    "selects": "SELECT a, b FROM t WHERE " * 3000,
    "comments": "<!--" * 20000,
    "unclosed elements": "<a>" * 20000,
    "unbalanced elements": "<a><b>x</c>" * 5000,
    "nested parentheses": "SELECT " + "(" * 5000 + "1" + ")" * 5000 + ";",
}


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_adversarial_outputs_grade(said, name):
    """html.parser took 30 s on the first of these; that they stay near-linear is measured by
    `make bench` (benchmarks/adversarial.py), here only that every recognizer answers."""
    s = said(PATHOLOGICAL[name])
    for t in sorted(i for i, info in catalog().items() if info.family == "Structured"):
        r = grade({"type": t}, s)
        assert 0.0 <= r.score <= 1.0
    if name == "nested tags":
        assert grade({"type": "contains-xml"}, s).passed and grade({"type": "is-xml"}, s).passed


def test_deeply_nested_sql_fails_rather_than_errors(said):
    """A recursive reader ran out of stack on deep nesting (an ERROR, and at a depth that
    depended on the caller's stack); nesting is capped, so the text alone decides."""
    deep = "(" * 300 + "1" + ")" * 300
    for t, text in [("is-sql", "SELECT " + deep), ("contains-sql", "SELECT " + deep + ";"), ("contains-sql", "```sql\nSELECT " + deep + "\n```")]:
        r = grade({"type": t}, said(text))
        assert r.status == "FAIL", r.reason
    assert "nested" in check_sql("SELECT " + deep).error
    assert "nested" in check_sql("SELECT " + "CASE WHEN 1 THEN " * 300 + "1" + " END" * 300).error
    nested = "SELECT " + "(" * 20 + "1" + ")" * 20

    def called_from(depth: int):
        return check_sql(nested) if depth == 0 else called_from(depth - 1)

    assert check_sql(nested).ok and called_from(400).ok


def test_schema_errors_stay_short_on_a_huge_output(said):
    """jsonschema's messages quote the whole offending instance: a 100 KB answer became a
    100 KB reason line (and evidence) on every verdict."""
    big = {f"k{i}": "v" * 50 for i in range(2000)}
    fn = [{"name": "f", "parameters": {"type": "object", "properties": {"a": {"type": "integer"}}}}]
    for check, out in [
        ({"type": "is-json", "value": {"type": "array"}}, json.dumps(big)),
        ({"type": "contains-json", "value": {"type": "array"}}, json.dumps(big)),
        ({"type": "is-valid-function-call", "value": fn}, json.dumps({"name": "f", "arguments": {"a": big}})),
    ]:
        r = grade(check, said(out))
        assert r.status == "FAIL"
        assert len(r.reason) < 600 and len(json.dumps(r.evidence)) < 4000, check["type"]
