"""`tablescout examples list|approve|reject|delete`: verified examples (a question, its database and the SQL that
answered it right) proposed by the asker's 👍 in chat, reviewed by an admin before the model sees them.

Without `--user` the command acts as the operator (an admin); with `--user slack:ID` it acts as that chat user, who
must have an admin role to change anything. `approve` may edit the question or SQL first (`--question`, `--sql`)
and embeds the question for retrieval. `list --json` prints one array of {"id", "status", "database", "question",
"sql", "tables", "proposed_by", "proposed_at", "reviewed_by", "reviewed_at", "turn_id"}.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from tablescout.cli.context import console, current_store, principal_for, settings

if TYPE_CHECKING:
    from sqlalchemy.orm import Session

    from core.config.settings import Settings
    from core.store.models import VerifiedExample

app = typer.Typer(help="Verified examples: approved SQL for questions, shown to the model.", no_args_is_help=True)

UserOption = Annotated[str | None, typer.Option("--user", help="Act as slack:ID or teams:ID (default: operator).")]
STATUSES = ("proposed", "approved", "rejected")


def example_json(example: VerifiedExample) -> dict[str, Any]:
    return {
        "id": example.id,
        "status": example.status,
        "database": example.database,
        "question": example.question,
        "sql": example.sql,
        "tables": list(example.tables),
        "proposed_by": f"{example.proposed_by_platform}:{example.proposed_by}",
        "proposed_at": example.proposed_at.isoformat() if example.proposed_at else None,
        "reviewed_by": example.reviewed_by,
        "reviewed_at": example.reviewed_at.isoformat() if example.reviewed_at else None,
        "turn_id": example.turn_id,
    }


def admin_reviewer(session: Session, config: Settings, user: str | None) -> str:
    """Who reviews, as stored ("operator:login" or "slack:U…"); a chat user without an admin role is refused."""
    import getpass

    from core.errors import TablescoutError

    principal, viewer = principal_for(session, config, user)
    if viewer is None:
        return f"operator:{getpass.getuser()}"
    if not principal.is_admin:
        raise TablescoutError(f"{viewer[0]}:{viewer[1]} has no admin role; only an admin reviews examples")
    return f"{viewer[0]}:{viewer[1]}"


def _example(session: Session, example_id: int) -> VerifiedExample:
    from core.errors import NotFoundError
    from core.store.repositories import feedback as feedback_repo

    example = feedback_repo.get_example(session, example_id)
    if example is None:
        raise NotFoundError(f"there is no example #{example_id}")
    return example


@app.command("list")
def list_(
    status: Annotated[str | None, typer.Option("--status", help="proposed, approved or rejected.")] = None,
    user: UserOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array.")] = False,
) -> None:
    """List examples, oldest first (all, or those with one status)."""
    from core.errors import TablescoutError
    from core.store.repositories import feedback as feedback_repo

    if status is not None and status not in STATUSES:
        raise TablescoutError(f"--status must be one of {', '.join(STATUSES)}, not {status!r}")
    config = settings()
    with current_store(config) as store, store.transaction() as session:
        admin_reviewer(session, config, user)
        rows = [example_json(e) for e in feedback_repo.examples(session, status)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    if not rows:
        console.print("No examples.")
        return
    table = Table("id", "status", "database", "question", "sql", "proposed by")
    for row in rows:
        table.add_row(
            str(row["id"]), row["status"], row["database"], row["question"], row["sql"], str(row["proposed_by"])
        )
    console.print(table)


@app.command("approve")
def approve(
    example_id: Annotated[int, typer.Argument(help="The example's id (see `examples list`).")],
    question: Annotated[str | None, typer.Option("--question", help="Replace the question first.")] = None,
    sql: Annotated[str | None, typer.Option("--sql", help="Replace the SQL first.")] = None,
    user: UserOption = None,
) -> None:
    """Approve an example (optionally edited): from now on it is retrieved for similar questions."""
    from core.errors import TablescoutError
    from core.store.repositories import feedback as feedback_repo
    from search.encoders import embedder_for

    if question is not None and not question.strip():
        raise TablescoutError("--question is empty")
    if sql is not None and not sql.strip():
        raise TablescoutError("--sql is empty")
    config = settings()
    with current_store(config) as store, store.transaction() as session:
        reviewer = admin_reviewer(session, config, user)
        example = _example(session, example_id)
        text = question.strip() if question is not None else example.question
        changes: dict[str, Any] = {"question": text, "sql": sql.strip() if sql is not None else example.sql}
        changes["embedding"] = embedder_for(config).embed([text])[0].tolist()
        feedback_repo.review_example(session, example, "approved", reviewer, changes)
    console.print(f"Approved example #{example_id} on {example.database}", markup=False)


@app.command("reject")
def reject(
    example_id: Annotated[int, typer.Argument(help="The example's id.")],
    user: UserOption = None,
) -> None:
    """Reject an example: it is kept (so the same answer is not proposed again) but never shown."""
    from core.store.repositories import feedback as feedback_repo

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        reviewer = admin_reviewer(session, config, user)
        example = _example(session, example_id)
        feedback_repo.review_example(session, example, "rejected", reviewer)
    console.print(f"Rejected example #{example_id}", markup=False)


@app.command("delete")
def delete(
    example_id: Annotated[int, typer.Argument(help="The example's id.")],
    user: UserOption = None,
) -> None:
    """Delete an example for good."""
    from core.store.repositories import feedback as feedback_repo

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        admin_reviewer(session, config, user)
        _example(session, example_id)
        feedback_repo.delete_example(session, example_id)
    console.print(f"Deleted example #{example_id}", markup=False)
