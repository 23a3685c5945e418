"""One answer run: the agent, the SDK's streamed run, and the domain events a client sees.

`run_answer` drives Runner.run_streamed and turns what happens into AgentEvents, in order:
ToolCall when the model asks for retrieval (before the call runs), RetrievalResults or ToolError
when it returns, AnswerDelta and Citation as the answer streams, AnswerFinished last.

Tool events are produced inside the SDK's run loop (the tool appends them to a buffer) and released
just before the next SDK event, which for a tool is its `tool_output` item: so they keep their
place in the sequence without a second task racing the stream.

Cancellation: when the consumer stops iterating (aclose) or its task is cancelled, the SDK run is
cancelled and awaited (briefly), which cancels the model stream and any Search in flight.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from agents import (
    Agent,
    FunctionTool,
    MaxTurnsExceeded,
    ModelBehaviorError,
    ModelSettings,
    RunConfig,
    Runner,
)
from agents.models.interface import Model
from agents.result import RunResultStreaming
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent

from glossator.v1 import retrieval_pb2_grpc
from services.agent.citations import CitationStream, cap_answer, marker_indexes
from services.agent.config import AgentSettings
from services.agent.events import AgentEvent, AnswerDelta, AnswerFinished, Citation, ToolCall
from services.agent.extractive import ExtractiveAnswerer, is_decline, names_nowhere
from services.agent.models import RunBoundModel, make_model, model_settings
from services.agent.models.llm import Endpoint
from services.agent.prompt import INSTRUCTIONS, build_input
from services.agent.search_query import search_query
from services.agent.sessions.model import Turn
from services.agent.tools import AskContext, Prefetched, retrieval_tool, retrieval_tool_with_section
from services.common.contract_limits import DEFAULT_TOP_K
from services.common.errors import DeadlineExceeded, GlossatorError, Reason, Unavailable
from services.common.logging import get_logger

log = get_logger("glossator.agent")

# Model calls per run: retrieve, maybe retrieve again, answer; more means the model is looping.
MAX_TURNS = 4
# How long a cancelled run may take to unwind (its Search call is cancelled with it).
_CANCEL_GRACE_S = 2.0


@dataclass(frozen=True, kw_only=True)
class AnswerRequest:
    """A validated question and everything that frames it."""

    question: str
    collection: str = "default"
    top_k: int = DEFAULT_TOP_K
    min_relevance: float | None = None
    selected_text: str = ""
    user_context: Mapping[str, str] = field(default_factory=dict)
    # Earlier turns of the session, oldest first (already cut to the turns the model should see).
    history: Sequence[Turn] = ()
    # A search already made for the question (a cacheable question's cache key).
    prefetched: Prefetched | None = None


@dataclass(frozen=True, kw_only=True)
class Answerer:
    """What every run shares: the agent (model, instructions, tool), the retrieval stub, the limits.

    `from_settings` blocks while the offline model loads its embedding model: call it at start-up.
    """

    agent: Agent[AskContext]
    model_name: str
    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    # Answers from the retrieved passages alone: the offline model's answerer, and in every mode
    # the judge of whether the passages answer and the grounded stand-in for answers that fail.
    extractive: ExtractiveAnswerer = field(default_factory=ExtractiveAnswerer)
    # The LLM endpoint, to explain its failures (None in offline mode).
    endpoint: Endpoint | None = None
    max_answer_chars: int = 2000
    retrieval_timeout_s: float = 10.0
    tracing_disabled: bool = True

    @classmethod
    def from_settings(
        cls, settings: AgentSettings, retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    ) -> Answerer:
        extractive = ExtractiveAnswerer()
        extractive.warm_up()
        model, name = make_model(settings, extractive)
        endpoint = Endpoint(settings.llm_base_url, settings.llm_model) if settings.llm_base_url else None
        tool = retrieval_tool_with_section if settings.tool_section_filter else retrieval_tool
        return cls(
            agent=build_agent(model, model_settings(settings), tool),
            model_name=name,
            retrieval=retrieval,
            extractive=extractive,
            endpoint=endpoint,
            max_answer_chars=settings.max_answer_chars,
            retrieval_timeout_s=settings.retrieval_timeout_seconds,
            tracing_disabled=not settings.tracing_export,
        )

    def model_for(self, context: AskContext) -> Model | None:
        """The model of one run, if not the agent's: bound to the run's resolved search query and
        to the passages its searches keep."""
        model = self.agent.model
        return model.for_run(context) if isinstance(model, RunBoundModel) else None

    async def extractive_answer(self, context: AskContext) -> str:
        """The extractive answer (or decline) from one run's passages."""
        return await self.extractive.answer(
            context.search_query, context.passages.values(), searched=context.searched
        )

    def failure(self, error: BaseException) -> GlossatorError | None:
        return self.endpoint.failure(error) if self.endpoint is not None else None


