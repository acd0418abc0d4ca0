"""The names of the sample databases and their table definitions."""

from __future__ import annotations

from collections.abc import Callable
from typing import Final

from sqlalchemy import MetaData

from .billing_schema import build_billing_metadata
from .erp_schema import build_erp_metadata

DATABASES: Final[tuple[str, ...]] = ("erp", "billing")
_BUILDERS: Final[dict[str, Callable[[], MetaData]]] = {"erp": build_erp_metadata, "billing": build_billing_metadata}


def metadata_for(name: str) -> MetaData:
    """A fresh MetaData with every table of sample database ``name``; callers may bind or alter it freely.

    Raises ValueError naming the valid databases when ``name`` is not one of :data:`DATABASES`.
    """
    try:
        builder = _BUILDERS[name]
    except KeyError:
        raise ValueError(f"unknown sample database {name!r}; valid names: {', '.join(DATABASES)}") from None
    return builder()
