"""Ingest streams cannot hold a collection or the server: idle and total timeouts, a bounded wait
for a busy collection, their own concurrency limit; health and reflection are never refused.

Each test starts a real retrieval server on port 0 and drives real grpc.aio streams."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.common.clients import make_channel
from services.retrieval.config import RetrievalSettings
from services.suite import build_service


@asynccontextmanager
async def retrieval_server(data_dir: Path, **settings) -> AsyncIterator[grpc.aio.Channel]:
    """A real retrieval server with these settings, and a channel to it."""
    server = await build_service(
        "retrieval",
        RetrievalSettings(host="127.0.0.1", port=0, data_dir=data_dir, grace_seconds=0.5, **settings),
    )
    await server.start()
    channel = make_channel(f"127.0.0.1:{server.port}")
    try:
        yield channel
    finally:
        await channel.close()
        await server.stop(grace=0.5)


def _options(collection: str) -> retrieval_pb2.IngestRequest:
    return retrieval_pb2.IngestRequest(options=retrieval_pb2.IngestOptions(collection=collection))


def _document(name: str) -> retrieval_pb2.IngestRequest:
    text = f"# {name}\n\nThe page {name} tells how the harbour bridge was painted in the spring."
    return retrieval_pb2.IngestRequest(
        document=retrieval_pb2.Document(source_path=f"{name}.md", content=text)
    )


async def _idle_ingest(channel: grpc.aio.Channel, collection: str) -> grpc.aio.StreamStreamCall:
    """An Ingest stream that sends one document, has it acknowledged, then sends nothing more."""

    async def requests():
        yield _options(collection)
        yield _document(f"{collection}-first")
        await asyncio.Event().wait()

    call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(requests(), timeout=30)
    acknowledged = await call.read()
    assert acknowledged.document.status == retrieval_pb2.DOCUMENT_STATUS_INDEXED
    return call


async def _ending(call: grpc.aio.StreamStreamCall) -> tuple[grpc.aio.AioRpcError, list, float]:
    """Reads the call to its end: its error, the replies read on the way, the seconds it took."""
    started, replies = time.monotonic(), []
    with pytest.raises(grpc.aio.AioRpcError) as caught:
        while (reply := await call.read()) is not grpc.aio.EOF:
            replies.append(reply)
    return caught.value, replies, time.monotonic() - started


async def _documents_stored(channel: grpc.aio.Channel, collection: str) -> int:
    stats = await retrieval_pb2_grpc.RetrievalServiceStub(channel).Stats(
        retrieval_pb2.StatsRequest(collection=collection), timeout=10
    )
    return stats.documents


async def _ingest(channel: grpc.aio.Channel, collection: str, name: str) -> retrieval_pb2.IngestProgress:
    stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
    replies = [r async for r in stub.Ingest(iter([_options(collection), _document(name)]), timeout=20)]
    return replies[-1].summary


async def _refused_ingest(channel: grpc.aio.Channel) -> tuple[grpc.StatusCode, str]:
    """The status of an Ingest refused before it reads anything. Nothing is written: a write racing
    the refusal turns the client's status into INTERNAL (grpc/grpc#36066)."""
    call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(timeout=20)
    return await call.code(), await call.details()


async def test_an_idle_ingest_stream_is_ended_and_what_it_acknowledged_is_kept(tmp_path):
    async with retrieval_server(tmp_path, ingest_idle_seconds=1.0) as channel:
        call = await _idle_ingest(channel, "idle")
        error, _, seconds = await _ending(call)
        assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "no Ingest message for 1 s" in error.details()
        assert seconds < 4
        assert await _documents_stored(channel, "idle") == 1
        # The collection is free again: the next ingest into it runs at once.
        assert (await _ingest(channel, "idle", "second")).documents_indexed == 1


