"""AgentService: protobuf <-> domain translation around the conversation and the session store."""

from __future__ import annotations

import time
import uuid
from collections.abc import AsyncIterator
from dataclasses import asdict
from datetime import UTC, datetime, timedelta

import grpc

from glossator.v1 import agent_pb2, agent_pb2_grpc, validation_pb2
from services.agent.callers import Caller, RunningAsks, caller_of
from services.agent.config import AgentSettings
from services.agent.conversation import (
    Completed,
    Conversation,
    ConversationEvent,
    Outcome,
    Question,
    Started,
    Validated,
)
from services.agent.coverage import CollectionCoverage, ReportedTurn, coverage
from services.agent.events import AnswerDelta, Citation, RetrievalResults, ToolCall, ToolError
from services.agent.sessions import (
    Feedback,
    Grounding,
    Rating,
    Session,
    SessionState,
    SessionStore,
    Source,
    Turn,
)
from services.agent.sessions.lifecycle import quota_key
from services.common.auth import caller
from services.common.contract_limits import DEFAULT_TOP_K, MAX_QUERY_CHARS, MAX_TOP_K, MIN_TOP_K
from services.common.errors import FieldViolation, InvalidArgument, NotFound, PermissionDenied, Violations
from services.common.metrics import count_feedback
from services.common.text.question import QueryType
from services.common.wire import collection_name, timestamp

ANONYMOUS = "anonymous"
MAX_USER_ID_CHARS = 128
MAX_USER_CONTEXT_ENTRIES = 20
MAX_USER_CONTEXT_CHARS = 1000
MAX_FEEDBACK_COMMENT_CHARS = 1000
DEFAULT_REPORT_WINDOW = timedelta(days=7)
DEFAULT_REPORT_LIMIT = 20
MAX_REPORT_LIMIT = 100
_QUERY_TYPES = {
    QueryType.CONCEPTUAL: agent_pb2.QUERY_TYPE_CONCEPTUAL,
    QueryType.FACTUAL: agent_pb2.QUERY_TYPE_FACTUAL,
    QueryType.SECTION_BASED: agent_pb2.QUERY_TYPE_SECTION_BASED,
}
_VALIDATION_STATUSES = {
    "validated": agent_pb2.VALIDATION_STATUS_VALIDATED,
    "replaced": agent_pb2.VALIDATION_STATUS_REPLACED,
    "unavailable": agent_pb2.VALIDATION_STATUS_UNAVAILABLE,
    "skipped": agent_pb2.VALIDATION_STATUS_SKIPPED,
}
_RATINGS = {Rating.UP: agent_pb2.RATING_UP, Rating.DOWN: agent_pb2.RATING_DOWN}
_RATINGS_FROM_WIRE = {wire: rating for rating, wire in _RATINGS.items()}
_SESSION_STATES = {
    SessionState.CREATED: agent_pb2.SESSION_STATE_CREATED,
    SessionState.ACTIVE: agent_pb2.SESSION_STATE_ACTIVE,
    SessionState.INACTIVE: agent_pb2.SESSION_STATE_INACTIVE,
    SessionState.EXPIRED: agent_pb2.SESSION_STATE_EXPIRED,
    SessionState.TERMINATED: agent_pb2.SESSION_STATE_TERMINATED,
}


