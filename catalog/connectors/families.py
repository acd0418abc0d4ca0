"""From a reflected SQLAlchemy type to what analysis needs: a type family, the engine's spelling, a length limit."""

from __future__ import annotations

from typing import Any
from weakref import WeakKeyDictionary

from sqlalchemy import types as sqltypes
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import SQLAlchemyError

from catalog.connectors.base import TypeFamily

# Order matters: Boolean before Integer (some dialects derive one from the other), Float before Numeric (Float is
# a Numeric subclass) and DateTime before Date (dialects spell a date-with-time DATE, e.g. Oracle).
_FAMILIES: tuple[tuple[type[sqltypes.TypeEngine[Any]], TypeFamily], ...] = (
    (sqltypes.Boolean, "boolean"),
    (sqltypes.Integer, "integer"),
    (sqltypes.Float, "float"),
    (sqltypes.Numeric, "decimal"),
    (sqltypes.DateTime, "datetime"),
    (sqltypes.Date, "date"),
    (sqltypes.Time, "time"),
    (sqltypes.String, "text"),
    (sqltypes._Binary, "binary"),
)


def family_of(type_: sqltypes.TypeEngine[object]) -> TypeFamily:
    """The family of a reflected column type; types SQLAlchemy does not classify (JSON, arrays, ...) are "other"."""
    for cls, family in _FAMILIES:
        if isinstance(type_, cls):
            return family
    return "other"


def data_type_of(type_: sqltypes.TypeEngine[object], dialect: Dialect) -> str:
    """The type as the engine spells it; `repr` where the dialect cannot render it (e.g. an undeclared SQLite type)."""
    try:
        return str(type_.compile(dialect=dialect))
    except (SQLAlchemyError, NotImplementedError, TypeError):
        return repr(type_)


def max_length_of(type_: sqltypes.TypeEngine[object]) -> int | None:
    """The declared maximum length of a string column, None for other types or an unbounded string."""
    if isinstance(type_, sqltypes.String):
        length = type_.length
        return length if isinstance(length, int) else None
    return None


#: Each dialect's facts per reflected type, keyed by the type's class and attributes: a catalog declares a few dozen
#: types over hundreds of thousands of columns, and rendering a type costs as much as reading its column.
_FACTS: WeakKeyDictionary[Dialect, dict[tuple[Any, ...], tuple[str, TypeFamily, int | None]]] = WeakKeyDictionary()
_FACTS_KEPT = 10_000


def type_facts(type_: sqltypes.TypeEngine[object], dialect: Dialect) -> tuple[str, TypeFamily, int | None]:
    """(`data_type_of`, `family_of`, `max_length_of`) of the type, remembered per dialect for types whose attributes
    are all hashable (the rest are worked out each time)."""
    known = _FACTS.get(dialect)
    if known is None:
        known = _FACTS[dialect] = {}
    try:
        key: tuple[Any, ...] | None = (type(type_), tuple(vars(type_).items()))
        found = known.get(key)  # type: ignore[arg-type]
    except TypeError:  # an attribute that cannot be hashed (an Enum's values, ...)
        key, found = None, None
    if found is None:
        found = (data_type_of(type_, dialect), family_of(type_), max_length_of(type_))
        if key is not None and len(known) < _FACTS_KEPT:
            known[key] = found
    return found
