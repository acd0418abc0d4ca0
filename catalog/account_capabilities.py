"""What a source's account can do beyond reading: stable labels, and the result of one check."""

from __future__ import annotations

from dataclasses import dataclass

SUPERUSER = "superuser"
FILE_WRITES = "file writes"
SERVER_PROGRAMS = "server programs"
TABLE_WRITES = "table writes"
SCHEMA_CHANGES = "schema changes"
ACCOUNT_ADMIN = "account admin"
CREATE_DATABASES = "create databases"
OTHER_PRIVILEGES = "other privileges"
WRITABLE_FILE = "writable file"
#: Every label, in the order they are shown (the most dangerous first).
LABELS = (
    SUPERUSER,
    FILE_WRITES,
    SERVER_PROGRAMS,
    TABLE_WRITES,
    SCHEMA_CHANGES,
    ACCOUNT_ADMIN,
    CREATE_DATABASES,
    OTHER_PRIVILEGES,
    WRITABLE_FILE,
)


@dataclass(frozen=True)
class AccountCheck:
    """`capabilities` are labels from LABELS (empty: read-only); None when the engine has no check. `evidence`
    pairs a label with what was seen, e.g. ("superuser", "ALL PRIVILEGES on *.*"); an unchecked account's
    evidence says why it could not be checked."""

    capabilities: tuple[str, ...] | None
    evidence: tuple[tuple[str, str], ...] = ()

    @property
    def superuser(self) -> bool:
        return self.capabilities is not None and SUPERUSER in self.capabilities

    def findings(self, label: str | None = None) -> list[str]:
        """What was seen (for one label, or all), each once."""
        return list(dict.fromkeys(text for of, text in self.evidence if label is None or of == label))

    def stored(self) -> list[str] | None:
        return None if self.capabilities is None else list(self.capabilities)


NOT_CHECKED = AccountCheck(None)


def ordered(found: dict[str, list[str]]) -> AccountCheck:
    """An AccountCheck from findings grouped by label."""
    labels = tuple(label for label in LABELS if label in found)
    return AccountCheck(labels, tuple((label, text) for label in labels for text in found[label]))
