"""The vector store seam: domain types and the interface both Qdrant backends implement.

Methods are synchronous: neither qdrant-edge-py nor the synchronous qdrant-client is asyncio-native,
so the servicer runs store calls in a worker thread (`asyncio.to_thread`). Every implementation is
safe to call from several threads at once.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum
from typing import NamedTuple

import numpy as np

from services.common.errors import FieldViolation, InvalidArgument
from services.common.wire import COLLECTION_NAME, COLLECTION_RULE

# Vectors of two models (or of the int8 and float32 variants of one) are not comparable.
MIXED_MODELS_ADVICE = (
    "serve it with the model that built it (for the local model, the GLOSSATOR_EMBEDDING_RUNTIME "
    "that made those vectors: onnx-int8, or onnx-float32 and torch, which make the same ones), "
    "or ingest into a new collection"
)


def check_collection_name(name: str) -> str:
    """Returns the name, or raises InvalidArgument on the `collection` field."""
    if not COLLECTION_NAME.fullmatch(name):
        raise InvalidArgument([FieldViolation("collection", COLLECTION_RULE)])
    return name


class SearchMode(StrEnum):
    DENSE = "dense"
    SPARSE = "sparse"
    HYBRID = "hybrid"


@dataclass(frozen=True)
class SparseVector:
    """Term ids and weights, ids ascending (Qdrant's sparse vector layout)."""

    indices: tuple[int, ...]
    values: tuple[float, ...]


@dataclass(frozen=True)
class Chunk:
    """A passage of a document with everything needed to cite it (mirrors glossator.v1.Chunk)."""

    chunk_id: str
    document_id: str
    source_url: str
    source_path: str
    title: str
    section_path: tuple[str, ...]
    section_title: str
    anchor: str
    chunk_index: int
    total_chunks: int
    text: str
    content_hash: str
    token_count: int
    indexed_at: datetime


@dataclass(frozen=True)
class SentenceVectors:
    """A chunk's prose sentences (offsets in its text) and their unit embeddings, one row each."""

    spans: tuple[tuple[int, int], ...]
    vectors: np.ndarray


@dataclass(frozen=True)
class ChunkPoint:
    """A chunk with its two vectors, as written by upsert_chunks (sentences: for highlights)."""

    chunk: Chunk
    dense: np.ndarray | Sequence[float]
    sparse: SparseVector
    sentences: SentenceVectors | None = None


class SentenceScore(NamedTuple):
    """A sentence of a found chunk (offsets in its text) and its cosine similarity to the query.

    A tuple, not a dataclass: a Search builds dozens of them, and a tuple is made in a fraction of
    the time.
    """

    start: int
    end: int
    similarity: float


@dataclass(frozen=True)
class DocumentRecord:
    """What the store remembers of an indexed document, to skip or replace it on the next ingest."""

    document_id: str
    source_path: str
    source_url: str
    title: str
    content_hash: str
    chunk_ids: tuple[str, ...]
    indexed_at: datetime

    @property
    def chunk_count(self) -> int:
        return len(self.chunk_ids)


@dataclass(frozen=True)
class CollectionInfo:
    name: str
    documents: int
    chunks: int
    embedding_model: str
    dense_dimensions: int


@dataclass(frozen=True)
class DocumentPage:
    documents: list[DocumentRecord]
    # Empty on the last page.
    next_page_token: str
    total_size: int


@dataclass(frozen=True)
class DeleteResult:
    deleted_documents: list[str]
    deleted_chunks: int
    not_found: list[str]


@dataclass(frozen=True)
class SearchFilters:
    """Restrictions of a search; every one that is set must hold."""

    source_url_prefix: str = ""
    source_path_prefix: str = ""
    # A heading anywhere in the chunk's section_path, compared case-insensitively.
    section: str = ""
    document_ids: tuple[str, ...] = ()
    # The key of a term the chunk defines (services/common/text/definitions.py); not a filter of
    # the API: Search sets it to find the chunks that define what a question asks about.
    defines: str = ""


@dataclass(frozen=True)
class SearchHit:
    chunk: Chunk
    # The documented 0-1 scale that min_relevance filters on (see store.query.relevance).
    relevance: float
    # The engine's own score of the mode: RRF score (hybrid), cosine (dense) or BM25 (sparse).
    score: float
    # The chunk's cosine similarity with the query (0 in a sparse search).
    dense_score: float = 0.0
    # The chunk's IDF-weighted BM25 score (0 in a dense search, or when no query term is in it).
    sparse_score: float = 0.0
    # The chunk's prose sentences in order, scored against the query (empty without a query
    # embedding, or when the chunk was stored without sentence vectors).
    sentences: tuple[SentenceScore, ...] = ()


class VectorStore(ABC):
    """Named collections of chunks with dense + sparse vectors, and a record per document.

    Write order that makes ingestion restartable: upsert_chunks, delete_chunks_except, and
    put_document_record LAST. A run killed before the record is written leaves no record, so the
    next run redoes the document; chunk ids are deterministic, so redoing it creates no duplicates.
    """

    backend: str
    # Whether a search may wait on a network (a Qdrant server): the searcher then runs it in a
    # worker thread. An in-process engine answers in about a millisecond, less than the hop to a
    # thread and back costs, so its searches run on the caller's thread.
    search_waits_on_network: bool = True

    @abstractmethod
    def ensure_collection(self, name: str, dense_dimensions: int, embedding_model: str) -> CollectionInfo:
        """Creates the collection on first use; FailedPrecondition if another model built it."""

    @abstractmethod
    def list_collections(self) -> list[str]:
        """Names of the Glossator collections this store holds, sorted."""

    @abstractmethod
    def collection_info(self, name: str) -> CollectionInfo:
        """Counts and embedding model; NotFound when the collection does not exist."""

    @abstractmethod
    def delete_collection(self, name: str) -> CollectionInfo:
        """Deletes the collection with all its chunks and records; returns what it held.

        NotFound when it does not exist. The chunks go first and the manifest last, so a delete
        interrupted halfway is finished by calling it again."""

    @abstractmethod
    def upsert_chunks(self, name: str, points: Sequence[ChunkPoint]) -> None:
        """Writes chunks (payload + both vectors); a chunk id already stored is overwritten."""

    @abstractmethod
    def document_record(self, name: str, document_id: str) -> DocumentRecord | None:
        """The record written when the document was last indexed completely, or None."""

    @abstractmethod
    def put_document_record(self, name: str, record: DocumentRecord) -> None:
        """Marks a document as completely indexed; call after its chunks are written."""

    @abstractmethod
    def delete_chunks_except(self, name: str, document_id: str, keep_chunk_ids: Sequence[str]) -> int:
        """Deletes the document's chunks that are not in keep_chunk_ids; returns how many.

        Found by a payload filter on document_id, not from the record, so chunks left by an
        interrupted run (which wrote no record) are found too.
        """

    @abstractmethod
    def delete_documents(self, name: str, document_ids: Sequence[str]) -> DeleteResult:
        """Deletes documents with all their chunks (chunks first, the record last)."""

    @abstractmethod
    def list_documents(self, name: str, page_size: int, page_token: str = "") -> DocumentPage:
        """Document records ordered by source_path (then document_id), a page at a time."""

    @abstractmethod
    def search(
        self,
        name: str,
        dense_vector: np.ndarray | Sequence[float],
        sparse_vector: SparseVector,
        mode: SearchMode,
        limit: int,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        """Best chunks first; hybrid fuses both legs with RRF inside one Qdrant query."""

    @abstractmethod
    def optimize(self, name: str) -> None:
        """Makes recent writes durable and fast to search; call at the end of an ingest run.

        The embedded engine flushes and builds its HNSW and payload indexes here; a Qdrant
        server optimises in the background, so the qdrant-client backend has nothing to do.
        """

    @abstractmethod
    def close_idle(self, idle_seconds: float) -> list[str]:
        """Closes the collections no operation has used for idle_seconds; returns their names.

        An open collection of the embedded engine holds threads and memory (about 16 and 70 MB),
        and a server that has seen many collections would otherwise keep them all. A collection
        is never closed while an operation on it runs, and the next one reopens it from disk.
        """

    @abstractmethod
    def close(self) -> None:
        """Flushes and releases everything; the store is unusable afterwards."""
