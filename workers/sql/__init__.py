"""Read-only SQL on source databases (SPEC §7): the guard, table permissions, the read-only executor and `run_sql`."""

from workers.sql.engines import dispose_engines
from workers.sql.limits import SqlLimits
from workers.sql.service import SqlOutcome, run_sql

__all__ = ["SqlLimits", "SqlOutcome", "dispose_engines", "run_sql"]
