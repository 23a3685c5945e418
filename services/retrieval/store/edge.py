"""The embedded backend: Qdrant's own engine in-process through qdrant-edge-py.

Each part of a collection is an EdgeShard under <data_dir>/<collection>/<part>/: HNSW and payload
indexes, sparse vectors with the IDF modifier, and RRF fusion run in Rust, with no server. Every
update goes through the shard's write-ahead log before it returns, so a process killed at any point
reopens with every acknowledged write; close() and optimize() also flush the segments.

A shard's WAL is locked by the process that opens it: each shard is opened once per store and
shared by all threads (the engine synchronises reads and writes itself), and a second process on
the same data directory gets Unavailable.

An open collection holds about 16 engine threads and 70 MB, so close_idle closes the collections
no operation has used for a while, and opening one past `max_open` first closes the least recently
used idle ones (100 open took 6.9 GB, past the 2 GiB the manifests give retrieval); the next
operation reopens them from disk.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from services.common.errors import Unavailable, collection_not_found
from services.retrieval.store import layout
from services.retrieval.store.engine import EngineStore, NewPoint, Part, ScoredPoint, StoredPoint
from services.retrieval.store.query import Condition, HasId, Leg, Match, MatchAny, Prefix, Request, Where

_CONFIG_FILE = "edge_config.json"
_SCROLL_PAGE = 1024


class _Collection:
    """A collection's open shards, and what decides whether they may be closed: the operations
    using them now and when the last one ended. Its lock is held to open, count and close."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shards: dict[Part, qe.EdgeShard] = {}
        self.users = 0
        self.last_used = time.monotonic()

    def close(self) -> None:
        """Flushes and closes the open shards; the caller holds the lock. A shard that fails to
        flush stays open and in use, not a closed object that the next operation would call."""
        for part, shard in list(self.shards.items()):
            shard.flush()
            shard.close()
            del self.shards[part]


