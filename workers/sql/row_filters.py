"""Row filters and column masks enforced in the statement that runs (SPEC §6, §7): a deterministic rewrite.

Every reference to a table (or view) that has a row filter or a masked column for the asking user, wherever it
stands (FROM, joins, subqueries, CTE bodies, set operations, lateral and correlated subqueries), is replaced by
`(SELECT <columns> FROM schema.table AS ts_r WHERE <filter>) AS <the alias or name the query used>`, so the rest of
the query reads only the rows the user may see and the masked values (`workers.sql.column_masks`). The inner read
is schema-qualified (no CTE can stand in for it), its filter's columns are qualified with `ts_r` (a missing column
fails instead of binding to an outer query), and `{user.ATTR}` values are bound parameters; on MariaDB/MySQL its
text comparisons are exact (`workers.sql.exact_compare`). A missing attribute makes the predicate that uses it match
nothing. A `hash` mask binds the installation's padded mask keys as parameters too; the statement shown and stored
keeps only their placeholders. A row identifier (`rowid`, `ctid`, ...) on a replaced table is refused
(`workers.sql.pseudo_columns`). A view that reads a filtered or masked table is read through its own
definition, rewritten the same way (`workers.sql.view_inlining`; a column hidden behind it reads as NULL there, so
the definition still runs); a view whose definition cannot be read is refused. The rewritten text is parsed again
and must read exactly the tables it was built to read.

The parts have modules of their own: what applies to which table (`workers.sql.policed_tables`), the derived table
(`workers.sql.filtered_reads`), the bound values (`workers.sql.bound_values`) and the refusals
(`workers.sql.policy_refusals`). This module rewrites the statement and checks the result.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import sqlglot
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlglot import exp
from sqlglot.errors import SqlglotError

from catalog.sql_tables import TableName, table_name, table_nodes
from catalog.view_reads import MAX_VIEW_DEPTH, NameRefused
from core.access.mask_key import MaskKey
from core.access.permissions import Principal
from workers.sql.bound_values import BoundValues
from workers.sql.column_masks import KeyBinding
from workers.sql.engines import family_of
from workers.sql.filtered_reads import FilteredReads, alias_of, refuse_clauses
from workers.sql.guard import CheckedQuery
from workers.sql.masked_use import MaskedReference, masked_outputs, masked_use_refusal
from workers.sql.policed_tables import PolicedTable, PolicedTables, PolicedView
from workers.sql.policy_refusals import PolicyDenied, PolicyRefused, view_refused
from workers.sql.pseudo_columns import PolicedReference, pseudo_column_refusal
from workers.sql.view_inlining import inlined

log = logging.getLogger(__name__)


@dataclass
class PolicedQuery:
    """The statement to run for a user with row filters or masks: text in the driver's parameter style when
    `params` is not None, and what was applied, for the user and the audit. `mask_key`: the key a `hash` mask in
    it uses, for the executor (SQLite's `ts_mask_hash`, and keeping the key out of error messages)."""

    sql: str
    params: dict[str, str] | None
    applied: list[str] = field(default_factory=list)
    mask_key: MaskKey | None = None

    def note(self) -> str:
        """What was applied, as one line."""
        return "; ".join(self.applied)


def apply_data_policies(
    engine: Engine,
    principal: Principal,
    database: str,
    checked: CheckedQuery,
    *,
    mask_key: Callable[[], MaskKey] | None = None,
) -> PolicedQuery | None:
    """The statement rewritten for `principal`'s row filters and masks on `database`, or None when none applies.
    `mask_key` gives the installation's key (`mask_key.mask_key`); it is asked only when a `hash` mask applies,
    and without one such a query is refused."""
    if not principal.has_data_policies(database):
        return None
    try:
        with engine.connect() as conn:
            rewrite = _Rewrite(conn, family_of(engine), principal, database, checked, mask_key)
            result = rewrite.run()
            conn.rollback()
    except NameRefused as exc:
        raise PolicyRefused(str(exc)) from exc
    except SQLAlchemyError as exc:
        log.warning("row filters: cannot read the tables of %s: %s", database, exc)
        raise PolicyRefused("refused: the row filters that apply to you could not be checked; try again") from exc
    return result


class _Rewrite:
    def __init__(
        self,
        conn: Connection,
        family: str,
        principal: Principal,
        database: str,
        checked: CheckedQuery,
        mask_key: Callable[[], MaskKey] | None,
    ):
        self.family = family
        self.dialect = checked.dialect
        self.checked = checked
        self.values = BoundValues()
        self.key_binding = KeyBinding(mask_key, family, database, self.values.placeholder)
        self.tables = PolicedTables(conn, family, principal, database, self.dialect)
        self.reads = FilteredReads(principal, database, self.dialect, family, self.values, self.key_binding)
        self.expected: Counter[tuple[str, str | None]] = Counter()

    def run(self) -> PolicedQuery | None:
        statement = self.checked.statement.copy()
        self._refuse_pseudo_columns(statement)
        self._refuse_masked_use(statement, None, depth=0)
        if not self._rewrite(statement, in_view=False, depth=0):
            return None
        sql = statement.sql(dialect=self.dialect, comments=False)
        self._verify(sql)
        bound = self.values.bind(sql, self.checked.sql, self.family)
        return PolicedQuery(*bound, applied=self.tables.applied, mask_key=self.key_binding.key)

    def _refuse_pseudo_columns(self, statement: exp.Expr) -> None:
        references = []
        for node in table_nodes(statement, self.dialect):
            policed = self.tables.policed(table_name(node))
            if policed is not None:
                references.append(
                    PolicedReference(node, alias_of(node).name, policed.columns, table_name(node).written)
                )
        refusal = pseudo_column_refusal(statement, self.family, references)
        if refusal is not None:
            raise PolicyRefused(refusal)

    def _refuse_masked_use(self, tree: exp.Expr, view: TableName | None, *, depth: int) -> dict[str, str]:
        """Refuse a statement (or view definition) that computes with a masked column (`workers.sql.masked_use`);
        the masked columns a view's definition reads as they are, by its column names."""
        references = []
        for node in table_nodes(tree, self.dialect):
            name = table_name(node)
            policed = self.tables.policed(name)
            masks: dict[str, str]
            if isinstance(policed, PolicedTable):
                masks = {c.casefold(): k for c, k in policed.masks.items() if k != "hide"}
            elif isinstance(policed, PolicedView):
                if depth >= MAX_VIEW_DEPTH:
                    raise PolicyRefused(view_refused(name))
                masks = self._refuse_masked_use(policed.definition, name, depth=depth + 1)
            else:
                continue
            references.append(MaskedReference(node, alias_of(node).name, masks, name.written))
        refusal = masked_use_refusal(tree, references, view.written if view is not None else None)
        if refusal is not None:
            raise PolicyDenied(refusal)
        if view is None or not isinstance(tree, exp.Query):
            return {}
        found = self.tables.found.get(view)
        return masked_outputs(tree, found.columns, references) if isinstance(found, PolicedView) else {}

    def _rewrite(self, tree: exp.Expr, *, in_view: bool, depth: int) -> bool:
        """Replace every policed table (and view with policed tables behind it) that `tree` reads."""
        changed = False
        for node in table_nodes(tree, self.dialect):
            policed = self.tables.policed(table_name(node))
            if policed is None:
                self.expected[_key(table_name(node))] += 1
                continue
            refuse_clauses(node)
            if isinstance(policed, PolicedView):
                if depth >= MAX_VIEW_DEPTH:
                    raise PolicyRefused(view_refused(table_name(node)))
                definition = policed.definition.copy()
                self._rewrite(definition, in_view=True, depth=depth + 1)
                replacement = inlined(definition, policed.columns, alias_of(node))
            else:
                replacement = self.reads.subquery(node, policed, in_view=in_view)
                self.expected[(policed.resolved.name.casefold(), policed.schema.casefold())] += 1
            for key in ("joins", "laterals"):  # a parenthesised join hangs its joins on its first table
                if node.args.get(key):
                    replacement.set(key, node.args[key])
            node.replace(replacement)
            changed = True
        return changed

    def _verify(self, sql: str) -> None:
        """The rewritten text must read exactly the tables it was built to read (no reference lost or gained)."""
        try:
            reparsed = sqlglot.parse_one(sql, read=self.dialect)
            found = Counter(_key(table_name(n)) for n in table_nodes(reparsed, self.dialect))
        except (SqlglotError, RecursionError, ValueError) as exc:
            log.error("row filters: the rewritten statement does not parse: %s", exc)
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you") from exc
        if found != self.expected:
            log.error("row filters: the rewritten statement reads %s, expected %s", dict(found), dict(self.expected))
            raise PolicyRefused("refused: this query cannot be run with the row filters that apply to you")


def _key(name: TableName) -> tuple[str, str | None]:
    return name.name.casefold(), name.schema.casefold() if name.schema else None