def build_agent(
    model: Model, settings: ModelSettings | None = None, tool: FunctionTool = retrieval_tool
) -> Agent[AskContext]:
    return Agent[AskContext](
        name="glossator",
        instructions=INSTRUCTIONS,
        model=model,
        model_settings=settings or ModelSettings(),
        tools=[tool],
    )


async def run_answer(
    request: AnswerRequest, answerer: Answerer, *, deadline: float
) -> AsyncIterator[AgentEvent]:
    """Answers one question; `deadline` is the time.monotonic() instant the whole run must end by.

    Raises DeadlineExceeded when the deadline passes first, FailedPrecondition when the LLM
    endpoint refuses the request, Unavailable when the model fails (an endpoint down or answering
    garbage, a model that loops). An empty answer is left for the caller's checks to replace.
    """
    pending: list[AgentEvent] = []
    context = AskContext(
        retrieval=answerer.retrieval,
        deadline=deadline,
        collection=request.collection,
        search_query=search_query(
            request.question, selected_text=request.selected_text, history=request.history
        ),
        prefetched=request.prefetched,
        top_k=request.top_k,
        min_relevance=request.min_relevance,
        call_timeout_s=answerer.retrieval_timeout_s,
        emit=pending.append,
    )
    citations = CitationStream(context.is_known)
    started = time.perf_counter()
    result = Runner.run_streamed(
        answerer.agent,
        build_input(
            request.question,
            history=request.history,
            selected_text=request.selected_text,
            user_context=request.user_context,
        ),
        context=context,
        max_turns=MAX_TURNS,
        run_config=RunConfig(
            model=answerer.model_for(context),
            workflow_name="glossator.answer",
            tracing_disabled=answerer.tracing_disabled,
        ),
    )
    stream = result.stream_events()
    truncated = False
    try:
        while (event := await _next_event(stream, deadline, answerer, citations.text)) is not None:
            ready = [*pending, *_translate(event, citations, context)]
            pending.clear()
            for domain_event in ready:
                yield domain_event
            if len(citations.text) > answerer.max_answer_chars:
                truncated = True
                break
        for domain_event in [*pending, *_citation_events(*citations.flush(), context)]:
            yield domain_event
    except GlossatorError:
        for domain_event in pending:  # the client sees what failed (a ToolError) before the status
            yield domain_event
        raise
    finally:
        await _stop(result, stream)
    answer, cut = cap_answer(citations.text, answerer.max_answer_chars)
    # A bracketed list of numbers too long to be held as a possible marker while it streams (a
    # code sample's "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]") reaches the text unfiltered: it cites nothing.
    known = range(1, len(context.sources) + 1)
    cited = [context.sources[n - 1] for n in sorted(marker_indexes(answer)) if n in known]
    elapsed_ms = (time.perf_counter() - started) * 1000
    yield AnswerFinished(
        answer=answer,
        cited=cited,
        sources=list(context.sources),
        steps=list(context.steps),
        model=answerer.model_name,
        generation_ms=max(0.0, elapsed_ms - context.retrieval_ms),
        retrieval_ms=context.retrieval_ms,
        not_covered=not cited or is_decline(answer),
        truncated=truncated or cut,
        chunk_texts={p.chunk_id: p.text for p in context.passages.values()},
        search_query=context.search_query,
        fallback=_once(lambda: answerer.extractive_answer(context)),
        unmentioned=lambda: names_nowhere(context.search_query, list(context.passages.values()), rare=True),
    )


