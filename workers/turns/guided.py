"""The guided path for small models (SPEC §4): from one search to one SQL statement, with bounded repair.

A small local model writes good SQL when it sees a small, familiar schema, and loses its way in a loop of tool
rounds. So for such a model (the `local:` provider, or any turn where TABLESCOUT_TURN_PATH=guided) a question turn
runs as a fixed sequence instead of the agentic loop:
1. **Selection** without model rounds: one search with every signal (nothing pinned unless the turn pins databases;
   the same permission filters and copy rule as everywhere), the candidates of the best database with the join
   tables connecting them, and at most one short constrained call in which the model picks among them (skipped when
   the candidates are few or the scores leave no doubt: `workers.turns.selection`).
2. **One SQL call** on the compact schema of just those tables (`workers.turns.compact_schema`), with the values
   the question names in another script linked (`workers.turns.value_linking`), the idioms of the question's kind
   when the database has no approved examples, and, for the local model, a grammar that admits only the shown
   tables and columns (`workers.sql.sql_grammar`); a join the statement does not use and the question does not ask
   for is taken out before it runs (`workers.turns.join_pruning`). When the statement ran, more candidates are
   sampled for the same prompt until two agree, and the result most agree on is kept (`workers.turns.candidates`).
3. **Bounded repair**: on an error, one more call with the error and run_sql's hints; on an empty result, one
   re-search with the values the SQL filtered on as extra terms, and one more SQL call; then an honest answer.
4. **Checks before the answer goes out** (`workers.turns.guided_checks`): the statement against the question
   (shape, codes, values, dates, copies); literals rewritten without a model call, one repair for the rest, and a
   doubt that remains said in one line with the status `partial`.
5. When the best candidates of two databases tie on the same entity, the answer asks the user which one they mean,
   in business terms (the databases and what they hold), and runs no SQL.
6. The answer is written from the rows: the number in it is the number the SQL returned.
SQL runs through the run_sql tool and so through the permission-checked SQL service, and every round (one model
call), tool call and statement is stored as in the loop, so `ask --json` and the chat adapters see the same shapes.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from core.config.settings import Settings
from search.service import SearchRequest, search_tables
from workers.models.types import Message, ModelProvider, ModelReply, ToolCallRequest
from workers.sql.guard import dialect_for
from workers.tools.base import (
    SqlRecord,
    queryable_source,
    viewer_reads,
)
from workers.tools.copy_rule import mentions
from workers.tools.toolbox import StepCallback
from workers.turns.answer_checks import Doubt, Verdict, check
from workers.turns.candidates import Agreement, Used, agreed
from workers.turns.flag_notes import flag_notes
from workers.turns.guided_answers import (
    NO_PERMISSION,
    NOTHING_FOUND,
    GuidedAnswer,
    ambiguity_question,
    could_not,
    no_rows,
    rows_answer,
    sql_refused,
)
from workers.turns.guided_checks import Checked, CheckSteps, checked, doubt_line, without_join
from workers.turns.guided_run import (
    GuidedTurn,
    OutOfTime,
    call_model,
    record_round,
    record_search_only,
    repair_messages,
    timed,
)
from workers.turns.guided_sql import (
    SYSTEM,
    filter_values,
    is_empty,
    sql_in_text,
    sql_prompt,
    sql_spec,
)
from workers.turns.guided_tables import (
    grown,
    join_misses,
    link_values,
    load_schema,
    missing_column_fix,
    probes_for,
    read_tables,
    search_text,
)
from workers.turns.join_drops import DroppedJoin
from workers.turns.result_codes import result_meanings
from workers.turns.selection import Selection, choose, with_neighbours
from workers.turns.state import TurnEnvironment, TurnRun
from workers.turns.statement_fixes import fixed_statement
from workers.turns.table_pick import pick_prompt, pick_spec, picked_tables

log = logging.getLogger(__name__)

__all__ = ["OutOfTime", "answer_guided", "uses_guided"]

#: Candidates one search returns (across every database searched).
SEARCH_K = 10
#: The sampling temperature of the first call of each step (choosing tables, writing SQL): the model's most likely
#: reply. A repair call (after an error, or after an empty result with the re-search's tables) keeps the service's
#: own sampling, so that it tries another statement, not the same again.
FIRST_TEMPERATURE = 0.0
#: A question of at most this many words that follows an earlier one in the thread ("and in 2023?") is searched
#: as one text with the earlier question, and the SQL call sees both, unless the earlier question asked about a
#: copy this one does not ask for: what it said (the snapshot's month) describes the copy, which is not carried.
FOLLOW_UP_WORDS = 8


def uses_guided(settings: Settings, provider: ModelProvider, intent: str) -> bool:
    """Whether a turn of `intent` takes the guided path: question turns, for small models unless the setting says
    otherwise (TABLESCOUT_TURN_PATH: auto, guided or loop)."""
    if intent != "question" or settings.turn_path == "loop":
        return False
    return settings.turn_path == "guided" or provider.small_model


def answer_guided(
    env: TurnEnvironment, run: TurnRun, progress: Callable[[str], None], step: StepCallback | None
) -> tuple[GuidedAnswer, dict[str, Any]]:
    """Answer the turn's question on the guided path: the answer, and what the path did (for the turn's result)."""
    guided = GuidedTurn(env, run, progress, step)
    answer = _answer(guided, _question(run))
    kept = ("tables", "databases", "candidates", "repaired", "pruned", "checks", "doubt", "ms", "tokens")
    shown = {k: v for k, v in guided.trace.items() if k in kept}
    return answer, {"step": answer.step, "model_calls": guided.model_calls} | shown


def _question(run: TurnRun) -> str:
    texts = run.context.user_texts
    return texts[-1] if texts else ""


def _earlier(guided: GuidedTurn, question: str) -> str:
    """The asker's previous message in the thread when `question` reads as a follow-up to it; "" otherwise."""
    texts = guided.context.user_texts
    if len(texts) < 2 or len(question.split()) > FOLLOW_UP_WORDS:
        return ""
    return texts[-2]


