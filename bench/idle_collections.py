"""Idle collections: threads and RSS of the retrieval service with N collections open, then closed.

    .venv/bin/python -m bench.idle_collections [--collections 50] [--idle-seconds 60]

Runs `glossator serve retrieval` in its own process (embedded Qdrant, a fresh data dir) with
GLOSSATOR_RETRIEVAL_COLLECTION_IDLE_SECONDS=--idle-seconds, ingests one short page into each of N
new collections (4 streams at once), and prints the process's threads and RSS: at start, with the
N collections open, and once they have been idle long enough to be closed. Then it times a Search
of a closed collection (which reopens it) against the same Search again. --idle-seconds must exceed
the ingest time (printed; 27 s for 50 on 2 cores), or the first collections close before the count.
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from bench.harness import ServiceProcess, start_services
from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter
from services.common.clients import make_channel

CONCURRENT_INGESTS = 4


def threads(service: ServiceProcess) -> int:
    return len(list(Path(f"/proc/{service.pid}/task").iterdir()))


def figures(label: str, service: ServiceProcess) -> None:
    print(f"{label:<34} {threads(service):>6} threads {service.rss_mib():>8.0f} MiB RSS")


async def ingest(stub: retrieval_pb2_grpc.RetrievalServiceStub, collection: str) -> None:
    options = retrieval_pb2.IngestOptions(collection=collection)
    page = retrieval_pb2.Document(
        source_path=f"{collection}.md",
        content=f"# {collection}\n\nThe keeper of {collection} trims the lamp every evening at dusk.",
    )
    requests = [retrieval_pb2.IngestRequest(options=options), retrieval_pb2.IngestRequest(document=page)]
    async for _ in stub.Ingest(async_iter(requests), timeout=120):
        pass


async def search_ms(stub: retrieval_pb2_grpc.RetrievalServiceStub, collection: str) -> float:
    request = retrieval_pb2.SearchRequest(
        collection=collection, query="keeper", mode=common_pb2.SEARCH_MODE_SPARSE, min_relevance=0
    )
    start = time.perf_counter()
    reply = await stub.Search(request, timeout=30)
    assert [r.chunk.source_path for r in reply.results] == [f"{collection}.md"]
    return (time.perf_counter() - start) * 1000


async def main(collections: int, idle_seconds: float) -> None:
    with tempfile.TemporaryDirectory() as data_dir:
        env = {
            "GLOSSATOR_RETRIEVAL_COLLECTION_IDLE_SECONDS": str(idle_seconds),
            "GLOSSATOR_RETRIEVAL_MAX_COLLECTIONS": str(collections + 1),
        }
        service = await start_services(Path(data_dir), ["retrieval"], env)
        try:
            async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
                stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
                figures("started", service)
                names = [f"idle-bench-{i}" for i in range(collections)]
                slots = asyncio.Semaphore(CONCURRENT_INGESTS)

                async def one(name: str) -> None:
                    async with slots:
                        await ingest(stub, name)

                start = time.perf_counter()
                await asyncio.gather(*(one(name) for name in names))
                print(f"ingested in {time.perf_counter() - start:.1f} s")
                figures(f"{collections} collections open", service)
                # The service closes a collection at most min(60 s, idle / 2) after it became idle.
                await asyncio.sleep(idle_seconds + min(60.0, idle_seconds / 2) + 1)
                figures(f"after {idle_seconds:g} s idle (closed)", service)
                reopen = await search_ms(stub, names[0])
                again = await search_ms(stub, names[0])
                print(f"Search of a closed collection: {reopen:.1f} ms (reopens it), then {again:.1f} ms")
        finally:
            service.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--collections", type=int, default=50)
    parser.add_argument("--idle-seconds", type=float, default=60.0)
    args = parser.parse_args()
    asyncio.run(main(args.collections, args.idle_seconds))
