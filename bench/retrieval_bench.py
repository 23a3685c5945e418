"""Retrieval benchmark: ingest throughput, unchanged re-ingest, Search latency/QPS, resident memory.

    .venv/bin/python -m bench.retrieval_bench [--corpus DIR] [--data-dir DIR] [--json]

The service runs in its own process (`glossator serve retrieval`, embedded Qdrant) on a fresh data
directory, or on `--data-dir` (kept, so later runs measure Search without ingesting again: their
"first ingest" then finds every document unchanged and is reported as not measured).

Figures: the first ingest of the corpus (chunks/s), the median of repeated unchanged ingests (and
its share of the first), Search p50/p99 at concurrency 1 and 8 with a cold query
cache (every query distinct), QPS, the floor (embedding the same queries in-process), and the
service's resident memory with the collection loaded.

The floor is measured in rounds with concurrency 1: this process embeds a round's queries one at a
time, then asks them through Search. On a shared machine whose speed drifts by a third within
minutes, floor and service are then timed under the same conditions.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
from contextlib import nullcontext
from pathlib import Path

from bench.harness import EVAL_DIR, LoadResult, run_load, start_services
from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import ingest_folder
from services.common.clients import make_channel
from services.common.embedding import LocalEmbeddingModel, local_embedding_model

COLLECTION = "agentfactory"
FLOOR_ROUND = 25
TEMPLATES = (
    "what is {}",
    "explain {} with an example",
    "how do I use {}",
    "{} best practices",
    "why does {} matter",
    "common mistakes with {}",
    "{} step by step",
    "when should I use {}",
)


async def ingest_corpus(stub, root: Path, collection: str = COLLECTION) -> retrieval_pb2.IngestProgress:
    """The corpus ingested into `collection` the way every bench ingests it; its summary."""
    options = retrieval_pb2.IngestOptions(
        collection=collection, base_url=f"https://{collection}.example/docs/"
    )
    return await ingest_folder(stub, root, options)


async def queries_from_titles(stub, collection: str = COLLECTION) -> list[str]:
    titles, token = [], ""
    while True:
        page = await stub.ListDocuments(
            retrieval_pb2.ListDocumentsRequest(collection=collection, page_size=1000, page_token=token)
        )
        titles += [d.title for d in page.documents if d.title]
        token = page.next_page_token
        if not token:
            break
    unique = list(dict.fromkeys(t.lower() for t in titles))
    return list(dict.fromkeys(template.format(t) for template in TEMPLATES for t in unique))


def embedding_times(texts: list[str], model: LocalEmbeddingModel | None = None) -> list[float]:
    """Milliseconds to embed each text alone, in this process: the floor a Search cannot beat.

    Timed on a thread of the model, so that no hand-over between threads is counted.
    """
    model = model or local_embedding_model()

    def time_each() -> list[float]:
        times = []
        for text in texts:
            start = time.perf_counter()
            model.embed([text])
            times.append((time.perf_counter() - start) * 1000)
        return times

    return model.executor.submit(time_each).result()


async def measure_search(
    stub, collection: str, calls: int, floor_model: LocalEmbeddingModel | None = None
) -> tuple[LoadResult, LoadResult, list[float]]:
    """Search at concurrency 1, in rounds with the floor (the same queries embedded in this
    process), then at concurrency 8; every query distinct, so the query cache never answers."""
    queries = await queries_from_titles(stub, collection)
    needed = calls * 3
    assert len(queries) >= needed, f"only {len(queries)} distinct queries for {needed} calls"

    def search(offset: int):
        async def call(i: int) -> None:
            request = retrieval_pb2.SearchRequest(collection=collection, query=queries[offset + i], top_k=5)
            await stub.Search(request, timeout=30)

        return call

    # Warm the model and the engine's caches with queries that are not measured.
    await run_load(search(2 * calls), min(50, calls), 1)
    floor, rounds = [], []
    for start in range(0, calls, FLOOR_ROUND):
        texts = queries[start : min(start + FLOOR_ROUND, calls)]
        floor += embedding_times(texts, floor_model)
        rounds.append(await run_load(search(start), len(texts), 1))
    return LoadResult.merged(rounds), await run_load(search(calls), calls, 8), floor


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=EVAL_DIR / "corpora" / "agentfactory" / "docs")
    parser.add_argument("--reingests", type=int, default=3, help="unchanged ingests to take the median of")
    parser.add_argument("--calls", type=int, default=300, help="Search calls per concurrency level")
    parser.add_argument(
        "--data-dir", type=Path, help="keep the service's data here (default: a temporary folder)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    if args.data_dir:
        args.data_dir.mkdir(parents=True, exist_ok=True)
    kept = (
        nullcontext(args.data_dir)
        if args.data_dir
        else tempfile.TemporaryDirectory(prefix="glossator-bench-")
    )
    local_embedding_model().embed(["warm up"])
    with kept as data_dir:
        service = await start_services(Path(data_dir), ["retrieval"])
        try:
            target = f"127.0.0.1:{service.ports['retrieval']}"
            async with make_channel(target) as channel:
                stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
                first_start = time.perf_counter()
                first = await ingest_corpus(stub, args.corpus)
                first_s = time.perf_counter() - first_start
                again = []
                for _ in range(args.reingests):
                    start = time.perf_counter()
                    summary = await ingest_corpus(stub, args.corpus)
                    again.append(time.perf_counter() - start)
                    assert summary.documents_indexed == 0, "an unchanged ingest re-indexed documents"
                single, eight, floor = await measure_search(stub, COLLECTION, args.calls)
                rss = service.rss_mib()
                stats = await stub.Stats(retrieval_pb2.StatsRequest(collection=COLLECTION))
        finally:
            service.stop()

    floor_p50 = statistics.median(floor)

    measured_first = first.documents_indexed > 0
    figures = {
        "documents": stats.documents,
        "chunks": stats.chunks,
        "first_ingest_s": round(first_s, 1) if measured_first else None,
        "first_ingest_chunks_per_s": round(first.chunks_written / first_s, 1) if measured_first else None,
        "documents_failed": first.documents_failed,
        "unchanged_ingest_s_median": round(statistics.median(again), 2),
        "unchanged_share_of_first": round(statistics.median(again) / first_s, 4) if measured_first else None,
        "search_c1": single.as_dict(),
        "search_c8": eight.as_dict(),
        "embed_floor_p50_ms": round(floor_p50, 2),
        "c1_p50_over_floor": round(single.p50_ms / floor_p50, 2),
        "qps_c8_over_c1": round(eight.qps / single.qps, 2),
        "service_rss_mib": round(rss, 1),
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"corpus: {args.corpus} -> {stats.documents} documents, {stats.chunks} chunks ({stats.backend})")
    if measured_first:
        print(
            f"first ingest:      {first_s:.1f} s, {figures['first_ingest_chunks_per_s']} chunks/s, "
            f"{first.documents_failed} failed"
        )
        print(
            f"unchanged ingest:  {figures['unchanged_ingest_s_median']} s median of {args.reingests} "
            f"= {figures['unchanged_share_of_first']:.2%} of the first"
        )
    else:
        print(f"first ingest:      not measured ({args.data_dir} already held the collection)")
        print(f"unchanged ingest:  {figures['unchanged_ingest_s_median']} s median of {args.reingests}")
    for label, r in (("c=1", single), ("c=8", eight)):
        print(
            f"search {label}:        p50 {r.p50_ms:.1f} ms, p99 {r.p99_ms:.1f} ms, {r.qps:.1f} QPS ({r.calls} calls)"
        )
    print(
        f"embedding floor:   p50 {floor_p50:.1f} ms in-process, in rounds with c=1 "
        f"-> c=1 p50 is {figures['c1_p50_over_floor']}x"
    )
    print(f"QPS c=8 / c=1:     {figures['qps_c8_over_c1']}x")
    print(f"service RSS:       {rss:.0f} MiB with the collection loaded")


if __name__ == "__main__":
    asyncio.run(main())
