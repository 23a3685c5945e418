"""Attacks of a reader alone (issue 28), each with its figure, against `glossator up` in its own process.

    .venv/bin/python -m bench.attacks [--data-dir .glossator/bench-attacks] [--quick] [--callers-only]

- zero-window: 8 AskStreams on one HTTP/2 connection whose stream window is 0, then 6 legitimate
  AskStreams (30 s deadline) during the attack and 3 right after: how many were answered, and
  the slowest;
- pathological text: Validate with a response of 20,000 "[" (and of each of ` * _ ~ < space),
  Ingest of a 50 KB page of "[" and of hostile documents (1,000 nested divs, a 150-column
  header-only table, 50,000 backticks, a hex title past the int-to-text limit): the suite's CPU
  seconds per request, and the statuses;
- amplification: a 0.54 MB page with a 500 KB H1: chunks, and stored characters per character;
- anonymous sessions: one visitor asks 110 questions without a session while another visitor has
  one open: that one's next question (it was FAILED_PRECONDITION "terminated"). Visitors are told
  apart by the address the browser edge names (x-glossator-client-address, believed with auth off);
- stored history: one reader asks until its storage quota (0.5 MB for the bench) refuses it: how
  many questions were kept, the refusal, and another reader's question right after;
- many connections: one visitor opens 3 connections of 32 AskStreams (top_k 20, passages long
  enough that the replies are never buffered whole) and reads none; meanwhile 6 questions of
  another visitor, one after the other: how many were answered, and how many of the attacker's were refused at once.
During every attack a probe checks the agent's health every 0.1 s (1 s deadline): its slowest
answer is printed. Targets: 0 INTERNAL/UNKNOWN, health within 1 s, every legitimate question
answered, no request over 2 s of CPU.
"""

from __future__ import annotations

import argparse
import asyncio
import time
import uuid
from collections import Counter
from pathlib import Path

import grpc

from bench.harness import ROOT, start_services
from bench.validation_limits import HealthProbe
from bench.zero_window import ZeroWindowClient
from glossator.v1 import (
    agent_pb2,
    agent_pb2_grpc,
    common_pb2,
    retrieval_pb2,
    retrieval_pb2_grpc,
    validation_pb2,
    validation_pb2_grpc,
)
from services.commands.ingest import async_iter
from services.common.auth import CLIENT_ADDRESS_HEADER
from services.common.clients import make_channel

COLLECTION = "bench-attacks"
LONG_COLLECTION = "bench-attacks-long"
STORAGE_QUOTA_MB = 0.5
PAGE = (
    "# Lidar\n\n## How lidar measures distance\n\nA lidar measures distance by timing laser pulses that "
    "bounce back from surfaces. Robots use lidar to build maps of a room."
)
QUESTION = "How does a lidar measure distance?"


