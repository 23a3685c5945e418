"""Readers that ask and never read (HTTP/2 stream window 0, no deadline) through the real suite:
answer slots are free once an answer is computed, legitimate questions are answered meanwhile and
after, health answers at once."""

from __future__ import annotations

import asyncio
import time

import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.zero_window import ZeroWindowClient
from glossator.v1 import agent_pb2
from tests.conftest import running_suite, suite_settings
from tests.grpc_helpers import completed_response
from tests.integration.test_auth import PAGES, QUESTION, _docs, _ingest

ASK_STREAM = "/glossator.v1.AgentService/AskStream"


@pytest.fixture(scope="module")
async def suite(tmp_path_factory):
    data_dir = tmp_path_factory.mktemp("zero-window")
    _docs(data_dir / "pages")
    async with running_suite(suite_settings(data_dir, max_concurrent_answers=2)) as running:
        summary = await _ingest(running)
        assert summary.documents_indexed == len(PAGES)
        yield running


async def _answered(suite) -> agent_pb2.Response:
    return await completed_response(suite.agent.AskStream(agent_pb2.AskRequest(query=QUESTION), timeout=30))


async def test_readers_that_never_read_do_not_hold_answer_slots(suite):
    port = suite.servers["agent"].port
    attacker = ZeroWindowClient(port)
    try:
        for _ in range(8):
            attacker.call(ASK_STREAM, agent_pb2.AskRequest(query=QUESTION))
        await asyncio.sleep(1.0)
        started = time.monotonic()
        health = await health_pb2_grpc.HealthStub(suite.channels["agent"]).Check(
            health_pb2.HealthCheckRequest(), timeout=1
        )
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        for _ in range(3):  # more than the 2 answer slots
            response = await _answered(suite)
            assert "lidar" in response.answer.lower()
        assert time.monotonic() - started < 30
    finally:
        attacker.close()
    response = await _answered(suite)  # and right after
    assert response.sources


async def test_a_stream_the_client_never_reads_ends_after_the_write_timeout(tmp_path):
    """With 4 calls at most, 8 readers that never read took them all: every later call was refused
    until the attacker left. Now each call ends after the write timeout and frees its place."""
    _docs(tmp_path / "pages")
    shared = {"max_concurrent_rpcs": 4, "stream_write_timeout_seconds": 1.0}
    async with running_suite(suite_settings(tmp_path, shared=shared)) as suite:
        await _ingest(suite)
        attacker = ZeroWindowClient(suite.servers["agent"].port)
        try:
            for _ in range(8):
                attacker.call(ASK_STREAM, agent_pb2.AskRequest(query=QUESTION))
            await asyncio.sleep(3.0)
            assert attacker.ended_streams >= 4, "the calls over the limit are refused at once"
            response = await _answered(suite)
            assert "lidar" in response.answer.lower()
        finally:
            attacker.close()
