"""The static encoder's vectors put together from each word's remembered word pieces are the vectors of the whole
text tokenized at once, truncation included, whatever the text holds."""

from __future__ import annotations

import numpy as np

from search.encoder_static import StaticEmbedder
from tests.support import fast_embedder

TEXTS = [
    "Table ORD_MST (order master) in database erp. Columns: ORD_NO, CUST_CD, SHIP_CITY, ORD_DT.",
    "Table CUST_MST columns: CUST_CD (customer code); CUST_NM (customer name) values Kim, Lee, Park",
    " ".join(f"COL_{i:03d}_AMT" for i in range(400)),  # far past the token limit
    "x" * 3000 + " tail",  # a word too long for a word piece
    "Ωmega  naïve\tTab\nline 東京都 부산 배송 ",  # other whitespace inside words, accents, CJK and Hangul
    "a,b;c.(d) e-f g/h",  # punctuation splits inside a space-separated word
    "\x1c\x1d hello\u00a0world",  # control characters and a no-break space
    "",
    "   ",
]


def _whole(embedder: StaticEmbedder, texts: list[str]) -> np.ndarray:
    """What one tokenization of each whole text gives."""
    out = np.zeros((len(texts), 384), dtype=np.float32)
    for row, encoding in enumerate(embedder._tokenizer.encode_batch(texts, add_special_tokens=False)):
        if encoding.ids:
            vector = embedder._table[encoding.ids].mean(axis=0)
            out[row] = vector / np.linalg.norm(vector)
    return out


def test_word_by_word_pieces_give_the_whole_texts_vectors() -> None:
    embedder = fast_embedder()
    assert isinstance(embedder, StaticEmbedder)
    first = embedder.embed(TEXTS)
    again = embedder.embed(list(reversed(TEXTS)))[::-1]  # from remembered words this time
    expected = _whole(embedder, TEXTS)
    assert np.array_equal(first, expected)
    assert np.array_equal(again, expected)
    assert not first[-1].any()  # nothing to embed: a zero vector, as before
    assert not first[-2].any()
