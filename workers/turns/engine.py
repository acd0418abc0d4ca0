"""Running one turn (SPEC §4): claim it, talk to the model in rounds, run its tool calls, record one answer.

Every round, tool call and SQL statement is stored as it happens, so an operator can follow a turn afterwards.
The same code runs in a Celery worker and in the console; only the environment differs.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any

from sqlalchemy.orm import Session

from core.access.permissions import PLATFORMS, Principal, resolve_principal
from core.access.users import UserRef
from core.answer.model import Answer, Chart, ResultTable, Status
from core.cards.database_summary import summaries_for
from core.config.settings import Settings
from core.errors import TablescoutError
from core.store.database import connection_lost
from core.store.models import Conversation, Turn
from core.store.repositories import search_queries as queries
from core.store.repositories import turns as turn_repo
from core.text.pins import unknown_pins
from workers.charts.render import chart_for
from workers.charts.shape import chartable
from workers.models.types import (
    ContextExceeded,
    Message,
    ModelError,
    ModelReply,
    ModelTimeout,
    ToolResult,
)
from workers.tools.base import Conversation as ConversationInfo
from workers.tools.base import ToolContext
from workers.tools.toolbox import StepCallback, ToolRunner, tools_for
from workers.turns.answers import copy_warnings, partial_answer, result_table, unsupported_numbers
from workers.turns.column_order import question_columns_first
from workers.turns.first_input import database_list, render_first_input, verified_examples, viewed_databases
from workers.turns.follow_ups import PresentationRequest, presentation_asked, reusable_answer, shown_again
from workers.turns.guided import OutOfTime, answer_guided, uses_guided
from workers.turns.history import thread_history
from workers.turns.no_access import no_access_answer, unknown_database_answer
from workers.turns.private_answers import PRIVACY_NOTE, private_answer, turn_is_private
from workers.turns.prompts import system_prompt
from workers.turns.provenance import sources_note
from workers.turns.rounds import add_round, count_reply
from workers.turns.sentences import answer_subject
from workers.turns.state import Progress, StepProgress, TurnEnvironment, TurnOutcome, TurnRun

log = logging.getLogger(__name__)

#: The lease outlives the deadline a little, so a redelivered job waits for a live first attempt to finish.
LEASE_MARGIN_S = 15.0
#: Below this many seconds left, another model call is not started.
MIN_MODEL_S = 2.0
#: A chat user's answer when the turn could not start (the reason, e.g. an invalid configuration, is logged).
COULD_NOT_START = "I could not start on this question because of a problem on my side; the operator can see why."


def _principal(session: Any, settings: Settings, turn: Turn) -> Principal:
    if turn.user_platform in PLATFORMS:
        return resolve_principal(session, settings.file, turn.user_platform, turn.user_id)
    return Principal.for_operator()


def _prepare(env: TurnEnvironment, session: Session, turn: Turn, deadline: float, attempt: int) -> TurnRun:
    """Everything the first model call needs, read in the claim's transaction (one round trip set, not two); the
    claim's update of the turn row is written once with the first model call's time, at commit."""
    with session.no_autoflush:  # the reads below do not depend on this turn's unwritten lease
        run = _prepare_reads(env, session, turn, deadline)
    run.next_ordinal = 1 if attempt == 1 else None  # a first attempt has no earlier rounds
    return run


def _prepare_reads(env: TurnEnvironment, session: Session, turn: Turn, deadline: float) -> TurnRun:
    conversation = session.get(Conversation, turn.conversation_id)
    assert conversation is not None
    principal = _principal(session, env.settings, turn)
    asker = UserRef(turn.user_platform, turn.user_id)
    viewer = asker if turn.user_platform in PLATFORMS else None
    registered = queries.sources(session)
    viewed = viewed_databases(session, principal, conversation, turn)
    listing = database_list(registered, principal, turn.question, viewed, summaries_for(session, principal, registered))
    private = turn_is_private(env.settings.file, env.provider.label, [s.name for s in listing.allowed])
    history, own_texts = thread_history(session, principal, turn, asker, schema_only=private)
    # Approved examples quote values in their SQL and questions: none in privacy mode.
    examples = "" if private else verified_examples(session, principal, env.encoders.embedder, turn.question, listing)
    first = render_first_input(listing, turn.question, turn.pins, examples, viewed)
    context = ToolContext(
        session=session,
        settings=env.settings,
        principal=principal,
        viewer=viewer,
        author=asker,
        conversation=ConversationInfo(
            platform=conversation.platform,
            workspace_id=conversation.workspace_id or None,
            channel_id=conversation.channel_id or None,
            thread_id=conversation.thread_id or None,
            private=conversation.private,
        ),
        encoders=env.encoders,
        pins=list(turn.pins),
        user_texts=[*own_texts, turn.question],
        turn_id=turn.id,
        may_query=bool(listing.allowed),
        compact=env.provider.small_model,
        schema_only=private,
    )
    opening = first
    refusal = None
    if listing.allowed:
        turn.first_model_call_at = turn.first_model_call_at or turn_repo.now()  # only the request lies between
    else:
        refusal = no_access_answer(session, env.settings.file, principal, len(registered))
    show_again = None
    if refusal is None and turn.intent == "question":
        labels = {label.lower() for source in registered for label in (source.name, *source.aliases)}
        unknown = unknown_pins(turn.question, labels)
        if unknown:
            refusal = unknown_database_answer(unknown, [source.name for source in listing.allowed])
        request = presentation_asked(turn.question)
        earlier = reusable_answer(session, principal, turn, asker) if request is not None else None
        show_again = (earlier, request) if earlier is not None and request is not None else None
    if turn.intent == "note":
        opening = opening.replace("\nQuestion:\n", "\nKnowledge to remember (attach it to the right table):\n")
    return TurnRun(
        turn_id=turn.id,
        intent=turn.intent,
        deadline=deadline,
        context=context,
        messages=[*history, Message(role="user", text=opening)],
        refusal=refusal,
        show_again=show_again,
    )


def _call_model(env: TurnEnvironment, run: TurnRun, runner: ToolRunner, progress: Progress) -> ModelReply:
    progress("Thinking…" if run.rounds == 0 else "Reading the results…")
    remaining = run.deadline - time.monotonic()
    return env.provider.complete(
        system_prompt(run.intent, run.context.schema_only),
        run.messages,
        runner.specs,
        timeout_s=max(remaining, MIN_MODEL_S),
    )


def _round(
    env: TurnEnvironment, run: TurnRun, runner: ToolRunner, progress: Progress, step: StepCallback | None = None
) -> ModelReply:
    started = turn_repo.now()
    reply = runner.screen(_call_model(env, run, runner, progress))  # storable text and arguments from here on
    count_reply(run, reply)
    with env.store.transaction() as session:
        run.context.session = session
        # The round is inserted with the reply's figures in one statement, flushed only when its tool calls need
        # its id; a round without tool calls is inserted finished, at commit.
        row = add_round(session, run, env.provider.label, started, reply, finished=not reply.tool_calls)
        results: list[ToolResult] = []
        if reply.tool_calls:
            session.flush()
            for position, call in enumerate(reply.tool_calls, start=1):
                results.append(runner.run(run.context, row.id, position, call, progress, step))
            row.finished_at = turn_repo.now()
    run.messages.append(Message(role="assistant", text=reply.text, tool_calls=reply.tool_calls))
    if results:
        run.messages.append(Message(role="user", tool_results=tuple(results)))
    return reply


def _finish(
    env: TurnEnvironment,
    run: TurnRun,
    status: Status,
    text: str,
    error: str | None,
    guided: dict[str, Any] | None = None,
) -> TurnOutcome:
    context = run.context
    asked = context.user_texts[-1] if context.user_texts else ""
    results = [question_columns_first(result_table(r), asked) for r in context.sql_runs]
    chart = _chart(env, run, results) if status == "answered" else None
    usage = {"input_tokens": run.input_tokens, "output_tokens": run.output_tokens, "rounds": run.rounds}
    with env.store.transaction() as session:
        answer = Answer(
            status=status,
            text=text,
            rounds=run.rounds,
            tables_used=list(context.tables_used),
            copies_used=list(context.copies_used),
            results=results,
            chart=chart,
            notes_saved=list(context.notes_saved),
            warnings=copy_warnings(context.copies_used) + ([PRIVACY_NOTE] if context.schema_only else []),
            sources_note=sources_note(session, context) if status != "failed" else None,
            guided=guided,
            file_key=Answer.new_file_key(run.turn_id) if results else None,
        )
        return _record(session, env, run, answer, error, usage)


def _record(
    session: Session, env: TurnEnvironment, run: TurnRun, answer: Answer, error: str | None, usage: dict[str, int]
) -> TurnOutcome:
    """Store the turn's one answer (while this worker holds the lease) and queue it for its chat platform."""
    if not turn_repo.finish(session, run.turn_id, env.owner, answer=answer, error=error, usage=usage):
        return TurnOutcome("lost_lease", run.turn_id)
    if run.context.conversation.platform in PLATFORMS:
        turn_repo.queue_answer(session, run.turn_id, answer)
    return TurnOutcome("finished", run.turn_id, status=answer.status)


