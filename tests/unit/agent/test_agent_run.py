"""run_answer with scripted models: the event sequence, tool failures, history, cancellation, limits.

The model is the SDK's own ScriptedModel; the retrieval tool talks to a real gRPC server on
loopback (tests/unit/agent/fake_retrieval.py).
"""

from __future__ import annotations

import asyncio
import json
import time
from datetime import UTC, datetime

import httpx
import openai
import pytest
from agents.testing import ModelStep, ScriptedModel, assistant_message, function_call
from agents.tool_context import ToolContext
from openai.types.responses import Response, ResponseCompletedEvent, ResponseTextDeltaEvent

from services.agent.agent import Answerer, AnswerRequest, build_agent, run_answer
from services.agent.events import (
    AnswerDelta,
    AnswerFinished,
    Citation,
    RetrievalResults,
    ToolCall,
    ToolError,
)
from services.agent.sessions.model import ToolCallRecord, Turn
from services.agent.tools import AskContext, retrieval_tool, retrieval_tool_with_section
from services.common.errors import DeadlineExceeded, GlossatorError, NotFound, Reason, Unavailable
from tests.unit.agent.fake_retrieval import CHUNKS, FakeRetrieval, serve_retrieval


@pytest.fixture
async def retrieval():
    servicer = FakeRetrieval()
    async with serve_retrieval(servicer) as stub:
        yield servicer, stub


def search(query: str, call_id: str = "call-1", **arguments):
    return function_call("retrieval_tool", {"query": query, **arguments}, call_id=call_id)


def answerer_for(model: ScriptedModel, stub, **limits) -> Answerer:
    return Answerer(agent=build_agent(model), model_name="scripted", retrieval=stub, **limits)


async def collect(request: AnswerRequest, answerer: Answerer, seconds: float = 10.0) -> list:
    return [event async for event in run_answer(request, answerer, deadline=time.monotonic() + seconds)]


def text_of(events: list) -> str:
    return "".join(e.text for e in events if isinstance(e, AnswerDelta))


def tool_output_seen(model: ScriptedModel) -> str:
    """What the model was given back by the tool, in its latest call."""
    outputs = [item for item in model.last_call.input if item.get("type") == "function_call_output"]
    return outputs[-1]["output"]


async def test_tool_call_then_cited_answer(retrieval):
    servicer, stub = retrieval
    model = ScriptedModel(
        [
            [search("What middleware does ROS 2 use?")],
            [assistant_message("ROS 2 uses DDS as its middleware. [1] No master process is needed. [1]")],
        ]
    )
    events = await collect(
        AnswerRequest(question="What middleware does ROS 2 use?", collection="handbook", top_k=2),
        answerer_for(model, stub),
    )

    kinds = [type(e).__name__ for e in events]
    assert kinds[:2] == ["ToolCall", "RetrievalResults"]
    assert kinds[-1] == "AnswerFinished"
    assert kinds.index("Citation") > kinds.index("AnswerDelta")
    call, results, finished = events[0], events[1], events[-1]
    assert call == ToolCall(name="retrieval_tool", call_id="call-1", arguments=call.arguments)
    assert json.loads(call.arguments)["query"] == "What middleware does ROS 2 use?"
    assert results.call_id == "call-1" and results.metadata.collection == "handbook"
    assert results.chunks[0].chunk.chunk_id == CHUNKS[1].chunk_id

    request = servicer.requests[0]
    assert (request.collection, request.top_k, request.query) == (
        "handbook",
        2,
        "What middleware does ROS 2 use?",
    )
    assert not request.HasField("min_relevance")

    # The model saw the sources numbered, with heading and URL, and cites by those numbers.
    assert tool_output_seen(model).startswith(
        f"[1] Robotics Handbook > ROS 2 Basics > Middleware ({CHUNKS[1].source_url})\nROS 2 uses"
    )
    assert text_of(events) == finished.answer
    assert [c.index for c in events if isinstance(c, Citation)] == [1]
    assert isinstance(finished, AnswerFinished)
    assert [s.chunk_id for s in finished.cited] == [CHUNKS[1].chunk_id]
    assert finished.sources[0].index == 1 and finished.sources[0].extracted_text == CHUNKS[1].text
    assert len(finished.sources) == len(results.chunks)
    assert finished.model == "scripted" and not finished.not_covered and not finished.truncated
    assert finished.steps[0].name == "retrieval_tool" and finished.steps[0].error == ""
    assert finished.steps[0].duration_ms > 0 and finished.retrieval_ms >= finished.steps[0].duration_ms
    assert finished.steps[0].output.startswith("[1] Robotics Handbook")


