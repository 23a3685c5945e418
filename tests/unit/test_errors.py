"""Domain errors as statuses: ErrorInfo reasons, and retry pushback through a real server and channel."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager

import grpc
import pytest
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.common.clients import make_channel
from services.common.errors import (
    ERROR_DOMAIN,
    FailedPrecondition,
    FieldViolation,
    GlossatorError,
    InvalidArgument,
    NotFound,
    Reason,
    Unavailable,
)
from services.common.interceptors import RETRY_PUSHBACK_KEY, status_for
from services.common.server import GlossatorServer, create_server
from services.common.settings import ServiceSettings

SERVICE = "glossator.test.Failing"
METHOD = f"/{SERVICE}/Call"


def _unpacked(
    status: grpc.Status,
) -> tuple[list[error_details_pb2.BadRequest], list[error_details_pb2.ErrorInfo]]:
    """The BadRequest and ErrorInfo details a grpc.Status carries in its trailers."""
    bad_requests, infos = [], []
    for key, value in status.trailing_metadata:
        if key != "grpc-status-details-bin":
            continue
        for detail in status_pb2.Status.FromString(value).details:
            if detail.Is(error_details_pb2.BadRequest.DESCRIPTOR):
                bad_requests.append(error_details_pb2.BadRequest())
                detail.Unpack(bad_requests[-1])
            elif detail.Is(error_details_pb2.ErrorInfo.DESCRIPTOR):
                infos.append(error_details_pb2.ErrorInfo())
                detail.Unpack(infos[-1])
    return bad_requests, infos


def test_the_constructor_stores_reason_metadata_and_retryable():
    error = FailedPrecondition("refused", reason=Reason.LLM_REJECTED, metadata={"http_status": "401"})
    assert (error.message, error.reason, error.metadata, error.retryable) == (
        "refused",
        "LLM_REJECTED",
        {"http_status": "401"},
        True,
    )
    assert str(error) == "refused" and isinstance(error, GlossatorError)
    plain = NotFound("no such session")
    assert (plain.reason, plain.metadata, plain.retryable) == ("", {}, True)
    assert not Unavailable("down", retryable=False).retryable


def test_invalid_argument_keeps_its_violations_first_signature():
    error = InvalidArgument([FieldViolation("query", "must not be empty")])
    assert error.message == "invalid request: query: must not be empty" and error.reason == ""
    tagged = InvalidArgument(
        [FieldViolation("top_k", "too big")], "custom", reason="TOO_BIG", retryable=False
    )
    assert (tagged.message, tagged.reason, tagged.retryable) == ("custom", "TOO_BIG", False)


def test_a_reason_becomes_an_error_info_of_the_glossator_domain():
    metadata = {"endpoint": "http://llm:8080/v1", "model": "qwen", "http_status": "404"}
    status = status_for(FailedPrecondition("refused", reason=Reason.LLM_REJECTED, metadata=metadata))
    assert status.code == grpc.StatusCode.FAILED_PRECONDITION and status.details == "refused"
    bad_requests, infos = _unpacked(status)
    assert bad_requests == [] and len(infos) == 1
    assert (infos[0].reason, infos[0].domain, dict(infos[0].metadata)) == (
        "LLM_REJECTED",
        ERROR_DOMAIN,
        metadata,
    )
    assert ERROR_DOMAIN == "glossator.dev"


def test_error_info_goes_next_to_bad_request():
    error = InvalidArgument([FieldViolation("collection", "unknown")], reason="UNKNOWN_COLLECTION")
    bad_requests, infos = _unpacked(status_for(error))
    assert [v.field for v in bad_requests[0].field_violations] == ["collection"]
    assert [i.reason for i in infos] == ["UNKNOWN_COLLECTION"]


def test_no_reason_no_error_info_and_only_non_retryable_errors_push_back():
    status = status_for(Unavailable("down"))
    assert _unpacked(status) == ([], [])
    assert RETRY_PUSHBACK_KEY not in dict(status.trailing_metadata)
    pushed = status_for(Unavailable("down", reason=Reason.LLM_UNAVAILABLE, retryable=False))
    assert dict(pushed.trailing_metadata)[RETRY_PUSHBACK_KEY] == "-1"
    assert [i.reason for i in _unpacked(pushed)[1]] == ["LLM_UNAVAILABLE"]


@asynccontextmanager
async def failing_server(
    error: Callable[[], GlossatorError],
) -> AsyncIterator[tuple[GlossatorServer, list[int]]]:
    """A real server (the project's runtime, port 0) whose one method raises `error()`; the
    list counts the handler's invocations."""
    calls: list[int] = []

    async def call(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        calls.append(1)
        raise error()

    def register(server: grpc.aio.Server) -> list[str]:
        handler = grpc.unary_unary_rpc_method_handler(call)
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE, {"Call": handler}),))
        return [SERVICE]

    server = create_server("failing", ServiceSettings(host="127.0.0.1", port=0, grace_seconds=0), register)
    await server.start()
    try:
        yield server, calls
    finally:
        await server.stop(grace=0)


async def _call_once(port: int) -> grpc.aio.AioRpcError:
    channel = make_channel(f"127.0.0.1:{port}")
    try:
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await channel.unary_unary(METHOD)(b"", timeout=10)
        return caught.value
    finally:
        await channel.close()


async def test_a_non_retryable_unavailable_reaches_the_handler_once():
    error = lambda: Unavailable("the LLM is down", reason=Reason.LLM_UNAVAILABLE, retryable=False)  # noqa: E731
    async with failing_server(error) as (server, calls):
        caught = await _call_once(server.port)
    assert caught.code() == grpc.StatusCode.UNAVAILABLE and caught.details() == "the LLM is down"
    assert len(calls) == 1
    info = error_details_pb2.ErrorInfo()
    assert rpc_status.from_call(caught).details[0].Unpack(info) and info.reason == Reason.LLM_UNAVAILABLE


async def test_a_retryable_unavailable_is_retried_by_the_channel():
    async with failing_server(lambda: Unavailable("retrieval restarting")) as (server, calls):
        caught = await _call_once(server.port)
    assert caught.code() == grpc.StatusCode.UNAVAILABLE
    assert len(calls) == 4  # the retry policy's maxAttempts (services/common/clients.py)
