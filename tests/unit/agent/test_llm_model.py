"""The LLM path on the wire: the real OpenAI client and SDK model against a scripted HTTP endpoint.

The endpoint speaks Chat Completions on loopback as llama.cpp's server does: a call asking for the
search (not streamed, tool_choice naming the tool; made only with llm_model_searches) gets a native
retrieval_tool call; a streamed call gets the scripted answer. It can also hang, refuse, answer
garbage or cut the answer short, to check the deadline and the error a caller gets.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import httpx
import pytest
from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel
from agents.tracing import get_trace_provider

from services.agent.agent import Answerer, AnswerRequest, run_answer
from services.agent.config import AgentSettings
from services.agent.events import AnswerDelta, AnswerFinished, Citation, RetrievalResults, ToolCall
from services.agent.extractive import Pick, sentences_of
from services.agent.models import OFFLINE_MODEL_NAME, OfflineExtractiveModel, make_model, model_settings
from services.agent.models.guided import GuidedModel, focused, merged_query
from services.agent.models.wire import BrokenStream, FinishWatch
from services.agent.passages import Passage
from services.agent.prompt import QUOTING, REWORDING
from services.common.errors import (
    DeadlineExceeded,
    FailedPrecondition,
    Reason,
    ResourceExhausted,
    Unavailable,
)
from tests.unit.agent.fake_retrieval import CHUNKS, FakeRetrieval, serve_retrieval

ANSWER_PIECES = ["ROS 2 uses ", "DDS as its ", "middleware. [", "1] It needs no master. [1][8]"]


def chunk(delta: dict, finish: str | None = None) -> dict:
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion.chunk",
        "created": 0,
        "model": "scripted-llm",
        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
    }


def tool_call_reply(arguments: str = '{"query": "DDS transport"}') -> dict:
    """The non-streamed reply to the first call, whose tool_choice names the tool."""
    call = {
        "id": "call_abc",
        "type": "function",
        "function": {"name": "retrieval_tool", "arguments": arguments},
    }
    return {
        "id": "chatcmpl-scripted",
        "object": "chat.completion",
        "created": 0,
        "model": "scripted-llm",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": None, "tool_calls": [call]},
                "finish_reason": "tool_calls",
            }
        ],
    }


def answer_chunks(pieces: list[str], finished: bool = True) -> list[dict]:
    return [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": piece}) for piece in pieces),
        *([chunk({}, finish="stop")] if finished else []),
    ]


@dataclass
class Endpoint:
    """What the scripted endpoint does and what it was sent.

    Modes: "ok"; "hang"; garbage ("html", "bad-sse"); HTTP errors ("error" 500, "not-found" 404);
    "no-tool-choice" (400 for a named tool_choice, as some servers answer); "cut" (the answer ends
    at [DONE] with no finish_reason, as llama-cpp-python's server ends one when another request
    arrives). Each reply takes `seconds`; `busiest` is the most requests it had open at once.
    """

    mode: str = "ok"
    seconds: float = 0.0
    open_now: int = 0
    busiest: int = 0
    lock: threading.Lock = field(default_factory=threading.Lock)
    # The streamed replies in order (the last one repeats), each as its content pieces.
    answers: list[list[str]] = field(default_factory=lambda: [list(ANSWER_PIECES)])
    requests: list[dict] = field(default_factory=list)
    authorization: list[str] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)
    url: str = ""


def handler_for(endpoint: Endpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *_args) -> None:
            return None

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            endpoint.requests.append(body)
            endpoint.authorization.append(self.headers.get("Authorization", ""))
            with endpoint.lock:
                endpoint.open_now += 1
                endpoint.busiest = max(endpoint.busiest, endpoint.open_now)
            try:
                time.sleep(endpoint.seconds)
                self._reply(body)
            finally:
                with endpoint.lock:
                    endpoint.open_now -= 1

        def _reply(self, body: dict) -> None:
            if endpoint.mode == "hang":
                endpoint.release.wait(30)
                return
            if endpoint.mode == "html":
                self._send(200, "text/html", b"<html>a proxy's login page, with a 200</html>")
                return
            if endpoint.mode == "bad-sse":
                self._send(200, "text/event-stream", b'data: {"choices": [{"delta": {"content": 42\n\n')
                return
            if endpoint.mode in ("error", "not-found"):
                status = 500 if endpoint.mode == "error" else 404
                self._send(
                    status, "application/json", b'{"error": {"message": "/srv/app.py: model crashed"}}'
                )
                return
            if not body.get("stream"):
                if endpoint.mode == "no-tool-choice":
                    self._send(400, "application/json", b'{"error": {"message": "tool_choice unsupported"}}')
                    return
                self._send(200, "application/json", json.dumps(tool_call_reply()).encode())
                return
            streamed = sum(1 for request in endpoint.requests if request.get("stream"))
            pieces = endpoint.answers[min(streamed, len(endpoint.answers)) - 1]
            events = answer_chunks(pieces, finished=endpoint.mode != "cut")
            stream = "".join(f"data: {json.dumps(e)}\n\n" for e in events) + "data: [DONE]\n\n"
            self._send(200, "text/event-stream", stream.encode())

        def _send(self, status: int, content_type: str, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def endpoint() -> Iterator[Endpoint]:
    state = Endpoint()
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler_for(state))
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    yield state
    state.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
async def retrieval():
    servicer = FakeRetrieval()
    async with serve_retrieval(servicer) as stub:
        yield servicer, stub


def llm_settings(url: str, **overrides) -> AgentSettings:
    values = {
        "llm_base_url": url,
        "llm_model": "scripted-llm",
        "llm_api_key": "sk-test",
        "llm_temperature": 0.2,
        "llm_max_tokens": 321,
    }
    return AgentSettings(**(values | overrides))


async def run(answerer: Answerer, question: str = "What middleware does ROS 2 use?", seconds: float = 20):
    request = AnswerRequest(question=question, user_context={"chapter": "Basics"})
    return [e async for e in run_answer(request, answerer, deadline=time.monotonic() + seconds)]


async def test_a_run_searches_for_the_question_itself_and_calls_the_model_once(endpoint, retrieval):
    servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    events = await run(answerer)

    assert [type(e) for e in events[:2]] == [ToolCall, RetrievalResults]
    assert json.loads(events[0].arguments) == {"query": "What middleware does ROS 2 use?"}
    assert servicer.requests[0].query == "What middleware does ROS 2 use?"
    assert servicer.requests[0].top_k == 5 and not servicer.requests[0].filters
    finished = events[-1]
    assert isinstance(finished, AnswerFinished) and finished.model == "scripted-llm"
    # The marker split over two chunks is recognised; [8] was never retrieved and is dropped.
    assert finished.answer == "ROS 2 uses DDS as its middleware. [1] It needs no master. [1]"
    assert "".join(e.text for e in events if isinstance(e, AnswerDelta)) == finished.answer
    assert [(e.index, e.source.chunk_id) for e in events if isinstance(e, Citation)] == [
        (1, CHUNKS[1].chunk_id)
    ]

    [answer_turn] = endpoint.requests  # one model call: the answer
    assert answer_turn["model"] == "scripted-llm" and answer_turn["stream"] is True
    assert "tools" not in answer_turn and "tool_choice" not in answer_turn
    assert answer_turn["temperature"] == 0.2 and answer_turn["max_tokens"] == 321
    assert "- chapter: Basics" in answer_turn["messages"][-1]["content"]
    assert endpoint.authorization == ["Bearer sk-test"]


async def test_with_model_searches_the_first_call_names_the_tool_and_its_new_words_join_the_query(
    endpoint, retrieval
):
    servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings(endpoint.url, llm_model_searches=True), stub)
    events = await run(answerer)
    assert json.loads(events[0].arguments) == {"query": "What middleware does ROS 2 use? dds transport"}
    assert servicer.requests[0].query == "What middleware does ROS 2 use? dds transport"
    assert events[-1].answer.startswith("ROS 2 uses DDS")
    first, second = endpoint.requests
    assert not first.get("stream")
    assert first["tool_choice"] == {"type": "function", "function": {"name": "retrieval_tool"}}
    assert [tool["function"]["name"] for tool in first["tools"]] == ["retrieval_tool"]
    assert set(first["tools"][0]["function"]["parameters"]["properties"]) == {"query"}
    assert first["messages"][0]["role"] == "system" and "[n]" not in first["messages"][0]["content"]
    assert first["messages"][-1]["content"].endswith("Question: What middleware does ROS 2 use?")
    assert second["stream"] is True and "tool_choice" not in second


def test_a_model_query_adds_only_new_keywords_and_never_an_answer_from_memory():
    question = "Which IMU does the robot use?"
    assert merged_query(question, "robot IMU") == question, "nothing new"
    assert merged_query(question, "IMU sensor specification") == f"{question} sensor specification"
    answer = "The robot uses the BMI088 IMU with a 1600 Hz output rate and a 24 g accelerometer range"
    assert merged_query(question, answer) == question, "an answer written into the query"
    assert merged_query(question, "IMU 1600 Hz") == question, "a number the question does not have"


async def test_an_endpoint_rejecting_a_named_tool_choice_gets_the_search_made_for_it(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.mode = "no-tool-choice"
    answerer = Answerer.from_settings(llm_settings(endpoint.url, llm_model_searches=True), stub)
    events = await run(answerer)
    assert json.loads(events[0].arguments) == {"query": "What middleware does ROS 2 use?"}
    assert isinstance(events[-1], AnswerFinished) and events[-1].answer.startswith("ROS 2 uses DDS")
    await run(answerer)
    # Learnt once: the next run does not ask for the named tool_choice again.
    assert [bool(r.get("tool_choice")) for r in endpoint.requests] == [True, False, False]


async def test_the_answer_turn_has_the_passages_in_the_question_and_no_tools(endpoint, retrieval):
    _servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    await run(answerer)
    answer_turn = endpoint.requests[-1]
    assert "tools" not in answer_turn and answer_turn["stream"] is True
    assert answer_turn["messages"][0]["content"] == QUOTING.instructions
    question = answer_turn["messages"][-1]["content"]
    assert question.startswith("Passages from the book:\n[1] ROS 2 uses the Data Distribution Service")
    assert question.endswith(f"Question: What middleware does ROS 2 use?\n{QUOTING.request}")


async def test_a_question_asking_for_other_words_gets_the_prompt_that_allows_rewording(endpoint, retrieval):
    _servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    await run(answerer, "Explain in simpler words what middleware ROS 2 uses")
    answer_turn = endpoint.requests[-1]["messages"]
    assert answer_turn[0]["content"] == REWORDING.instructions
    assert "word for word" not in answer_turn[0]["content"]
    assert answer_turn[-1]["content"].endswith(f"ROS 2 uses\n{REWORDING.request}")


async def test_a_model_allowed_to_search_again_may_write_the_call_as_text(endpoint, retrieval):
    servicer, stub = retrieval
    call = '<tool_call>{"name": "retrieval_tool", "arguments": {"query": "master process"}}</tool_call>'
    endpoint.answers = [[call[:30], call[30:]], list(ANSWER_PIECES)]
    answerer = Answerer.from_settings(llm_settings(endpoint.url, llm_max_searches=2), stub)
    events = await run(answerer)
    assert [e.arguments for e in events if isinstance(e, ToolCall)][1] == '{"query": "master process"}'
    assert [r.query for r in servicer.requests][1] == "master process"
    assert [bool(r.get("tools")) for r in endpoint.requests] == [True, False]
    searching_again = endpoint.requests[0]["messages"]
    call_message = next(m for m in searching_again if m.get("tool_calls"))
    assert call_message["content"] == "", "llama.cpp's server rejects a null content"
    tool_message = next(m for m in searching_again if m["role"] == "tool")
    assert tool_message["content"].startswith("[1] Robotics Handbook > ROS 2 Basics > Middleware")
    streamed = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert "tool_call" not in streamed and streamed == events[-1].answer
    assert events[-1].answer.startswith("ROS 2 uses DDS")


async def test_an_answer_cut_short_by_the_endpoint_fails_and_is_never_delivered_short(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.mode = "cut"
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    with pytest.raises(
        Unavailable,
        match=r"failed for model .scripted-llm.: it ended the answer before the model finished it",
    ) as caught:
        await run(answerer)
    assert caught.value.reason == Reason.LLM_UNAVAILABLE and "interrupt_requests" in caught.value.message


class Reads(httpx.AsyncByteStream):
    """A response body arriving in these reads."""

    def __init__(self, reads: list[bytes]) -> None:
        self._reads = iter(reads)

    async def __aiter__(self):
        for data in self._reads:
            yield data


def sse(events: list[dict]) -> bytes:
    return "".join(f"data: {json.dumps(e)}\n\n" for e in events).encode() + b"data: [DONE]\n\n"


async def test_the_finish_watch_keeps_what_it_saw_when_the_client_drains_in_a_second_read():
    """openai reads up to [DONE], then drains the rest of an HTTP/1.1 body in a new iteration."""
    body = sse(answer_chunks(["Hello", " there"]))
    watch = FinishWatch(Reads([body[:40], body[40:-20], body[-20:]]))
    first = [data async for data in watch]
    assert b"".join(first) == body and [data async for data in watch] == []
    cut = sse(answer_chunks(["Hello"], finished=False))
    with pytest.raises(BrokenStream, match="no finish_reason"):
        _ = [data async for data in FinishWatch(Reads([cut[:30], cut[30:]]))]


async def test_concurrent_questions_take_turns_at_the_endpoint_within_their_deadlines(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.seconds = 0.5
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    runs = await asyncio.gather(*(run(answerer) for _ in range(3)))
    assert endpoint.busiest == 1, "one call at a time (GLOSSATOR_AGENT_LLM_MAX_CONCURRENT_CALLS=1)"
    assert all(events[-1].answer.startswith("ROS 2 uses DDS") for events in runs)
    # Now a call takes about 0.5 s: a question whose deadline leaves no room for the one ahead
    # of it is refused at once, and the one ahead is answered. (The margins are wide: a loaded
    # machine can hold the event loop for a tenth of a second or more.)
    ahead = asyncio.ensure_future(run(answerer))
    while endpoint.open_now == 0:
        await asyncio.sleep(0.01)
    started = time.monotonic()
    with pytest.raises(ResourceExhausted, match="model calls"):
        await run(answerer, seconds=0.75)
    assert time.monotonic() - started < 0.5, "refused at once, not when its deadline passed"
    assert (await ahead)[-1].answer.startswith("ROS 2 uses DDS")
    wide = Answerer.from_settings(llm_settings(endpoint.url, llm_max_concurrent_calls=3), stub)
    await asyncio.gather(*(run(wide) for _ in range(3)))
    assert endpoint.busiest >= 2


async def test_a_call_written_on_the_answer_turn_is_withheld(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.answers = [['{"name": "retrieval_tool", "arguments": {"query": "again"}}']]
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    events = await run(answerer)
    assert len([e for e in events if isinstance(e, ToolCall)]) == 1
    assert not any(isinstance(e, AnswerDelta) for e in events)
    assert isinstance(events[-1], AnswerFinished) and events[-1].answer == ""


async def test_template_tokens_are_stripped_from_the_streamed_answer(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.answers = [
        ["ROS 2 uses DDS as its middleware for transport. [1]", "<|im_end|>\n<|im_start|>user\nmore"]
    ]
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    events = await run(answerer)
    streamed = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert streamed == events[-1].answer == "ROS 2 uses DDS as its middleware for transport. [1]"


async def test_the_framing_a_small_model_copies_back_is_dropped_from_the_streamed_answer(endpoint, retrieval):
    """A 0.5B model copies each passage's place and the request line: neither is the book's."""
    _servicer, stub = retrieval
    endpoint.answers = [
        [
            "[2] (Robotics Handbook > ROS",
            " 2 Basics > Middleware) ROS 2 uses the Data Distribution Service (DDS) as its middleware.",
            f"\n{QUOTING.request}",
        ]
    ]
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    events = await run(answerer)
    streamed = "".join(e.text for e in events if isinstance(e, AnswerDelta))
    assert streamed.strip() == events[-1].answer.strip()
    assert (
        events[-1].answer.strip() == "[2] ROS 2 uses the Data Distribution Service (DDS) as its middleware."
    )


async def test_a_hanging_endpoint_is_cut_at_the_deadline(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.mode = "hang"
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="before the deadline"):
        await run(answerer, "q", seconds=0.8)
    assert time.monotonic() - started < 2.0
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("html", "failed"),
        ("bad-sse", "failed"),
        ("error", "failed with HTTP 500 for model 'scripted-llm'"),
    ],
)
async def test_an_endpoint_answering_garbage_is_unavailable(endpoint, retrieval, mode, message):
    _servicer, stub = retrieval
    endpoint.mode = mode
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    with pytest.raises(Unavailable, match=message) as caught:
        await run(answerer, "q")
    assert "/srv/app.py" not in caught.value.message and "{" not in caught.value.message


async def test_a_wrong_model_or_path_is_failed_precondition_and_not_retried(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.mode = "not-found"
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    with pytest.raises(FailedPrecondition) as caught:
        await run(answerer, "q")
    error = caught.value
    assert endpoint.url in error.message and "'scripted-llm'" in error.message and "HTTP 404" in error.message
    assert "/srv/app.py" not in error.message
    assert error.reason == Reason.LLM_REJECTED and error.metadata["http_status"] == "404"
    assert len(endpoint.requests) == 1


async def test_an_unreachable_endpoint_is_unavailable(retrieval):
    _servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings("http://127.0.0.1:9/v1"), stub)
    with pytest.raises(
        Unavailable, match=r"cannot reach the LLM endpoint http://127\.0\.0\.1:9/v1"
    ) as caught:
        await run(answerer, "q")
    assert caught.value.reason == Reason.LLM_UNAVAILABLE and not caught.value.retryable


def test_make_model_picks_the_api_and_the_offline_default():
    chat, name = make_model(llm_settings("http://127.0.0.1:9/v1"))
    assert isinstance(chat, GuidedModel) and isinstance(chat.inner, OpenAIChatCompletionsModel)
    assert name == "scripted-llm"
    responses, _ = make_model(llm_settings("http://127.0.0.1:9/v1", llm_api="responses"))
    assert isinstance(responses.inner, OpenAIResponsesModel)
    offline, name = make_model(AgentSettings(llm_base_url=""))
    assert isinstance(offline, OfflineExtractiveModel) and name == OFFLINE_MODEL_NAME
    with pytest.raises(ValueError, match="LLM_MODEL"):
        make_model(llm_settings("http://127.0.0.1:9/v1", llm_model=""))
    settings = model_settings(llm_settings("http://x"))
    assert (settings.temperature, settings.max_tokens) == (0.2, 321)


def test_tracing_export_is_off_unless_configured():
    make_model(AgentSettings(llm_base_url=""))
    assert get_trace_provider()._disabled
    make_model(AgentSettings(llm_base_url="", tracing_export=True))
    assert not get_trace_provider()._disabled
    make_model(AgentSettings(llm_base_url=""))
    assert get_trace_provider()._disabled


def scored(passages: list[tuple[int, str]], similarity: dict[str, float]) -> list[Passage]:
    """The passages as a run keeps them, with Search's scores for the sentences `similarity` names."""
    return [
        Passage(
            number,
            "Book",
            text,
            sentence_scores={span: similarity[s] for span, s in sentences_of(text) if s in similarity},
        )
        for number, text in passages
    ]


