"""The LLM judge against a scripted OpenAI-compatible server on loopback (a real HTTP edge)."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from services.common.errors import Unavailable
from services.validation.grounding import ContextChunk
from services.validation.llm_judge import LlmJudgeChecker

CONTEXT = [
    ContextChunk("c1", "The lighthouse was built in 1902."),
    ContextChunk("c2", "It was automated in 1950."),
]
ANSWER = "The lighthouse was built in 1902 [1]. It was painted red in 1975 [2]."


@dataclass
class Reply:
    status: int = 200
    body: str = ""
    delay: float = 0.0


@dataclass
class FakeChatServer:
    """Answers POST /v1/chat/completions with the scripted replies, in order, and records requests."""

    replies: list[Reply] = field(default_factory=list)
    requests: list[dict] = field(default_factory=list)
    port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"


def completion(content: str) -> str:
    return json.dumps(
        {
            "id": "chatcmpl-1",
            "object": "chat.completion",
            "model": "judge-model",
            "choices": [
                {"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}
            ],
        }
    )


def verdicts(*items: dict) -> Reply:
    return Reply(body=completion(json.dumps({"verdicts": list(items)})))


@pytest.fixture
def fake_server() -> Iterator[FakeChatServer]:
    fake = FakeChatServer()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers["Content-Length"])
            fake.requests.append(
                {
                    "path": self.path,
                    "authorization": self.headers.get("Authorization"),
                    "body": json.loads(self.rfile.read(length)),
                }
            )
            reply = fake.replies.pop(0)
            time.sleep(reply.delay)
            payload = reply.body.encode()
            try:
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up (the timeout test)

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    fake.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    yield fake
    server.shutdown()
    server.server_close()


def judge(fake: FakeChatServer, timeout: float = 5.0) -> LlmJudgeChecker:
    return LlmJudgeChecker(fake.base_url, "judge-model", api_key="secret", timeout=timeout)


async def test_verdicts_become_the_same_result_as_the_offline_checker_gives(fake_server):
    fake_server.replies.append(
        verdicts(
            {"claim": 1, "supported": True, "chunks": [1], "reason": "stated in passage 1"},
            {"claim": 2, "supported": False, "chunks": [], "reason": "no passage mentions paint"},
        )
    )
    result = await judge(fake_server).check("When was it built?", ANSWER, CONTEXT, [], None)

    assert result.checker == "llm-judge:judge-model"
    assert [(c.supported, c.best_chunk_id, c.reason) for c in result.claims] == [
        (True, "c1", "stated in passage 1"),
        (False, "", "no passage mentions paint"),
    ]
    first = len("The lighthouse was built in 1902.")
    assert result.grounding_score == pytest.approx(first / (first + len("It was painted red in 1975.")))
    assert (result.citations_found, result.citations_valid) == (2, 1)
    assert [s.text for s in result.unsupported_spans] == ["It was painted red in 1975 [2]."]

    [request] = fake_server.requests
    assert request["path"] == "/v1/chat/completions"
    assert request["authorization"] == "Bearer secret"
    assert request["body"]["model"] == "judge-model"
    prompt = request["body"]["messages"][-1]["content"]
    assert "[2] It was automated in 1950." in prompt
    assert "2. It was painted red in 1975." in prompt


async def test_json_wrapped_in_a_code_fence_is_accepted(fake_server):
    fenced = '```json\n{"verdicts": [{"claim": 1, "supported": true, "chunks": [2]}]}\n```'
    fake_server.replies.append(Reply(body=completion(fenced)))
    result = await judge(fake_server).check("", "It was automated in 1950.", CONTEXT, [], None)
    assert result.is_grounded and result.claims[0].best_chunk_index == 1


async def test_a_refusal_needs_no_call(fake_server):
    result = await judge(fake_server).check("", "The book does not cover its keepers.", CONTEXT, [], None)
    assert result.is_refusal and result.is_grounded
    assert fake_server.requests == []


@pytest.mark.parametrize(
    ("reply", "message"),
    [
        (Reply(status=500, body='{"error": "overloaded"}'), "answered HTTP 500"),
        (Reply(body="not json at all"), "no chat completion"),
        (Reply(body=completion("I think claim 1 is fine.")), "not the expected JSON"),
        (Reply(body=completion('{"verdicts": [{"claim": "one"}]}')), "not the expected JSON"),
        (verdicts({"claim": 1, "supported": True}), "verdicts for claims [1], expected 1..2"),
        (verdicts({"claim": 1, "supported": True}, {"claim": 1, "supported": False}), "expected 1..2"),
    ],
)
async def test_endpoint_errors_and_garbage_raise_unavailable(fake_server, reply, message):
    fake_server.replies.append(reply)
    with pytest.raises(Unavailable, match=re.escape(message)):
        await judge(fake_server).check("", ANSWER, CONTEXT, [], None)


async def test_a_hanging_endpoint_times_out_as_unavailable(fake_server):
    fake_server.replies.append(Reply(body=completion("{}"), delay=0.6))
    with pytest.raises(Unavailable, match="unreachable"):
        await judge(fake_server, timeout=0.2).check("", ANSWER, CONTEXT, [], None)


async def test_an_endpoint_that_is_down_is_unavailable():
    checker = LlmJudgeChecker("http://127.0.0.1:9/v1", "judge-model", timeout=2.0)
    with pytest.raises(Unavailable, match="unreachable"):
        await checker.check("", ANSWER, CONTEXT, [], None)
