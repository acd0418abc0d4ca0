"""What the executor itself can see in a statement's text (SPEC §7, layer 3), without the guard's parser.

The executor must hold even when handed SQL the guard never saw, so it reads the text with a small scanner of its own
that knows each engine's strings, quoted names and comments, and refuses what is plainly not a read:
- anything that does not start as a query (SELECT, WITH, VALUES, TABLE or a parenthesis), so SET, PRAGMA, COPY, DDL
  and DML never reach the driver, whatever the session allows;
- a second statement after a `;`;
- `INTO` outside strings (SELECT ... INTO a table, a variable, OUTFILE or DUMPFILE);
- MariaDB/MySQL executable comments and optimizer hints (`/*!`, `/*M!`, `/*+`), which the server runs as SQL;
- PostgreSQL `set_config` (it could switch the role back within the statement) and `U&` escapes, which hide names.
Doubtful text (an unterminated string or comment) is refused too.
"""

from __future__ import annotations

from dataclasses import dataclass

_FIRST_WORDS = frozenset({"select", "with", "values", "table"})
_REFUSED_WORDS = {
    "sqlite": frozenset({"into"}),
    "mysql": frozenset({"into", "load_file"}),
    "postgresql": frozenset({"into", "set_config"}),
}


class NotPlainRead(Exception):
    """The text is not one plain read; `str(exc)` says why, for the model."""


@dataclass(frozen=True)
class Scanned:
    sql: str  # the statement without a trailing `;` (and whatever follows it: blanks and comments only)
    first: str | None  # the first word, lower case, or "(" when the statement starts with a parenthesis
    words: frozenset[str]  # every word and quoted name outside strings and comments, lower case


def check_plain_read(sql: str, family: str) -> str:
    """`sql` without a trailing semicolon when it reads as one plain query on `family` ("sqlite", "mysql",
    "postgresql"); raise NotPlainRead otherwise."""
    scanned = scan(sql, family)
    if scanned.first is None:
        raise NotPlainRead("no SQL statement was given")
    if scanned.first != "(" and scanned.first not in _FIRST_WORDS:
        raise NotPlainRead(f"only queries may run; a statement starting with {scanned.first.upper()} is not one")
    refused = sorted(scanned.words & _REFUSED_WORDS.get(family, frozenset()))
    if refused:
        raise NotPlainRead(f"{refused[0].upper()} is not allowed in a read-only query")
    return scanned.sql


def scan(sql: str, family: str) -> Scanned:
    """Words, first token and statement end of `sql`, reading strings and comments the way `family` does."""
    return _Scanner(sql, family).run()


