"""The server backend: a Qdrant server or cluster through qdrant-client (REST).

The same class runs qdrant-client's local mode (":memory:" or a directory), which executes the
same requests in Python; the test suite uses it to run this code path without a server. Local mode
is not thread-safe, so its calls are serialised; calls to a server run concurrently (httpx's
connection pool is thread-safe).

Every call is translated: a server that cannot be reached (refused, reset, timed out, 5xx) becomes
Unavailable naming the URL. The client keeps no broken state: httpx opens a fresh connection on the
next call, so the store works again as soon as the server is back.
"""

from __future__ import annotations

import contextlib
import math
import threading
from collections.abc import Collection, Iterator, Sequence
from typing import Any

import httpx
from qdrant_client import QdrantClient, models
from qdrant_client.http.exceptions import ResponseHandlingException, UnexpectedResponse

from services.common.errors import NotFound, Unavailable
from services.retrieval.store import layout
from services.retrieval.store.engine import EngineStore, NewPoint, Part, ScoredPoint, StoredPoint
from services.retrieval.store.query import Condition, HasId, Leg, Match, MatchAny, Prefix, Request, Where

_SCROLL_PAGE = 1024
_HTTP_CONFLICT = 409


class QdrantClientStore(EngineStore):
    backend = "qdrant"

    def __init__(self, location: str, *, api_key: str | None = None, timeout_seconds: float = 10.0) -> None:
        """location: a server URL (http:// or https://), ":memory:", or a directory for local mode."""
        super().__init__()
        self._location = location
        remote = location.startswith(("http://", "https://"))
        if remote:
            self._client = QdrantClient(
                url=location,
                api_key=api_key or None,
                timeout=max(1, math.ceil(timeout_seconds)),
                check_compatibility=False,
            )
        elif location == ":memory:":
            self._client = QdrantClient(location=location)
        else:
            self._client = QdrantClient(path=location)
        self._serial: contextlib.AbstractContextManager[Any] = (
            contextlib.nullcontext() if remote else threading.RLock()
        )

    @contextlib.contextmanager
    def _calls(self) -> Iterator[None]:
        """Runs client calls, turning transport failures into Unavailable."""
        try:
            with self._serial:
                yield
        except (ResponseHandlingException, httpx.TransportError) as exc:
            raise Unavailable(f"Qdrant at {self._location} is unreachable: {_reason(exc)}") from exc
        except UnexpectedResponse as exc:
            if exc.status_code == 404:
                raise NotFound(f"not found in Qdrant at {self._location}: {exc.content[:200]!r}") from exc
            if exc.status_code is not None and exc.status_code >= 500:
                raise Unavailable(f"Qdrant at {self._location} answered {exc.status_code}") from exc
            raise

    def _collection(self, name: str, part: Part) -> str:
        return name if part is Part.CHUNKS else layout.documents_collection(name)

    # -- collections ------------------------------------------------------------------------

    def _collection_names(self) -> list[str]:
        with self._calls():
            names = {c.name for c in self._client.get_collections().collections}
        return [n for n in names if layout.documents_collection(n) in names]

    def _has_part(self, name: str, part: Part) -> bool:
        with self._calls():
            return self._client.collection_exists(self._collection(name, part))

    def _create_parts(self, name: str, dense_dimensions: int) -> None:
        if not self._has_part(name, Part.CHUNKS):
            self._create(
                name,
                layout.CHUNK_INDEXES,
                vectors_config={
                    layout.DENSE: models.VectorParams(size=dense_dimensions, distance=models.Distance.COSINE)
                },
                sparse_vectors_config={
                    layout.SPARSE: models.SparseVectorParams(modifier=models.Modifier.IDF)
                },
                quantization_config=models.ScalarQuantization(
                    scalar=models.ScalarQuantizationConfig(
                        type=models.ScalarType.INT8, quantile=layout.DENSE_QUANTILE, always_ram=True
                    )
                ),
            )
        if not self._has_part(name, Part.DOCUMENTS):
            self._create(layout.documents_collection(name), layout.DOCUMENT_INDEXES, vectors_config={})

    def _create(self, collection: str, indexes: dict[str, bool], **config: Any) -> None:
        try:
            with self._calls():
                # Payloads in the page cache from startup (every search reads its hits'), as in
                # the edge backend; servers before 1.19 keep them in RAM instead.
                self._client.create_collection(collection, on_disk_payload=False, **config)
        except UnexpectedResponse as exc:
            if exc.status_code != _HTTP_CONFLICT:  # another replica created it first: fine
                raise
        self._create_indexes(collection, indexes)

    def _payload_indexes(self, name: str, part: Part) -> Collection[str]:
        with self._calls():
            return set(self._client.get_collection(self._collection(name, part)).payload_schema)

    def _add_indexes(self, name: str, part: Part, indexes: dict[str, bool]) -> None:
        self._create_indexes(self._collection(name, part), indexes)

    def _create_indexes(self, collection: str, indexes: dict[str, bool]) -> None:
        with self._calls():
            for field, prefix in indexes.items():
                schema = models.KeywordIndexParams(
                    type=models.KeywordIndexType.KEYWORD, prefix=prefix or None
                )
                self._client.create_payload_index(collection, field, field_schema=schema, wait=True)

    def _drop_part(self, name: str, part: Part) -> None:
        with self._calls():
            self._client.delete_collection(self._collection(name, part))  # False when it was not there

    # -- primitives -------------------------------------------------------------------------

    def _upsert(self, name: str, part: Part, points: Sequence[NewPoint]) -> None:
        structs = [models.PointStruct(id=p.point_id, vector=_vectors(p), payload=p.payload) for p in points]
        with self._calls():
            self._client.upsert(self._collection(name, part), points=structs, wait=True)

    def _retrieve(self, name: str, part: Part, point_ids: Sequence[str]) -> list[StoredPoint]:
        with self._calls():
            records = self._client.retrieve(
                self._collection(name, part), list(point_ids), with_payload=True, with_vectors=False
            )
        return [StoredPoint(str(r.id), r.payload or {}) for r in records]

    def _scroll(self, name: str, part: Part, where: Where | None, fields: list[str]) -> list[StoredPoint]:
        points: list[StoredPoint] = []
        offset = None
        while True:
            with self._calls():
                records, offset = self._client.scroll(
                    self._collection(name, part),
                    scroll_filter=_filter(where),
                    limit=_SCROLL_PAGE,
                    offset=offset,
                    with_payload=fields,
                    with_vectors=False,
                )
            points.extend(StoredPoint(str(r.id), r.payload or {}) for r in records)
            if offset is None:
                return points

    def _count(self, name: str, part: Part, where: Where | None) -> int:
        with self._calls():
            return self._client.count(
                self._collection(name, part), count_filter=_filter(where), exact=True
            ).count

    def _delete(self, name: str, part: Part, where: Where) -> None:
        selector = models.FilterSelector(filter=_filter(where))
        with self._calls():
            self._client.delete(self._collection(name, part), points_selector=selector, wait=True)

    def _query(self, name: str, requests: Sequence[Request]) -> list[list[ScoredPoint]]:
        with self._calls():
            responses = self._client.query_batch_points(name, requests=[_query_request(r) for r in requests])
        return [[ScoredPoint(str(p.id), p.score, p.payload) for p in r.points] for r in responses]

    def optimize(self, name: str) -> None:
        self._manifest(name)  # the server optimises in the background; only the name is checked

    def close_idle(self, idle_seconds: float) -> list[str]:
        return []  # the server holds its collections; this process opens nothing per collection

    def close(self) -> None:
        with self._serial:
            self._client.close()


