"""AgentService through the real suite (offline model, real retrieval and validation services)."""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest
from agents.testing import ScriptedModel, assistant_message, function_call
from prometheus_client import REGISTRY

from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.agent.config import AgentSettings
from services.agent.server import build_server
from services.commands.connect import error_info
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.clients import make_channel
from services.common.errors import Reason
from services.retrieval.ingest import read_folder
from tests.grpc_helpers import field_violations
from tests.integration.test_retrieval import BASE_URL
from tests.unit.agent.fake_retrieval import FakeRetrieval

QUESTION = "How does Glossator check that an answer is grounded?"


async def _stream(stub, **fields) -> list[agent_pb2.AskStreamResponse]:
    return [event async for event in stub.AskStream(agent_pb2.AskRequest(**fields), timeout=60)]


async def test_ask_stream_sends_typed_events_in_order_with_cited_validated_answer(book):
    events = await _stream(book.agent, query=QUESTION, user_id="alice")
    kinds = [e.WhichOneof("event") for e in events]
    assert [e.sequence for e in events] == list(range(len(events)))
    assert kinds[0] == "started" and kinds[-1] == "completed" and kinds[-2] == "validation"
    assert kinds.index("tool_call") < kinds.index("retrieval") < kinds.index("answer_delta")
    assert "citation" in kinds
    tool_call = events[kinds.index("tool_call")].tool_call
    assert tool_call.name == "retrieval_tool" and "grounded" in tool_call.arguments

    retrieved = {c.chunk.chunk_id for e in events if e.HasField("retrieval") for c in e.retrieval.chunks}
    response = events[-1].completed.response
    streamed = "".join(e.answer_delta.text for e in events if e.HasField("answer_delta"))
    assert streamed.startswith(response.answer[:50]) and len(response.answer) <= 2000
    assert response.sources and all(s.chunk_id in retrieved for s in response.sources)
    assert all(f"[{s.index}]" in response.answer for s in response.sources)
    assert all(s.source_url.startswith(BASE_URL) for s in response.sources)
    assert response.model == "offline-extractive" and not response.cached
    assert (
        response.session_id == events[0].started.session_id
        and response.query_id == events[0].started.query_id
    )
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
    assert response.grounding.is_grounded and response.grounding.claims >= 1
    assert 0 < response.confidence <= 1
    assert response.query_type == agent_pb2.QUERY_TYPE_CONCEPTUAL
    t = response.timings
    assert t.total_ms >= t.retrieval_ms > 0 and t.validation_ms > 0 and t.first_delta_ms > 0
    assert response.steps[0].name == "retrieval_tool" and response.steps[0].duration_ms > 0


async def test_sessions_keep_history_per_user_and_end(book):
    opening = "What does the retrieval service do?"
    first = (await book.agent.Ask(agent_pb2.AskRequest(query=opening, user_id="bob"), timeout=60)).response
    session_id = first.session_id
    second = (
        await book.agent.Ask(
            agent_pb2.AskRequest(query="What is a collection?", user_id="bob", session_id=session_id),
            timeout=60,
        )
    ).response
    assert second.session_id == session_id

    session = (
        await book.agent.GetSession(agent_pb2.GetSessionRequest(session_id=session_id, user_id="bob"))
    ).session
    assert [t.query for t in session.turns] == [opening, "What is a collection?"]
    assert session.state == agent_pb2.SESSION_STATE_ACTIVE and session.turn_count == 2
    assert session.turns[0].tool_calls[0].name == "retrieval_tool" and session.turns[0].tool_calls[0].output

    for call in (
        book.agent.GetSession(agent_pb2.GetSessionRequest(session_id=session_id, user_id="mallory")),
        book.agent.EndSession(agent_pb2.EndSessionRequest(session_id=session_id, user_id="mallory")),
        book.agent.Ask(agent_pb2.AskRequest(query="hi there", session_id=session_id, user_id="mallory")),
    ):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    listed = await book.agent.ListSessions(agent_pb2.ListSessionsRequest(user_id="mallory"))
    assert session_id not in {s.session_id for s in listed.sessions}
    listed = await book.agent.ListSessions(agent_pb2.ListSessionsRequest(user_id="bob"))
    assert session_id in {s.session_id for s in listed.sessions}

    ended = await book.agent.EndSession(agent_pb2.EndSessionRequest(session_id=session_id, user_id="bob"))
    assert ended.session.state == agent_pb2.SESSION_STATE_TERMINATED
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await book.agent.Ask(agent_pb2.AskRequest(query=QUESTION, session_id=session_id, user_id="bob"))
    assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION


