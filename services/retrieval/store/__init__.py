"""Vector store seam: one interface (base.VectorStore), two Qdrant backends.

- edge.EdgeStore: Qdrant's engine embedded in-process (qdrant-edge-py), persisted under a directory.
- qdrant.QdrantClientStore: a Qdrant server or cluster by URL, or qdrant-client's local mode.

The backends are imported only when opened, so importing the domain types stays cheap.
"""

from __future__ import annotations

from pathlib import Path

from services.retrieval.store.base import (
    Chunk,
    ChunkPoint,
    CollectionInfo,
    DeleteResult,
    DocumentPage,
    DocumentRecord,
    SearchFilters,
    SearchHit,
    SearchMode,
    SentenceScore,
    SentenceVectors,
    SparseVector,
    VectorStore,
)

__all__ = [
    "Chunk",
    "ChunkPoint",
    "CollectionInfo",
    "DeleteResult",
    "DocumentPage",
    "DocumentRecord",
    "SearchFilters",
    "SearchHit",
    "SearchMode",
    "SentenceScore",
    "SentenceVectors",
    "SparseVector",
    "VectorStore",
    "open_store",
]


def open_store(
    backend: str,
    *,
    edge_dir: str | Path = "",
    qdrant_url: str = "",
    qdrant_api_key: str = "",
    timeout_seconds: float = 10.0,
    max_open_collections: int = 1_000_000,
) -> VectorStore:
    """The store the settings ask for: "edge" in edge_dir, or "qdrant" at qdrant_url."""
    if backend == "edge":
        from services.retrieval.store.edge import EdgeStore

        return EdgeStore(edge_dir, max_open_collections)
    if backend == "qdrant":
        from services.retrieval.store.qdrant import QdrantClientStore

        return QdrantClientStore(qdrant_url, api_key=qdrant_api_key, timeout_seconds=timeout_seconds)
    raise ValueError(f"unknown vector store backend {backend!r}")
