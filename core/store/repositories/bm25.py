"""Okapi BM25 over the search chunks, computed in the store: the keyword ranking of table search.

Each chunk is a document: a table's head chunk (its name, purpose, keys, references and column names, each
identifier with its words) and one chunk per 35 columns (`search.chunking`); a table scores as its best chunk, so a
column deep in a 400-column table counts as much as in a narrow one. A term's frequency is the number of positions
the chunk's tsvector holds for it; a document's length is its number of distinct words (`length(tsvector)`, read
without unpacking the chunk). Document frequencies are counted over the chunks of the visible tables of the
databases searched that match the query, and the corpus size and mean length come from those databases' statistics
(`sources.chunk_count`, `sources.chunk_words`, kept by indexing), so a word common in one warehouse weighs little
there whatever other sources hold. PostgreSQL's `ts_rank_cd` scores each chunk alone (no document frequency, no
length normalisation): a long table that names a common word twice outranks a short one that names the question's
rare word once.

The statistics are the databases', not the reader's: a table a reader may not see still counts in how common a word
is (never as a match); a reader's own chunk texts are scored with the same statistics (`given_scores`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from sqlalchemy import Float, Integer, Text, bindparam, text
from sqlalchemy.dialects.postgresql import ARRAY
from sqlalchemy.orm import Session
from sqlalchemy.sql.elements import BindParameter

#: The usual Okapi constants (Robertson and Zaragoza): term-frequency saturation and length normalisation.
K1 = 1.2
B = 0.75

# The statistics every score shares: the query's lexemes as the index spells them, each lexeme's document
# frequency among the chunks that match the query, and the corpus size and mean length.
_SHARED = """
q AS (
  SELECT to_tsquery('simple', :query) AS query,
         tsvector_to_array(to_tsvector('simple', :plain)) AS lexemes
), matched AS (
  SELECT c.id, c.table_id, c.tsv FROM search_chunks c, q
  WHERE c.source_id = ANY(:sources) AND c.tsv @@ q.query
    AND c.table_id IN (SELECT t.id FROM source_tables t WHERE t.source_id = ANY(:sources) AND t.visible)
), df AS (
  SELECT w.lexeme, count(*) AS n FROM matched m CROSS JOIN LATERAL unnest(m.tsv) AS w, q
  WHERE w.lexeme = ANY(q.lexemes) GROUP BY w.lexeme
), corpus AS (
  SELECT greatest(sum(s.chunk_count), 1) AS n,
         greatest(sum(s.chunk_words)::float8 / greatest(sum(s.chunk_count), 1), 1) AS avgdl
  FROM sources s WHERE s.id = ANY(:sources)
)"""

# One term's Okapi score in one chunk (`d` a row of `terms`).
_TERM = (
    "ln(1 + greatest(corpus.n - df.n + 0.5, 0.5) / (df.n + 0.5))"
    f" * d.tf * ({K1} + 1) / (d.tf + {K1} * (1 - {B} + {B} * d.dl / corpus.avgdl))"
)

_SCORE = f"""
SELECT d.key, d.table_id, sum({_TERM}) AS score
FROM terms d JOIN df USING (lexeme) CROSS JOIN corpus
GROUP BY d.key, d.table_id"""

# Each matching chunk's query terms with their frequency there, and the chunk's length.
_TERMS = """terms AS (
  SELECT m.id AS key, m.table_id, length(m.tsv) AS dl, w.lexeme, coalesce(array_length(w.positions, 1), 1) AS tf
  FROM matched m CROSS JOIN LATERAL unnest(m.tsv) AS w, q WHERE w.lexeme = ANY(q.lexemes)
)"""

_STORED = f"""WITH {_SHARED}, {_TERMS}, chunks AS ({_SCORE})
SELECT table_id, max(score) AS score FROM chunks GROUP BY table_id
ORDER BY score DESC, table_id LIMIT :limit"""

_GIVEN = f"""WITH {_SHARED}, given AS (
  SELECT k.position AS key, to_tsvector('simple', k.words) AS tsv
  FROM unnest(CAST(:keywords AS text[])) WITH ORDINALITY AS k(words, position)
), terms AS (
  SELECT g.key, 0 AS table_id, length(g.tsv) AS dl, w.lexeme, coalesce(array_length(w.positions, 1), 1) AS tf
  FROM given g CROSS JOIN LATERAL unnest(g.tsv) AS w, q WHERE w.lexeme = ANY(q.lexemes) AND g.tsv @@ q.query
)
{_SCORE}"""


# Several queries ranked in one pass (`multi_ranked_statement`): a chunk's score for a query is the sum of its terms'
# scores over the query's lexemes. Every query is an OR of words, so a lexeme's document frequency among the chunks
# matching the union of the queries is its frequency among those matching any one query holding it: each query's
# scores are the ones its own statement would give, for one scan of the matching chunks instead of one per query.
_MULTI = f"""WITH texts AS (
  SELECT k.position - 1 AS part, tsvector_to_array(to_tsvector('simple', k.words)) AS lexemes
  FROM unnest(CAST(:plains AS text[])) WITH ORDINALITY AS k(words, position)
), {_SHARED}, {_TERMS}, scored AS (
  SELECT d.key, d.table_id, d.lexeme, {_TERM} AS score
  FROM terms d JOIN df USING (lexeme) CROSS JOIN corpus
), chunks AS (
  SELECT t.part, s.key, s.table_id, sum(s.score) AS score FROM scored s JOIN texts t ON s.lexeme = ANY(t.lexemes)
  GROUP BY t.part, s.key, s.table_id
), best AS (
  SELECT part, table_id, max(score) AS score FROM chunks GROUP BY part, table_id
), ranked AS (
  SELECT part, table_id, score, row_number() OVER (PARTITION BY part ORDER BY score DESC, table_id) AS place
  FROM best
)
SELECT part, table_id, score AS rank FROM ranked WHERE place <= :limit"""


def plain_words(query: str) -> str:
    """The words of a to_tsquery expression of quoted alternatives (`search.query_text.tsquery`)."""
    return " ".join(part.strip().strip("'") for part in query.split("|"))


def ranked_statement(query: Any, source_ids: Any, limit: Any) -> Any:
    """(table_id, score) of the visible tables of the sources with a chunk that matches `query` (a to_tsquery
    expression), best BM25 score of their chunks first; a subquery-able statement with parameters of its own.

    `query` may instead be a bind parameter named `query_<n>` of a statement built once and run with its values
    (`search_batch.rankings`): its words are then the parameter `plain_<n>` (`plain_words` of the query), and
    `source_ids` and `limit` are bind parameters too."""
    if isinstance(query, BindParameter):
        words = bindparam(query.key.replace("query_", "plain_", 1), type_=Text)
        names = {":query": query.key, ":plain": words.key, ":sources": source_ids.key, ":limit": limit.key}
        sql = _STORED
        for name, key in names.items():
            sql = sql.replace(name, f":{key}")
        return text(sql).bindparams(query, words, source_ids, limit).columns(table_id=Integer, score=Float)
    return (
        text(_STORED)
        .bindparams(
            bindparam("query", query, unique=True),
            bindparam("plain", plain_words(query), unique=True),
            bindparam("sources", list(source_ids), type_=ARRAY(Integer), unique=True),
            bindparam("limit", limit, unique=True),
        )
        .columns(table_id=Integer, score=Float)
    )


def union_query(queries: Sequence[str]) -> str:
    """One to_tsquery expression matching what any of `queries` (quoted alternatives) matches."""
    terms = dict.fromkeys(part.strip() for query in queries for part in query.split("|"))
    return " | ".join(term for term in terms if term)


def multi_ranked_statement(source_ids: Any, limit: Any) -> Any:
    """(part, table_id, rank) for several to_tsquery expressions of quoted alternatives at once, each ranked as
    `ranked_statement` ranks it, `limit` tables each; `part` is the query's place. A statement built once: the
    queries come as the parameters `multi_query` (`union_query` of them), `multi_plain` (its `plain_words`) and
    `multi_plains` (each query's `plain_words`, in order), `source_ids` and `limit` are bind parameters."""
    names = {":query": "multi_query", ":plains": "multi_plains", ":plain": "multi_plain"}
    names |= {":sources": source_ids.key, ":limit": limit.key}
    sql = _MULTI
    for name, key in names.items():
        sql = sql.replace(name, f":{key}")
    words = (bindparam("multi_query", type_=Text), bindparam("multi_plain", type_=Text))
    plains = bindparam("multi_plains", type_=ARRAY(Text))
    return text(sql).bindparams(*words, plains, source_ids, limit).columns(part=Integer, table_id=Integer, rank=Float)


def given_scores(
    session: Session, keywords: Sequence[str], query: str, source_ids: Sequence[int]
) -> list[float | None]:
    """The BM25 score of `query` against each of `keywords` as a chunk would be indexed (None where it does not
    match), with the statistics of the stored chunks of the sources: for chunk texts built for one reader."""
    if not keywords:
        return []
    rows = session.execute(
        text(_GIVEN),
        {"query": query, "plain": plain_words(query), "sources": list(source_ids), "keywords": list(keywords)},
    ).all()
    scores = {int(key): float(score) for key, _, score in rows}
    return [scores.get(position) for position in range(1, len(keywords) + 1)]
