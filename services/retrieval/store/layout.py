"""How a Glossator collection is laid out in Qdrant, the same in both backends.

A collection NAME is two Qdrant collections (two shards under <data_dir>/NAME/ in the edge backend),
so a Qdrant server needs no other storage:
- chunks (NAME): one point per chunk, point id = the chunk id (a UUID); named vectors "dense"
  (cosine) and "sparse" (IDF modifier); payload = every Chunk field plus "section_keys" (the
  headings of section_path normalised by section_key, for the section filter), "defines" (the keys
  of the terms the chunk defines: services/common/text/definitions.py) and, when sentences
  were embedded, "sentences" (their offsets) with "sentence_vectors" and "sentence_scales" (the
  embeddings quantised to int8, base64; see encode_sentences). The dense vectors also have an
  int8 copy kept in RAM (scalar quantization at DENSE_QUANTILE) that searches walk before
  rescoring on the originals (query.DENSE_OVERSAMPLING); payloads are read into the page cache
  when the collection opens, since every search reads its hits'.
- documents (NAME.documents; the dot cannot occur in a collection name, so no user collection
  collides with it): payload-only points, one record per completely indexed document (id = uuid5
  of the document id) and one manifest (embedding model, dimensions, layout version). The
  manifest is written last when a collection is created: without it the collection does not exist.
"""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np

from services.common.text.definitions import defined_terms
from services.retrieval.store.base import Chunk, DocumentRecord, SentenceScore, SentenceVectors

DENSE = "dense"
SPARSE = "sparse"
# Scalar quantization of the dense vectors: int8 over the central 99% of component values.
DENSE_QUANTILE = 0.99
DOCUMENTS_SUFFIX = ".documents"
# Bumped when the payload or vector layout changes incompatibly; older collections are refused.
LAYOUT_VERSION = 1

# Payload fields with a keyword index, and whether the index serves prefix matches.
CHUNK_INDEXES = {
    "document_id": False,
    "source_path": True,
    "source_url": True,
    "section_keys": False,
    "defines": False,
}
DOCUMENT_INDEXES = {"kind": False}

KIND_DOCUMENT = "document"
KIND_MANIFEST = "manifest"
# Fields that list_documents sorts on, fetched for every record before one page is read whole.
SORT_FIELDS = ["document_id", "source_path"]

_NAMESPACE = uuid.UUID("5b0f4f3e-51c1-4c7e-9a53-4b5d0d8e7a10")
MANIFEST_ID = str(uuid.uuid5(_NAMESPACE, "glossator-manifest"))


def documents_collection(name: str) -> str:
    return name + DOCUMENTS_SUFFIX


def chunk_point_id(chunk_id: str) -> str:
    """Chunk ids are UUIDs already; any other string is mapped to one deterministically."""
    try:
        return str(uuid.UUID(chunk_id))
    except ValueError:
        return str(uuid.uuid5(_NAMESPACE, "chunk:" + chunk_id))


def record_point_id(document_id: str) -> str:
    return str(uuid.uuid5(_NAMESPACE, "document:" + document_id))


@dataclass(frozen=True)
class Manifest:
    embedding_model: str
    dense_dimensions: int
    layout_version: int = LAYOUT_VERSION

    def payload(self) -> dict[str, Any]:
        return {
            "kind": KIND_MANIFEST,
            "embedding_model": self.embedding_model,
            "dense_dimensions": self.dense_dimensions,
            "layout_version": self.layout_version,
        }

    @classmethod
    def from_payload(cls, payload: dict[str, Any]) -> Manifest:
        return cls(
            payload["embedding_model"], int(payload["dense_dimensions"]), int(payload["layout_version"])
        )


def section_key(heading: str) -> str:
    """How headings are stored for the section filter: case and runs of white space ignored."""
    return " ".join(heading.split()).casefold()


