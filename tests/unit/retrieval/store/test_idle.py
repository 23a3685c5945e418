"""close_idle: idle collections give back their engine threads, reopen with their data, and are
never closed under an operation."""

from __future__ import annotations

import contextlib
import os
import threading
import time
from pathlib import Path

import pytest

from services.retrieval.store import SearchMode
from services.retrieval.store.edge import EdgeStore
from services.retrieval.store.engine import Part
from tests.unit.retrieval.store.helpers import (
    COLLECTION,
    DIMS,
    ENCODER,
    MODEL,
    SPARSE_QUERY,
    axis,
    index_corpus,
    make_chunk,
    make_store,
    point,
    query_vector,
)

OTHER = "other-book"


def engine_threads() -> int:
    """Threads the embedded engine runs in this process (named edge-*: 8 a shard); these are not
    Python threads, so threading.active_count does not see them."""
    count = 0
    for task in Path("/proc/self/task").iterdir():
        with contextlib.suppress(OSError):  # a thread that ended meanwhile
            count += (task / "comm").read_text().startswith("edge-")
    return count


def hybrid_hits(store: EdgeStore) -> list[str]:
    sparse = ENCODER.encode_query(SPARSE_QUERY)
    return [h.chunk.chunk_id for h in store.search(COLLECTION, query_vector(), sparse, SearchMode.HYBRID, 10)]


@pytest.fixture
def store(tmp_path):
    store = EdgeStore(tmp_path)
    yield store
    store.close()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc")
def test_idle_collections_close_and_reopen_with_their_data(store):
    index_corpus(store)
    store.ensure_collection(OTHER, DIMS, MODEL)
    hits = hybrid_hits(store)
    info = store.collection_info(COLLECTION)
    assert store.close_idle(3600) == []  # both were just used

    open_threads = engine_threads()
    assert store.close_idle(0) == sorted([COLLECTION, OTHER])
    assert engine_threads() < open_threads
    assert store.close_idle(0) == []  # nothing left open

    assert hybrid_hits(store) == hits
    assert store.collection_info(COLLECTION) == info
    assert store.list_collections() == sorted([COLLECTION, OTHER])  # without opening them
    assert store.close_idle(0) == [COLLECTION]


def test_only_the_collections_idle_long_enough_are_closed(store):
    index_corpus(store)
    store.ensure_collection(OTHER, DIMS, MODEL)
    time.sleep(0.6)
    store.collection_info(OTHER)
    assert store.close_idle(0.5) == [COLLECTION]


@pytest.mark.parametrize("writes", [False, True], ids=["searches", "writes"])
def test_no_operation_has_its_collection_closed_under_it(store, writes):
    """Closes everything idle as fast as it can while a thread searches the collection, or writes
    to it, until it was closed 20 times: every call succeeds and sees the data (a shard closed
    under a call fails it with "Shard is not initialized")."""
    index_corpus(store)
    expected = hybrid_hits(store)
    stop = threading.Event()
    failures: list[Exception] = []
    calls = 0

    def call_until_stopped() -> None:
        nonlocal calls
        try:
            while not stop.is_set():
                if writes:
                    chunk = make_chunk(f"extra-{calls}", 0, f"note {calls} about the lighthouse keeper")
                    store.upsert_chunks(COLLECTION, [point(chunk, axis(DIMS - 1))])
                else:
                    assert hybrid_hits(store) == expected
                calls += 1
                # A pause outside the store, as an Ingest embeds between writes: a thread that only
                # ever waits in the engine keeps the GIL between calls, and no close gets its turn.
                time.sleep(0.001)
        except Exception as exc:  # reported by the test's thread
            failures.append(exc)

    worker = threading.Thread(target=call_until_stopped)
    worker.start()
    closes = 0
    deadline = time.monotonic() + 30
    while closes < 20 and worker.is_alive() and time.monotonic() < deadline:
        closes += len(store.close_idle(0))
    stop.set()
    worker.join()

    assert failures == []
    assert closes >= 20
    assert store.collection_info(COLLECTION).chunks == 5 + (calls if writes else 0)


def test_closing_the_store_waits_for_an_operation_still_running(tmp_path):
    """A shutdown does not stop work in worker threads: close() lets it end, then closes."""
    store = EdgeStore(tmp_path)
    index_corpus(store)
    ended = []

    def operation() -> None:
        with store._using(COLLECTION, Part.CHUNKS):
            time.sleep(0.5)
            ended.append(time.monotonic())

    worker = threading.Thread(target=operation)
    worker.start()
    time.sleep(0.1)  # the operation holds its shard now
    store.close()
    closed = time.monotonic()
    worker.join()
    assert ended and ended[0] <= closed, "the store was closed under a running operation"
    reopened = EdgeStore(tmp_path)  # everything was flushed and released
    try:
        assert reopened.collection_info(COLLECTION).chunks == 5
    finally:
        reopened.close()


def test_the_server_backend_has_nothing_to_close(tmp_path):
    store = make_store("qdrant", tmp_path)
    try:
        index_corpus(store)
        assert store.close_idle(0) == []
    finally:
        store.close()