def test_an_answer_turn_shows_each_passage_as_its_place_and_its_best_section():
    passages = [
        (1, "## Nodes\nROS 2 nodes are processes. They talk over topics.\n## Weather\nThe weather was fine."),
        (2, "Gazebo simulates physics. It renders scenes too."),
    ]
    similarity = {
        "ROS 2 nodes are processes.": 0.9,
        "The weather was fine.": 0.1,
        "Gazebo simulates physics.": 0.5,
    }
    # The best sentence's section, contiguous (its unscored neighbour too, the other section not),
    # under the passage's place and the heading it stands under in the chunk.
    assert focused(scored(passages, similarity)) == [
        (1, "(Book > Nodes) ROS 2 nodes are processes. They talk over topics."),
        (2, "(Book) Gazebo simulates physics. It renders scenes too."),
    ]
    assert focused(scored(passages, similarity), budget=80) == [
        (1, "(Book > Nodes) ROS 2 nodes are processes. They talk over topics."),
    ], "the passages scoring best come first within the budget"
    assert focused(scored(passages, {})) == passages, "unscored passages are shown whole"


def test_a_passage_of_code_is_shown_as_read_after_the_scored_ones():
    """Search's first hit for "How do I build just one package?" was code, and the model was not
    shown it: Search scores prose sentences only."""
    code = (
        "### Basic Colcon Commands\n```bash\n# Build specific package\n"
        "colcon build --packages-select my_robot_controller\n```\nThen source the **workspace**.\n"
    )
    prose = "Colcon builds every package of a workspace."
    passages = scored([(1, code), (2, prose)], {prose: 0.7})
    assert focused(passages) == [
        (
            1,
            "(Book) # Build specific package colcon build --packages-select my_robot_controller "
            "Then source the workspace.",
        ),
        (2, f"(Book) {prose}"),
    ], "code as written (its comment is no heading), prose rendered, the heading left to the place"
    assert focused(passages, budget=60) == [(2, f"(Book) {prose}")], "scored passages first for the budget"