async def test_a_repeated_question_outside_a_session_is_served_from_the_cache(book):
    question = "Which vector store does Glossator use?"
    first = (await book.agent.Ask(agent_pb2.AskRequest(query=question), timeout=60)).response
    second = (await book.agent.Ask(agent_pb2.AskRequest(query=question), timeout=60)).response
    assert not first.cached and second.cached
    assert second.answer == first.answer and second.session_id != first.session_id
    in_session = (
        await book.agent.Ask(
            agent_pb2.AskRequest(
                query=question, session_id=second.session_id, session_token=second.session_token
            ),
            timeout=60,
        )
    ).response
    assert not in_session.cached


@pytest.mark.parametrize(
    ("fields", "field"),
    [
        ({"query": ""}, "query"),
        ({"query": "x" * 1001}, "query"),
        ({"query": "ok", "session_id": "not-a-uuid"}, "session_id"),
        ({"query": "ok", "selected_text": "y" * 5001}, "selected_text"),
        ({"query": "ok", "top_k": 21}, "top_k"),
        ({"query": "ok", "min_relevance": -0.5}, "min_relevance"),
        ({"query": "ok", "collection": "../etc"}, "collection"),
    ],
)
async def test_bad_questions_are_invalid_argument(book, fields, field):
    for call in (book.agent.Ask(agent_pb2.AskRequest(**fields)), _stream(book.agent, **fields)):
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await call
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert field in field_violations(caught.value)


async def test_unknown_session_is_not_found(book):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await book.agent.Ask(
            agent_pb2.AskRequest(query=QUESTION, session_id=str(uuid.uuid4()), user_id="alice")
        )
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


async def _agent(tmp_path, retrieval_target: str, validation_target: str, model=None, **overrides):
    settings = AgentSettings(
        port=0,
        data_dir=tmp_path,
        retrieval_target=retrieval_target,
        validation_target=validation_target,
        validation_timeout_seconds=2,
        **overrides,
    )
    return await build_server(settings, model=model)


async def test_validation_down_under_annotate_delivers_the_answer_marked_unavailable(book, tmp_path):
    server, port = await _agent(
        tmp_path,
        f"127.0.0.1:{book.servers['retrieval'].port}",
        "127.0.0.1:9",
        validation_policy="annotate",
    )
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            reply = await agent_pb2_grpc.AgentServiceStub(channel).Ask(
                agent_pb2.AskRequest(query=QUESTION), timeout=60
            )
        assert reply.response.answer and reply.response.sources
        assert reply.response.grounding.status == agent_pb2.VALIDATION_STATUS_UNAVAILABLE
    finally:
        await server.stop(grace=0)


async def _stream_until_error(stub) -> tuple[list[agent_pb2.AskStreamResponse], grpc.aio.AioRpcError]:
    """The events an AskStream of QUESTION sent before it failed, and its error."""
    events = []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        async for event in stub.AskStream(agent_pb2.AskRequest(query=QUESTION), timeout=60):
            events.append(event)
    return events, caught.value


async def test_validation_down_under_enforce_withholds_the_streamed_answer(book, tmp_path):
    server, port = await _agent(tmp_path, f"127.0.0.1:{book.servers['retrieval'].port}", "127.0.0.1:9")
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            events, streamed = await _stream_until_error(stub)
            with pytest.raises(grpc.aio.AioRpcError) as unary:
                await stub.Ask(agent_pb2.AskRequest(query=QUESTION), timeout=60)
    finally:
        await server.stop(grace=0)
    assert any(e.HasField("answer_delta") for e in events)
    assert not any(e.HasField("completed") for e in events)
    for error in (streamed, unary.value):
        assert error.code() == grpc.StatusCode.UNAVAILABLE and "withheld" in error.details()
        info = error_info(error)
        assert info.reason == Reason.ANSWER_VOID and info.metadata["service"] == "validation"


