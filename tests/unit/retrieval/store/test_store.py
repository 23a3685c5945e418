"""The vector store contract, run against both backends (edge in a tmp dir, qdrant-client ":memory:")."""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from services.common.errors import FailedPrecondition, InvalidArgument, NotFound
from services.retrieval.store import SearchFilters, SearchMode, VectorStore
from services.retrieval.store.engine import Part, ScoredPoint, tie_ordered
from services.retrieval.store.query import RRF_BEST_SCORE, RRF_K, SPARSE_WEIGHT, rrf_score
from tests.unit.retrieval.store.helpers import (
    COLLECTION,
    DIMS,
    ENCODER,
    MODEL,
    QUERY_COSINES,
    SPARSE_QUERY,
    axis,
    index_corpus,
    make_chunk,
    make_store,
    point,
    query_vector,
    record,
)

pytestmark = pytest.mark.filterwarnings("ignore:Payload indexes have no effect:UserWarning")


@pytest.fixture(params=["edge", "qdrant"])
def store(request, tmp_path):
    store = make_store(request.param, tmp_path)
    yield store
    store.close()


def search(store: VectorStore, mode: SearchMode, limit: int = 10, **filters):
    sparse = ENCODER.encode_query(SPARSE_QUERY)
    return store.search(COLLECTION, query_vector(), sparse, mode, limit, SearchFilters(**filters))


def keys(hits, chunks) -> list[str]:
    by_id = {c.chunk_id: k for k, c in chunks.items()}
    return [by_id[h.chunk.chunk_id] for h in hits]


# -- collections ----------------------------------------------------------------------------


def test_collection_is_created_on_first_use_and_reused_by_the_same_model(store):
    info = store.ensure_collection(COLLECTION, DIMS, MODEL)
    assert (info.documents, info.chunks, info.embedding_model, info.dense_dimensions) == (0, 0, MODEL, DIMS)
    index_corpus(store)
    again = store.ensure_collection(COLLECTION, DIMS, MODEL)
    assert (again.documents, again.chunks) == (4, 5)
    assert store.list_collections() == [COLLECTION]


def test_collection_built_by_another_model_is_refused(store):
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    with pytest.raises(FailedPrecondition, match="test/model-a"):
        store.ensure_collection(COLLECTION, DIMS, "test/model-b")
    with pytest.raises(FailedPrecondition, match="8 dimensions"):
        store.ensure_collection(COLLECTION, DIMS * 2, MODEL)


def test_vectors_of_the_wrong_size_are_refused(store):
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    chunk = make_chunk("doc", 0, "text")
    with pytest.raises(FailedPrecondition, match="8-dimensional"):
        store.upsert_chunks(COLLECTION, [point(chunk, np.ones(DIMS + 1, dtype=np.float32))])
    with pytest.raises(FailedPrecondition):
        store.search(COLLECTION, np.ones(3), ENCODER.encode_query("x"), SearchMode.HYBRID, 5)


def test_unknown_collection_is_not_found_and_bad_names_are_invalid(store):
    with pytest.raises(NotFound):
        store.collection_info("missing")
    with pytest.raises(NotFound):
        store.search("missing", query_vector(), ENCODER.encode_query("x"), SearchMode.DENSE, 5)
    for bad in ["", "a/b", "books.documents", "-x", "x" * 64]:
        with pytest.raises(InvalidArgument):
            store.ensure_collection(bad, DIMS, MODEL)
    assert store.list_collections() == []


def test_several_collections_are_independent(store):
    index_corpus(store)
    store.ensure_collection("other", 4, "test/model-b")
    assert store.list_collections() == [COLLECTION, "other"]
    assert store.collection_info("other").chunks == 0
    assert store.collection_info(COLLECTION).chunks == 5


def test_a_deleted_collection_is_gone_and_the_others_stay(store):
    index_corpus(store)
    store.ensure_collection("other", 4, "test/model-b")
    held = store.delete_collection(COLLECTION)
    assert (held.name, held.documents, held.chunks) == (COLLECTION, 4, 5)
    assert store.list_collections() == ["other"]
    with pytest.raises(NotFound):
        store.collection_info(COLLECTION)
    with pytest.raises(NotFound):
        store.delete_collection(COLLECTION)
    with pytest.raises(NotFound):
        store.delete_collection("never-made")
    # The name is free again, for another model too: nothing of the old collection is left.
    info = store.ensure_collection(COLLECTION, DIMS * 2, "test/model-c")
    assert (info.documents, info.chunks, info.dense_dimensions) == (0, 0, DIMS * 2)