def test_a_larger_context_shows_more_of_each_passage_section():
    steps = " ".join(f"Step {n} of the setup configures part {n} of the robot." for n in range(1, 41))
    text = f"## Setup\n{steps}"
    similarity = {"Step 20 of the setup configures part 20 of the robot.": 0.9}
    small, large = (focused(scored([(1, text)], similarity), budget=b)[0][1] for b in (1200, 3000))
    assert len(small) <= 500 + len("(Book > Setup) ") < len(large) <= 1000 + len("(Book > Setup) ")
    assert "Step 20 " in small and large.count("Step ") > small.count("Step ")


def test_the_context_setting_reaches_the_answer_turn():
    assert make_model(llm_settings("http://127.0.0.1:9/v1", llm_context_chars=1200))[0].context_chars == 1200
    assert make_model(llm_settings("http://127.0.0.1:9/v1"))[0].context_chars == 3000


def test_a_list_is_shown_to_the_model_under_what_it_is_a_list_of():
    text = (
        "#### Publisher-Subscriber (Topics)\n- Asynchronous, many-to-many communication\n"
        "- Used for streaming data like sensor readings\n\nTopics carry many kinds of data:\n"
        "- Sensor readings from cameras and lidars\n- Commands sent to the motors\n"
    )
    similarity = {"Used for streaming data like sensor readings": 0.8}
    assert focused(scored([(4, text)], similarity)) == [
        (
            4,
            "(Book > Publisher-Subscriber (Topics)) Asynchronous, many-to-many communication. "
            "Used for streaming data like sensor readings. Topics carry many kinds of data: "
            "Sensor readings from cameras and lidars. Commands sent to the motors.",
        )
    ]


