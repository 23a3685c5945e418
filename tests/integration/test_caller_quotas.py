"""What one reader may take from the others, through the real suite: its calls running at once
(many connections of questions it never reads), and the session history it keeps.

Readers are JWT subjects (auth on, plaintext loopback); the suite's own calls use the service token.
"""

from __future__ import annotations

import asyncio
import uuid

import grpc
import pytest

from bench.zero_window import ZeroWindowClient
from glossator.v1 import agent_pb2, agent_pb2_grpc
from services.common.auth import AuthSettings
from services.common.clients import ChannelSecurity, make_channel
from tests.conftest import running_suite, suite_settings
from tests.credentials import AUDIENCE, ISSUER, TokenIssuer
from tests.grpc_helpers import completed_response
from tests.integration.test_auth import PAGES, QUESTION, _docs, _ingest, bearer
from tests.unit.agent.session_helpers import require_redis

SERVICE_TOKEN = "service-token-" + uuid.uuid4().hex
ASK_STREAM = "/glossator.v1.AgentService/AskStream"


def long_pages(folder) -> None:
    """Pages whose passages fill a reply: an answer with top_k 20 streams about 100 KB of them,
    more than gRPC buffers for a client that never reads (a small reply is buffered whole, and the
    call ends at once)."""
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(24):
        sentences = " ".join(
            f"Lidar unit {n} measures distance by timing laser pulse {k} that bounces back from a surface."
            for k in range(50)
        )
        (folder / f"lidar-{n}.md").write_text(
            f"# Lidar {n}\n\n## How lidar {n} measures distance\n\n{sentences}\n"
        )


def auth_settings(issuer: TokenIssuer) -> AuthSettings:
    return AuthSettings(token=SERVICE_TOKEN, jwks_file=issuer.jwks_file, issuer=ISSUER, audience=AUDIENCE)


async def answered(suite, metadata, **fields) -> agent_pb2.Response:
    """A reader's question, with its own token only (the suite's channels send the service token)."""
    async with make_channel(f"127.0.0.1:{suite.servers['agent'].port}") as channel:
        call = agent_pb2_grpc.AgentServiceStub(channel).AskStream(
            agent_pb2.AskRequest(query=QUESTION, **fields), metadata=metadata, timeout=30
        )
        return await completed_response(call)


async def test_one_reader_with_many_connections_never_takes_every_call_of_the_agent(tmp_path):
    """The agent serves 6 calls at once. Mallory, a reader, opens 3 connections of 4 questions each
    and reads none of the answers (a window of 0): each held a place until the write timeout (30 s),
    so all 6 were hers and alice was refused RESOURCE_EXHAUSTED "6 calls already running". Now
    mallory's fifth and later questions are refused at once, and alice is answered."""
    issuer = TokenIssuer.create(tmp_path / "jwt")
    _docs(tmp_path / "pages")
    settings = suite_settings(
        tmp_path,
        shared={"auth": auth_settings(issuer), "max_concurrent_rpcs": 6},
        max_concurrent_asks_per_caller=4,
    )
    async with running_suite(settings, ChannelSecurity(token=lambda: SERVICE_TOKEN)) as suite:
        assert (await _ingest(suite)).documents_indexed == len(PAGES)
        mallory = bearer(issuer.token("mallory", ["reader"]))
        attackers = [ZeroWindowClient(suite.servers["agent"].port) for _ in range(3)]
        try:
            for attacker in attackers:
                for _ in range(4):
                    attacker.call(ASK_STREAM, agent_pb2.AskRequest(query=QUESTION, top_k=20), mallory)
            await asyncio.sleep(2.0)
            alice = bearer(issuer.token("alice", ["reader"]))
            response = await answered(suite, alice)
            assert "lidar" in response.answer.lower()
            assert sum(a.ended_streams for a in attackers) >= 8, "past her 4, refused at once"
            # Mallory herself is told to come back later, with a hint of when.
            with pytest.raises(grpc.aio.AioRpcError) as refused:
                await answered(suite, mallory)
            assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
            assert "retry in" in refused.value.details()
            assert any(key == "retry-after" for key, _ in refused.value.trailing_metadata())
        finally:
            for attacker in attackers:
                attacker.close()


@pytest.mark.parametrize("backend", ["sqlite", pytest.param("redis", marks=pytest.mark.redis)])
async def test_a_reader_at_the_storage_quota_is_refused_and_nobody_else(tmp_path, backend):
    """A reader kept 33.7 KB a question, for 30 days. With a quota of about five turns a reader,
    mallory's sixth question is refused RESOURCE_EXHAUSTED; alice, and mallory's anonymous
    neighbour, are answered."""
    issuer = TokenIssuer.create(tmp_path / "jwt")
    _docs(tmp_path / "pages")
    sessions = {"session_backend": backend}
    if backend == "redis":
        sessions["redis_url"] = require_redis()
    settings = suite_settings(
        tmp_path,
        shared={"auth": auth_settings(issuer)},
        session_storage_quota_mb=0.01,
        response_cache_ttl_seconds=0,
        **sessions,
    )
    async with running_suite(settings, ChannelSecurity(token=lambda: SERVICE_TOKEN)) as suite:
        await _ingest(suite)
        # Subjects of this run alone: the test Redis outlives it.
        mallory = bearer(issuer.token(f"mallory-{uuid.uuid4().hex[:8]}", ["reader"]))
        alice = bearer(issuer.token(f"alice-{uuid.uuid4().hex[:8]}", ["reader"]))
        session = (await answered(suite, mallory)).session_id
        asked = 1
        with pytest.raises(grpc.aio.AioRpcError) as refused:
            while asked < 100:
                await answered(suite, mallory, session_id=session if asked % 2 else "")
                asked += 1
        assert 2 <= asked < 20, asked
        assert refused.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "quota" in refused.value.details()
        assert "lidar" in (await answered(suite, alice)).answer.lower()