def test_a_delete_interrupted_after_the_chunks_is_finished_by_running_it_again(store):
    index_corpus(store)
    store._drop_part(COLLECTION, Part.CHUNKS)  # what a delete killed at that point leaves
    assert store.list_collections() == []
    held = store.delete_collection(COLLECTION)
    assert (held.documents, held.chunks) == (0, 0)
    with pytest.raises(NotFound):
        store.delete_collection(COLLECTION)
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    assert store.list_collections() == [COLLECTION]


# -- search -----------------------------------------------------------------------------------


def test_dense_search_ranks_by_cosine_with_full_payload(store):
    chunks = index_corpus(store)
    hits = search(store, SearchMode.DENSE)
    assert keys(hits, chunks) == ["A", "D", "B", "C", "E"]
    for hit, key in zip(hits, ["A", "D", "B", "C", "E"], strict=True):
        assert hit.chunk == chunks[key]  # every Chunk field survives the round trip, indexed_at too
        assert hit.dense_score == pytest.approx(QUERY_COSINES[key], abs=1e-5)
        assert hit.score == pytest.approx(hit.dense_score)
        assert hit.sparse_score == 0.0
        assert hit.relevance == pytest.approx((1 + QUERY_COSINES[key]) / 2, abs=1e-5)


def test_sparse_search_ranks_by_bm25_and_returns_only_matching_chunks(store):
    chunks = index_corpus(store)
    hits = search(store, SearchMode.SPARSE)
    assert keys(hits, chunks) == ["D", "C"]
    assert hits[0].sparse_score > hits[1].sparse_score > 0
    assert all(h.dense_score == 0.0 for h in hits)
    assert hits[0].relevance == pytest.approx(hits[0].score / (hits[0].score + 10.0))


def test_hybrid_search_fuses_both_legs_with_weighted_rrf(store):
    chunks = index_corpus(store)
    hits = search(store, SearchMode.HYBRID)
    # Dense ranks A D B C E; sparse ranks D C. Fused: D = 1/2 + 1.7/1, C = 1/4 + 1.7/2, A = 1, B, E.
    assert keys(hits, chunks) == ["D", "C", "A", "B", "E"]
    expected_d = rrf_score(RRF_K, 1.0, 2) + rrf_score(RRF_K, SPARSE_WEIGHT, 1)
    assert hits[0].score == pytest.approx(expected_d, rel=1e-5)
    assert hits[0].relevance == pytest.approx(math.sqrt(expected_d / RRF_BEST_SCORE), rel=1e-5)
    assert [h.relevance for h in hits] == sorted((h.relevance for h in hits), reverse=True)
    by_key = dict(zip(keys(hits, chunks), hits, strict=True))
    assert by_key["D"].dense_score == pytest.approx(0.5, abs=1e-5)
    assert by_key["D"].sparse_score == pytest.approx(
        search(store, SearchMode.SPARSE)[0].sparse_score, rel=1e-5
    )
    assert by_key["A"].sparse_score == 0.0 and by_key["A"].dense_score == pytest.approx(0.8, abs=1e-5)
    for key, hit in by_key.items():  # every hit carries its own cosine, whichever leg found it
        assert hit.dense_score == pytest.approx(QUERY_COSINES[key], abs=1e-5)
    assert by_key["A"].chunk == chunks["A"]


def test_a_chunk_ranked_first_by_both_legs_has_relevance_one(store):
    chunks = index_corpus(store)
    hits = store.search(
        COLLECTION, axis(3), ENCODER.encode_query(SPARSE_QUERY), SearchMode.HYBRID, 3, SearchFilters()
    )
    assert keys(hits, chunks)[0] == "D"
    assert hits[0].score == pytest.approx(RRF_BEST_SCORE, rel=1e-5)
    assert hits[0].relevance == pytest.approx(1.0)


@pytest.mark.parametrize("mode", list(SearchMode))
def test_identical_chunks_come_back_in_the_same_order_whatever_order_they_were_written_in(tmp_path, mode):
    """The engine orders equal scores by where points are stored: the order of ingest."""
    text = "Search filters for sections keep answers on the page."
    twins = [make_chunk(document, 0, text, source_path=f"{document}.md") for document in ("one", "two")]
    first = []
    for backend in ("edge", "qdrant"):
        for order, written in enumerate((twins, twins[::-1])):
            store = make_store(backend, tmp_path / f"{backend}-{order}")
            store.ensure_collection(COLLECTION, DIMS, MODEL)
            for chunk in written:  # one write each: stored one after the other
                store.upsert_chunks(COLLECTION, [point(chunk, axis(0))])
            store.optimize(COLLECTION)
            first.append(search(store, mode, limit=1)[0].chunk.document_id)
            store.close()
    assert first == [min(twins, key=lambda c: c.chunk_id).document_id] * 4


