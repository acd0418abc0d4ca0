"""What no store accepts is found and cleaned: NUL characters dropped, unpaired surrogates replaced."""

from __future__ import annotations

from core.text.storable_text import storable, storable_value, unstorable, unstorable_in


def test_nul_and_unpaired_surrogates_are_named_and_cleaned() -> None:
    text = "a\x00b \ud800 c\udfff 😀"
    assert unstorable(text) == [
        "a NUL character (U+0000)",
        "an unpaired surrogate (U+D800)",
        "an unpaired surrogate (U+DFFF)",
    ]
    assert storable(text) == "ab \ufffd c\ufffd 😀"
    assert storable(text).encode("utf-8")
    assert unstorable("plain text 😀") == []


def test_every_string_of_a_json_value_is_cleaned_keys_included() -> None:
    value = {"sql\x00": ["x\x00", {"k": "\ud83d"}], "n": 3, "none": None}
    assert unstorable_in(value) == ["a NUL character (U+0000)", "an unpaired surrogate (U+D83D)"]
    assert storable_value(value) == {"sql": ["x", {"k": "\ufffd"}], "n": 3, "none": None}