def _answer(guided: GuidedTurn, question: str) -> GuidedAnswer:
    guided.progress("Looking for tables…")
    earlier = _earlier(guided, question)
    guided.trace["earlier"] = earlier
    with guided.env.store.transaction() as session:
        guided.context.session = session
        selection = _search(guided, f"{earlier} {question}" if earlier else question, terms=[])
    if earlier and any(mentions([earlier], c.table, c.role) for c in selection.copies_left_out):
        guided.trace["earlier"] = ""  # the earlier question was about a copy this one does not ask for
    if selection.ambiguous:
        guided.trace["databases"] = selection.ambiguous
        record_search_only(guided)
        return GuidedAnswer("answered", ambiguity_question(selection.ambiguous), None, "ambiguity")
    if not selection.tables:
        record_search_only(guided)
        if selection.denied:
            return GuidedAnswer("answered", NO_PERMISSION, None, "no_permission")
        return GuidedAnswer("answered", NOTHING_FOUND, None, "nothing_found")
    if selection.needs_pick:
        selection = _pick(guided, question, selection)
    guided.trace["tables"] = [f"{selection.database}.{t.qualified}" for t in selection.tables]
    before = Used.of(guided.context)
    steps, dialect = _check_steps(guided, question), dialect_for(selection.engine)
    record = _write_and_run(guided, question, selection, [])
    if record is not None and record.error is not None and not record.error.startswith("no permission"):
        record = _unjoined(guided, question, selection, record, steps)
    if record is not None and record.error is not None and not record.error.startswith("no permission"):
        guided.trace["repaired"] = "error"
        record = _write_and_run(guided, question, selection, repair_messages(guided, selection))
        if record is not None and record.error is not None and not record.error.startswith("no permission"):
            record = _unjoined(guided, question, selection, record, steps)  # the repair's own sure readings
        if record is not None and record.error is not None:
            return could_not("sql_error", "the SQL failed twice", record)
    if record is None:
        return could_not("sql_error", "the model wrote no SQL", None)
    if record.error is not None:
        return GuidedAnswer("answered", sql_refused(record), None, "no_permission")
    agreement = _agreed(guided, question, selection, record, before)
    result = checked(agreement.record, selection, dialect, steps)
    if guided.trace.get("left_out_doubt"):  # a filter the question names, left out with its join
        result.doubts.insert(0, Doubt("join", str(guided.trace["left_out_doubt"]), ""))
    guided.trace["checks"] = result.kinds
    split = agreement.doubt()
    if split is not None and not result.doubts and not result.repaired:
        result.doubts.append(split)  # what the checks found comes first; a split is said when nothing else is
    record = result.record
    if is_empty(record):
        guided.trace["repaired"] = "empty"
        misses, dropped = join_misses(guided, selection, record.sql)
        unjoined = without_join(question, dropped, selection, dialect, steps) if dropped else None
        if unjoined is not None:
            guided.trace["repaired"] = "join"
            return _checked_answer(guided, question, selection, unjoined)
        with guided.env.store.transaction() as session:
            guided.context.session = session
            again = _search(guided, question, terms=filter_values(record.sql, selection.engine), prior=selection)
        if again.tables:
            guided.trace["tables"] = [f"{again.database}.{t.qualified}" for t in again.tables]
            hint = (
                f"An earlier query returned no rows:\n{record.sql}\n"
                "Check the tables, columns and values: use the values shown for the question's words."
                + "".join(f"\n{miss.line}" for miss in misses)
            )
            retried = _write_and_run(guided, question, again, [], hint=hint)
            if retried is not None and retried.error is None:
                record, selection = retried, again
        if is_empty(record):
            # no figure came back, also after the re-search: said as a doubt, the turn's status `partial`
            return GuidedAnswer("partial", no_rows(guided.context.tables_used, record), None, "empty")
        result = Checked(record)
    return _checked_answer(guided, question, selection, result)