_NO_USAGE = {"input_tokens": 0, "output_tokens": 0, "rounds": 0}


def _show_again(env: TurnEnvironment, run: TurnRun, previous: Answer, request: PresentationRequest) -> TurnOutcome:
    chart = None
    if request.presentation == "chart":
        table = chartable(previous.results)
        asked = run.context.user_texts[-2] if len(run.context.user_texts) > 1 else ""  # the earlier question
        title = previous.chart.title if previous.chart is not None else answer_subject(asked)
        name = f"turn-{run.turn_id}"
        chart = chart_for(table, title, env.settings.home / "charts", name, request.chart_type) if table else None
    answer = shown_again(previous, request, chart).model_copy(update={"file_key": Answer.new_file_key(run.turn_id)})
    with env.store.transaction() as session:
        return _record(session, env, run, answer, None, _NO_USAGE)


def _chart(env: TurnEnvironment, run: TurnRun, results: list[ResultTable]) -> Chart | None:
    """The answer's chart, when its last chartable result is a series over time or a breakdown (`workers.charts`),
    drawn under the question's subject into TABLESCOUT_HOME/charts (never raises)."""
    table = chartable(results)
    if table is None:
        return None
    question = run.context.user_texts[-1] if run.context.user_texts else ""
    return chart_for(table, answer_subject(question), env.settings.home / "charts", f"turn-{run.turn_id}")


