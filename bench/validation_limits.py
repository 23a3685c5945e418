"""Validate at the edge of its limits: wall time, health latency meanwhile, the server's peak RSS.

    .venv/bin/python -m bench.validation_limits --case largest [--chunks 5 --chunk-chars 10000]
    .venv/bin/python -m bench.validation_limits --case markers [--timeout 600]

`largest`: the largest request the default limits allow (50,000 characters of context, a
20,000-character answer of cited sentences from it); `markers`: a 20 kB answer, "[1]" repeated.
Each run starts its own `glossator serve validation` process, so the peak RSS (VmHWM) is the case's
own; after the call it reports how much CPU the server still used in each of the next three 5 s
(a call whose client left should soon cost nothing more). Extra settings go through the environment, e.g.
GLOSSATOR_VALIDATION_MAX_CONTEXT_CHARS=2000000 with --chunks 100 --chunk-chars 20000.
"""

from __future__ import annotations

import argparse
import asyncio
import random
import tempfile
import threading
import time
from pathlib import Path

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from bench.harness import cpu_seconds, start_services
from glossator.v1 import common_pb2, validation_pb2, validation_pb2_grpc
from services.common.clients import make_channel

BRIDGE = "The Sydney Harbour Bridge was opened in 1932. It carries rail, vehicle and pedestrian traffic."
# 20 kB: one claim carrying 6,655 markers.
MARKERS_ANSWER = "The bridge was opened in 1932" + "[1]" * 6655 + "."
# fmt: off
WORDS = [
    "harbour", "lighthouse", "keeper", "bridge", "river", "valley", "castle", "tower", "market",
    "village", "railway", "station", "engineer", "architect", "merchant", "sailor", "captain", "garden",
    "library", "museum", "cathedral", "abbey", "monastery", "parliament", "council", "mayor", "bishop",
    "king", "queen", "prince", "duke", "army", "navy", "fleet", "battle", "treaty", "war", "harvest",
    "wheat", "barley", "cattle", "sheep", "wool", "mill", "factory", "furnace", "iron", "steel", "coal",
    "copper", "silver", "gold", "canal", "road", "tunnel", "quarry", "stone", "granite", "marble",
    "timber", "oak", "pine", "forest", "meadow", "lake", "island", "coast", "storm", "flood", "drought",
    "winter", "summer", "spring", "autumn", "festival", "choir", "organ", "painter", "poet", "novel",
    "theatre", "opened", "built", "designed", "founded", "crossed", "carried", "measured", "painted",
    "restored", "closed", "rebuilt", "visited"
]
# fmt: on


def chunks(*texts: str) -> list[common_pb2.Chunk]:
    return [common_pb2.Chunk(chunk_id=f"c{i}", text=text) for i, text in enumerate(texts, start=1)]


def prose(seed: int, chars: int) -> str:
    """Sentences of random words, as long as asked: a context that costs real work to check."""
    rng = random.Random(seed)
    sentences, length = [], 0
    while length < chars:
        sentence = " ".join(rng.choices(WORDS, k=rng.randint(8, 16))).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return " ".join(sentences)[:chars]


def large_request(chunk_count: int, chunk_chars: int, answer_chars: int) -> validation_pb2.ValidateRequest:
    """chunk_count chunks of chunk_chars characters, and an answer of about answer_chars made of
    their sentences, each cited: every claim has every chunk to compare with."""
    texts = [prose(seed, chunk_chars) for seed in range(chunk_count)]
    rng = random.Random(0)
    answer = ""
    while True:
        number = rng.randrange(chunk_count)
        cited = f"{rng.choice(texts[number].split('. ')[1:-1])} [{number + 1}]. "
        if len(answer) + len(cited) > answer_chars:
            return validation_pb2.ValidateRequest(response=answer.strip(), context=chunks(*texts))
        answer += cited


