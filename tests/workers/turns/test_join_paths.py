"""The table in between, joined where a join names a column one of its tables lacks (`workers.turns.join_paths`)."""

from __future__ import annotations

from typing import Any

from workers.turns.join_paths import Bridged, bridged, looked_up, relinked

SHOWN = {
    "PRODUCTS": ["PRD_CD", "CATEGORY"],
    "RETURNS": ["RET_NO", "ORD_NO", "LINE_NO", "RET_DT"],
    "ORDER_LINES": ["ORD_NO", "LINE_NO", "PRD_CD", "QTY"],
}
CARDS: dict[str, dict[str, Any]] = {
    "ORDER_LINES": {"primary_key": ["ORD_NO", "LINE_NO"], "foreign_keys": [{"columns": ["PRD_CD"]}]},
    "RETURNS": {"primary_key": ["RET_NO"]},
    "PRODUCTS": {"primary_key": ["PRD_CD"]},
}


def _bridged(sql: str, column: str, shown: dict[str, list[str]] = SHOWN, cards: dict[str, Any] = CARDS) -> Any:
    columns = {t: {c.upper(): c for c in names} for t, names in shown.items()}
    return bridged(sql, "sqlite", column, columns, cards, {t: t for t in shown})


def test_the_lacking_table_joined_second_gets_the_table_in_between_first() -> None:
    sql = "SELECT P.CATEGORY, COUNT(R.RET_NO) FROM PRODUCTS AS P JOIN RETURNS AS R ON P.PRD_CD = R.PRD_CD GROUP BY 1"
    found = _bridged(sql, "R.PRD_CD")
    assert found.sql == (
        "SELECT P.CATEGORY, COUNT(R.RET_NO) FROM PRODUCTS AS P JOIN ORDER_LINES "
        "ON ORDER_LINES.PRD_CD = P.PRD_CD JOIN RETURNS AS R ON R.ORD_NO = ORDER_LINES.ORD_NO "
        "AND R.LINE_NO = ORDER_LINES.LINE_NO GROUP BY 1"
    )
    assert found.note == "I joined RETURNS to PRODUCTS through ORDER_LINES: RETURNS has no column PRD_CD."


def test_the_lacking_table_read_first_is_joined_to_the_table_in_between_by_a_foreign_key() -> None:
    shown = {"cars_data": ["Id", "MPG"], "model_list": ["ModelId", "Model"], "car_names": ["MakeId", "Model"]}
    cards: dict[str, dict[str, Any]] = {
        "CARS_DATA": {"foreign_keys": [{"columns": ["Id"], "references": "car_names", "ref_columns": ["MakeId"]}]},
        "CAR_NAMES": {"primary_key": ["MakeId"]},
    }
    shown = {t.upper(): c for t, c in shown.items()}
    columns = {t: {c.upper(): c for c in names} for t, names in shown.items()}
    names = {"CARS_DATA": "cars_data", "MODEL_LIST": "model_list", "CAR_NAMES": "car_names"}
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN model_list AS T2 ON T1.Model = T2.Model ORDER BY T1.MPG LIMIT 1"
    found = bridged(sql, "sqlite", "T1.Model", columns, cards, names)
    assert found is not None
    assert found.sql == (
        "SELECT T2.Model FROM cars_data AS T1 JOIN car_names ON T1.Id = car_names.MakeId "
        "JOIN model_list AS T2 ON car_names.Model = T2.Model ORDER BY T1.MPG LIMIT 1"
    )


def test_no_single_sure_table_in_between_leaves_the_statement_alone() -> None:
    sql = "SELECT COUNT(*) FROM PRODUCTS AS P JOIN RETURNS AS R ON P.PRD_CD = R.PRD_CD"
    two = SHOWN | {"ORDER_LINES_OLD": SHOWN["ORDER_LINES"]}
    assert _bridged(sql, "R.PRD_CD", two, CARDS | {"ORDER_LINES_OLD": CARDS["ORDER_LINES"]}) is None
    # a link that does not cover the key of the table in between could match many rows
    partial = CARDS | {"ORDER_LINES": {"primary_key": ["ORD_NO", "LINE_NO", "SEQ"]}}
    assert _bridged(sql, "R.PRD_CD", cards=partial) is None
    assert _bridged(sql, "P.PRD_CD") is None  # the table has the column
    assert _bridged(sql, "PRD_CD") is None  # unqualified: which table lacks it is not known
    left = "SELECT COUNT(*) FROM PRODUCTS AS P LEFT JOIN RETURNS AS R ON P.PRD_CD = R.PRD_CD"
    assert _bridged(left, "R.PRD_CD") is None


