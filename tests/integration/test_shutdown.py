"""SIGTERM on a real `glossator serve` process: running streams finish within the grace period."""

from __future__ import annotations

import asyncio
import signal
import time

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import start_services
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.common.clients import make_channel

GRACE_SECONDS = 15


def _document(i: int) -> retrieval_pb2.IngestRequest:
    text = f"# Page {i}\n\nThis page number {i} explains topic {i} in a short paragraph of plain words."
    return retrieval_pb2.IngestRequest(
        document=retrieval_pb2.Document(source_path=f"page-{i}.md", content=text)
    )


async def _health(channel: grpc.aio.Channel) -> str:
    try:
        reply = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=2)
    except grpc.aio.AioRpcError:
        return "gone"
    return health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status)


async def test_sigterm_during_a_long_ingest_stream_lets_it_finish(tmp_path):
    service = await start_services(
        tmp_path, ["retrieval"], {"GLOSSATOR_RETRIEVAL_GRACE_SECONDS": str(GRACE_SECONDS)}
    )
    target = f"127.0.0.1:{service.ports['retrieval']}"
    terminated = asyncio.Event()

    async def requests():
        yield retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection="drain"))
        for i in range(8):
            if i == 3:
                service.process.send_signal(signal.SIGTERM)
                terminated.set()
            yield _document(i)
            await asyncio.sleep(0.3)

    try:
        async with make_channel(target) as channel:
            replies = [
                r
                async for r in retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(requests(), timeout=60)
            ]
            assert terminated.is_set()
            assert await _health(channel) in ("NOT_SERVING", "gone")
        documents = [r.document for r in replies if r.HasField("document")]
        assert [d.status for d in documents] == [retrieval_pb2.DOCUMENT_STATUS_INDEXED] * 8
        assert replies[-1].HasField("summary") and replies[-1].summary.documents_indexed == 8
        stop_started = time.monotonic()
        assert service.process.wait(timeout=GRACE_SECONDS + 10) == 0
        assert time.monotonic() - stop_started < GRACE_SECONDS + 10
    finally:
        if service.process.poll() is None:
            service.process.kill()
