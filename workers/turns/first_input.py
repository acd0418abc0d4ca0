"""The first input of a conversation (SPEC §4): which databases the user can query, and which they cannot.

Up to ten queryable databases, ordered by how many words they share with the question, each with its engine; the
first three carry their summary, as the user may read it (`core.cards.database_summary`), cut to 120 characters.
Databases the user may not query are named only, so the model can say the data exists without learning anything
about it. Approved verified examples of similar questions that the user may see in full follow the list
(search/examples.py), marked as reference data, not instructions.

In a Slack assistant thread the channel its user is viewing counts too: the databases that channel's questions use
(core/store/repositories/channel_usage.py), those the user may query, break ties in the list and are named as the
default when the question pins none. Only the channel Slack sent for the thread's own user is read.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.store.models import Conversation, Source, Turn
from core.store.repositories import channel_usage
from core.store.repositories import feedback as feedback_repo
from core.text.identifiers import expand_words
from search.encoders import Embedder
from search.examples import examples_for, render_examples
from search.query_text import words

LISTED = 10
SUMMARISED = 3
SUMMARY_CHARS = 120
VIEWED = 3  # databases of the viewed channel named at most

ENGINE_NAMES = {"sqlite": "SQLite", "mariadb": "MariaDB", "mysql": "MySQL", "postgresql": "PostgreSQL"}


@dataclass(frozen=True)
class DatabaseList:
    allowed: list[Source]
    forbidden: list[str]
    #: Summaries of allowed databases as the user may read them (`core.cards.database_summary.summaries_for`).
    summaries: Mapping[str, str] = field(default_factory=dict)


def engine_name(engine: str) -> str:
    return ENGINE_NAMES.get(engine, engine)


def _shared_words(question: set[str], source: Source, summary: str) -> int:
    text = " ".join([source.name, *source.aliases, summary])
    own = set(words(text))
    for label in [source.name, *source.aliases]:
        own.update(w.lower() for w in expand_words(label))
    return len(question & own)


def database_list(
    sources: Sequence[Source],
    principal: Principal,
    question: str,
    preferred: Sequence[str] = (),
    summaries: Mapping[str, str] | None = None,
) -> DatabaseList:
    """Queryable databases by words shared with the question (their names and `summaries`, as the user may read
    them), then `preferred` (the viewed channel's) first."""
    wanted = set(words(question))
    shown = dict(summaries or {})
    allowed = [s for s in sources if principal.may_see(s.name)]
    forbidden = sorted(s.name for s in sources if not principal.may_see(s.name))
    rank = {name: index for index, name in enumerate(preferred)}
    allowed.sort(key=lambda s: (-_shared_words(wanted, s, shown.get(s.name, "")), rank.get(s.name, len(rank)), s.name))
    return DatabaseList(allowed=allowed, forbidden=forbidden, summaries=shown)


def viewed_databases(session: Session, principal: Principal, conversation: Conversation, turn: Turn) -> list[str]:
    """The databases the questions of the channel the asker is viewing use (a Slack assistant thread's context),
    those the asker may query, most used first; [] anywhere else."""
    channel = channel_usage.viewed_channel(conversation, turn.user_id)
    if channel is None:
        return []
    used = channel_usage.databases_asked_about(
        session, platform=conversation.platform, workspace_id=conversation.workspace_id, channel_id=channel
    )
    return [name for name in used if principal.may_see(name)][:VIEWED]


def cut(text: str, limit: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def verified_examples(
    session: Session, principal: Principal, embedder: Embedder, question: str, listing: DatabaseList
) -> str:
    """The approved examples nearest the question, as text for the first input ("" when there are none); the
    question is embedded only when an approved example exists."""
    if not listing.allowed or not feedback_repo.any_approved(session):
        return ""
    vector = embedder.embed([question])[0].tolist()
    return render_examples(examples_for(session, principal, vector, [s.name for s in listing.allowed]))


def render_first_input(
    listing: DatabaseList, question: str, pins: Sequence[str], examples: str = "", viewed: Sequence[str] = ()
) -> str:
    lines = ["Databases you can query (most relevant first):"]
    if not listing.allowed:
        lines.append("- none: this user may not query any database")
    for index, source in enumerate(listing.allowed[:LISTED]):
        line = f"- {source.name} ({engine_name(source.engine)})"
        summary = listing.summaries.get(source.name)
        if index < SUMMARISED and summary:
            line += f": {cut(summary, SUMMARY_CHARS)}"
        lines.append(line)
    if len(listing.allowed) > LISTED:
        lines.append(f"- … and {len(listing.allowed) - LISTED} more (search_tables searches all of them)")
    if listing.forbidden:
        lines.append("Databases this user may not query: " + ", ".join(listing.forbidden))
    if pins:
        lines.append("The user pinned the search to: " + ", ".join(pins) + " (search only there).")
    elif viewed:
        lines.append(
            "The user is viewing a channel whose questions use: "
            + ", ".join(viewed)
            + " (prefer it when the question does not say which database; search elsewhere when it does not fit)."
        )
    if examples:
        lines += ["", examples]
    lines += ["", "Question:", question]
    return "\n".join(lines)
