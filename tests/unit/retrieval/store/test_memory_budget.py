"""The embedded store's open collections stay within a memory budget: opening one more closes the
least recently used idle ones, and when those in use fill it the call is RESOURCE_EXHAUSTED
(100 open collections once took 6.9 GB and 1,507 threads, past the pod's 2 GiB)."""

from __future__ import annotations

import pytest

from services.common.errors import ResourceExhausted
from services.retrieval.store.edge import COLLECTION_MEMORY_BYTES, MB, EdgeStore
from services.retrieval.store.engine import Part
from tests.unit.retrieval.store.helpers import DIMS, MODEL


@pytest.fixture
def store(tmp_path):
    store = EdgeStore(tmp_path, memory_budget_bytes=2 * COLLECTION_MEMORY_BYTES + 40 * MB)  # two fit
    yield store
    store.close()


def test_opening_past_the_budget_closes_the_least_recently_used(store):
    for name in ("a", "b", "c"):
        store.ensure_collection(name, DIMS, MODEL)
    assert store.open_collections() == ["b", "c"]
    assert store.collection_info("a").embedding_model == MODEL  # reopened from disk; b was the oldest
    assert store.open_collections() == ["a", "c"]
    assert sorted(store.list_collections()) == ["a", "b", "c"]


def test_collections_in_use_are_never_closed_and_one_more_is_refused(store):
    for name in ("a", "b", "c"):
        store.ensure_collection(name, DIMS, MODEL)
    with store._using("b", Part.CHUNKS), store._using("c", Part.CHUNKS):
        with pytest.raises(ResourceExhausted, match="OPEN_COLLECTIONS_MEMORY_MB"):
            store.collection_info("a")
        assert store.open_collections() == ["b", "c"]
    assert store.collection_info("a").embedding_model == MODEL  # once they are idle, the oldest makes room
    assert len(store.open_collections()) == 2


def test_a_collection_alone_past_the_budget_still_opens(tmp_path):
    store = EdgeStore(tmp_path, memory_budget_bytes=COLLECTION_MEMORY_BYTES // 2)
    try:
        store.ensure_collection("big", DIMS, MODEL)
        assert store.open_collections() == ["big"]
        store.ensure_collection("next", DIMS, MODEL)
        assert store.open_collections() == ["next"]
    finally:
        store.close()