CARS = {t.upper(): {c.upper(): c for c in names} for t, names in {
    "cars_data": ["Id", "MPG", "Horsepower"],
    "car_names": ["MakeId", "Model", "Make"],
}.items()}  # fmt: skip
CAR_CARDS: dict[str, dict[str, Any]] = {
    "CARS_DATA": {
        "primary_key": ["Id"],
        "foreign_keys": [{"columns": ["Id"], "references": "car_names", "ref_columns": ["MakeId"]}],
    },
    "CAR_NAMES": {"primary_key": ["MakeId"]},
}


def test_a_join_on_a_column_one_table_lacks_takes_the_link_the_cards_give() -> None:
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.MakeId = T2.MakeId ORDER BY T1.Horsepower"
    found = relinked(sql, "sqlite", "T1.MakeId", CARS, CAR_CARDS)
    assert found is not None
    assert found.sql == (
        "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.Id = T2.MakeId ORDER BY T1.Horsepower"
    )
    assert (
        found.note
        == "I joined cars_data to car_names on cars_data.Id = car_names.MakeId: cars_data has no column MakeId."
    )


def test_no_link_or_one_that_matches_many_rows_on_both_sides_leaves_the_statement_alone() -> None:
    sql = "SELECT T2.Model FROM cars_data AS T1 JOIN car_names AS T2 ON T1.MakeId = T2.MakeId"
    assert relinked(sql, "sqlite", "T1.MakeId", CARS, {}) is None
    many = {
        "CARS_DATA": {"primary_key": ["Id", "Year"], "foreign_keys": CAR_CARDS["CARS_DATA"]["foreign_keys"]},
        "CAR_NAMES": {"primary_key": ["MakeId", "Model"]},
    }
    assert relinked(sql, "sqlite", "T1.MakeId", CARS, many) is None
    assert relinked(sql, "sqlite", "T2.MakeId", CARS, CAR_CARDS) is None  # the table has the column


TEACHING = {
    "TEACHER": ["Teacher_ID", "Name"],
    "COURSE_ARRANGE": ["Course_ID", "Teacher_ID", "Grade"],
    "COURSE": ["Course_ID", "Course", "Staring_Date"],
}
TEACHING_CARDS: dict[str, dict[str, Any]] = {
    "COURSE_ARRANGE": {
        "primary_key": ["Course_ID", "Teacher_ID"],
        "foreign_keys": [{"columns": ["Course_ID"], "references": "course", "ref_columns": ["Course_ID"]}],
    },
    "COURSE": {"primary_key": ["Course_ID"]},
    "TEACHER": {"primary_key": ["Teacher_ID"]},
}


def _looked_up(
    sql: str, column: str, shown: dict[str, list[str]] = TEACHING, cards: dict[str, Any] = TEACHING_CARDS
) -> Bridged | None:
    columns = {t: {c.upper(): c for c in names} for t, names in shown.items()}
    return looked_up(sql, "sqlite", column, columns, cards, {t: t.lower() for t in shown})


def test_a_selected_column_the_table_lacks_is_read_from_the_one_shown_table_holding_it() -> None:
    sql = (
        "SELECT T1.Name, T2.Course FROM teacher AS T1 JOIN course_arrange AS T2 ON T1.Teacher_ID = T2.Teacher_ID "
        "WHERE T2.Course <> 'Math' ORDER BY T1.Name"
    )
    found = _looked_up(sql, "T2.Course")
    assert found is not None
    assert found.sql == (
        "SELECT T1.Name, course.Course FROM teacher AS T1 JOIN course_arrange AS T2 ON T1.Teacher_ID = T2.Teacher_ID "
        "JOIN course ON T2.Course_ID = course.Course_ID WHERE course.Course <> 'Math' ORDER BY T1.Name"
    )
    assert found.note == (
        "I read Course from course, joined to course_arrange on course_arrange.Course_ID = course.Course_ID: "
        "course_arrange has no column Course."
    )


def test_no_sure_table_to_read_a_missing_column_from_leaves_the_statement_alone() -> None:
    sql = "SELECT T2.Course FROM course_arrange AS T2"
    # two shown tables hold it
    two = TEACHING | {"COURSE_OLD": TEACHING["COURSE"]}
    assert _looked_up(sql, "T2.Course", two, TEACHING_CARDS | {"COURSE_OLD": TEACHING_CARDS["COURSE"]}) is None
    # the link does not cover the holder's key: a course could match several rows
    wide = TEACHING_CARDS | {"COURSE": {"primary_key": ["Course_ID", "Staring_Date"]}}
    assert _looked_up(sql, "T2.Course", TEACHING, wide) is None
    # the table already read holds it, the qualifier names no table of the outer query, or a join names the column
    assert _looked_up("SELECT T2.Course FROM course AS T2", "T2.Course") is None
    assert _looked_up("SELECT X.Course FROM course_arrange AS T2", "X.Course") is None
    joined = "SELECT T1.Name FROM teacher AS T1 JOIN course_arrange AS T2 ON T2.Course = T1.Name"
    assert _looked_up(joined, "T2.Course") is None
