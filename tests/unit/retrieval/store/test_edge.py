"""What only the embedded backend has to prove: its data directory survives the process."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from services.common.errors import Unavailable
from services.retrieval.store import SearchFilters, SearchMode, layout
from services.retrieval.store.edge import EdgeStore
from services.retrieval.store.engine import Part
from tests.unit.retrieval.store.helpers import (
    COLLECTION,
    DIMS,
    ENCODER,
    MODEL,
    SPARSE_QUERY,
    index_corpus,
    query_vector,
)


def snapshot(store: EdgeStore) -> tuple:
    sparse = ENCODER.encode_query(SPARSE_QUERY)
    searches = tuple(
        tuple(
            (h.chunk, round(h.score, 5)) for h in store.search(COLLECTION, query_vector(), sparse, mode, 10)
        )
        for mode in SearchMode
    )
    return (
        store.list_collections(),
        store.collection_info(COLLECTION),
        store.list_documents(COLLECTION, 100),
        searches,
    )


def test_reopening_the_data_directory_sees_the_same_data(tmp_path):
    store = EdgeStore(tmp_path)
    index_corpus(store)
    store.optimize(COLLECTION)
    before = snapshot(store)
    store.close()

    reopened = EdgeStore(tmp_path)
    try:
        assert snapshot(reopened) == before
        assert reopened.ensure_collection(COLLECTION, DIMS, MODEL).chunks == 5
        hits = reopened.search(
            COLLECTION,
            query_vector(),
            ENCODER.encode_query("x"),
            SearchMode.DENSE,
            5,
            SearchFilters(section="Linux"),
        )
        assert [h.chunk.section_title for h in hits] == ["Linux"]  # payload indexes reloaded too
    finally:
        reopened.close()


def test_a_killed_process_loses_no_acknowledged_write(tmp_path):
    # The child writes without close() or optimize() and dies at once: only the WAL has the data.
    child = textwrap.dedent(
        f"""
        import os
        from services.retrieval.store.edge import EdgeStore
        from tests.unit.retrieval.store.helpers import index_corpus
        index_corpus(EdgeStore({str(tmp_path)!r}))
        os._exit(0)
        """
    )
    subprocess.run([sys.executable, "-c", child], check=True, cwd=Path(__file__).resolve().parents[4])
    store = EdgeStore(tmp_path)
    try:
        info = store.collection_info(COLLECTION)
        assert (info.documents, info.chunks, info.embedding_model) == (4, 5, MODEL)
        assert store.document_record(COLLECTION, "alpha").chunk_count == 2
    finally:
        store.close()


def test_a_second_store_on_the_same_directory_is_refused(tmp_path):
    first = EdgeStore(tmp_path)
    index_corpus(first)
    second = EdgeStore(tmp_path)
    try:
        with pytest.raises(Unavailable, match="open in another process"):
            second.collection_info(COLLECTION)
    finally:
        second.close()
        first.close()


def shard_config(root: Path, part: str) -> dict:
    return json.loads((root / COLLECTION / part / "edge_config.json").read_text())


def test_payloads_are_cached_and_dense_vectors_quantized_also_in_a_shard_made_before(tmp_path):
    store = EdgeStore(tmp_path)
    index_corpus(store)
    store.close()
    # Make it a shard created before these settings existed: Qdrant's defaults, as persisted.
    old = {k: v for k, v in shard_config(tmp_path, "chunks").items() if k != "quantization_config"}
    old["payload_memory"] = "cold"
    (tmp_path / COLLECTION / "chunks" / "edge_config.json").write_text(json.dumps(old))

    reopened = EdgeStore(tmp_path)
    try:
        assert (
            len(reopened.search(COLLECTION, query_vector(), ENCODER.encode_query("x"), SearchMode.DENSE, 5))
            == 5
        )
    finally:
        reopened.close()
    chunks = shard_config(tmp_path, "chunks")
    assert chunks["payload_memory"] == "cached"
    assert chunks["quantization_config"]["scalar"]["type"] == "int8"
    assert shard_config(tmp_path, "documents")["payload_memory"] == "cached"


def test_a_collection_made_before_an_index_existed_gets_it_at_its_next_ingest(tmp_path, monkeypatch):
    older = {field: prefix for field, prefix in layout.CHUNK_INDEXES.items() if field != "defines"}
    monkeypatch.setattr(layout, "CHUNK_INDEXES", older)
    store = EdgeStore(tmp_path)
    index_corpus(store)
    store.close()
    monkeypatch.undo()

    reopened = EdgeStore(tmp_path)
    try:
        with reopened._using(COLLECTION, Part.CHUNKS) as shard:
            assert "defines" not in shard.info().payload_schema
        reopened.ensure_collection(COLLECTION, DIMS, MODEL)  # what an ingest does first
        with reopened._using(COLLECTION, Part.CHUNKS) as shard:
            assert set(shard.info().payload_schema) == set(layout.CHUNK_INDEXES)
    finally:
        reopened.close()