async def test_retrieval_down_ends_the_stream_unavailable_after_a_tool_error_event(book, tmp_path):
    server, port = await _agent(tmp_path, "127.0.0.1:9", f"127.0.0.1:{book.servers['validation'].port}")
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            events, error = await _stream_until_error(agent_pb2_grpc.AgentServiceStub(channel))
    finally:
        await server.stop(grace=0)
    errors = [e.tool_error for e in events if e.HasField("tool_error")]
    assert errors and "UNAVAILABLE" in errors[0].message
    assert not any(e.HasField("answer_delta") or e.HasField("completed") for e in events)
    assert error.code() == grpc.StatusCode.UNAVAILABLE and "127.0.0.1:9" not in error.details()
    assert error_info(error).reason == Reason.DEPENDENCY_UNAVAILABLE
    assert error_info(error).metadata["service"] == "retrieval"


async def test_a_collection_that_does_not_exist_is_not_found(book):
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await book.agent.Ask(agent_pb2.AskRequest(query=QUESTION, collection="no-such-book"), timeout=60)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND
    assert "'no-such-book'" in caught.value.details()


async def _ask_scripted(book, tmp_path, answer: str, query: str, **overrides):
    """AskStream on an agent whose model searches once, then answers `answer`."""
    model = ScriptedModel(
        [[function_call("retrieval_tool", {"query": query}, call_id="c1")], [assistant_message(answer)]]
    )
    server, port = await _agent(
        tmp_path,
        f"127.0.0.1:{book.servers['retrieval'].port}",
        f"127.0.0.1:{book.servers['validation'].port}",
        model=model,
        **overrides,
    )
    await server.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            return await _stream(agent_pb2_grpc.AgentServiceStub(channel), query=query)
    finally:
        await server.stop(grace=0)


async def test_enforce_policy_replaces_an_unsupported_answer_with_the_extractive_one(book, tmp_path):
    counted = _replaced("not_grounded")
    events = await _ask_scripted(
        book, tmp_path, "Glossator was first released in 1846 by Queen Victoria [1].", QUESTION
    )
    verdict = next(e.validation for e in events if e.HasField("validation"))
    assert verdict.is_grounded, "the verdict attached is the replacement's"
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    assert "1846" not in response.answer and response.model == "offline-extractive"
    assert response.sources and all(f"[{s.index}]" in response.answer for s in response.sources)
    cited = {e.citation.index for e in events if e.HasField("citation")}
    assert cited == {s.index for s in response.sources} and not response.not_covered
    # Never silent: the reason is in the notes and counted.
    assert any(
        note.startswith("the answer of ") and "was replaced (not_grounded): " in note and "1846" in note
        for note in response.validation.notes
    )
    assert _replaced("not_grounded") - counted == 1


async def test_enforce_policy_delivers_the_supported_sentences_of_an_answer_without_the_rest(book, tmp_path):
    """A sentence the book does not support costs the model only that sentence: the answer
    without it is validated again, and delivered as the model's own, saying what was left out."""
    counted = _replaced("trimmed")
    supported = (
        "The validation service checks, claim by claim, that an answer is grounded in the text that "
        "was retrieved for it [1]."
    )
    events = await _ask_scripted(
        book, tmp_path, f"{supported} It was first released in 1846 by Queen Victoria [1].", QUESTION
    )
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    assert "claim by claim" in response.answer and "1846" not in response.answer
    assert response.model != "offline-extractive" and response.validation.is_grounded
    assert any("was replaced (trimmed): " in note and "1846" in note for note in response.validation.notes)
    assert _replaced("trimmed") - counted == 1


async def test_annotate_policy_flags_an_unsupported_answer(book, tmp_path):
    events = await _ask_scripted(
        book,
        tmp_path,
        "Glossator was first released in 1846 by Queen Victoria [1].",
        QUESTION,
        validation_policy="annotate",
    )
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
    assert not response.grounding.is_grounded and "1846" in response.answer
    assert any("1846" in claim.reason for claim in response.validation.claims)


async def test_an_answer_without_markers_gets_them_from_the_supporting_chunks(book, tmp_path):
    sentence = "The validation service checks, claim by claim, that an answer is grounded."
    events = await _ask_scripted(book, tmp_path, sentence, QUESTION)
    streamed = "".join(e.answer_delta.text for e in events if e.HasField("answer_delta"))
    response = events[-1].completed.response
    assert streamed == sentence and response.answer.startswith(sentence + " [")
    assert response.grounding.is_grounded and response.grounding.citations_valid >= 1
    citations = [e.citation for e in events if e.HasField("citation")]
    assert [c.index for c in citations] == [s.index for s in response.sources]
    assert response.sources[0].document_id == "intro.md"


