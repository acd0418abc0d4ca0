"""`tablescout token create|list|revoke`: API tokens for the HTTP API and the MCP server (docs/api.md).

A token acts as one user of the synced directory (`--user slack:ID` or `teams:ID`) with that user's roles, row
filters and column masks. `create` prints the token once; only its SHA-256 is stored. `list --json` prints one
array of {"id", "user", "name", "created", "expires", "last_used", "revoked", "rate_per_minute"}; times are ISO
8601 or null. These are operator commands: whoever runs them holds the installation's store.
"""

from __future__ import annotations

import getpass
import json
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Column, Table
from rich.text import Text

from core.errors import NotFoundError
from tablescout.cli.context import console, current_store, errors, settings

if TYPE_CHECKING:
    from core.store.models import ApiToken

app = typer.Typer(help="API tokens: each acts as one directory user for the HTTP API and MCP.", no_args_is_help=True)


def token_json(row: ApiToken) -> dict[str, Any]:
    def when(value: Any) -> str | None:
        return value.isoformat() if value is not None else None

    return {
        "id": row.id,
        "user": f"{row.user_platform}:{row.user_id}",
        "name": row.name,
        "created": when(row.created_at),
        "expires": when(row.expires_at),
        "last_used": when(row.last_used_at),
        "revoked": when(row.revoked_at),
        "rate_per_minute": row.rate_per_minute,
    }


@app.command("create")
def create(
    user: Annotated[str, typer.Option("--user", help="The directory user it acts as: slack:ID or teams:ID.")],
    name: Annotated[str, typer.Option("--name", help="What the token is for (shown by `token list`).")] = "api",
    expires: Annotated[str, typer.Option("--expires", help="Lifetime: 90d, 12h, 4w, or never.")] = "90d",
    rate: Annotated[int, typer.Option("--rate", help="Requests a minute it may make (API and MCP together).")] = 60,
    as_json: Annotated[bool, typer.Option("--json", help='One JSON object, the token under "token".')] = False,
) -> None:
    """Create a token for a directory user; it is printed once and cannot be shown again."""
    from core.access.tokens import issue

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        issued = issue(
            session,
            config.file,
            user=user,
            name=name,
            expires=expires,
            rate_per_minute=rate,
            created_by=f"operator:{getpass.getuser()}",
        )
        shown = token_json(issued.row)
    if as_json:
        typer.echo(json.dumps(shown | {"token": issued.secret}))
        return
    typer.echo(issued.secret)
    expiry = f"expires {shown['expires'][:10]}" if shown["expires"] else "never expires"
    errors.print(
        f"Token #{shown['id']} for {shown['user']} ({expiry}, {rate} requests a minute). It is shown only now: "
        "keep it in a secret store. `tablescout token revoke` ends it.",
        markup=False,
        highlight=False,
    )


@app.command("list")
def list_(
    include_revoked: Annotated[bool, typer.Option("--all", help="Include revoked tokens.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
) -> None:
    """Show the tokens (never the tokens themselves): who each acts as, when it expires and was last used."""
    from core.store.repositories import api_tokens

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        rows = [token_json(r) for r in api_tokens.all_tokens(session, include_revoked=include_revoked)]
    if as_json:
        typer.echo(json.dumps(rows, indent=2))
        return
    if not rows:
        console.print("No tokens. `tablescout token create --user slack:ID` makes one.")
        return
    headers: list[str | Column] = ["id", Column("user", no_wrap=True), "name", "created", "expires"]
    headers.append(Column("last used", no_wrap=True))
    table = Table(*headers, *([Column("revoked", no_wrap=True)] if include_revoked else []))
    for r in rows:
        cells: list[str | Text] = [str(r["id"]), Text(r["user"]), Text(r["name"])]
        cells += [day(r["created"], ""), day(r["expires"], "never"), minute(r["last_used"], "never")]
        table.add_row(*cells, *([minute(r["revoked"], "")] if include_revoked else []))
    console.print(table)


def day(iso: str | None, missing: str) -> str:
    return iso[:10] if iso else missing


def minute(iso: str | None, missing: str) -> str:
    """An ISO time to the minute, as `2026-12-04 15:45` (UTC)."""
    return iso[:16].replace("T", " ") if iso else missing


@app.command("revoke")
def revoke(
    token_id: Annotated[int, typer.Argument(metavar="ID", help="Token id (see `tablescout token list`).")],
) -> None:
    """Revoke a token: the next request made with it is refused."""
    from core.store.models.base import utcnow
    from core.store.repositories import api_tokens

    config = settings()
    with current_store(config) as store, store.transaction() as session:
        row = api_tokens.revoke(session, token_id, utcnow())
        if row is None:
            raise NotFoundError(f"there is no token #{token_id}; `tablescout token list --all` shows them")
        user = f"{row.user_platform}:{row.user_id}"
    console.print(f"Revoked token #{token_id} ({user}).", markup=False)