def chunk_payload(chunk: Chunk, sentences: SentenceVectors | None = None) -> dict[str, Any]:
    payload = {
        "chunk_id": chunk.chunk_id,
        "document_id": chunk.document_id,
        "source_url": chunk.source_url,
        "source_path": chunk.source_path,
        "title": chunk.title,
        "section_path": list(chunk.section_path),
        "section_keys": sorted({section_key(h) for h in chunk.section_path}),
        "section_title": chunk.section_title,
        # what "What is X?" looks for first (services/retrieval/search.py)
        "defines": defined_terms(chunk.text),
        "anchor": chunk.anchor,
        "chunk_index": chunk.chunk_index,
        "total_chunks": chunk.total_chunks,
        "text": chunk.text,
        "content_hash": chunk.content_hash,
        "token_count": chunk.token_count,
        "indexed_at": chunk.indexed_at.isoformat(),
    }
    if sentences is not None and sentences.spans:
        payload.update(encode_sentences(sentences))
    return payload


def encode_sentences(sentences: SentenceVectors) -> dict[str, Any]:
    """Sentence vectors as int8 rows with one scale each: a quarter of float32's size.

    Each row is scaled so that its largest component is 127; the cosine computed back from them
    is within about 0.003 of the float32 one, far below what separates two sentences.
    """
    vectors = np.asarray(sentences.vectors, dtype=np.float32)
    scales = np.maximum(np.abs(vectors).max(axis=1), 1e-12) / 127.0
    quantised = np.round(vectors / scales[:, None]).astype(np.int8)
    return {
        "sentences": [list(span) for span in sentences.spans],
        "sentence_vectors": base64.b64encode(quantised.tobytes()).decode("ascii"),
        "sentence_scales": scales.tolist(),
    }


def sentence_scores(payload: dict[str, Any], query: np.ndarray | None) -> tuple[SentenceScore, ...]:
    """Cosine of each stored sentence with the (unit) query vector; () without either."""
    spans = payload.get("sentences")
    if not spans or query is None:
        return ()
    rows = np.frombuffer(base64.b64decode(payload["sentence_vectors"]), dtype=np.int8)
    rows = rows.reshape(len(spans), -1).astype(np.float32)
    similarities = (rows @ query) * np.asarray(payload["sentence_scales"], dtype=np.float32)
    return tuple(
        SentenceScore(int(start), int(end), similarity)
        for (start, end), similarity in zip(spans, similarities.tolist(), strict=True)
    )


def chunk_from_payload(payload: dict[str, Any]) -> Chunk:
    return Chunk(
        chunk_id=payload["chunk_id"],
        document_id=payload["document_id"],
        source_url=payload["source_url"],
        source_path=payload["source_path"],
        title=payload["title"],
        section_path=tuple(payload["section_path"]),
        section_title=payload["section_title"],
        anchor=payload["anchor"],
        chunk_index=int(payload["chunk_index"]),
        total_chunks=int(payload["total_chunks"]),
        text=payload["text"],
        content_hash=payload["content_hash"],
        token_count=int(payload["token_count"]),
        indexed_at=datetime.fromisoformat(payload["indexed_at"]),
    )


def record_payload(record: DocumentRecord) -> dict[str, Any]:
    return {
        "kind": KIND_DOCUMENT,
        "document_id": record.document_id,
        "source_path": record.source_path,
        "source_url": record.source_url,
        "title": record.title,
        "content_hash": record.content_hash,
        "chunk_ids": list(record.chunk_ids),
        "indexed_at": record.indexed_at.isoformat(),
    }


def record_from_payload(payload: dict[str, Any]) -> DocumentRecord:
    return DocumentRecord(
        document_id=payload["document_id"],
        source_path=payload["source_path"],
        source_url=payload["source_url"],
        title=payload["title"],
        content_hash=payload["content_hash"],
        chunk_ids=tuple(payload["chunk_ids"]),
        indexed_at=datetime.fromisoformat(payload["indexed_at"]),
    )
