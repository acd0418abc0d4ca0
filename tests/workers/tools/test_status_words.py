"""The business words a search status names: the asker's own content words, nothing the model brought in."""

from __future__ import annotations

from workers.tools.status_words import joined, subject_words


def test_content_words_the_asker_wrote_are_named_in_the_askers_form() -> None:
    asked = ["How many orders were placed in 2024?"]
    assert subject_words(["order count 2024"], asked) == ["orders"]
    assert subject_words(["orders placed in 2024"], asked) == ["orders"]  # "placed": how, not what


def test_at_most_two_words_and_each_once() -> None:
    asked = ["Which customers bought shoes and hats in Busan?"]
    assert subject_words(["customers customer shoes hats busan"], asked) == ["customers", "shoes"]


def test_words_the_model_brought_in_are_not_named() -> None:
    asked = ["what did we sell last month?"]
    assert subject_words(["ORD_MST sales revenue"], asked) == []  # identifiers, synonyms
    assert subject_words(["what did we sell last month"], asked) == []  # question words and verbs only


def test_an_earlier_question_of_the_asker_counts_and_acronyms_keep_their_case() -> None:
    asked = ["How many VIP customers are there?", "and in Busan?"]
    assert subject_words(["VIP customers in Busan"], asked) == ["VIP", "customers"]
    assert subject_words(["busan"], asked) == ["Busan"]


def test_joined_lists_read_naturally() -> None:
    assert joined([]) == ""
    assert joined(["erp"]) == "erp"
    assert joined(["erp", "billing"]) == "erp and billing"
    assert joined(["a", "b", "c"]) == "a, b and c"