class EdgeStore(EngineStore):
    backend = "edge"
    search_waits_on_network = False

    def __init__(self, data_dir: str | Path, max_open: int = 1_000_000) -> None:
        super().__init__()
        self._max_open = max_open
        self._root = Path(data_dir)
        self._root.mkdir(parents=True, exist_ok=True)
        # Entries are never removed: an operation may hold one it is about to open shards in.
        self._collections: dict[str, _Collection] = {}

    # -- shards -----------------------------------------------------------------------------

    def _path(self, name: str, part: Part) -> Path:
        return self._root / name / part.value

    def _entry(self, name: str) -> _Collection:
        return self._collections.get(name) or self._collections.setdefault(name, _Collection())

    def _has_part(self, name: str, part: Part) -> bool:
        entry = self._collections.get(name)
        if entry is not None and part in entry.shards:
            return True
        return (self._path(name, part) / _CONFIG_FILE).exists()

    @contextlib.contextmanager
    def _using(self, name: str, part: Part) -> Iterator[qe.EdgeShard]:
        """The part's shard, opened if need be and kept open until the operation ends."""
        entry = self._entry(name)
        if not entry.shards:
            self._make_room(name)
        with entry.lock:
            shard = entry.shards.get(part)
            if shard is None:
                path = self._path(name, part)
                if not (path / _CONFIG_FILE).exists():
                    raise collection_not_found(name)
                shard = entry.shards[part] = self._open(path, qe.EdgeShard.load, _part_config(part))
            entry.users += 1
        try:
            yield shard
        finally:
            with entry.lock:
                entry.users -= 1
                entry.last_used = time.monotonic()

    def _make_room(self, opening: str) -> None:
        """Closes the least recently used idle collections until one more may open. Collections in
        use stay open (then the bound is passed for as long as they are used). Each entry's lock is
        taken alone, never while holding another."""
        open_entries = sorted(
            (entry.last_used, name, entry)
            for name, entry in list(self._collections.items())
            if entry.shards and name != opening
        )
        excess = len(open_entries) + 1 - self._max_open
        for _, _, entry in open_entries:
            if excess <= 0:
                break
            with entry.lock:
                if entry.shards and not entry.users:
                    entry.close()
                    excess -= 1

    @staticmethod
    def _open(path: Path, opener: Any, *args: Any) -> qe.EdgeShard:
        try:
            return opener(str(path), *args)
        except Exception as exc:  # the bindings raise plain Exception kinds
            reason = "it is open in another process (or store)" if "WouldBlock" in str(exc) else str(exc)
            raise Unavailable(f"cannot open the embedded Qdrant shard at {path}: {reason}") from exc

    def _collection_names(self) -> list[str]:
        return [
            d.name
            for d in self._root.iterdir()
            if d.is_dir() and all(self._has_part(d.name, part) for part in Part)
        ]

    def _create_parts(self, name: str, dense_dimensions: int) -> None:
        configs = {
            Part.CHUNKS: (_part_config(Part.CHUNKS, dense_dimensions), layout.CHUNK_INDEXES),
            Part.DOCUMENTS: (_part_config(Part.DOCUMENTS), layout.DOCUMENT_INDEXES),
        }
        entry = self._entry(name)
        if not entry.shards:
            self._make_room(name)
        with entry.lock:
            for part, (config, indexes) in configs.items():
                if self._has_part(name, part):
                    continue
                shard = self._open(self._path(name, part), qe.EdgeShard.create, config)
                for field, prefix in indexes.items():
                    schema = qe.KeywordIndexParams(prefix=True) if prefix else qe.PayloadSchemaType.Keyword
                    shard.update(qe.UpdateOperation.create_field_index(field, schema))
                shard.flush()
                entry.shards[part] = shard
            entry.last_used = time.monotonic()

    # -- primitives -------------------------------------------------------------------------

    def _upsert(self, name: str, part: Part, points: Sequence[NewPoint]) -> None:
        with self._using(name, part) as shard:
            shard.update(qe.UpdateOperation.upsert_points([_point(p) for p in points]))

    def _retrieve(self, name: str, part: Part, point_ids: Sequence[str]) -> list[StoredPoint]:
        with self._using(name, part) as shard:
            records = shard.retrieve(list(point_ids), with_payload=True, with_vector=False)
        return [StoredPoint(str(r.id), r.payload or {}) for r in records]

    def _scroll(self, name: str, part: Part, where: Where | None, fields: list[str]) -> list[StoredPoint]:
        points: list[StoredPoint] = []
        offset = None
        with self._using(name, part) as shard:
            while True:
                request = qe.ScrollRequest(
                    offset=offset,
                    limit=_SCROLL_PAGE,
                    filter=_filter(where),
                    with_payload=fields,
                    with_vector=False,
                )
                records, offset = shard.scroll(request)
                points.extend(StoredPoint(str(r.id), r.payload or {}) for r in records)
                if offset is None:
                    return points

    def _count(self, name: str, part: Part, where: Where | None) -> int:
        with self._using(name, part) as shard:
            return shard.count(qe.CountRequest(exact=True, filter=_filter(where)))

    def _delete(self, name: str, part: Part, where: Where) -> None:
        with self._using(name, part) as shard:
            shard.update(qe.UpdateOperation.delete_points_by_filter(_filter(where)))

    def _query(self, name: str, requests: Sequence[Request]) -> list[list[ScoredPoint]]:
        batch = qe.QueryBatchRequest([_query_request(r) for r in requests])
        with self._using(name, Part.CHUNKS) as shard:
            results = shard.query_batch(batch)
        return [[ScoredPoint(str(p.id), p.score, p.payload) for p in points] for points in results]

    def optimize(self, name: str) -> None:
        for part in Part:
            with self._using(name, part) as shard:
                shard.optimize()
                shard.flush()

    def close_idle(self, idle_seconds: float) -> list[str]:
        cutoff = time.monotonic() - idle_seconds
        closed = []
        for name, entry in list(self._collections.items()):
            with entry.lock:
                if entry.shards and not entry.users and entry.last_used <= cutoff:
                    entry.close()
                    closed.append(name)
        return sorted(closed)

    def close(self) -> None:
        for entry in list(self._collections.values()):
            with entry.lock:
                entry.close()