def cpu_seconds(pid: int) -> float:
    """User + system CPU of the process and its finished children (clock ticks of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return sum(int(value) for value in fields[11:15]) / 100


async def ingest(stub, documents: list[retrieval_pb2.Document], collection: str = COLLECTION) -> Counter:
    options = retrieval_pb2.IngestOptions(collection=collection)
    requests = [retrieval_pb2.IngestRequest(options=options)]
    requests += [retrieval_pb2.IngestRequest(document=document) for document in documents]
    statuses: Counter = Counter()
    try:
        async for reply in stub.Ingest(async_iter(requests), timeout=600):
            if reply.HasField("document"):
                statuses[retrieval_pb2.DocumentStatus.Name(reply.document.status)] += 1
    except grpc.aio.AioRpcError as error:
        statuses[error.code().name] += 1
    return statuses


async def ask(agent, metadata=(), **fields) -> str:
    request = agent_pb2.AskRequest(query=QUESTION, **{"collection": COLLECTION} | fields)
    try:
        async for event in agent.AskStream(request, metadata=metadata, timeout=30):
            if event.HasField("completed"):
                return "OK"
    except grpc.aio.AioRpcError as error:
        return error.code().name
    return "NO_ANSWER"


def visitor() -> tuple[tuple[str, str], ...]:
    """A browser as the edge names it to the agent: an address of its own (new each run)."""
    return ((CLIENT_ADDRESS_HEADER, f"2001:db8::{uuid.uuid4().hex[:4]}"),)


async def anonymous_flood(agent) -> str:
    alice, mallory = visitor(), visitor()
    reply = await agent.Ask(
        agent_pb2.AskRequest(query=QUESTION, collection=COLLECTION), metadata=alice, timeout=30
    )
    session = {"session_id": reply.response.session_id, "session_token": reply.response.session_token}
    flood = Counter([await ask(agent, mallory) for _ in range(110)])
    return f"anonymous x110: the flood {dict(flood)}; the other visitor's next question {await ask(agent, alice, **session)}"


async def storage_flood(agent) -> str:
    mallory, alice = f"mallory-{uuid.uuid4().hex[:8]}", f"alice-{uuid.uuid4().hex[:8]}"
    statuses: Counter = Counter()
    kept = 0
    while (status := await ask(agent, user_id=mallory)) == "OK" and kept < 10_000:
        kept += 1
    statuses[status] += 1
    return (
        f"stored history ({STORAGE_QUOTA_MB} MB a user): {kept} questions kept, then {dict(statuses)}; "
        f"another reader right after {await ask(agent, user_id=alice)}"
    )


def long_pages() -> list[retrieval_pb2.Document]:
    """Passages long enough that an answer with top_k 20 is about 100 KB: never buffered whole."""
    sentence = "Lidar unit {n} measures distance by timing laser pulse {k} that bounces back from a surface."
    return [
        retrieval_pb2.Document(
            source_path=f"lidar-{n}.md",
            content=f"# Lidar {n}\n\n## How lidar {n} measures distance\n\n"
            + " ".join(sentence.format(n=n, k=k) for k in range(50)),
        )
        for n in range(24)
    ]


async def many_connections(agent, port: int) -> str:
    attackers = [ZeroWindowClient(port) for _ in range(3)]
    mallory, alice = visitor(), visitor()
    try:
        for attacker in attackers:
            for _ in range(32):
                request = agent_pb2.AskRequest(query=QUESTION, collection=LONG_COLLECTION, top_k=20)
                attacker.call("/glossator.v1.AgentService/AskStream", request, mallory)
        await asyncio.sleep(2.0)
        during = [await ask(agent, alice, collection=LONG_COLLECTION) for _ in range(6)]
        refused = sum(attacker.ended_streams for attacker in attackers)
    finally:
        for attacker in attackers:
            attacker.close()
    return (
        f"many connections 3 x 32 unread: another visitor's asks during {Counter(during)}; "
        f"the attacker's refused at once {refused}/96"
    )


async def status_of(call) -> str:
    try:
        await call
    except grpc.aio.AioRpcError as error:
        return error.code().name
    return "OK"


async def timed(pid: int, work) -> tuple[object, float, float]:
    """(result, wall seconds, CPU seconds of the suite)."""
    cpu, wall = cpu_seconds(pid), time.perf_counter()
    result = await work
    return result, time.perf_counter() - wall, cpu_seconds(pid) - cpu


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data-dir", type=Path, default=ROOT / ".glossator" / "bench-attacks")
    parser.add_argument(
        "--quick", action="store_true", help="leave out the 0.54 MB page (minutes of embedding)"
    )
    parser.add_argument(
        "--callers-only", action="store_true", help="only the attacks of one caller on the others' share"
    )
    args = parser.parse_args()
    quota = {"GLOSSATOR_AGENT_SESSION_STORAGE_QUOTA_MB": str(STORAGE_QUOTA_MB)}
    suite = await start_services(args.data_dir, ["retrieval", "validation", "agent"], quota)
    ports = suite.ports
    try:
        async with (
            make_channel(f"127.0.0.1:{ports['retrieval']}") as retrieval_channel,
            make_channel(f"127.0.0.1:{ports['agent']}") as agent_channel,
            make_channel(f"127.0.0.1:{ports['validation']}") as validation_channel,
        ):
            retrieval = retrieval_pb2_grpc.RetrievalServiceStub(retrieval_channel)
            agent = agent_pb2_grpc.AgentServiceStub(agent_channel)
            validation = validation_pb2_grpc.ValidationServiceStub(validation_channel)
            await ingest(retrieval, [retrieval_pb2.Document(source_path="lidar.md", content=PAGE)])
            health_target = f"127.0.0.1:{ports['agent']}"

            with HealthProbe(health_target, 1.0) as probe:
                attacker = ZeroWindowClient(ports["agent"])
                for _ in range(8):
                    attacker.call(
                        "/glossator.v1.AgentService/AskStream",
                        agent_pb2.AskRequest(query=QUESTION, collection=COLLECTION),
                    )
                await asyncio.sleep(1.0)
                during, wall, _ = await timed(suite.pid, asyncio.gather(*(ask(agent) for _ in range(6))))
                attacker.close()
                after = await asyncio.gather(*(ask(agent) for _ in range(3)))
            print(
                f"zero-window x8: legitimate asks during {Counter(during)} (all in {wall:.1f} s), "
                f"right after {Counter(after)}; health slowest {max(probe.latencies) * 1000:.0f} ms, "
                f"failures {Counter(probe.failures)}"
            )

            await ingest(retrieval, long_pages(), LONG_COLLECTION)
            for attack in (
                anonymous_flood(agent),
                storage_flood(agent),
                many_connections(agent, ports["agent"]),
            ):
                with HealthProbe(health_target, 1.0) as probe:
                    figure = await attack
                print(
                    f"{figure}; health slowest {max(probe.latencies) * 1000:.0f} ms, failures {Counter(probe.failures)}"
                )
            if args.callers_only:
                return

            for char in "[`*_~< ":
                request = validation_pb2.ValidateRequest(
                    response=char * 20_000, context=[common_pb2.Chunk(chunk_id="lidar", text=PAGE)]
                )
                with HealthProbe(f"127.0.0.1:{ports['validation']}", 1.0) as probe:
                    code, _, cpu = await timed(suite.pid, status_of(validation.Validate(request, timeout=60)))
                print(
                    f"Validate {char!r} x 20,000: {code}, {cpu:.2f} s CPU; health slowest "
                    f"{max(probe.latencies, default=float('nan')) * 1000:.0f} ms"
                )

            hostile = {
                "brackets.md": "[" * 50_000,
                "nested.html": "<html><body>" + "<div>" * 1000 + "deep" + "</div>" * 1000 + "</body></html>",
                "wide-table.html": "<table><tr>"
                + "".join(f"<th>column {i}</th>" for i in range(150))
                + "</tr></table>",
                "backticks.md": "`" * 50_000,
                "hex-title.md": "---\ntitle: 0x" + "f" * 3600 + "\n---\n# Page\n\nSome text.",
            }
            for path, content in hostile.items():
                with HealthProbe(health_target, 1.0) as probe:
                    document = retrieval_pb2.Document(source_path=path, content=content)
                    statuses, wall, cpu = await timed(suite.pid, ingest(retrieval, [document]))
                print(
                    f"Ingest {path} ({len(content):,} chars): {dict(statuses)}, {cpu:.2f} s CPU, {wall:.1f} s; "
                    f"health slowest {max(probe.latencies, default=float('nan')) * 1000:.0f} ms"
                )

            if args.quick:
                return
            words = " ".join(f"word{index}" for index in range(60_000))[:500_000]
            amplified = retrieval_pb2.Document(
                source_path="huge-h1.md", content=f"# {words}\n\n## Body\n\n{words[:40_000]}."
            )
            statuses, wall, cpu = await timed(suite.pid, ingest(retrieval, [amplified]))
            stats = await retrieval.Stats(retrieval_pb2.StatsRequest(collection=COLLECTION), timeout=30)
            print(
                f"Ingest a {len(amplified.content) / 1e6:.2f} MB page with a 500 KB H1: {dict(statuses)}, "
                f"{cpu:.1f} s CPU, {wall:.1f} s; the collection holds {stats.chunks} chunks"
            )
    finally:
        suite.stop()


if __name__ == "__main__":
    asyncio.run(main())
