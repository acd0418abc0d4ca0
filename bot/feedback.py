"""👍/👎 on answers, for every chat surface: a click is stored per turn and user (last click wins), a 👎 may get a
reason, and a 👍 from the person who asked, on an answer whose SQL ran, proposes that SQL as a verified example
for an admin to review (`tablescout examples`, or in chat: `review_example` below, which records the decision
with the same repository functions and reviewer form as the command). The chat adapters find the turn from the
answer message they were clicked on; nothing in a click payload names a turn directly.

Who reviews in chat: a chat user with an admin role who may see every table the example reads (the example shows
its question and SQL); `example_reviewers` finds the Slack ones a new proposal is sent to, from the synced
directory groups that map to an admin role (never everyone through a default role).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from sqlalchemy.orm import Session

from core.access.permissions import Principal, resolve_principal
from core.config.file import ConfigFile
from core.config.settings import Settings
from core.store.models import Turn, VerifiedExample
from core.store.repositories import directory
from core.store.repositories import feedback as feedback_repo
from core.store.repositories.turns import answer_of

RATINGS = frozenset({"good", "bad"})
REASON_LIMIT = 2000  # characters of a 👎 reason that are kept
#: A new proposal is sent to at most this many admins.
MAX_REVIEWERS = 20
DECISIONS = {"approve": "approved", "reject": "rejected"}


@dataclass(frozen=True)
class Clicked:
    """What a click did: the turn it rated, and the example it proposed (None when it proposed none); `proposed`
    when this click made the proposal (an earlier 👍 of the same answer had not)."""

    turn_id: int
    rating: str
    example_id: int | None = None
    proposed: bool = False


def answer_clicked(
    session: Session, *, platform: str, channel_id: str, message_id: str, user_id: str, rating: str
) -> Clicked | None:
    """Record `user_id`'s `rating` of the answer `message_id`; None when the message is no answer of ours or the
    rating is unknown."""
    if rating not in RATINGS or not user_id:
        return None
    turn = feedback_repo.turn_for_message(session, platform, channel_id, message_id)
    if turn is None:
        return None
    feedback_repo.record(session, turn.id, platform, user_id, rating)
    example_id, proposed = None, False
    if rating == "good" and turn.user_platform == platform and turn.user_id == user_id:
        earlier = feedback_repo.example_for_turn(session, turn.id)
        example_id = propose_example(session, turn)
        proposed = earlier is None and example_id is not None
    return Clicked(turn.id, rating, example_id, proposed)


def reason_given(session: Session, *, turn_id: int, platform: str, user_id: str, reason: str) -> bool:
    """Attach `reason` to the user's 👎 of the turn; False when they have none (or the reason is empty)."""
    text = reason.strip()[:REASON_LIMIT]
    return bool(text) and feedback_repo.set_reason(session, turn_id, platform, user_id, text)


def propose_example(session: Session, turn: Turn) -> int | None:
    """The turn's last successful SQL as a proposed example (once per turn); None when no SQL of it ran."""
    existing = feedback_repo.example_for_turn(session, turn.id)
    if existing is not None:
        return existing.id
    answer = answer_of(turn)
    run = next((r for r in reversed(answer.results) if r.succeeded and r.sql and r.database), None)
    if run is None:
        return None
    database = run.database
    prefix = database + "."
    tables = [t[len(prefix) :] for t in turn.tables_used or [] if t.startswith(prefix)]
    if not tables:
        return None
    example = feedback_repo.add_example(
        session,
        turn_id=turn.id,
        question=turn.question,
        database=database,
        sql=run.sql,
        tables=tables,
        platform=turn.user_platform,
        user_id=turn.user_id,
    )
    return example.id


def question_embedder(settings: Settings) -> Callable[[str], list[float]]:
    """What `review_example` embeds an approved example's question with: the encoder table search uses (so the
    example is retrieved in the same vector space), loaded on the first approval rather than here."""

    def embed(text: str) -> list[float]:
        from search.encoders import embedder_for

        return [float(v) for v in embedder_for(settings).embed([text])[0]]

    return embed


def may_review(principal: Principal, example: VerifiedExample) -> bool:
    """An admin who may see every table the example reads (so its question and SQL may be shown to them)."""
    return principal.is_admin and all(
        principal.may_see(example.database, table, schema or None)
        for schema, _, table in (name.rpartition(".") for name in example.tables)
    )


def example_reviewers(session: Session, config: ConfigFile, platform: str, example: VerifiedExample) -> list[str]:
    """The chat users of `platform` who review `example`: members of directory groups mapped to an admin role, not
    deactivated, who may see all it reads; at most MAX_REVIEWERS, by user id."""
    admin_roles = {name for name, role in config.roles.items() if role.admin}
    wanted = [m for m in config.groups if m.platform == platform and admin_roles & set(m.roles)]
    if not wanted:
        return []
    candidates: list[str] = []
    for member in directory.active_memberships(session, platform):
        for mapping in wanted:
            named = mapping.group.removeprefix("@").casefold() == (member.handle or "").casefold()
            matches = mapping.group == member.group_id or (mapping.group.startswith("@") and named)
            if matches and member.user_id not in candidates:
                candidates.append(member.user_id)
    reviewers = [u for u in candidates if may_review(resolve_principal(session, config, platform, u), example)]
    return reviewers[:MAX_REVIEWERS]


@dataclass(frozen=True)
class Reviewed:
    """What a chat review did: `approved`/`rejected`; `refused` (no admin role, or the example reads a table the
    user may not see); `missing` (deleted meanwhile); `already` (reviewed before: `status` and `reviewed_by` say
    how)."""

    outcome: Literal["approved", "rejected", "refused", "missing", "already"]
    example_id: int
    database: str | None = None
    status: str | None = None
    reviewed_by: str | None = None


def review_example(
    session: Session,
    config: ConfigFile,
    *,
    platform: str,
    user_id: str,
    example_id: int,
    decision: str,
    embed: Callable[[str], Sequence[float]],
) -> Reviewed:
    """`decision` ("approve" or "reject") on a proposed example by chat user `user_id`, recorded as
    `tablescout examples approve|reject --user PLATFORM:ID` records it (approving embeds the question with `embed`
    for retrieval). An example reviewed before is left as it is."""
    status = DECISIONS.get(decision)
    if status is None:
        raise ValueError(f"unknown decision {decision!r}")
    principal = resolve_principal(session, config, platform, user_id)
    if not principal.is_admin:
        return Reviewed("refused", example_id)
    example = feedback_repo.get_example(session, example_id)
    if example is None:
        return Reviewed("missing", example_id)
    if not may_review(principal, example):
        return Reviewed("refused", example_id)
    if example.status != "proposed":
        return Reviewed("already", example_id, example.database, example.status, example.reviewed_by)
    changes = {"embedding": list(embed(example.question))} if status == "approved" else None
    feedback_repo.review_example(session, example, status, f"{platform}:{user_id}", changes)
    return Reviewed("approved" if status == "approved" else "rejected", example_id, example.database, status)
