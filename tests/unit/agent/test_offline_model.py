"""The offline extractive model: its two moves at the Model boundary, its stream, and full runs.

These use the real local embedding model (loaded once, a few seconds) and, for full runs, the real
retrieval tool against the loopback gRPC server of fake_retrieval.py.
"""

from __future__ import annotations

import json
import re
import time

import numpy as np
import pytest
from agents import ModelSettings
from agents.models.interface import ModelTracing
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage

from glossator.v1 import common_pb2
from services.agent.agent import Answerer, AnswerRequest, build_agent, run_answer
from services.agent.citations import marker_indexes
from services.agent.config import AgentSettings
from services.agent.events import AnswerDelta, AnswerFinished, Citation, RetrievalResults, ToolCall
from services.agent.extractive import (
    CANNOT_SEARCH,
    NEARBY,
    NOT_COVERED,
    NOTHING_FOUND,
    ExtractiveAnswerer,
    sentences_of,
)
from services.agent.models import OFFLINE_MODEL_NAME, OfflineExtractiveModel
from services.agent.models.offline import text_deltas
from services.agent.passages import render
from services.agent.prompt import build_input
from services.agent.tools import AskContext, failure_message, retrieval_tool
from services.common.embedding import EmbeddingCache, local_embedding_model
from tests.unit.agent.fake_retrieval import CHUNKS, FakeRetrieval, serve_retrieval


@pytest.fixture(scope="module")
def model() -> OfflineExtractiveModel:
    return OfflineExtractiveModel()


def searched(*indexes: int, failed: bool = False) -> AskContext:
    """A run whose search found CHUNKS[i] for each index (numbered 1.. in that order), or failed."""
    run = AskContext(retrieval=None, deadline=0.0)
    for i in indexes:
        run.number(common_pb2.ScoredChunk(chunk=CHUNKS[i]))
    run.searched = not failed
    return run


def tool_output(run: AskContext) -> str:
    return render(run.passages.values()) if run.searched else failure_message("UNAVAILABLE: down")


def with_output(question: str, run: AskContext, **framing) -> list:
    return [
        *build_input(question, **framing),
        {"type": "function_call", "call_id": "c1", "name": "retrieval_tool", "arguments": "{}"},
        {"type": "function_call_output", "call_id": "c1", "output": tool_output(run)},
    ]


async def answer_of(model: OfflineExtractiveModel, question: str, run: AskContext) -> str:
    """The offline model's answer in a run whose search found `run`'s passages."""
    return (await respond(model.for_run(run), with_output(question, run))).output[0].content[0].text


async def respond(model: OfflineExtractiveModel, items, tools=(retrieval_tool,)):
    return await model.get_response(
        None,
        items,
        ModelSettings(),
        list(tools),
        None,
        [],
        ModelTracing.DISABLED,
        previous_response_id=None,
        conversation_id=None,
        prompt=None,
    )


def markers(text: str) -> int:
    """Citation markers in text, each one counted (marker_indexes drops repeated numbers)."""
    return len(re.findall(r"\[\d+\]", text))


async def stream(model: OfflineExtractiveModel, items) -> list:
    return [
        event
        async for event in model.stream_response(
            None,
            items,
            ModelSettings(),
            [retrieval_tool],
            None,
            [],
            ModelTracing.DISABLED,
            previous_response_id=None,
            conversation_id=None,
            prompt=None,
        )
    ]


async def test_first_move_searches_for_the_bare_question(model):
    items = build_input(
        "How fast does the VLP-16 spin?",
        selected_text="Question: ignore me",
        user_context={"chapter": "Sensors"},
    )
    response = await respond(model, items)
    [call] = response.output
    assert isinstance(call, ResponseFunctionToolCall)
    assert call.name == "retrieval_tool" and call.call_id
    assert json.loads(call.arguments) == {"query": "How fast does the VLP-16 spin?"}
    run = AskContext(
        retrieval=None, deadline=0.0, search_query="How fast does the VLP-16 spin? Velodyne lidar"
    )
    resolved = await respond(model.for_run(run), items)
    assert json.loads(resolved.output[0].arguments) == {
        "query": "How fast does the VLP-16 spin? Velodyne lidar"
    }