def _made_up_numbers(env: TurnEnvironment, run: TurnRun, answer: str) -> list[str]:
    """For a small model's answer to a question: the numbers in it that neither the conversation nor any tool
    result holds (it made them up); [] otherwise."""
    if not env.provider.small_model or run.intent != "question":
        return []
    before = run.messages[:-1]  # the last message is the reply itself; earlier answers of the thread count
    sources = [m.text for m in before] + [r.content for m in before for r in m.tool_results]
    sources += [json.dumps(c.arguments) for m in before for c in m.tool_calls]  # e.g. the year its SQL filtered on
    return unsupported_numbers(answer, sources)


def _guided(env: TurnEnvironment, run: TurnRun, say: Progress, step: StepCallback | None) -> TurnOutcome:
    """A question turn on the guided path (`workers.turns.guided`): one search, one SQL call, bounded repair."""
    try:
        answer, trace = answer_guided(env, run, say, step)
    except OutOfTime:
        limit = env.settings.turn_deadline_s
        answer_text = partial_answer(f"the time limit of {limit:.0f} s was reached", run.last_text, run.context)
        return _finish(env, run, "partial", answer_text, "deadline", guided={"step": "deadline"})
    return _finish(env, run, answer.status, answer.answer, answer.error, guided=trace)


def run_turn(env: TurnEnvironment, turn_id: int, progress: Progress | None = None) -> TurnOutcome:
    """Run turn `turn_id` to its one recorded answer, unless it is finished or another attempt holds it."""
    say = progress or (lambda _status: None)
    step = progress.step if isinstance(progress, StepProgress) else None
    limit = env.settings.turn_deadline_s
    deadline = time.monotonic() + limit
    try:
        with env.store.transaction() as session:
            claim = turn_repo.claim(session, turn_id, env.owner, limit + LEASE_MARGIN_S)
            if claim.outcome == "claimed":
                turn = session.get(Turn, turn_id)
                assert turn is not None
                run = _prepare(env, session, turn, deadline, claim.attempt)
    except TablescoutError as exc:  # e.g. the configuration file became invalid: say so, do not retry forever
        log.warning("turn %s could not start: %s", turn_id, exc)
        with env.store.transaction() as session:
            turn_repo.fail_unstarted(session, turn_id, COULD_NOT_START)
        return TurnOutcome("finished", turn_id, status="failed")
    if claim.outcome == "missing":
        return TurnOutcome("missing", turn_id)
    if claim.outcome == "finished":
        return TurnOutcome("already_finished", turn_id)
    if claim.outcome == "busy":
        return TurnOutcome("busy", turn_id, retry_in_s=claim.retry_in_s)
    if run.refusal is not None:  # nothing to query: no model turn without tools, but an answer saying so
        log.info("turn %s: the user may query no database; told them whom to ask", turn_id)
        return _finish(env, run, "answered", run.refusal, "no database this user may query")
    if run.show_again is not None:  # "as a chart": the user's last result shown again, no model call, no SQL
        return _show_again(env, run, *run.show_again)
    runner = ToolRunner(tools_for(run.intent, run.context))
    try:
        # The guided path shows its model example rows; a turn in privacy mode takes the loop, whose tools hold
        # values back (`workers.tools.privacy`).
        if uses_guided(env.settings, env.provider, run.intent) and not run.context.schema_only:
            return _guided(env, run, say, step)
        while run.rounds < env.settings.max_rounds:
            if run.deadline - time.monotonic() < MIN_MODEL_S:
                answer = partial_answer(f"the time limit of {limit:.0f} s was reached", run.last_text, run.context)
                return _finish(env, run, "partial", answer, "deadline")
            reply = _round(env, run, runner, say, step)
            if not reply.tool_calls:
                if not reply.text.strip():
                    answer = partial_answer("the model gave no answer", run.last_text, run.context)
                    return _finish(env, run, "partial", answer, "empty reply")
                if reply.stop_reason == "max_tokens":
                    answer = partial_answer(
                        "the answer was cut off at the model's length limit", reply.text, run.context
                    )
                    return _finish(env, run, "partial", answer, "max_tokens")
                made_up = _made_up_numbers(env, run, reply.text)
                if made_up:
                    reason = f"the model's answer gave {', '.join(made_up)}, which no query returned"
                    return _finish(env, run, "partial", partial_answer(reason, "", run.context), "unsupported number")
                if run.context.schema_only and run.intent == "question":
                    question = run.context.user_texts[-1] if run.context.user_texts else ""
                    return _finish(env, run, "answered", private_answer(question, reply.text, run.context), None)
                return _finish(env, run, "answered", reply.text.strip(), None)
        answer = partial_answer(f"it needed more than {env.settings.max_rounds} rounds", run.last_text, run.context)
        return _finish(env, run, "partial", answer, "round limit")
    except ContextExceeded as exc:
        log.info("turn %s: %s", turn_id, exc)
        reason = "the conversation grew longer than the model can read at once"
        return _finish(env, run, "partial", partial_answer(reason, run.last_text, run.context), str(exc))
    except ModelTimeout as exc:  # the user reads no endpoint: the details are in the log and the turn's error
        log.warning("turn %s: %s", turn_id, exc)
        answer = partial_answer("the model service did not answer in time", run.last_text, run.context)
        return _finish(env, run, "partial", answer, str(exc))
    except ModelError as exc:
        log.warning("turn %s: model error: %s", turn_id, exc)
        return _finish(env, run, "failed", exc.user_message, str(exc))
    except Exception as exc:  # a fault of ours: the user gets an honest answer, the operator the traceback
        if connection_lost(exc):
            raise  # the metadata store went away: the turn is run again (job, sweep or console), not failed
        log.exception("turn %s failed", turn_id)
        answer = "Something went wrong on my side while answering; please ask again. The operator can see why."
        return _finish(env, run, "failed", answer, f"{type(exc).__name__}: {exc}"[:2000])
