"""One question in a conversation: session, cache, the answer run, validation, the stored turn.

`Conversation.ask` yields the run's domain events framed by `Started`, `Validated` and `Completed`;
the servicer only translates them to glossator.v1 events.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
import uuid
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime

import grpc

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc, validation_pb2_grpc
from services.agent.admission import Admission
from services.agent.agent import Answerer, AnswerRequest, run_answer
from services.agent.answer_check import AnswerChecker, Checked, Validated
from services.agent.cache import ResponseCache, cache_key
from services.agent.citations import MARKER_RE
from services.agent.config import AgentSettings
from services.agent.events import AgentEvent, AnswerDelta, AnswerFinished, Citation, ToolStep
from services.agent.search_query import search_query
from services.agent.sessions import SessionStore, Source, ToolCallRecord, Turn
from services.agent.tools import Prefetched
from services.common.contract_limits import DEFAULT_TOP_K
from services.common.errors import FailedPrecondition
from services.common.logging import get_logger
from services.common.metrics import observe_stage
from services.common.text.question import QueryType, asks_for_other_words, classify_query, focus_share
from services.common.text.repeats import repeats

log = get_logger("glossator.conversation")


@dataclass(frozen=True, kw_only=True)
class Question:
    """A validated AskRequest."""

    query: str
    user_id: str
    # Whom a new session counts against (sessions.lifecycle.quota_key); "": the user.
    quota_key: str = ""
    session_id: str = ""
    collection: str = "default"
    selected_text: str = ""
    top_k: int = DEFAULT_TOP_K
    min_relevance: float | None = None
    include_sources: bool = True
    user_context: Mapping[str, str] = field(default_factory=dict)

    @property
    def cacheable(self) -> bool:
        return not self.session_id and not self.selected_text and not self.user_context


@dataclass(frozen=True, kw_only=True)
class Started:
    session_id: str
    query_id: str
    model: str


@dataclass(frozen=True, kw_only=True)
class Outcome:
    """The final response of a question (glossator.v1.Response)."""

    answer: str
    sources: list[Source]
    confidence: float
    query_type: QueryType
    validation: Validated
    steps: list[ToolStep]
    retrieval_ms: float
    generation_ms: float
    total_ms: float
    first_delta_ms: float
    session_id: str
    query_id: str
    started_at: datetime
    completed_at: datetime
    model: str
    cached: bool
    not_covered: bool


@dataclass(frozen=True, kw_only=True)
class Completed:
    outcome: Outcome


ConversationEvent = Started | AgentEvent | Validated | Completed


class Conversation:
    """Everything a question needs that outlives it: agent, sessions, validation, cache."""

    def __init__(
        self,
        answerer: Answerer,
        sessions: SessionStore,
        retrieval: retrieval_pb2_grpc.RetrievalServiceStub,
        validation: validation_pb2_grpc.ValidationServiceStub,
        settings: AgentSettings,
    ) -> None:
        self._answerer = answerer
        self._sessions = sessions
        self._retrieval = retrieval
        self._validation = validation
        self._settings = settings
        self._cache: ResponseCache[Outcome] = ResponseCache(settings.response_cache_ttl_seconds)
        self._admission = Admission(settings.max_concurrent_answers)

    @property
    def expected_answer_seconds(self) -> float:
        """How long an answer takes lately (0 before any): when a refused caller may try again."""
        return self._admission.expected_seconds

    async def ask(self, question: Question, deadline: float) -> AsyncIterator[ConversationEvent]:
        """Answers one question when admitted (admission.py); `deadline` is a time.monotonic() instant.

        The answer is computed by a task of its own into a queue the caller reads: its slot is free
        once the answer is computed, however slowly the client takes the events (one that never
        reads, with a flow-control window of 0, held a slot forever). Closing this stream cancels
        the task, which stops the model run.
        """
        events: asyncio.Queue[ConversationEvent] = asyncio.Queue()

        async def compute() -> None:
            async with self._admission.slot(deadline):
                async for event in self._answer(question, deadline):
                    events.put_nowait(event)  # an answer's events are few and small

        computing = asyncio.ensure_future(compute())
        try:
            while (event := await _next_event(events, computing)) is not None:
                yield event
        finally:
            computing.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await computing

    async def _answer(self, question: Question, deadline: float) -> AsyncIterator[ConversationEvent]:
        started = time.perf_counter()
        started_at = datetime.now(UTC)
        session, history = await self._session(question)
        query_id = str(uuid.uuid4())
        yield Started(session_id=session, query_id=query_id, model=self._answerer.model_name)

        probe_start = time.perf_counter()
        key, probed = (
            await self._cache_key(question, deadline) if self._cache_usable(question) else (None, None)
        )
        probe_ms = (time.perf_counter() - probe_start) * 1000  # a Search call: retrieval time
        cached = self._cache.get(key) if key else None
        if cached is not None:
            async for event in self._replay(
                cached, question, session, query_id, started, started_at, probe_ms
            ):
                yield event
            return

        finished: AnswerFinished | None = None
        first_delta_ms = 0.0
        request = AnswerRequest(
            question=question.query,
            collection=question.collection,
            top_k=question.top_k,
            min_relevance=question.min_relevance,
            selected_text=question.selected_text,
            user_context=question.user_context,
            history=history,
            prefetched=probed,
        )
        run = run_answer(request, self._answerer, deadline=deadline)
        with observe_stage("generation"):
            async with contextlib.aclosing(run) as events:  # closing this stream stops the run at once
                async for event in events:
                    if isinstance(event, AnswerFinished):
                        finished = event
                        continue
                    if isinstance(event, AnswerDelta) and not first_delta_ms:
                        first_delta_ms = (time.perf_counter() - started) * 1000
                    yield event
        assert finished is not None  # run_answer always ends with AnswerFinished or raises

        checker = AnswerChecker(
            self._validation,
            self._settings.validation_policy,
            lambda: _remaining(deadline, self._settings.validation_timeout_seconds),
            highlight=question.selected_text if asks_for_other_words(question.query) else "",
        )
        # Validated as an answer to the question in context: "What does this passage mean?" is
        # about the selected passage, "And in ROS 1?" about the question it follows.
        asked = finished.search_query or question.query
        checked = await checker.check(asked, finished)
        for number in checked.new_citations:
            yield Citation(index=number, source=finished.sources[number - 1])
        yield checked.validated
        outcome = Outcome(
            answer=checked.answer,
            sources=checked.cited if question.include_sources else [],
            confidence=confidence(checked, asked, question.selected_text),
            query_type=classify_query(question.query, question.selected_text),
            validation=checked.validated,
            steps=finished.steps,
            retrieval_ms=finished.retrieval_ms + probe_ms,
            generation_ms=finished.generation_ms,
            total_ms=(time.perf_counter() - started) * 1000,
            first_delta_ms=first_delta_ms,
            session_id=session,
            query_id=query_id,
            started_at=started_at,
            completed_at=datetime.now(UTC),
            model=checked.model,
            cached=False,
            not_covered=checked.not_covered,
        )
        turn = _turn(question, outcome, checked.cited, finished.steps)
        await self._sessions.append_turn(session, question.user_id, turn)
        if key:
            self._cache.put(key, outcome)
        yield Completed(outcome=outcome)

    async def _session(self, question: Question) -> tuple[str, list[Turn]]:
        if not question.session_id:
            created = await self._sessions.create(question.user_id, question.collection, question.quota_key)
            return created.session_id, []
        session = await self._sessions.get(question.session_id, question.user_id, with_turns=False)
        if session.state.ended:
            raise FailedPrecondition(f"session {session.session_id} is {session.state}; start a new one")
        await self._sessions.check_room(session.quota_key)
        await self._sessions.take_question(session.session_id)  # the caller owns it: get() checked
        history = await self._sessions.history(
            session.session_id, question.user_id, self._settings.history_turns
        )
        return session.session_id, history

    def _cache_usable(self, question: Question) -> bool:
        return question.cacheable and self._cache.enabled

    async def _cache_key(self, question: Question, deadline: float) -> tuple[str | None, Prefetched | None]:
        """The cache key, from what retrieval returns now for the question, and that search (which
        the run's first search then uses instead of searching again); None if it fails."""
        request = retrieval_pb2.SearchRequest(
            collection=question.collection, query=search_query(question.query), top_k=question.top_k
        )
        if question.min_relevance is not None:
            request.min_relevance = question.min_relevance
        try:
            reply = await self._retrieval.Search(
                request, timeout=_remaining(deadline, self._settings.retrieval_timeout_seconds)
            )
        except grpc.aio.AioRpcError:
            return None, None  # the run itself will meet the same problem and report it
        key = cache_key(
            question.collection,
            question.query,
            question.top_k,
            question.min_relevance,
            self._answerer.model_name,
            list(reply.results),
        )
        return key, (request, reply)

    async def _replay(
        self,
        cached: Outcome,
        question: Question,
        session: str,
        query_id: str,
        started: float,
        started_at: datetime,
        probe_ms: float,
    ) -> AsyncIterator[ConversationEvent]:
        """A cached answer, streamed as one delta with its citations; it says it was cached."""
        yield AnswerDelta(text=cached.answer)
        for source in cached.sources:
            yield Citation(index=source.index, source=source)
        yield cached.validation
        total_ms = (time.perf_counter() - started) * 1000
        outcome = replace(
            cached,
            session_id=session,
            query_id=query_id,
            started_at=started_at,
            completed_at=datetime.now(UTC),
            cached=True,
            retrieval_ms=probe_ms,
            generation_ms=0.0,
            total_ms=total_ms,
            first_delta_ms=total_ms,
        )
        await self._sessions.append_turn(
            session, question.user_id, _turn(question, outcome, outcome.sources, [])
        )
        yield Completed(outcome=outcome)


def confidence(checked: Checked, question: str, selected_text: str = "") -> float:
    """0-1: how sure a reader may be that the answer answers the question: the relevance of the
    chunks it cites, times how grounded it is, times how much of what the question asks about it
    names (half credit when it names none of it: focus_share), halved when the reader asked for
    other words and the answer mostly gives their highlight back (services.common.text.repeats:
    of the 8 such answers to the tune splits' selected-text questions, offline and with the 0.5B
    model, none was correct, and they were shown at 0.85-1.0).

    A product, not a sum: grounded was the whole of it before (0.4 relevance + 0.6 grounded), and
    every grounded answer showed 0.8 or more, wrong ones included (17 of 68 answered on the
    report splits of both books, offline). Chosen on the tune splits (wrong answers shown at 0.8
    or more: 10 -> 1 of 65), measured once on the report splits (17 -> 1 of 68). An answer citing
    nothing has no retrieval support; one saying the book does not cover the question is 0.1 (a
    statement about the book, not an answer), whatever sections nearby it cites. Without a
    verdict, retrieval alone counts, discounted. An answer the validator found grounded but not
    an answer to the question (annotate delivers it) gets no credit for its grounding.
    """
    if checked.not_covered:
        return 0.1
    if not checked.cited:
        return 0.0
    retrieval = sum(s.relevance_score for s in checked.cited) / len(checked.cited)
    verdict = checked.validated.verdict
    if verdict is None:
        return round(0.7 * retrieval, 3)
    grounding = verdict.grounding_score if verdict.answers_question or verdict.is_refusal else 0.0
    said = MARKER_RE.sub(" ", checked.answer)
    focus = focus_share(question, said)
    echoed = bool(selected_text.strip()) and asks_for_other_words(question) and repeats(said, selected_text)
    return round(retrieval * grounding * (0.5 + 0.5 * focus) * (0.5 if echoed else 1.0), 3)


def _turn(question: Question, outcome: Outcome, cited: list[Source], steps: list[ToolStep]) -> Turn:
    return Turn(
        query_id=outcome.query_id,
        query=question.query,
        answer=outcome.answer,
        created_at=outcome.completed_at,
        sources=cited,
        tool_calls=[ToolCallRecord(name=s.name, arguments=s.arguments, output=s.output) for s in steps],
        user_context=dict(question.user_context),
        selected_text=question.selected_text,
        not_covered=outcome.not_covered,
        grounding=outcome.validation.summary(),
    )


def _remaining(deadline: float, cap: float) -> float:
    return max(0.01, min(cap, deadline - time.monotonic()))


async def _next_event(events: asyncio.Queue, computing: asyncio.Future) -> ConversationEvent | None:
    """The next event, None once the computation has finished and every event was taken; raises
    what the computation raised, after the events it queued before."""
    while events.empty() and not computing.done():
        getter = asyncio.ensure_future(events.get())
        try:
            await asyncio.wait([getter, computing], return_when=asyncio.FIRST_COMPLETED)
        finally:
            getter.cancel()
        if getter.done() and not getter.cancelled():
            return getter.result()
    if not events.empty():
        return events.get_nowait()
    computing.result()  # raises what the computation raised
    return None