async def _next_event(
    stream: AsyncIterator[StreamEvent], deadline: float, answerer: Answerer, streamed: str
) -> StreamEvent | None:
    """The SDK's next event (None at the end), with the run's failures turned into domain errors.

    A failure after part of the answer was streamed says that the partial answer is void.
    """
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            return await anext(stream)
    except StopAsyncIteration:
        return None
    except Exception as error:
        failure = _failure(error, answerer)
        if not streamed:
            raise failure from error
        raise Unavailable(
            f"the answer was cut off and the partial answer streamed so far is void: {failure.message}",
            reason=Reason.ANSWER_VOID,
            metadata={"cause": failure.code.name},
            retryable=False,
        ) from error


def _failure(error: Exception, answerer: Answerer) -> GlossatorError:
    """The domain error for whatever stopped a run (a tool's own, which the SDK wraps, included)."""
    cause: BaseException | None = error
    while cause is not None:
        if isinstance(cause, GlossatorError):
            return cause
        cause = cause.__cause__
    if isinstance(error, TimeoutError):
        return DeadlineExceeded("the model did not finish its answer before the deadline")
    if isinstance(error, MaxTurnsExceeded):
        return Unavailable(f"the model did not settle on an answer within {MAX_TURNS} turns")
    if isinstance(error, ModelBehaviorError):
        # The SDK's own words about what the model did wrong (an unknown tool, broken JSON).
        return Unavailable(f"the model {answerer.model_name!r} misbehaved: {error}")
    endpoint_failure = answerer.failure(error)
    if endpoint_failure is not None:
        return endpoint_failure
    # The model is a dependency like any other: whatever broke it, the caller gets a clear status
    # (the details go to the log, not to the caller).
    log.warning("model_run_failed", exc_info=True)
    return Unavailable(f"the model {answerer.model_name!r} failed ({type(error).__name__})")


def _once(produce: Callable[[], Awaitable[str]]) -> Callable[[], Awaitable[str]]:
    """`produce`, run at most once: later calls return its first result."""
    results: list[str] = []

    async def once() -> str:
        if not results:
            results.append(await produce())
        return results[0]

    return once


def _translate(event: StreamEvent, citations: CitationStream, context: AskContext) -> Iterator[AgentEvent]:
    if isinstance(event, RunItemStreamEvent) and event.name == "tool_called":
        call = event.item.raw_item
        name, call_id, arguments = (_field(call, key) for key in ("name", "call_id", "arguments"))
        yield ToolCall(name=name, call_id=call_id, arguments=arguments)
    elif isinstance(event, RawResponsesStreamEvent) and event.data.type == "response.output_text.delta":
        yield from _citation_events(*citations.feed(event.data.delta), context)


def _citation_events(text: str, new_indexes: list[int], context: AskContext) -> Iterator[AgentEvent]:
    if text:
        yield AnswerDelta(text=text)
    for index in new_indexes:
        source = context.source(index)
        if source is not None:
            yield Citation(index=index, source=source)


def _field(item: object, key: str) -> str:
    value = item.get(key) if isinstance(item, dict) else getattr(item, key, None)
    return str(value or "")


async def _stop(result: RunResultStreaming, stream: AsyncIterator[StreamEvent]) -> None:
    """Cancels the run if it is still going and waits (briefly) until its tasks have unwound."""
    if not result.is_complete:
        result.cancel()
    task = result.run_loop_task
    if task is not None and not task.done():
        await asyncio.wait({task}, timeout=_CANCEL_GRACE_S)
    await stream.aclose()
