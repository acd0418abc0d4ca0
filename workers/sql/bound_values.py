"""The values a policed statement binds as parameters (the user's attribute values, the padded mask keys): named
placeholders under a token drawn for the statement, and the final text in the driver's parameter style."""

from __future__ import annotations

import re
import secrets

from sqlglot import exp

from workers.sql.policy_refusals import PolicyRefused


class BoundValues:
    """The parameters of one rewritten statement. `value_placeholders` names those that hold attribute values
    (compared exactly on MariaDB/MySQL, `workers.sql.exact_compare`); the mask keys' placeholders are not in it."""

    def __init__(self) -> None:
        self.token = f"tsp{secrets.token_hex(4)}"
        self.params: dict[str, str] = {}
        self.value_placeholders: set[str] = set()

    def placeholder(self, value: str) -> exp.Column:
        """A new placeholder bound to `value`, written as a column the text keeps until `bind`."""
        name = f"{self.token}_{len(self.params)}"
        self.params[name] = value
        return exp.column(name)

    def bind(self, sql: str, written: str, family: str) -> tuple[str, dict[str, str] | None]:
        """(the text in the driver's parameter style, the parameters), or (sql, None) with no parameters.
        PolicyRefused when the user's own text `written` contains the token (it could name a placeholder)."""
        if not self.params:
            return sql, None
        if self.token.casefold() in written.casefold():
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you")
        pattern = re.compile(rf"\b({self.token}_\d+)\b")
        if family == "sqlite":
            return pattern.sub(r":\1", sql), dict(self.params)
        return pattern.sub(r"%(\1)s", sql.replace("%", "%%")), dict(self.params)
