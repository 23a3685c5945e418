"""A small hand-made corpus with known geometry, so search expectations can be worked out by hand."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from pathlib import Path

import numpy as np

from services.retrieval.sparse import SparseEncoder
from services.retrieval.store import (
    Chunk,
    ChunkPoint,
    DocumentRecord,
    VectorStore,
    open_store,
)
from services.retrieval.store.indexing import passage_text

DIMS = 8
MODEL = "test/model-a"
COLLECTION = "books"
ENCODER = SparseEncoder()
INDEXED_AT = datetime(2026, 11, 1, 12, 30, 15, 123456, tzinfo=UTC)

# (key, document_id, source_path, source_url, section_path, text); key i gets dense axis i.
CORPUS = [
    (
        "A",
        "alpha",
        "guide/install.md",
        "https://ex.org/docs/guide/install#linux",
        ("Install", "Linux"),
        "Install the package on Linux with apt and verify the checksum.",
    ),
    (
        "B",
        "alpha",
        "guide/install.md",
        "https://ex.org/docs/guide/install#windows",
        ("Install", "Windows"),
        "On Windows run the installer and restart the shell.",
    ),
    (
        "C",
        "beta",
        "guide/usage.md",
        "https://ex.org/docs/guide/usage",
        ("Usage",),
        "Search queries return cited chunks ranked by relevance.",
    ),
    (
        "D",
        "gamma",
        "reference/api.md",
        "https://ex.org/docs/reference/api#search",
        ("API", "Search"),
        "The search endpoint accepts filters on sections and documents.",
    ),
    (
        "E",
        "delta",
        "blog/post.md",
        "https://ex.org/blog/post",
        ("News",),
        "Release notes about the new hybrid ranking.",
    ),
]
KEYS = [row[0] for row in CORPUS]

# Cosines with the query: A 0.8, D 0.5, B 0.15, C 0.05, E 0.02 (the rest of the unit norm on axis 7).
QUERY_COSINES = {"A": 0.8, "B": 0.15, "C": 0.05, "D": 0.5, "E": 0.02}
SPARSE_QUERY = "search filters for sections"  # matches D (twice, with its heading), then C


def make_store(backend: str, directory: Path) -> VectorStore:
    """edge: a fresh data directory; qdrant: qdrant-client's local mode in memory."""
    return open_store(backend, edge_dir=directory / "edge", qdrant_url=":memory:")


def axis(i: int) -> np.ndarray:
    vector = np.zeros(DIMS, dtype=np.float32)
    vector[i] = 1.0
    return vector


def query_vector() -> np.ndarray:
    vector = np.zeros(DIMS, dtype=np.float32)
    for i, key in enumerate(KEYS):
        vector[i] = QUERY_COSINES[key]
    vector[DIMS - 1] = np.sqrt(1.0 - float(np.sum(vector**2)))
    return vector


def chunk_id(document_id: str, index: int, text: str) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{document_id}/{index}/{text}"))


def make_chunk(
    document_id: str,
    index: int,
    text: str,
    *,
    source_path: str = "doc.md",
    source_url: str = "https://ex.org/doc",
    section_path: tuple[str, ...] = (),
    total_chunks: int = 1,
) -> Chunk:
    return Chunk(
        chunk_id=chunk_id(document_id, index, text),
        document_id=document_id,
        source_url=source_url,
        source_path=source_path,
        title="Manual",
        section_path=section_path,
        section_title=section_path[-1] if section_path else "",
        anchor=source_url.partition("#")[2],
        chunk_index=index,
        total_chunks=total_chunks,
        text=text,
        content_hash=f"hash-{index}-{len(text)}",
        token_count=len(text.split()),
        indexed_at=INDEXED_AT,
    )


def point(chunk: Chunk, dense: np.ndarray) -> ChunkPoint:
    sparse = ENCODER.encode_document(passage_text(chunk.title, chunk.section_path, chunk.text))
    return ChunkPoint(chunk, dense, sparse)


def corpus_chunks() -> dict[str, Chunk]:
    chunks = {}
    for key, document_id, source_path, source_url, section_path, text in CORPUS:
        siblings = [row for row in CORPUS if row[1] == document_id]
        index = siblings.index(next(row for row in siblings if row[0] == key))
        chunks[key] = make_chunk(
            document_id,
            index,
            text,
            source_path=source_path,
            source_url=source_url,
            section_path=section_path,
            total_chunks=len(siblings),
        )
    return chunks


def index_corpus(store: VectorStore) -> dict[str, Chunk]:
    """Creates the collection, writes the corpus and a record per document; returns chunks by key."""
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    chunks = corpus_chunks()
    store.upsert_chunks(COLLECTION, [point(chunks[k], axis(i)) for i, k in enumerate(KEYS)])
    for document_id in dict.fromkeys(c.document_id for c in chunks.values()):
        mine = [c for c in chunks.values() if c.document_id == document_id]
        store.put_document_record(COLLECTION, record(mine))
    return chunks


def record(chunks: list[Chunk], content_hash: str = "doc-hash") -> DocumentRecord:
    first = chunks[0]
    return DocumentRecord(
        document_id=first.document_id,
        source_path=first.source_path,
        source_url=first.source_url.partition("#")[0],
        title=first.title,
        content_hash=content_hash,
        chunk_ids=tuple(c.chunk_id for c in chunks),
        indexed_at=INDEXED_AT,
    )
