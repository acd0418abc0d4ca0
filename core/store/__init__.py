"""The metadata store: PostgreSQL with pgvector, SQLAlchemy 2 models, repositories and migrations."""