def test_the_model_is_shown_markdown_rendered_and_no_sentence_about_the_text():
    text = "This tutorial covers action servers in ROS 2.\n\n**Goal**: what the `action` should do."
    similarity = {
        "This tutorial covers action servers in ROS 2.": 0.9,
        "**Goal**: what the `action` should do.": 0.7,
    }
    assert focused(scored([(1, text)], similarity)) == [(1, "(Book) Goal: what the action should do.")]


def test_the_model_is_not_shown_learning_objectives_or_exercises():
    text = (
        "### Learning Objectives\n- Master the use of xacro for complex humanoid descriptions\n\n"
        "### Xacro\nXacro simplifies complex URDF models with macros, constants and includes."
    )
    similarity = {
        "Master the use of xacro for complex humanoid descriptions": 0.9,
        "Xacro simplifies complex URDF models with macros, constants and includes.": 0.6,
    }
    assert focused(scored([(1, text)], similarity)) == [
        (1, "(Book > Xacro) Xacro simplifies complex URDF models with macros, constants and includes.")
    ]


def test_the_extractive_answerer_s_choice_is_shown_first_with_its_section():
    """Search scored the intro most similar; the answerer picked the list of message types: its
    section is shown first, under its lead-in, and the intro's passage after it."""
    intro = "Actions in ROS 2 provide a communication pattern for long-running tasks."
    structure = (
        "Actions are composed of three message types:\n\n1. **Goal**: what the action should do\n"
        "2. **Feedback**: provides intermediate status updates\n3. **Result**: the final outcome of the action\n"
    )
    similarity = {intro: 0.9, "**Goal**: what the action should do": 0.4}
    passages = scored([(1, intro), (2, structure)], similarity)
    picks = [Pick(2, "Goal: what the action should do.", "Actions are composed of three message types")]
    shown = focused(passages, picks=picks)
    assert shown[0] == (
        2,
        "(Book) Actions are composed of three message types: Goal: what the action should do. "
        "Feedback: provides intermediate status updates. Result: the final outcome of the action.",
    )
    assert shown[1][0] == 1