def _part_config(part: Part, dense_dimensions: int | None = None) -> qe.EdgeConfig:
    """A part's shard configuration; without dimensions, the one to load an existing shard with.

    Chunks keep an int8 copy of the dense vectors in RAM (see layout); a shard created without
    it gets it the next time it is optimised (at the end of an ingest).

    Payloads are `Cached`: mapped and read into the page cache when a segment opens. Every search
    reads its hits' payloads, and Qdrant's default (`Cold`) leaves them on disk until first read:
    on the agentfactory book 5 payloads read for the first time took 0.8 ms, against 0.06 ms from
    the page cache, and the service's c=1 Search p50 was 1.1 ms slower. Loading an existing shard
    with this config records it, so segments the optimizer writes from then on are cached too.
    """
    if part is Part.DOCUMENTS:
        # An edge shard needs at least one vector; record points simply never set this one.
        return qe.EdgeConfig(
            sparse_vectors={"unused": qe.EdgeSparseVectorParams()}, payload_memory=qe.Memory.Cached
        )
    dense = (
        {layout.DENSE: qe.EdgeVectorParams(size=dense_dimensions, distance=qe.Distance.Cosine)}
        if dense_dimensions
        else None  # inherited from the shard on load
    )
    return qe.EdgeConfig(
        vectors=dense,
        sparse_vectors={layout.SPARSE: qe.EdgeSparseVectorParams(modifier=qe.Modifier.Idf)},
        payload_memory=qe.Memory.Cached,
        quantization_config=qe.ScalarQuantizationConfig(
            qe.ScalarType.Int8, quantile=layout.DENSE_QUANTILE, memory=qe.Memory.Pinned
        ),
    )


def _point(point: NewPoint) -> qe.Point:
    vectors: dict[str, Any] = {}
    if point.dense is not None:
        vectors[layout.DENSE] = point.dense
    if point.sparse is not None:
        vectors[layout.SPARSE] = qe.SparseVector(list(point.sparse.indices), list(point.sparse.values))
    return qe.Point(point.point_id, vectors, point.payload)


def _query_request(request: Request) -> qe.QueryRequest:
    where = _filter(request.where)
    common = {
        "limit": request.limit,
        "filter": where,
        "with_payload": request.with_payload,
        "with_vector": False,
    }
    if request.fusion is None:
        (leg,) = request.legs
        return qe.QueryRequest(query=_nearest(leg), params=_params(leg), **common)
    return qe.QueryRequest(
        prefetches=[
            qe.Prefetch(limit=leg.limit, query=_nearest(leg), filter=where, params=_params(leg))
            for leg in request.legs
        ],
        query=qe.Fusion.Rrf(k=request.fusion.k, weights=list(request.fusion.weights)),
        **common,
    )


def _params(leg: Leg) -> qe.SearchParams | None:
    if leg.oversampling is None:
        return None
    quantization = qe.QuantizationSearchParams(rescore=True, oversampling=leg.oversampling)
    return qe.SearchParams(quantization=quantization)


def _nearest(leg: Leg) -> qe.Query:
    if isinstance(leg.vector, list):
        return qe.Query.Nearest(leg.vector, using=leg.using)
    return qe.Query.Nearest(
        qe.SparseVector(list(leg.vector.indices), list(leg.vector.values)), using=leg.using
    )


@functools.lru_cache(maxsize=64)
def _filter(where: Where | None) -> qe.Filter | None:
    """Cached: a search's leg-score queries share one filter on the ids of its hits, and the
    engine's filter objects are read-only values that parse every point id anew (25 us for 5)."""
    if where is None:
        return None
    return qe.Filter(
        must=[_condition(c) for c in where.must] or None,
        must_not=[_condition(c) for c in where.must_not] or None,
    )


def _condition(condition: Condition) -> Any:
    match condition:
        case Match(key, value):
            return qe.FieldCondition(key=key, match=qe.MatchValue(value))
        case MatchAny(key, values):
            return qe.FieldCondition(key=key, match=qe.MatchAny(list(values)))
        case Prefix(key, prefix):
            return qe.FieldCondition(key=key, match=qe.MatchPrefix(prefix))
        case HasId(point_ids):
            return qe.HasIdCondition(set(point_ids))
