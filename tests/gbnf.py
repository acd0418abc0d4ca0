"""llama.cpp's GBNF grammars read in tests: a grammar's rules by name, and a grammar without recursion as one regular
expression, so a test can ask whether a statement fits it."""

from __future__ import annotations

import json
import re


def rules(grammar: str) -> dict[str, str]:
    return dict(line.split(" ::= ", 1) for line in grammar.split("\n"))


_TOKEN = re.compile(r'\s+|"(?:[^"\\]|\\.)*"|\[(?:[^\]\\]|\\.)*\]|[a-z][a-z0-9-]*|[()|?*+]')


def as_regex(grammar: str, rule: str = "sql") -> re.Pattern[str]:
    """The grammar as one regular expression (its rules refer to each other without recursion): literals, character
    classes, groups, alternatives and repetition, as llama.cpp reads them."""
    bodies = rules(grammar)
    done: dict[str, str] = {}

    def expand(name: str) -> str:
        if name not in done:
            parts = []
            for token in _TOKEN.findall(bodies[name]):
                if token.isspace():
                    continue
                if token.startswith('"'):
                    parts.append(re.escape(json.loads(token)))
                elif token.startswith("["):
                    parts.append(token)
                elif token == "(":
                    parts.append("(?:")
                elif token in ")|?*+":
                    parts.append(token)
                else:
                    parts.append(f"(?:{expand(token)})")
            done[name] = "".join(parts)
        return done[name]

    return re.compile(expand(rule))
