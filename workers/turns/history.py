"""Thread history as conversation context: earlier questions and answers, only what the asker may see.

An earlier answer computed for another user may hold data the current asker may not see; such an answer is left
out (its question stays, with a line saying the answer is withheld), so history can never widen access. In privacy
mode every earlier answer is left out (they quote values), and the model reads which tables it used and its SQL
without literals instead (`workers.turns.private_answers`).
"""

from __future__ import annotations

from sqlalchemy.orm import Session

from core.access.permissions import Principal
from core.access.users import UserRef
from core.store.models import Turn
from core.store.repositories import catalog as catalog_repo
from core.store.repositories import sources as source_repo
from core.store.repositories import turns as turn_repo
from workers.models.types import Message
from workers.turns.private_answers import earlier_answer

WITHHELD = "(answer withheld: it used data this user may not see)"


def _visible_to(session: Session, principal: Principal, turn: Turn, asker: UserRef) -> bool:
    """Every table the earlier answer used must be visible now (roles may have changed since, even for its asker),
    a view with everything it reads; and an answer another user got is withheld where a row filter or column mask
    applies to the asker on one of its tables, since its figures may count rows or show values the asker's own
    query would not."""
    someone_else = (turn.user_platform, turn.user_id) != asker
    for qualified in turn.tables_used:
        database, _, table = qualified.partition(".")
        schema, _, name = table.rpartition(".")
        name, schema_or_none = name or table, schema or None
        if not principal.may_see(database, name, schema_or_none):
            return False
        source = source_repo.by_name(session, database)
        row = catalog_repo.find_table(session, source.id, name, schema) if source is not None else None
        if row is not None and not principal.may_see_table(database, row):
            return False
        if someone_else and (
            principal.row_filter(database, name, schema_or_none) is not None
            or principal.may_mask(database, name, schema_or_none)
        ):
            return False
    return True


def thread_history(
    session: Session, principal: Principal, turn: Turn, asker: UserRef, *, schema_only: bool = False
) -> tuple[list[Message], list[str]]:
    """Earlier turns as alternating user/assistant messages, and the texts the asker wrote in this thread;
    `schema_only`: the turn is in privacy mode (module doc)."""
    messages: list[Message] = []
    own_texts: list[str] = []
    engines: dict[str, str | None] = {}

    def engine_of(database: str) -> str | None:
        if database not in engines:
            source = source_repo.by_name(session, database)
            engines[database] = source.engine if source is not None else None
        return engines[database]

    for earlier in turn_repo.earlier_turns(session, turn.conversation_id, turn.id):
        if not earlier.answer:
            continue
        if (earlier.user_platform, earlier.user_id) == asker:
            own_texts.append(earlier.question)
        if not _visible_to(session, principal, earlier, asker):
            answer = WITHHELD
        elif schema_only:
            answer = earlier_answer(earlier.result, engine_of)
        else:
            answer = earlier.answer
        messages.append(Message(role="user", text=earlier.question))
        messages.append(Message(role="assistant", text=answer))
    return messages, own_texts
