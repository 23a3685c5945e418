"""The shared runtime, through real servers: health, reflection, request ids, errors, metrics."""

from __future__ import annotations

import grpc
import httpx
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from glossator.v1 import common_pb2, validation_pb2
from services.common.metrics import start_metrics_endpoint
from tests.grpc_helpers import field_violations, trailer

SERVICES = {
    "retrieval": "glossator.v1.RetrievalService",
    "validation": "glossator.v1.ValidationService",
    "agent": "glossator.v1.AgentService",
}


def _valid_request() -> validation_pb2.ValidateRequest:
    return validation_pb2.ValidateRequest(
        query="When was the bridge opened?",
        response="The bridge opened in 1932 [1].",
        context=[common_pb2.Chunk(chunk_id="c1", text="The Sydney Harbour Bridge was opened in 1932.")],
    )


@pytest.mark.parametrize("name", SERVICES)
async def test_health_reports_serving_for_the_server_and_its_service(suite, name):
    health = health_pb2_grpc.HealthStub(suite.channels[name])
    for service in ("", SERVICES[name]):
        reply = await health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
        assert reply.status == health_pb2.HealthCheckResponse.SERVING


async def test_health_of_an_unknown_service_is_not_found(suite):
    health = health_pb2_grpc.HealthStub(suite.channels["validation"])
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await health.Check(health_pb2.HealthCheckRequest(service="no.such.Service"), timeout=5)
    assert caught.value.code() == grpc.StatusCode.NOT_FOUND


@pytest.mark.parametrize("name", SERVICES)
async def test_reflection_lists_the_service(suite, name):
    stub = reflection_pb2_grpc.ServerReflectionStub(suite.channels[name])
    replies = [
        r
        async for r in stub.ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")])
        )
    ]
    listed = {s.name for s in replies[0].list_services_response.service}
    assert SERVICES[name] in listed
    assert "grpc.health.v1.Health" in listed


async def test_request_id_is_returned_in_trailing_metadata(suite):
    call = suite.validation.Validate(_valid_request(), metadata=[("x-request-id", "req-42")], timeout=30)
    await call
    assert trailer(await call.trailing_metadata(), "x-request-id") == "req-42"


async def test_a_request_id_is_made_up_when_the_caller_sends_none(suite):
    call = suite.validation.Validate(_valid_request(), timeout=30)
    await call
    made_up = trailer(await call.trailing_metadata(), "x-request-id")
    assert made_up and len(made_up) == 32


async def test_invalid_request_gets_invalid_argument_with_field_violations(suite):
    bad = validation_pb2.ValidateRequest(
        response="", context=[common_pb2.Chunk(chunk_id="c1", text="x" * 20_001)], threshold=1.5
    )
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        await suite.validation.Validate(bad, metadata=[("x-request-id", "bad-1")], timeout=10)
    error = caught.value
    assert error.code() == grpc.StatusCode.INVALID_ARGUMENT
    violations = field_violations(error)
    assert set(violations) == {"response", "context[0].text", "threshold"}
    assert "empty" in violations["response"]
    assert trailer(error, "x-request-id") == "bad-1"


async def test_metrics_endpoint_counts_calls_by_method_and_code(suite):
    port = start_metrics_endpoint("127.0.0.1", 0)
    await suite.validation.Validate(_valid_request(), timeout=30)
    with pytest.raises(grpc.aio.AioRpcError):
        await suite.validation.Validate(validation_pb2.ValidateRequest(), timeout=10)
    async with httpx.AsyncClient() as client:
        text = (await client.get(f"http://127.0.0.1:{port}/metrics")).text
    ok = 'glossator_rpc_requests_total{code="OK",method="Validate",service="glossator.v1.ValidationService"}'
    bad = 'glossator_rpc_requests_total{code="INVALID_ARGUMENT",method="Validate",service="glossator.v1.ValidationService"}'
    assert ok in text
    assert bad in text
    assert 'glossator_rpc_duration_seconds_count{method="Validate"' in text


@pytest.mark.parametrize(
    ("name", "method", "streaming"),
    [
        ("validation", "/glossator.v1.ValidationService/Validate", False),
        ("retrieval", "/glossator.v1.RetrievalService/Ingest", True),
    ],
)
async def test_undecodable_bytes_are_invalid_argument(suite, name, method, streaming):
    bad_utf8 = bytes([0x12, 3, 0xFF, 0xFE, 0x41])  # field 2 (a string) holding invalid UTF-8
    if streaming:  # IngestRequest.document (field 2) whose source_path (field 2) is that string
        bad_utf8 = bytes([0x12, len(bad_utf8)]) + bad_utf8
    channel = suite.channels[name]
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        if streaming:
            call = channel.stream_stream(method, request_serializer=None, response_deserializer=None)
            _ = [reply async for reply in call(iter([bad_utf8]), timeout=10)]
        else:
            await channel.unary_unary(method, request_serializer=None, response_deserializer=None)(
                bad_utf8, timeout=10
            )
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert "UTF-8" in field_violations(caught.value)["request"]
