"""Load and faults: the suite under sustained concurrent Search and AskStream, and how it refuses.

    .venv/bin/python -m bench.load_faults [--seconds 60] [--phases search:16,search:64,ask:8,ask:64]
        [--data-dir .glossator/bench-load] [--json]

Runs `glossator up` in its own process (offline model, embedded Qdrant; the Physical AI book from
../shared/eval is ingested once into the data dir and kept, in the collection bench/llm_answers.py
uses), then each phase for --seconds: that many clients call without pause, each call with its
own deadline (Search 10 s, AskStream 30 s).
Every question is asked outside a session with a distinct user_context, so the response cache
never answers. Per phase it prints QPS of successful calls, p50/p99 latency of every call, the
count of each gRPC status, for AskStream the answers delivered unvalidated (status OK but
validation not VALIDATED or REPLACED), and the RSS of the suite's process before and after. What
should hold: no INTERNAL or UNKNOWN, and every answer either validated or refused with a status.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from collections import Counter
from pathlib import Path

import grpc
import yaml

from bench.harness import EVAL_DIR, ROOT, percentile, start_services
from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import async_iter, ingest_requests
from services.common.clients import make_channel
from services.retrieval.ingest import read_folder

# The collection bench/llm_answers.py ingests the book into: one --data-dir serves both benches.
COLLECTION = "bench-physical-ai-book"
BOOK = EVAL_DIR / "corpora" / "physical-ai-book" / "docs"
QUESTIONS = ROOT / "bench" / "questions" / "physical-ai-book.yaml"
DEADLINES_S = {"search": 10.0, "ask": 30.0}
VALIDATED = {agent_pb2.VALIDATION_STATUS_VALIDATED, agent_pb2.VALIDATION_STATUS_REPLACED}


async def ingest_book(channel: grpc.aio.Channel) -> None:
    options = retrieval_pb2.IngestOptions(collection=COLLECTION)
    stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
    async for _ in stub.Ingest(ingest_requests(options, async_iter(read_folder(BOOK)))):
        pass


async def search_once(channel: grpc.aio.Channel, question: str, _index: int) -> tuple[str, bool]:
    stub = retrieval_pb2_grpc.RetrievalServiceStub(channel)
    request = retrieval_pb2.SearchRequest(collection=COLLECTION, query=question, top_k=5)
    await stub.Search(request, timeout=DEADLINES_S["search"])
    return "OK", True


async def ask_once(channel: grpc.aio.Channel, question: str, index: int) -> tuple[str, bool]:
    """OK and whether the answer was validated (or replaced by a validated one)."""
    stub = agent_pb2_grpc.AgentServiceStub(channel)
    request = agent_pb2.AskRequest(
        query=question, collection=COLLECTION, user_id="bench-load", user_context={"call": str(index)}
    )
    response = None
    async for event in stub.AskStream(request, timeout=DEADLINES_S["ask"]):
        if event.HasField("completed"):
            response = event.completed.response
    return "OK", response is not None and response.grounding.status in VALIDATED


async def run_phase(channel, kind: str, clients: int, seconds: float, questions: list[str]) -> dict:
    call = search_once if kind == "search" else ask_once
    statuses: Counter[str] = Counter()
    latencies: list[float] = []
    unvalidated = 0
    issued = 0
    ends = time.monotonic() + seconds

    async def client() -> None:
        nonlocal issued, unvalidated
        while time.monotonic() < ends:
            index = issued
            issued += 1
            started = time.perf_counter()
            try:
                status, validated = await call(channel, questions[index % len(questions)], index)
            except grpc.aio.AioRpcError as error:
                status, validated = error.code().name, True
            latencies.append((time.perf_counter() - started) * 1000)
            statuses[status] += 1
            unvalidated += not validated

    started = time.perf_counter()
    await asyncio.gather(*(client() for _ in range(clients)))
    elapsed = time.perf_counter() - started
    return {
        "phase": f"{kind} c={clients}",
        "calls": len(latencies),
        "ok_qps": round(statuses["OK"] / elapsed, 1),
        "p50_ms": round(statistics.median(latencies), 1),
        "p99_ms": round(percentile(latencies, 0.99), 1),
        "statuses": dict(statuses),
        "unvalidated": unvalidated if kind == "ask" else None,
    }


def load_questions() -> list[str]:
    data = yaml.safe_load(QUESTIONS.read_text(encoding="utf-8"))
    return [item["question"] for item in data["questions"]]


def parse_phases(text: str) -> list[tuple[str, int]]:
    phases = []
    for part in text.split(","):
        kind, _, clients = part.partition(":")
        if kind not in DEADLINES_S or not clients.isdigit():
            raise SystemExit(f"bad phase {part!r}: expected search:N or ask:N")
        phases.append((kind, int(clients)))
    return phases


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--phases", default="search:16,search:64,ask:8,ask:64")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "bench-load")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if not BOOK.is_dir():
        raise SystemExit(f"the Physical AI book is not at {BOOK}")
    phases = parse_phases(args.phases)
    questions = load_questions()
    suite = await start_services(args.data_dir, ["agent", "retrieval", "validation"])
    results = []
    try:
        async with make_channel(f"127.0.0.1:{suite.ports['retrieval']}") as retrieval:
            await ingest_book(retrieval)
            for kind, clients in phases:
                service = "retrieval" if kind == "search" else "agent"
                async with make_channel(f"127.0.0.1:{suite.ports[service]}") as channel:
                    rss_before = suite.rss_mib()
                    result = await run_phase(channel, kind, clients, args.seconds, questions)
                    result["rss_mib"] = [round(rss_before), round(suite.rss_mib())]
                results.append(result)
                if not args.json:
                    print(_line(result), flush=True)
    finally:
        suite.stop()
    if args.json:
        print(json.dumps(results, indent=2))


def _line(result: dict) -> str:
    statuses = " ".join(f"{code} {count}" for code, count in sorted(result["statuses"].items()))
    unvalidated = "" if result["unvalidated"] is None else f" · unvalidated {result['unvalidated']}"
    before, after = result["rss_mib"]
    return (
        f"{result['phase']:<14} {result['calls']:>6} calls · OK {result['ok_qps']:>6} QPS · "
        f"p50 {result['p50_ms']:>8} / p99 {result['p99_ms']:>8} ms · {statuses}{unvalidated} · "
        f"RSS {before} -> {after} MiB"
    )


if __name__ == "__main__":
    asyncio.run(main())