async def test_sources_are_numbered_across_calls_and_deduplicated(retrieval):
    _servicer, stub = retrieval
    model = ScriptedModel(
        [
            [search("ROS 2 middleware DDS", call_id="a")],  # middleware [1], nodes [2]
            [search("DDS middleware lidar", call_id="b")],  # middleware again, lidar new
            [assistant_message("Lidar point clouds go to /points. [3]")],
        ]
    )
    events = await collect(AnswerRequest(question="Where do lidar points go?"), answerer_for(model, stub))
    finished = events[-1]
    assert [s.chunk_id for s in finished.sources] == [
        CHUNKS[1].chunk_id,
        CHUNKS[0].chunk_id,
        CHUNKS[2].chunk_id,
    ]
    assert [s.index for s in finished.sources] == [1, 2, 3]
    second_output = tool_output_seen(model)
    assert second_output.startswith("[1] Robotics Handbook > ROS 2 Basics > Middleware")
    assert "\n\n[3] Robotics Handbook > Sensors > Lidar" in second_output
    assert [s.chunk_id for s in finished.cited] == [CHUNKS[2].chunk_id]
    assert [e.call_id for e in events if isinstance(e, ToolCall)] == ["a", "b"]
    assert [len(e.chunks) for e in events if isinstance(e, RetrievalResults)] == [2, 2]


async def test_the_request_top_k_and_a_section_reach_the_search(retrieval):
    servicer, stub = retrieval
    model = ScriptedModel([[search("sensors", section="Sensors")], [assistant_message("Noted. [1]")]])
    answerer = Answerer(
        agent=build_agent(model, tool=retrieval_tool_with_section), model_name="scripted", retrieval=stub
    )
    await collect(AnswerRequest(question="q", min_relevance=0.4, top_k=3), answerer)
    request = servicer.requests[0]
    assert dict(request.filters) == {"section": "Sensors"}
    assert request.top_k == 3
    assert request.min_relevance == pytest.approx(0.4)


async def test_a_section_that_finds_nothing_is_searched_again_without_it(retrieval):
    servicer, stub = retrieval
    model = ScriptedModel([[search("lidar", section="Navigation")], [assistant_message("Noted. [1]")]])
    answerer = Answerer(
        agent=build_agent(model, tool=retrieval_tool_with_section), model_name="scripted", retrieval=stub
    )
    events = await collect(AnswerRequest(question="q"), answerer)
    # (a search within one document looks for the sections a found chunk counts: not the model's)
    asked = [dict(r.filters) for r in servicer.requests if "document_id" not in r.filters]
    assert asked == [{"section": "Navigation"}, {}]
    [found] = [e for e in events if isinstance(e, RetrievalResults)]
    assert found.chunks and "lidar" in found.chunks[0].chunk.text.lower()


async def test_the_default_tool_offers_the_model_a_query_only(retrieval):
    _servicer, stub = retrieval
    model = ScriptedModel([[search("lidar")], [assistant_message("Noted. [1]")]])
    await collect(AnswerRequest(question="q"), answerer_for(model, stub))
    (tool,) = model.first_call.tools
    assert list(tool.params_json_schema["properties"]) == ["query"]


async def run_until_failure(request: AnswerRequest, answerer: Answerer, seconds: float = 10.0):
    """The events a run yielded before it raised, and what it raised."""
    events = []
    with pytest.raises(GlossatorError) as caught:
        async for event in run_answer(request, answerer, deadline=time.monotonic() + seconds):
            events.append(event)
    return events, caught.value