async def test_a_pruning_ingest_cut_off_for_idleness_deletes_nothing(tmp_path):
    async with retrieval_server(tmp_path, ingest_idle_seconds=1.0) as channel:
        await _ingest(channel, "kept", "page-a")
        await _ingest(channel, "kept", "page-b")

        async def prune_then_stall():
            yield retrieval_pb2.IngestRequest(
                options=retrieval_pb2.IngestOptions(collection="kept", prune=True)
            )
            yield _document("page-a")
            await asyncio.Event().wait()

        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(prune_then_stall(), timeout=10)
        error, _, _ = await _ending(call)
        assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED and "no Ingest message" in error.details()
        assert await _documents_stored(channel, "kept") == 2


async def test_an_ingest_stream_is_ended_when_it_runs_past_its_total_time(tmp_path):
    async def trickle():
        """Documents for 1.4 s, then silence shorter than the idle limit: only the total time ends
        the stream, and no write races that end (grpc/grpc#36066 would turn it into INTERNAL)."""
        yield _options("trickle")
        for i in range(7):
            yield _document(f"page-{i}")
            await asyncio.sleep(0.2)
        await asyncio.Event().wait()

    async with retrieval_server(tmp_path, ingest_idle_seconds=5.0, ingest_max_seconds=2.0) as channel:
        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(trickle(), timeout=30)
        error, replies, seconds = await _ending(call)
        assert error.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        assert "longer than 2 s" in error.details()
        assert seconds < 6
        acknowledged = [r for r in replies if r.HasField("document")]
        assert acknowledged and await _documents_stored(channel, "trickle") == len(acknowledged)


async def test_an_ingest_into_a_busy_collection_is_aborted_after_a_short_wait(tmp_path):
    async with retrieval_server(tmp_path, ingest_lock_wait_seconds=0.5) as channel:
        holder = await _idle_ingest(channel, "busy")
        started = time.monotonic()
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await _ingest(channel, "busy", "second")
        assert caught.value.code() == grpc.StatusCode.ABORTED
        assert "another ingest is running into collection 'busy'" in caught.value.details()
        assert time.monotonic() - started < 3
        # Other collections are not held up.
        assert (await _ingest(channel, "free", "other")).documents_indexed == 1
        holder.cancel()


async def test_ingests_past_their_own_limit_are_refused_and_search_still_answers(tmp_path):
    async with retrieval_server(tmp_path, max_concurrent_ingests=2) as channel:
        holders = [await _idle_ingest(channel, name) for name in ("one", "two")]
        code, details = await _refused_ingest(channel)
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "ingest" in details
        found = await retrieval_pb2_grpc.RetrievalServiceStub(channel).Search(
            retrieval_pb2.SearchRequest(collection="one", query="harbour bridge painted", min_relevance=0),
            timeout=10,
        )
        assert found.results
        for holder in holders:
            holder.cancel()


async def test_health_and_reflection_answer_when_every_rpc_slot_is_taken(tmp_path):
    async with retrieval_server(tmp_path, max_concurrent_rpcs=2, max_concurrent_ingests=2) as channel:
        holders = [await _idle_ingest(channel, name) for name in ("one", "two")]
        with pytest.raises(grpc.aio.AioRpcError) as caught:
            await retrieval_pb2_grpc.RetrievalServiceStub(channel).Stats(
                retrieval_pb2.StatsRequest(collection="one"), timeout=5
            )
        assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        health = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=5)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
        reflection = reflection_pb2_grpc.ServerReflectionStub(channel).ServerReflectionInfo(
            iter([reflection_pb2.ServerReflectionRequest(list_services="")]), timeout=5
        )
        listed = [s.name async for reply in reflection for s in reply.list_services_response.service]
        assert "glossator.v1.RetrievalService" in listed
        for holder in holders:
            holder.cancel()


async def test_an_ingest_into_one_collection_too_many_is_refused_and_existing_ones_still_take_documents(
    tmp_path,
):
    async with retrieval_server(tmp_path, max_collections=2) as channel:
        for name in ("one", "two"):
            assert (await _ingest(channel, name, f"page-{name}")).documents_indexed == 1
        call = retrieval_pb2_grpc.RetrievalServiceStub(channel).Ingest(timeout=20)
        await call.write(_options("three"))  # refused after the options are read: nothing else is sent
        assert await call.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
        assert "maximum of 2 collections" in await call.details()
        assert (await _ingest(channel, "one", "page-again")).documents_indexed == 1