async def test_a_new_question_after_history_searches_again(model):
    items = [
        *with_output("What is a node?", searched(0)),
        {"role": "assistant", "content": "A process. [1]"},
    ]
    items += build_input("What is DDS?")
    [call] = (await respond(model, items)).output
    assert json.loads(call.arguments)["query"] == "What is DDS?"


async def test_answers_with_cited_supporting_sentences(model):
    question = "How fast does the Velodyne VLP-16 spin its lasers?"
    run = searched(0, 1, 2, 3)
    response = await respond(model.for_run(run), with_output(question, run))
    [message] = response.output
    assert isinstance(message, ResponseOutputMessage)
    answer = message.content[0].text
    assert answer.startswith(
        "The Velodyne VLP-16 spins sixteen lasers at up to twenty revolutions per second. [3]"
    )
    # Every sentence is verbatim from the passage it cites.
    passages = {p.number: p.text for p in run.passages.values()}
    for sentence, number in zip(answer.split(" [")[:-1], marker_indexes(answer), strict=False):
        assert sentence.rsplit("] ", 1)[-1] in passages[number]
    assert len(answer) <= 400


async def test_says_plainly_when_the_book_does_not_cover_it(model):
    declined = await answer_of(model, "Who won the football world cup in 1954?", searched(0, 1))
    # It says so, then where the book comes closest: the passages' places, cited.
    assert declined.startswith(f"{NOT_COVERED} {NEARBY} ") and marker_indexes(declined) == [1, 2]
    assert await answer_of(model, "What is a node?", searched()) == NOTHING_FOUND
    assert await answer_of(model, "What is a node?", searched(failed=True)) == CANNOT_SEARCH
    assert (await respond(model, build_input("What is a node?"), tools=())).output[0].content[
        0
    ].text == CANNOT_SEARCH


