"""x-request-id through a real server: a safe one is kept, anything else is replaced and logged."""

from __future__ import annotations

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from structlog.testing import capture_logs

from tests.grpc_helpers import trailer


async def _request_id_returned(suite, sent: str) -> str:
    call = health_pb2_grpc.HealthStub(suite.channels["validation"]).Check(
        health_pb2.HealthCheckRequest(), metadata=[("x-request-id", sent)], timeout=5
    )
    await call
    return trailer(await call.trailing_metadata(), "x-request-id")


@pytest.mark.parametrize("sent", ["req-42", "0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0", "svc.a:b_c", "x" * 128])
async def test_a_request_id_of_safe_characters_is_kept(suite, sent):
    assert await _request_id_returned(suite, sent) == sent


@pytest.mark.parametrize(
    "sent", ["two words", 'id"},{"admin":true', "<script>", "../etc/passwd", "$(reboot)", "a%0Ab", "x" * 129]
)
async def test_any_other_request_id_is_replaced_and_the_replacement_logged(suite, sent):
    with capture_logs() as logs:
        returned = await _request_id_returned(suite, sent)
    assert returned != sent and len(returned) == 32 and returned.isalnum()
    ignored = [line for line in logs if line["event"] == "request_id_ignored"]
    assert len(ignored) == 1
