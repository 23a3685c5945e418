"""The VectorStore logic both backends share, written against a handful of Qdrant primitives.

A backend only says how to create the two Qdrant collections of a Glossator collection and how to
upsert, retrieve, scroll, count, delete and query points in one of them; records, manifests,
paging, deletion order, filters and fusion are decided here once.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
from abc import abstractmethod
from collections.abc import Collection, Sequence
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

import numpy as np

from services.common.errors import (
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    collection_not_found,
)
from services.retrieval.store import layout
from services.retrieval.store.base import (
    MIXED_MODELS_ADVICE,
    ChunkPoint,
    CollectionInfo,
    DeleteResult,
    DocumentPage,
    DocumentRecord,
    SearchFilters,
    SearchHit,
    SearchMode,
    SparseVector,
    VectorStore,
    check_collection_name,
)
from services.retrieval.store.query import (
    HasId,
    Match,
    MatchAny,
    Request,
    Where,
    filters_where,
    leg_score_requests,
    relevance,
    search_requests,
)

_DOCUMENTS_ONLY = Where(must=(Match("kind", layout.KIND_DOCUMENT),))


class Part(StrEnum):
    """The two Qdrant collections behind one Glossator collection."""

    CHUNKS = "chunks"
    DOCUMENTS = "documents"


@dataclass(frozen=True)
class NewPoint:
    point_id: str
    payload: dict[str, Any]
    dense: list[float] | None = None
    sparse: SparseVector | None = None


@dataclass(frozen=True)
class StoredPoint:
    point_id: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class ScoredPoint:
    point_id: str
    score: float
    payload: dict[str, Any] | None


# The engine orders points of equal score by where they happen to be stored, which depends on the
# order of ingest: after a new ingest the same question got another chunk fifth. Equal scores come
# from identical chunks (a page's boilerplate repeated on another: both legs score them alike) and
# from RRF, whose scores tie when two rank pairs sum alike (dense 1st and sparse 17th, dense 4th
# and sparse 2nd: 1.1 both). A search asks for this many more points and orders ties itself.
TIE_MARGIN = 3


def tie_ordered(
    points: Sequence[ScoredPoint], dense_scores: dict[str, float], sparse_scores: dict[str, float]
) -> list[ScoredPoint]:
    """Points best first, the same way on every ingest: identical chunks (the same score in every
    leg) take their fused scores in the order of their ids, and equal fused scores are ordered by
    the dense score (meaning), then the sparse score, then the id."""

    def legs(p: ScoredPoint) -> tuple[float, float]:
        return dense_scores.get(p.point_id, 0.0), sparse_scores.get(p.point_id, 0.0)

    alike: dict[tuple[float, float], list[ScoredPoint]] = {}
    for p in points:
        alike.setdefault(legs(p), []).append(p)
    canonical = []
    for group in alike.values():
        scores = sorted((p.score for p in group), reverse=True)
        ids = sorted(group, key=lambda p: p.point_id)
        canonical += [replace(p, score=score) for p, score in zip(ids, scores, strict=True)]
    return sorted(canonical, key=lambda p: (-p.score, *(-s for s in legs(p)), p.point_id))


class EngineStore(VectorStore):
    """Implements VectorStore on the primitives below; subclasses adapt one Qdrant API each."""

    def __init__(self) -> None:
        # Manifests never change once written, so a collection's is read from Qdrant only once.
        self._manifests: dict[str, layout.Manifest] = {}
        self._indexes_checked: set[str] = set()
        self._create_lock = threading.Lock()

    # -- primitives -------------------------------------------------------------------------

    @abstractmethod
    def _collection_names(self) -> list[str]:
        """Names whose two parts both exist (manifest not checked)."""

    @abstractmethod
    def _has_part(self, name: str, part: Part) -> bool: ...

    @abstractmethod
    def _create_parts(self, name: str, dense_dimensions: int) -> None:
        """Creates whichever part is missing, with its vectors and payload indexes."""

    @abstractmethod
    def _payload_indexes(self, name: str, part: Part) -> Collection[str]:
        """The payload fields the part has an index on."""

    @abstractmethod
    def _add_indexes(self, name: str, part: Part, indexes: dict[str, bool]) -> None:
        """Creates the payload indexes (field: serves prefixes) on an existing part."""

    @abstractmethod
    def _drop_part(self, name: str, part: Part) -> None:
        """Deletes the part with everything in it; nothing happens when it does not exist."""

    @abstractmethod
    def _upsert(self, name: str, part: Part, points: Sequence[NewPoint]) -> None: ...

    @abstractmethod
    def _retrieve(self, name: str, part: Part, point_ids: Sequence[str]) -> list[StoredPoint]: ...

    @abstractmethod
    def _scroll(self, name: str, part: Part, where: Where | None, fields: list[str]) -> list[StoredPoint]:
        """Every matching point, with only the given payload fields."""

    @abstractmethod
    def _count(self, name: str, part: Part, where: Where | None) -> int: ...

    @abstractmethod
    def _delete(self, name: str, part: Part, where: Where) -> None: ...

    @abstractmethod
    def _query(self, name: str, requests: Sequence[Request]) -> list[list[ScoredPoint]]:
        """Runs the requests against the chunks as one batch, one result list per request."""

    # -- collections ------------------------------------------------------------------------

    def ensure_collection(self, name: str, dense_dimensions: int, embedding_model: str) -> CollectionInfo:
        check_collection_name(name)
        with self._create_lock:
            manifest = self._read_manifest(name)
            if manifest is None:
                self._create_parts(name, dense_dimensions)
                manifest = layout.Manifest(embedding_model, dense_dimensions)
                self._upsert(name, Part.DOCUMENTS, [NewPoint(layout.MANIFEST_ID, manifest.payload())])
            elif (manifest.embedding_model, manifest.dense_dimensions) != (embedding_model, dense_dimensions):
                raise FailedPrecondition(
                    f"collection {name!r} was built with {manifest.embedding_model} "
                    f"({manifest.dense_dimensions} dimensions), not {embedding_model} "
                    f"({dense_dimensions} dimensions): {MIXED_MODELS_ADVICE}"
                )
            elif name not in self._indexes_checked:
                # A collection made before an index was added to the layout (the terms a chunk
                # defines) gets it before the ingest that fills the field; once per process.
                present = self._payload_indexes(name, Part.CHUNKS)
                missing = {
                    field: prefix for field, prefix in layout.CHUNK_INDEXES.items() if field not in present
                }
                if missing:
                    self._add_indexes(name, Part.CHUNKS, missing)
            self._indexes_checked.add(name)
            self._manifests[name] = manifest
        return self.collection_info(name)

    def delete_collection(self, name: str) -> CollectionInfo:
        check_collection_name(name)
        with self._create_lock:
            if not self._has_part(name, Part.DOCUMENTS):  # the manifest's part, dropped last
                raise collection_not_found(name)
            held = (
                self.collection_info(name)
                if self._has_part(name, Part.CHUNKS)
                else CollectionInfo(name, 0, 0, "", 0)  # the rest of an interrupted delete
            )
            self._drop_part(name, Part.CHUNKS)
            self._manifests.pop(name, None)
            self._drop_part(name, Part.DOCUMENTS)
        return held

    def list_collections(self) -> list[str]:
        return sorted(self._collection_names())

    def collection_info(self, name: str) -> CollectionInfo:
        manifest = self._manifest(name)
        return CollectionInfo(
            name=name,
            documents=self._count(name, Part.DOCUMENTS, _DOCUMENTS_ONLY),
            chunks=self._count(name, Part.CHUNKS, None),
            embedding_model=manifest.embedding_model,
            dense_dimensions=manifest.dense_dimensions,
        )

    def _manifest(self, name: str) -> layout.Manifest:
        manifest = self._manifests.get(name)
        if manifest is None:
            check_collection_name(name)
            manifest = self._read_manifest(name)
            if manifest is None:
                raise collection_not_found(name)
            self._manifests[name] = manifest
        return manifest

    def _read_manifest(self, name: str) -> layout.Manifest | None:
        if not self._has_part(name, Part.DOCUMENTS):
            return None
        points = self._retrieve(name, Part.DOCUMENTS, [layout.MANIFEST_ID])
        if not points:
            return None
        manifest = layout.Manifest.from_payload(points[0].payload)
        if manifest.layout_version != layout.LAYOUT_VERSION:
            raise FailedPrecondition(
                f"collection {name!r} has store layout {manifest.layout_version}; this version reads "
                f"layout {layout.LAYOUT_VERSION}: re-ingest into a new collection"
            )
        return manifest

    # -- chunks and records -----------------------------------------------------------------

    def upsert_chunks(self, name: str, points: Sequence[ChunkPoint]) -> None:
        dimensions = self._manifest(name).dense_dimensions
        new_points = []
        for point in points:
            dense = np.asarray(point.dense, dtype=np.float32)
            self._check_dimensions(name, dense, dimensions)
            new_points.append(
                NewPoint(
                    layout.chunk_point_id(point.chunk.chunk_id),
                    layout.chunk_payload(point.chunk, point.sentences),
                    dense=dense.tolist(),
                    sparse=point.sparse,
                )
            )
        if new_points:
            self._upsert(name, Part.CHUNKS, new_points)

    def document_record(self, name: str, document_id: str) -> DocumentRecord | None:
        self._manifest(name)
        points = self._retrieve(name, Part.DOCUMENTS, [layout.record_point_id(document_id)])
        return layout.record_from_payload(points[0].payload) if points else None

    def put_document_record(self, name: str, record: DocumentRecord) -> None:
        self._manifest(name)
        point = NewPoint(layout.record_point_id(record.document_id), layout.record_payload(record))
        self._upsert(name, Part.DOCUMENTS, [point])

    def delete_chunks_except(self, name: str, document_id: str, keep_chunk_ids: Sequence[str]) -> int:
        self._manifest(name)
        keep = tuple(layout.chunk_point_id(c) for c in keep_chunk_ids)
        stale = Where(
            must=(Match("document_id", document_id),),
            must_not=(HasId(keep),) if keep else (),
        )
        count = self._count(name, Part.CHUNKS, stale)
        if count:
            self._delete(name, Part.CHUNKS, stale)
        return count

    def delete_documents(self, name: str, document_ids: Sequence[str]) -> DeleteResult:
        self._manifest(name)
        ids = tuple(dict.fromkeys(document_ids))
        if not ids:
            return DeleteResult([], 0, [])
        recorded = {
            p.payload["document_id"]
            for p in self._retrieve(name, Part.DOCUMENTS, [layout.record_point_id(i) for i in ids])
        }
        chunks = Where(must=(MatchAny("document_id", ids),))
        chunk_owners = [
            p.payload["document_id"] for p in self._scroll(name, Part.CHUNKS, chunks, ["document_id"])
        ]
        if chunk_owners:
            self._delete(name, Part.CHUNKS, chunks)
        # The records go last: a delete interrupted here is finished by retrying it.
        if recorded:
            record_ids = tuple(layout.record_point_id(i) for i in recorded)
            self._delete(name, Part.DOCUMENTS, Where(must=(HasId(record_ids),)))
        found = recorded | set(chunk_owners)
        return DeleteResult(
            deleted_documents=[i for i in ids if i in found],
            deleted_chunks=len(chunk_owners),
            not_found=[i for i in ids if i not in found],
        )

    def list_documents(self, name: str, page_size: int, page_token: str = "") -> DocumentPage:
        if page_size < 1:
            raise InvalidArgument([FieldViolation("page_size", "must be at least 1")])
        self._manifest(name)
        keys = sorted(
            (p.payload["source_path"], p.payload["document_id"])
            for p in self._scroll(name, Part.DOCUMENTS, _DOCUMENTS_ONLY, layout.SORT_FIELDS)
        )
        start = 0
        if page_token:
            after = _decode_page_token(page_token)
            start = next((i for i, key in enumerate(keys) if key > after), len(keys))
        page = keys[start : start + page_size]
        by_id = {
            p.payload["document_id"]: layout.record_from_payload(p.payload)
            for p in self._retrieve(name, Part.DOCUMENTS, [layout.record_point_id(d) for _, d in page])
        }
        documents = [by_id[d] for _, d in page if d in by_id]
        more = start + page_size < len(keys)
        return DocumentPage(documents, _encode_page_token(page[-1]) if more else "", len(keys))

    # -- search -----------------------------------------------------------------------------

    def search(
        self,
        name: str,
        dense_vector: np.ndarray | Sequence[float],
        sparse_vector: SparseVector,
        mode: SearchMode,
        limit: int,
        filters: SearchFilters | None = None,
    ) -> list[SearchHit]:
        dense = np.asarray(dense_vector, dtype=np.float32)
        self._check_dimensions(name, dense, self._manifest(name).dense_dimensions)
        # A few more than asked for, so that chunks tied at the limit are all seen (tie_ordered).
        request = search_requests(mode, dense, sparse_vector, limit + TIE_MARGIN, filters_where(filters))
        (ranked,) = self._query(name, [request])
        if mode is SearchMode.HYBRID:
            ids = [p.point_id for p in ranked]
            legs = self._query(name, leg_score_requests(request, ids)) if ids else [[], []]
            dense_scores, sparse_scores = ({p.point_id: p.score for p in leg} for leg in legs)
        elif mode is SearchMode.DENSE:
            dense_scores, sparse_scores = {p.point_id: p.score for p in ranked}, {}
        else:
            dense_scores, sparse_scores = {}, {p.point_id: p.score for p in ranked}
        ranked = tie_ordered(ranked, dense_scores, sparse_scores)[:limit]
        # A sparse search has no query embedding (its dense vector is a placeholder).
        sentence_query = None if mode is SearchMode.SPARSE else dense
        return [
            SearchHit(
                chunk=layout.chunk_from_payload(p.payload or {}),
                relevance=relevance(mode, p.score),
                score=p.score,
                dense_score=dense_scores.get(p.point_id, 0.0),
                sparse_score=sparse_scores.get(p.point_id, 0.0),
                sentences=layout.sentence_scores(p.payload or {}, sentence_query),
            )
            for p in ranked
        ]

    def _check_dimensions(self, name: str, dense: np.ndarray, dimensions: int) -> None:
        if dense.shape != (dimensions,):
            raise FailedPrecondition(
                f"collection {name!r} holds {dimensions}-dimensional vectors, got shape {dense.shape}: "
                "was the embedding model changed?"
            )


def _encode_page_token(key: tuple[str, str]) -> str:
    return base64.urlsafe_b64encode(json.dumps(list(key)).encode()).decode()


def _decode_page_token(token: str) -> tuple[str, str]:
    try:
        source_path, document_id = json.loads(base64.urlsafe_b64decode(token.encode()))
        return str(source_path), str(document_id)
    except (binascii.Error, ValueError, TypeError) as exc:
        raise InvalidArgument([FieldViolation("page_token", "not a token from a previous response")]) from exc