async def test_streams_each_cited_sentence_as_a_delta_with_a_complete_event_sequence(model):
    run = searched(3, 0)
    events = await stream(model.for_run(run), with_output("What does an IMU combine?", run))
    types = [e.type for e in events]
    assert types[:4] == [
        "response.created",
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
    ]
    assert types[-4:] == [
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    deltas = [e.delta for e in events if e.type == "response.output_text.delta"]
    final = events[-1].response.output[0].content[0].text
    assert "".join(deltas) == final
    assert len(deltas) == markers(final) >= 1
    assert all(markers(delta) == 1 for delta in deltas)
    assert [e.sequence_number for e in events] == list(range(len(events)))
    assert final.startswith("An inertial measurement unit combines accelerometers and gyroscopes. [1]")


async def test_streams_a_tool_call_as_argument_events(model):
    events = await stream(model, build_input("What is a node?"))
    assert [e.type for e in events] == [
        "response.created",
        "response.output_item.added",
        "response.function_call_arguments.delta",
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    call = events[-1].response.output[0]
    assert json.loads(events[2].delta) == json.loads(call.arguments)


def test_text_deltas_are_cited_sentences_and_keep_every_character():
    text = "One two three. [1] Four five [12]\nSix."
    assert text_deltas(text) == ["One two three. [1] ", "Four five [12]\n", "Six."]
    assert text_deltas("The book does not cover this question.") == ["The book does not cover this question."]
    assert text_deltas("") == []


def test_embedding_cache_embeds_each_text_once_and_drops_the_least_recent():
    calls = []

    def embed(texts: list[str]) -> np.ndarray:
        calls.append(list(texts))
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)

    cache = EmbeddingCache(embed, max_entries=2)
    assert cache(["a", "bb", "a"]).tolist() == [[1, 1], [2, 1], [1, 1]]
    cache(["a"])  # a hit: "a" becomes the most recent
    cache(["ccc"])  # over the limit: "bb", the least recent, goes
    cache(["a", "bb"])
    assert calls == [["a", "bb"], ["ccc"], ["bb"]]


def test_sentences_skip_code_headings_and_fragments():
    text = "# Setup\nInstall the package first.\n```bash\npip install x\n```\nThen run it. Ok.\n"
    assert [sentence for _, sentence in sentences_of(text)] == ["Install the package first.", "Then run it."]


def test_a_run_keeps_its_passages_and_shows_the_model_their_rendering():
    run = searched(1, 2)
    assert [(p.number, p.heading, p.text) for p in run.passages.values()] == [
        (1, "Robotics Handbook > ROS 2 Basics > Middleware", CHUNKS[1].text),
        (2, "Robotics Handbook > Sensors > Lidar", CHUNKS[2].text),
    ]
    assert tool_output(run).startswith(
        f"[1] Robotics Handbook > ROS 2 Basics > Middleware ({CHUNKS[1].source_url})\n{CHUNKS[1].text}\n\n[2] "
    )


async def test_full_offline_run_through_the_agent_loop(model):
    servicer = FakeRetrieval()
    async with serve_retrieval(servicer) as stub:
        answerer = Answerer(agent=build_agent(model), model_name=OFFLINE_MODEL_NAME, retrieval=stub)
        request = AnswerRequest(question="Which middleware does ROS 2 use?", selected_text="DDS?")
        events = [e async for e in run_answer(request, answerer, deadline=time.monotonic() + 30)]
        off_topic = AnswerRequest(question="Who painted the Mona Lisa portrait?")
        unanswered = [e async for e in run_answer(off_topic, answerer, deadline=time.monotonic() + 30)]

    assert servicer.requests[0].query == "Which middleware does ROS 2 use? DDS?"  # with the selection
    assert [type(e) for e in events[:2]] == [ToolCall, RetrievalResults]
    finished = events[-1]
    deltas = [e.text for e in events if isinstance(e, AnswerDelta)]
    assert "".join(deltas) == finished.answer and len(deltas) == markers(finished.answer)
    assert isinstance(finished, AnswerFinished) and finished.model == "offline-extractive"
    assert finished.answer.startswith("ROS 2 uses the Data Distribution Service (DDS) as its middleware. [1]")
    assert finished.cited[0].chunk_id == CHUNKS[1].chunk_id and not finished.not_covered
    assert [e.index for e in events if isinstance(e, Citation)] == marker_indexes(finished.answer)
    assert unanswered[-1].not_covered
    assert unanswered[-1].answer.startswith((NOT_COVERED, NOTHING_FOUND))


async def test_with_sentence_scores_from_search_the_answer_needs_no_embedding(model):
    def refuse(texts: list[str]) -> np.ndarray:
        raise AssertionError(f"embedded {texts} although Search scored every sentence")

    offline = OfflineExtractiveModel(ExtractiveAnswerer(embed=refuse))
    request = AnswerRequest(question="Which middleware does ROS 2 use?")
    async with serve_retrieval(FakeRetrieval(score_sentences=True)) as stub:
        answerer = Answerer(agent=build_agent(offline), model_name=OFFLINE_MODEL_NAME, retrieval=stub)
        scored = [e async for e in run_answer(request, answerer, deadline=time.monotonic() + 30)][-1]
    async with serve_retrieval(FakeRetrieval()) as stub:
        answerer = Answerer(agent=build_agent(model), model_name=OFFLINE_MODEL_NAME, retrieval=stub)
        embedded = [e async for e in run_answer(request, answerer, deadline=time.monotonic() + 30)][-1]
    assert scored.answer == embedded.answer
    assert scored.answer.startswith("ROS 2 uses the Data Distribution Service (DDS) as its middleware. [1]")


async def test_answerer_without_an_endpoint_is_offline_and_loaded_up_front():
    async with serve_retrieval(FakeRetrieval()) as stub:
        answerer = Answerer.from_settings(AgentSettings(llm_base_url="", max_answer_chars=500), stub)
    assert answerer.model_name == OFFLINE_MODEL_NAME and answerer.max_answer_chars == 500
    assert isinstance(answerer.agent.model, OfflineExtractiveModel)
    assert local_embedding_model.cache_info().currsize == 1  # loaded at start-up, not on first use
