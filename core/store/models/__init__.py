"""All mapped tables; importing this package registers them on `Base.metadata` (Alembic relies on it)."""

from core.store.models.api_tokens import ApiToken
from core.store.models.base import Base
from core.store.models.catalog import (
    EMBEDDING_DIMENSIONS,
    TABLE_ROLES,
    CommonWord,
    JoinCandidate,
    SearchChunk,
    SearchValue,
    Source,
    SourceTable,
    TableColumn,
)
from core.store.models.chat import OutboxMessage, ProcessedEvent
from core.store.models.directory import DirectoryGroup, DirectoryUser, GroupMembership
from core.store.models.feedback import AnswerFeedback, VerifiedExample
from core.store.models.notes import Note, NoteTable
from core.store.models.turns import TURN_STATUSES, Conversation, ExecutedSql, Round, ToolCall, Turn

__all__ = [
    "EMBEDDING_DIMENSIONS",
    "TABLE_ROLES",
    "TURN_STATUSES",
    "AnswerFeedback",
    "ApiToken",
    "Base",
    "CommonWord",
    "Conversation",
    "DirectoryGroup",
    "DirectoryUser",
    "ExecutedSql",
    "GroupMembership",
    "JoinCandidate",
    "Note",
    "NoteTable",
    "OutboxMessage",
    "ProcessedEvent",
    "Round",
    "SearchChunk",
    "SearchValue",
    "Source",
    "SourceTable",
    "TableColumn",
    "ToolCall",
    "Turn",
    "VerifiedExample",
]
