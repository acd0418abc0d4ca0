"""What the HTTP API and the MCP tools take and return, as pydantic models: requests are validated by them, and
the OpenAPI document (`api.openapi`) is generated from them."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from core.answer.model import Answer

#: A thread id a client may choose: letters, digits and `._:-`, as chat platforms' own ids are.
THREAD_PATTERN = r"^[A-Za-z0-9._:-]{1,100}$"
MAX_QUESTION_CHARS = 4000
TurnStatus = Literal["queued", "running", "answered", "partial", "failed"]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ErrorBody(BaseModel):
    """Every 4xx and 5xx answer of the API."""

    error: str = Field(description="What was wrong, in one sentence meant for a person.")
    code: str = Field(description="A stable machine-readable kind: unauthorized, forbidden, not_found, bad_request, …")


class AskRequest(Strict):
    question: str = Field(min_length=1, max_length=MAX_QUESTION_CHARS, description="The question, in business words.")
    databases: list[str] = Field(
        default_factory=list, max_length=20, description="Pin the search to these databases (names or aliases)."
    )
    thread_id: str | None = Field(
        default=None,
        pattern=THREAD_PATTERN,
        description="Continue this conversation (the thread_id of an earlier turn); a new one when omitted.",
    )


class TurnView(BaseModel):
    """A turn: queued or running, then finished with its answer."""

    turn_id: int
    thread_id: str = Field(description="Pass it back as thread_id to ask a follow-up in the same conversation.")
    status: TurnStatus
    question: str
    answer: Answer | None = Field(
        default=None, description="The typed answer, once the status is answered, partial or failed."
    )

    def to_json(self) -> dict[str, Any]:
        shown = self.model_dump(mode="json", by_alias=True, exclude={"answer"})
        shown["answer"] = None if self.answer is None else public_answer(self.answer)
        return shown


def public_answer(answer: Answer) -> dict[str, Any]:
    """The answer as clients read it: its JSON without the guided path's internal trace and without the path of the
    chart's image on the worker (the chart's Vega-Lite spec is there to draw it again)."""
    shown = answer.to_json()
    shown.pop("guided", None)
    if isinstance(shown.get("chart"), dict):
        shown["chart"].pop("image", None)
    return shown


class Searched(BaseModel):
    databases: list[str]
    count: int
    total: int


class SearchView(BaseModel):
    """The same JSON as `tablescout search --json`."""

    searched: Searched
    candidates: list[dict[str, Any]] = Field(
        description="Best first: database, schema, table, score, role, copy_of, matched_by, and the card's head, "
        "codes, columns to watch, joins and notes."
    )
    denied_tables: list[str] = Field(description="Tables that would have been shown but the caller may not see.")
    parts: list[dict[str, str]] = Field(description="What the question mentions, searched beside it.")


class NoteView(BaseModel):
    id: int
    text: str
    author: str
    created_at: str


class CardView(BaseModel):
    """A table card as the caller may see it: masked columns without values, hidden ones left out."""

    database: str
    table: str
    card: dict[str, Any] = Field(description="The card as `tablescout card --json` prints it for this user.")
    text: str = Field(description="The card as the answering model reads it.")
    notes: list[NoteView]


class NoteRequest(Strict):
    database: str = Field(min_length=1, max_length=63)
    tables: list[str] = Field(min_length=1, max_length=20, description="Table names, optionally schema.table.")
    text: str = Field(min_length=1, max_length=2000, description="What to remember about the table(s).")
    private: bool = Field(default=False, description="Only the token's user sees the note.")


class NoteSaved(BaseModel):
    id: int
    database: str
    tables: list[str]
    private: bool


class SqlResult(BaseModel):
    """One read-only statement: its rows, or why it was refused or failed."""

    database: str
    sql: str
    status: Literal["ok", "refused", "denied", "error", "timeout"]
    columns: list[str] = Field(default_factory=list)
    rows: list[list[Any]] = Field(default_factory=list)
    truncated: bool = Field(default=False, description="More rows exist; count or aggregate in SQL.")
    error: str | None = None
    policies: str | None = Field(default=None, description="Row filters and column masks applied for this user.")


class DatabaseView(BaseModel):
    name: str
    engine: str
    summary: str | None = Field(description="What the database holds, as this user may see it; None before analysis.")