async def test_a_marker_citing_a_source_that_does_not_support_its_sentence_is_re_pointed(book, tmp_path):
    """A small model writes "[n]" before its sentence, naming a source that does not support it:
    the answer is delivered with the marker on a source that does, grounded, not replaced."""
    sentence = "The validation service checks, claim by claim, that an answer is grounded."
    query = "What does Glossator's validation service do?"
    events = await _ask_scripted(book, tmp_path / "plain", sentence, query)
    supporting = {
        i + 1 for c in events[-1].completed.response.validation.claims for i in c.supporting_chunk_indexes
    }
    retrieved = next(e.retrieval.chunks for e in events if e.HasField("retrieval"))
    wrong = next(n for n in range(1, len(retrieved) + 1) if n not in supporting)
    events = await _ask_scripted(book, tmp_path / "wrong", f"[{wrong}] {sentence}", query)
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
    assert response.grounding.is_grounded and response.model != "offline-extractive"
    assert response.answer == f"{sentence} [{min(supporting)}]"
    assert any("re-pointed" in note for note in response.validation.notes)


async def test_a_list_question_answered_with_one_item_is_replaced_by_the_list(book, tmp_path):
    """ "What are Glossator's services?" asks for all three; one service's sentence, however well
    grounded, is incomplete: the extractive answer lists them, and is delivered instead."""
    sentence = "The validation service checks, claim by claim, that an answer is grounded."
    counted = _replaced("incomplete")
    events = await _ask_scripted(
        book, tmp_path, sentence, "What are Glossator's services and what does each do?"
    )
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    assert any("was replaced (incomplete)" in note for note in response.validation.notes)
    assert _replaced("incomplete") - counted == 1
    assert "retrieval service" in response.answer and "agent service" in response.answer