def test_a_table_row_the_answerer_chose_is_shown_with_its_table_as_rows_read():
    intro = "Submit your project by Friday."
    table = (
        "### Assessment Rubric\n| Component | Points |\n|---|---|\n| **Code Quality** | 20 |\n"
        "| **Documentation** | 15 |\n"
    )
    passages = scored([(1, intro), (2, table)], {intro: 0.9})
    shown = focused(passages, picks=[Pick(2, "Documentation — Points: 15.", "Assessment Rubric")])
    assert shown[0] == (
        2,
        "(Book > Assessment Rubric) Code Quality — Points: 20. Documentation — Points: 15.",
    )


def test_the_sections_of_all_the_answerer_s_picks_from_a_passage_are_shown():
    """Its answer was the page's intro and the list under the next heading: the model shown the
    intro alone answered with headings, which the echo filter dropped (nothing streamed)."""
    text = (
        "# Search\nThe Search RPC finds the chunks most relevant to a query.\n\n## Modes\n"
        "- **dense**: cosine similarity of sentence embeddings\n"
        "- **sparse**: lexical matching with IDF weights computed by Qdrant\n\n"
        "## Parameters\nA search takes a query of one to a thousand characters.\n"
    )
    passages = scored([(1, text)], {"The Search RPC finds the chunks most relevant to a query.": 0.6})
    picks = [
        Pick(1, "The Search RPC finds the chunks most relevant to a query.", ""),
        Pick(1, "dense: cosine similarity of sentence embeddings.", "Modes"),
        Pick(1, "sparse: lexical matching with IDF weights computed by Qdrant.", "Modes"),
    ]
    assert focused(passages, picks=picks) == [
        (
            1,
            "(Book > Search) The Search RPC finds the chunks most relevant to a query. Modes: dense: cosine "
            "similarity of sentence embeddings. sparse: lexical matching with IDF weights computed by Qdrant.",
        )
    ]
