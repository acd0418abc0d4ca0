"""`tablescout directory sync`: read Slack user groups and Entra ID groups into the store now (the worker also does
it every hour), so role changes take effect at the next question.

`sync --json` prints one array with an object per platform: {"platform", "synced", "groups", "users",
"memberships", "removed_groups", "removed_users", "skipped", "users_with_attributes", "attributes_skipped",
"error"}; a platform without credentials has "synced": false and the reason in "skipped"; one that failed has the
reason in "error" and the command exits 1; "attributes_skipped" says why no user attributes were read (the groups
were still synced).
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Annotated

import typer
from rich.table import Table

from tablescout.cli.context import console, current_store, settings

app = typer.Typer(help="The identity directory: chat groups that map to roles.", no_args_is_help=True)


class Platform(StrEnum):
    slack = "slack"
    teams = "teams"


@app.command("sync")
def sync(
    platform: Annotated[
        Platform | None, typer.Option("--platform", help="Sync only this platform (default: every configured one).")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON array on stdout.")] = False,
) -> None:
    """Read user groups and their members from Slack and Microsoft Entra ID (Teams) into the store."""
    # Imported here, not at the top: the directory clients load the Slack and Microsoft SDKs, which no other
    # command needs.
    from bot.directory.errors import DirectorySyncError
    from bot.directory.service import PLATFORMS, sync_directory
    from bot.directory.snapshot import SyncReport

    wanted = [platform.value] if platform is not None else list(PLATFORMS)
    config = settings()
    failure: DirectorySyncError | None = None
    with current_store(config) as store:
        try:
            reports = sync_directory(config, store, wanted)
        except DirectorySyncError as exc:
            reports, failure = exc.reports, exc
    done = {r.platform: r for r in reports}
    if as_json:
        rows = []
        for name in wanted:
            report = done.get(name)
            row = (report or SyncReport(platform=name)).as_json()
            row["synced"] = report is not None and report.skipped is None
            row["error"] = None if report is not None else str(failure)
            rows.append(row)
        typer.echo(json.dumps(rows, indent=2))
    else:
        table = Table("platform", "groups", "users", "memberships", "removed", "note")
        for name in wanted:
            report = done.get(name)
            if report is None:
                table.add_row(name, "", "", "", "", "[red]failed[/] (see below)")
            elif report.skipped is not None:
                table.add_row(name, "", "", "", "", f"skipped: {report.skipped}")
            else:
                removed = f"{report.removed_groups} groups, {report.removed_users} users"
                skipped = report.attributes_skipped
                note = "synced" + (f"; no user attributes: {skipped}" if skipped else "")
                table.add_row(name, str(report.groups), str(report.users), str(report.memberships), removed, note)
        console.print(table)
    if failure is not None:
        raise failure