async def test_a_refusal_is_not_grounded_when_the_passages_answer(book, tmp_path):
    refusal = "The book does not cover this question."
    annotated = await _ask_scripted(book, tmp_path / "a", refusal, QUESTION, validation_policy="annotate")
    annotated = annotated[-1].completed.response
    assert not annotated.grounding.is_grounded and annotated.answer == refusal
    assert any("passages answer the question" in note for note in annotated.validation.notes)
    counted = _replaced("wrong_refusal")
    enforced = await _ask_scripted(book, tmp_path / "e", refusal, QUESTION)
    response = enforced[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    assert any("was replaced (wrong_refusal)" in note for note in response.validation.notes)
    assert _replaced("wrong_refusal") - counted == 1
    assert response.grounding.is_grounded and response.sources and not response.not_covered


async def test_a_refusal_of_a_question_about_what_no_passage_mentions_stands(book, tmp_path):
    """The passages on grounding answer the question but for its "entailment classifier", which
    the book never mentions: a model saying so is right, though the extractive judge answers."""
    refusal = "The book does not cover this question."
    question = "How does Glossator check that an answer is grounded with an entailment classifier?"
    events = await _ask_scripted(book, tmp_path, refusal, question)
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED
    assert response.answer == refusal and response.not_covered


# Grounded in the retrieved intro page, and about something else than QUESTION asks.
OFF_FOCUS = (
    "It serves hybrid search: dense vectors and sparse lexical vectors fused with reciprocal rank fusion."
)


async def test_a_grounded_answer_that_misses_the_question_is_flagged_and_low_in_confidence(book, tmp_path):
    events = await _ask_scripted(book, tmp_path, OFF_FOCUS, QUESTION, validation_policy="annotate")
    response = events[-1].completed.response
    assert response.grounding.is_grounded and not response.grounding.answers_question
    assert any("never addresses" in note for note in response.validation.notes)
    assert response.confidence <= 0.4


async def test_enforce_replaces_a_grounded_answer_that_misses_the_question(book, tmp_path):
    events = await _ask_scripted(book, tmp_path, OFF_FOCUS, QUESTION)
    response = events[-1].completed.response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    # The stand-in answers the question (it may quote the list the off-focus sentence stands in).
    assert response.model == "offline-extractive" and "grounded" in response.answer
    assert response.grounding.answers_question
    assert any("does not address what the question asks" in note for note in response.validation.notes)


async def test_a_refusal_stands_when_nothing_relevant_was_found(book, tmp_path):
    events = await _ask_scripted(
        book, tmp_path, "The book does not cover this question.", "What is the capital of Peru?"
    )
    response = events[-1].completed.response
    assert response.grounding.is_grounded and response.not_covered and not response.sources


async def test_a_question_that_cannot_get_its_turn_in_time_is_refused_resource_exhausted(tmp_path):
    retrieval = FakeRetrieval(mode="hang")  # holds the one answer slot until cancelled
    server = grpc.aio.server()
    retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(retrieval, server)
    retrieval_port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    agent, port = await _agent(
        tmp_path,
        f"127.0.0.1:{retrieval_port}",
        "127.0.0.1:9",
        max_concurrent_answers=1,
        retrieval_timeout_seconds=30,
    )
    await agent.start()
    try:
        async with make_channel(f"127.0.0.1:{port}") as channel:
            stub = agent_pb2_grpc.AgentServiceStub(channel)
            holding = asyncio.create_task(_stream(stub, query=QUESTION))
            await asyncio.wait_for(retrieval.started.wait(), 10)
            with pytest.raises(grpc.aio.AioRpcError) as caught:
                await stub.Ask(agent_pb2.AskRequest(query=QUESTION), timeout=2)
            holding.cancel()
    finally:
        await agent.stop(grace=0)
        await server.stop(grace=0)
    assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
    assert "retry later" in caught.value.details()


def _replaced(reason: str) -> float:
    """Answers the in-process agent has replaced so far for `reason`."""
    return _counted("glossator_answers_replaced", "reason", reason)


def _handled(method: str) -> float:
    """RPCs of `method` the in-process suite has handled so far, whatever their status."""
    return _counted("glossator_rpc_requests", "method", method)


def _counted(counter: str, label: str, value: str) -> float:
    """The in-process total of `counter` over its series whose `label` is `value`."""
    return sum(
        sample.value
        for metric in REGISTRY.collect()
        if metric.name == counter
        for sample in metric.samples
        if sample.name.endswith("_total") and sample.labels.get(label) == value
    )


async def test_a_cacheable_question_searches_once_and_is_validated_once(book):
    searches, validations = _handled("Search"), _handled("Validate")
    query = f"What does the retrieval service store? ({uuid.uuid4().hex[:6]})"
    response = (await book.agent.Ask(agent_pb2.AskRequest(query=query), timeout=60)).response
    assert response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED and response.sources
    assert _handled("Search") - searches == 1, "the cache-key search is the run's search"
    assert _handled("Validate") - validations == 1


async def test_a_replaced_answer_is_validated_twice_not_four_times(book, tmp_path):
    """A supported sentence without a marker after an invented one: the answer is not marked and
    validated again before it is replaced (nor is its supported part, which lacks its first
    sentence), only its stand-in is validated."""
    validations = _handled("Validate")
    answer = (
        "Glossator was first released in 1846 by Queen Victoria. "
        "The validation service checks, claim by claim, that an answer is grounded."
    )
    events = await _ask_scripted(book, tmp_path, answer, QUESTION)
    assert events[-1].completed.response.grounding.status == agent_pb2.VALIDATION_STATUS_REPLACED
    assert _handled("Validate") - validations == 2, "the answer, then its stand-in"


MODES = """# Permission Modes and Runtime Security

## Permission Modes: Four Security Postures

The Agent SDK offers four permission modes, each representing a different trust boundary:

### Mode 1: default

{filler} The default mode prompts the user before every file edit and every shell command.

### Mode 2: acceptEdits

{filler} The acceptEdits mode approves file edits on its own and still prompts for shell commands.

### Mode 3: bypassPermissions

{filler} The bypassPermissions mode never prompts and suits automated pipelines with restricted tools.

### Mode 4: plan

{filler} The plan mode lets the agent read and plan without changing any file at all.

### Choosing a mode

{filler} Pick the narrowest mode that still lets the task finish.

## Runtime Checks

A runtime check decides each tool call on its own merits, whatever the permission mode says.
"""
FILLER = " ".join(
    f"Each posture trades oversight for speed in its own way, step {n} of a long comparison of trust boundaries."
    for n in range(1, 9)
)


async def _ask_top_chunk(suite, folder, question: str):
    """Ingests the folder into a new collection and asks the question with top_k 1: the
    question's search finds one chunk, and the retrieval tool whatever goes on after it."""
    collection = f"blocks-{uuid.uuid4().hex[:8]}"
    options = retrieval_pb2.IngestOptions(collection=collection, base_url=BASE_URL)
    async for _ in ingest(suite.retrieval, ingest_requests(options, async_iter(read_folder(folder)))):
        pass
    events = await _stream(suite.agent, query=question, user_id="alice", collection=collection, top_k=1)
    return events[-1].completed.response


async def test_a_lead_in_whose_blocks_go_on_in_later_chunks_is_answered_with_all_their_titles(
    suite, tmp_path
):
    """ "The SDK offers four permission modes:" is cut from three of its modes by the chunker: the
    retrieval tool looks in the section's later chunks, and the answer lists the four."""
    (tmp_path / "modes.md").write_text(MODES.format(filler=FILLER))
    response = await _ask_top_chunk(suite, tmp_path, "What permission modes does the Agent SDK offer?")
    titles = ["Mode 1: default.", "Mode 2: acceptEdits.", "Mode 3: bypassPermissions.", "Mode 4: plan."]
    assert response.answer.startswith(
        "The Agent SDK offers four permission modes, each representing a different trust boundary ["
    ), response.answer
    assert all(title in response.answer for title in titles), response.answer
    assert "Choosing a mode" not in response.answer  # four modes are announced, not five sections
    assert len({s.chunk_index for s in response.sources}) >= 3
    assert response.grounding.is_grounded, response.grounding


PHASES = """# The Piggyback Protocol Pivot

Now comes the critical piece: how do you enter a vertical market on your own?

Enter the Piggyback Protocol Pivot: a three-phase strategy that lets you piggyback on incumbents, build defensibility, then pivot.

![Timeline of the three phases](https://example.org/ppp.png)

## Phase 1: Infrastructure Layering

{phased}

{phased}

{phased}

{phased}

{phased}

## Phase 2: Market Validation

{phased}

{phased}

{phased}

{phased}

{phased}

## Phase 3: Strategic Pivot

{filler}

## Why It Beats Direct Competition

{filler}
"""


async def test_a_paragraph_counting_the_sections_after_its_chunk_is_answered_with_their_titles(
    suite, tmp_path
):
    """ "... a three-phase strategy ..." ends its chunk; each phase is a section of several chunks:
    the retrieval tool fetches the first chunk of each section after it (not the chunks most like
    the question: those are all of the first two phases), and the answer names the three phases
    (not the fourth section)."""
    phased = " ".join(
        f"In this phase of the Piggyback Protocol Pivot you take step {n} of many towards the market."
        for n in range(1, 9)
    )
    (tmp_path / "ppp.md").write_text(PHASES.format(filler=FILLER, phased=phased))
    response = await _ask_top_chunk(
        suite, tmp_path, "What are the three phases of the Piggyback Protocol Pivot?"
    )
    titles = ["Phase 1: Infrastructure Layering.", "Phase 2: Market Validation.", "Phase 3: Strategic Pivot."]
    assert all(title in response.answer for title in titles), response.answer
    assert "Direct Competition" not in response.answer
    assert response.grounding.is_grounded, response.grounding


STEPS = """# Working With an Agent in the Terminal

An agent that runs shell commands needs a way to stay safe. {filler}

## The 5-Step Safety Pattern

Every risky command goes through the same conversation.

### Step 1: Ask

{filler}

### Step 2: Explain

{filler}

### Step 3: Understand

{filler} In the safety-first dialogue pattern you confirm that you understand what the agent will do.

### Step 4: Verify

{filler}

### Step 5: Execute

{filler}

## Exercises

{filler}
"""


async def test_a_section_under_a_heading_counting_its_sections_is_answered_with_all_their_titles(
    suite, tmp_path
):
    """The question finds "Step 3: Understand" alone; its parent heading counts five steps: the
    retrieval tool fetches the first chunk of each, and the answer names the five (not the
    exercises)."""
    (tmp_path / "steps.md").write_text(STEPS.format(filler=FILLER))
    response = await _ask_top_chunk(
        suite, tmp_path, "What are the steps of the safety-first dialogue pattern?"
    )
    titles = [
        "Step 1: Ask.",
        "Step 2: Explain.",
        "Step 3: Understand.",
        "Step 4: Verify.",
        "Step 5: Execute.",
    ]
    assert "The 5-Step Safety Pattern [" in response.answer, response.answer
    assert all(title in response.answer for title in titles), response.answer
    assert "Exercises" not in response.answer
    assert response.grounding.is_grounded, response.grounding