class HealthProbe:
    """Asks a server's health service every 0.1 s, each time with a deadline, from a thread of its
    own with a blocking channel: a probe on an event loop the server shares (in-process tests)
    would wait for that loop, and could not see it blocked."""

    def __init__(self, target: str, deadline_seconds: float) -> None:
        self._target = target
        self._deadline_seconds = deadline_seconds
        self._done = threading.Event()
        self.latencies: list[float] = []  # seconds, of the checks answered SERVING
        self.failures: list[str] = []
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> HealthProbe:
        self._thread.start()
        return self

    def __exit__(self, *_exc) -> None:
        self._done.set()
        self._thread.join()

    def _run(self) -> None:
        with grpc.insecure_channel(self._target) as channel:
            health = health_pb2_grpc.HealthStub(channel)
            while not self._done.is_set():
                started = time.perf_counter()
                try:
                    reply = health.Check(health_pb2.HealthCheckRequest(), timeout=self._deadline_seconds)
                except grpc.RpcError as error:
                    self.failures.append(error.code().name)
                else:
                    if reply.status == health_pb2.HealthCheckResponse.SERVING:
                        self.latencies.append(time.perf_counter() - started)
                    else:
                        self.failures.append(health_pb2.HealthCheckResponse.ServingStatus.Name(reply.status))
                self._done.wait(0.1)


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", choices=["largest", "markers"], default="largest")
    parser.add_argument("--chunks", type=int, default=5)
    parser.add_argument("--chunk-chars", type=int, default=10_000)
    parser.add_argument("--answer-chars", type=int, default=20_000)
    parser.add_argument("--timeout", type=float, default=600, help="the call's deadline, seconds")
    args = parser.parse_args()
    if args.case == "markers":
        request = validation_pb2.ValidateRequest(response=MARKERS_ANSWER, context=chunks(BRIDGE))
    else:
        request = large_request(args.chunks, args.chunk_chars, args.answer_chars)
    context_chars = sum(len(chunk.text) for chunk in request.context)
    print(f"case {args.case}: answer {len(request.response)} chars, context {context_chars} chars")

    with tempfile.TemporaryDirectory(prefix="glossator-bench-") as data_dir:
        service = await start_services(Path(data_dir), ["validation"])
        target = f"127.0.0.1:{service.ports['validation']}"
        try:
            async with make_channel(target) as channel:
                stub = validation_pb2_grpc.ValidationServiceStub(channel)
                warm_up = validation_pb2.ValidateRequest(
                    response=prose(1, 300), context=chunks(prose(2, 2000))
                )
                await stub.Validate(warm_up, timeout=300)  # loads the embedding model
                with HealthProbe(target, deadline_seconds=30) as probe:
                    started = time.perf_counter()
                    try:
                        reply = await stub.Validate(request, timeout=args.timeout)
                        outcome = f"OK, {len(reply.claims)} claims, grounding {reply.grounding_score:.2f}"
                    except grpc.aio.AioRpcError as error:
                        outcome = f"{error.code().name}: {error.details()[:100]}"
                    wall = time.perf_counter() - started
                cpu_after_call = []  # CPU seconds the server used in each of the next three 5 s
                for _ in range(3):
                    cpu_before = cpu_seconds(service.pid)
                    await asyncio.sleep(5)
                    cpu_after_call.append(round(cpu_seconds(service.pid) - cpu_before, 2))
                rss = peak_rss_mib(service.pid)
        finally:
            service.stop()
    print(f"Validate: {outcome} in {wall:.1f} s")
    print(
        f"health checks meanwhile: {len(probe.latencies)} answered, slowest "
        f"{max(probe.latencies, default=float('nan')) * 1000:.0f} ms, failures {probe.failures}"
    )
    print(f"server peak RSS {rss:.0f} MiB; CPU seconds in each 5 s after the call: {cpu_after_call}")


if __name__ == "__main__":
    asyncio.run(main())
