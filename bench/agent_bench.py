"""Agent benchmark: AskStream over gRPC with the offline model, on the agentfactory collection.

    .venv/bin/python -m bench.agent_bench [--calls 60] [--processes one|per-service [--agents N]] [--json]

Runs `glossator up` in its own process with data under .glossator/bench-agent (the collection is
ingested once and kept; later runs skip unchanged documents). Every question is distinct and asked
outside a session, so the response cache never answers. Figures at concurrency 1 and 8: time to
the first event, to the first answer delta, total; and the suite's own overhead per answer: the
total minus the time of the retrieval and validation calls (as the response's timings report them);
the validation call's time, and how many answers came back validated and grounded.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from bench.harness import (
    EVAL_DIR,
    ROOT,
    agent_target,
    cpu_seconds,
    percentile,
    start_service_processes,
    start_services,
)
from bench.retrieval_bench import COLLECTION, ingest_corpus, queries_from_titles
from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2_grpc
from services.common.clients import make_channel


async def ask(stub, question: str) -> dict[str, float]:
    start = time.perf_counter()
    first_event = first_delta = 0.0
    response = None
    async for event in stub.AskStream(
        agent_pb2.AskRequest(query=question, collection=COLLECTION, user_id="bench"), timeout=120
    ):
        now = (time.perf_counter() - start) * 1000
        first_event = first_event or now
        kind = event.WhichOneof("event")
        if kind == "answer_delta" and not first_delta:
            first_delta = now
        elif kind == "completed":
            response = event.completed.response
    total = (time.perf_counter() - start) * 1000
    t = response.timings
    return {
        "first_event_ms": first_event,
        "first_delta_ms": first_delta,
        "total_ms": total,
        "overhead_ms": total - t.retrieval_ms - t.validation_ms,
        "generation_ms": t.generation_ms,
        "validation_ms": t.validation_ms,
        "validated": response.grounding.status == agent_pb2.VALIDATION_STATUS_VALIDATED,
        "grounded": response.grounding.is_grounded,
    }


def cpu_used(pids: list[int]) -> float:
    """CPU seconds used so far by the service processes and by this one (the client)."""
    return sum(cpu_seconds(pid) for pid in pids) + time.process_time()


async def load(stub, questions: list[str], concurrency: int, pids: list[int]) -> dict:
    results: list[dict[str, float]] = []
    queue = list(questions)
    cpu_before = cpu_used(pids)
    start = time.perf_counter()

    async def worker() -> None:
        while queue:
            results.append(await ask(stub, queue.pop(0)))

    await asyncio.gather(*(worker() for _ in range(concurrency)))
    elapsed = time.perf_counter() - start
    cpu = cpu_used(pids) - cpu_before
    figures = {
        "concurrency": concurrency,
        "calls": len(results),
        "qps": round(len(results) / elapsed, 2),
        # Cores kept busy by the suite and the client, and CPU per answer: on 2 cores, c=8 can
        # only outrun c=1 by what c=1 leaves idle.
        "cores_busy": round(cpu / elapsed, 2),
        "cpu_ms_per_answer": round(1000 * cpu / len(results), 1),
    }
    for key, value in results[0].items():
        values = [r[key] for r in results]
        if isinstance(value, bool):
            figures[key] = sum(values)
        else:
            figures[key] = {
                "p50": round(statistics.median(values), 1),
                "p99": round(percentile(values, 0.99), 1),
            }
    return figures


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=EVAL_DIR / "corpora" / "agentfactory" / "docs")
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "bench-agent")
    parser.add_argument("--calls", type=int, default=60, help="questions per concurrency level")
    parser.add_argument(
        "--processes",
        choices=("one", "per-service"),
        default="one",
        help="the suite in one process (glossator up) or one process per service (as deployed)",
    )
    parser.add_argument(
        "--agents", type=int, default=1, help="agent replicas with --processes per-service (round_robin)"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    args.data_dir.mkdir(parents=True, exist_ok=True)
    if args.processes == "one":
        processes = [await start_services(args.data_dir, ["agent", "retrieval", "validation"])]
    else:
        processes = await start_service_processes(args.data_dir, agents=args.agents)
    service = processes[0]
    try:
        async with make_channel(f"127.0.0.1:{service.ports['retrieval']}") as channel:
            retrieval = retrieval_pb2_grpc.RetrievalServiceStub(channel)
            await ingest_corpus(retrieval, args.corpus)
            questions = await queries_from_titles(retrieval)
        target = (
            agent_target(processes)
            if args.processes == "per-service"
            else f"127.0.0.1:{service.ports['agent']}"
        )
        async with make_channel(target) as channel:
            agent = agent_pb2_grpc.AgentServiceStub(channel)
            pids = [process.pid for process in processes]
            await load(agent, questions[-20:], 1, pids)  # warm-up, not measured
            figures = {
                "c1": await load(agent, questions[: args.calls], 1, pids),
                "c8": await load(agent, questions[args.calls : 3 * args.calls], 8, pids),
            }
    finally:
        for process in processes:
            process.stop()
    if args.json:
        print(json.dumps(figures))
        return
    for label, f in figures.items():
        print(
            f"AskStream {label}: first event p50 {f['first_event_ms']['p50']} ms, first delta p50 "
            f"{f['first_delta_ms']['p50']} ms, total p50 {f['total_ms']['p50']} / p99 {f['total_ms']['p99']} ms, "
            f"overhead p50 {f['overhead_ms']['p50']} ms (generation {f['generation_ms']['p50']} ms), "
            f"validation p50 {f['validation_ms']['p50']} / p99 {f['validation_ms']['p99']} ms, "
            f"validated {f['validated']}/{f['calls']}, grounded {f['grounded']}/{f['calls']}, {f['qps']} QPS, "
            f"{f['cores_busy']} cores busy, {f['cpu_ms_per_answer']} ms CPU per answer"
        )
    print(f"QPS c8/c1: {figures['c8']['qps'] / figures['c1']['qps']:.2f}")


if __name__ == "__main__":
    asyncio.run(main())
