"""The LLM path on the wire: the real OpenAI client and SDK model against a scripted HTTP endpoint.

The endpoint speaks streamed Chat Completions (server-sent events) on loopback: asked without a
tool result, it streams a retrieval_tool call; given one, it streams a cited answer. It can also
hang, or answer garbage, to check the deadline and the error a caller gets.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from agents import OpenAIChatCompletionsModel, OpenAIResponsesModel
from agents.tracing import get_trace_provider

from services.agent.agent import Answerer, AnswerRequest, run_answer
from services.agent.config import AgentSettings
from services.agent.events import AnswerDelta, AnswerFinished, Citation, RetrievalResults, ToolCall
from services.agent.models import OFFLINE_MODEL_NAME, OfflineExtractiveModel, make_model, model_settings
from services.common.errors import DeadlineExceeded, Unavailable
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


def tool_call_chunks() -> list[dict]:
    call = {
        "index": 0,
        "id": "call_abc",
        "type": "function",
        "function": {"name": "retrieval_tool", "arguments": ""},
    }
    return [
        chunk({"role": "assistant", "content": None, "tool_calls": [call]}),
        chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"query": "ROS 2 midd'}}]}),
        chunk(
            {"tool_calls": [{"index": 0, "function": {"arguments": 'leware", "top_k": 2, "section": null}'}}]}
        ),
        chunk({}, finish="tool_calls"),
    ]


def answer_chunks() -> list[dict]:
    return [
        chunk({"role": "assistant", "content": ""}),
        *(chunk({"content": piece}) for piece in ANSWER_PIECES),
        chunk({}, finish="stop"),
    ]


@dataclass
class Endpoint:
    """What the scripted endpoint does ("ok", "hang", or garbage: "html", "bad-sse", "error") and what it was sent."""

    mode: str = "ok"
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
            if endpoint.mode == "hang":
                endpoint.release.wait(30)
                return
            if endpoint.mode == "html":
                self._send(200, "text/html", b"<html>a proxy's login page, with a 200</html>")
                return
            if endpoint.mode == "bad-sse":
                self._send(200, "text/event-stream", b'data: {"choices": [{"delta": {"content": 42\n\n')
                return
            if endpoint.mode == "error":
                self._send(500, "application/json", b'{"error": {"message": "model crashed"}}')
                return
            has_tool_result = any(message.get("role") == "tool" for message in body["messages"])
            events = answer_chunks() if has_tool_result else tool_call_chunks()
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


async def test_streamed_tool_call_then_answer_through_the_real_client(endpoint, retrieval):
    servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    request = AnswerRequest(question="What middleware does ROS 2 use?", user_context={"chapter": "Basics"})
    events = [e async for e in run_answer(request, answerer, deadline=time.monotonic() + 20)]

    assert [type(e) for e in events[:2]] == [ToolCall, RetrievalResults]
    assert events[0].call_id == "call_abc"
    assert json.loads(events[0].arguments) == {"query": "ROS 2 middleware", "top_k": 2, "section": None}
    assert servicer.requests[0].query == "ROS 2 middleware" and servicer.requests[0].top_k == 2
    finished = events[-1]
    assert isinstance(finished, AnswerFinished) and finished.model == "scripted-llm"
    # The marker split over two chunks is recognised; [8] was never retrieved and is dropped.
    assert finished.answer == "ROS 2 uses DDS as its middleware. [1] It needs no master. [1]"
    assert "".join(e.text for e in events if isinstance(e, AnswerDelta)) == finished.answer
    assert [(e.index, e.source.chunk_id) for e in events if isinstance(e, Citation)] == [
        (1, CHUNKS[1].chunk_id)
    ]

    first, second = endpoint.requests
    assert first["model"] == "scripted-llm" and first["stream"] is True
    assert first["temperature"] == 0.2 and first["max_tokens"] == 321
    assert [tool["function"]["name"] for tool in first["tools"]] == ["retrieval_tool"]
    assert first["messages"][0]["role"] == "system" and "[n]" not in first["messages"][0]["content"]
    assert "retrieval_tool" in first["messages"][0]["content"]
    assert first["messages"][-1]["content"].endswith("Question: What middleware does ROS 2 use?")
    assert "- chapter: Basics" in first["messages"][-1]["content"]
    assert endpoint.authorization == ["Bearer sk-test", "Bearer sk-test"]
    tool_message = next(m for m in second["messages"] if m["role"] == "tool")
    assert tool_message["tool_call_id"] == "call_abc"
    assert tool_message["content"].startswith("[1] Robotics Handbook > ROS 2 Basics > Middleware")


async def test_a_hanging_endpoint_is_cut_at_the_deadline(endpoint, retrieval):
    _servicer, stub = retrieval
    endpoint.mode = "hang"
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    started = time.monotonic()
    with pytest.raises(DeadlineExceeded, match="before the deadline"):
        [e async for e in run_answer(AnswerRequest(question="q"), answerer, deadline=time.monotonic() + 0.8)]
    assert time.monotonic() - started < 2.0
    assert len(endpoint.requests) == 1


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("html", "returned an empty answer"),
        ("bad-sse", "the model failed: "),
        ("error", "the model failed: InternalServerError"),
    ],
)
async def test_an_endpoint_answering_garbage_is_unavailable(endpoint, retrieval, mode, message):
    _servicer, stub = retrieval
    endpoint.mode = mode
    answerer = Answerer.from_settings(llm_settings(endpoint.url), stub)
    with pytest.raises(Unavailable, match=message):
        [e async for e in run_answer(AnswerRequest(question="q"), answerer, deadline=time.monotonic() + 10)]


async def test_an_unreachable_endpoint_is_unavailable(retrieval):
    _servicer, stub = retrieval
    answerer = Answerer.from_settings(llm_settings("http://127.0.0.1:9/v1"), stub)
    with pytest.raises(Unavailable, match="APIConnectionError"):
        [e async for e in run_answer(AnswerRequest(question="q"), answerer, deadline=time.monotonic() + 10)]


def test_make_model_picks_the_api_and_the_offline_default():
    chat, name = make_model(llm_settings("http://127.0.0.1:9/v1"))
    assert isinstance(chat, OpenAIChatCompletionsModel) and name == "scripted-llm"
    responses, _ = make_model(llm_settings("http://127.0.0.1:9/v1", llm_api="responses"))
    assert isinstance(responses, OpenAIResponsesModel)
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