def test_points_of_equal_score_are_ordered_by_meaning_then_words_then_id():
    tied = [ScoredPoint("b", 1.1, None), ScoredPoint("a", 1.1, None), ScoredPoint("c", 1.1, None)]
    dense = {"a": 0.6, "b": 0.7, "c": 0.6}  # dense 1st and sparse 17th against dense 4th, sparse 2nd
    sparse = {"a": 20.0, "b": 12.0, "c": 20.0}
    for points in (tied, tied[::-1]):
        assert [p.point_id for p in tie_ordered(points, dense, sparse)] == ["b", "a", "c"]


@pytest.mark.parametrize("mode", list(SearchMode))
def test_limit_is_respected(store, mode):
    index_corpus(store)
    assert len(search(store, mode, limit=1)) == 1


def test_a_query_of_stop_words_only_still_searches_dense(store):
    chunks = index_corpus(store)
    empty = ENCODER.encode_query("what is the")
    assert empty.indices == ()
    hits = store.search(COLLECTION, query_vector(), empty, SearchMode.HYBRID, 5, None)
    assert keys(hits, chunks) == ["A", "D", "B", "C", "E"]
    assert store.search(COLLECTION, query_vector(), empty, SearchMode.SPARSE, 5, None) == []


# -- filters ----------------------------------------------------------------------------------

FILTER_CASES = [
    ({"source_url_prefix": "https://ex.org/docs/guide/"}, {"A", "B", "C"}),
    ({"source_path_prefix": "guide/install"}, {"A", "B"}),
    ({"section": "linux"}, {"A"}),
    ({"section": "  INSTALL "}, {"A", "B"}),  # any level of the path, case and spacing ignored
    ({"section": "Search"}, {"D"}),
    ({"document_ids": ("beta", "gamma")}, {"C", "D"}),
    (
        {"source_url_prefix": "https://ex.org/docs/", "section": "Install", "document_ids": ("alpha",)},
        {"A", "B"},
    ),
    ({"source_path_prefix": "nowhere/"}, set()),
]


@pytest.mark.parametrize("mode", [SearchMode.DENSE, SearchMode.HYBRID])
@pytest.mark.parametrize(("filters", "expected"), FILTER_CASES)
def test_filters_restrict_every_mode(store, mode, filters, expected):
    chunks = index_corpus(store)
    assert set(keys(search(store, mode, **filters), chunks)) == expected


def test_filters_apply_to_the_sparse_leg(store):
    chunks = index_corpus(store)
    assert keys(search(store, SearchMode.SPARSE, document_ids=("beta",)), chunks) == ["C"]
    assert keys(search(store, SearchMode.SPARSE, section="usage"), chunks) == ["C"]


# -- documents --------------------------------------------------------------------------------


def test_document_records_round_trip_and_are_replaced(store):
    chunks = index_corpus(store)
    assert store.document_record(COLLECTION, "missing") is None
    stored = store.document_record(COLLECTION, "alpha")
    assert stored == record([chunks["A"], chunks["B"]])
    assert stored.chunk_count == 2
    store.put_document_record(COLLECTION, record([chunks["A"]], content_hash="v2"))
    assert store.document_record(COLLECTION, "alpha").content_hash == "v2"
    assert store.collection_info(COLLECTION).documents == 4


def test_upserting_an_existing_chunk_id_overwrites_it(store):
    chunks = index_corpus(store)
    changed = make_chunk("delta", 0, chunks["E"].text, source_path="blog/renamed.md")
    store.upsert_chunks(COLLECTION, [point(changed, axis(4))])
    assert store.collection_info(COLLECTION).chunks == 5
    [hit] = search(store, SearchMode.DENSE, document_ids=("delta",))
    assert hit.chunk.source_path == "blog/renamed.md"


def test_delete_chunks_except_removes_only_the_documents_stale_chunks(store):
    chunks = index_corpus(store)
    assert store.delete_chunks_except(COLLECTION, "alpha", [chunks["B"].chunk_id]) == 1
    remaining = keys(search(store, SearchMode.DENSE), chunks)
    assert sorted(remaining) == ["B", "C", "D", "E"]
    assert store.delete_chunks_except(COLLECTION, "alpha", [chunks["B"].chunk_id]) == 0
    assert store.delete_chunks_except(COLLECTION, "gamma", []) == 1
    assert sorted(keys(search(store, SearchMode.DENSE), chunks)) == ["B", "C", "E"]