def _checked_answer(guided: GuidedTurn, question: str, selection: Selection, result: Checked) -> GuidedAnswer:
    """The answer from the checked record (made the turn's last result), with the literals read as the data writes
    them and, when a doubt remains after the repair, that doubt in one line and the status `partial`."""
    runs = guided.context.sql_runs
    if result.record in runs and runs[-1] is not result.record:
        runs.remove(result.record)
        runs.append(result.record)  # the answer's figure is the last result every surface shows
    tables, dialect = {t.name.upper(): t.card for t in selection.tables}, dialect_for(selection.engine)
    meanings = result_meanings(result.record.sql, dialect, tables)
    said = question  # the sentence names the identifier the rows are of ("PE0001"), the doubt the question's
    for named, used in (d.read_as for d in result.doubts if d.read_as is not None):
        said = re.sub(rf"(?<!\w){re.escape(named)}(?!\w)", used.replace("\\", r"\\"), said)
    text = rows_answer(said, result.record, guided.context.tables_used, meanings)
    doubt = doubt_line(result.doubts)
    if doubt:
        guided.trace["doubt"] = doubt
    flags = flag_notes(question, result.record.sql, dialect, tables)
    lines = [text, str(guided.trace.get("left_out") or ""), *result.notes, *flags, doubt]
    return GuidedAnswer(
        "partial" if doubt else "answered",
        "\n".join(line for line in lines if line),
        None,
        "doubt" if doubt else "answer",
    )


def _unjoined(
    guided: GuidedTurn, question: str, selection: Selection, record: SqlRecord, steps: CheckSteps
) -> SqlRecord:
    """`record` (a statement that failed on a column a table of a join lacks) run again without a model call:
    without that join when its table only filters, or with the one shown table in between joined
    (`guided_tables.missing_column_fix`); `record` itself otherwise. The answer says what was changed (as its
    doubt when a filter left out names the question's value)."""
    result = guided.trace.get("last_result")
    fixed = missing_column_fix(selection, record.sql, result.content if result is not None else "", question)
    again = steps.rerun(fixed.sql, selection) if fixed is not None else None
    if fixed is None or again is None or again.error is not None:
        return record
    guided.trace["repaired"] = "join"
    note = fixed.note() if isinstance(fixed, DroppedJoin) else fixed.note
    asked = isinstance(fixed, DroppedJoin) and fixed.asked(question)
    guided.trace["left_out_doubt" if asked else "left_out"] = note
    return again


def _check_steps(guided: GuidedTurn, question: str) -> CheckSteps:
    context = guided.context

    def verdict(record: SqlRecord, selection: Selection) -> Verdict:
        tables = {t.name.upper(): t for t in selection.tables}
        started = time.perf_counter()
        with guided.env.store.transaction() as session:
            context.session = session
            probes = probes_for(guided, session, selection, tables)
            read_tables(guided, selection, record.sql, tables)
            cards = {name: t.card for name, t in tables.items()}
            found = check(question, record, dialect_for(selection.engine), cards, selection.linked, probes)
        timed(guided, "check", started)
        return found

    def rerun(sql: str, selection: Selection) -> SqlRecord | None:
        call = ToolCallRequest(id=f"guided-{guided.model_calls}-rewrite", name="run_sql", arguments={"sql": sql})
        arguments = {"database": selection.database, "sql": sql}
        with guided.env.store.transaction() as session:
            context.session = session
            reply = ModelReply(text="", stop_reason="no_model_call")
            record_round(guided, reply, replace(call, arguments=arguments))
        return context.sql_runs[-1] if context.sql_runs else None

    def write(selection: Selection, hint: str) -> SqlRecord | None:
        guided.trace["repaired"] = "check"
        return _write_and_run(guided, question, selection, [], hint=hint)

    return CheckSteps(verdict, rerun, write, lambda selection, names: grown(guided, selection, names))


# --- selection ---------------------------------------------------------------------------------------------------


