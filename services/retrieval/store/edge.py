"""The embedded backend: Qdrant's own engine in-process through qdrant-edge-py.

Each part of a collection is an EdgeShard under <data_dir>/<collection>/<part>/: HNSW and payload
indexes, sparse vectors with the IDF modifier, and RRF fusion run in Rust, with no server. Every
update goes through the shard's write-ahead log before it returns, so a process killed at any point
reopens with every acknowledged write; close() and optimize() also flush the segments.

A shard's WAL is locked by the process that opens it: each shard is opened once per store and
shared by all threads (the engine synchronises reads and writes itself), and a second process on
the same data directory gets Unavailable.

An open collection holds about 16 engine threads and 70 MB (100 open took 6.9 GB and 1,507
threads), plus the part of its files it maps. So close_idle closes the collections no operation
has used for a while, and opening one past the memory budget first closes the least recently used
idle ones; the next operation reopens them from disk.
"""

from __future__ import annotations

import contextlib
import functools
import shutil
import threading
import time
from collections.abc import Callable, Collection, Iterator, Sequence
from pathlib import Path
from typing import Any

import qdrant_edge as qe

from services.common.errors import Aborted, ResourceExhausted, Unavailable, collection_not_found
from services.retrieval.store import layout
from services.retrieval.store.engine import EngineStore, NewPoint, Part, ScoredPoint, StoredPoint
from services.retrieval.store.query import Condition, HasId, Leg, Match, MatchAny, Prefix, Request, Where

_CONFIG_FILE = "edge_config.json"
CLOSE_WAIT_SECONDS = 5.0
MB = 1024 * 1024
OPEN_SHARD_BYTES = 40 * MB
"""What opening a shard writes: a fresh write-ahead log segment (57 MB for a collection's two)."""
COLLECTION_MEMORY_BYTES = 70 * MB
"""An open collection's engine threads and buffers, before its mapped files (measured: 100 open
collections of a few pages took 6.9 GB)."""
_SCROLL_PAGE = 1024