async def test_retrieval_down_ends_the_run_unavailable_after_the_tool_error_event(retrieval):
    servicer, stub = retrieval
    servicer.mode = "unavailable"
    model = ScriptedModel([[search("nodes")], [assistant_message("I cannot search the book right now.")]])
    events, error = await run_until_failure(
        AnswerRequest(question="What is a node?"), answerer_for(model, stub)
    )

    assert [type(e).__name__ for e in events] == ["ToolCall", "ToolError"]
    assert events[1].call_id == "call-1"
    assert events[1].message.startswith("retrieval failed: UNAVAILABLE: retrieval backend is down")
    assert isinstance(error, Unavailable) and error.reason == Reason.DEPENDENCY_UNAVAILABLE
    assert error.metadata == {"service": "retrieval"}
    assert len(model.calls) == 1, "the model is not asked to answer without passages"


async def test_a_missing_collection_ends_the_run_not_found(retrieval):
    servicer, stub = retrieval
    servicer.mode = "no-collection"
    model = ScriptedModel([[search("nodes")], [assistant_message("unused")]])
    request = AnswerRequest(question="What is a node?", collection="atlas")
    _events, error = await run_until_failure(request, answerer_for(model, stub))
    assert isinstance(error, NotFound) and "'atlas'" in error.message


async def test_a_failure_after_passages_were_found_is_told_to_the_model(retrieval):
    servicer, stub = retrieval
    model = ScriptedModel(
        [
            [search("nodes")],
            [function_call("retrieval_tool", {"query": "topics"}, call_id="call-2")],
            [assistant_message("Nodes are processes [1].")],
        ]
    )
    answerer = answerer_for(model, stub)
    run = run_answer(AnswerRequest(question="What is a node?"), answerer, deadline=time.monotonic() + 10)
    events = []
    async for event in run:
        events.append(event)
        if isinstance(event, RetrievalResults):
            servicer.mode = "unavailable"
    assert tool_output_seen(model).startswith("retrieval failed: UNAVAILABLE")
    assert events[-1].answer == "Nodes are processes [1]."


async def test_search_gets_the_remaining_deadline_and_times_out_unavailable(retrieval):
    servicer, stub = retrieval
    servicer.mode = "hang"
    model = ScriptedModel([[search("nodes")], [assistant_message("I cannot search the book right now.")]])
    started = time.monotonic()
    events, error = await run_until_failure(
        AnswerRequest(question="q"), answerer_for(model, stub, retrieval_timeout_s=0.3), seconds=5
    )
    assert time.monotonic() - started < 2
    # At most the 0.3 s given, give or take the rounding of the grpc-timeout header (seen: 0.30015).
    assert 0 < servicer.time_remaining[0] <= 0.3 + 0.005
    assert [e.message.split(";")[0] for e in events if isinstance(e, ToolError)] == [
        "retrieval failed: DEADLINE_EXCEEDED: Deadline Exceeded"
    ]
    assert isinstance(error, Unavailable), "retrieval was too slow; the request still had time"


async def test_citation_to_an_unretrieved_source_is_dropped(retrieval):
    _servicer, stub = retrieval
    answer = "Nodes publish to topics [1]. Nodes are written in Fortran [7]. They restart alone [1, 9]."
    model = ScriptedModel([[search("node topics")], [assistant_message(answer)]])
    events = await collect(AnswerRequest(question="What is a node?"), answerer_for(model, stub))
    finished = events[-1]
    assert (
        finished.answer
        == "Nodes publish to topics [1]. Nodes are written in Fortran. They restart alone [1]."
    )
    assert text_of(events) == finished.answer
    assert [e.index for e in events if isinstance(e, Citation)] == [1]
    assert [s.index for s in finished.cited] == [1]


async def test_a_long_bracketed_list_streamed_in_pieces_cites_nothing(retrieval):
    """A code sample's list is too long to be held back as a possible marker, so it reaches the
    answer as written; its numbers name no source (0, 5-9 here), and the answer still finishes."""
    _servicer, stub = retrieval
    answer = "Nodes publish to topics: print(ids) # [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] and so on [1]."

    async def streamed(_call):
        pieces = [answer[i : i + 3] for i in range(0, len(answer), 3)]
        for n, piece in enumerate(pieces):
            yield ResponseTextDeltaEvent(
                type="response.output_text.delta",
                item_id="m",
                output_index=0,
                content_index=0,
                delta=piece,
                logprobs=[],
                sequence_number=n,
            )
        response = Response.model_construct(id="r", output=[assistant_message(answer)], usage=None)
        yield ResponseCompletedEvent.model_construct(type="response.completed", response=response)

    model = ScriptedModel([[search("node topics")], ModelStep.stream(streamed)])
    events = await collect(AnswerRequest(question="What is a node?"), answerer_for(model, stub))
    finished = events[-1]
    assert "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]" in finished.answer
    assert [s.index for s in finished.cited] == [1]


