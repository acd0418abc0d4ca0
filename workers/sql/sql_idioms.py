"""SQL idioms a small model is shown as worked examples when a database has no approved examples yet
(`workers.turns.guided_sql.idioms_text`): one short statement per kind of question, on generic names, in the
source engine's dialect where the dialects differ. Text for the prompt; never run."""

from __future__ import annotations

#: How each engine writes a date's month.
MONTH_OF = {
    "sqlite": "strftime('%Y-%m', d.day)",
    "postgresql": "to_char(d.day, 'YYYY-MM')",
    "mariadb": "DATE_FORMAT(d.day, '%Y-%m')",
    "mysql": "DATE_FORMAT(d.day, '%Y-%m')",
}
PER_GROUP = "SELECT g.kind, COUNT(*) FROM g GROUP BY g.kind;"
SHARE = "SELECT 100.0 * SUM(CASE WHEN t.flag = 'Y' THEN 1 ELSE 0 END) / COUNT(*) FROM t;"
NONE_OF = "SELECT a.id FROM a WHERE a.id NOT IN (SELECT b.a_id FROM b);"


def top(count: int) -> str:
    return f"SELECT g.name, SUM(g.amount) AS total FROM g GROUP BY g.name ORDER BY total DESC LIMIT {count};"


def per_month(engine: str) -> str:
    month = MONTH_OF.get(engine.lower(), MONTH_OF["sqlite"])
    return f"SELECT {month} AS month, COUNT(*) FROM d GROUP BY month ORDER BY month;"