class _Collection:
    """A collection's open shards, and what decides whether they may be closed: the operations
    using them now and when the last one ended. Its lock is held to open, count and close."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.shards: dict[Part, qe.EdgeShard] = {}
        self.users = 0
        self.last_used = time.monotonic()
        self.memory_bytes = 0  # the estimate counted against the budget while shards are open

    def close(self) -> None:
        """Flushes and closes the open shards; the caller holds the lock. A shard that fails to
        flush stays open and in use, not a closed object that the next operation would call."""
        for part, shard in list(self.shards.items()):
            shard.flush()
            shard.close()
            del self.shards[part]
        self.memory_bytes = 0


class EdgeStore(EngineStore):
    backend = "edge"
    search_waits_on_network = False

    def __init__(
        self,
        data_dir: str | Path,
        room_to_open: Callable[[int], None] | None = None,
        memory_budget_bytes: int | None = None,
    ) -> None:
        super().__init__()
        self._root = Path(data_dir)
        self._room_to_open = room_to_open
        self._memory_budget = memory_budget_bytes
        self._budget_lock = threading.Lock()
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
        with entry.lock:
            shard = entry.shards.get(part)
            if shard is None:
                path = self._path(name, part)
                if not (path / _CONFIG_FILE).exists():
                    raise collection_not_found(name)
                shard = self._open_part(name, entry, part, qe.EdgeShard.load, _part_config(part))
            entry.users += 1
        try:
            yield shard
        finally:
            with entry.lock:
                entry.users -= 1
                entry.last_used = time.monotonic()

    def _open_part(self, name: str, entry: _Collection, part: Part, opener: Any, config: Any) -> qe.EdgeShard:
        """Opens (or creates) a part's shard, the caller holding the entry's lock: first room on the
        disk for its new log segment (the engine dies by SIGBUS on a full disk), then, for the
        collection's first open part, room in the memory budget."""
        if self._room_to_open is not None:
            self._room_to_open(OPEN_SHARD_BYTES)
        first = not entry.shards
        if first:
            entry.memory_bytes = self._make_memory_room(name)
        try:
            shard = entry.shards[part] = self._open(self._path(name, part), opener, config)
        except Unavailable:
            if first:
                entry.memory_bytes = 0
            raise
        return shard

    def _make_memory_room(self, name: str) -> int:
        """The collection's memory estimate, once the open collections leave room for it: the least
        recently used idle ones are closed first. ResourceExhausted when those in use fill the
        budget (a collection alone past it still opens: it could never be served otherwise)."""
        needed = COLLECTION_MEMORY_BYTES + _mapped_bytes(self._root / name)
        if self._memory_budget is None:
            return needed
        with self._budget_lock:
            others = sorted(
                (
                    (other, entry)
                    for other, entry in self._collections.items()
                    if other != name and entry.shards
                ),
                key=lambda item: item[1].last_used,
            )
            used = sum(entry.memory_bytes for _, entry in others)
            for _other, entry in others:
                if used + needed <= self._memory_budget:
                    break
                if not entry.lock.acquire(blocking=False):  # being opened or closed by another call
                    continue
                try:
                    if entry.shards and not entry.users:
                        used -= entry.memory_bytes
                        entry.close()
                finally:
                    entry.lock.release()
            if used and used + needed > self._memory_budget:
                raise ResourceExhausted(
                    f"the collections in use take the {self._memory_budget // MB:,} MB the embedded store may "
                    "keep open (GLOSSATOR_RETRIEVAL_OPEN_COLLECTIONS_MEMORY_MB); retry in a moment"
                )
        return needed

    def open_collections(self) -> list[str]:
        """The collections whose files are open now."""
        return sorted(name for name, entry in self._collections.items() if entry.shards)

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
        with entry.lock:
            for part, (config, indexes) in configs.items():
                if self._has_part(name, part):
                    continue
                shard = self._open_part(name, entry, part, qe.EdgeShard.create, config)
                _create_indexes(shard, indexes)
            entry.last_used = time.monotonic()

    def _payload_indexes(self, name: str, part: Part) -> Collection[str]:
        with self._using(name, part) as shard:
            return set(shard.info().payload_schema)

    def _add_indexes(self, name: str, part: Part, indexes: dict[str, bool]) -> None:
        with self._using(name, part) as shard:
            _create_indexes(shard, indexes)

    def _drop_part(self, name: str, part: Part) -> None:
        entry = self._entry(name)
        with entry.lock:
            if entry.users:
                raise Aborted(f"collection {name!r} is being read or written; retry when that is done")
            shard = entry.shards.pop(part, None)
            if shard is not None:
                shard.close()
            if not entry.shards:
                entry.memory_bytes = 0
            path = self._path(name, part)
            if path.exists():
                shutil.rmtree(path)
            with contextlib.suppress(OSError):  # the collection's folder, once both parts are gone
                path.parent.rmdir()

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
        """Waits (CLOSE_WAIT_SECONDS at most) for the operations still running in worker threads,
        which a server's shutdown does not stop (an ingest's last optimize): a shard closed under
        one fails it ("Already borrowed"), and its writes may not be flushed."""
        deadline = time.monotonic() + CLOSE_WAIT_SECONDS
        for entry in list(self._collections.values()):
            while True:
                with entry.lock:
                    if not entry.users or time.monotonic() >= deadline:
                        entry.close()
                        break
                time.sleep(0.01)


def _mapped_bytes(folder: Path) -> int:
    """Disk the collection's segments take (what the engine maps and caches), without its logs."""
    if not folder.is_dir():
        return 0
    return sum(
        path.stat().st_blocks * 512
        for path in folder.rglob("*")
        if path.is_file() and "wal" not in path.parts
    )


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


def _create_indexes(shard: qe.EdgeShard, indexes: dict[str, bool]) -> None:
    """Keyword indexes on the payload fields (field: whether it serves prefix matches)."""
    for field, prefix in indexes.items():
        schema = qe.KeywordIndexParams(prefix=True) if prefix else qe.PayloadSchemaType.Keyword
        shard.update(qe.UpdateOperation.create_field_index(field, schema))
    if indexes:
        shard.flush()
