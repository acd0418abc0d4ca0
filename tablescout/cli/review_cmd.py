"""`tablescout review list [--json]`: what an admin should look at before it misleads others: answers someone marked
👎 (with the reason they gave) and the notes saved in channels, which everyone who may see their tables is shown.

Acts as the operator, or with `--user slack:ID` as that chat user, who must have an admin role. `--json` prints one
object: {"bad_answers": [{"turn_id", "user", "question", "answer", "reason", "at", "channel", "private"}],
"channel_notes": [{"id", "text", "author", "channel", "created_at"}]}.
"""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer
from rich.table import Table

from tablescout.cli.context import console, current_store, settings
from tablescout.cli.examples_cmd import UserOption, admin_reviewer

app = typer.Typer(help="The review queue: 👎 answers and notes saved in channels.", no_args_is_help=True)


@app.command("list")
def list_(
    user: UserOption = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=1000, help="At most this many of each.")] = 100,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object.")] = False,
) -> None:
    """List 👎 answers and channel notes, newest first."""
    from core.store.repositories import feedback as feedback_repo

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        admin_reviewer(session, config, user)
        bad: list[dict[str, Any]] = [
            {
                "turn_id": b.turn_id,
                "user": f"{b.user_platform}:{b.user_id}",
                "question": b.question,
                "answer": b.answer,
                "reason": b.reason,
                "at": b.at.isoformat(),
                "channel": b.channel_id,
                "private": b.private,
            }
            for b in feedback_repo.bad_answers(session, limit)
        ]
        notes: list[dict[str, Any]] = [
            {
                "id": n.id,
                "text": n.text,
                "author": f"{n.author_platform}:{n.author_id}",
                "channel": n.channel_id,
                "created_at": n.created_at.isoformat(),
            }
            for n in feedback_repo.channel_notes(session, limit)
        ]
    if as_json:
        typer.echo(json.dumps({"bad_answers": bad, "channel_notes": notes}, indent=2, ensure_ascii=False))
        return
    if not bad and not notes:
        console.print("Nothing to review.")
        return
    if bad:
        table = Table("turn", "user", "question", "reason", "when", title="Answers marked 👎")
        for row in bad:
            table.add_row(str(row["turn_id"]), row["user"], row["question"], row["reason"] or "", row["at"][:16])
        console.print(table)
    if notes:
        table = Table("note", "author", "channel", "text", "saved", title="Notes saved in channels")
        for row in notes:
            table.add_row(str(row["id"]), row["author"], row["channel"] or "", row["text"], row["created_at"][:16])
        console.print(table)
