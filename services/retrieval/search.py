"""Search pipeline: embed the query (cache, micro-batch), encode its terms, ask the store, filter;
and `snippet`, what a result list shows of a found chunk."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace

import numpy as np

from services.common.errors import FailedPrecondition
from services.common.metrics import count_cache_lookup, observe_stage
from services.common.text.definitions import asked_term
from services.common.text.display import display_text
from services.common.text.prose import prose_sentences
from services.retrieval.embed import EmbeddingProvider, QueryBatcher, QueryEmbeddingCache
from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import SearchFilters, SearchHit, SearchMode, VectorStore
from services.retrieval.store.base import MIXED_MODELS_ADVICE, SparseVector

# "What is X?": how many of the chunks defining X (services/common/text/definitions.py) come first,
# chosen from the best this many by the search: the one highest in its document's headings, where
# a term is introduced ("Helm is the package manager for Kubernetes" opens the chapter; "Helm is a
# CLI tool you install" stands under "Installing Helm").
DEFINING_CHUNKS = 1
DEFINING_CANDIDATES = 3


@dataclass(frozen=True)
class SearchQuery:
    collection: str
    text: str
    top_k: int
    min_relevance: float
    mode: SearchMode
    filters: SearchFilters


@dataclass(frozen=True)
class SearchOutcome:
    hits: list[SearchHit]
    candidates: int
    embedding_ms: float
    search_ms: float
    total_ms: float
    embedding_cached: bool


class Searcher:
    def __init__(
        self,
        store: VectorStore,
        embedder: EmbeddingProvider,
        cache_size: int,
        batch_size: int,
        wait_ms: float,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._cache = QueryEmbeddingCache(cache_size)
        self._batcher = QueryBatcher(embedder, max_batch=batch_size, wait_ms=wait_ms)
        self._sparse = SparseEncoder()
        self._checked_collections: set[str] = set()

    async def search(self, query: SearchQuery) -> SearchOutcome:
        start = time.perf_counter()
        await self._check_model(query.collection)
        dense, cached, embedding_ms = await self._dense(query)
        sparse = self._sparse.encode_query(query.text)
        search_start = time.perf_counter()
        with observe_stage("search"):
            hits = await self._store_search(query, dense, sparse, query.top_k, query.filters)
            term = asked_term(query.text)
            if term:
                defining = replace(query.filters, defines=term)
                found = await self._store_search(query, dense, sparse, DEFINING_CANDIDATES, defining)
                hits = _defining_first(_introducing(found)[:DEFINING_CHUNKS], hits)
        search_ms = (time.perf_counter() - search_start) * 1000
        kept = [hit for hit in hits if hit.relevance >= query.min_relevance][: query.top_k]
        return SearchOutcome(
            hits=kept,
            candidates=len(hits),
            embedding_ms=embedding_ms,
            search_ms=search_ms,
            total_ms=(time.perf_counter() - start) * 1000,
            embedding_cached=cached,
        )

    async def _store_search(
        self, query: SearchQuery, dense: np.ndarray, sparse: SparseVector, limit: int, filters: SearchFilters
    ) -> list[SearchHit]:
        arguments = (query.collection, dense, sparse, query.mode, limit, filters)
        if self._store.search_waits_on_network:
            return await asyncio.to_thread(self._store.search, *arguments)
        return self._store.search(*arguments)

    async def _dense(self, query: SearchQuery) -> tuple[np.ndarray, bool, float]:
        if query.mode == SearchMode.SPARSE:
            return np.zeros(self._embedder.dimensions, dtype=np.float32), False, 0.0
        vector = self._cache.get(query.text)
        count_cache_lookup("query_embedding", hit=vector is not None)
        if vector is not None:
            return vector, True, 0.0
        start = time.perf_counter()
        with observe_stage("embedding"):
            vector = await self._batcher.embed(query.text)
        self._cache.put(query.text, vector)
        return vector, False, (time.perf_counter() - start) * 1000

    async def _check_model(self, collection: str) -> None:
        """A collection built by another embedding model cannot be searched with this one."""
        if collection in self._checked_collections:
            return
        info = await asyncio.to_thread(self._store.collection_info, collection)
        if info.embedding_model != self._embedder.name:
            raise FailedPrecondition(
                f"collection {collection!r} was built with {info.embedding_model}, "
                f"but this service embeds with {self._embedder.name}: {MIXED_MODELS_ADVICE}"
            )
        self._checked_collections.add(collection)

    def forget(self, collection: str) -> None:
        self._checked_collections.discard(collection)

    async def close(self) -> None:
        await self._batcher.close()


def _introducing(defining: list[SearchHit]) -> list[SearchHit]:
    """The chunks defining a term, those under fewer headings first (in search order otherwise)."""
    return sorted(defining, key=lambda hit: len(hit.chunk.section_path))


def _defining_first(defining: list[SearchHit], hits: list[SearchHit]) -> list[SearchHit]:
    """The chunks that define the term a question asks about, best first, then the others."""
    first = {hit.chunk.chunk_id for hit in defining}
    return [*defining, *(hit for hit in hits if hit.chunk.chunk_id not in first)]


SNIPPET_CHARS = 200


def snippet(
    text: str, sentences: Sequence[tuple[int, int, float]] = (), max_chars: int = SNIPPET_CHARS
) -> str:
    """What a result list shows of a chunk, as a reader sees it rendered (no `##`, `**`, fences):
    its sentences most similar to the query (`sentences`: Search's (start, end, similarity)), in
    reading order, as many as fit in max_chars; without scores its first prose sentences, and for
    a chunk without prose (code, a table) the beginning of its text. The chunk text itself stays
    as indexed: offsets point into it."""
    if sentences:
        ranked = sorted(sentences, key=lambda s: -s[2])
    else:
        ranked = [(start, end, 0.0) for start, end in prose_sentences(text)]
    chosen: list[tuple[int, str]] = []
    used = 0
    for start, end, _ in ranked:
        shown = display_text(text[start:end])
        if chosen and used + len(shown) + 1 > max_chars:
            continue
        chosen.append((start, shown))
        used += len(shown) + 1
    shown = " ".join(part for _, part in sorted(chosen)) if chosen else display_text(text)
    if len(shown) <= max_chars:
        return shown
    cut = shown[: max_chars - 1]
    return (cut if shown[max_chars - 1] == " " else cut.rsplit(" ", 1)[0]).rstrip() + "…"
