"""A collection remembers which variant of the model embedded it: `glossator serve retrieval` on
another runtime refuses it (FAILED_PRECONDITION naming both) and leaves it as it was."""

from __future__ import annotations

from pathlib import Path

import grpc
import pytest

from bench.harness import start_services
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter, ingest, ingest_requests
from services.common.clients import make_channel
from services.common.embedding import LOCAL_MODEL_NAME, model_name
from services.retrieval.ingest import read_folder

ROOT = Path(__file__).resolve().parents[2]
SAMPLE = ROOT / "docs"
QUESTION = "How do I ingest a Docusaurus site?"


async def _ingest_sample(stub, options) -> None:
    async for _reply in ingest(stub, ingest_requests(options, async_iter(read_folder(SAMPLE)))):
        pass


async def _stats(stub) -> tuple[int, int]:
    stats = await stub.Stats(retrieval_pb2.StatsRequest(collection="book"))
    return stats.documents, stats.chunks


async def test_a_collection_of_int8_vectors_is_refused_by_float32_and_left_untouched(tmp_path):
    options = retrieval_pb2.IngestOptions(collection="book", base_url="https://book.example/docs/")
    service = await start_services(tmp_path, ["retrieval"], {"GLOSSATOR_EMBEDDING_RUNTIME": "onnx-int8"})
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            await _ingest_sample(stub, options)
            before = await _stats(stub)
            found = await stub.Search(retrieval_pb2.SearchRequest(collection="book", query=QUESTION))
    finally:
        service.stop()
    assert before[1] > 0 and found.results

    service = await start_services(tmp_path, ["retrieval"], {"GLOSSATOR_EMBEDDING_RUNTIME": "onnx-float32"})
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            with pytest.raises(grpc.aio.AioRpcError) as searched:
                await stub.Search(retrieval_pb2.SearchRequest(collection="book", query=QUESTION))
            with pytest.raises(grpc.aio.AioRpcError) as ingested:
                await _ingest_sample(stub, options)
            assert await _stats(stub) == before
    finally:
        service.stop()
    for refused in (searched.value, ingested.value):
        assert refused.code() == grpc.StatusCode.FAILED_PRECONDITION
        message = refused.details()
        # Both names: the int8 one that built it, and the plain one of the float32 runtime.
        assert model_name("onnx-int8") in message and message.count(LOCAL_MODEL_NAME) == 2, message
        assert "GLOSSATOR_EMBEDDING_RUNTIME" in message

    service = await start_services(tmp_path, ["retrieval"], {"GLOSSATOR_EMBEDDING_RUNTIME": "onnx-int8"})
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            assert await _stats(stub) == before
            again = await stub.Search(retrieval_pb2.SearchRequest(collection="book", query=QUESTION))
    finally:
        service.stop()
    assert [r.chunk.chunk_id for r in again.results] == [r.chunk.chunk_id for r in found.results]
