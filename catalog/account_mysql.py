"""MariaDB/MySQL: what `SHOW GRANTS` says the current account (and the roles granted to it) may do beyond reading.

Only SELECT, SHOW VIEW and USAGE are reading; everything else is reported under a label. `ALL PRIVILEGES ON *.*`
or SUPER is a superuser. FILE writes files on the server unless `secure_file_priv` disables it (MySQL's NULL);
MariaDB's NULL or empty means anywhere the server's OS user can write.
"""

from __future__ import annotations

from dataclasses import dataclass

from sqlalchemy import Connection, text
from sqlalchemy.exc import DBAPIError

from catalog.account_capabilities import (
    ACCOUNT_ADMIN,
    FILE_WRITES,
    OTHER_PRIVILEGES,
    SCHEMA_CHANGES,
    SUPERUSER,
    TABLE_WRITES,
)

READING = frozenset({"SELECT", "SHOW VIEW", "USAGE"})
_LABEL_OF = {
    "INSERT": TABLE_WRITES,
    "UPDATE": TABLE_WRITES,
    "DELETE": TABLE_WRITES,
    "DELETE HISTORY": TABLE_WRITES,
    "CREATE": SCHEMA_CHANGES,
    "DROP": SCHEMA_CHANGES,
    "ALTER": SCHEMA_CHANGES,
    "INDEX": SCHEMA_CHANGES,
    "CREATE VIEW": SCHEMA_CHANGES,
    "TRIGGER": SCHEMA_CHANGES,
    "CREATE ROUTINE": SCHEMA_CHANGES,
    "ALTER ROUTINE": SCHEMA_CHANGES,
    "EVENT": SCHEMA_CHANGES,
    "REFERENCES": SCHEMA_CHANGES,
    "CREATE TABLESPACE": SCHEMA_CHANGES,
    "CREATE USER": ACCOUNT_ADMIN,
    "GRANT OPTION": ACCOUNT_ADMIN,
    "SUPER": SUPERUSER,
    "FILE": FILE_WRITES,
}
#: Roles followed at most (a role's grants already include the roles granted to it).
MAX_ROLES = 20


@dataclass(frozen=True)
class GrantLine:
    """One line of SHOW GRANTS: privileges on a target, or (no target) roles granted."""

    privileges: tuple[str, ...]
    target: str | None
    grant_option: bool
    text: str


def _split_top(text_: str, separator: str) -> tuple[str, str] | None:
    """Split at the first `separator` outside backquotes, quotes and parentheses."""
    depth, quote, i = 0, "", 0
    upper = text_.upper()
    while i < len(text_):
        char = text_[i]
        if quote:
            if char == quote:
                quote = ""
        elif char in "`'\"":
            quote = char
        elif char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and upper.startswith(separator, i):
            return text_[:i], text_[i + len(separator) :]
        i += 1
    return None


def _privileges(listing: str) -> tuple[str, ...]:
    names, depth, current = [], 0, ""
    for char in listing:
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif char == "," and depth == 0:
            names.append(current)
            current = ""
        elif depth == 0:
            current += char
    names.append(current)
    return tuple(" ".join(name.split()).upper() for name in names if name.strip())


def parse_grant(line: str) -> GrantLine | None:
    """Parse `GRANT ... ON target TO ...` or `GRANT role TO ...`; None for a line that is neither."""
    if not line.upper().startswith("GRANT "):
        return None
    body = line[len("GRANT ") :]
    to = _split_top(body, " TO ")
    if to is None:
        return None
    head, tail = to
    on = _split_top(head, " ON ")
    grant_option = "WITH GRANT OPTION" in " ".join(tail.upper().split())
    if on is None:
        return GrantLine((), None, grant_option, line)
    return GrantLine(_privileges(on[0]), on[1].strip(), grant_option, line)


def _roles(line: GrantLine) -> list[str]:
    if line.target is not None:
        return []
    head = _split_top(line.text[len("GRANT ") :], " TO ")
    return [r.strip() for r in head[0].split(",")] if head is not None else []


def _grant_lines(conn: Connection, mariadb: bool) -> list[GrantLine]:
    lines = [g for g in (parse_grant(str(r[0])) for r in conn.execute(text("SHOW GRANTS"))) if g is not None]
    roles = [role for line in lines for role in _roles(line)][:MAX_ROLES]
    seen = {line.text for line in lines}
    for role in roles:
        # MariaDB shows a role's grants (and those of roles granted to it) only while it is the current role; the
        # probe's own session is thrown away afterwards, so SET ROLE changes nothing anyone else uses.
        statements = (
            ["SET ROLE " + role, "SHOW GRANTS"] if mariadb else [f"SHOW GRANTS FOR CURRENT_USER() USING {role}"]
        )
        try:
            for statement in statements[:-1]:
                conn.execute(text(statement))
            rows = conn.execute(text(statements[-1])).all()
        except DBAPIError:
            continue
        for row in rows:
            parsed = parse_grant(str(row[0]))
            if parsed is not None and parsed.text not in seen:
                seen.add(parsed.text)
                lines.append(parsed)
    if mariadb and roles:
        conn.execute(text("SET ROLE NONE"))
    return lines


def _file_writes(conn: Connection, mariadb: bool) -> str | None:
    """Where FILE lets the account write, or None when the server disables file writes."""
    where = conn.execute(text("SELECT @@secure_file_priv")).scalar()
    if where is None and not mariadb:
        return None
    if not where:
        return "anywhere the server's OS user may write (secure_file_priv is not set)"
    return f"into {where} (secure_file_priv)"


def mysql_capabilities(conn: Connection, *, mariadb: bool) -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}

    def note(label: str, finding: str) -> None:
        if finding not in found.setdefault(label, []):
            found[label].append(finding)

    for line in _grant_lines(conn, mariadb):
        if line.target is None:
            continue
        everywhere = line.target.replace(" ", "") == "*.*"
        if line.grant_option:
            note(ACCOUNT_ADMIN, f"WITH GRANT OPTION on {line.target}")
        for privilege in line.privileges:
            if privilege in READING:
                continue
            if privilege in ("ALL", "ALL PRIVILEGES"):
                if everywhere:
                    note(SUPERUSER, f"ALL PRIVILEGES on {line.target}")
                    note(FILE_WRITES, "FILE")
                    note(ACCOUNT_ADMIN, "CREATE USER")
                note(TABLE_WRITES, f"ALL PRIVILEGES on {line.target}")
                note(SCHEMA_CHANGES, f"ALL PRIVILEGES on {line.target}")
                continue
            note(_LABEL_OF.get(privilege, OTHER_PRIVILEGES), f"{privilege} on {line.target}")
    if FILE_WRITES in found:
        where = _file_writes(conn, mariadb)
        if where is None:
            del found[FILE_WRITES]
        else:
            found[FILE_WRITES] = [f"FILE: {where}"]
    return found
