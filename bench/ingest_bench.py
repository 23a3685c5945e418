"""Ingest and Search speed of the embedding runtimes, against a plain peer pipeline, in one run.

    .venv/bin/python -m bench.ingest_bench [--corpus DIR] [--rounds 3] [--calls 100] [--json]

Needs the torch extra (`make setup-torch`): the peer and today's PyTorch path run here too.

Each round runs, interleaved so that all see the same machine:
- the peer: what a user would write instead of Glossator, in this process: every page split into
  fixed windows of 1,000 characters (200 overlapping), the windows embedded with
  sentence-transformers' `encode` (batch 32, normalised). Nothing stored, no sentences.
- Glossator's full ingest (`glossator serve retrieval` in its own process, fresh data directory,
  embedded Qdrant): parse, chunk along headings, embed every chunk and every distinct prose
  sentence, store; once per runtime (onnx-int8, the default, and torch, the path before it).
  After the ingest, Search at concurrency 1 (in rounds with the floor: this process embedding the
  same queries alone with the same runtime) and at concurrency 8, every query distinct.
Then the resident memory of each service (serve validation, serve agent after start-up; retrieval
after its ingest and searches) per runtime. Figures are medians over the rounds, and ratios.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
import time
import urllib.request
from pathlib import Path

from bench.harness import EVAL_DIR, free_port, start_services
from bench.retrieval_bench import ingest_corpus, measure_search
from glossator.v1 import retrieval_pb2_grpc
from services.common.clients import make_channel
from services.common.embedding import load_embedding_model

RUNTIMES = ("onnx-int8", "torch")
COLLECTION = "book"
PEER_WINDOW, PEER_OVERLAP, PEER_BATCH = 1000, 200, 32


def peer_windows(corpus: Path) -> list[str]:
    """Fixed-size character windows of every page, the splitting most tutorials show."""
    windows = []
    for path in sorted(corpus.rglob("*")):
        if path.suffix not in {".md", ".mdx"}:
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        step = PEER_WINDOW - PEER_OVERLAP
        windows += [
            text[start : start + PEER_WINDOW] for start in range(0, max(len(text) - PEER_OVERLAP, 1), step)
        ]
    return windows


def peer_ingest(model, corpus: Path) -> dict:
    started = time.perf_counter()
    windows = peer_windows(corpus)
    model.encode(windows, batch_size=PEER_BATCH, normalize_embeddings=True)
    return {"seconds": time.perf_counter() - started, "chunks": len(windows), "texts": len(windows)}


def embedded_texts(metrics_port: int) -> int:
    """Texts the service ran through its model, from its /metrics (passages and sentences)."""
    with urllib.request.urlopen(f"http://127.0.0.1:{metrics_port}/metrics", timeout=10) as reply:
        lines = reply.read().decode().splitlines()
    return int(
        sum(
            float(line.rsplit(" ", 1)[1])
            for line in lines
            if line.startswith("glossator_ingest_texts_embedded_total{")
        )
    )


async def glossator_run(runtime: str, corpus: Path, calls: int, floor_model) -> dict:
    """A fresh retrieval service on `runtime`: its first ingest, then Search at c=1 and c=8."""
    metrics_port = free_port()
    environment = {
        "GLOSSATOR_EMBEDDING_RUNTIME": runtime,
        "GLOSSATOR_RETRIEVAL_METRICS_PORT": str(metrics_port),
    }
    with tempfile.TemporaryDirectory(prefix="glossator-ingest-bench-") as data_dir:
        service = await start_services(Path(data_dir), ["retrieval"], environment)
        try:
            async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
                stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
                started = time.perf_counter()
                summary = await ingest_corpus(stub, corpus, COLLECTION)
                seconds = time.perf_counter() - started
                single, eight, floor = await measure_search(stub, COLLECTION, calls, floor_model)
                return {
                    "seconds": seconds,
                    "chunks": summary.chunks_written,
                    "texts": embedded_texts(metrics_port),
                    "failed": summary.documents_failed,
                    "search_c1_p50_ms": single.p50_ms,
                    "search_c1_qps": single.qps,
                    "search_c8_qps": eight.qps,
                    "search_c8_p50_ms": eight.p50_ms,
                    "floor_p50_ms": statistics.median(floor),
                    "rss_mib": service.rss_mib(),
                }
        finally:
            service.stop()


async def idle_rss(runtime: str, name: str) -> float:
    with tempfile.TemporaryDirectory(prefix="glossator-rss-") as data_dir:
        service = await start_services(Path(data_dir), [name], {"GLOSSATOR_EMBEDDING_RUNTIME": runtime})
        try:
            await asyncio.sleep(1)
            return service.rss_mib()
        finally:
            service.stop()


def median_of(runs: list[dict], key: str) -> float:
    return statistics.median(run[key] for run in runs)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=EVAL_DIR / "corpora" / "physical-ai-book" / "docs")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--calls", type=int, default=100, help="Search calls per concurrency level")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    from sentence_transformers import SentenceTransformer

    from services.common.model_files import packaged_model_dir

    peer_model = SentenceTransformer(str(packaged_model_dir()), device="cpu")
    peer_model.encode(["warm up"])
    floor_models = {runtime: load_embedding_model(runtime) for runtime in RUNTIMES}
    peer, runs = [], {runtime: [] for runtime in RUNTIMES}
    for _ in range(args.rounds):
        peer.append(peer_ingest(peer_model, args.corpus))
        for runtime in RUNTIMES:
            runs[runtime].append(await glossator_run(runtime, args.corpus, args.calls, floor_models[runtime]))
    memory = {
        runtime: {
            "retrieval": median_of(runs[runtime], "rss_mib"),
            "validation": await idle_rss(runtime, "validation"),
            "agent": await idle_rss(runtime, "agent"),
        }
        for runtime in RUNTIMES
    }

    peer_s = median_of(peer, "seconds")
    new, old = runs["onnx-int8"], runs["torch"]
    figures = {
        "corpus": str(args.corpus),
        "rounds": args.rounds,
        "peer": {"seconds": round(peer_s, 1), "chunks": peer[0]["chunks"], "texts": peer[0]["texts"]},
        **{
            runtime: {
                key: round(median_of(runs[runtime], key), 2)
                for key in runs[runtime][0]
                if key not in {"failed"}
            }
            for runtime in RUNTIMES
        },
        "ratios": {
            "ingest_time_over_peer": round(median_of(new, "seconds") / peer_s, 2),
            "texts_over_peer": round(new[0]["texts"] / peer[0]["texts"], 2),
            "torch_ingest_time_over_peer": round(median_of(old, "seconds") / peer_s, 2),
            "search_c1_p50_over_floor": round(
                median_of(new, "search_c1_p50_ms") / median_of(new, "floor_p50_ms"), 2
            ),
            "search_c1_p50_over_torch": round(
                median_of(new, "search_c1_p50_ms") / median_of(old, "search_c1_p50_ms"), 2
            ),
            "search_c8_qps_over_c1": round(
                median_of(new, "search_c8_qps") / median_of(new, "search_c1_qps"), 2
            ),
        },
        "rss_mib": {
            runtime: {k: round(v) for k, v in services.items()} for runtime, services in memory.items()
        },
    }
    if args.json:
        print(json.dumps(figures))
        return
    print(f"corpus {args.corpus}, median of {args.rounds} interleaved rounds")
    print(f"{'':<22}{'seconds':>9}{'chunks':>8}{'texts':>8}{'chunks/s':>10}")
    for label, row in [("peer (ST encode)", figures["peer"])] + [
        (f"glossator {r}", figures[r]) for r in RUNTIMES
    ]:
        print(
            f"{label:<22}{row['seconds']:>9.1f}{row['chunks']:>8.0f}{row['texts']:>8.0f}"
            f"{row['chunks'] / row['seconds']:>10.1f}"
        )
    print(f"{'':<22}{'c1 p50 ms':>10}{'floor ms':>10}{'c1 QPS':>8}{'c8 QPS':>8}")
    for runtime in RUNTIMES:
        row = figures[runtime]
        print(
            f"{'search ' + runtime:<22}{row['search_c1_p50_ms']:>10.2f}{row['floor_p50_ms']:>10.2f}"
            f"{row['search_c1_qps']:>8.1f}{row['search_c8_qps']:>8.1f}"
        )
    print("ratios: " + ", ".join(f"{k} {v}" for k, v in figures["ratios"].items()))
    print("RSS MiB: " + "; ".join(f"{r}: {m}" for r, m in figures["rss_mib"].items()))


if __name__ == "__main__":
    asyncio.run(main())
