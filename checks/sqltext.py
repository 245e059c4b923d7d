"""A small SQL recognizer for `is-sql` / `contains-sql`: is this text SQL, and where?

Not a full SQL grammar (dialects differ too much for that); a tokenizer plus a
recursive-descent reader of the common statement shapes: queries (WITH, SELECT, set
operations, joins, subqueries, CASE, window calls), INSERT / UPDATE / DELETE, and DDL
by its leading keywords with balanced parentheses. It says yes to what a reader would
call SQL and no to prose that merely starts with "Select", which is what a check needs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# ---------------------------------------------------------------- tokens


@dataclass(frozen=True)
class Tok:
    kind: str  # word | qident | str | num | param | op | ( | ) | , | ; | .
    text: str
    start: int
    end: int

    @property
    def up(self) -> str:
        return self.text.upper() if self.kind == "word" else self.text


class SqlSyntaxError(ValueError):
    pass


_TOKEN = re.compile(
    r"""
    (?P<ws>\s+)
  | (?P<line_comment>--[^\n]*)
  | (?P<block_comment>/\*.*?\*/)
  | (?P<str>(?:[NnEeXxBb])?'(?:[^']|'')*')
  | (?P<dollar>\$\$.*?\$\$)
  | (?P<qident>"(?:[^"]|"")+"|`[^`]+`|\[[^\]\n]+\])
  | (?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)
  | (?P<param>\?\d*|\$\d+|[:@][A-Za-z_]\w*)
  | (?P<word>[A-Za-z_][\w$]*)
  | (?P<op><>|!=|<=|>=|\|\||::|->>|->|[=<>+\-*/%~&|^])
  | (?P<punct>[(),;.])
    """,
    re.VERBOSE | re.DOTALL,
)


def tokenize(text: str) -> list[Tok]:
    """Tokens of `text`; raises SqlSyntaxError on anything SQL has no token for."""
    toks: list[Tok] = []
    pos = 0
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if m is None:
            ch = text[pos]
            what = "an unterminated string or comment" if ch in "'\"`/[" else f"character {ch!r}"
            raise SqlSyntaxError(f"{what} at offset {pos}")
        kind = m.lastgroup or ""
        if kind not in ("ws", "line_comment", "block_comment"):
            if kind == "dollar":
                kind = "str"
            elif kind == "punct":
                kind = m.group()
            toks.append(Tok(kind, m.group(), m.start(), m.end()))
        pos = m.end()
    return toks


# ---------------------------------------------------------------- grammar

STATEMENT_STARTS = frozenset(
    "SELECT WITH INSERT UPDATE DELETE CREATE ALTER DROP TRUNCATE MERGE REPLACE GRANT REVOKE "
    "BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE EXPLAIN VALUES PRAGMA VACUUM ANALYZE SHOW DESCRIBE USE".split()
)

# Words that end an expression or a name: never an alias or a column without quoting.
RESERVED = frozenset(
    "SELECT FROM WHERE GROUP ORDER BY HAVING LIMIT OFFSET UNION INTERSECT EXCEPT ALL DISTINCT JOIN "
    "INNER LEFT RIGHT FULL OUTER CROSS NATURAL ON USING AS AND OR NOT IN IS NULL LIKE ILIKE BETWEEN "
    "CASE WHEN THEN ELSE END EXISTS INTO VALUES SET INSERT UPDATE DELETE CREATE DROP ALTER TABLE WITH "
    "RETURNING WINDOW FETCH FOR ASC DESC NULLS OVER PARTITION ESCAPE COLLATE DEFAULT CONFLICT DO "
    "TRUE FALSE CAST INTERVAL ANY SOME".split()
)

_DDL_OBJECTS = frozenset(
    "TABLE VIEW INDEX DATABASE SCHEMA SEQUENCE TRIGGER FUNCTION PROCEDURE TYPE EXTENSION ROLE USER DOMAIN".split()
)
_COMPARE = frozenset("= <> != < > <= >= LIKE ILIKE GLOB REGEXP SIMILAR".split())
_BINARY = frozenset("+ - * / % || & | ^ :: -> ->>".split())
_TX = frozenset("BEGIN COMMIT ROLLBACK SAVEPOINT RELEASE".split())


class _Reader:
    def __init__(self, toks: list[Tok]):
        self.t = toks
        self.i = 0

    # ------------------------------------------------------------ primitives
    def peek(self, k: int = 0) -> Tok | None:
        j = self.i + k
        return self.t[j] if j < len(self.t) else None

    def at(self, *words: str) -> bool:
        tok = self.peek()
        return tok is not None and tok.up in words

    def take(self, *words: str) -> bool:
        if self.at(*words):
            self.i += 1
            return True
        return False

    def need(self, *words: str) -> Tok:
        tok = self.peek()
        if tok is None or tok.up not in words:
            raise SqlSyntaxError(f"expected {' or '.join(words)}, found {tok.text if tok else 'the end'}")
        self.i += 1
        return tok

    def fail(self, what: str) -> SqlSyntaxError:
        tok = self.peek()
        return SqlSyntaxError(f"expected {what}, found {tok.text if tok else 'the end'}")

    def is_ident(self, tok: Tok | None) -> bool:
        return tok is not None and (tok.kind == "qident" or (tok.kind == "word" and tok.up not in RESERVED))

    def name(self) -> None:
        """A possibly qualified name: a, a.b, "a"."b", a.*"""
        if not self.is_ident(self.peek()):
            raise self.fail("a name")
        self.i += 1
        while self.at("."):
            self.i += 1
            if self.at("*"):
                self.i += 1
                return
            if not self.is_ident(self.peek()):
                raise self.fail("a name after '.'")
            self.i += 1

    def alias(self) -> None:
        if self.take("AS"):
            if not self.is_ident(self.peek()) and not ((nxt := self.peek()) and nxt.kind == "str"):
                raise self.fail("an alias after AS")
            self.i += 1
        elif self.is_ident(self.peek()):
            self.i += 1

    def balanced(self) -> None:
        """Skip a parenthesized group, whatever is inside (column definitions, options)."""
        self.need("(")
        depth = 1
        while depth:
            tok = self.peek()
            if tok is None:
                raise SqlSyntaxError("unbalanced parentheses")
            if tok.kind == ";":
                raise SqlSyntaxError("statement ends inside parentheses")
            depth += {"(": 1, ")": -1}.get(tok.kind, 0)
            self.i += 1

    def commas(self, item: Callable[[], None]) -> None:
        """One or more `item`s separated by commas."""
        item()
        while self.take(","):
            item()

    def rest_of_statement(self) -> None:
        """Accept any tokens with balanced parentheses up to ';' or the end."""
        while (tok := self.peek()) is not None and tok.kind != ";":
            if tok.kind == ")":
                raise SqlSyntaxError("unbalanced parentheses")
            if tok.kind == "(":
                self.balanced()
            else:
                self.i += 1

    # ------------------------------------------------------------ expressions
    def expr(self) -> None:
        self.and_expr()
        while self.take("OR"):
            self.and_expr()

    def and_expr(self) -> None:
        self.not_expr()
        while self.take("AND"):
            self.not_expr()

    def not_expr(self) -> None:
        while self.take("NOT"):
            pass
        self.predicate()

    def predicate(self) -> None:
        self.arith()
        while True:
            negated = self.take("NOT")
            tok = self.peek()
            if tok is None:
                if negated:
                    raise self.fail("a predicate after NOT")
                return
            if tok.up in _COMPARE:
                self.i += 1
                self.take("TO")  # SIMILAR TO
                if self.take("ANY", "ALL", "SOME"):
                    self.paren_query_or_list()
                else:
                    self.arith()
                if self.take("ESCAPE"):
                    self.arith()
            elif tok.up == "IN":
                self.i += 1
                self.paren_query_or_list()
            elif tok.up == "BETWEEN":
                self.i += 1
                self.arith()
                self.need("AND")
                self.arith()
            elif tok.up == "IS" and not negated:
                self.i += 1
                self.take("NOT")
                if self.take("DISTINCT"):
                    self.need("FROM")
                    self.arith()
                elif not self.take("NULL", "TRUE", "FALSE", "UNKNOWN"):
                    raise self.fail("NULL, TRUE, FALSE or DISTINCT FROM after IS")
            else:
                if negated:
                    raise self.fail("LIKE, IN or BETWEEN after NOT")
                return

    def arith(self) -> None:
        self.unary()
        while (tok := self.peek()) is not None and tok.up in _BINARY:
            self.i += 1
            if tok.up == "::":
                self.type_name()
            else:
                self.unary()

    def unary(self) -> None:
        while self.take("-", "+", "~"):
            pass
        self.primary()
        if self.take("COLLATE"):
            self.name()

    def primary(self) -> None:
        tok = self.peek()
        if tok is None:
            raise self.fail("an expression")
        if tok.kind in ("str", "num", "param"):
            self.i += 1
        elif tok.kind == "(":
            self.i += 1
            if self.at("SELECT", "WITH", "VALUES"):
                self.query()
            else:
                self.commas(self.expr)
            self.need(")")
        elif tok.up in ("NULL", "TRUE", "FALSE", "DEFAULT"):
            self.i += 1
        elif tok.up == "*":
            self.i += 1
        elif tok.up == "CASE":
            self.case()
        elif tok.up == "EXISTS":
            self.i += 1
            self.need("(")
            self.query()
            self.need(")")
        elif tok.up == "CAST":
            self.i += 1
            self.need("(")
            self.expr()
            self.need("AS")
            self.type_name()
            self.need(")")
        elif tok.up == "INTERVAL":
            self.i += 1
            if not self.take_kind("str", "num"):
                raise self.fail("a literal after INTERVAL")
            self.take_word()
        elif tok.up in ("ANY", "SOME", "ALL") and (nxt := self.peek(1)) is not None and nxt.kind == "(":
            self.i += 1
            self.paren_query_or_list()
        elif self.is_ident(tok) or (tok.kind == "word" and tok.up in ("LEFT", "RIGHT", "REPLACE") and (nxt := self.peek(1)) is not None and nxt.kind == "("):
            self.i += 1
            if self.at("("):
                self.call_args()
                self.window()
            else:
                while self.at("."):
                    self.i += 1
                    if self.take("*"):
                        break
                    if not self.is_ident(self.peek()):
                        raise self.fail("a name after '.'")
                    self.i += 1
        else:
            raise self.fail("an expression")

    def take_kind(self, *kinds: str) -> bool:
        tok = self.peek()
        if tok is not None and tok.kind in kinds:
            self.i += 1
            return True
        return False

    def take_word(self) -> bool:
        tok = self.peek()
        if tok is not None and tok.kind == "word" and tok.up not in RESERVED:
            self.i += 1
            return True
        return False

    def call_args(self) -> None:
        self.need("(")
        if self.take(")"):
            return
        self.take("DISTINCT", "ALL")
        if not self.take("*"):
            self.expr()
            while True:  # f(a, b), EXTRACT(x FROM y), SUBSTRING(s FROM 1 FOR 2), CONVERT(x USING y)
                if self.take(",", "FROM", "FOR", "IN", "USING", "SEPARATOR"):
                    self.expr()
                elif self.take("AS"):
                    self.type_name()
                elif self.take("ORDER"):
                    self.need("BY")
                    self.order_list()
                else:
                    break
        self.need(")")
        if self.take("FILTER"):
            self.need("(")
            self.need("WHERE")
            self.expr()
            self.need(")")

    def window(self) -> None:
        if not self.take("OVER"):
            return
        if self.is_ident(self.peek()):
            self.i += 1
            return
        self.balanced()

    def case(self) -> None:
        self.need("CASE")
        if not self.at("WHEN"):
            self.expr()
        if not self.at("WHEN"):
            raise self.fail("WHEN")
        while self.take("WHEN"):
            self.expr()
            self.need("THEN")
            self.expr()
        if self.take("ELSE"):
            self.expr()
        self.need("END")

    def type_name(self) -> None:
        if not (self.take_word() or self.take_kind("qident")):
            raise self.fail("a type name")
        while self.take_word():  # DOUBLE PRECISION, CHARACTER VARYING
            pass
        if self.at("("):
            self.balanced()

    def paren_query_or_list(self) -> None:
        self.need("(")
        if self.at("SELECT", "WITH", "VALUES"):
            self.query()
        else:
            self.commas(self.expr)
        self.need(")")

    def order_list(self) -> None:
        while True:
            self.expr()
            self.take("ASC", "DESC")
            if self.take("NULLS"):
                self.need("FIRST", "LAST")
            if not self.take(","):
                return

    # ------------------------------------------------------------ queries
    def query(self) -> None:
        if self.take("WITH"):
            self.take("RECURSIVE")
            while True:
                self.name()
                if self.at("("):
                    self.balanced()
                self.need("AS")
                self.take("MATERIALIZED")
                self.need("(")
                self.statement_body()
                self.need(")")
                if not self.take(","):
                    break
            if self.at("INSERT", "UPDATE", "DELETE"):
                self.statement_body()
                return
        self.query_term()
        while self.take("UNION", "INTERSECT", "EXCEPT"):
            self.take("ALL", "DISTINCT")
            self.query_term()
        if self.take("ORDER"):
            self.need("BY")
            self.order_list()
        if self.take("LIMIT"):
            self.expr()
            if self.take(","):
                self.expr()
        if self.take("OFFSET"):
            self.expr()
            self.take("ROW", "ROWS")
        if self.take("FETCH"):
            self.need("FIRST", "NEXT")
            if not self.at("ROW", "ROWS"):
                self.expr()
            self.need("ROW", "ROWS")
            self.need("ONLY")
        if self.take("FOR"):
            self.need("UPDATE", "SHARE")

    def query_term(self) -> None:
        if self.at("("):
            self.i += 1
            self.query()
            self.need(")")
        elif self.at("VALUES"):
            self.values()
        else:
            self.select_core()

    def select_core(self) -> None:
        self.need("SELECT")
        if self.take("DISTINCT"):
            if self.take("ON"):
                self.balanced()
        else:
            self.take("ALL")
        nxt = self.peek(1)
        if self.at("TOP") and nxt is not None and nxt.kind in ("num", "("):
            self.i += 1
            self.primary()
        self.commas(self.select_item)
        if self.take("INTO"):
            self.name()
        if self.take("FROM"):
            self.from_list()
        if self.take("WHERE"):
            self.expr()
        if self.take("GROUP"):
            self.need("BY")
            self.commas(self.expr)
        if self.take("HAVING"):
            self.expr()
        if self.take("WINDOW"):
            while True:
                self.name()
                self.need("AS")
                self.balanced()
                if not self.take(","):
                    break

    def select_item(self) -> None:
        if self.take("*"):
            return
        self.expr()
        self.alias()

    def from_list(self) -> None:
        self.table_ref()
        while True:
            if self.take(","):
                self.table_ref()
                continue
            start = self.i
            self.take("NATURAL")
            if self.take("LEFT", "RIGHT", "FULL"):
                self.take("OUTER")
            else:
                self.take("INNER", "CROSS")
            if not self.take("JOIN"):
                self.i = start
                return
            self.table_ref()
            if self.take("ON"):
                self.expr()
            elif self.take("USING"):
                self.balanced()

    def table_ref(self) -> None:
        self.take("LATERAL")
        if self.at("("):
            self.i += 1
            if self.at("SELECT", "WITH", "VALUES"):
                self.query()
            else:
                self.from_list()
            self.need(")")
        else:
            self.name()
            if self.at("("):  # table function
                self.call_args()
        self.alias()
        if self.at("(") and self.peek(-1) is not None and self.is_ident(self.peek(-1)):
            self.balanced()  # alias column list

    def values(self) -> None:
        self.need("VALUES")
        while True:
            self.need("(")
            self.commas(self.expr)
            self.need(")")
            if not self.take(","):
                return

    # ------------------------------------------------------------ statements
    def statement_body(self) -> None:
        tok = self.peek()
        if tok is None or tok.up not in STATEMENT_STARTS:
            raise self.fail("a SQL statement keyword")
        word = tok.up
        if word in ("SELECT", "WITH", "VALUES"):
            self.query()
        elif word in ("INSERT", "REPLACE"):
            self.insert()
        elif word == "UPDATE":
            self.update()
        elif word == "DELETE":
            self.delete()
        elif word == "CREATE":
            self.create()
        elif word in ("DROP", "ALTER", "TRUNCATE"):
            self.i += 1
            if word == "TRUNCATE":
                self.take("TABLE")
            else:
                self.object_kind()
                if self.take("IF"):
                    self.need("EXISTS")
            self.name()
            self.rest_of_statement()
        elif word == "EXPLAIN":
            self.i += 1
            self.take("ANALYZE")
            self.take("QUERY")
            if self.take("PLAN"):
                pass
            self.statement_body()
        elif word in _TX:
            self.i += 1
            self.rest_of_statement()
        else:  # GRANT, REVOKE, MERGE, PRAGMA, VACUUM, ANALYZE, SHOW, DESCRIBE, USE
            self.i += 1
            if not ((nxt := self.peek()) is None or nxt.kind == ";") or word in ("VACUUM", "ANALYZE"):
                self.rest_of_statement()
            else:
                raise self.fail(f"something after {word}")

    def object_kind(self) -> None:
        self.take("MATERIALIZED", "TEMP", "TEMPORARY", "UNIQUE", "VIRTUAL")
        tok = self.peek()
        if tok is None or tok.up not in _DDL_OBJECTS:
            raise self.fail("TABLE, VIEW, INDEX or another object kind")
        self.i += 1

    def create(self) -> None:
        self.need("CREATE")
        if self.take("OR"):
            self.need("REPLACE")
        while self.take("TEMP", "TEMPORARY", "UNIQUE", "MATERIALIZED", "VIRTUAL", "GLOBAL", "LOCAL", "UNLOGGED"):
            pass
        kind = self.peek()
        self.object_kind()
        if self.take("IF"):
            self.need("NOT")
            self.need("EXISTS")
        self.name()
        assert kind is not None
        if kind.up == "TABLE":
            if self.take("AS"):
                self.query()
            else:
                if not self.at("("):
                    raise self.fail("a column list")
                self.balanced()
                self.rest_of_statement()
        elif kind.up == "VIEW":
            if self.at("("):
                self.balanced()
            self.need("AS")
            self.query()
        elif kind.up == "INDEX":
            self.need("ON")
            self.name()
            self.balanced()
            self.rest_of_statement()
        else:
            self.rest_of_statement()

    def insert(self) -> None:
        self.need("INSERT", "REPLACE")
        if self.take("OR"):
            self.need("REPLACE", "IGNORE", "ABORT", "FAIL", "ROLLBACK")
        self.take("IGNORE")
        self.take("INTO")
        self.name()
        self.alias_for_insert()
        if self.at("("):
            # Either a column list followed by VALUES/SELECT, or `INSERT INTO t (SELECT ...)`.
            if (nxt := self.peek(1)) is not None and nxt.up in ("SELECT", "WITH"):
                self.i += 1
                self.query()
                self.need(")")
                self.tail_of_insert()
                return
            self.balanced()
        if self.take("DEFAULT"):
            self.need("VALUES")
        elif self.at("VALUES", "SELECT", "WITH", "("):
            self.query()
        elif self.take("SET"):
            self.assignments()
        else:
            raise self.fail("VALUES, SELECT or DEFAULT VALUES")
        self.tail_of_insert()

    def alias_for_insert(self) -> None:
        if self.take("AS"):
            self.name()

    def tail_of_insert(self) -> None:
        if self.take("ON"):
            self.rest_of_statement()  # ON CONFLICT … / ON DUPLICATE KEY UPDATE …
        self.returning()

    def returning(self) -> None:
        if self.take("RETURNING"):
            self.commas(self.select_item)

    def assignments(self) -> None:
        while True:
            if self.at("("):
                self.balanced()
            else:
                self.name()
            self.need("=")
            self.expr()
            if not self.take(","):
                return

    def update(self) -> None:
        self.need("UPDATE")
        self.take("ONLY")
        self.name()
        self.alias()
        self.need("SET")
        self.assignments()
        if self.take("FROM"):
            self.from_list()
        if self.take("WHERE"):
            self.expr()
        self.returning()

    def delete(self) -> None:
        self.need("DELETE")
        self.need("FROM")
        self.name()
        self.alias()
        if self.take("USING"):
            self.from_list()
        if self.take("WHERE"):
            self.expr()
        self.returning()


# ---------------------------------------------------------------- public API


@dataclass(frozen=True)
class SqlFinding:
    ok: bool
    statements: int = 0
    keywords: tuple[str, ...] = ()
    error: str | None = None
    start: int = 0
    end: int = 0


# The reader recurses once per level of parentheses or CASE; past this many levels a text
# is refused as too deeply nested, so the verdict never depends on how much stack the
# caller happened to leave (real queries nest a handful of levels).
MAX_NESTING = 40


def _nesting_error(toks: list[Tok]) -> str | None:
    depth = 0
    for tok in toks:
        if tok.kind == "(" or tok.up == "CASE":
            depth += 1
            if depth > MAX_NESTING:
                return f"nested more than {MAX_NESTING} levels deep (parentheses or CASE) at offset {tok.start}"
        elif depth and (tok.kind == ")" or tok.up == "END"):
            depth -= 1
    return None


def check_sql(text: str) -> SqlFinding:
    """Whether all of `text` is one or more SQL statements separated by ';'."""
    try:
        toks = tokenize(text)
    except SqlSyntaxError as exc:
        return SqlFinding(False, error=str(exc))
    if not toks:
        return SqlFinding(False, error="no SQL: the text is empty")
    too_deep = _nesting_error(toks)
    if too_deep:
        return SqlFinding(False, error=too_deep)
    r = _Reader(toks)
    count, words = 0, []
    try:
        while r.peek() is not None:
            if r.take(";"):
                continue
            first = r.peek()
            assert first is not None
            r.statement_body()
            count += 1
            words.append(first.up)
            if r.peek() is not None and not r.at(";"):
                raise r.fail("';' or the end of the statement")
    except SqlSyntaxError as exc:
        return SqlFinding(False, count, tuple(words), str(exc))
    if not count:
        return SqlFinding(False, error="no SQL statement, only ';'")
    return SqlFinding(True, count, tuple(words), None, toks[0].start, toks[-1].end)


_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
_START = re.compile(r"\b(" + "|".join(sorted(STATEMENT_STARTS)) + r")\b", re.IGNORECASE)
_STOP = re.compile(r";|\n\s*\n|```")


def find_sql(text: str) -> SqlFinding:
    """The first SQL statement embedded in prose or in a fenced code block.

    A fenced block counts when its whole body is SQL. In prose a statement runs from a
    statement keyword to the first ';', blank line or fence, and counts when its leading
    keyword is in capitals or it ends with ';' (so "select the file from the list" is not
    taken for a query), and when it is either the whole ';'-terminated run or carries at
    least two SQL keywords (so "SELECT a few" is not one either).
    """
    for m in _FENCE.finditer(text):
        found = check_sql(m.group(2))
        if found.ok:
            return SqlFinding(True, found.statements, found.keywords, None, m.start(2) + found.start, m.start(2) + found.end)
    last_error: str | None = None
    for tried, m in enumerate(_START.finditer(text)):
        if tried >= _MAX_STARTS:
            break
        stop = _STOP.search(text, m.start())
        end = stop.start() if stop else len(text)
        terminated = bool(stop and stop.group() == ";")
        if not (m.group(1).isupper() or terminated):
            continue
        candidate = text[m.start() : end]
        found = _longest_statement(candidate)
        if not found.ok:
            last_error = found.error
            continue
        whole = found.end >= len(candidate.rstrip())
        if (terminated and whole) or len(set(found.keywords)) >= 2:
            return SqlFinding(True, 1, found.keywords, None, m.start(), m.start() + found.end)
        last_error = f"{candidate[: found.end]!r} is too little to be taken for SQL in prose"
    return SqlFinding(False, error=last_error or "no SQL statement found")


_MAX_PROSE_TOKENS = 400
_MAX_BACKOFF = 64
_MAX_STARTS = 200
_KEYWORDS = RESERVED | STATEMENT_STARTS


def _longest_statement(candidate: str) -> SqlFinding:
    """One statement at the start of `candidate`, ending where the prose after it begins.

    `keywords` of the finding lists the SQL keywords the statement holds.
    """
    # Tokenize as far as SQL tokens go (prose may hold an apostrophe).
    toks: list[Tok] = []
    pos = 0
    while pos < len(candidate) and len(toks) < _MAX_PROSE_TOKENS:
        m = _TOKEN.match(candidate, pos)
        if m is None:
            break
        kind = m.lastgroup or ""
        if kind not in ("ws", "line_comment", "block_comment"):
            toks.append(Tok("str" if kind == "dollar" else (m.group() if kind == "punct" else kind), m.group(), m.start(), m.end()))
        pos = m.end()
    if not toks:
        return SqlFinding(False, error="no SQL statement found")
    too_deep = _nesting_error(toks)
    if too_deep:
        return SqlFinding(False, error=too_deep)
    # One parse usually settles it: the reader stops where the prose stops continuing the
    # statement. When the prose is read on as SQL and then fails, back off from the point
    # of failure to the nearest prefix that is a whole statement (a bounded search).
    r = _Reader(toks)
    try:
        r.statement_body()
        return _finding(toks[: r.i])
    except SqlSyntaxError as exc:
        error, failed_at = str(exc), r.i
    for n in range(min(failed_at, len(toks)), max(0, failed_at - _MAX_BACKOFF), -1):
        r = _Reader(toks[:n])
        try:
            r.statement_body()
        except SqlSyntaxError:
            continue
        return _finding(toks[: r.i])
    return SqlFinding(False, error=error)


def _finding(toks: list[Tok]) -> SqlFinding:
    words = tuple(t.up for t in toks if t.kind == "word" and t.up in _KEYWORDS)
    return SqlFinding(True, 1, words, None, toks[0].start, toks[-1].end)