def test_an_interrupted_reindex_is_finished_by_running_it_again(store):
    chunks = index_corpus(store)
    old_record = store.document_record(COLLECTION, "alpha")
    new_a = make_chunk("alpha", 0, "Install with the new package manager.", source_path="guide/install.md")
    # A run killed after writing the new chunk: no cleanup, no record.
    store.upsert_chunks(COLLECTION, [point(new_a, axis(0))])
    assert store.document_record(COLLECTION, "alpha") == old_record  # so the next run redoes it
    # The next run, complete: same deterministic ids, stale chunks found by document_id.
    store.upsert_chunks(COLLECTION, [point(new_a, axis(0)), point(chunks["B"], axis(1))])
    keep = [new_a.chunk_id, chunks["B"].chunk_id]
    assert store.delete_chunks_except(COLLECTION, "alpha", keep) == 1
    store.put_document_record(COLLECTION, record([new_a, chunks["B"]], content_hash="v2"))
    hits = search(store, SearchMode.DENSE, document_ids=("alpha",))
    assert sorted(h.chunk.chunk_id for h in hits) == sorted(keep)
    assert store.collection_info(COLLECTION).chunks == 5


def test_delete_documents_removes_chunks_and_records(store):
    chunks = index_corpus(store)
    orphan = make_chunk("orphan", 0, "Written by a run that died before its record.")
    store.upsert_chunks(COLLECTION, [point(orphan, axis(5))])
    result = store.delete_documents(COLLECTION, ["alpha", "orphan", "missing", "alpha"])
    assert result.deleted_documents == ["alpha", "orphan"]
    assert result.deleted_chunks == 3
    assert result.not_found == ["missing"]
    assert store.document_record(COLLECTION, "alpha") is None
    info = store.collection_info(COLLECTION)
    assert (info.documents, info.chunks) == (3, 3)
    assert "A" not in keys(search(store, SearchMode.DENSE), chunks)


def test_list_documents_pages_in_source_path_order(store):
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    paths = ["b/2.md", "a/1.md", "c/0.md", "a/0.md", "b/1.md", "a/2.md", "z.md"]
    for i, path in enumerate(paths):
        chunk = make_chunk(f"doc-{i}", 0, f"text {i}", source_path=path)
        store.put_document_record(COLLECTION, record([chunk]))
    seen, token, pages = [], "", 0
    while True:
        page = store.list_documents(COLLECTION, 3, token)
        assert page.total_size == 7
        assert len(page.documents) <= 3
        seen += [d.source_path for d in page.documents]
        pages += 1
        token = page.next_page_token
        if not token:
            break
    assert seen == sorted(paths)
    assert pages == 3
    # A document added between pages does not shift the following page.
    first = store.list_documents(COLLECTION, 3)
    store.put_document_record(COLLECTION, record([make_chunk("doc-new", 0, "x", source_path="a/0.5.md")]))
    second = store.list_documents(COLLECTION, 3, first.next_page_token)
    assert second.documents[0].source_path == "b/1.md"


def test_list_documents_rejects_bad_paging(store):
    store.ensure_collection(COLLECTION, DIMS, MODEL)
    with pytest.raises(InvalidArgument, match="page_token"):
        store.list_documents(COLLECTION, 10, "not-a-token")
    with pytest.raises(InvalidArgument, match="page_size"):
        store.list_documents(COLLECTION, 0)
    assert store.list_documents(COLLECTION, 10).documents == []


# -- concurrency ------------------------------------------------------------------------------


def test_concurrent_searches_while_writing_and_optimizing(store):
    chunks = index_corpus(store)
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> int:
        done = 0
        while not stop.is_set() or done < 20:
            for mode in SearchMode:
                hits = search(store, mode, limit=5)
                assert hits and all(h.chunk.title == "Manual" for h in hits)
            done += 1
        return done

    with ThreadPoolExecutor(4) as pool:
        readers = [pool.submit(reader) for _ in range(4)]
        try:
            for i in range(60):
                extra = make_chunk(f"extra-{i}", 0, f"Extra note number {i} about search.")
                store.upsert_chunks(COLLECTION, [point(extra, axis(6))])
                store.put_document_record(COLLECTION, record([extra]))
                if i % 20 == 19:
                    store.optimize(COLLECTION)  # edge rebuilds segments under the readers' feet
        finally:
            stop.set()
        for future in readers:
            try:
                assert future.result() >= 20
            except BaseException as exc:  # collected so every reader is joined first
                errors.append(exc)
    assert not errors
    info = store.collection_info(COLLECTION)
    assert (info.documents, info.chunks) == (64, 65)
    assert keys(search(store, SearchMode.DENSE, limit=5), chunks)[:2] == ["A", "D"]