def _reason(exc: Exception) -> str:
    source = getattr(exc, "source", None) or exc
    return f"{type(source).__name__}: {source}" if str(source) else type(source).__name__


def _vectors(point: NewPoint) -> dict[str, Any]:
    vectors: dict[str, Any] = {}
    if point.dense is not None:
        vectors[layout.DENSE] = point.dense
    if point.sparse is not None:
        vectors[layout.SPARSE] = models.SparseVector(
            indices=list(point.sparse.indices), values=list(point.sparse.values)
        )
    return vectors


def _query_request(request: Request) -> models.QueryRequest:
    where = _filter(request.where)
    common: dict[str, Any] = {
        "limit": request.limit,
        "filter": where,
        "with_payload": request.with_payload,
        "with_vector": False,
    }
    if request.fusion is None:
        (leg,) = request.legs
        return models.QueryRequest(query=_vector(leg), using=leg.using, params=_params(leg), **common)
    return models.QueryRequest(
        prefetch=[
            models.Prefetch(
                query=_vector(leg), using=leg.using, filter=where, limit=leg.limit, params=_params(leg)
            )
            for leg in request.legs
        ],
        query=models.RrfQuery(rrf=models.Rrf(k=request.fusion.k, weights=list(request.fusion.weights))),
        **common,
    )


def _params(leg: Leg) -> models.SearchParams | None:
    if leg.oversampling is None:
        return None
    quantization = models.QuantizationSearchParams(rescore=True, oversampling=leg.oversampling)
    return models.SearchParams(quantization=quantization)


def _vector(leg: Leg) -> list[float] | models.SparseVector:
    if isinstance(leg.vector, list):
        return leg.vector
    return models.SparseVector(indices=list(leg.vector.indices), values=list(leg.vector.values))


def _filter(where: Where | None) -> models.Filter | None:
    if where is None:
        return None
    return models.Filter(
        must=[_condition(c) for c in where.must] or None,
        must_not=[_condition(c) for c in where.must_not] or None,
    )


def _condition(condition: Condition) -> models.Condition:
    match condition:
        case Match(key, value):
            return models.FieldCondition(key=key, match=models.MatchValue(value=value))
        case MatchAny(key, values):
            return models.FieldCondition(key=key, match=models.MatchAny(any=list(values)))
        case Prefix(key, prefix):
            return models.FieldCondition(key=key, match=models.MatchPrefix(prefix=prefix))
        case HasId(point_ids):
            return models.HasIdCondition(has_id=list(point_ids))
