"""Who may see which database and table.

Roles come from the configuration file; a user's roles come from the directory groups they belong to (as last
synced into the store), or the configured default role when no group maps. Every feature asks one question,
`Principal.may_see(database, table)`, so search, cards, notes and SQL checks can never disagree.

Rules: a role allows a table when one of its grants for that database allows it and none of its grants for that
database denies it; a user may see what any of their roles allows. Patterns are shell-style and case-insensitive.
Tables of the source's default schema (PostgreSQL's first schema on the search_path, MariaDB's database, SQLite's
`main`) are named without a schema, as the catalog names them:
- `ORD_MST`, `ORD_*` (no schema) allow tables of the default schema only; `rpt.ORD_MST`, `rpt.*` tables of schema
  `rpt`; `*.ORD_MST` ORD_MST in every schema, the default one included; `*` alone (the default allow) everything.
- A deny pattern without a schema denies the name in every schema (`EMP_*` hides `hr.EMP_MST` too), so a deny never
  covers less than it says; `rpt.EMP_*` denies in schema `rpt` only.
A view is seen only by those who may see it and every table and view it reads (`Principal.may_see_table`), as
run_sql checks it; what a view reads is recorded by analysis in its card (`reads`).
Within an allowed table, grants may filter rows and mask columns (`core.access.data_policy`): `Principal.row_filter` and
`Principal.column_mask` give what applies to a user, over their roles.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

from sqlalchemy.orm import Session

from core.access.data_policy import RowFilter, grant_filters, grant_mask, grant_masks_table, least_mask, union_filter
from core.access.row_predicates import MaskKind
from core.access.users import UserRef
from core.config.file import ConfigFile, Grant, GroupMapping
from core.errors import ConfigError
from core.store.models import DirectoryGroup, SourceTable
from core.store.repositories import directory

PLATFORMS = ("slack", "teams")


@dataclass(frozen=True)
class RoleGrants:
    name: str
    grants: tuple[Grant, ...]
    admin: bool = False

    def _grants_for(self, database: str) -> list[Grant]:
        db = database.casefold()
        return [g for g in self.grants if fnmatchcase(db, g.database.casefold())]

    def allows_database(self, database: str) -> bool:
        return any(g.allow for g in self._grants_for(database))

    def allows_catalog(self, database: str) -> bool:
        return any(g.catalog for g in self._grants_for(database))

    def allows_table(self, database: str, table: str, schema: str | None) -> bool:
        grants = self._grants_for(database)
        allowed = any(pattern_matches(p, table, schema, deny=False) for g in grants for p in g.allow)
        return allowed and not any(pattern_matches(p, table, schema, deny=True) for g in grants for p in g.deny)

    def granting(self, database: str, table: str, schema: str | None) -> list[Grant]:
        """The grants through which this role allows the table (none when the role does not allow it)."""
        if not self.allows_table(database, table, schema):
            return []
        grants = self._grants_for(database)
        return [g for g in grants if any(pattern_matches(p, table, schema, deny=False) for p in g.allow)]

    def has_data_policies(self, database: str) -> bool:
        return any(g.row_filters or g.column_masks for g in self._grants_for(database))

    def grants_all_of(self, database: str) -> bool:
        """Does one grant of this role show every table of `database`, every row and column (no deny, filter or
        mask)?"""
        return any(
            "*" in g.allow and not g.deny and not g.row_filters and not g.column_masks
            for g in self._grants_for(database)
        )


def pattern_matches(pattern: str, table: str, schema: str | None, *, deny: bool) -> bool:
    """Does one allow (or deny) pattern cover table `schema.table` (schema None: the default schema)?"""
    wanted = pattern.casefold()
    name = table.casefold()
    if wanted == "*":
        return True
    if "." in wanted:
        schema_pattern, _, table_pattern = wanted.rpartition(".")
        return fnmatchcase(name, table_pattern) and fnmatchcase((schema or "").casefold(), schema_pattern)
    return fnmatchcase(name, wanted) and (deny or not schema)


@dataclass(frozen=True)
class Principal:
    """The asking user with the roles resolved at the start of a turn; trusted, never built from model output."""

    platform: str
    user_id: str
    roles: tuple[RoleGrants, ...]
    in_directory: bool = True
    operator: bool = False
    #: Directory attributes (department, city, employee id, custom fields), as synced; a list for multi-valued ones.
    attributes: Mapping[str, str | tuple[str, ...]] = field(default_factory=dict, hash=False)

    @classmethod
    def for_operator(cls) -> Principal:
        """Someone at the command line with access to the configuration: sees everything."""
        return cls(platform="operator", user_id="operator", roles=(), operator=True)

    @property
    def is_admin(self) -> bool:
        return self.operator or any(r.admin for r in self.roles)

    def may_see(self, database: str, table: str | None = None, schema: str | None = None) -> bool:
        """May this principal see database `database` (table None) or table `schema.table` in it."""
        if self.operator:
            return True
        if table is None:
            return any(r.allows_database(database) for r in self.roles)
        return any(r.allows_table(database, table, schema) for r in self.roles)

    def may_read_catalog(self, database: str) -> bool:
        """May this principal's SQL read the system catalog of `database`? Only a role's grant says so (`catalog:
        true`); the catalog names every table, so neither operators nor admins get it by default."""
        return self.may_see(database) and any(r.allows_catalog(database) for r in self.roles)

    def attribute(self, name: str) -> str | tuple[str, ...] | None:
        """Directory attribute `name` (compared without regard to case); None when missing or empty."""
        wanted = name.casefold()
        for key, value in self.attributes.items():
            if key.casefold() == wanted:
                if isinstance(value, str):
                    return value if value != "" else None
                values = tuple(v for v in value if v != "")
                return values if values else None
        return None

    def sees_all_of(self, database: str) -> bool:
        """Does this principal see every table, row and column of `database` (an operator, or a role granting it
        whole)? Then nothing shown of it needs to be made for them."""
        return self.operator or any(r.grants_all_of(database) for r in self.roles)

    def has_data_policies(self, database: str) -> bool:
        """Could a row filter or column mask apply to some table of `database` for this principal?"""
        return not self.operator and any(r.has_data_policies(database) for r in self.roles)

    def row_filter(self, database: str, table: str, schema: str | None = None) -> RowFilter | None:
        """The rows of `schema.table` this principal may read: None for every row (no filter applies, or some role
        grants the table without one); a RowFilter otherwise (one with no alternatives when no role grants it)."""
        if self.operator:
            return None
        return union_filter(
            grant_filters(g, table, schema) for r in self.roles for g in r.granting(database, table, schema)
        )

    def column_mask(self, database: str, table: str, column: str, schema: str | None = None) -> MaskKind | None:
        """How column `column` of `schema.table` shows to this principal: None as it is, or the least restrictive
        mask over the roles that grant the table ("hide" when none grants it)."""
        if self.operator:
            return None
        return least_mask(
            grant_mask(g, table, column, schema) for r in self.roles for g in r.granting(database, table, schema)
        )

    def may_mask(self, database: str, table: str, schema: str | None = None) -> bool:
        """Could some column of `schema.table` be masked for this principal? (Cheap: no columns needed.)"""
        if self.operator:
            return False
        return any(grant_masks_table(g, table, schema) for r in self.roles for g in r._grants_for(database))

    def column_masks(
        self, database: str, table: str, columns: Sequence[str], schema: str | None = None
    ) -> dict[str, MaskKind]:
        """The masked ones among `columns` of `schema.table`, with their mask."""
        if not self.may_mask(database, table, schema):
            return {}
        masks = {c: self.column_mask(database, table, c, schema) for c in columns}
        return {c: m for c, m in masks.items() if m is not None}

    def may_see_table(self, database: str, table: SourceTable) -> bool:
        """May this principal see analysed table `table` of source `database`: the table itself, and for a view
        every table and view it reads (as run_sql would check it). A view whose reads were not recorded (analysed
        before they were, or not followable) is seen by operators only."""
        if self.operator:
            return True
        if not self.may_see(database, table.name, table.schema_name or None):
            return False
        if "card" in table.__dict__ or "card_kind" not in table.__dict__:
            card = table.card or {}  # loaded (or a table not read from the store): the card itself
            kind, reads = card.get("kind"), card.get("reads")
        else:
            kind, reads = table.card_kind, table.view_reads  # the card left unread; both read with the row
        if kind != "view":
            return True
        if not isinstance(reads, list):
            return False
        return all(self.may_see(database, str(name), str(schema) if schema else None) for schema, name in reads)


def parse_user_ref(ref: str) -> UserRef:
    """`slack:U024BE7LH` or `teams:<aad object id>` → (platform, user id)."""
    platform, sep, user_id = ref.partition(":")
    if not sep or platform not in PLATFORMS or not user_id:
        raise ConfigError(f"user {ref!r} must be written PLATFORM:ID with PLATFORM one of {', '.join(PLATFORMS)}")
    return UserRef(platform, user_id)


def _mapping_matches(mapping: GroupMapping, platform: str, group: DirectoryGroup) -> bool:
    if mapping.platform != platform:
        return False
    wanted = mapping.group
    if wanted == group.group_id:
        return True
    handle = wanted.removeprefix("@").casefold()
    return group.handle is not None and wanted.startswith("@") and group.handle.casefold() == handle


def role_grants(config: ConfigFile, role: str) -> RoleGrants:
    spec = config.roles[role]
    grants = []
    for grant in spec.grants:
        canonical = config.source_for(grant.database)
        grants.append(grant if canonical is None else grant.model_copy(update={"database": canonical}))
    return RoleGrants(name=role, grants=tuple(grants), admin=spec.admin)


def resolve_principal(session: Session, config: ConfigFile, platform: str, user_id: str) -> Principal:
    """The principal for a chat user, from the groups and attributes synced into the store and the configured
    mappings; a user the store does not know has no attributes (row filters that need one match nothing)."""
    if platform not in PLATFORMS:
        raise ConfigError(f"unknown platform {platform!r}; expected one of {', '.join(PLATFORMS)}")
    stored = directory.user(session, platform, user_id)
    known = stored is not None
    attributes = _attributes(stored.attributes if stored is not None else None)
    names: list[str] = []
    for group in directory.groups_of(session, platform, user_id):
        for mapping in config.groups:
            if _mapping_matches(mapping, platform, group):
                names.extend(r for r in mapping.roles if r not in names)
    if not names and config.default_role is not None:
        names.append(config.default_role)
    roles = tuple(role_grants(config, name) for name in names)
    return Principal(platform=platform, user_id=user_id, roles=roles, in_directory=known, attributes=attributes)


def _attributes(stored: Mapping[str, object] | None) -> dict[str, str | tuple[str, ...]]:
    """Stored attributes as the principal holds them: strings, and tuples of strings for multi-valued ones."""
    found: dict[str, str | tuple[str, ...]] = {}
    for name, value in (stored or {}).items():
        if isinstance(value, str):
            found[name] = value
        elif isinstance(value, list):
            found[name] = tuple(str(v) for v in value if isinstance(v, str | int | float) and not isinstance(v, bool))
    return found
