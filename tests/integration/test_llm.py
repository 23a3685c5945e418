"""The LLM answer path against a real model: llama-cpp-python's server with Qwen2.5-Coder-0.5B.

Start it with `../shared/tools/test-llm start` (port 8081, or GLOSSATOR_TEST_LLM_URL); without it
these tests skip, except in CI, which starts it and requires them. The suite runs with policy
`enforce` and temperature 0 (greedy decoding: the same answers on every run of one machine).
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from prometheus_client import REGISTRY

from glossator.v1 import agent_pb2, retrieval_pb2
from services.agent.citations import marker_indexes
from services.agent.models.probe import LLM_HEALTH_SERVICE
from services.agent.models.textguard import find_leaks
from services.agent.prompt import INSTRUCTIONS
from services.commands.connect import error_info
from services.commands.ingest import async_iter, ingest_requests
from services.common.errors import Reason
from services.retrieval.ingest import read_folder
from tests.conftest import LlmServer, running_suite, suite_settings
from tests.integration.test_retrieval import BASE_URL, ROOT

pytestmark = pytest.mark.llm

TEST_LLM = ROOT.parent / "shared" / "tools" / "test-llm"
# A question to a 0.5B model on 2 CPU cores takes 5-40 s.
TIMEOUT_S = 240


def llm_overrides(server: LlmServer, **overrides) -> dict:
    return {
        "llm_base_url": server.base_url,
        "llm_model": server.model,
        "llm_api_key": "sk-local",
        "llm_temperature": 0.0,
        "validation_policy": "enforce",
        **overrides,
    }


async def ingest_docs(suite) -> None:
    options = retrieval_pb2.IngestOptions(base_url=BASE_URL)
    async for _ in suite.retrieval.Ingest(ingest_requests(options, async_iter(read_folder(ROOT / "docs")))):
        pass


@pytest.fixture(scope="module")
async def llm_book(llm_server: LlmServer, tmp_path_factory):
    """The suite answering with the real model, the project's docs ingested."""
    settings = suite_settings(tmp_path_factory.mktemp("llm-suite"), **llm_overrides(llm_server))
    async with running_suite(settings) as suite:
        await ingest_docs(suite)
        yield suite


async def ask(stub, **fields) -> tuple[list[agent_pb2.AskStreamResponse], agent_pb2.Response]:
    events = [e async for e in stub.AskStream(agent_pb2.AskRequest(**fields), timeout=TIMEOUT_S)]
    assert events[-1].HasField("completed")
    return events, events[-1].completed.response


def searched(events) -> list[str]:
    return [json.loads(e.tool_call.arguments)["query"] for e in events if e.HasField("tool_call")]


def retrieved_urls(events) -> set[str]:
    return {c.chunk.source_url for e in events if e.HasField("retrieval") for c in e.retrieval.chunks}


def assert_cited_and_grounded(events, response: agent_pb2.Response) -> None:
    """Retrieved, every marker names a listed source, grounded, and nothing leaked."""
    assert retrieved_urls(events)
    numbers = marker_indexes(response.answer)
    assert numbers, response.answer
    assert sorted(numbers) == [source.index for source in response.sources]
    assert response.grounding.is_grounded, (response.answer, list(response.validation.notes))
    assert response.grounding.status in (
        agent_pb2.VALIDATION_STATUS_VALIDATED,
        agent_pb2.VALIDATION_STATUS_REPLACED,
    )
    streamed = "".join(e.answer_delta.text for e in events if e.HasField("answer_delta"))
    assert not find_leaks(streamed, INSTRUCTIONS) and not find_leaks(response.answer, INSTRUCTIONS)
    assert not response.not_covered


@pytest.mark.parametrize(
    "question",
    [
        "How does Glossator check that an answer is grounded?",
        "What does the retrieval service do with a document whose content has not changed?",
        "Which search modes does Search support?",
    ],
)
async def test_answerable_questions_are_retrieved_cited_and_grounded(llm_book, llm_server, question):
    events, response = await ask(llm_book.agent, query=question)
    assert response.model in (llm_server.model, "offline-extractive")
    assert searched(events)[0].startswith(question)
    assert_cited_and_grounded(events, response)


async def test_a_follow_up_is_searched_with_the_question_it_follows(llm_book):
    _, first = await ask(llm_book.agent, query="What does the validation service check?", user_id="fu")
    events, second = await ask(
        llm_book.agent, query="And how are its claims split?", user_id="fu", session_id=first.session_id
    )
    assert searched(events)[0].startswith("What does the validation service check? And how are its claims")
    assert any("validation" in url for url in retrieved_urls(events))
    assert_cited_and_grounded(events, second)


async def test_a_selected_text_question_searches_the_selection(llm_book):
    selection = "Unchanged documents are skipped: their content hash matches what is stored."
    events, response = await ask(llm_book.agent, query="Explain this", selected_text=selection)
    assert searched(events)[0].startswith(f"Explain this {selection}")
    assert any("ingestion" in url for url in retrieved_urls(events))
    assert_cited_and_grounded(events, response)


