"""An answer's whole result as a CSV download, for surfaces that cannot attach a file to a message (SPEC §8).

A Teams bot cannot put a file in a channel message, so the Teams card shows as many rows as fit and links the rest:
`GET /files/{file_key}/result-{n}.csv` on the bot server answers the n-th result of that answer as CSV. The link is
what grants access, like a Slack file shared in the thread: the answer's `file_key` (`core.answer.model.Answer`) is
its turn id and a random part, so a link cannot be guessed from a turn id, and it works for `LINK_DAYS` days after
the answer. The rows are the ones the asker's query returned, row filters and column masks applied; nothing else is
served. A wrong, expired or unknown link gets 404 with one plain sentence, whatever the reason, so a probe learns
nothing.

The link's base is `TABLESCOUT_PUBLIC_URL` when set, else the address the platform used to reach this server (its
Host, or X-Forwarded-Host/-Proto behind a proxy), kept with the conversation reference when the message arrived.
"""

from __future__ import annotations

import asyncio
import csv
import hmac
import io
import logging
import re
from concurrent.futures import Executor
from datetime import UTC, datetime, timedelta
from typing import Any

from aiohttp import web

from core.answer.model import ResultTable
from core.config.settings import Settings
from core.store.database import Store
from core.store.repositories import turns as turn_repo

log = logging.getLogger(__name__)

ROUTE = "/files/{file_key:[0-9]{1,18}-[A-Za-z0-9_-]{16,64}}/result-{number:[0-9]{1,3}}.csv"
LINK_DAYS = 30
#: Where the base URL travels in a stored conversation reference.
REFERENCE_KEY = "tablescout_files_url"
GONE = "This download link is not valid, or it has expired. Ask the question again for a new one."
_SLUG = re.compile(r"[^A-Za-z0-9_-]+")


def csv_cell(value: Any) -> str:
    """A result cell in the CSV export: the value itself, for a spreadsheet to format (NULL is an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def result_csv(run: ResultTable) -> bytes:
    """The result's columns and every fetched row as UTF-8 CSV (with a byte order mark, so spreadsheets read it)."""
    buffer = io.StringIO()
    writer = csv.writer(buffer)
    writer.writerow([str(c) for c in run.columns])
    for row in run.rows:
        writer.writerow([csv_cell(v) for v in row])
    return ("\ufeff" + buffer.getvalue()).encode("utf-8")


def file_name(run: ResultTable, number: int) -> str:
    """`erp-result-2.csv`: the database and the result's number in the answer."""
    slug = _SLUG.sub("-", run.database or "result").strip("-") or "result"
    return f"{slug}-result-{number}.csv"


def file_link(base_url: str, file_key: str, number: int) -> str:
    """The download link of result `number` (from 1) of the answer whose `file_key` this is."""
    return f"{base_url.rstrip('/')}/files/{file_key}/result-{number}.csv"


def public_base(request: web.Request, settings: Settings) -> str:
    """This server's address as the platform reached it: TABLESCOUT_PUBLIC_URL when set, else the request's."""
    if settings.public_url:
        return settings.public_url.rstrip("/")
    proto = request.headers.get("X-Forwarded-Proto", request.scheme).split(",")[0].strip() or "https"
    host = request.headers.get("X-Forwarded-Host", request.host).split(",")[0].strip()
    return f"{proto}://{host}"


def served_file(store: Store, file_key: str, number: int, now: datetime | None = None) -> tuple[str, bytes]:
    """The file name and CSV of result `number` of the answer `file_key` names, or LookupError when the link does
    not hold."""
    turn_id = int(file_key.partition("-")[0])
    with store.transaction() as session:
        found = turn_repo.finished_answer(session, turn_id)
    if found is None:
        raise LookupError(f"turn {turn_id} is unknown or unfinished")
    answer, finished = found
    if not answer.file_key or not hmac.compare_digest(answer.file_key.encode(), file_key.encode()):
        raise LookupError(f"wrong key for turn {turn_id}")
    if (now or datetime.now(UTC)) - finished > timedelta(days=LINK_DAYS):
        raise LookupError(f"the link of turn {turn_id} expired")
    if not 1 <= number <= len(answer.results) or not answer.results[number - 1].succeeded:
        raise LookupError(f"turn {turn_id} has no result {number}")
    run = answer.results[number - 1]
    return file_name(run, number), result_csv(run)


class ResultFiles:
    """The aiohttp handler of `ROUTE`, reading the store in `executor` (never on the event loop)."""

    def __init__(self, store: Store, executor: Executor) -> None:
        self.store = store
        self.executor = executor

    async def __call__(self, request: web.Request) -> web.Response:
        file_key, number = request.match_info["file_key"], int(request.match_info["number"])
        loop = asyncio.get_running_loop()
        try:
            name, content = await loop.run_in_executor(self.executor, served_file, self.store, file_key, number)
        except LookupError as exc:
            log.info("result file refused: %s", exc)
            return web.Response(status=404, text=GONE, content_type="text/plain")
        return web.Response(
            body=content,
            content_type="text/csv",
            charset="utf-8",
            headers={
                "Content-Disposition": f'attachment; filename="{name}"',
                "Cache-Control": "private, no-store",
                "X-Content-Type-Options": "nosniff",
            },
        )