def _search(guided: GuidedTurn, question: str, terms: list[str], prior: Selection | None = None) -> Selection:
    context = guided.context
    started = time.perf_counter()
    request = SearchRequest(question=question, databases=list(context.pins), terms=terms, k=SEARCH_K)
    result = search_tables(
        context.session, context.principal, request, context.encoders, context.viewer, viewer_reads(context)
    )
    selection = choose(context, question, result, prior, asked=_question(guided.run))
    if selection.database:
        link_values(guided, selection, _question(guided.run))
    timed(guided, "search", started)
    arguments: dict[str, Any] = {"question": question} | ({"terms": terms} if terms else {})
    if context.pins:
        arguments["databases"] = list(context.pins)
    text = search_text(result.searched.describe(), result.candidates, result.denied_tables)
    guided.pending.append(("search_tables", arguments, text, (time.perf_counter() - started) * 1000))
    if selection.tables and not selection.needs_pick:
        load_schema(guided, selection)
    return selection


def _pick(guided: GuidedTurn, question: str, selection: Selection) -> Selection:
    spec = pick_spec(selection)
    prompt = [Message(role="user", text=pick_prompt(question, selection))]
    reply = call_model(guided, SYSTEM, prompt, spec, FIRST_TEMPERATURE)
    with guided.env.store.transaction() as session:
        guided.context.session = session
        record_round(guided, reply, None)
        chosen = picked_tables(selection, reply)
        source = queryable_source(guided.context, chosen.database)
        chosen.tables = with_neighbours(guided.context, source, chosen.tables)
        load_schema(guided, chosen)
    return chosen


# --- SQL ---------------------------------------------------------------------------------------------------------


def _agreed(guided: GuidedTurn, question: str, selection: Selection, first: SqlRecord, before: Used) -> Agreement:
    """`first` and the sampled candidates for the same prompt, chosen by execution agreement
    (`workers.turns.candidates`): the tables the answer names are those the chosen statement read."""
    context = guided.context
    used = {id(first): Used.of(context)}
    ran = {str(guided.trace["last_call"].arguments.get("sql") or ""): first}  # statements written → their runs

    def write() -> SqlRecord | None:
        before.restore(context)
        runs = len(context.sql_runs)
        record = _write_and_run(guided, question, selection, [], sampled=True, ran=ran)
        if record is None or (id(record) not in used and len(context.sql_runs) == runs):
            return None  # no statement, or one run_sql answered from an earlier failure without running it
        used.setdefault(id(record), Used.of(context))
        return record

    agreement = agreed(first, write, context.settings.guided_candidates)
    used[id(agreement.record)].restore(context)
    guided.trace["candidates"] = agreement.trace()
    return agreement


def _write_and_run(
    guided: GuidedTurn,
    question: str,
    selection: Selection,
    repair: list[Message],
    hint: str = "",
    sampled: bool = False,
    ran: dict[str, SqlRecord] | None = None,
) -> SqlRecord | None:
    """One SQL call (with the earlier call and its error when repairing) and the run of its statement; a statement
    already in `ran` (a candidate written before) is not run again: its earlier run is returned."""
    guided.progress("Writing SQL…")
    earlier = str(guided.trace.get("earlier") or "")
    messages = repair or [Message(role="user", text=sql_prompt(question, selection, hint, earlier))]
    # A repair (after an error or an empty result) and a further candidate sample another statement.
    first = not repair and not hint and not sampled
    reply = call_model(guided, SYSTEM, messages, sql_spec(selection), FIRST_TEMPERATURE if first else None)
    sql = next((str(c.arguments.get("sql") or "") for c in reply.tool_calls if c.name == "run_sql"), "")
    if not sql.strip():
        sql = sql_in_text(reply.text)
    if sql.strip():
        sql = fixed_statement(sql, f"{earlier} {question}", selection, guided.trace)
    call = ToolCallRequest(id=f"guided-{guided.model_calls}", name="run_sql", arguments={"sql": sql})
    guided.trace.setdefault("messages", {})["sql"] = messages
    guided.trace["last_call"] = call
    if not sql.strip() or (ran is not None and sql in ran):
        with guided.env.store.transaction() as session:
            guided.context.session = session
            record_round(guided, reply, None)
        return ran.get(sql) if ran is not None else None
    arguments = {"database": selection.database, "sql": sql}
    with guided.env.store.transaction() as session:
        guided.context.session = session
        result = record_round(guided, reply, ToolCallRequest(id=call.id, name="run_sql", arguments=arguments))
    guided.trace["last_result"] = result
    record = guided.context.sql_runs[-1] if guided.context.sql_runs else None
    if ran is not None and record is not None:
        ran[sql] = record
    return record
