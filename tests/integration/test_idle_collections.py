"""Idle collections through a real retrieval server: closed after collection_idle_seconds, their
engine threads given back, searched again with all their chunks, and closed between the calls of a
running ingest without losing a document."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

import pytest
import structlog

from glossator.v1 import common_pb2, retrieval_pb2
from services.retrieval.config import RetrievalSettings
from tests.integration.test_ingest_hardening import INDEXED, ingest, serving
from tests.unit.retrieval.store.test_idle import engine_threads

WORDS = ["lighthouse", "orchard", "glacier", "harbour", "meadow"]


def document(word: str, index: int = 0) -> retrieval_pb2.Document:
    return retrieval_pb2.Document(
        source_path=f"{word}-{index}.md",
        content=f"# The {word}\n\nPage {index} about the {word}: how the {word} looked in the spring.",
    )


async def until(condition: Callable[[], bool], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def closed_collections(logs: list[dict]) -> list[str]:
    return [entry["collection"] for entry in logs if entry["event"] == "collection_closed"]


async def search(stub, collection: str, word: str) -> list[str]:
    request = retrieval_pb2.SearchRequest(
        collection=collection, query=word, top_k=20, min_relevance=0, mode=common_pb2.SEARCH_MODE_SPARSE
    )
    reply = await stub.Search(request, timeout=20)
    return [r.chunk.source_path for r in reply.results]


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
async def test_idle_collections_give_back_their_threads_and_are_searched_again(tmp_path):
    settings = RetrievalSettings(
        port=0, data_dir=tmp_path, collection_idle_seconds=2.0, max_concurrent_ingests=len(WORDS)
    )
    async with serving(settings) as stub:
        baseline = engine_threads()  # other servers of the test session may hold collections open
        with structlog.testing.capture_logs() as logs:
            results = await asyncio.gather(*(ingest(stub, word, [document(word)]) for word in WORDS))
            assert all(r[f"{word}-0.md"].status == INDEXED for r, word in zip(results, WORDS, strict=True))
            open_threads = engine_threads()
            assert await until(lambda: set(WORDS) <= set(closed_collections(logs)), 15)

        assert open_threads >= baseline + len(WORDS)  # 16 a collection (8 a shard)
        assert await until(lambda: engine_threads() <= baseline, 10)
        for word in WORDS:
            assert await search(stub, word, word) == [f"{word}-0.md"]


async def test_collections_closed_between_the_calls_of_a_running_ingest_lose_nothing(tmp_path):
    """Looks for collections idle 5 ms every 2.5 ms while one stream ingests 10 documents: the
    collection is closed between the store calls of the ingest (while the model embeds, for longer
    than that) and reopened by the next one, and never under a call."""
    settings = RetrievalSettings(port=0, data_dir=tmp_path, collection_idle_seconds=0.005)
    # Eight sentences a document, so that the model embeds for a good part of a second between
    # the store calls: with one sentence each (30 ms of int8 model) the close was a matter of luck.
    documents = [
        retrieval_pb2.Document(
            source_path=f"{WORDS[i % len(WORDS)]}-{i}.md",
            content=document(WORDS[i % len(WORDS)], i).content
            + "".join(f" Note {k} of page {i} tells another part of the story." for k in range(8)),
        )
        for i in range(10)
    ]
    async with serving(settings) as stub:
        with structlog.testing.capture_logs() as logs:
            results = await ingest(stub, "book", documents)
            closes_during_ingest = closed_collections(logs).count("book")

        assert {path: r.status for path, r in results.items()} == {d.source_path: INDEXED for d in documents}
        assert closes_during_ingest >= 1
        stats = await stub.Stats(retrieval_pb2.StatsRequest(collection="book"), timeout=20)
        assert (stats.documents, stats.chunks) == (10, 10)
        for word in WORDS:
            found = await search(stub, "book", word)
            assert sorted(found) == sorted(d.source_path for d in documents if word in d.source_path)


async def test_zero_keeps_collections_open(tmp_path):
    async with serving(RetrievalSettings(port=0, data_dir=tmp_path, collection_idle_seconds=0)) as stub:
        with structlog.testing.capture_logs() as logs:
            await ingest(stub, "book", [document("meadow")])
            await asyncio.sleep(0.5)
        assert closed_collections(logs) == []


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
async def test_open_collections_stay_within_their_memory_budget(tmp_path):
    """Room for two small collections (70 MB each plus their few MB of segments), not three:
    opening a third closes the least recently used one (100 open collections took 6.9 GB, past the
    manifests' 2 GiB), and every one is searched again."""
    settings = RetrievalSettings(
        port=0, data_dir=tmp_path, collection_idle_seconds=0, open_collections_memory_mb=175
    )
    async with serving(settings) as stub:
        baseline = engine_threads()
        await ingest(stub, WORDS[0], [document(WORDS[0])])
        one_open = engine_threads() - baseline
        for word in WORDS[1:]:
            assert (await ingest(stub, word, [document(word)]))[f"{word}-0.md"].status == INDEXED
        assert engine_threads() - baseline <= 2 * one_open, "at most two collections open"
        for word in WORDS:
            assert await search(stub, word, word) == [f"{word}-0.md"]
        assert engine_threads() - baseline <= 2 * one_open
