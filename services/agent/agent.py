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
from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from dataclasses import dataclass, field

from agents import Agent, MaxTurnsExceeded, ModelSettings, RunConfig, Runner
from agents.models.interface import Model
from agents.result import RunResultStreaming
from agents.stream_events import RawResponsesStreamEvent, RunItemStreamEvent, StreamEvent
from openai import APITimeoutError

from glossator.v1 import retrieval_pb2_grpc
from services.agent.citations import CitationStream, cap_answer, marker_indexes
from services.agent.config import AgentSettings
from services.agent.events import AgentEvent, AnswerDelta, AnswerFinished, Citation, ToolCall
from services.agent.models import OfflineExtractiveModel, make_model, model_settings
from services.agent.prompt import INSTRUCTIONS, build_input
from services.agent.sessions.model import Turn
from services.agent.tools import AskContext, retrieval_tool
from services.common.errors import DeadlineExceeded, GlossatorError, Unavailable
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
    top_k: int = 5
    min_relevance: float | None = None
    selected_text: str = ""
    user_context: Mapping[str, str] = field(default_factory=dict)
    # Earlier turns of the session, oldest first (already cut to the turns the model should see).
    history: Sequence[Turn] = ()


@dataclass(frozen=True, kw_only=True)
class Answerer:
    """What every run shares: the agent (model, instructions, tool), the retrieval stub, the limits.

    `from_settings` blocks while the offline model loads its embedding model: call it at start-up.
    """

    agent: Agent[AskContext]
    model_name: str
    retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    max_answer_chars: int = 2000
    retrieval_timeout_s: float = 10.0
    tracing_disabled: bool = True

    @classmethod
    def from_settings(
        cls, settings: AgentSettings, retrieval: retrieval_pb2_grpc.RetrievalServiceStub
    ) -> Answerer:
        model, name = make_model(settings)
        if isinstance(model, OfflineExtractiveModel):
            model.warm_up()
        return cls(
            agent=build_agent(model, model_settings(settings)),
            model_name=name,
            retrieval=retrieval,
            max_answer_chars=settings.max_answer_chars,
            retrieval_timeout_s=settings.retrieval_timeout_seconds,
            tracing_disabled=not settings.tracing_export,
        )

    def model_for(self, context: AskContext) -> Model | None:
        """The model of one run, if not the agent's: the offline model then ranks with the
        sentence scores this run's searches return."""
        model = self.agent.model
        if isinstance(model, OfflineExtractiveModel):
            return model.reading(context.sentence_similarity)
        return None


def build_agent(model: Model, settings: ModelSettings | None = None) -> Agent[AskContext]:
    return Agent[AskContext](
        name="glossator",
        instructions=INSTRUCTIONS,
        model=model,
        model_settings=settings or ModelSettings(),
        tools=[retrieval_tool],
    )


async def run_answer(
    request: AnswerRequest, answerer: Answerer, *, deadline: float
) -> AsyncIterator[AgentEvent]:
    """Answers one question; `deadline` is the time.monotonic() instant the whole run must end by.

    Raises DeadlineExceeded when the deadline passes first, and Unavailable when the model fails
    (an endpoint down or answering garbage, a model that loops or answers nothing).
    """
    pending: list[AgentEvent] = []
    context = AskContext(
        retrieval=answerer.retrieval,
        deadline=deadline,
        collection=request.collection,
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
        while (event := await _next_event(stream, deadline)) is not None:
            ready = [*pending, *_translate(event, citations, context)]
            pending.clear()
            for domain_event in ready:
                yield domain_event
            if len(citations.text) > answerer.max_answer_chars:
                truncated = True
                break
        for domain_event in [*pending, *_citation_events(*citations.flush(), context)]:
            yield domain_event
    finally:
        await _stop(result, stream)
    answer, cut = cap_answer(citations.text, answerer.max_answer_chars)
    if not answer:
        raise Unavailable(f"the model {answerer.model_name!r} returned an empty answer")
    cited = [context.sources[n - 1] for n in sorted(marker_indexes(answer))]
    elapsed_ms = (time.perf_counter() - started) * 1000
    yield AnswerFinished(
        answer=answer,
        cited=cited,
        sources=list(context.sources),
        steps=list(context.steps),
        model=answerer.model_name,
        generation_ms=max(0.0, elapsed_ms - context.retrieval_ms),
        retrieval_ms=context.retrieval_ms,
        not_covered=not cited,
        truncated=truncated or cut,
    )


async def _next_event(stream: AsyncIterator[StreamEvent], deadline: float) -> StreamEvent | None:
    """The SDK's next event (None at the end), with the run's failures turned into domain errors."""
    try:
        async with asyncio.timeout(max(0.0, deadline - time.monotonic())):
            return await anext(stream)
    except StopAsyncIteration:
        return None
    except (TimeoutError, APITimeoutError) as error:
        raise DeadlineExceeded("the model did not finish its answer before the deadline") from error
    except MaxTurnsExceeded as error:
        raise Unavailable(f"the model did not settle on an answer within {MAX_TURNS} turns") from error
    except GlossatorError:
        raise
    except Exception as error:
        # The model is a dependency like any other: whatever broke it, the caller gets a clear status.
        log.warning("model_run_failed", exc_info=True)
        raise Unavailable(f"the model failed: {type(error).__name__}: {error}") from error


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
