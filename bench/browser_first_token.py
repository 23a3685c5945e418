"""First answer text in the reader's browser against a native gRPC client's, side by side.

    .venv/bin/python -m bench.browser_first_token [--rounds 3] [--json]

One suite (`glossator up` in its own process, offline answerer, the project's docs/ ingested, the
response cache off so every answer is worked out) and the edge (Envoy) in front of its agent. The
same questions go, in turn, to:
- native: grpc.aio AskStream straight to the agent, from the request to the first answer_delta;
- native via edge: the same gRPC call through Envoy (the edge's own cost);
- browser: the widget in headless Chromium on a page of the docs site, through Envoy with the
  Connect protocol, from the widget's call to the first answer text on screen (its performance
  measure "glossator:first-token").
Every question starts a new session and carries the same user_context in all three. Prints the
median and p90 of each and the browser's difference to the native client (target: within 50 ms).
Needs what the browser tests need (make setup-web).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.browser_rig import (
    DOCS_DIR,
    WIDGET_DIR,
    DocsSite,
    build_widget,
    docs_pages,
    edge,
    missing_browser_tools,
    widget_tag,
)
from bench.harness import percentile, start_services
from glossator.v1 import agent_pb2, agent_pb2_grpc, retrieval_pb2, retrieval_pb2_grpc
from services.commands.ingest import ingest_folder
from services.common.clients import make_channel

QUESTIONS = (
    "How does Glossator check that an answer is grounded?",
    "What does the retrieval service do?",
    "How is an answer's grounding score computed?",
    "What happens to an ungrounded answer under the enforce policy?",
    "Which embedding model runs on a laptop?",
    "How are documents cut into chunks?",
    "What is hybrid search?",
    "How do I ingest a folder of Markdown files?",
    "What does a citation point at?",
    "Where do sessions live on Kubernetes?",
)
WARM_UP = 2
# Every call here comes from one address: the edge's per-client limits would refuse some.
UNLIMITED = {"requests_per_minute_per_ip": "1000000", "requests_per_minute_per_key": "1000000"}


class BrowserWidget:
    """clients/web/test/first_token.mjs kept running: one question a line, one result a line."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self._process = process

    @classmethod
    async def open(cls, page_url: str) -> BrowserWidget:
        process = await asyncio.create_subprocess_exec(
            "node",
            str(WIDGET_DIR / "test" / "first_token.mjs"),
            page_url,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
        )
        return cls(process)

    async def first_token_ms(self, question: str) -> float:
        self._process.stdin.write((json.dumps({"question": question}) + "\n").encode())
        await self._process.stdin.drain()
        line = await asyncio.wait_for(self._process.stdout.readline(), 180)
        if not line:
            raise RuntimeError("the browser driver ended")
        result = json.loads(line)
        if result["error"] or result["firstTokenMs"] is None:
            raise RuntimeError(f"the widget showed no answer: {result['error']}")
        return result["firstTokenMs"]

    async def close(self) -> None:
        self._process.stdin.close()
        await self._process.wait()


async def native_first_token_ms(
    agent: agent_pb2_grpc.AgentServiceStub, question: str, page_url: str
) -> float:
    request = agent_pb2.AskRequest(
        query=question, include_sources=True, user_context={"page_url": page_url, "page_title": "Benchmark"}
    )
    start = time.perf_counter()
    first = None
    async for message in agent.AskStream(request, timeout=120):  # to its end, as the widget reads it
        if first is None and message.WhichOneof("event") == "answer_delta":
            first = (time.perf_counter() - start) * 1000
    if first is None:
        raise RuntimeError(f"no answer text for {question!r}")
    return first


def summary(values: list[float]) -> dict[str, float]:
    return {"median_ms": round(statistics.median(values), 1), "p90_ms": round(percentile(values, 0.9), 1)}


async def run(rounds: int) -> dict:
    bundle = build_widget()
    with tempfile.TemporaryDirectory(prefix="glossator-bench-browser-") as data_dir:
        services = await start_services(
            Path(data_dir),
            ["agent", "retrieval", "validation"],
            {"GLOSSATOR_AGENT_RESPONSE_CACHE_TTL_SECONDS": "0"},
        )
        try:
            with DocsSite(bundle).serving() as site:
                base_url = site.url("/docs/")
                async with make_channel(f"127.0.0.1:{services.ports['retrieval']}") as channel:
                    options = retrieval_pb2.IngestOptions(base_url=base_url)
                    await ingest_folder(retrieval_pb2_grpc.RetrievalServiceStub(channel), DOCS_DIR, options)
                async with edge(services.ports["agent"], [site.url("")], **UNLIMITED) as endpoint:
                    site.widget_tag = widget_tag(endpoint)
                    site.pages.update(docs_pages(base_url))
                    return await _measure(services.ports["agent"], endpoint, base_url, rounds)
        finally:
            services.stop()


async def _measure(agent_port: int, endpoint: str, page_url: str, rounds: int) -> dict:
    times: dict[str, list[float]] = {"native": [], "native via edge": [], "browser": []}
    browser = await BrowserWidget.open(page_url)
    try:
        async with (
            make_channel(f"127.0.0.1:{agent_port}") as direct,
            make_channel(endpoint.removeprefix("http://")) as via_edge,
        ):
            clients = {
                "native": lambda q: native_first_token_ms(
                    agent_pb2_grpc.AgentServiceStub(direct), q, page_url
                ),
                "native via edge": lambda q: native_first_token_ms(
                    agent_pb2_grpc.AgentServiceStub(via_edge), q, page_url
                ),
                "browser": browser.first_token_ms,
            }
            for question in QUESTIONS[:WARM_UP]:
                for ask in clients.values():
                    await ask(question)
            for _ in range(rounds):
                for question in QUESTIONS:
                    for name, ask in clients.items():
                        times[name].append(await ask(question))
    finally:
        await browser.close()
    result = {name: summary(values) for name, values in times.items()}
    differences = [b - n for b, n in zip(times["browser"], times["native"], strict=True)]
    result["browser - native"] = summary(differences)
    result["questions"] = len(times["native"])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="times each of the 10 questions is asked")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if missing := missing_browser_tools():
        print(f"error: {missing} (make setup-web)", file=sys.stderr)
        return 2
    result = asyncio.run(run(args.rounds))
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"first answer text, {result['questions']} questions each (median / p90, ms)")
    for name in ("native", "native via edge", "browser", "browser - native"):
        print(f"  {name:<17} {result[name]['median_ms']:>7.1f} {result[name]['p90_ms']:>7.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