class _Scanner:
    def __init__(self, sql: str, family: str) -> None:
        self.sql = sql
        self.family = family
        self.i = 0
        self.first: str | None = None
        self.words: set[str] = set()
        self.end: int | None = None  # where a `;` ended the statement

    def run(self) -> Scanned:
        sql, n = self.sql, len(self.sql)
        while self.i < n:
            c = sql[self.i]
            if c.isspace():
                self.i += 1
            elif self._comment():
                continue
            elif self.end is not None:
                raise NotPlainRead("only one statement may run; send a single SELECT without ';' between statements")
            elif c == ";":
                self.end = self.i
                self.i += 1
            elif c == "'":
                self._string(backslash=self.family == "mysql")
                self._token("'")
            elif c == '"':
                if self.family == "mysql":
                    self._string(backslash=True, quote='"')
                    self._token('"')
                else:
                    self._word(self._quoted('"'))
            elif c == "`" and self.family in ("mysql", "sqlite"):
                self._word(self._quoted("`"))
            elif c == "[" and self.family == "sqlite":
                close = sql.find("]", self.i + 1)
                if close < 0:
                    raise NotPlainRead("the SQL has an unterminated [name]")
                self._word(sql[self.i + 1 : close])
                self.i = close + 1
            elif c == "$" and self.family == "postgresql" and self._dollar_quote():
                self._token("'")
            elif c.isalnum() or c == "_" or c == "$" or ord(c) > 127:
                self._bare_word()
            else:
                self._token(c)
                self.i += 1
        sql_text = sql if self.end is None else sql[: self.end]
        return Scanned(sql=sql_text.rstrip(), first=self.first, words=frozenset(self.words))

    def _token(self, token: str) -> None:
        if self.first is None:
            self.first = token

    def _word(self, word: str) -> None:
        self._token(word.lower())
        self.words.add(word.lower())

    def _bare_word(self) -> None:
        sql, start = self.sql, self.i
        while self.i < len(sql) and (sql[self.i].isalnum() or sql[self.i] in "_$" or ord(sql[self.i]) > 127):
            self.i += 1
        word = sql[start : self.i]
        nxt = sql[self.i] if self.i < len(sql) else ""
        if self.family == "postgresql" and word.lower() == "u" and nxt == "&":
            raise NotPlainRead("U& escapes are not allowed; write names and strings plainly")
        if self.family == "postgresql" and word.lower() == "e" and nxt == "'":
            self._word(word)
            self._string(backslash=True)  # E'...': backslash escapes
            return
        self._word(word)

    def _string(self, *, backslash: bool, quote: str = "'") -> None:
        sql, i = self.sql, self.i + 1
        while i < len(sql):
            c = sql[i]
            if backslash and c == "\\":
                i += 2
                continue
            if c == quote:
                if i + 1 < len(sql) and sql[i + 1] == quote:
                    i += 2
                    continue
                self.i = i + 1
                return
            i += 1
        raise NotPlainRead("the SQL has an unterminated string")

    def _quoted(self, quote: str) -> str:
        sql, i, parts = self.sql, self.i + 1, []
        while i < len(sql):
            close = sql.find(quote, i)
            if close < 0:
                break
            parts.append(sql[i:close])
            if close + 1 < len(sql) and sql[close + 1] == quote:
                parts.append(quote)
                i = close + 2
                continue
            self.i = close + 1
            return "".join(parts)
        raise NotPlainRead("the SQL has an unterminated quoted name")

    def _dollar_quote(self) -> bool:
        sql, i = self.sql, self.i + 1
        while i < len(sql) and (sql[i].isalnum() or sql[i] == "_"):
            i += 1
        if i >= len(sql) or sql[i] != "$" or (i > self.i + 1 and sql[self.i + 1].isdigit()):
            return False
        tag = sql[self.i : i + 1]
        close = sql.find(tag, i + 1)
        if close < 0:
            raise NotPlainRead("the SQL has an unterminated $$ string")
        self.i = close + len(tag)
        return True

    def _comment(self) -> bool:
        sql, i = self.sql, self.i
        two = sql[i : i + 2]
        if two == "--" and (self.family != "mysql" or i + 2 >= len(sql) or sql[i + 2].isspace()):
            newline = sql.find("\n", i)
            self.i = len(sql) if newline < 0 else newline + 1
            return True
        if sql[i] == "#" and self.family == "mysql":
            newline = sql.find("\n", i)
            self.i = len(sql) if newline < 0 else newline + 1
            return True
        if two != "/*":
            return False
        if self.family == "mysql" and (sql[i + 2 : i + 3] in ("!", "+") or sql[i + 2 : i + 4].upper() == "M!"):
            raise NotPlainRead("executable comments and optimizer hints (/*! ... */, /*+ ... */) are not allowed")
        depth, j = 1, i + 2
        while depth and j < len(sql):
            if sql.startswith("*/", j):
                depth -= 1
                j += 2
            elif self.family == "postgresql" and sql.startswith("/*", j):
                depth += 1
                j += 2
            else:
                j += 1
        if depth and self.family != "sqlite":
            raise NotPlainRead("the SQL has an unterminated comment")
        self.i = j
        return True