async def test_history_selected_text_and_user_context_are_in_the_model_input(retrieval):
    _servicer, stub = retrieval
    first = ScriptedModel([[search("lidar")], [assistant_message("A lidar times laser pulses. [1]")]])
    events = await collect(AnswerRequest(question="How does a lidar work?"), answerer_for(first, stub))
    finished = events[-1]
    turn = Turn(
        query_id="q1",
        query="How does a lidar work?",
        answer=finished.answer,
        created_at=datetime.now(UTC),
        sources=finished.cited,
        tool_calls=[
            ToolCallRecord(name=s.name, arguments=s.arguments, output=s.output) for s in finished.steps
        ],
    )

    second = ScriptedModel([[search("lidar rate")], [assistant_message("Ten hertz. [1]")]])
    request = AnswerRequest(
        question="And how often does it publish?",
        history=[turn],
        selected_text="The Velodyne VLP-16 spins sixteen lasers.\nQuestion: not this one",
        user_context={"chapter": "Sensors", "page_url": "https://example.org/handbook/2"},
    )
    await collect(request, answerer_for(second, stub))
    items = second.first_call.input
    assert items[0] == {"role": "user", "content": "How does a lidar work?"}
    assert items[1]["role"] == "assistant"
    assert (
        items[1]["content"]
        == '(Earlier search: retrieval_tool {"query":"lidar"})\nA lidar times laser pulses.'
    )
    last = items[2]["content"]
    assert items[2]["role"] == "user"
    assert "- chapter: Sensors\n- page_url: https://example.org/handbook/2" in last
    assert "> The Velodyne VLP-16 spins sixteen lasers.\n> Question: not this one" in last
    assert last.endswith("\n\nQuestion: And how often does it publish?")
    assert "retrieval_tool" in second.first_call.system_instructions


async def test_answer_is_capped_on_a_sentence_boundary(retrieval):
    _servicer, stub = retrieval
    sentence = "Nodes communicate by publishing and subscribing to named topics. [1] "
    model = ScriptedModel([[search("nodes")], [assistant_message(sentence * 10)]])
    events = await collect(AnswerRequest(question="q"), answerer_for(model, stub, max_answer_chars=200))
    finished = events[-1]
    assert finished.truncated
    assert len(finished.answer) <= 200 and finished.answer.endswith("topics. [1]")
    assert finished.answer.count("[1]") == 2


async def test_model_errors_become_unavailable(retrieval):
    _servicer, stub = retrieval
    request = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")
    down = ScriptedModel([openai.APIConnectionError(request=request)])
    with pytest.raises(Unavailable, match=r"the model 'scripted' failed \(APIConnectionError\)"):
        await collect(AnswerRequest(question="q"), answerer_for(down, stub))

    unknown_tool = ScriptedModel([[function_call("shell", {"cmd": "ls"}, call_id="x")]])
    with pytest.raises(Unavailable, match="shell"):
        await collect(AnswerRequest(question="q"), answerer_for(unknown_tool, stub))

    looping = ScriptedModel([[search(f"q{i}", call_id=f"c{i}")] for i in range(4)])
    with pytest.raises(Unavailable, match="within 4 turns"):
        await collect(AnswerRequest(question="q"), answerer_for(looping, stub))

    # An empty answer is not an error of the run: the answer checks replace it.
    empty = ScriptedModel([[search("nodes")], [assistant_message("")]])
    finished = (await collect(AnswerRequest(question="q"), answerer_for(empty, stub)))[-1]
    assert isinstance(finished, AnswerFinished) and finished.answer == ""


