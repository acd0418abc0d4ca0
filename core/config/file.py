"""The YAML configuration file: sources, roles with their grants, and directory-group mappings.

Secrets and URLs of services come from the environment (`core.config.settings`); this file holds what an operator
writes by hand and reviews. Validation errors name the file, the line and the key, and a file that fails
validation is never partly applied.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import AfterValidator, BaseModel, BeforeValidator, ConfigDict, Field, ValidationError, field_validator
from pydantic_core import ErrorDetails
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import MarkedYAMLError, YAMLError

from core.access.row_predicates import MaskKind, PredicateError, parse_mask_pattern, parse_predicate
from core.errors import ConfigError

NAME_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,62}$")

#: What a hosted model may read of a source's data (`core.access.privacy`): "off", everything the reader may see;
#: "schema_only", its structure and nothing of its rows.
PrivacyMode = Literal["off", "schema_only"]
PRIVACY_MODES: tuple[PrivacyMode, ...] = ("off", "schema_only")


def _privacy_mode(value: Any) -> Any:
    """YAML 1.1 readers take a bare `off` for false; it means the mode "off" here. Other values are checked against
    the modes, with a message that names them."""
    if value is False:
        return "off"
    if isinstance(value, str) and value.strip().lower() in PRIVACY_MODES:
        return value.strip().lower()
    raise ValueError(f"privacy must be one of {', '.join(PRIVACY_MODES)}, not {value!r}")


Privacy = Annotated[PrivacyMode, BeforeValidator(_privacy_mode)]


def check_name(value: str, what: str) -> str:
    if not NAME_PATTERN.match(value):
        raise ValueError(
            f"{what} {value!r} must start with a letter and contain only letters, digits, '_' or '-' (at most 63)"
        )
    return value


# The models' default factories are these Python functions, not the builtins `list` and `dict`: Pydantic looks
# at a factory's signature, which a builtin gives only as text that Python parses with its tokenizer, whose regular
# expressions then cost every command about 18 ms to compile (the import of this module: 22.5 ms, 4.7 without).
def _list() -> list[Any]:
    return []


def _dict() -> dict[Any, Any]:
    return {}


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class SourceEntry(_Strict):
    """A source database: its SQLAlchemy URL (passwords as `${ENV_VAR}` placeholders or written here by hand)."""

    url: str
    aliases: list[str] = Field(default_factory=_list)
    #: This source's privacy mode, in place of the installation's (`ConfigFile.privacy`) when set.
    privacy: Privacy | None = None

    @field_validator("aliases")
    @classmethod
    def _aliases_are_names(cls, value: list[str]) -> list[str]:
        for alias in value:
            check_name(alias, "alias")
        return value


def _table_pattern(value: str) -> str:
    if not value.strip() or value.count(".") > 1:
        raise ValueError(f"a row filter is keyed by a table pattern (TABLE or schema.TABLE), not {value!r}")
    return value


def _predicate(value: str) -> str:
    try:
        parse_predicate(value)
    except PredicateError as exc:
        raise ValueError(str(exc)) from exc
    return value


def _mask_pattern(value: str) -> str:
    parse_mask_pattern(value)
    return value


TablePattern = Annotated[str, AfterValidator(_table_pattern)]
RowPredicate = Annotated[str, AfterValidator(_predicate)]
MaskPattern = Annotated[str, AfterValidator(_mask_pattern)]


class Grant(_Strict):
    """Access to one database (or every database matching a pattern) and, within it, to tables.

    Table patterns are shell-style and case-insensitive (`core.access.permissions.pattern_matches`): `ORD_*` covers the
    source's default schema, `hr.*` schema hr, `*.ORD_MST` every schema, `*` everything; a deny pattern without a
    schema covers every schema. Within one grant a deny pattern beats an allow pattern.
    """

    database: str
    allow: list[str] = Field(default_factory=lambda: ["*"])
    deny: list[str] = Field(default_factory=_list)
    #: Lets this role's SQL read the source's system catalog (information_schema, pg_catalog, SQLite's schema table
    #: and table-valued pragmas, `::regclass` casts, MariaDB `@@` variables), which lists every table; off unless set.
    catalog: bool = False
    #: Table pattern → SQL condition over that table's columns; `{user.ATTR}` is a directory attribute of the asking
    #: user, bound as a value. Rows of a matching table that fail the condition do not exist for this grant.
    row_filters: dict[TablePattern, RowPredicate] = Field(default_factory=_dict)
    #: `TABLE.COLUMN` (or `schema.TABLE.COLUMN`) pattern → hide | null | redact | hash.
    column_masks: dict[MaskPattern, MaskKind] = Field(default_factory=_dict)


class Role(_Strict):
    grants: list[Grant] = Field(default_factory=_list)
    admin: bool = False


class GroupMapping(_Strict):
    """Members of a directory group get these roles. `group` is a Slack user-group id or @handle, or an Entra id."""

    platform: Literal["slack", "teams"]
    group: str
    roles: list[str]


class ConfigFile(_Strict):
    sources: dict[str, SourceEntry] = Field(default_factory=_dict)
    roles: dict[str, Role] = Field(default_factory=_dict)
    groups: list[GroupMapping] = Field(default_factory=_list)
    default_role: str | None = None
    #: The installation's privacy mode, for every source that sets none: "schema_only" sends a hosted model no
    #: row value of such a source.
    privacy: Privacy = "off"

    @field_validator("sources")
    @classmethod
    def _source_names(cls, value: dict[str, SourceEntry]) -> dict[str, SourceEntry]:
        seen: dict[str, str] = {}
        for name, entry in value.items():
            check_name(name, "source name")
            for label in (name, *entry.aliases):
                owner = seen.get(label.lower())
                if owner is not None and (owner != name or label != name):
                    raise ValueError(f"name or alias {label!r} is used by both {owner!r} and {name!r}")
                seen[label.lower()] = name
        return value

    def source_for(self, name_or_alias: str) -> str | None:
        """The canonical source name for a name or alias (case-insensitive), or None."""
        wanted = name_or_alias.lower()
        for name, entry in self.sources.items():
            if name.lower() == wanted or any(a.lower() == wanted for a in entry.aliases):
                return name
        return None


def _yaml() -> YAML:
    yaml = YAML(typ="rt")
    yaml.preserve_quotes = True
    yaml.indent(mapping=2, sequence=4, offset=2)
    yaml.width = 4096
    return yaml


def _line_of(document: Any, loc: tuple[int | str, ...]) -> int | None:
    """1-based line of the deepest node on `loc` that the document still has."""
    node, line = document, None
    for part in loc:
        if isinstance(node, CommentedMap) and part in node:
            line = node.lc.key(part)[0] + 1
            node = node[part]
        elif isinstance(node, CommentedSeq) and isinstance(part, int) and part < len(node):
            line = node.lc.item(part)[0] + 1
            node = node[part]
        else:
            break
    return line


def _describe(error: ErrorDetails) -> str:
    if error["type"] == "extra_forbidden":
        return "unknown key"
    message = str(error["msg"])
    return message.removeprefix("Value error, ")


def read_text(path: Path) -> str:
    """The file's text; a missing file reads as empty (no sources, no roles: nobody may query anything)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration file: {exc}") from exc


