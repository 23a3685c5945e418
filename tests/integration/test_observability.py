"""What operators read, through real servers and a real `glossator serve`: log lines and metrics."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import signal
import subprocess
import sys
import warnings

import grpc
import pytest
import structlog
from prometheus_client import REGISTRY
from structlog.testing import capture_logs

from glossator.v1 import agent_pb2, retrieval_pb2
from services.commands.ingest import async_iter
from services.common.errors import FailedPrecondition
from services.common.interceptors import ObservabilityInterceptor
from services.common.logging import configure_logging

AGENT = "glossator.v1.AgentService"
VALIDATION = "glossator.v1.ValidationService"
RETRIEVAL = "glossator.v1.RetrievalService"
COLLECTION = "observability"
DOCUMENTS = [
    retrieval_pb2.Document(
        source_path="bridge.md",
        content="# The bridge\n\nThe Sydney Harbour Bridge was opened in 1932. It carries rail, "
        "vehicles, bicycles and pedestrians between the central business district and the North Shore.",
    ),
    retrieval_pb2.Document(
        source_path="opera.md",
        content="# The opera house\n\nThe Sydney Opera House opened in 1973. Its roof is made of "
        "precast concrete shells covered with more than a million tiles.",
    ),
]
QUESTION = "When was the Sydney Harbour Bridge opened?"
_NO_PROXY = [("grpc.enable_http_proxy", 0)]


def _sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


@pytest.fixture
def _root_logging_restored():
    """configure_logging sets up the root logger of this process: later tests get theirs back."""
    root = logging.getLogger()
    handlers, level = root.handlers[:], root.level
    yield
    root.handlers = handlers
    root.setLevel(level)
    logging.captureWarnings(False)


def test_serve_writes_one_json_object_a_line_to_stderr_library_lines_included(tmp_path):
    """The embedding module logs through the standard library when validation loads the model."""
    env = {
        **os.environ,
        "GLOSSATOR_VALIDATION_PORT": "0",
        "GLOSSATOR_VALIDATION_METRICS_PORT": "0",
        "GLOSSATOR_VALIDATION_DATA_DIR": str(tmp_path),
        "GLOSSATOR_VALIDATION_LOG_FORMAT": "json",
    }
    command = [sys.executable, "-m", "services.cli", "serve", "validation"]
    process = subprocess.Popen(command, env=env, stderr=subprocess.PIPE, text=True)
    lines = []
    try:
        for line in process.stderr:
            lines.append(line)
            if '"server_ready"' in line:
                break
        process.send_signal(signal.SIGTERM)
        lines += process.stderr.readlines()
        assert process.wait(timeout=30) == 0
    finally:
        process.kill()
    events = [json.loads(line) for line in lines]  # raises on any line that is not JSON
    assert all(isinstance(event, dict) and "event" in event for event in events)
    names = [event["event"] for event in events]
    assert "server_ready" in names and names[-1] == "server_stopped"
    assert any(event.get("logger") == "services.common.embedding" for event in events)


def test_library_log_lines_and_warnings_are_json_with_the_call_context(capsys, _root_logging_restored):
    # An earlier configure_logging left warnings captured with pytest's recorder in place: start over.
    logging.captureWarnings(False)
    configure_logging("INFO", "json")
    structlog.contextvars.bind_contextvars(request_id="req-7")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            logging.captureWarnings(True)  # now over catch_warnings' own showwarning
            logging.getLogger("some.library").warning("disk %s full", "/data")
            warnings.warn("old API", DeprecationWarning, stacklevel=1)
    finally:
        logging.captureWarnings(False)
        structlog.contextvars.clear_contextvars()
    library, warning = (json.loads(line) for line in capsys.readouterr().err.splitlines())
    assert library["event"] == "disk /data full" and library["logger"] == "some.library"
    assert library["level"] == "warning" and library["request_id"] == "req-7" and library["timestamp"]
    assert warning["logger"] == "py.warnings" and "old API" in warning["event"]


def test_console_logs_have_no_colours_when_stderr_is_not_a_terminal(capsys, _root_logging_restored):
    configure_logging("INFO", "console")
    structlog.get_logger("glossator.test").warning("server_started", port=1)
    logging.getLogger("some.library").warning("library line")
    err = capsys.readouterr().err
    assert "server_started" in err and "library line" in err
    assert "\x1b[" not in err


async def _tiny_server(behaviour):
    """A server with the real interceptor and one method, /test.Tiny/Call, that runs `behaviour`."""
    server = grpc.aio.server(interceptors=[ObservabilityInterceptor(max_concurrent_rpcs=4)])
    handler = grpc.unary_unary_rpc_method_handler(behaviour)
    server.add_generic_rpc_handlers([grpc.method_handlers_generic_handler("test.Tiny", {"Call": handler})])
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


async def _refuses():
    raise FailedPrecondition("collection 'x' is being rebuilt", reason="TEST_REASON")


async def _breaks():
    raise RuntimeError("the disk said no")


@pytest.mark.parametrize(
    ("error", "expected"),
    [
        (
            _refuses,
            {
                "code": "FAILED_PRECONDITION",
                "message": "collection 'x' is being rebuilt",
                "reason": "TEST_REASON",
            },
        ),
        (_breaks, {"code": "INTERNAL", "message": "the disk said no", "reason": None}),
    ],
)
async def test_a_failed_call_is_logged_once_with_its_code_message_reason_and_ms(error, expected):
    async def behaviour(_request, _context):
        await error()

    server, port = await _tiny_server(behaviour)
    try:
        with capture_logs() as logs:
            async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", options=_NO_PROXY) as channel:
                call = channel.unary_unary("/test.Tiny/Call")
                with pytest.raises(grpc.aio.AioRpcError) as caught:
                    await call(b"", timeout=10)
            await asyncio.sleep(0.2)  # the closing line is written on the loop's next turn
    finally:
        await server.stop(grace=0)
    assert caught.value.code().name == expected["code"]
    lines = [line for line in logs if line["event"].startswith("rpc_")]  # this process serves only this call
    assert [line["event"] for line in lines] == ["rpc_done"]
    (line,) = lines
    assert {key: line[key] for key in expected} == expected and line["ms"] >= 0
    unexpected = expected["code"] == "INTERNAL"  # an error, with its traceback
    assert line["log_level"] == ("error" if unexpected else "info")
    assert isinstance(line.get("exc_info"), RuntimeError) == unexpected


async def _ingest(suite, documents: list[retrieval_pb2.Document]) -> None:
    options = retrieval_pb2.IngestOptions(collection=COLLECTION)
    requests = [retrieval_pb2.IngestRequest(options=options)]
    requests += [retrieval_pb2.IngestRequest(document=d) for d in documents]
    async for _ in suite.retrieval.Ingest(async_iter(requests), timeout=120):
        pass


async def test_ingests_count_documents_by_outcome_and_chunks_by_collection(suite):
    def counts() -> tuple[float, ...]:
        outcomes = ("indexed", "unchanged", "failed")
        documents = [
            _sample("glossator_ingest_documents_total", collection=COLLECTION, outcome=o) for o in outcomes
        ]
        return (*documents, _sample("glossator_ingest_chunks_written_total", collection=COLLECTION))

    start = counts()
    await _ingest(suite, DOCUMENTS)
    indexed = counts()
    await _ingest(suite, [*DOCUMENTS, retrieval_pb2.Document(source_path="bad.md", read_error="not UTF-8")])
    again = counts()
    assert indexed[:3] == (start[0] + 2, start[1], start[2]) and indexed[3] >= start[3] + 2
    assert again == (indexed[0], indexed[1] + 2, indexed[2] + 1, indexed[3])


async def test_stages_are_labelled_by_the_service_of_the_call_and_caches_count_hits(suite):
    """The agent's validation stage (its round trip) and the validation service's own are apart."""
    await _ingest(suite, DOCUMENTS)

    def stages() -> dict[tuple[str, str], float]:
        pairs = [
            (AGENT, "validation"),
            (VALIDATION, "validation"),
            (RETRIEVAL, "search"),
            (AGENT, "generation"),
        ]
        return {
            (s, stage): _sample("glossator_stage_duration_seconds_count", service=s, stage=stage)
            for s, stage in pairs
        }

    def lookups(cache: str) -> tuple[float, float]:
        return tuple(_sample("glossator_cache_lookups_total", cache=cache, result=r) for r in ("hit", "miss"))

    before, responses, embeddings = stages(), lookups("response"), lookups("query_embedding")
    request = agent_pb2.AskRequest(query=QUESTION, collection=COLLECTION)
    first = (await suite.agent.Ask(request, timeout=60)).response
    second = (await suite.agent.Ask(request, timeout=60)).response
    assert not first.cached and second.cached
    after = stages()
    assert after[AGENT, "validation"] == before[AGENT, "validation"] + 1  # the cached answer is not validated
    assert after[VALIDATION, "validation"] == before[VALIDATION, "validation"] + 1
    assert after[AGENT, "generation"] == before[AGENT, "generation"] + 1
    assert after[RETRIEVAL, "search"] > before[RETRIEVAL, "search"]
    hits, misses = lookups("response")
    assert (hits - responses[0], misses - responses[1]) == (1, 1)
    hits, misses = lookups("query_embedding")
    assert hits > embeddings[0] and misses > embeddings[1]  # the same query, embedded once


async def test_a_streaming_answer_is_in_flight_until_it_ends(suite):
    await _ingest(suite, DOCUMENTS)
    labels = {"service": AGENT, "method": "AskStream"}
    request = agent_pb2.AskRequest(
        query="What is the roof of the opera house made of?", collection=COLLECTION
    )
    async with asyncio.timeout(60):
        stream = suite.agent.AskStream(request)
        await stream.read()  # started: the call is running
        assert _sample("glossator_rpcs_in_flight", **labels) == 1
        while await stream.read() is not grpc.aio.EOF:
            pass
        while _sample("glossator_rpcs_in_flight", **labels):
            await asyncio.sleep(0.01)
