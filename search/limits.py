"""Limits of a table search that callers check before searching; a module of its own so that the command line
can show them in its help without loading the search code."""

from __future__ import annotations

#: The most candidates one search returns.
MAX_K = 30