class AgentServicer(agent_pb2_grpc.AgentServiceServicer):
    def __init__(self, conversation: Conversation, sessions: SessionStore, settings: AgentSettings) -> None:
        self._conversation = conversation
        self._sessions = sessions
        self._settings = settings
        self._running = RunningAsks(settings.max_concurrent_asks_per_caller)

    async def AskStream(
        self, request: agent_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[agent_pb2.AskStreamResponse]:
        question, who = self._question(request, context)
        await self._check_access(question.session_id, question.user_id, request.session_token)
        deadline = self._deadline(context)
        sequence = 0
        # Held while the replies are written too: the interceptor writes each one while this waits.
        with self._running.slot(who, self._conversation.expected_answer_seconds):
            async for event in self._conversation.ask(question, deadline):
                message = to_stream_event(event)
                if isinstance(event, Started):
                    message.started.session_token = await self._session_token(event.session_id, question)
                elif isinstance(event, Completed):
                    message.completed.response.session_token = await self._session_token(
                        event.outcome.session_id, question
                    )
                message.sequence = sequence
                sequence += 1
                yield message

    async def Ask(
        self, request: agent_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.AskResponse:
        question, who = self._question(request, context)
        await self._check_access(question.session_id, question.user_id, request.session_token)
        with self._running.slot(who, self._conversation.expected_answer_seconds):
            async for event in self._conversation.ask(question, self._deadline(context)):
                if isinstance(event, Completed):
                    response = to_response(event.outcome)
                    response.session_token = await self._session_token(event.outcome.session_id, question)
                    return agent_pb2.AskResponse(response=response)
        raise RuntimeError("the conversation ended without a response")

    async def GetSession(
        self, request: agent_pb2.GetSessionRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.GetSessionResponse:
        v = Violations()
        session_id, user_id = _session_ref(request.session_id, request.user_id, v)
        v.raise_if_any()
        await self._check_access(session_id, user_id, request.session_token)
        session = await self._sessions.get(session_id, user_id, with_turns=True)
        return agent_pb2.GetSessionResponse(session=to_session(session))

    async def ListSessions(
        self, request: agent_pb2.ListSessionsRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.ListSessionsResponse:
        v = Violations()
        user_id = _user_id(request.user_id, v)
        v.check(
            user_id != ANONYMOUS,
            "user_id",
            "is required: anonymous sessions are not listed (each is reachable with its session_token)",
        )
        v.raise_if_any()
        sessions, token = await self._sessions.list(
            user_id, request.page_size, request.page_token, request.include_ended
        )
        return agent_pb2.ListSessionsResponse(
            sessions=[to_session(s) for s in sessions], next_page_token=token
        )

    async def EndSession(
        self, request: agent_pb2.EndSessionRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.EndSessionResponse:
        v = Violations()
        session_id, user_id = _session_ref(request.session_id, request.user_id, v)
        v.raise_if_any()
        await self._check_access(session_id, user_id, request.session_token)
        return agent_pb2.EndSessionResponse(session=to_session(await self._sessions.end(session_id, user_id)))

    async def SubmitFeedback(
        self, request: agent_pb2.SubmitFeedbackRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.SubmitFeedbackResponse:
        v = Violations()
        session_id, user_id = _session_ref(request.session_id, request.user_id, v)
        v.check(bool(request.query_id), "query_id", "is required: the query_id of the answer rated")
        if request.query_id:
            _check_uuid("query_id", request.query_id, v)
        rating = _RATINGS_FROM_WIRE.get(request.rating)
        v.check(rating is not None, "rating", "must be RATING_UP or RATING_DOWN")
        comment = v.text("comment", request.comment, max_chars=MAX_FEEDBACK_COMMENT_CHARS, required=False)
        v.raise_if_any()
        assert rating is not None
        await self._check_access(session_id, user_id, request.session_token)
        feedback = Feedback(rating=rating, comment=comment, submitted_at=datetime.now(UTC))
        query_id = request.query_id.lower()
        session, replaced = await self._sessions.rate(session_id, user_id, query_id, feedback)
        count_feedback(session.collection, rating.value, replaced=replaced is not None)
        return agent_pb2.SubmitFeedbackResponse(
            session_id=session_id,
            query_id=query_id,
            feedback=to_feedback(feedback),
            replaced=replaced is not None,
        )

    async def GetCoverageReport(
        self, request: agent_pb2.GetCoverageReportRequest, context: grpc.aio.ServicerContext
    ) -> agent_pb2.GetCoverageReportResponse:
        v = Violations()
        now = datetime.now(UTC)
        since = _report_start(request, now, v)
        limit = request.limit or DEFAULT_REPORT_LIMIT
        v.in_range("limit", limit, 1, MAX_REPORT_LIMIT)
        collection = collection_name(request.collection, v) if request.collection else ""
        v.raise_if_any()
        report = await coverage(self._sessions.turns_since(since), collection)
        return agent_pb2.GetCoverageReportResponse(
            since=timestamp(since),
            generated_at=timestamp(now),
            collections=[to_collection_coverage(c, limit) for c in report],
        )

    async def _check_access(self, session_id: str, user_id: str, token: str) -> None:
        """An anonymous session has no owner to check the caller against: its token is required
        (a wrong one is NOT_FOUND, like another user's session). Owned sessions are checked by the
        store against their owner."""
        if not session_id or user_id != ANONYMOUS:
            return
        if not token:
            if await self._sessions.owner(session_id) not in (None, ANONYMOUS):
                raise InvalidArgument(
                    [
                        FieldViolation(
                            "user_id",
                            f"is required: session {session_id} belongs to a named user; pass that "
                            "user's id (the CLI's --user)",
                        )
                    ]
                )
            raise InvalidArgument(
                [
                    FieldViolation(
                        "session_token",
                        "is required for an anonymous session: pass the one its first answer returned",
                    )
                ]
            )
        if not (await self._sessions.session_tokens()).valid(session_id, token):
            raise NotFound(f"session {session_id} not found")

    async def _session_token(self, session_id: str, question: Question) -> str:
        if question.user_id != ANONYMOUS:
            return ""
        return (await self._sessions.session_tokens()).issue(session_id)

    def _question(
        self, request: agent_pb2.AskRequest, context: grpc.aio.ServicerContext
    ) -> tuple[Question, Caller]:
        """The validated question, and who asks it (for its quotas and its place among the running)."""
        s = self._settings
        v = Violations()
        query = v.text("query", request.query, max_chars=MAX_QUERY_CHARS)
        if request.session_id:
            _check_uuid("session_id", request.session_id, v)
        user_id = _user_id(request.user_id, v)
        v.text("selected_text", request.selected_text, max_chars=s.max_selected_text_chars, required=False)
        top_k = request.top_k or DEFAULT_TOP_K
        v.in_range("top_k", top_k, MIN_TOP_K, MAX_TOP_K)
        if request.HasField("min_relevance"):
            v.in_range("min_relevance", request.min_relevance, 0.0, 1.0)
        requested_collection = collection_name(request.collection, v)
        v.check(
            len(request.user_context) <= MAX_USER_CONTEXT_ENTRIES,
            "user_context",
            f"at most {MAX_USER_CONTEXT_ENTRIES} entries",
        )
        for key, value in request.user_context.items():
            v.check(
                len(key) + len(value) <= MAX_USER_CONTEXT_CHARS,
                f"user_context[{key[:40]}]",
                f"key and value together at most {MAX_USER_CONTEXT_CHARS} characters",
            )
        v.raise_if_any()
        who = caller_of(context, "" if user_id == ANONYMOUS else user_id)
        question = Question(
            query=query,
            user_id=user_id,
            quota_key=quota_key(user_id, "" if user_id != ANONYMOUS else who.key),
            session_id=request.session_id.lower(),
            collection=requested_collection,
            selected_text=request.selected_text.strip(),
            top_k=top_k,
            min_relevance=request.min_relevance if request.HasField("min_relevance") else None,
            include_sources=request.include_sources if request.HasField("include_sources") else True,
            user_context=dict(request.user_context),
        )
        return question, who

    def _deadline(self, context: grpc.aio.ServicerContext) -> float:
        """The run's deadline: the caller's, capped by the configured limit of a whole run."""
        remaining = context.time_remaining()
        limit = self._settings.llm_timeout_seconds
        return time.monotonic() + (limit if remaining is None else min(limit, remaining))


def _check_uuid(field_name: str, value: str, v: Violations) -> None:
    try:
        uuid.UUID(value)
    except ValueError:
        v.add(field_name, "must be a UUID such as 123e4567-e89b-12d3-a456-426614174000")


def _user_id(requested: str, v: Violations) -> str:
    """The user whose sessions a call reaches: with auth off the request's user_id; with auth on
    the verified caller's user (an admin, a trusted gateway, may name one in the user header or in
    user_id; anyone else may only repeat their own)."""
    requested = requested.strip()
    identity = caller()
    if identity is None:
        user = requested
    elif identity.is_admin:
        v.check(
            not (requested and identity.user and requested != identity.user),
            "user_id",
            "differs from the user the caller's user header names",
        )
        user = requested or identity.user
    elif requested and requested != identity.user:
        raise PermissionDenied("user_id may only name the caller's own user", retryable=False)
    else:
        user = identity.user
    v.check(len(user) <= MAX_USER_ID_CHARS, "user_id", f"at most {MAX_USER_ID_CHARS} characters")
    return user or ANONYMOUS


def _session_ref(session_id: str, user_id: str, v: Violations) -> tuple[str, str]:
    """The session a request names and the user reaching it; problems are added to `v`."""
    v.check(bool(session_id), "session_id", "is required")
    if session_id:
        _check_uuid("session_id", session_id, v)
    return session_id.lower(), _user_id(user_id, v)


def to_source(source: Source) -> agent_pb2.Source:
    return agent_pb2.Source(
        index=source.index,
        chunk_id=source.chunk_id,
        source_url=source.source_url,
        section_title=source.section_title,
        section_path=source.section_path,
        chunk_index=source.chunk_index,
        relevance_score=source.relevance_score,
        extracted_text=source.extracted_text,
        title=source.title,
        document_id=source.document_id,
    )


def to_stream_event(event: ConversationEvent) -> agent_pb2.AskStreamResponse:
    match event:
        case Started():
            return agent_pb2.AskStreamResponse(
                started=agent_pb2.Started(
                    session_id=event.session_id, query_id=event.query_id, model=event.model
                )
            )
        case ToolCall():
            return agent_pb2.AskStreamResponse(
                tool_call=agent_pb2.ToolCall(
                    name=event.name, arguments=event.arguments, call_id=event.call_id
                )
            )
        case ToolError():
            return agent_pb2.AskStreamResponse(
                tool_error=agent_pb2.ToolError(name=event.name, call_id=event.call_id, message=event.message)
            )
        case RetrievalResults():
            return agent_pb2.AskStreamResponse(
                retrieval=agent_pb2.RetrievalResults(
                    chunks=event.chunks, metadata=event.metadata, call_id=event.call_id
                )
            )
        case AnswerDelta():
            return agent_pb2.AskStreamResponse(answer_delta=agent_pb2.AnswerDelta(text=event.text))
        case Citation():
            return agent_pb2.AskStreamResponse(
                citation=agent_pb2.Citation(index=event.index, source=to_source(event.source))
            )
        case Validated():
            return agent_pb2.AskStreamResponse(validation=_verdict(event))
        case Completed():
            return agent_pb2.AskStreamResponse(
                completed=agent_pb2.Completed(response=to_response(event.outcome))
            )
    raise TypeError(f"unknown conversation event {event!r}")


def _verdict(validated: Validated) -> validation_pb2.ValidateResponse:
    return validated.verdict if validated.verdict is not None else validation_pb2.ValidateResponse()


def to_grounding(grounding: Grounding) -> agent_pb2.GroundingSummary:
    """Field for field (the domain value mirrors the message), the status mapped to its enum."""
    status = _VALIDATION_STATUSES.get(grounding.status, agent_pb2.VALIDATION_STATUS_UNSPECIFIED)
    return agent_pb2.GroundingSummary(**asdict(grounding) | {"status": status})


def to_feedback(feedback: Feedback | None) -> agent_pb2.Feedback | None:
    """The message of a rating; None for none (a message field left unset)."""
    if feedback is None:
        return None
    return agent_pb2.Feedback(
        rating=_RATINGS[feedback.rating],
        comment=feedback.comment,
        submitted_at=timestamp(feedback.submitted_at),
    )


def to_response(outcome: Outcome) -> agent_pb2.Response:
    verdict = outcome.validation.verdict
    response = agent_pb2.Response(
        answer=outcome.answer,
        sources=[to_source(s) for s in outcome.sources],
        confidence=outcome.confidence,
        query_type=_QUERY_TYPES[outcome.query_type],
        grounding=to_grounding(outcome.validation.summary()),
        steps=[
            agent_pb2.ToolCallStep(
                name=s.name, arguments=s.arguments, duration_ms=s.duration_ms, error=s.error
            )
            for s in outcome.steps
        ],
        timings=agent_pb2.Timings(
            retrieval_ms=outcome.retrieval_ms,
            generation_ms=outcome.generation_ms,
            validation_ms=outcome.validation.validation_ms,
            total_ms=outcome.total_ms,
            first_delta_ms=outcome.first_delta_ms,
        ),
        session_id=outcome.session_id,
        query_id=outcome.query_id,
        started_at=timestamp(outcome.started_at),
        completed_at=timestamp(outcome.completed_at),
        model=outcome.model,
        cached=outcome.cached,
        not_covered=outcome.not_covered,
    )
    if verdict is not None:
        response.validation.CopyFrom(verdict)
    return response


def to_turn(turn: Turn) -> agent_pb2.Turn:
    return agent_pb2.Turn(
        query_id=turn.query_id,
        query=turn.query,
        answer=turn.answer,
        sources=[to_source(s) for s in turn.sources],
        tool_calls=[
            agent_pb2.ToolCallRecord(name=c.name, arguments=c.arguments, output=c.output)
            for c in turn.tool_calls
        ],
        user_context=turn.user_context,
        selected_text=turn.selected_text,
        created_at=timestamp(turn.created_at),
        not_covered=turn.not_covered,
        grounding=to_grounding(turn.grounding),
        feedback=to_feedback(turn.feedback),
    )


def to_session(session: Session) -> agent_pb2.Session:
    return agent_pb2.Session(
        session_id=session.session_id,
        user_id=session.user_id,
        state=_SESSION_STATES[session.state],
        created_at=timestamp(session.created_at),
        last_active_at=timestamp(session.last_active_at),
        turn_count=session.turn_count,
        turns=[to_turn(t) for t in session.turns],
        collection=session.collection,
    )


def to_reported_turn(reported: ReportedTurn) -> agent_pb2.ReportedTurn:
    turn = reported.turn
    return agent_pb2.ReportedTurn(
        session_id=reported.session_id,
        query_id=turn.query_id,
        query=turn.query,
        answer=turn.answer,
        asked_at=timestamp(turn.created_at),
        grounding=to_grounding(turn.grounding),
        page_url=reported.page_url,
        feedback=to_feedback(turn.feedback),
    )


def to_collection_coverage(report: CollectionCoverage, limit: int) -> agent_pb2.CollectionCoverage:
    return agent_pb2.CollectionCoverage(
        collection=report.collection,
        questions=report.questions,
        not_covered=report.not_covered,
        rated_up=report.rated_up,
        rated_down=report.rated_down,
        replaced=report.replaced,
        flagged=report.flagged,
        most_asked=[
            agent_pb2.AskedQuestion(query=q.query, count=q.count, last_asked_at=timestamp(q.last_asked_at))
            for q in report.most_asked(limit)
        ],
        declined=[to_reported_turn(r) for r in report.newest(report.declined, limit)],
        rated_down_answers=[to_reported_turn(r) for r in report.newest(report.rated_down_answers, limit)],
        replaced_or_flagged=[to_reported_turn(r) for r in report.newest(report.replaced_or_flagged, limit)],
    )


def _report_start(request: agent_pb2.GetCoverageReportRequest, now: datetime, v: Violations) -> datetime:
    """The report's `since`: a valid timestamp not in the future (default: the last window)."""
    if not request.HasField("since"):
        return now - DEFAULT_REPORT_WINDOW
    try:
        since = request.since.ToDatetime(UTC)
    except (ValueError, OverflowError):  # nanos outside 0..999,999,999 or seconds past year 9999
        v.add("since", "is not a valid timestamp (seconds from year 1 to 9999, nanos 0 to 999,999,999)")
        return now
    v.check(since <= now, "since", "must not be in the future")
    return since
