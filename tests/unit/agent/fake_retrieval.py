"""A real gRPC RetrievalService on loopback, answering Search from a fixed list of chunks.

It is the edge of the agent's unit tests: the retrieval tool talks to it over a real channel
(deadlines, status codes and cancellation are gRPC's own), while the ranking stays trivial. It can
be told to fail with UNAVAILABLE or to hang until the call is cancelled.
"""

from __future__ import annotations

import asyncio
import re
import uuid
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import grpc

from glossator.v1 import common_pb2, retrieval_pb2, retrieval_pb2_grpc
from services.common.clients import make_channel
from services.common.embedding import local_embedding_model
from services.common.text.prose import normalise, prose_sentences

# Short passages of a small robotics handbook, written for these tests.
CHUNK_TEXTS = [
    (
        ["ROS 2 Basics", "Nodes"],
        "A node is a single process that performs one task, such as reading a camera or planning a path. "
        "Nodes communicate by publishing and subscribing to named topics. "
        "Each node can be started, stopped and restarted independently of the others.",
    ),
    (
        ["ROS 2 Basics", "Middleware"],
        "ROS 2 uses the Data Distribution Service (DDS) as its middleware. "
        "DDS discovers peers on the network automatically, so no central master process is needed. "
        "Quality of Service profiles decide whether messages may be dropped.",
    ),
    (
        ["Sensors", "Lidar"],
        "A lidar measures distance by timing laser pulses reflected from surfaces. "
        "The Velodyne VLP-16 spins sixteen lasers at up to twenty revolutions per second. "
        "Its point clouds are published on the /points topic at ten hertz by default.",
    ),
    (
        ["Sensors", "IMU"],
        "An inertial measurement unit combines accelerometers and gyroscopes. "
        "It reports linear acceleration and angular velocity at several hundred hertz. "
        "Drift accumulates when its readings are integrated over long periods.",
    ),
]


def make_chunk(index: int, section_path: list[str], text: str) -> common_pb2.Chunk:
    return common_pb2.Chunk(
        chunk_id=str(uuid.uuid5(uuid.NAMESPACE_URL, f"handbook/{index}")),
        document_id=f"handbook-{section_path[0].lower().replace(' ', '-')}",
        source_url=f"https://example.org/handbook/{index}#{section_path[-1].lower()}",
        source_path=f"docs/{index}.md",
        title="Robotics Handbook",
        section_path=section_path,
        section_title=section_path[-1],
        chunk_index=index,
        total_chunks=len(CHUNK_TEXTS),
        text=text,
    )


CHUNKS = [make_chunk(i, path, text) for i, (path, text) in enumerate(CHUNK_TEXTS)]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 2}


@dataclass
class FakeRetrieval(retrieval_pb2_grpc.RetrievalServiceServicer):
    """Ranks the fixed chunks by shared words with the query; `mode` is "ok", "unavailable" or "hang".

    With `score_sentences`, results carry their sentences' similarity to the query, computed with
    the real embedding model as the retrieval service does.
    """

    mode: str = "ok"
    score_sentences: bool = False
    requests: list[retrieval_pb2.SearchRequest] = field(default_factory=list)
    time_remaining: list[float | None] = field(default_factory=list)
    started: asyncio.Event = field(default_factory=asyncio.Event)
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)

    async def Search(self, request, context):
        self.requests.append(request)
        self.time_remaining.append(context.time_remaining())
        self.started.set()
        if self.mode == "unavailable":
            await context.abort(grpc.StatusCode.UNAVAILABLE, "retrieval backend is down")
        if self.mode == "no-collection":
            await context.abort(
                grpc.StatusCode.NOT_FOUND, f"collection {request.collection!r} does not exist"
            )
        if self.mode == "hang":
            try:
                await asyncio.sleep(3600)
            except asyncio.CancelledError:
                self.cancelled.set()
                raise
        wanted = _words(request.query)
        section = request.filters.get("section", "")
        scored = sorted(
            (
                (
                    len(wanted & _words(" ".join([*chunk.section_path, chunk.text]))) / max(1, len(wanted)),
                    chunk,
                )
                for chunk in CHUNKS
                if not section or section in chunk.section_path
            ),
            key=lambda pair: -pair[0],
        )
        top_k = request.top_k or 5
        results = [
            common_pb2.ScoredChunk(chunk=chunk, rank=rank, relevance=score, sparse_score=score)
            for rank, (score, chunk) in enumerate((p for p in scored if p[0] > 0), start=1)
            if rank <= top_k
        ]
        if self.score_sentences:
            for result in results:
                result.sentences.extend(_sentence_scores(request.query, result.chunk.text))
        return retrieval_pb2.SearchResponse(
            results=results,
            metadata=common_pb2.SearchMetadata(
                candidates=len(scored), top_k=top_k, collection=request.collection, total_ms=0.1
            ),
        )


def _sentence_scores(query: str, text: str) -> list[common_pb2.SentenceScore]:
    spans = prose_sentences(text)
    vectors = local_embedding_model().embed([query] + [normalise(text[a:b]) for a, b in spans])
    return [
        common_pb2.SentenceScore(start=a, end=b, similarity=float(vector @ vectors[0]))
        for (a, b), vector in zip(spans, vectors[1:], strict=True)
    ]


@asynccontextmanager
async def serve_retrieval(servicer: FakeRetrieval) -> AsyncIterator[retrieval_pb2_grpc.RetrievalServiceStub]:
    """Starts the servicer on 127.0.0.1:0 and yields a stub on a channel made like the agent's."""
    server = grpc.aio.server()
    retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(servicer, server)
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    channel = make_channel(f"127.0.0.1:{port}")
    try:
        yield retrieval_pb2_grpc.RetrievalServiceStub(channel)
    finally:
        await channel.close()
        await server.stop(grace=None)
