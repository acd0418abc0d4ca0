"""Initial schema: the vector extension and every table of the metadata store.

Revision ID: 0001
Revises:
Create Date: 2026-11-29 20:23:11.551114
"""

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table(
        "conversations",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("workspace_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("channel_id", sa.String(length=128), nullable=False),
        sa.Column("thread_id", sa.String(length=128), server_default="", nullable=False),
        sa.Column("private", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("reference", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_conversations")),
        sa.UniqueConstraint(
            "platform",
            "workspace_id",
            "channel_id",
            "thread_id",
            name=op.f("uq_conversations_platform_workspace_id_channel_id_thread_id"),
        ),
    )
    op.create_table(
        "directory_groups",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("workspace_id", sa.String(length=128), nullable=True),
        sa.Column("group_id", sa.String(length=128), nullable=False),
        sa.Column("handle", sa.String(length=128), nullable=True),
        sa.Column("name", sa.String(length=256), nullable=True),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_directory_groups")),
        sa.UniqueConstraint("platform", "group_id", name=op.f("uq_directory_groups_platform_group_id")),
    )
    op.create_table(
        "directory_users",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("workspace_id", sa.String(length=128), nullable=True),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("display_name", sa.String(length=256), nullable=True),
        sa.Column("email", sa.String(length=320), nullable=True),
        sa.Column("deactivated", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("synced_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_directory_users")),
        sa.UniqueConstraint("platform", "user_id", name=op.f("uq_directory_users_platform_user_id")),
    )
    op.create_table(
        "notes",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("author_platform", sa.String(length=20), nullable=False),
        sa.Column("author_id", sa.String(length=128), nullable=False),
        sa.Column("workspace_id", sa.String(length=128), nullable=True),
        sa.Column("channel_id", sa.String(length=128), nullable=True),
        sa.Column("thread_id", sa.String(length=128), nullable=True),
        sa.Column("private", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("edited_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("deleted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("tsv", postgresql.TSVECTOR(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_notes")),
    )
    op.create_index("ix_notes_tsv", "notes", ["tsv"], unique=False, postgresql_using="gin")
    op.create_table(
        "sources",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=63), nullable=False),
        sa.Column("aliases", sa.ARRAY(sa.String(length=63)), server_default="{}", nullable=False),
        sa.Column("engine", sa.String(length=40), nullable=False),
        sa.Column("engine_version", sa.String(length=200), nullable=True),
        sa.Column("url_ref", sa.Text(), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("analysed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_sources")),
        sa.UniqueConstraint("name", name=op.f("uq_sources_name")),
    )
    op.create_table(
        "group_memberships",
        sa.Column("group_id", sa.Integer(), nullable=False),
        sa.Column("user_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["group_id"],
            ["directory_groups.id"],
            name=op.f("fk_group_memberships_group_id_directory_groups"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["user_id"],
            ["directory_users.id"],
            name=op.f("fk_group_memberships_user_id_directory_users"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("group_id", "user_id", name=op.f("pk_group_memberships")),
    )
    op.create_index(op.f("ix_group_memberships_user_id"), "group_memberships", ["user_id"], unique=False)
    op.create_table(
        "source_tables",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("schema_name", sa.String(length=128), server_default="", nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("role", sa.String(length=20), server_default="live", nullable=False),
        sa.Column("copy_of_id", sa.Integer(), nullable=True),
        sa.Column("copy_evidence", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("visible", sa.Boolean(), server_default="true", nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=True),
        sa.Column("row_count_exact", sa.Boolean(), server_default="false", nullable=False),
        sa.Column("card", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("card_text", sa.Text(), nullable=True),
        sa.Column("fingerprint", sa.String(length=64), nullable=True),
        sa.Column("skipped_reason", sa.Text(), nullable=True),
        sa.Column("analysed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("invisible_since", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.CheckConstraint(
            "role IN ('live', 'backup', 'draft', 'staging', 'snapshot', 'partition', 'log', 'view')",
            name=op.f("ck_source_tables_role"),
        ),
        sa.ForeignKeyConstraint(
            ["copy_of_id"],
            ["source_tables.id"],
            name=op.f("fk_source_tables_copy_of_id_source_tables"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_source_tables_source_id_sources"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_source_tables")),
        sa.UniqueConstraint(
            "source_id", "schema_name", "name", name=op.f("uq_source_tables_source_id_schema_name_name")
        ),
    )
    op.create_index(op.f("ix_source_tables_source_id"), "source_tables", ["source_id"], unique=False)
    op.create_table(
        "turns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("conversation_id", sa.Integer(), nullable=False),
        sa.Column("user_platform", sa.String(length=20), nullable=False),
        sa.Column("user_id", sa.String(length=128), nullable=False),
        sa.Column("status", sa.String(length=20), server_default="queued", nullable=False),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("pins", sa.ARRAY(sa.String(length=63)), server_default="{}", nullable=False),
        sa.Column("answer", sa.Text(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("lease_until", sa.DateTime(timezone=True), nullable=True),
        sa.Column("usage", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.Column("queued_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("first_model_call_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "status IN ('queued', 'running', 'answered', 'partial', 'failed')", name=op.f("ck_turns_status")
        ),
        sa.ForeignKeyConstraint(
            ["conversation_id"],
            ["conversations.id"],
            name=op.f("fk_turns_conversation_id_conversations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_turns")),
    )
    op.create_index(op.f("ix_turns_conversation_id"), "turns", ["conversation_id"], unique=False)
    op.create_table(
        "join_candidates",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("source_id", sa.Integer(), nullable=False),
        sa.Column("from_table_id", sa.Integer(), nullable=False),
        sa.Column("from_columns", sa.ARRAY(sa.String(length=128)), nullable=False),
        sa.Column("to_table_id", sa.Integer(), nullable=False),
        sa.Column("to_columns", sa.ARRAY(sa.String(length=128)), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("basis", sa.Text(), nullable=False),
        sa.Column("confidence", sa.Float(), nullable=False),
        sa.CheckConstraint("kind IN ('declared', 'inferred')", name=op.f("ck_join_candidates_kind")),
        sa.CheckConstraint("confidence >= 0 AND confidence <= 1", name=op.f("ck_join_candidates_confidence")),
        sa.ForeignKeyConstraint(
            ["from_table_id"],
            ["source_tables.id"],
            name=op.f("fk_join_candidates_from_table_id_source_tables"),
            ondelete="CASCADE",
        ),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_join_candidates_source_id_sources"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["to_table_id"],
            ["source_tables.id"],
            name=op.f("fk_join_candidates_to_table_id_source_tables"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_join_candidates")),
    )
    op.create_index(op.f("ix_join_candidates_from_table_id"), "join_candidates", ["from_table_id"], unique=False)
    op.create_index(op.f("ix_join_candidates_source_id"), "join_candidates", ["source_id"], unique=False)
    op.create_index(op.f("ix_join_candidates_to_table_id"), "join_candidates", ["to_table_id"], unique=False)
    op.create_table(
        "note_tables",
        sa.Column("note_id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["note_id"], ["notes.id"], name=op.f("fk_note_tables_note_id_notes"), ondelete="CASCADE"
        ),
        sa.ForeignKeyConstraint(
            ["table_id"], ["source_tables.id"], name=op.f("fk_note_tables_table_id_source_tables"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("note_id", "table_id", name=op.f("pk_note_tables")),
    )
    op.create_table(
        "outbox",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("kind", sa.String(length=20), nullable=False),
        sa.Column("payload", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("status", sa.String(length=20), server_default="pending", nullable=False),
        sa.Column("attempts", sa.Integer(), server_default="0", nullable=False),
        sa.Column("last_error", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint("status IN ('pending', 'sent', 'failed')", name=op.f("ck_outbox_status")),
        sa.ForeignKeyConstraint(["turn_id"], ["turns.id"], name=op.f("fk_outbox_turn_id_turns"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_outbox")),
        sa.UniqueConstraint("turn_id", "kind", name=op.f("uq_outbox_turn_id_kind")),
    )
    op.create_table(
        "processed_events",
        sa.Column("platform", sa.String(length=20), nullable=False),
        sa.Column("event_id", sa.String(length=256), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("received_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["turn_id"], ["turns.id"], name=op.f("fk_processed_events_turn_id_turns"), ondelete="SET NULL"
        ),
        sa.PrimaryKeyConstraint("platform", "event_id", name=op.f("pk_processed_events")),
    )
    op.create_table(
        "rounds",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("model", sa.String(length=200), nullable=False),
        sa.Column("stop_reason", sa.String(length=40), nullable=True),
        sa.Column("text", sa.Text(), nullable=True),
        sa.Column("input_tokens", sa.Integer(), nullable=True),
        sa.Column("output_tokens", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("finished_at", sa.DateTime(timezone=True), nullable=True),
        sa.ForeignKeyConstraint(["turn_id"], ["turns.id"], name=op.f("fk_rounds_turn_id_turns"), ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_rounds")),
        sa.UniqueConstraint("turn_id", "ordinal", name=op.f("uq_rounds_turn_id_ordinal")),
    )
    op.create_index(op.f("ix_rounds_turn_id"), "rounds", ["turn_id"], unique=False)
    op.create_table(
        "search_chunks",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(length=10), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("text", sa.Text(), nullable=False),
        sa.Column("embedding", pgvector.sqlalchemy.vector.VECTOR(dim=384), nullable=True),
        sa.Column("tsv", postgresql.TSVECTOR(), nullable=False),
        sa.CheckConstraint("kind IN ('head', 'columns')", name=op.f("ck_search_chunks_kind")),
        sa.ForeignKeyConstraint(
            ["table_id"], ["source_tables.id"], name=op.f("fk_search_chunks_table_id_source_tables"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_search_chunks")),
        sa.UniqueConstraint("table_id", "kind", "ordinal", name=op.f("uq_search_chunks_table_id_kind_ordinal")),
    )
    op.create_index(op.f("ix_search_chunks_table_id"), "search_chunks", ["table_id"], unique=False)
    op.create_index("ix_search_chunks_tsv", "search_chunks", ["tsv"], unique=False, postgresql_using="gin")
    op.create_table(
        "table_columns",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("table_id", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("data_type", sa.String(length=200), nullable=False),
        sa.Column("nullable", sa.Boolean(), nullable=False),
        sa.Column("key_role", sa.String(length=20), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("profile", postgresql.JSONB(astext_type=sa.Text()), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"], ["source_tables.id"], name=op.f("fk_table_columns_table_id_source_tables"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_table_columns")),
        sa.UniqueConstraint("table_id", "name", name=op.f("uq_table_columns_table_id_name")),
    )
    op.create_index(op.f("ix_table_columns_table_id"), "table_columns", ["table_id"], unique=False)
    op.create_table(
        "tool_calls",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("round_id", sa.Integer(), nullable=False),
        sa.Column("ordinal", sa.Integer(), nullable=False),
        sa.Column("tool", sa.String(length=64), nullable=False),
        sa.Column("arguments", postgresql.JSONB(astext_type=sa.Text()), nullable=False),
        sa.Column("result_text", sa.Text(), nullable=True),
        sa.Column("result_chars", sa.Integer(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("duration_ms", sa.Double(), nullable=True),
        sa.ForeignKeyConstraint(
            ["round_id"], ["rounds.id"], name=op.f("fk_tool_calls_round_id_rounds"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_tool_calls")),
        sa.UniqueConstraint("round_id", "ordinal", name=op.f("uq_tool_calls_round_id_ordinal")),
    )
    op.create_index(op.f("ix_tool_calls_round_id"), "tool_calls", ["round_id"], unique=False)
    op.create_table(
        "executed_sql",
        sa.Column("id", sa.Integer(), nullable=False),
        sa.Column("turn_id", sa.Integer(), nullable=True),
        sa.Column("tool_call_id", sa.Integer(), nullable=True),
        sa.Column("source_id", sa.Integer(), nullable=True),
        sa.Column("user_platform", sa.String(length=20), nullable=True),
        sa.Column("user_id", sa.String(length=128), nullable=True),
        sa.Column("sql", sa.Text(), nullable=False),
        sa.Column("status", sa.String(length=20), nullable=False),
        sa.Column("row_count", sa.Integer(), nullable=True),
        sa.Column("truncated", sa.Boolean(), nullable=False),
        sa.Column("duration_ms", sa.Double(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("executed_at", sa.DateTime(timezone=True), server_default=sa.text("now()"), nullable=False),
        sa.ForeignKeyConstraint(
            ["source_id"], ["sources.id"], name=op.f("fk_executed_sql_source_id_sources"), ondelete="SET NULL"
        ),
        sa.ForeignKeyConstraint(
            ["tool_call_id"],
            ["tool_calls.id"],
            name=op.f("fk_executed_sql_tool_call_id_tool_calls"),
            ondelete="SET NULL",
        ),
        sa.ForeignKeyConstraint(
            ["turn_id"], ["turns.id"], name=op.f("fk_executed_sql_turn_id_turns"), ondelete="CASCADE"
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_executed_sql")),
    )
    op.create_index(op.f("ix_executed_sql_turn_id"), "executed_sql", ["turn_id"], unique=False)


def downgrade() -> None:
    op.drop_index(op.f("ix_executed_sql_turn_id"), table_name="executed_sql")
    op.drop_table("executed_sql")
    op.drop_index(op.f("ix_tool_calls_round_id"), table_name="tool_calls")
    op.drop_table("tool_calls")
    op.drop_index(op.f("ix_table_columns_table_id"), table_name="table_columns")
    op.drop_table("table_columns")
    op.drop_index("ix_search_chunks_tsv", table_name="search_chunks", postgresql_using="gin")
    op.drop_index(op.f("ix_search_chunks_table_id"), table_name="search_chunks")
    op.drop_table("search_chunks")
    op.drop_index(op.f("ix_rounds_turn_id"), table_name="rounds")
    op.drop_table("rounds")
    op.drop_table("processed_events")
    op.drop_table("outbox")
    op.drop_table("note_tables")
    op.drop_index(op.f("ix_join_candidates_to_table_id"), table_name="join_candidates")
    op.drop_index(op.f("ix_join_candidates_source_id"), table_name="join_candidates")
    op.drop_index(op.f("ix_join_candidates_from_table_id"), table_name="join_candidates")
    op.drop_table("join_candidates")
    op.drop_index(op.f("ix_turns_conversation_id"), table_name="turns")
    op.drop_table("turns")
    op.drop_index(op.f("ix_source_tables_source_id"), table_name="source_tables")
    op.drop_table("source_tables")
    op.drop_index(op.f("ix_group_memberships_user_id"), table_name="group_memberships")
    op.drop_table("group_memberships")
    op.drop_table("sources")
    op.drop_index("ix_notes_tsv", table_name="notes", postgresql_using="gin")
    op.drop_table("notes")
    op.drop_table("directory_users")
    op.drop_table("directory_groups")
    op.drop_table("conversations")
    op.execute("DROP EXTENSION IF EXISTS vector")
