"""Validation benchmark: Validate over gRPC at concurrency 1 and 8 (p50/p99, QPS).

    .venv/bin/python -m bench.validation_bench [--calls 300] [--json]

The service runs in its own process (`glossator serve validation`, offline checker); requests are
HaluEval QA answers with their knowledge as the one context chunk (half right, half hallucinated).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
from pathlib import Path

from bench.harness import EVAL_DIR, run_load, start_services
from glossator.v1 import common_pb2, validation_pb2, validation_pb2_grpc
from services.commands.eval.grounding import load_halueval
from services.common.clients import make_channel
from services.common.contract_limits import MAX_QUERY_CHARS


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--halueval", type=Path, default=EVAL_DIR / "halueval" / "qa_data.dev.jsonl")
    parser.add_argument("--calls", type=int, default=300, help="Validate calls per concurrency level")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    cases = load_halueval(args.halueval, args.calls)
    requests = [
        validation_pb2.ValidateRequest(
            query=c.query[:MAX_QUERY_CHARS],
            response=c.answer,
            context=[common_pb2.Chunk(chunk_id="k", text=c.context)],
        )
        for c in cases
    ]

    with tempfile.TemporaryDirectory(prefix="glossator-bench-") as data_dir:
        service = await start_services(Path(data_dir), ["validation"])
        try:
            async with make_channel(f"127.0.0.1:{service.ports['validation']}") as channel:
                stub = validation_pb2_grpc.ValidationServiceStub(channel)

                async def call(i: int) -> None:
                    await stub.Validate(requests[i % len(requests)], timeout=60)

                await run_load(call, 30, 1)  # warm-up
                results = [await run_load(call, args.calls, c) for c in (1, 8)]
        finally:
            service.stop()
    figures = {f"c{r.concurrency}": r.as_dict() for r in results}
    figures["qps_c8_over_c1"] = round(results[1].qps / results[0].qps, 2)
    if args.json:
        print(json.dumps(figures))
        return
    for r in results:
        print(f"Validate c={r.concurrency}: p50 {r.p50_ms:.1f} ms, p99 {r.p99_ms:.1f} ms, {r.qps:.1f} QPS")
    print(f"QPS c=8 / c=1: {figures['qps_c8_over_c1']}x")


if __name__ == "__main__":
    asyncio.run(main())
