"""Builds the retrieval server: store, embedding provider, indexer and searcher behind RetrievalService."""

from __future__ import annotations

import asyncio
import contextlib

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.common.embedding import count_tokens
from services.common.logging import get_logger
from services.common.server import GlossatorServer, create_server
from services.retrieval.config import RetrievalSettings
from services.retrieval.disk import DiskReserve
from services.retrieval.embed import EmbeddingProvider, LocalEmbeddingProvider, OpenAIEmbeddingProvider
from services.retrieval.indexer import ChunkingConfig, Indexer
from services.retrieval.search import Searcher
from services.retrieval.servicer import RetrievalServicer
from services.retrieval.store import VectorStore, open_store
from services.retrieval.store.edge_sizing import open_collections_within

SERVICE_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name
# With auth on, only admins change the book (Ingest also creates collections).
ADMIN_METHODS = frozenset({f"/{SERVICE_NAME}/Ingest", f"/{SERVICE_NAME}/DeleteDocuments"})
log = get_logger("glossator.retrieval")
# Longest wait between two looks for idle collections.
_IDLE_CHECK_MAX_S = 60.0


def make_embedder(settings: RetrievalSettings) -> EmbeddingProvider:
    if settings.embedding_provider == "openai":
        return OpenAIEmbeddingProvider(
            settings.embedding_base_url,
            settings.embedding_model,
            settings.embedding_api_key,
            settings.embedding_dimensions,
        )
    return LocalEmbeddingProvider()


async def _close_idle_forever(store: VectorStore, idle_seconds: float) -> None:
    """Closes the collections idle for idle_seconds, looking every min(60 s, idle_seconds / 2): one
    is closed at most that period after it became idle. A failure is logged and retried."""
    period = min(_IDLE_CHECK_MAX_S, idle_seconds / 2)
    while True:
        await asyncio.sleep(period)
        try:
            closed = await asyncio.to_thread(store.close_idle, idle_seconds)
        except Exception:
            log.warning("collection_close_failed", exc_info=True)
            continue
        for name in closed:
            log.info("collection_closed", collection=name, idle_seconds=idle_seconds)


async def build_server(settings: RetrievalSettings | None = None) -> tuple[GlossatorServer, int]:
    settings = settings or RetrievalSettings()
    store = open_store(
        settings.backend,
        edge_dir=settings.data_dir / "qdrant",
        qdrant_url=settings.qdrant_url,
        qdrant_api_key=settings.qdrant_api_key,
        timeout_seconds=settings.qdrant_timeout_seconds,
        max_open_collections=open_collections_within(settings.open_collections_memory_mib),
    )
    embedder = await asyncio.to_thread(make_embedder, settings)
    chunking = ChunkingConfig(
        max_tokens=settings.chunk_max_tokens,
        overlap_tokens=settings.chunk_overlap_tokens,
        min_tokens=settings.chunk_min_tokens,
        max_document_bytes=settings.max_document_bytes,
        max_front_matter_bytes=settings.max_front_matter_bytes,
    )
    # Chunk budgets are counted with the local model's tokenizer, whichever model embeds.
    disk = DiskReserve(settings.data_dir, settings.min_free_disk_bytes)
    disk.warn_if_full()
    indexer = Indexer(store, embedder, count_tokens, chunking, settings.embed_sentences, disk)
    searcher = Searcher(
        store, embedder, settings.query_cache_size, settings.embed_batch_size, settings.embed_batch_wait_ms
    )
    servicer = RetrievalServicer(store, indexer, searcher, settings)

    def register(server) -> list[str]:
        retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    server = create_server("retrieval", settings, register, ADMIN_METHODS)
    idle_seconds = settings.collection_idle_seconds
    closer = (
        asyncio.get_running_loop().create_task(_close_idle_forever(store, idle_seconds))
        if idle_seconds
        else None
    )

    async def close() -> None:
        if closer is not None:
            closer.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await closer
        await searcher.close()
        await asyncio.to_thread(store.close)

    async def warm_up() -> None:
        """The tokenizer's and the local model's first calls, before the first Search pays for them
        (an endpoint model is not called: it may come up after this server)."""
        await asyncio.to_thread(count_tokens, "warm up")
        if isinstance(embedder, LocalEmbeddingProvider):
            await embedder.embed_async(["warm up"])

    server.cleanups.append(close)
    server.warmups.append(warm_up)
    return server, server.port
