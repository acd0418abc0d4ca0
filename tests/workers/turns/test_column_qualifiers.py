"""A column qualified with the wrong table's alias moves to the one table of its SELECT that has it
(`workers.turns.column_qualifiers`)."""

from __future__ import annotations

import pytest

from workers.turns.column_qualifiers import requalified
from workers.turns.join_pruning import Shown

TABLES = {
    "DOGS": Shown(frozenset({"dog_id", "owner_id", "name", "size_code"}), frozenset({"dog_id"})),
    "OWNERS": Shown(frozenset({"owner_id", "first_name", "last_name"}), frozenset({"owner_id"})),
    "TREATMENTS": Shown(frozenset({"treatment_id", "dog_id", "cost_of_treatment"}), frozenset({"treatment_id"})),
}


@pytest.mark.parametrize(
    ("sql", "fixed"),
    [
        (
            "SELECT DISTINCT T1.first_name, T1.last_name, T2.size_code FROM Dogs AS T1 "
            "JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
            "SELECT DISTINCT T2.first_name, T2.last_name, T1.size_code FROM Dogs AS T1 "
            "JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        ),
        (  # the table's own name as the qualifier, and a subquery's SELECT checked on its own tables
            "SELECT Treatments.name FROM Dogs JOIN Treatments ON Dogs.dog_id = Treatments.dog_id "
            "WHERE Dogs.dog_id IN (SELECT o.dog_id FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id)",
            "SELECT Dogs.name FROM Dogs JOIN Treatments ON Dogs.dog_id = Treatments.dog_id "
            "WHERE Dogs.dog_id IN (SELECT d.dog_id FROM Owners AS o JOIN Dogs AS d ON o.owner_id = d.owner_id)",
        ),
    ],
)
def test_a_column_moves_to_the_one_table_that_has_it(sql: str, fixed: str) -> None:
    assert requalified(sql, "sqlite", TABLES) == fixed


@pytest.mark.parametrize(
    "sql",
    [
        # right as written
        "SELECT T1.name FROM Dogs AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        # both tables have the column: no single reading
        "SELECT T3.dog_id FROM Dogs AS T1 JOIN Treatments AS T2 ON T1.dog_id = T2.dog_id "
        "JOIN Owners AS T3 ON T1.owner_id = T3.owner_id",
        # no table has it
        "SELECT T1.age FROM Dogs AS T1 JOIN Owners AS T2 ON T1.owner_id = T2.owner_id",
        # a self-join: both aliases are the same table
        "SELECT a.first_name FROM Dogs AS a JOIN Dogs AS b ON a.dog_id = b.dog_id",
        # one table: nothing to move to; and a statement that does not parse
        "SELECT d.first_name FROM Dogs AS d",
        "SELECT T1. FROM",
    ],
)
def test_anything_uncertain_is_left_as_written(sql: str) -> None:
    assert requalified(sql, "sqlite", TABLES) == sql