async def test_an_unanswerable_question_is_declined(llm_book):
    events, response = await ask(llm_book.agent, query="What is the capital of Peru?")
    assert searched(events), "retrieval always happens"
    assert response.not_covered, response.answer
    assert response.validation.is_refusal, "a decline, even one naming the sections nearby"
    # It may cite where the book comes closest; every citation is a retrieved chunk.
    assert response.validation.citations_valid == response.validation.citations_found
    assert "Lima" not in response.answer
    assert response.confidence < 0.11


def replacements() -> dict[str, float]:
    """Answers the in-process agent has replaced so far, by reason."""
    return {
        sample.labels["reason"]: sample.value
        for metric in REGISTRY.collect()
        if metric.name == "glossator_answers_replaced"
        for sample in metric.samples
        if sample.name.endswith("_total")
    }


async def test_four_questions_at_once_are_answered_by_the_model_in_turn_not_replaced(llm_book, llm_server):
    """Four in flight, as `glossator eval answers` asks them: llama-cpp-python's server cut every
    streaming answer short when the next request arrived, and all of them were replaced."""
    before = replacements()
    questions = [
        "How does Glossator check that an answer is grounded?",
        "What does the retrieval service do with a document whose content has not changed?",
        "Which search modes does Search support?",
        "What does the validation service check?",
    ]
    answers = await asyncio.gather(*(ask(llm_book.agent, query=q, user_id="c4") for q in questions))
    # The model wrote every answer to its end (what it streamed is there, whatever happens to it).
    for events, _ in answers:
        assert "".join(e.answer_delta.text for e in events if e.HasField("answer_delta")).strip()
    responses = [response for _, response in answers]
    replaced = [r for r in responses if r.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED]
    reasons = [note for r in replaced for note in r.validation.notes if "was replaced (" in note]
    assert len(reasons) == len(replaced), "every replacement says why"
    assert not any("(empty)" in note for note in reasons), reasons
    counted = {reason: n - before.get(reason, 0) for reason, n in replacements().items()}
    # An answer served from the response cache (a question an earlier test asked) was counted then.
    assert sum(counted.values()) == sum(1 for r in replaced if not r.cached), (counted, reasons)
    assert {r.model for r in responses} <= {llm_server.model, "offline-extractive"}


async def test_a_wrong_model_name_is_reported_by_the_health_of_the_llm(llm_server, tmp_path):
    settings = suite_settings(tmp_path, **llm_overrides(llm_server, llm_model="no-such-model"))
    async with running_suite(settings) as suite:
        health = health_pb2_grpc.HealthStub(suite.channels["agent"])
        request = health_pb2.HealthCheckRequest(service=LLM_HEALTH_SERVICE)
        for _ in range(50):
            reply = await health.Check(request, timeout=5)
            if reply.status == health_pb2.HealthCheckResponse.NOT_SERVING:
                break
            await asyncio.sleep(0.1)
        assert reply.status == health_pb2.HealthCheckResponse.NOT_SERVING
        assert (await health.Check(health_pb2.HealthCheckRequest(), timeout=5)).status == (
            health_pb2.HealthCheckResponse.SERVING
        )


async def test_a_wrong_endpoint_path_is_failed_precondition_naming_endpoint_and_model(llm_server, tmp_path):
    wrong = llm_server.base_url.removesuffix("/v1") + "/no-such-api/v1"
    settings = suite_settings(tmp_path, **llm_overrides(llm_server, llm_base_url=wrong))
    async with running_suite(settings) as suite:
        await ingest_docs(suite)
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await ask(suite.agent, query="What is a collection?")
    error = caught.value
    assert error.code() == grpc.StatusCode.FAILED_PRECONDITION
    assert wrong in error.details() and llm_server.model in error.details() and "404" in error.details()
    assert "Traceback" not in error.details() and "{" not in error.details()
    info = error_info(error)
    assert info.reason == Reason.LLM_REJECTED and info.metadata["http_status"] == "404"


async def test_a_server_killed_mid_answer_ends_the_stream_saying_the_partial_answer_is_void(tmp_path):
    port = 18093
    started = subprocess.run([str(TEST_LLM), "start", str(port)], capture_output=True, text=True, check=False)
    if started.returncode != 0:
        pytest.fail(f"could not start a second LLM server: {started.stderr[-500:]}")
    pid_file = Path(os.environ.get("GLOSSATOR_TEST_LLM_HOME", Path.home() / ".cache/glossator-test-llm"))
    pid = int((pid_file / f"server-{port}.pid").read_text())
    server = LlmServer(started.stdout.strip(), "qwen2.5-coder-0.5b-instruct")
    try:
        settings = suite_settings(tmp_path, **llm_overrides(server))
        async with running_suite(settings) as suite:
            await ingest_docs(suite)
            seen_text = False
            request = agent_pb2.AskRequest(
                query="Explain in detail every step of ingesting a Docusaurus site with Glossator."
            )
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                async for event in suite.agent.AskStream(request, timeout=TIMEOUT_S):
                    if event.HasField("answer_delta") and not seen_text:
                        seen_text = True
                        os.kill(pid, signal.SIGKILL)
    finally:
        subprocess.run([str(TEST_LLM), "stop", str(port)], check=False)
    assert seen_text, "the model streamed no text before the server was killed"
    error = caught.value
    assert error.code() == grpc.StatusCode.UNAVAILABLE
    assert "void" in error.details()
    assert error_info(error).reason == Reason.ANSWER_VOID
