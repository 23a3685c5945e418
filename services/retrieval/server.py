"""Builds the retrieval server: store, embedding provider, indexer and searcher behind RetrievalService."""

from __future__ import annotations

import asyncio

from glossator.v1 import retrieval_pb2, retrieval_pb2_grpc
from services.common.server import GlossatorServer, create_server
from services.retrieval.config import RetrievalSettings
from services.retrieval.embed import EmbeddingProvider, LocalEmbeddingProvider, OpenAIEmbeddingProvider
from services.retrieval.indexer import ChunkingConfig, Indexer
from services.retrieval.search import Searcher
from services.retrieval.servicer import RetrievalServicer
from services.retrieval.store import open_store

SERVICE_NAME = retrieval_pb2.DESCRIPTOR.services_by_name["RetrievalService"].full_name


def make_embedder(settings: RetrievalSettings) -> EmbeddingProvider:
    if settings.embedding_provider == "openai":
        return OpenAIEmbeddingProvider(
            settings.embedding_base_url,
            settings.embedding_model,
            settings.embedding_api_key,
            settings.embedding_dimensions,
        )
    return LocalEmbeddingProvider()


async def build_server(settings: RetrievalSettings | None = None) -> tuple[GlossatorServer, int]:
    settings = settings or RetrievalSettings()
    store = open_store(
        settings.backend,
        edge_dir=settings.data_dir / "qdrant",
        qdrant_url=settings.qdrant_url,
        qdrant_api_key=settings.qdrant_api_key,
        timeout_seconds=settings.qdrant_timeout_seconds,
    )
    embedder = await asyncio.to_thread(make_embedder, settings)
    # Chunk budgets are counted with the local model's tokenizer, whichever model embeds.
    count_tokens = LocalEmbeddingProvider().count_tokens
    chunking = ChunkingConfig(
        max_tokens=settings.chunk_max_tokens,
        overlap_tokens=settings.chunk_overlap_tokens,
        min_tokens=settings.chunk_min_tokens,
        max_document_bytes=settings.max_document_bytes,
        max_front_matter_bytes=settings.max_front_matter_bytes,
    )
    indexer = Indexer(store, embedder, count_tokens, chunking, settings.embed_sentences)
    searcher = Searcher(
        store, embedder, settings.query_cache_size, settings.embed_batch_size, settings.embed_batch_wait_ms
    )
    servicer = RetrievalServicer(store, indexer, searcher, settings)

    def register(server) -> list[str]:
        retrieval_pb2_grpc.add_RetrievalServiceServicer_to_server(servicer, server)
        return [SERVICE_NAME]

    server = create_server("retrieval", settings, register)

    async def close() -> None:
        await searcher.close()
        await asyncio.to_thread(store.close)

    server.cleanups.append(close)
    return server, server.port