def read_document(path: Path) -> CommentedMap:
    """The file parsed with positions kept; an empty or missing file is an empty mapping."""
    return parse_document(path, read_text(path))


def parse_document(path: Path, text: str) -> CommentedMap:
    """`text` (the contents of `path`) parsed with positions kept; empty text is an empty mapping."""
    try:
        document = _yaml().load(text)
    except MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"{path}:{mark.line + 1}" if mark is not None else str(path)
        raise ConfigError(f"{where}: not valid YAML: {exc.problem or exc.context}") from exc
    except YAMLError as exc:  # a character YAML does not allow (a NUL byte, a control character)
        raise ConfigError(f"{path}: not valid YAML: {str(exc).splitlines()[0]}") from exc
    if document is None:
        return CommentedMap()
    if not isinstance(document, CommentedMap):
        raise ConfigError(f"{path}:1: the configuration file must be a mapping of keys (sources, roles, ...)")
    return document


def _undefined_roles(config: ConfigFile) -> list[tuple[tuple[int | str, ...], str]]:
    known = set(config.roles)
    problems: list[tuple[tuple[int | str, ...], str]] = []
    if config.default_role is not None and config.default_role not in known:
        problems.append((("default_role",), f"role {config.default_role!r} is not defined under roles"))
    for index, mapping in enumerate(config.groups):
        for role in mapping.roles:
            if role not in known:
                problems.append((("groups", index, "roles"), f"role {role!r} is not defined under roles"))
    return problems


def _report(path: Path, document: CommentedMap, problems: list[tuple[tuple[int | str, ...], str]]) -> ConfigError:
    lines = []
    for loc, message in problems:
        line = _line_of(document, loc)
        key = ".".join(str(p) for p in loc if p != "[key]") or "(top level)"
        where = f"{path}:{line}" if line is not None else str(path)
        lines.append(f"{where}: {key}: {message}")
    return ConfigError("invalid configuration:\n" + "\n".join(lines))


def validate_document(path: Path, document: CommentedMap) -> ConfigFile:
    try:
        config = ConfigFile.model_validate(document)
    except ValidationError as exc:
        problems = [(tuple(e["loc"]), _describe(e)) for e in exc.errors()]
        raise _report(path, document, problems) from exc
    problems = _undefined_roles(config)
    if problems:
        raise _report(path, document, problems)
    return config


def write_document(path: Path, document: CommentedMap) -> None:
    """Validate, then replace the file atomically, keeping the user's comments and order."""
    validate_document(path, document)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    mode = path.stat().st_mode & 0o777 if path.exists() else 0o600
    with tmp.open("w", encoding="utf-8") as handle:
        _yaml().dump(document, handle)
    tmp.chmod(mode)
    tmp.replace(path)