async def test_a_hanging_model_hits_the_deadline(retrieval):
    _servicer, stub = retrieval

    async def never(_call):
        await asyncio.sleep(3600)

    model = ScriptedModel([ModelStep.respond(never)])
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="deadline"):
        await collect(AnswerRequest(question="q"), answerer_for(model, stub), seconds=0.5)
    assert time.monotonic() - started < 1.5


async def test_closing_the_stream_cancels_the_search_in_flight(retrieval):
    servicer, stub = retrieval
    servicer.mode = "hang"
    model = ScriptedModel([[search("nodes")], [assistant_message("unreachable")]])
    events = run_answer(
        AnswerRequest(question="q"), answerer_for(model, stub), deadline=time.monotonic() + 30
    )
    assert isinstance(await anext(events), ToolCall)
    await asyncio.wait_for(servicer.started.wait(), 5)
    await events.aclose()
    await asyncio.wait_for(servicer.cancelled.wait(), 2)
    assert model.remaining_steps == 1  # the model was never asked to answer


async def test_cancelling_the_consumer_task_cancels_the_search_in_flight(retrieval):
    servicer, stub = retrieval
    servicer.mode = "hang"
    model = ScriptedModel([[search("nodes")], [assistant_message("unreachable")]])
    seen: list = []

    async def consume():
        async for event in run_answer(
            AnswerRequest(question="q"), answerer_for(model, stub), deadline=time.monotonic() + 30
        ):
            seen.append(event)

    task = asyncio.create_task(consume())
    await asyncio.wait_for(servicer.started.wait(), 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(servicer.cancelled.wait(), 2)
    assert [type(e) for e in seen] == [ToolCall]


async def test_closing_the_stream_mid_answer_stops_the_model(retrieval):
    _servicer, stub = retrieval
    stopped = asyncio.Event()

    async def slow_answer(_call):
        try:
            for n in range(1000):
                yield ResponseTextDeltaEvent(
                    type="response.output_text.delta",
                    item_id="m",
                    output_index=0,
                    content_index=0,
                    delta=f"word{n} ",
                    logprobs=[],
                    sequence_number=n,
                )
                await asyncio.sleep(0.01)
            yield ResponseCompletedEvent.model_construct(type="response.completed")
        finally:
            stopped.set()

    model = ScriptedModel([[search("nodes")], ModelStep.stream(slow_answer)])
    events = run_answer(
        AnswerRequest(question="q"), answerer_for(model, stub), deadline=time.monotonic() + 30
    )
    seen = []
    async for event in events:
        seen.append(event)
        if isinstance(event, AnswerDelta):
            break
    await events.aclose()
    await asyncio.wait_for(stopped.wait(), 2)
    assert [type(e) for e in seen] == [ToolCall, RetrievalResults, AnswerDelta]


def tool_context(state: AskContext, arguments: str) -> ToolContext:
    return ToolContext(state, tool_name="retrieval_tool", tool_call_id="c9", tool_arguments=arguments)


async def test_tool_fails_fast_once_the_deadline_has_passed(retrieval):
    servicer, stub = retrieval
    emitted = []
    state = AskContext(retrieval=stub, deadline=time.monotonic() - 1, emit=emitted.append)
    arguments = '{"query": "nodes"}'
    with pytest.raises(DeadlineExceeded):
        await retrieval_tool.on_invoke_tool(tool_context(state, arguments), arguments)
    assert servicer.requests == []
    assert [type(e) for e in emitted] == [ToolError]
    assert emitted[0].message.startswith("retrieval failed: the request's deadline has passed")


async def test_malformed_arguments_are_the_models_to_fix(retrieval):
    servicer, stub = retrieval
    emitted = []
    state = AskContext(retrieval=stub, deadline=time.monotonic() + 5, emit=emitted.append)
    arguments = '{"query": ["nodes"]}'
    output = await retrieval_tool.on_invoke_tool(tool_context(state, arguments), arguments)
    assert output.startswith("invalid arguments for retrieval_tool")
    assert servicer.requests == []
    assert [type(e) for e in emitted] == [ToolError]
    assert state.steps[0].arguments == arguments
    # The client is told what was wrong; only the model is told what to do about it.
    assert emitted[0].message == state.steps[0].error == output.split("; call it again")[0]
